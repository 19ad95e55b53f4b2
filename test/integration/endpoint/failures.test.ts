// Robustness of the endpoint runner: HTTP errors, timeouts, malformed streams, broken connections,
// mid-stream errors, a server that stops mid-run, and cancellation — each recorded per request, the
// run completing with what it has and saying what failed. Loopback only, bounded in time.
import { afterEach, describe, expect, it } from 'vitest';
import { generateWorkload } from '../../../src-main/engine/workload/sources/workload-file.ts';
import { runEndpointBenchmark } from '../../../src-main/endpoint/runner.ts';
import { startFakeServer, type Failure, type FakeServer, type FakeServerOptions } from './fake-openai-server.ts';
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

describe('failures, recorded per request', () => {
  it('every failure mode gets its status and reason; the others are measured as usual', async () => {
    // Batches of one request: the server's arrival order is the workload's order.
    const w = generateWorkload({ contexts: [128], batches_per_context: 10, batch_sizes: [1], prompt_pool_size: 2, reuse_start_batch: 2, reuse_ratio: 0.5, delay_ms: 0, generation_tokens: 6, seed: 7 });
    const modes: Record<number, Failure> = {
      0: { kind: 'http', status: 400, message: "This model's maximum context length is 64 tokens" },
      1: { kind: 'malformed', afterTokens: 2 },
      2: { kind: 'disconnect', afterTokens: 3 },
      3: { kind: 'error-chunk', afterTokens: 1 },
      4: { kind: 'no-done' },
      5: { kind: 'stall', afterTokens: 2 },
      6: { kind: 'http', status: 503, message: 'overloaded' },
    };
    const s = await server({ flavor: 'vllm', failure: (i) => modes[i] ?? null });
    const t0 = performance.now();
    const o = await runEndpointBenchmark({ config: configFor(s, w, { idleTimeoutS: 0.5, requestTimeoutS: 20 }), workload: w });
    expect(performance.now() - t0).toBeLessThan(15_000);
    expect(s.requests.map((r) => r.promptText.split(' ')[1])).toEqual(o.samples.map((q) => q.promptId));
    const q = o.samples;
    expect(q[0]).toMatchObject({ status: 'http_error', httpStatus: 400, error: "HTTP 400 Bad Request: This model's maximum context length is 64 tokens", ttftMs: null });
    expect(q[1]).toMatchObject({ status: 'malformed_stream', outputChunks: 2, outputTokens: 2, tokenCountSource: 'chunks' });
    expect(q[1].error).toMatch(/a data line that is not JSON/);
    expect(q[2]).toMatchObject({ status: 'incomplete', outputChunks: 3 });
    expect(q[2].error).toMatch(/^the stream broke after 3 chunk\(s\): /);
    expect(q[3]).toMatchObject({ status: 'server_error', error: 'the server reported an error mid-stream: CUDA out of memory (simulated)', outputChunks: 1 });
    expect(q[4]).toMatchObject({ status: 'incomplete', error: 'the stream ended without [DONE] or a finish reason after 6 chunk(s)', outputTokens: 6 });
    expect(q[5]).toMatchObject({ status: 'timeout', error: 'nothing received for 0.5 s after 2 chunk(s) (--idle-timeout-s)', outputChunks: 2, httpStatus: 200 });
    expect(q[5].e2eMs!).toBeGreaterThanOrEqual(450);
    expect(q[6]).toMatchObject({ status: 'http_error', httpStatus: 503, error: 'HTTP 503 Service Unavailable: overloaded' });
    for (const x of q.slice(7)) expect(x).toMatchObject({ status: 'ok', outputTokens: 6, tokenCountSource: 'usage', error: null });
    expect(o.status).toBe('partial');
    expect(o.statusReason).toBe(
      "7 of 10 request(s) did not succeed (2 http error, 1 malformed stream, 2 incomplete, 1 server error, 1 timeout); first: b0_r0: HTTP 400 Bad Request: This model's maximum context length is 64 tokens",
    );
    expect(o.aggregates).toMatchObject({ requestsOk: 3, requestsFailed: 7, requestsNotSent: 0 });
    expect(o.aggregates.failuresByStatus).toEqual({ http_error: 2, malformed_stream: 1, incomplete: 2, server_error: 1, timeout: 1 });
    // Latencies and throughput are those of the successful requests only.
    expect(o.aggregates.ttftMs.n).toBe(3);
    expect(o.aggregates.outputTokensTotal).toBe(18);
    expect(o.aggregates.itlMs.n).toBe(15);
    expect(o.metrics.requests_failed).toBe(7);
  });

  it('waiting for the first token is TTFT, not idleness: only the request timeout bounds it', async () => {
    const w = smallWorkload(50);
    // The first token comes after 600 ms of "prefill", longer than the 0.2 s idle timeout.
    const slow = await server({ flavor: 'none', baseMs: 600 });
    const ok = await runEndpointBenchmark({ config: configFor(slow, w, { maxBatches: 1, requestTimeoutS: 10, idleTimeoutS: 0.2, metricsUrls: [] }), workload: w });
    expect(ok.samples.map((q) => q.status)).toEqual(['ok', 'ok']);
    for (const q of ok.samples) expect(q.ttftMs!).toBeGreaterThanOrEqual(590);
    // A server that never sends a token is stopped by the request timeout.
    const hung = await server({ flavor: 'none', failure: () => ({ kind: 'stall' }) });
    const t = await runEndpointBenchmark({ config: configFor(hung, w, { maxBatches: 1, requestTimeoutS: 0.8, idleTimeoutS: 0.2, metricsUrls: [] }), workload: w });
    expect(t.samples.map((q) => q.status)).toEqual(['timeout', 'timeout']);
    expect(t.samples[0].error).toMatch(/no complete answer within 0.8 s/);
    expect(t.samples[0].e2eMs!).toBeGreaterThanOrEqual(750);
  });

  it('a finish_reason that says the server gave up (abort, error) is a server error, not a short success', async () => {
    const w = smallWorkload(50);
    const s = await server({ flavor: 'vllm', failure: (i) => (i === 0 ? { kind: 'finish-abort', afterTokens: 2 } : null) });
    const o = await runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, metricsUrls: [] }), workload: w });
    // The batch's two requests go at once: the server's first arrival is either of them.
    const aborted = o.samples.find((q) => q.status !== 'ok')!;
    const fine = o.samples.find((q) => q !== aborted)!;
    expect(aborted).toMatchObject({ status: 'server_error', finishReason: 'abort', outputChunks: 2 });
    expect(aborted.error).toBe('the server ended the request with finish_reason "abort" after 2 chunk(s)');
    expect(fine.status).toBe('ok');
    expect(o.aggregates.requestsOk).toBe(1);
  });

  it('a stream that sent its finish reason and usage, then stalled, is ok and ends at its last event', async () => {
    const w = smallWorkload(4);
    const s = await server({ flavor: 'none', failure: () => ({ kind: 'stall-after-finish' }) });
    const check = (o: Awaited<ReturnType<typeof runEndpointBenchmark>>, limitMs: number): void => {
      expect(o.samples.map((q) => q.status)).toEqual(['ok', 'ok']);
      for (const q of o.samples) {
        expect(q).toMatchObject({ finishReason: 'length', outputTokens: 4, tokenCountSource: 'usage', error: null });
        // The stall is kvbench's wait for [DONE], not the request's: e2e stops at the usage chunk.
        expect(q.e2eMs!).toBeLessThan(limitMs);
      }
      expect(o.aggregates.e2eMs.max!).toBeLessThan(limitMs);
    };
    // The idle timeout ends the wait …
    check(await runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, requestTimeoutS: 30, idleTimeoutS: 1, metricsUrls: [] }), workload: w }), 1000);
    // … or the request timeout …
    check(await runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, requestTimeoutS: 1, idleTimeoutS: 30, metricsUrls: [] }), workload: w }), 1000);
    // … or Ctrl-C: the requests had their answer, so they are not cancelled.
    const ctrl = new AbortController();
    const cancelled = runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, requestTimeoutS: 30, idleTimeoutS: 30, metricsUrls: [] }), workload: w, signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 1000);
    check(await cancelled, 1000);
  });

  it('a request that takes too long in total is a timeout even while tokens keep coming', async () => {
    // 3 s of tokens against a 1 s limit: room for the first tokens even on a loaded machine.
    const w = smallWorkload(100);
    const s = await server({ flavor: 'none', decodeMsPerToken: 30 });
    const o = await runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, requestTimeoutS: 1, idleTimeoutS: 5, metricsUrls: [] }), workload: w });
    expect(o.samples.map((q) => q.status)).toEqual(['timeout', 'timeout']);
    expect(o.samples[0].error).toMatch(/no complete answer within 1 s/);
    expect(o.samples[0].outputChunks).toBeGreaterThan(0);
    expect(o.samples[0].ttftMs).not.toBeNull();
    expect(o.status).toBe('failed');
  });

  it('a server that stops mid-run: connection errors, then the run stops and says so', async () => {
    const w = smallWorkload(2);
    const s = await server({ flavor: 'vllm' });
    const o = await runEndpointBenchmark({
      config: configFor(s, w, { stopAfterDeadBatches: 2 }),
      workload: w,
      onBatch: (p) => {
        if (p.batchIndex === 2) void s.close();
      },
    });
    const byBatch = (b: number) => o.samples.filter((q) => q.batchIndex === b).map((q) => q.status);
    expect(byBatch(0).every((x) => x === 'ok')).toBe(true);
    expect(byBatch(2).every((x) => x === 'ok')).toBe(true);
    expect(byBatch(3).every((x) => x === 'connection_error')).toBe(true);
    expect(byBatch(4).every((x) => x === 'connection_error')).toBe(true);
    for (const b of [5, 6, 7]) expect(byBatch(b).every((x) => x === 'not_sent')).toBe(true);
    expect(o.samples.find((q) => q.status === 'connection_error')?.error).toMatch(/ECONNREFUSED|UND_ERR_SOCKET/);
    expect(o.status).toBe('partial');
    expect(o.statusReason).toMatch(/^the server stopped answering: no request of the last 2 batch\(es\) got an answer \(.*(ECONNREFUSED|UND_ERR_SOCKET)/);
    expect(o.statusReason).toMatch(/the remaining batches were not sent/);
    expect(o.aggregates.requestsNotSent).toBe(o.samples.filter((q) => q.batchIndex >= 5).length);
    // The metrics page was gone after the run: no deltas, and the page says why.
    expect(o.serverMetrics.pages[0].notes.join(' ')).toMatch(/could not be read after the run/);
    expect(o.serverMetrics.values.find((v) => v.key === 'prefix_cache_hits')?.delta).toBeNull();
  });

  it('cancellation: requests in flight become cancelled, the rest are not sent', async () => {
    const w = smallWorkload(4);
    const s = await server({ flavor: 'none', failure: (i) => (i >= 2 ? { kind: 'stall' } : null) });
    const ctrl = new AbortController();
    const o = await runEndpointBenchmark({
      config: configFor(s, w, { metricsUrls: [], idleTimeoutS: 30 }),
      workload: w,
      signal: ctrl.signal,
      onBatch: (p) => {
        if (p.batchIndex === 0) setTimeout(() => ctrl.abort(), 200);
      },
    });
    expect(o.samples.filter((q) => q.batchIndex === 0).every((q) => q.status === 'ok')).toBe(true);
    expect(o.samples.filter((q) => q.batchIndex === 1).map((q) => q.status)).toEqual(['cancelled', 'cancelled']);
    expect(o.samples.filter((q) => q.batchIndex > 1).every((q) => q.status === 'not_sent')).toBe(true);
    expect(o.status).toBe('partial');
    expect(o.statusReason).toMatch(/^interrupted by the user; the remaining requests were not sent; /);
    // The window is the first batch's alone: the cancelled batch's time is left out, as its work is.
    const first = o.samples.filter((q) => q.batchIndex === 0);
    const firstMs = Math.max(...first.map((q) => q.sentOffsetMs! + q.e2eMs!)) - Math.min(...first.map((q) => q.sentOffsetMs!));
    expect(o.aggregates.durationS).toBeCloseTo(firstMs / 1000, 9);
    expect(o.aggregates.spanS).toBeCloseTo(firstMs / 1000, 9);
  });

  it('a timeout beyond what a timer can hold is refused before anything is sent (it would fire at once)', async () => {
    const w = smallWorkload(2);
    const s = await server({ flavor: 'none' });
    await expect(runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, requestTimeoutS: 3_000_000, metricsUrls: [] }), workload: w })).rejects.toThrow(
      /--request-timeout-s must be at most 2147483 .*got 3000000/,
    );
    await expect(runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, idleTimeoutS: 2_147_484, metricsUrls: [] }), workload: w })).rejects.toThrow(/--idle-timeout-s must be at most/);
    expect(s.requests).toHaveLength(0);
    const ok = await runEndpointBenchmark({ config: configFor(s, w, { maxBatches: 1, requestTimeoutS: 2_147_483, idleTimeoutS: 2_147_483, metricsUrls: [] }), workload: w });
    expect(ok.samples.map((q) => q.status)).toEqual(['ok', 'ok']);
  });

  it('nothing reachable at all: every request fails, the run is failed, and stops after the dead batches', async () => {
    const w = smallWorkload(2);
    const s = await server({ flavor: 'none' });
    const cfg = configFor(s, w, { stopAfterDeadBatches: 1 });
    await s.close();
    servers.length = 0;
    const o = await runEndpointBenchmark({ config: cfg, workload: w });
    expect(o.status).toBe('failed');
    expect(o.samples.filter((q) => q.status === 'connection_error')).toHaveLength(2);
    expect(o.aggregates.requestsNotSent).toBe(24);
    expect(o.aggregates.requestsPerS).toBe(0);
  });

  it('a server that stops answering in the last batches: the stop reason claims no batches left unsent', async () => {
    const w = smallWorkload(2);
    const s = await server({ flavor: 'none' });
    const cfg = configFor(s, w, { maxBatches: 2, stopAfterDeadBatches: 2, metricsUrls: [] });
    await s.close();
    servers.length = 0;
    const o = await runEndpointBenchmark({ config: cfg, workload: w });
    expect(o.aggregates.requestsNotSent).toBe(0);
    expect(o.statusReason).toMatch(/^the server stopped answering: no request of the last 2 batch\(es\) got an answer \([^)]*\); /);
    expect(o.statusReason).not.toMatch(/remaining batches/);
  });
});
