// The open loop behind a storage slower than the offered load: arrivals pile up in the queue. The run
// says it measures queueing (live and in the results) and keeps the backlog under its cap, issuing
// later arrivals late and in order. The real engine in this process, on a temp dir, tiny sizes, a
// fixed seed; a small cap (the engine context's test setting) so a short run reaches it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src-main/engine/benchmark.ts';
import { formatConsoleSummary } from '../../../src-main/engine/report/console-summary.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import type { RunOptionsInput } from '../../../src-shared/domain/run-options.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('an open loop whose queue outgrows its workers', () => {
  it('holds arrivals back at the cap, and says in the log, the results and the summary that it measured queueing', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'kvbench-backlog-'));
    dirs.push(cacheDir);
    const logged: string[] = [];
    // Realistic generation: each request sleeps 30 ms per generated token (seconds), so 8 users'
    // workers are busy long after their users' next arrivals.
    const outcome = await runBenchmark(
      { model: 'tiny-1b', numUsers: 8, duration: 2, cpuMemGb: 0.25, gpuMemGb: 0, storageCapacityGb: 1, generationMode: 'realistic', seed: 42, cacheDir },
      { onProgress: () => {}, onLog: (_level, m) => void logged.push(m), signal: new AbortController().signal, backlogCapRequests: 12 },
    );
    const kv = outcome.results.kvbench as { queue: Record<string, unknown>; requests_issued: number };
    expect(kv.queue).toMatchObject({ max_depth: 12, backlog_cap_requests: 12, backlog_cap_reached: true, queueing_bound: false });
    expect(kv.queue.issue_lateness_max_ns).toBeGreaterThan(0);
    expect(kv.queue.note).toMatch(/^\d+ requests were still queued at the close for 8 workers \(\d+ issued, \d+ completed; the queue reached 12\): the configuration offers more load than the storage serves/);
    expect(kv.queue.note).toContain('the backlog reached its cap of 12');
    expect(logged.filter((m) => m.includes('reached its cap of 12 requests'))).toHaveLength(1);
    const summary = formatConsoleSummary(outcome.results as unknown as RunResults, { generationMode: 'realistic', msPerToken: 30, performanceProfile: 'latency', bytesPerToken: 24576 });
    expect(summary).toContain(`Queueing-bound: ${kv.queue.note as string}`);
  });

  // rev18 M3: a run of a few users whose queue dominates its latency was never flagged, the test needing
  // 1,000 queued requests. Realistic generation sleeps 30 ms per generated token (seconds per request),
  // so 4 users' arrivals (about 10 a second) outrun their 4 workers by far, whatever the disk; trace-only
  // mode with no generation serves the same arrivals at once.
  const run = async (o: Partial<RunOptionsInput>): Promise<{ queue: Record<string, unknown>; window: Record<string, number>; completed: number }> => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'kvbench-backlog-'));
    dirs.push(cacheDir);
    const outcome = await runBenchmark(
      { model: 'tiny-1b', numUsers: 4, duration: 8, cpuMemGb: 0.25, gpuMemGb: 0, storageCapacityGb: 1, seed: 42, cacheDir, ...o },
      { onProgress: () => {}, onLog: () => {}, signal: new AbortController().signal },
    );
    const kv = outcome.results.kvbench as { queue: Record<string, unknown>; measured_window: Record<string, number> };
    return { queue: kv.queue, window: kv.measured_window, completed: outcome.results.requests_completed as number };
  };

  it('flags a 4-user run whose backlog outgrew its workers, judged at the close relative to the workers and to what was served', async () => {
    const { queue, window, completed } = await run({ generationMode: 'realistic' });
    expect(window.requests_queued_at_close).toBeGreaterThanOrEqual(40);
    expect(window.requests_queued_at_close).toBeLessThan(1000);
    expect(window.requests_queued_at_close).toBeGreaterThanOrEqual(completed / 4);
    expect(queue).toMatchObject({ queueing_bound: true, workers_at_close: 4, backlog_cap_reached: false });
    expect(queue.note).toMatch(/^\d+ requests were still queued at the close for 4 workers/);
  });

  it('leaves a 4-user run that keeps up unflagged', async () => {
    const traceDir = mkdtempSync(join(tmpdir(), 'kvbench-backlog-trace-'));
    dirs.push(traceDir);
    const { queue, window } = await run({ generationMode: 'none', duration: 3, ioTraceLog: join(traceDir, 'io.csv') });
    expect(window.requests_queued_at_close).toBeLessThan(40);
    expect(queue).toMatchObject({ queueing_bound: false, workers_at_close: 4, note: null });
  });
});
