// The autoscaler through `kvbench run`, on a temp dir with a one-layer model: what a short capacity
// run says about its peak, and a qos run about its latency target.
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
  it('capacity: a window that closes before the autoscaler could see a peak says so (results, status reason, console); steps and timeline say which throughput they give', async () => {
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
    // The timeline's throughput is cumulative, a step's the interval's own, and the file says which.
    const timeline = results.kvbench.autoscaling_timeline!;
    const steps = results.summary!.autoscaling_stats as { elapsed_s: number; throughput_tokens_per_sec: number }[];
    expect(timeline.map((t) => t.timestamp)).toEqual(steps.map((e) => e.elapsed_s));
    const tokensBy = (i: number): number => (i < 0 ? 0 : timeline[i].throughput_tokens_per_sec * timeline[i].timestamp);
    steps.forEach((e, i) => {
      const intervalS = e.elapsed_s - (i === 0 ? 0 : steps[i - 1].elapsed_s);
      expect(e.throughput_tokens_per_sec).toBeCloseTo((tokensBy(i) - tokensBy(i - 1)) / intervalS, 6);
    });
    expect(results.kvbench.units).toContain('throughput_tokens_per_sec is cumulative in throughput_timeline and autoscaling_timeline');
    expect(results.kvbench.units).toContain("but the interval's own in summary.autoscaling_stats");
  }, 60_000);

  it('qos: says whether the latency target held in the last interval that measured storage latency, in the results and the console', async () => {
    const tmp = makeTempDir();
    const { stdout, results } = await run(tmp, ['--autoscaler-mode', 'qos', '--num-users', '4', '--duration', '3']);
    const summary = results.summary!.autoscaling_summary as { target_met: boolean | null; read_latency_p95_threshold_ms: number; target_judged_interval: Record<string, number | null> | null };
    const steps = results.summary!.autoscaling_stats as { elapsed_s: number; saturation_level: number; read_in_flight_oldest_ms: number | null; write_in_flight_oldest_ms: number | null }[];
    expect(summary.read_latency_p95_threshold_ms).toBe(200);
    // Every request's entries live on storage (CPU tier 0): each interval measures some I/O.
    expect(typeof summary.target_met).toBe('boolean');
    const judged = summary.target_judged_interval!;
    expect(steps.at(-1)).toMatchObject({ elapsed_s: judged.elapsed_s, saturation_level: judged.saturation_level });
    expect(summary.target_met).toBe(judged.saturation_level! <= 1);
    // Beside target_saturation (0.8) it must not read as "saturation ≤ 0.8" (rev18 L4).
    expect((summary as unknown as { target_met_means: string }).target_met_means).toMatch(/^storage read P95 ≤ 200 ms and write P95 ≤ \d+ ms \(saturation ≤ 1\) in the last interval that measured them; not saturation ≤ target_saturation/);
    for (const e of steps) expect(e).toHaveProperty('read_in_flight_oldest_ms');
    expect(stdout).toContain(`  P95 Target (storage read P95 ≤ 200 ms): ${summary.target_met ? 'met' : 'NOT met'} (last measured interval, at ${judged.elapsed_s!.toFixed(1)} s: `);
  }, 60_000);
});
