import { describe, expect, it } from 'vitest';
import {
  ENDPOINT_METRICS,
  compareVerdict,
  tokenCountCaveat,
  flattenEndpointMetrics,
  type EndpointRequestSample,
  type ServerCacheMetrics,
} from '../../../src-shared/domain/endpoint.ts';
import { aggregateRun, distribution, promptReuse } from '../../../src-main/endpoint/aggregate.ts';
import { compareEndpointRuns } from '../../../src-main/endpoint/endpoint-compare.ts';
import { straddledChanges } from '../../../src-shared/domain/metric-changes.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { runSummary } from './fixtures.ts';

function sample(seq: number, over: Partial<EndpointRequestSample> = {}): EndpointRequestSample {
  return {
    seq,
    requestId: `r${seq}`,
    batchIndex: 0,
    promptId: `p${seq}`,
    reused: false,
    contextTokens: 100,
    promptChars: 500,
    maxTokens: 10,
    status: 'ok',
    httpStatus: 200,
    error: null,
    sentOffsetMs: 0,
    ttftMs: 10,
    e2eMs: 100,
    tpotMs: 10,
    outputTokens: 10,
    outputChunks: 10,
    tokenCountSource: 'usage',
    promptTokens: 110,
    cachedPromptTokens: 0,
    finishReason: 'length',
    ...over,
  };
}

const noServer: ServerCacheMetrics = { pages: [], values: [], derived: {}, rawCounterDeltas: {} };

describe('aggregates', () => {
  it('percentiles by linear interpolation between closest ranks', () => {
    const d = distribution([1, 2, 3, 4, null, Number.NaN]);
    expect(d).toMatchObject({ n: 4, mean: 2.5, p50: 2.5, max: 4 });
    expect(d.p95).toBeCloseTo(3.85, 12);
    expect(d.p99).toBeCloseTo(3.97, 12);
    expect(distribution([])).toEqual({ n: 0, mean: null, p50: null, p95: null, p99: null, max: null });
  });

  it('counts successful requests only, over the batches\' own times; failures by status; reused vs new; per context', () => {
    // Batch 0 runs 0–200 ms; a 900 ms pause; batch 1 runs 1100–2900 ms (its timeout the last to end).
    const samples = [
      sample(0, { ttftMs: 50, e2eMs: 200 }),
      sample(1, { batchIndex: 1, promptId: 'p0', reused: true, ttftMs: 5, cachedPromptTokens: 96, sentOffsetMs: 1100 }),
      sample(2, { batchIndex: 1, promptId: 'p0', reused: true, ttftMs: 7, contextTokens: 200, promptTokens: 220, sentOffsetMs: 1101 }),
      sample(3, { batchIndex: 1, status: 'timeout', ttftMs: null, e2eMs: 1800, outputTokens: 3, error: 'slow', sentOffsetMs: 1100 }),
      sample(4, { batchIndex: 1, status: 'http_error', ttftMs: null, outputTokens: null, sentOffsetMs: 1102, e2eMs: 5 }),
      sample(5, { batchIndex: 1, status: 'not_sent', ttftMs: null, e2eMs: null, outputTokens: null, sentOffsetMs: null }),
    ];
    const itl = new LatencyHistogram();
    for (let i = 0; i < 100; i++) itl.record(2e6);
    const a = aggregateRun(samples, itl);
    // 200 + 1800 ms busy; the pause is in the span only.
    expect(a).toMatchObject({ requestsTotal: 6, requestsOk: 3, requestsFailed: 2, requestsNotSent: 1, durationS: 2, spanS: 2.9, requestsPerS: 1.5, outputTokensPerS: 15, contextTokensPerS: 200 });
    expect(a.failuresByStatus).toEqual({ timeout: 1, http_error: 1, not_sent: 1 });
    expect(a.ttftMs).toMatchObject({ n: 3, p50: 7, max: 50 });
    expect(a.ttftReusedMs).toMatchObject({ n: 2, p50: 6 });
    expect(a.ttftFreshMs).toMatchObject({ n: 1, p50: 50 });
    expect(a.serverPromptTokensTotal).toBe(440);
    expect(a.cachedPromptTokensTotal).toBe(96);
    expect(a.promptTokensPerRequested).toBeCloseTo(440 / 400, 12);
    expect(a.itlMs.n).toBe(100);
    expect(a.itlMs.p50).toBeCloseTo(2, 2);
    expect(a.byContext.map((c) => [c.contextTokens, c.requests, c.ok])).toEqual([
      [100, 5, 2],
      [200, 1, 1],
    ]);
    const flat = flattenEndpointMetrics(a, noServer);
    expect(flat).toMatchObject({ requests_per_s: 1.5, ttft_p50_ms: 7, ttft_reused_p50_ms: 6, requests_failed: 2, requests_not_sent: 1 });
    for (const k of Object.keys(flat)) expect(ENDPOINT_METRICS.some((m) => m.key === k)).toBe(true);
  });

  it('reused means "finished ok in an earlier batch": concurrent duplicates and prompts whose earlier send failed are in neither split', () => {
    // The workload's flags say "seen earlier in the file": the second p2 of batch 0 is flagged, and so is p3 after its timeout.
    const samples = [
      sample(0, { batchIndex: 0, promptId: 'p1', reused: false, ttftMs: 100 }),
      sample(1, { batchIndex: 0, promptId: 'p2', reused: false, ttftMs: 101 }),
      sample(2, { batchIndex: 0, promptId: 'p2', reused: true, ttftMs: 60 }),
      sample(3, { batchIndex: 0, promptId: 'p3', reused: false, status: 'timeout', ttftMs: null }),
      sample(4, { batchIndex: 1, promptId: 'p1', reused: true, ttftMs: 10 }),
      sample(5, { batchIndex: 1, promptId: 'p3', reused: true, ttftMs: 90 }),
      sample(6, { batchIndex: 1, promptId: 'p2', reused: true, ttftMs: 12 }),
      sample(7, { batchIndex: 1, promptId: 'p5', reused: false, ttftMs: 102 }),
    ];
    const reuse = promptReuse(samples);
    expect(samples.map((s) => reuse.get(s))).toEqual(['fresh', 'unclear', 'unclear', 'fresh', 'reused', 'unclear', 'reused', 'fresh']);
    const a = aggregateRun(samples, new LatencyHistogram());
    expect(a.ttftReusedMs).toMatchObject({ n: 2, p50: 11, max: 12 });
    expect(a.ttftFreshMs).toMatchObject({ n: 2, p50: 101, max: 102 });
    expect(a.ttftMs.n).toBe(7); // every ok request is in the overall TTFT
    expect(a.byContext[0].ttftReusedMs.n).toBe(2);
    expect(a.byContext[0].ttftFreshMs.n).toBe(2);
  });

  it('requests cancelled by Ctrl-C are out of the window: it ends at the last request that finished', () => {
    const samples = [
      sample(0, { sentOffsetMs: 0, e2eMs: 100 }),
      sample(1, { batchIndex: 1, sentOffsetMs: 200, e2eMs: 100 }),
      // Cut off by the signal at 900 ms: none of its work is counted, so none of its time is either.
      sample(2, { batchIndex: 1, status: 'cancelled', sentOffsetMs: 200, e2eMs: 700, outputTokens: 3 }),
      sample(3, { batchIndex: 2, status: 'cancelled', sentOffsetMs: 1000, e2eMs: 50, outputTokens: null }),
    ];
    const a = aggregateRun(samples, new LatencyHistogram());
    expect(a).toMatchObject({ requestsOk: 2, durationS: 0.2, spanS: 0.3, requestsPerS: 10 });
  });

  it('counts where output tokens came from: the server\'s usage, or content chunks (undercounted when a chunk carries several tokens)', () => {
    const samples = [
      sample(0),
      sample(1, { tokenCountSource: 'chunks', outputTokens: 3, outputChunks: 3, maxTokens: 10, finishReason: 'length' }), // stopped at max_tokens with 3 chunks: undercounted
      sample(2, { tokenCountSource: 'chunks', outputTokens: 10, outputChunks: 10, maxTokens: 10, finishReason: 'length' }),
      sample(3, { tokenCountSource: 'chunks', outputTokens: 4, outputChunks: 4, maxTokens: 10, finishReason: 'stop' }),
      sample(4, { status: 'timeout', tokenCountSource: 'chunks', outputTokens: 2, finishReason: null }), // failed: not counted
    ];
    const a = aggregateRun(samples, new LatencyHistogram());
    expect(a.tokenCountSources).toEqual({ usage: 1, chunks: 3, chunksBelowMaxTokens: 1 });
    expect(flattenEndpointMetrics(a, noServer).requests_tokens_from_chunks).toBe(3);
    expect(tokenCountCaveat(a.tokenCountSources)).toBe(
      'output tokens of 3 of 4 successful request(s) were counted as content chunks (the server sent no usage); 1 of them stopped at max_tokens (finish_reason length) with fewer chunks than max_tokens: undercounted — where a chunk carries several tokens, output tokens/s is too low and time per output token too high',
    );
    expect(tokenCountCaveat(aggregateRun([sample(0)], new LatencyHistogram()).tokenCountSources)).toBeNull();
  });

  it('a run with nothing sent has no rates', () => {
    const a = aggregateRun([sample(0, { status: 'not_sent', ttftMs: null, e2eMs: null, outputTokens: null, sentOffsetMs: null })], new LatencyHistogram());
    expect(a).toMatchObject({ durationS: 0, spanS: 0 });
    expect(a.requestsPerS).toBeNull();
    expect(a.itlHistogram).toBeNull();
  });
});

describe('comparing two systems', () => {
  const run = runSummary;

  it('runs measured on both sides of a metric definition change are compared with a warning naming the change', () => {
    const c = compareEndpointRuns('a', [run(1, 'a', { requests_per_s: 2 }, { kvbenchVersion: '0.4.0' })], 'b', [run(2, 'b', { requests_per_s: 3 })]);
    expect(c.warnings).toHaveLength(1);
    expect(c.warnings[0]).toMatch(/^the runs were measured on both sides of kvbench 0\.5\.0 \(kvbench 0\.4\.0, 0\.5\.0\), which changed duration_s, requests_per_s, output_tokens_per_s, context_tokens_per_s: duration_s is the time the server had the run's batches/);
    // The trial metric of the same name is not affected.
    expect(straddledChanges(['0.4.0', '0.5.0'], ['requests_per_s'])).toEqual([]);
    expect(compareEndpointRuns('a', [run(1, 'a', {}, { kvbenchVersion: '0.4.0' })], 'b', [run(2, 'b', {}, { kvbenchVersion: '0.4.0' })]).warnings).toEqual([]);
  });

  it('medians per system, ratio A ÷ B, the better value by direction; one run on a side: no noise estimate, no side named better', () => {
    const c = compareEndpointRuns(
      'pcie',
      [run(1, 'pcie', { requests_per_s: 2, ttft_p50_ms: 100, 'server.prefix_cache_hit_rate': 0.5 }), run(2, 'pcie', { requests_per_s: 4, ttft_p50_ms: 300 })],
      'c2c',
      [run(3, 'c2c', { requests_per_s: 6, ttft_p50_ms: 100, 'server.prefix_cache_hit_rate': 0.25 })],
    );
    expect(c.warnings).toEqual([]);
    expect(c.notes).toEqual(['one run of c2c: no noise estimate is possible, so no side is named better (the better value is marked "?") — run each system 3 or more times']);
    const row = (k: string) => c.rows.find((r) => r.metric.key === k)!;
    expect(row('requests_per_s')).toMatchObject({ a: 3, b: 6, nA: 2, nB: 1, ratio: 0.5, leader: 'b', noise: 'unknown', better: null });
    expect(row('requests_per_s').spreadA).toEqual({ min: 2, max: 4, cv: expect.closeTo(Math.SQRT2 / 3, 12) });
    expect(row('requests_per_s').spreadB).toEqual({ min: 6, max: 6, cv: null });
    expect(row('ttft_p50_ms')).toMatchObject({ a: 200, b: 100, ratio: 2, leader: 'b', better: null });
    expect(row('server.prefix_cache_hit_rate')).toMatchObject({ a: 0.5, b: 0.25, nA: 1, ratio: 2, leader: 'a', better: null });
    expect(compareVerdict(row('ttft_p50_ms'), 'pcie', 'c2c')).toBe('c2c?');
    expect(c.rows.find((r) => r.metric.key === 'itl_p50_ms')).toBeUndefined();
  });

  it('names a better side only beyond run-to-run noise: Welch\'s t-test on the runs\' log values, p < 0.05; a 0 has no logarithm, so its noise is unknown', () => {
    // Two identical servers whose runs spread by 25 % (the reviewer's trt vs trt2): within noise.
    const c = compareEndpointRuns(
      'trt',
      [run(1, 'trt', { requests_per_s: 13.59, ttft_p50_ms: 100, requests_failed: 0 }), run(2, 'trt', { requests_per_s: 10.84, ttft_p50_ms: 102, requests_failed: 0 })],
      'trt2',
      [run(3, 'trt2', { requests_per_s: 10.24, ttft_p50_ms: 200, requests_failed: 2 }), run(4, 'trt2', { requests_per_s: 11.4, ttft_p50_ms: 204, requests_failed: 3 })],
    );
    expect(c.warnings).toEqual([]);
    expect(c.notes).toEqual([]);
    expect(c.method).toContain("Welch's t-test on log values, two-sided, α = 0.05");
    const row = (k: string) => c.rows.find((r) => r.metric.key === k)!;
    expect(row('requests_per_s')).toMatchObject({ leader: 'a', noise: 'within', better: null });
    // scipy.stats.ttest_ind(log a, log b, equal_var=False).pvalue
    expect(row('requests_per_s').pValue).toBeCloseTo(0.48234875813127226, 9);
    expect(compareVerdict(row('requests_per_s'), 'trt', 'trt2')).toBe('within noise');
    // TTFT twice as long, each side within 2 %: beyond noise.
    expect(row('ttft_p50_ms')).toMatchObject({ leader: 'a', noise: 'beyond', better: 'a' });
    expect(row('ttft_p50_ms').pValue).toBeCloseTo(0.00040784858216949527, 9);
    expect(compareVerdict(row('ttft_p50_ms'), 'trt', 'trt2')).toBe('trt');
    // 0 vs 2–3 failures: no logarithm of 0, so the test cannot judge it: the better value is marked, no side named.
    expect(row('requests_failed')).toMatchObject({ ratio: 0, leader: 'a', noise: 'unknown', pValue: null, better: null });
    expect(compareVerdict(row('requests_failed'), 'trt', 'trt2')).toBe('trt?');
    // 0 on every run of both: no difference at all, within noise.
    const none = compareEndpointRuns('a', [run(1, 'a', { requests_failed: 0 }), run(2, 'a', { requests_failed: 0 })], 'b', [run(3, 'b', { requests_failed: 0 }), run(4, 'b', { requests_failed: 0 })]);
    expect(none.rows.find((r) => r.metric.key === 'requests_failed')).toMatchObject({ noise: 'within', pValue: 1, better: null });
  });

  it('a value that is not the run\'s own share is flagged on its row, names no better side, and compare warns with the page notes', () => {
    const why = 'totals since the server started (no baseline before the run): the run\'s own share only on a server started just for it';
    const note = 'http://trt:8000/metrics: trtllm-serve returned no iteration statistics before the run …';
    const trt = [
      run(8, 'trt', { 'server.reused_blocks': 403, 'server.block_reuse_rate': 0.5, requests_per_s: 10 }),
      run(9, 'trt', { 'server.reused_blocks': 1209, 'server.block_reuse_rate': 0.75, requests_per_s: 10.1 }, {
        metricCaveats: { 'server.reused_blocks': why, 'server.block_reuse_rate': `computed from Reused KV blocks and Missed KV blocks: ${why}` },
        serverMetricNotes: [note],
      }),
    ];
    const c = compareEndpointRuns('trt', trt, 'trt2', [run(10, 'trt2', { 'server.reused_blocks': 403, 'server.block_reuse_rate': 0.5, requests_per_s: 10 }), run(11, 'trt2', { 'server.reused_blocks': 404, 'server.block_reuse_rate': 0.5, requests_per_s: 10.2 })]);
    expect(c.warnings).toEqual([
      `run 9 (trt), ${note}`,
      `run 9 (trt): values marked * may not be the run's own share, so no side is named better on them — Reused KV blocks (Δ): ${why}; KV block reuse rate (run): computed from Reused KV blocks and Missed KV blocks: ${why}`,
    ]);
    const row = (k: string) => c.rows.find((r) => r.metric.key === k)!;
    expect(row('server.block_reuse_rate')).toMatchObject({ flaggedA: [9], flaggedB: [], leader: 'a', better: null });
    expect(compareVerdict(row('server.block_reuse_rate'), 'trt', 'trt2')).toBe('*');
    expect(row('requests_per_s')).toMatchObject({ flaggedA: [], flaggedB: [] });
  });

  it('warns when a run counted output tokens as chunks (the server ignored include_usage), whatever its flags say', () => {
    const c = compareEndpointRuns('pcie', [run(1, 'pcie', {})], 'chat', [run(2, 'chat', {}, { tokenCountCaveat: 'output tokens of 8 of 8 successful request(s) were counted as content chunks …' })]);
    expect(c.warnings).toEqual(['run 2 (chat): output tokens of 8 of 8 successful request(s) were counted as content chunks …']);
  });

  it('warns when runs replayed the same prompt texts against one server: the later ones started warm', () => {
    const same = { baseUrl: 'http://trt:8000/v1', promptSalt: 'fixed' };
    const c = compareEndpointRuns(
      'trt',
      [run(9, 'trt', {}, { ...same, startedAt: '2026-01-02T00:00:00Z' }), run(8, 'trt', {}, { ...same, startedAt: '2026-01-01T00:00:00Z' })],
      'trt2',
      // Another server, the same salt: its cache is its own.
      [run(10, 'trt2', {}, { baseUrl: 'http://trt2:8000/v1', promptSalt: 'fixed' }), run(11, 'trt2', {}, { baseUrl: 'http://trt2:8000/v1', promptSalt: 'other' })],
    );
    expect(c.warnings).toEqual([
      'run 8 (trt), run 9 (trt) sent the same prompt texts (--prompt-salt fixed) to one server (http://trt:8000/v1, model m): run 9 (trt) started with the earlier run\'s prompts possibly still cached (a warm start, unlike run 8 (trt)) — give each run its own salt (the default) unless a warm cache is what is measured',
    ]);
    // The same salt on one server, but another model or another prompt sizing: different texts or caches.
    expect(compareEndpointRuns('a', [run(1, 'a', {}, { ...same })], 'b', [run(2, 'b', {}, { ...same, model: 'n' })]).warnings.some((w) => w.includes('warm start'))).toBe(false);
    expect(compareEndpointRuns('a', [run(1, 'a', {}, { ...same })], 'b', [run(2, 'b', {}, { ...same, promptTokenizer: 'gpt-tokenizer cl100k_base' })]).warnings).toEqual([]);
  });

  it('names no better side when the two are within 0.5 % (a 1.00x ratio is a tie)', () => {
    const c = compareEndpointRuns('a', [run(1, 'a', { ttft_p50_ms: 100.4, requests_per_s: 10 })], 'b', [run(2, 'b', { ttft_p50_ms: 100, requests_per_s: 10.1 })]);
    const row = (k: string) => c.rows.find((r) => r.metric.key === k)!;
    expect(row('ttft_p50_ms').leader).toBeNull();
    expect(row('requests_per_s').leader).toBe('b'); // 1 % apart
  });

  it('warns about different workloads, models and incomplete runs; a zero denominator has no ratio', () => {
    const c = compareEndpointRuns('a', [run(1, 'a', { requests_failed: 1 }, { status: 'partial' })], 'b', [run(2, 'b', { requests_failed: 0 }, { workloadDigest: 'd2', requestsDigest: 'r2', model: 'n' })]);
    expect(c.warnings.join('\n')).toMatch(/did not send the same requests \(requests digests differ; different workload files\)/);
    expect(c.warnings.join('\n')).toMatch(/different models \(m, n\)/);
    expect(c.warnings.join('\n')).toMatch(/run 1 \(a\) is partial/);
    expect(c.rows.find((r) => r.metric.key === 'requests_failed')).toMatchObject({ ratio: null, leader: 'b', noise: 'unknown', better: null });
  });

  it('one workload file replayed with different flags is not the same workload: compare names what differs', () => {
    const base = run(1, 'a', {}).settings;
    const c = compareEndpointRuns('a', [run(1, 'a', {})], 'b', [
      run(2, 'b', {}, { requestsDigest: 'r2', settings: { ...base, maxBatches: 2, temperature: 0.7, topP: 0.9, streamUsage: false } }),
    ]);
    const w = c.warnings.join('\n');
    expect(w).toMatch(/did not send the same requests \(requests digests differ\)/);
    expect(w).not.toMatch(/different workload files/);
    expect(w).toMatch(/the batches replayed \(--max-batches\) differs between the runs \(null vs 2\)/);
    expect(w).toMatch(/temperature \(--temperature\) differs between the runs \(0 vs 0.7\)/);
    expect(w).toMatch(/top_p \(--top-p\) differs between the runs \(1 vs 0.9\)/);
    expect(w).toMatch(/stream usage \(--no-stream-usage\).* differs between the runs \(true vs false\)/);
    // Stream usage changes how tokens are counted, not what was sent: a warning of its own.
    const u = compareEndpointRuns('a', [run(1, 'a', {})], 'b', [run(2, 'b', {}, { settings: { ...base, streamUsage: false } })]);
    expect(u.warnings).toHaveLength(1);
    expect(u.warnings[0]).toMatch(/^stream usage/);
  });
});
