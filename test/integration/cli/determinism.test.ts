// A seed fixes the request stream: the same seed offers the same requests (same digest, same
// prefill bytes), another seed offers different ones. Timing still decides interleavings, so only
// what the stream determines is compared.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { explain, makeTempDir, oneLayerRunFlags, readResults, removeTempDirs, runCli, runDirsIn } from './cli-harness.ts';

afterEach(removeTempDirs);

const MAX_REQUESTS = 60;

/** One run that stops after MAX_REQUESTS completed requests (--duration is only a safety net). */
async function seededRun(seed: number): Promise<RunResults> {
  const tmp = makeTempDir();
  const output = path.join(tmp, `seed-${seed}.json`);
  const r = await runCli(
    [
      'run',
      // Small entries (≤ 6.1 MiB): the stream is what is compared, not the bytes, so a run is short.
      ...oneLayerRunFlags(tmp),
      '--num-users', '8',
      '--duration', '60',
      '--max-requests', String(MAX_REQUESTS),
      '--cpu-mem-gb', '1',
      '--cache-dir', tmp,
      '--seed', String(seed),
      '--output', output,
    ],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  expect(runDirsIn(tmp), 'run directory removed').toEqual([]);
  const res = readResults(output);
  expect(res.kvbench.status).toBe('complete');
  expect(res.kvbench.effective_seed).toBe(seed);
  expect(res.seed).toBe(seed);
  return res;
}

describe('kvbench run --seed', () => {
  it('repeats the request stream for the same seed and changes it for another', async () => {
    // One after the other: side by side they share one disk and take longer in all.
    const a = await seededRun(42);
    const b = await seededRun(42);
    const c = await seededRun(43);

    for (const res of [a, b, c]) {
      expect(res.kvbench.requests_issued).toBe(MAX_REQUESTS);
      expect(res.requests_completed).toBe(MAX_REQUESTS);
      // Every request offered completed: none was in flight when the last one closed the window.
      expect(res.kvbench.measured_window.closed_by).toBe('max-requests');
      expect(res.kvbench.measured_window.requests_in_flight_at_close).toBe(0);
      expect(res.kvbench.request_stream_digest).toMatch(/^[0-9a-f]{64}$/);
    }

    expect(b.kvbench.request_stream_digest).toBe(a.kvbench.request_stream_digest);
    expect(b.requests_completed).toBe(a.requests_completed);
    expect(b.kvbench.primary.prefill_bytes_written).toBe(a.kvbench.primary.prefill_bytes_written);
    expect(a.kvbench.primary.prefill_bytes_written).toBeGreaterThan(0);
    // Also fixed by the stream: the tokens the requests generate and their QoS classes.
    expect(b.total_tokens_generated).toBe(a.total_tokens_generated);
    const perClass = (res: RunResults) =>
      (['interactive', 'responsive', 'batch'] as const).map((l) => {
        const q = res.summary!.qos_metrics[l];
        return 'no_data' in q ? 0 : q.total_requests;
      });
    expect(perClass(b)).toEqual(perClass(a));

    expect(c.kvbench.request_stream_digest).not.toBe(a.kvbench.request_stream_digest);
  }, 120_000);
});
