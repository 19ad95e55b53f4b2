// The reviewer's A-vs-A case (rev7 #1) as a user meets it: six runs on one drive, imported under two
// drive labels into a real database, then `kvbench report --compare … --drives`. The old rule
// (|ln ratio| ≤ √(CV_A² + CV_B²)) named B better on Requests/s and on Storage write P95; a Welch
// test on the same trial values says p ≥ 0.05 for both, so no side may be named.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { welchLogTest } from '../../../src-shared/domain/statistics.ts';
import { kvbenchResults, writeResults } from '../../unit/store/fixtures.ts';
import { explain, makeTempDir, removeTempDirs, runCli } from '../cli/cli-harness.ts';

afterEach(() => removeTempDirs());

// Requests/s: A 6.50 with CV 2.2 %, B 8.50 with CV 22.6 % (the reviewer's cmpAA.txt); storage write
// P95: A/B 1.47x with CV 9.5 % and 27.8 %.
const REQUESTS_PER_S = { a: [6.36, 6.5, 6.65], b: [8.5, 6.84, 10.76] };
const WRITE_P95_MS = { a: [13.4, 14.7, 16.2], b: [10.0, 7.3, 12.9] };

describe('kvbench report --compare on two labels of one drive', () => {
  it('names no side where Welch\'s t-test on the trials\' log values gives p ≥ 0.05, and says the rule', { timeout: 120_000 }, async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    for (const side of ['a', 'b'] as const) {
      const files = [0, 1, 2].map((i) => {
        const r = kvbenchResults({ tokPerS: 1000, durationS: 4 });
        // As `kvbench run` records them: the reviewer's flags, the same for all six runs.
        r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 4, cpuMemGb: 0, gpuMemGb: 0, generationMode: 'none', seed: 42, storageCapacityGb: 1, warmUp: 1 };
        r.summary!.requests_per_second = REQUESTS_PER_S[side][i];
        (r.summary!.cache_stats as Record<string, unknown>).storage_write_p95_ms = WRITE_P95_MS[side][i];
        return writeResults(tmp, `${side}${i}.json`, r);
      });
      const imp = await runCli(['import', ...files, '--system', 'rig', '--drive', side === 'a' ? 'A-first' : 'A-second', '--scenario', 'storage-only', '--db', db], { cwd: tmp });
      expect(imp.code, explain(imp)).toBe(0);
    }
    const args = ['report', '--compare', 'A-first', 'A-second', '--drives', '--db', db];
    const json = await runCli([...args, '--json'], { cwd: tmp });
    expect(json.code, explain(json)).toBe(0);
    const c = JSON.parse(json.stdout) as { matched: number; metrics: { metric: { key: string }; verdict: string | null; pValue: number | null; configs: { pValue: number | null; withinNoise: boolean | null }[] }[] };
    expect(c.matched).toBe(1);
    const metric = (k: string) => c.metrics.find((m) => m.metric.key === k)!;
    for (const [key, values] of [['requests_per_s', REQUESTS_PER_S], ['storage_write_p95_ms', WRITE_P95_MS]] as const) {
      const expected = welchLogTest(values.a, values.b)!;
      expect(expected.pValue, key).toBeGreaterThanOrEqual(0.05);
      expect(metric(key).verdict, key).toBe('within-noise');
      expect(metric(key).configs[0]).toMatchObject({ withinNoise: true });
      expect(metric(key).pValue, key).toBeCloseTo(expected.pValue, 9);
      expect(metric(key).configs[0].pValue).toBeCloseTo(expected.pValue, 9);
    }
    // scipy.stats.ttest_ind(log a, log b, equal_var=False).pvalue for Requests/s.
    expect(metric('requests_per_s').pValue).toBeCloseTo(0.1699823818839683, 6);
    // Every other metric is equal on the six runs: a tie, never a side.
    for (const m of c.metrics) {
      if (m.pValue === null || m.pValue >= 0.05) expect(m.verdict, m.metric.key).not.toMatch(/^[ab]$/);
    }
    const text = await runCli([...args, '--per-config'], { cwd: tmp });
    expect(text.code, explain(text)).toBe(0);
    expect(text.stdout).toMatch(/^Requests\/s \(higher is better\)\s+1\s+0\.\d\dx\s+≈ noise\s+0\.17\s/m);
    expect(text.stdout).toMatch(/^Storage write P95 \(lower is better\)\s+1\s+1\.\d\dx\s+≈ noise\s+0\.12\s/m);
    expect(text.stdout).toContain("beyond noise: Welch's t-test on log values, two-sided, α = 0.05");
  });
});
