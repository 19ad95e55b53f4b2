// The autoscaler through `kvbench run`, on a temp dir with a one-layer model: what a short capacity
// run says about its peak.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, makeTempDir, oneLayerRunFlags, readResults, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

async function run(tmp: string, extra: string[]) {
  const output = path.join(tmp, 'results.json');
  const r = await runCli(
    ['run', ...oneLayerRunFlags(tmp), '--cpu-mem-gb', '0', '--storage-capacity-gb', '1', '--seed', '42', '--cache-dir', path.join(tmp, 'cache'),
      '--enable-autoscaling', '--autoscaler-interval', '1', '--output', output, ...extra],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  return { stdout: r.stdout, results: readResults(output) };
}

describe('kvbench run --enable-autoscaling', () => {
  it('capacity: a window that closes before the autoscaler could see a peak says so, in the results, the status reason and the console', async () => {
    const tmp = makeTempDir();
    // Stopping takes a first step and two without a rise (three intervals): 2 s leaves at most two.
    const { stdout, results } = await run(tmp, ['--autoscaler-mode', 'capacity', '--num-users', '2', '--duration', '2']);
    const summary = results.summary!.autoscaling_summary as { peak_found: boolean; peak_user_count: number };
    expect(summary.peak_found).toBe(false);
    expect(results.kvbench.status).toBe('complete');
    expect(results.kvbench.status_reason).toMatch(/^autoscaler \(capacity\): no peak found: the window closed at 2\.0 s before throughput stopped rising; highest so far [\d.]+ tokens\/s at \d+ users/);
    expect(stdout).not.toContain('Peak Capacity Found');
    expect(stdout).toContain(`  Peak Capacity: not found — no peak found: the window closed at 2.0 s`);
    expect(stdout).toContain(`at ${summary.peak_user_count} users`);
  }, 60_000);
});
