// The endpoint runner against the fake OpenAI server, in process: kvbench's measurements checked
// against what the server did (its own per-request account, its counters). Loopback only, small.
import http from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateWorkload } from '../../../src-main/engine/workload/sources/workload-file.ts';
import { promptReuse } from '../../../src-main/endpoint/aggregate.ts';
import { PromptBuilder } from '../../../src-main/endpoint/prompt-builder.ts';
import { runEndpointBenchmark, type BatchProgress } from '../../../src-main/endpoint/runner.ts';
import { percentile } from '../../../src-shared/domain/statistics.ts';
import { startFakeServer, type FakeServer, type FakeServerOptions } from './fake-openai-server.ts';
import { configFor, smallWorkload } from './harness.ts';

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function server(o: FakeServerOptions): Promise<FakeServer> {
  const s = await startFakeServer(o);
  servers.push(s);
  return s;
}

describe('endpoint runner against a vLLM-like server with a host offload tier', () => {
  it('measures what the server did: tokens, cache hits, TTFT bounds, metric deltas', async () => {
    const w = smallWorkload();
    // Small GPU tier (48 blocks of 16 tokens) so pool prompts are offloaded and reloaded; prefill is slow.
    const s = await server({ flavor: 'vllm', blockTokens: 16, gpuBlocks: 48, hostBlocks: 1000, bytesPerBlock: 4096, baseMs: 1, prefillMsPerToken: 0.25, decodeMsPerToken: 2 });
    const progress: BatchProgress[] = [];
    const o = await runEndpointBenchmark({ config: configFor(s, w), workload: w, metricsUrlsAreDefaults: true, onBatch: (p) => progress.push(p) });
    expect(o.status).toBe('complete');
    expect(o.statusReason).toBeNull();
    expect(o.samples).toHaveLength(26);
    // Each batch's progress line reads its TTFT P50 as the stored aggregates do (interpolated; the
    // batches hold 2 or 4 requests, where a lower median would differ).
    expect(progress.map((p) => p.batchIndex)).toEqual(w.batches.map((b) => b.index));
    for (const p of progress) {
      const batch = o.samples.filter((q) => q.batchIndex === p.batchIndex);
      expect(batch.length % 2, `batch ${p.batchIndex}`).toBe(0);
      expect(p.ttftP50Ms, `batch ${p.batchIndex}`).toBe(percentile(batch.map((q) => q.ttftMs), 50));
    }
    expect(s.requests).toHaveLength(26);

    // The server saw each request once; match them by prompt text and order within the prompt.
    const served = [...s.requests];
    for (const q of o.samples) {
      const i = served.findIndex((r) => r.promptText.startsWith(`Document ${q.promptId} fixed-salt:`) && r.promptTokens === q.promptTokens);
      expect(i, `request ${q.requestId} reached the server`).toBeGreaterThanOrEqual(0);
      const r = served.splice(i, 1)[0];
      expect(q.status).toBe('ok');
      expect(q.promptTokens).toBe(q.contextTokens); // one word = one token, as the fake tokenizes
      expect(q.outputTokens).toBe(r.completionTokens);
      expect(q.outputTokens).toBe(6);
      expect(q.tokenCountSource).toBe('usage');
      // The client's TTFT contains the server's: it sent before the server received, and read after it wrote.
      expect(q.ttftMs!).toBeGreaterThanOrEqual(r.firstTokenAtMs! - r.receivedAtMs);
      // …and the server's first-token delay is in it (Node timers may fire a little early: a small tolerance).
      expect(q.ttftMs!).toBeGreaterThanOrEqual(r.ttftDelayMs - 10);
      expect(q.e2eMs!).toBeGreaterThanOrEqual(q.ttftMs!);
      expect(q.e2eMs!).toBeGreaterThanOrEqual(r.endAtMs! - r.receivedAtMs);
      expect(q.cachedPromptTokens).toBe(r.gpuHitTokens + r.hostHitTokens);
      // A new prompt finds nothing in any cache; a reused one finds its full blocks.
      if (!q.reused) expect(q.cachedPromptTokens).toBe(0);
      else expect(q.cachedPromptTokens).toBe(Math.floor(q.contextTokens / 16) * 16);
      expect(q.tpotMs!).toBeGreaterThanOrEqual(1); // a 2 ms decode step per token
    }
    expect(served).toEqual([]);
    const a = o.aggregates;
    expect(a.requestsOk).toBe(26);
    expect(a.outputTokensTotal).toBe(s.counters.generationTokens);
    expect(a.serverPromptTokensTotal).toBe(s.counters.promptTokens);
    expect(a.promptTokensPerRequested).toBe(1);
    expect(a.itlMs.n).toBe(26 * 5); // one gap between each of the 6 chunks
    expect(a.itlMs.p50!).toBeGreaterThanOrEqual(1);
    // The workload flags 17 requests as reused; one of them (batch 4's second ctx512_p0) went together
    // with the prompt's first send, so neither it nor that first send is in the split: 8 fresh, 16 reused.
    expect(a.ttftFreshMs.n).toBe(8);
    expect(a.ttftReusedMs.n).toBe(16);
    // The split agrees with the server: fresh prompts found nothing cached, reused ones their full blocks.
    const reuse = promptReuse(o.samples);
    for (const q of o.samples) {
      if (reuse.get(q) === 'fresh') expect(q.cachedPromptTokens, q.requestId).toBe(0);
      if (reuse.get(q) === 'reused') expect(q.cachedPromptTokens, q.requestId).toBe(Math.floor(q.contextTokens / 16) * 16);
    }
    // Fresh prompts wait for their prefill (≥ 256 × 0.25 ms); reused ones do not.
    expect(a.ttftFreshMs.p50!).toBeGreaterThan(a.ttftReusedMs.p50!);
    expect(Math.min(...o.samples.filter((x) => !x.reused).map((x) => x.ttftMs!))).toBeGreaterThanOrEqual(55);

    // The server's counters, as deltas of the run (the server had no other traffic).
    const m = o.serverMetrics;
    expect(m.pages.map((p) => [p.url, p.format])).toEqual([[`${s.url}/metrics`, 'prometheus']]); // /prometheus/metrics 404: dropped
    const delta = (k: string) => m.values.find((v) => v.key === k)?.delta;
    expect(delta('prefix_cache_queries')).toBe(s.counters.prefixQueries);
    expect(delta('prefix_cache_hits')).toBe(s.counters.prefixHits);
    expect(delta('external_prefix_cache_queries')).toBe(s.counters.externalQueries);
    expect(delta('external_prefix_cache_hits')).toBe(s.counters.externalHits);
    expect(delta('offload_bytes')).toBe(s.counters.offloadBytes);
    expect(delta('reload_bytes')).toBe(s.counters.reloadBytes);
    expect(delta('prompt_tokens')).toBe(s.counters.promptTokens);
    expect(delta('generation_tokens')).toBe(s.counters.generationTokens);
    expect(s.counters.reloadBytes).toBeGreaterThan(0); // the offload path was exercised
    expect(m.derived.prefix_cache_hit_rate).toBeCloseTo(s.counters.prefixHits / s.counters.prefixQueries, 12);
    expect(m.derived.external_prefix_cache_hit_rate).toBeCloseTo(s.counters.externalHits / s.counters.externalQueries, 12);
    expect(a.cachedPromptTokensTotal).toBe(s.counters.prefixHits + s.counters.externalHits);
    expect(o.metrics['server.reload_bytes']).toBe(s.counters.reloadBytes);
  });

  it('the same salt replays identical prompts: a second run hits everything, and its deltas are its own', async () => {
    const w = smallWorkload(2);
    const s = await server({ flavor: 'vllm', blockTokens: 16 });
    await runEndpointBenchmark({ config: configFor(s, w), workload: w });
    const hitsBefore = s.counters.prefixHits;
    const second = await runEndpointBenchmark({ config: configFor(s, w), workload: w });
    const delta = (k: string) => second.serverMetrics.values.find((v) => v.key === k)?.delta;
    expect(delta('prefix_cache_hits')).toBe(s.counters.prefixHits - hitsBefore);
    expect(second.serverMetrics.derived.prefix_cache_hit_rate).toBeCloseTo((256 * 12 + 512 * 14) / (256 * 12 + 512 * 14), 6);
    expect(second.samples.every((q) => q.cachedPromptTokens === q.contextTokens)).toBe(true);
    // Another salt: nothing is shared with the first two runs.
    const third = await runEndpointBenchmark({ config: configFor(s, w, { promptSalt: 'other' }), workload: w });
    expect(third.samples.filter((q) => !q.reused).every((q) => q.cachedPromptTokens === 0)).toBe(true);
  });

  it("throughput is over the time the server had the batches: the workload's pauses between them are left out", async () => {
    const delayMs = 150;
    const w = { ...smallWorkload(2), batches: smallWorkload(2).batches.slice(0, 4).map((b) => ({ ...b, delay_ms: delayMs })) };
    const s = await server({ flavor: 'none' });
    const o = await runEndpointBenchmark({ config: configFor(s, w, { metricsUrls: [] }), workload: w });
    expect(o.status).toBe('complete');
    // Each batch's first send to its last finish, from the stored requests, summed.
    let busyMs = 0;
    for (const b of w.batches) {
      const q = o.samples.filter((x) => x.batchIndex === b.index);
      busyMs += Math.max(...q.map((x) => x.sentOffsetMs! + x.e2eMs!)) - Math.min(...q.map((x) => x.sentOffsetMs!));
    }
    expect(o.aggregates.durationS).toBeCloseTo(busyMs / 1000, 9);
    expect(o.aggregates.requestsPerS).toBeCloseTo(o.aggregates.requestsOk / o.aggregates.durationS, 9);
    // The three pauses after the first batch are in the wall-clock span only.
    const last = Math.max(...o.samples.map((x) => x.sentOffsetMs! + x.e2eMs!));
    expect(o.aggregates.spanS).toBeCloseTo(last / 1000, 9);
    expect(o.aggregates.spanS! - o.aggregates.durationS).toBeGreaterThan((3 * delayMs * 0.9) / 1000);
  });

  it('counts chunks when the server sends no usage, and uses usage when chunks carry several tokens', async () => {
    const w = smallWorkload(6);
    const noUsage = await server({ flavor: 'none', supportsUsage: false });
    const o = await runEndpointBenchmark({ config: configFor(noUsage, w, { maxBatches: 2 }), workload: w, metricsUrlsAreDefaults: true });
    expect(o.samples.filter((q) => q.status === 'ok')).toHaveLength(4);
    expect(o.samples.every((q) => q.tokenCountSource === 'chunks' && q.outputTokens === 6 && q.promptTokens === null)).toBe(true);
    expect(o.samples.filter((q) => q.status === 'not_sent')).toHaveLength(0);
    expect(o.aggregates.serverPromptTokensTotal).toBeNull();
    expect(o.serverMetrics.values).toEqual([]);
    expect(o.serverMetrics.pages.every((p) => p.format === 'unavailable')).toBe(true);

    const chunky = await server({ flavor: 'vllm', tokensPerChunk: 3 });
    const c = await runEndpointBenchmark({ config: configFor(chunky, w, { maxBatches: 1, maxTokens: 9 }), workload: w });
    expect(c.samples.every((q) => q.outputTokens === 9 && q.outputChunks === 3 && q.tokenCountSource === 'usage')).toBe(true);
    const bodies = chunky.requests.map((r) => r.body);
    expect(bodies.every((b) => b.max_tokens === 9 && b.stream === true && b.ignore_eos === true && b.temperature === 0 && b.top_p === 1)).toBe(true);
  });

  it('chat completions, an API key, and the flags that leave fields out', async () => {
    const w = smallWorkload(3);
    const s = await server({ flavor: 'sglang', apiKey: 'sekrit' });
    const o = await runEndpointBenchmark({ config: configFor(s, w, { api: 'chat', maxBatches: 2, ignoreEos: false, streamUsage: false }), workload: w, apiKey: 'sekrit' });
    expect(o.status).toBe('complete');
    expect(s.requests.every((r) => r.path === '/v1/chat/completions' && Array.isArray(r.body.messages) && !('ignore_eos' in r.body) && !('stream_options' in r.body))).toBe(true);
    expect(o.samples.every((q) => q.outputTokens === 3 && q.tokenCountSource === 'chunks')).toBe(true);
    expect(o.serverMetrics.values.find((v) => v.key === 'cached_prompt_tokens')?.delta).toBe(s.counters.prefixHits);
    expect(o.serverMetrics.values.find((v) => v.key === 'server_cache_hit_rate')?.source).toBe('sglang:cache_hit_rate');

    const noKey = await runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, metricsUrls: [] }), workload: w });
    expect(noKey.status).toBe('failed');
    expect(noKey.samples[0]).toMatchObject({ status: 'http_error', httpStatus: 401, error: 'HTTP 401 Unauthorized: invalid API key' });
  });

  it('TensorRT-LLM: /prometheus/metrics preferred, its JSON statistics left to the server; block reuse as deltas', async () => {
    const w = smallWorkload(2);
    const s = await server({ flavor: 'trtllm', blockTokens: 32, gpuBlocks: 20, hostBlocks: 500 });
    // Earlier traffic on the server: the run's deltas must leave it out.
    await runEndpointBenchmark({ config: configFor(s, w, { promptSalt: 'warm-up', maxBatches: 2, metricsUrls: [] }), workload: w });
    const reusedBefore = s.counters.reusedBlocks;
    const missedBefore = s.counters.missedBlocks;
    const notes: string[] = [];
    const o = await runEndpointBenchmark({ config: configFor(s, w), workload: w, metricsUrlsAreDefaults: true, onNote: (n) => notes.push(n) });
    expect(o.serverMetrics.pages.map((p) => p.format)).toEqual(['prometheus']);
    expect(s.iterationsQueued, 'the JSON statistics queue was not drained by kvbench').toBeGreaterThan(0);
    expect(notes.join('\n')).toMatch(/\/metrics: not read \(TensorRT-LLM's Prometheus page has its counters/);
    const v = (k: string) => o.serverMetrics.values.find((x) => x.key === k);
    expect(v('reused_blocks')).toMatchObject({ source: 'trtllm_kv_cache_reused_blocks', delta: s.counters.reusedBlocks - reusedBefore });
    expect(v('missed_blocks')?.delta).toBe(s.counters.missedBlocks - missedBefore);
    expect(v('offload_bytes')?.source).toBe('trtllm_kv_cache_offload_bytes');
    expect(o.serverMetrics.derived.block_reuse_rate).toBeCloseTo(
      (s.counters.reusedBlocks - reusedBefore) / (s.counters.reusedBlocks - reusedBefore + s.counters.missedBlocks - missedBefore),
      12,
    );
  });

  it('TensorRT-LLM: the JSON iteration statistics when they are the page asked for, as deltas from the last iteration before the run', async () => {
    const w = smallWorkload(2);
    const s = await server({ flavor: 'trtllm', blockTokens: 32, gpuBlocks: 20, hostBlocks: 500 });
    await runEndpointBenchmark({ config: configFor(s, w, { promptSalt: 'warm-up', maxBatches: 2, metricsUrls: [] }), workload: w });
    const reusedBefore = s.counters.reusedBlocks;
    const o = await runEndpointBenchmark({ config: configFor(s, w, { metricsUrls: [`${s.url}/metrics`] }), workload: w });
    expect(o.serverMetrics.pages.map((p) => p.format)).toEqual(['trtllm-iteration-json']);
    expect(o.serverMetrics.pages[0].notes).toEqual([]); // the warm-up left iterations in the queue: a real baseline
    const v = (k: string) => o.serverMetrics.values.find((x) => x.key === k);
    expect(v('reused_blocks')?.delta).toBe(s.counters.reusedBlocks - reusedBefore);
    expect(v('kv_cache_usage')?.source).toBe('trtllm-json:usage');
  });
});

describe('a batch of long prompts', () => {
  it('goes out at once: prompts are built before the first send, so building them is in no request\'s TTFT', async () => {
    const w = generateWorkload({ contexts: [65_536], batches_per_context: 1, batch_sizes: [12], prompt_pool_size: 12, reuse_start_batch: 1, reuse_ratio: 0, delay_ms: 0, generation_tokens: 1, seed: 3 });
    const s = await server({ flavor: 'none' });
    // The order of the real calls (spied on, passed through): every build, then every send.
    const order: string[] = [];
    const build = PromptBuilder.prototype.build;
    const request = http.request;
    const builds = vi.spyOn(PromptBuilder.prototype, 'build').mockImplementation(function (this: PromptBuilder, ...a: Parameters<PromptBuilder['build']>) {
      order.push('build');
      return build.apply(this, a);
    });
    const sends = vi.spyOn(http, 'request').mockImplementation(((...a: Parameters<typeof http.request>) => {
      order.push('send');
      return (request as (...x: unknown[]) => http.ClientRequest)(...a);
    }) as typeof http.request);
    try {
      const o = await runEndpointBenchmark({ config: configFor(s, w, { metricsUrls: [] }), workload: w });
      expect(o.samples.every((q) => q.status === 'ok')).toBe(true);
    } finally {
      builds.mockRestore();
      sends.mockRestore();
    }
    expect(order).toEqual([...Array<string>(12).fill('build'), ...Array<string>(12).fill('send')]);
  });
});
