import { describe, expect, it } from 'vitest';
import { serverMetricCaveats, type EndpointRunRecord } from '../../../src-shared/domain/endpoint.ts';
import { formatServerMetrics } from '../../../src-main/endpoint/render.ts';
import { defaultMetricsUrls, parseMetricsPage, serverMetricsDelta, type PageSnapshot } from '../../../src-main/endpoint/server-metrics.ts';

const vllmPage = (hits: number, queries: number, store: number, load: number, extra = ''): string =>
  [
    '# TYPE vllm:prefix_cache_queries counter',
    `vllm:prefix_cache_queries_total{engine="0",model_name="m"} ${queries}`,
    '# TYPE vllm:prefix_cache_hits counter',
    `vllm:prefix_cache_hits_total{engine="0",model_name="m"} ${hits}`,
    `vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="GPU_to_CPU"} ${store}`,
    `vllm:kv_offload_total_bytes_total{engine="0",model_name="m",transfer_type="CPU_to_GPU"} ${load}`,
    `vllm:kv_offload_total_time_total{engine="0",model_name="m",transfer_type="GPU_to_CPU"} 2`,
    '# TYPE vllm:kv_cache_usage_perc gauge',
    'vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.5',
    '# TYPE vllm:e2e_request_latency_seconds histogram',
    'vllm:e2e_request_latency_seconds_bucket{le="+Inf",engine="0",model_name="m"} 3',
    'vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"} 3',
    extra,
  ].join('\n');

const snap = (url: string, body: string): PageSnapshot => parseMetricsPage(url, body);
const value = (m: ReturnType<typeof serverMetricsDelta>, key: string) => m.values.find((v) => v.key === key);

describe('server metrics', () => {
  it('default pages: <root>/metrics and trtllm-serve\'s /prometheus/metrics', () => {
    expect(defaultMetricsUrls('http://h:8000/v1')).toEqual(['http://h:8000/metrics', 'http://h:8000/prometheus/metrics']);
    expect(defaultMetricsUrls('http://h/proxy/v1')).toEqual(['http://h/proxy/metrics', 'http://h/proxy/prometheus/metrics']);
  });

  it('vLLM: counter deltas, gauges before and after, derived rates, the deprecated labelled offload counters', () => {
    const m = serverMetricsDelta([snap('u', vllmPage(100, 1000, 0, 0))], [snap('u', vllmPage(700, 3000, 4096, 1024))]);
    expect(m.pages).toEqual([{ url: 'u', format: 'prometheus', engines: ['vllm'], error: null, notes: [] }]);
    expect(value(m, 'prefix_cache_hits')).toEqual({ key: 'prefix_cache_hits', source: 'vllm:prefix_cache_hits', before: 100, after: 700, delta: 600, reset: false, sinceServerStart: false });
    expect(value(m, 'prefix_cache_queries')?.delta).toBe(2000);
    expect(m.derived.prefix_cache_hit_rate).toBeCloseTo(0.3, 12);
    expect(value(m, 'offload_bytes')).toMatchObject({ source: 'vllm:kv_offload_total_bytes{transfer_type="GPU_to_CPU"}', delta: 4096 });
    expect(value(m, 'reload_bytes')?.delta).toBe(1024);
    // The transfer time did not move: no bandwidth (0 s denominator).
    expect(m.derived.offload_bandwidth).toBeNull();
    expect(value(m, 'kv_cache_usage')).toMatchObject({ before: 0.5, after: 0.5, delta: null });
    expect(m.rawCounterDeltas['vllm:prefix_cache_hits_total{engine="0",model_name="m"}']).toBe(600);
    expect(m.rawCounterDeltas['vllm:e2e_request_latency_seconds_count{engine="0",model_name="m"}']).toBeUndefined(); // unchanged
    expect(Object.keys(m.rawCounterDeltas).some((k) => k.includes('_bucket'))).toBe(false);
  });

  it('prefers the newer vLLM offload counters over the deprecated ones, never both', () => {
    const extra = 'vllm:kv_offload_store_bytes_total{engine="0"} 50\nvllm:kv_offload_store_time_total{engine="0"} 0.5';
    const extraAfter = 'vllm:kv_offload_store_bytes_total{engine="0"} 550\nvllm:kv_offload_store_time_total{engine="0"} 1.0';
    const m = serverMetricsDelta([snap('u', vllmPage(0, 0, 0, 0, extra))], [snap('u', vllmPage(0, 0, 999, 0, extraAfter))]);
    expect(value(m, 'offload_bytes')).toMatchObject({ source: 'vllm:kv_offload_store_bytes', delta: 500 });
    expect(m.derived.offload_bandwidth).toBe(1000);
  });

  it('a counter that went backwards is a restart: the delta is the new total, flagged', () => {
    const m = serverMetricsDelta([snap('u', vllmPage(900, 1000, 0, 0))], [snap('u', vllmPage(50, 200, 0, 0))]);
    expect(value(m, 'prefix_cache_hits')).toMatchObject({ delta: 50, reset: true });
  });

  it('counter resets are found per series: one restarted rank neither hides the others\' work nor goes unflagged', () => {
    const ranks = (e0: number, e1: number): string =>
      `# TYPE vllm:prefix_cache_hits counter\nvllm:prefix_cache_hits_total{engine="0"} ${e0}\nvllm:prefix_cache_hits_total{engine="1"} ${e1}`;
    // Engine 1 restarted (900 → 30): engine 0 did 50, engine 1 30 since its restart.
    const down = serverMetricsDelta([snap('u', ranks(100, 900))], [snap('u', ranks(150, 30))]);
    expect(value(down, 'prefix_cache_hits')).toMatchObject({ before: 1000, after: 180, delta: 80, reset: true });
    // The sum still grew (600 → 1020), yet engine 1 went backwards: 900 + 20, flagged.
    const up = serverMetricsDelta([snap('u', ranks(100, 500))], [snap('u', ranks(1000, 20))]);
    expect(value(up, 'prefix_cache_hits')).toMatchObject({ delta: 920, reset: true });
    expect(up.rawCounterDeltas['vllm:prefix_cache_hits_total{engine="1"}']).toBe(20);
  });

  it('a changed process_start_time_seconds is a restart: every counter counts from zero, flagged, and the page says so', () => {
    const page = (start: number, hits: number): string => `process_start_time_seconds ${start}\n${vllmPage(hits, 2 * hits, 0, 0)}`;
    const m = serverMetricsDelta([snap('u', page(1.7e9, 100))], [snap('u', page(1.7e9 + 60, 150))]);
    expect(value(m, 'prefix_cache_hits')).toMatchObject({ before: 100, after: 150, delta: 150, reset: true });
    expect(m.rawCounterDeltas['vllm:prefix_cache_hits_total{engine="0",model_name="m"}']).toBe(150);
    expect(m.pages[0].notes.join(' ')).toMatch(/the server restarted during the run \(process_start_time_seconds 1700000000 → 1700000060\)/);
    const same = serverMetricsDelta([snap('u', page(1.7e9, 100))], [snap('u', page(1.7e9, 150))]);
    expect(value(same, 'prefix_cache_hits')).toMatchObject({ delta: 50, reset: false });
    expect(same.pages[0].notes).toEqual([]);
  });

  it('a series first seen after the run started at 0; a page unreadable before gives no deltas', () => {
    const before = snap('u', 'vllm:prefix_cache_hits_total 5');
    const after = snap('u', 'vllm:prefix_cache_hits_total 9\nvllm:external_prefix_cache_hits_total{engine="0"} 64');
    const m = serverMetricsDelta([before], [after]);
    expect(value(m, 'external_prefix_cache_hits')).toMatchObject({ before: null, after: 64, delta: 64 });
    const lost = serverMetricsDelta([{ url: 'u', format: 'unavailable', error: 'ECONNREFUSED' }], [after]);
    expect(value(lost, 'prefix_cache_hits')).toMatchObject({ before: null, after: 9, delta: null });
    // The note says what the result holds: no deltas (nothing claims to be the run's share), the totals as "after".
    expect(lost.pages[0].notes[0]).toMatch(/could not be read before the run \(ECONNREFUSED\): no deltas, .*kept as "after"/);
    expect(lost.derived).toEqual({});
    expect(lost.rawCounterDeltas).toEqual({});
    const shown = formatServerMetrics({ serverMetrics: lost } as EndpointRunRecord);
    expect(shown).toMatch(/Prefix cache hits\s+vllm:prefix_cache_hits\s+— \(server total after the run: 9\)/);
  });

  it('SGLang: the cache hit rate gauge and cached tokens over every cache source', () => {
    const page = (rate: number, dev: number, host: number): string =>
      `sglang:cache_hit_rate{model_name="m"} ${rate}\nsglang:cached_tokens_total{model_name="m",cache_source="device"} ${dev}\nsglang:cached_tokens_total{model_name="m",cache_source="host"} ${host}\nsglang:prompt_tokens_total{model_name="m"} 10`;
    const m = serverMetricsDelta([snap('u', page(0.1, 10, 0))], [snap('u', page(0.4, 110, 20))]);
    expect(m.pages[0].engines).toEqual(['sglang']);
    expect(value(m, 'server_cache_hit_rate')).toMatchObject({ source: 'sglang:cache_hit_rate', before: 0.1, after: 0.4 });
    expect(value(m, 'cached_prompt_tokens')?.delta).toBe(120);
  });

  it('trtllm-serve JSON iteration statistics: the last record\'s cumulative block counters', () => {
    const iters = (reused: number, missed: number): string =>
      JSON.stringify([
        { iter: 1, kvCacheStats: { reusedBlocks: 0, missedBlocks: 1, usedNumBlocks: 1, maxNumBlocks: 10 } },
        { iter: 2, kvCacheStats: { reusedBlocks: reused, missedBlocks: missed, usedNumBlocks: 5, maxNumBlocks: 10, cacheHitRate: reused / (reused + missed) } },
      ]);
    const m = serverMetricsDelta([snap('j', iters(4, 6))], [snap('j', iters(34, 16))]);
    expect(m.pages[0]).toMatchObject({ format: 'trtllm-iteration-json', engines: ['trtllm'] });
    expect(value(m, 'reused_blocks')).toMatchObject({ source: 'trtllm-json:reusedBlocks', delta: 30 });
    expect(value(m, 'missed_blocks')?.delta).toBe(10);
    expect(m.derived.block_reuse_rate).toBeCloseTo(0.75, 12);
    expect(value(m, 'kv_cache_usage')?.after).toBe(0.5);
    expect(value(m, 'reused_blocks')?.sinceServerStart).toBe(false);
    expect(serverMetricCaveats(m)).toEqual({});
    // An empty queue before the run (the previous run's "after" read drained it): counters since
    // start, flagged on each value and on the rate derived from them, not only in the page's note.
    const fresh = serverMetricsDelta([snap('j', '[]')], [snap('j', iters(34, 16))]);
    expect(value(fresh, 'reused_blocks')).toMatchObject({ before: null, after: 34, delta: 34, reset: false, sinceServerStart: true });
    expect(value(fresh, 'kv_cache_usage')?.sinceServerStart).toBe(false); // a gauge has no baseline to miss
    expect(fresh.pages[0].notes.join(' ')).toMatch(/totals since the server started/);
    expect(serverMetricCaveats(fresh)).toEqual({
      'server.reused_blocks': expect.stringMatching(/^totals since the server started \(no baseline before the run\): the run's own share only on a server started just for it$/),
      'server.missed_blocks': expect.stringMatching(/^totals since the server started/),
      'server.block_reuse_rate': expect.stringMatching(/^computed from Reused KV blocks and Missed KV blocks: totals since the server started/),
    });
    const shown = formatServerMetrics({ serverMetrics: fresh } as EndpointRunRecord);
    expect(shown).toMatch(/Reused KV blocks\s+trtllm-json:reusedBlocks\s+34 \*$/m);
    expect(shown).toMatch(/KV block reuse rate \(run\).*68\.0% \*$/m);
    expect(shown).toMatch(/^    \* KV block reuse rate \(run\): computed from Reused KV blocks and Missed KV blocks: totals since the server started/m);
    // A counter reset is a caveat too.
    const reset = serverMetricsDelta([snap('u', vllmPage(900, 1000, 0, 0))], [snap('u', vllmPage(50, 200, 0, 0))]);
    expect(serverMetricCaveats(reset)['server.prefix_cache_hit_rate']).toMatch(/^computed from Prefix cache hits and Prefix cache queries: a counter reset/);
  });

  it('recognises what is not a metrics page', () => {
    expect(parseMetricsPage('u', '{"detail":"Not Found"}')).toMatchObject({ format: 'unavailable', error: expect.stringMatching(/kvCacheStats/) });
    expect(parseMetricsPage('u', '<html>nope</html>')).toMatchObject({ format: 'unavailable' });
    expect(parseMetricsPage('u', '[oops')).toMatchObject({ format: 'unavailable', error: expect.stringMatching(/does not parse/) });
  });
});
