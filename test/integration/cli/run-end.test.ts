// How a run's end accounts for its requests, end to end through the CLI: every request issued is
// completed, failed, in flight at the close or queued at the close — none is dropped uncounted — and a
// finite replay's window closes after its last request has finished, not when it arrived.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { writeBurst, writeShareGpt } from '../../unit/sources/helpers.ts';
import { TINY_RUN_FLAGS, explain, makeTempDir, readResults, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

async function run(tmp: string, extra: string[]): Promise<RunResults> {
  const output = path.join(tmp, 'results.json');
  const r = await runCli(
    ['run', ...TINY_RUN_FLAGS, '--num-users', '3', '--duration', '30', '--cpu-mem-gb', '0.25', '--storage-capacity-gb', '2', '--fsync-policy', 'none',
      '--seed', '9', '--cache-dir', path.join(tmp, 'cache'), '--output', output, ...extra],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  return readResults(output);
}

/** Issued = completed + failed + in flight at the close + queued at the close (no warm-up: all in the window). */
function accounting(res: RunResults) {
  const k = res.kvbench;
  const w = k.measured_window;
  return {
    issued: k.requests_issued,
    accounted: res.requests_completed + k.requests_failed + w.requests_in_flight_at_close + w.requests_queued_at_close,
  };
}

describe('a finite replay (--replay-cycles 1)', () => {
  // Rows 0.1 s apart: each arrives at an idle worker, the last one too.
  const paced = Array.from({ length: 5 }, (_, i) => [i * 0.1, 100 + 50 * i, 10] as [number, number, number]);

  it('paced: completes its last request, and the window closes after it', async () => {
    const tmp = makeTempDir();
    const res = await run(tmp, ['--dataset-path', writeBurst(tmp, paced), '--trace-speedup', '1', '--replay-cycles', '1']);
    expect(res.kvbench.measured_window.closed_by).toBe('workload-end');
    expect(res.kvbench.status_reason).toBe('the burstgpt workload was replayed to its end');
    expect(accounting(res)).toEqual({ issued: 5, accounted: 5 });
    expect(res.requests_completed).toBe(5);
  });

  it('unpaced, trace-only: every request is served, none dropped by idle workers at the end', async () => {
    const tmp = makeTempDir();
    const rows = Array.from({ length: 20 }, (_, i) => [i * 0.01, 200 + 10 * i, 20] as [number, number, number]);
    const res = await run(tmp, ['--dataset-path', writeBurst(tmp, rows), '--trace-speedup', '0', '--replay-cycles', '1', '--io-trace-log', path.join(tmp, 'io.csv')]);
    expect(res.kvbench.measured_window.closed_by).toBe('workload-end');
    expect(accounting(res)).toEqual({ issued: 20, accounted: 20 });
    expect(res.requests_completed).toBe(20);
  });

  it('ShareGPT paced by --request-rate: the last turn is served and its multi-turn reload happens', async () => {
    const tmp = makeTempDir();
    // 2 conversations: 1 turn and 2 turns; the last request offered is conv1's turn 2, which reloads turn 1.
    const res = await run(tmp, ['--dataset-path', writeShareGpt(tmp, 2), '--request-rate', '20', '--replay-cycles', '1']);
    expect(res.kvbench.measured_window.closed_by).toBe('workload-end');
    expect(accounting(res)).toEqual({ issued: 3, accounted: 3 });
    expect(res.requests_completed).toBe(3);
    expect(res.multi_turn_cache_hits).toBe(1);
  });
});

describe('--max-requests with a request that fails', () => {
  it('issues another in its place and closes the window when that many have completed, not at --duration', async () => {
    const tmp = makeTempDir();
    // Row 2 (24.6 GB at 24,576 bytes/token) is larger than every tier: that request fails (counted), the run goes on.
    const rows: [number, number, number][] = [[0, 100, 10], [0, 1_000_000, 10], [0, 300, 10], [0, 300, 10], [0, 300, 10]];
    const res = await run(tmp, ['--dataset-path', writeBurst(tmp, rows), '--trace-speedup', '0', '--max-requests', '3']);
    const k = res.kvbench;
    expect(k.measured_window.closed_by).toBe('max-requests');
    expect(res.requests_completed).toBe(3);
    expect(k.requests_failed).toBe(1);
    expect(accounting(res)).toEqual({ issued: 4, accounted: 4 });
  });
});
