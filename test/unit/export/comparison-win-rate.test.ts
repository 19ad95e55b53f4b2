// The win rate and the per-group table of `kvbench report --compare` (and the app's Compare view) on
// drives imported into a real database: what the GUI review rev8 found (defects 1 and 2), and the
// rule that fixes both, one for the per-metric verdict, the win rate and every group's row.
import { afterEach, describe, expect, it } from 'vitest';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { buildSystemComparison, type SystemComparison } from '../../../src-main/export/report-model.ts';
import { formatComparison } from '../../../src-main/export/render-text.ts';
import { resolveSelection } from '../../../src-main/export/selection.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { TrialRecord } from '../../../src-shared/domain/store-types.ts';
import { runInProcess } from '../cli/in-process.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { dbIn, importDrive, type DriveRun } from './drive-imports.ts';

afterEach(removeTempDirs);

/** The comparison of two drives of the database in `dir`, as `report --compare A B --drives` and the app's report.compare build it. */
function compareDrives(dir: string, a: string, b: string, keep: (t: TrialRecord) => boolean = () => true): SystemComparison {
  const store = openStore(dbIn(dir));
  try {
    const side = (ref: string) => {
      const d = store.resolveDrive(ref);
      return { label: d.label, id: d.id, trials: store.listTrials(resolveSelection(store, { drives: [d.id] })).filter(keep) };
    };
    return buildSystemComparison(side(a), side(b), { kind: 'drive' });
  } finally {
    store.close();
  }
}

const runs = (values: readonly number[], run: (v: number) => DriveRun): DriveRun[] => values.map(run);

describe('the win rate counts only configurations whose noise was tested', () => {
  it('names no winner where no tested configuration is beyond the noise, however an untested one leans (rev8-gui #1)', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      // users 4: 2 trials a side, A's end-to-end P95 1.17x B's (A slower), within the noise.
      await importDrive(store, dir, 'A-lab', runs([1100, 1250], (e2eP95Ms) => ({ tokPerS: 100, e2eP95Ms, readBytesPerS: e2eP95Ms === 1100 ? 2e9 : 2.02e9 })));
      await importDrive(store, dir, 'B-vm', runs([980, 1020], (e2eP95Ms) => ({ tokPerS: 100, e2eP95Ms, readBytesPerS: e2eP95Ms === 980 ? 1e9 : 1.01e9 })));
      // users 8: one trial on B (its noise unknown), where A is faster (0.91x) and reads 3 % slower.
      const users8 = { numUsers: 8 };
      await importDrive(store, dir, 'A-lab', runs([900, 910], (e2eP95Ms) => ({ tokPerS: 100, e2eP95Ms, readBytesPerS: 3e9, options: users8 })));
      await importDrive(store, dir, 'B-vm', [{ tokPerS: 100, e2eP95Ms: 1000, readBytesPerS: 3.1e9, options: users8 }]);
    } finally {
      store.close();
    }
    const c = compareDrives(dir, 'A-lab', 'B-vm');
    const e2e = c.metrics.find((m) => m.metric.key === 'e2e_p95_ms')!;
    expect(e2e.configs.map((x) => [x.numUsers, x.winner, x.withinNoise])).toEqual([
      [4, 'b', true],
      [8, 'a', null],
    ]);
    expect(e2e.meanRatio).toBeGreaterThan(1);
    expect(e2e.geoMeanRatio).toBeGreaterThan(1.15);
    // Was winRateA 1: the one configuration of unknown noise counted as A's win.
    expect(e2e).toMatchObject({ verdict: 'within-noise', tested: 1, withinNoise: 1, noiseUnknown: 1, winsA: 0, winsB: 0, winRateA: null });
    // Beyond the noise in the one tested configuration, for A: A's share of the 1 tested, not of 2.
    const rd = c.metrics.find((m) => m.metric.key === 'storage_read_bytes_per_s')!;
    expect(rd).toMatchObject({ verdict: 'a', tested: 1, winsA: 1, winsB: 0, winRateA: 1 });
    const text = formatComparison(c);
    expect(text).toMatch(/^End-to-end P95 \(lower is better\)\s+2\s+1\.\d\dx\s+≈ noise\s+0\.\d+\s+—\s+1\/2 \(1 unknown\)\s/m);
    expect(text).toMatch(/^Storage read bandwidth \(higher is better\)\s+2\s+.*\s+A\s+\S+\s+100% of 1\s+0\/2 \(1 unknown\)\s/m);
    expect(text).toMatch(/A win rate: A's share of the configurations tested/);
  });

  it('counts a configuration within the noise as no one\'s win, and says where the win rate leans against a geo-mean within the noise', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      // users 4: A 1 % slower (lower is better), steady: beyond the noise, B's. users 8 and 16: A 10 % faster, noisy: within it.
      await importDrive(store, dir, 'A', runs([1010, 1010.5], (e2eP95Ms) => ({ tokPerS: 100, e2eP95Ms })));
      await importDrive(store, dir, 'B', runs([1000, 1000.5], (e2eP95Ms) => ({ tokPerS: 100, e2eP95Ms })));
      for (const numUsers of [8, 16]) {
        await importDrive(store, dir, 'A', runs([700, 1100], (e2eP95Ms) => ({ tokPerS: 100, e2eP95Ms, options: { numUsers } })));
        await importDrive(store, dir, 'B', runs([800, 1200], (e2eP95Ms) => ({ tokPerS: 100, e2eP95Ms, options: { numUsers } })));
      }
    } finally {
      store.close();
    }
    const e2e = compareDrives(dir, 'A', 'B').metrics.find((m) => m.metric.key === 'e2e_p95_ms')!;
    expect(e2e).toMatchObject({ verdict: 'within-noise', leader: 'a', tested: 3, winsA: 0, winsB: 1, winRateA: 0 });
    expect(e2e.verdictCaveat).toMatch(/^≈ noise: the geometric mean over the 3 configuration\(s\) tested, 0\.9\dx, leans A, within the noise \(p = 0\.\d+\); 1 of the 1 configuration\(s\) beyond the run-to-run noise favour B/);
  });
});

describe('the per-group table follows the per-metric rules', () => {
  /** rev8-gui #2: a tmpfs drive against a disk, by CPU-tier size. */
  async function tmpfsAndDisk(dir: string): Promise<void> {
    const store = openStore(dbIn(dir));
    const cpu = (cpuMemGb: number, numUsers = 4) => ({ cpuMemGb, numUsers });
    try {
      // CPU 0.25, users 4: A half of B's read bandwidth, within the noise (p about 0.4).
      await importDrive(store, dir, 'T', runs([4e8, 6e8], (readBytesPerS) => ({ tokPerS: readBytesPerS === 4e8 ? 100 : 104, readBytesPerS, options: cpu(0.25) })));
      await importDrive(store, dir, 'V', runs([6e8, 14e8], (readBytesPerS) => ({ tokPerS: readBytesPerS === 6e8 ? 100 : 104, readBytesPerS, options: cpu(0.25) })));
      // CPU 0.25, users 8: A read nothing (0 B/s), which has no logarithm: untested.
      await importDrive(store, dir, 'T', runs([100, 101], (tokPerS) => ({ tokPerS, readBytesPerS: 0, options: cpu(0.25, 8) })));
      await importDrive(store, dir, 'V', runs([100, 101], (tokPerS) => ({ tokPerS, readBytesPerS: tokPerS === 100 ? 1e9 : 1.01e9, options: cpu(0.25, 8) })));
      // CPU 0.125: one trial on A, B faster: noise unknown.
      await importDrive(store, dir, 'T', [{ tokPerS: 100, readBytesPerS: 3e8, options: cpu(0.125) }]);
      await importDrive(store, dir, 'V', runs([1e9, 1.02e9], (readBytesPerS) => ({ tokPerS: 100, readBytesPerS, options: cpu(0.125) })));
      // CPU 0.5: A twice as fast, steady: beyond the noise.
      await importDrive(store, dir, 'T', runs([2e9, 2.02e9], (readBytesPerS) => ({ tokPerS: 100, readBytesPerS, options: cpu(0.5) })));
      await importDrive(store, dir, 'V', runs([1e9, 1.01e9], (readBytesPerS) => ({ tokPerS: 100, readBytesPerS, options: cpu(0.5) })));
    } finally {
      store.close();
    }
  }

  it('names no side or differentiator without a test beyond the noise, and never averages in a 0x ratio (rev8-gui #2)', async () => {
    const dir = tempDir();
    await tmpfsAndDisk(dir);
    const c = compareDrives(dir, 'T', 'V');
    const group = (g: string) => c.byCpuMem.find((x) => x.group === g)!;
    const rd = (g: string) => group(g).metrics.find((m) => m.key === 'storage_read_bytes_per_s')!;
    // Was 0.25x (the mean of 0.53x and 0x), "B better, win rate 100 %".
    expect(rd('CPU 0.25 GiB')).toMatchObject({ compared: 2, tested: 1, noiseUnknown: 1, verdict: 'within-noise', leader: 'b', winRateA: null });
    expect(rd('CPU 0.25 GiB').geoMeanRatio).toBeCloseTo(Math.sqrt((4e8 * 6e8) / (6e8 * 14e8)), 9);
    expect(rd('CPU 0.25 GiB').pValue).toBeGreaterThan(0.05);
    expect(group('CPU 0.25 GiB').bestDifferentiator).toBeNull();
    // Was "B better, win rate 100 %" on one trial.
    expect(rd('CPU 0.125 GiB')).toMatchObject({ compared: 1, tested: 0, verdict: 'unknown', leader: 'b', winRateA: null });
    expect(group('CPU 0.125 GiB').bestDifferentiator).toBeNull();
    // Beyond the noise: named, with the geometric mean the verdict tests and A's share of the configurations tested.
    expect(rd('CPU 0.5 GiB')).toMatchObject({ tested: 1, verdict: 'a', winsA: 1, winRateA: 1 });
    expect(group('CPU 0.5 GiB').bestDifferentiator).toMatchObject({ key: 'storage_read_bytes_per_s', side: 'a', winRate: 1, tested: 1 });
    expect(group('CPU 0.5 GiB').bestDifferentiator!.geoMeanRatio).toBeCloseTo(2, 1);

    const text = formatComparison(c);
    expect(text).toMatch(/^CPU 0\.25 GiB\s+2\s.*≈ 0\.53x \(1 of 2 tested\)\s+—$/m);
    expect(text).toMatch(/^CPU 0\.125 GiB\s+1\s.*B\? 0\.30x \(0 of 1 tested\)\s+—$/m);
    expect(text).toMatch(/^CPU 0\.5 GiB\s+1\s.*A 2\.00x \(1 of 1 tested, A wins 100%\)\s+Storage read bandwidth: A better \(p <0\.001\), 2\.00x, A wins 100% of 1 tested$/m);
    expect(text).not.toMatch(/0\.00x|0\.2[67]x/);
  });

  it('a group\'s row is the per-metric summary of its configurations: one rule, not a second', async () => {
    const dir = tempDir();
    await tmpfsAndDisk(dir);
    const all = compareDrives(dir, 'T', 'V');
    for (const cpuMemGb of [0.125, 0.25, 0.5]) {
      const only = compareDrives(dir, 'T', 'V', (t) => t.options.cpuMemGb === cpuMemGb);
      const row = all.byCpuMem.find((g) => g.group === `CPU ${cpuMemGb} GiB`)!;
      for (const m of only.metrics) {
        const { compared, tested, noiseUnknown, geoMeanRatio, verdict, leader, pValue, winRateA, winsA, winsB, mixedDefinitions } = m;
        expect(row.metrics.find((r) => r.key === m.metric.key), `${cpuMemGb} ${m.metric.key}`).toEqual({
          key: m.metric.key, label: m.metric.label, compared, tested, noiseUnknown, geoMeanRatio, verdict, leader, pValue, winRateA, winsA, winsB, mixedDefinitions,
        });
      }
    }
  });

  it('kvbench report --compare --json gives the same rows', async () => {
    const dir = tempDir();
    await tmpfsAndDisk(dir);
    const r = await runInProcess(() => reportCommand(['--compare', 'T', 'V', '--drives', '--json', '--db', dbIn(dir)]));
    expect(r.code, r.stderr).toBe(0);
    const c = JSON.parse(r.stdout) as SystemComparison;
    expect(c.byCpuMem.map((g) => [g.group, g.bestDifferentiator?.key ?? null])).toEqual([
      ['CPU 0.125 GiB', null],
      ['CPU 0.25 GiB', null],
      ['CPU 0.5 GiB', 'storage_read_bytes_per_s'],
    ]);
    expect(c.metrics.find((m) => m.metric.key === 'storage_read_bytes_per_s')).toMatchObject({ tested: 2, winsA: 1, winsB: 0, winRateA: 0.5 });
  });
});
