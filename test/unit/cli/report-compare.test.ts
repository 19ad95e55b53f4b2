// `kvbench report --compare A B --drives` on a real database of imported drives: what it refuses,
// and the notes, marks and counts it prints beside the ratios.
import { afterEach, describe, expect, it } from 'vitest';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { runInProcess } from './in-process.ts';
import type { SystemComparison } from '../../../src-main/export/report-model.ts';

afterEach(removeTempDirs);

describe('kvbench report --compare', () => {
  it('refuses a drive compared with itself, and names the listing that shows the drives', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A-first', [{ tokPerS: 100 }, { tokPerS: 101 }]);
    } finally {
      store.close();
    }
    const report = (...args: string[]) => runInProcess(() => reportCommand([...args, '--db', dbIn(dir)]));
    // Two refs to one drive used to run and print "≈ noise" on every metric, as if two drives had been measured.
    const self = await report('--compare', 'A-first', 'A-first', '--drives');
    expect(self.code).toBe(1);
    expect(self.stdout).toBe('');
    expect(self.stderr).toMatch(/^kvbench report: A and B are the same drive \(A-first, imp-drv-[0-9a-f]+\): compare two different drives\n$/);
    const byId = await report('--compare', 'A-first', 'imp-drv', '--drives');
    expect(byId.code).toBe(1);
    expect(byId.stderr).toContain('A and B are the same drive');
    // `kvbench history --drives` does not exist: the drives are listed by --systems.
    const unknown = await report('--compare', 'nosuch', 'A-first', '--drives');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("kvbench report: no drive matches 'nosuch' (see kvbench history --systems)\n");
  });

  it('says which side\'s matched trials are flagged and why, in the notes, per metric and per configuration, and counts them in --json', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      // A on a RAM disk (3× faster, every trial flagged); B on a disk, one of its trials read through the page cache.
      await importDrive(store, dir, 'A-ram', [300, 310, 305].map((tokPerS) => ({ tokPerS, ramBacked: true, readBytesPerS: 3e9 + tokPerS })));
      await importDrive(store, dir, 'B-disk', [
        { tokPerS: 100, readBytesPerS: 1e9 },
        { tokPerS: 104, readBytesPerS: 1.02e9 },
        { tokPerS: 102, readBytesPerS: 1.01e9, readCoverage: 0.3 },
      ]);
      // Trials the comparison does not match (other users) are not counted among the matched ones.
      await importDrive(store, dir, 'A-ram', [{ tokPerS: 50, ramBacked: true, options: { numUsers: 8 } }]);
    } finally {
      store.close();
    }
    const report = (...args: string[]) => runInProcess(() => reportCommand([...args, '--db', dbIn(dir)]));
    const json = await report('--compare', 'A-ram', 'B-disk', '--drives', '--json');
    expect(json.code, json.stderr).toBe(0);
    const c = JSON.parse(json.stdout) as SystemComparison;
    expect(c.cautions).toEqual({
      a: { matchedTrials: 3, flaggedTrials: 3, ramBacked: 3, ramBackings: [{ backing: 'loop0 on tmpfs', trials: 3 }], traceOnly: 0, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0 },
      b: { matchedTrials: 3, flaggedTrials: 1, ramBacked: 0, ramBackings: [], traceOnly: 0, pageCache: 1, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0 },
    });
    expect(c.notes).toEqual([
      'A (A-ram): 3 of its 3 matched trial(s) ran on a RAM-backed cache directory (loop0 on tmpfs): their storage numbers describe memory, not a drive',
      'B (B-disk): in 1 of its 3 matched trial(s) the page cache served storage reads: their storage read numbers describe RAM, not the drive',
      expect.stringMatching(/^the ratios, win rates and verdicts count those trials like any other/),
    ]);
    const bw = c.metrics.find((m) => m.metric.key === 'storage_read_bytes_per_s')!;
    expect(bw.flaggedConfigs).toBe(1);
    expect(bw.configs.map((x) => [x.flaggedA, x.flaggedB])).toEqual([[3, 1]]);
    const text = await report('--compare', 'A-ram', 'B-disk', '--drives', '--per-config');
    expect(text.stdout).toMatch(/^Storage read bandwidth \(higher is better\) .* 1\/1$/m);
    expect(text.stdout).toMatch(/^storage-only: tiny-1b.*\s3\/1$/m);
    expect(text.stdout).toContain('note: A (A-ram): 3 of its 3 matched trial(s) ran on a RAM-backed cache directory');
  });

  it('prints a comparison without flagged trials as before: no flagged column, no caution note', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A', [{ tokPerS: 100 }, { tokPerS: 101 }]);
      await importDrive(store, dir, 'B', [{ tokPerS: 90 }, { tokPerS: 91 }]);
    } finally {
      store.close();
    }
    const text = await runInProcess(() => reportCommand(['--compare', 'A', 'B', '--drives', '--per-config', '--db', dbIn(dir)]));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).not.toMatch(/flagged/);
  });

  it('--match scenario matches no runs whose workloads differ beyond users and tier budgets, and says in what they differ', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A-first', [{ tokPerS: 100 }, { tokPerS: 101 }, { tokPerS: 102 }]);
      // rev7's B-other: a concurrency cap and multi-turn off, which --match scenario used to pool with A's runs unsaid.
      await importDrive(store, dir, 'B-other', [{ tokPerS: 30, options: { maxConcurrentAllocs: 2, disableMultiTurn: true } }, { tokPerS: 31, options: { maxConcurrentAllocs: 2, disableMultiTurn: true } }]);
      // A machine with more RAM: the planner gave it more users and a CPU tier, the same workload otherwise.
      await importDrive(store, dir, 'B-big', [{ tokPerS: 200, options: { numUsers: 8, cpuMemGb: 2 } }, { tokPerS: 201, options: { numUsers: 8, cpuMemGb: 2 } }]);
    } finally {
      store.close();
    }
    const compare = async (b: string): Promise<SystemComparison> => {
      const r = await runInProcess(() => reportCommand(['--compare', 'A-first', b, '--drives', '--match', 'scenario', '--json', '--db', dbIn(dir)]));
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as SystemComparison;
    };
    const other = await compare('B-other');
    expect(other.matched).toBe(0);
    expect(other.notes).toContain(
      "storage-only (tiny-1b, 4 users, 4 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1): not matched, B's nearest run of this scenario differs in --disable-multi-turn false vs true, --max-concurrent-allocs 0 vs 2 (--match scenario lets only the users and tier budgets differ)",
    );
    const big = await compare('B-big');
    expect(big.matched).toBe(1);
    expect(big.notes).toContain('storage-only (tiny-1b, 4 users, 4 s, CPU 0 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1): matched by scenario, A and B differ in --num-users 4 vs 8, --cpu-mem-gb 0 vs 2');
  });

  it('never pools two scenarios that ran one configuration into a row: each is matched with the same scenario, and a note names the one left unmatched', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      // cpu-storage and storage-saturation can share every workload option and still differ (a
      // storage cap): the GUI review's "cpu-storage + storage-saturation" row pooled 201/340 tok/s
      // with 27.7/28.7 tok/s into a 2.82x that matched neither scenario.
      const cpu = { cpuMemGb: 1 };
      await importDrive(store, dir, 'A', [{ tokPerS: 30, options: cpu }, { tokPerS: 31, options: cpu }], 'storage-saturation');
      await importDrive(store, dir, 'B', [{ tokPerS: 201, options: cpu }, { tokPerS: 340, options: cpu }], 'cpu-storage');
      await importDrive(store, dir, 'B', [{ tokPerS: 27.7, options: cpu }, { tokPerS: 28.7, options: cpu }], 'storage-saturation');
      await importDrive(store, dir, 'A', [{ tokPerS: 50 }, { tokPerS: 51 }]);
      await importDrive(store, dir, 'B', [{ tokPerS: 40 }, { tokPerS: 41 }]);
    } finally {
      store.close();
    }
    const json = await runInProcess(() => reportCommand(['--compare', 'A', 'B', '--drives', '--json', '--db', dbIn(dir)]));
    const c = JSON.parse(json.stdout) as SystemComparison;
    const tput = c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!;
    expect(tput.configs.map((x) => [x.scenarioIds, x.nA, x.nB, x.medianB])).toEqual([
      [['storage-only'], 2, 2, 40.5],
      [['storage-saturation'], 2, 2, 28.2],
    ]);
    expect(c.matched).toBe(2);
    expect(c.unmatchedB).toBe(1);
    expect(c.notes.some((n) => n.includes('count together in one row'))).toBe(false);
    expect(c.notes).toContain(
      '1 scenario(s) ran a configuration that the other side ran only under another scenario, so they are not matched (a scenario is compared only with the same scenario: ' +
        'scenarios that share a configuration can still differ, e.g. in the storage cap): cpu-storage (tiny-1b, 4 users, 4 s, CPU 1 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1) only in B, A ran it as storage-saturation',
    );
    const text = await runInProcess(() => reportCommand(['--compare', 'A', 'B', '--drives', '--per-config', '--db', dbIn(dir)]));
    expect(text.stdout).toMatch(/^storage-saturation: tiny-1b, 4 users, 4 s, CPU 1 GiB, /m);
    expect(text.stdout).not.toMatch(/ \+ /);
  });

  it('--labels: two suite labels are matched scenario by scenario, never pooled (rev12 M3, as the GUI review compared revB and revA)', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      const cpu = { cpuMemGb: 1 };
      await importDrive(store, dir, 'disk', [{ tokPerS: 201, options: cpu }, { tokPerS: 340, options: cpu }], 'cpu-storage', 'revA');
      await importDrive(store, dir, 'disk', [{ tokPerS: 27.7, options: cpu }, { tokPerS: 28.7, options: cpu }], 'storage-saturation', 'revA');
      await importDrive(store, dir, 'disk', [{ tokPerS: 30, options: cpu }, { tokPerS: 31, options: cpu }], 'storage-saturation', 'revB');
    } finally {
      store.close();
    }
    const text = await runInProcess(() => reportCommand(['--compare', 'revB', 'revA', '--labels', '--per-config', '--db', dbIn(dir)]));
    expect(text.code, text.stderr).toBe(0);
    // One row, storage-saturation against storage-saturation: 30.5 ÷ 28.2 tok/s, not the pooled 2.82x-style mix.
    expect(text.stdout).toMatch(/^storage-saturation: tiny-1b, 4 users, 4 s, CPU 1 GiB, .*\s2\s+2\s+30\.50\s+28\.20\s+1\.08x\s/m);
    expect(text.stdout).not.toMatch(/cpu-storage \+ storage-saturation/);
    expect(text.stdout).toContain('note: 1 scenario(s) ran a configuration that the other side ran only under another scenario');
    expect(text.stdout).toContain('cpu-storage (tiny-1b, 4 users, 4 s, CPU 1 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1) only in B, A ran it as storage-saturation');
  });

  it('says which of a side\'s trials of matched configurations were left out as not complete', async () => {
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'A', [{ tokPerS: 100 }, { tokPerS: 101 }, { tokPerS: 102 }]);
      // rev7: B's partial trial left nB = 2 as the only trace.
      await importDrive(store, dir, 'B', [{ tokPerS: 90 }, { tokPerS: 91 }, { tokPerS: 20, status: 'partial' }]);
      // A partial trial of a configuration A never ran is no part of the comparison: not counted.
      await importDrive(store, dir, 'B', [{ tokPerS: 20, status: 'partial', options: { numUsers: 16 } }]);
    } finally {
      store.close();
    }
    const r = await runInProcess(() => reportCommand(['--compare', 'A', 'B', '--drives', '--json', '--db', dbIn(dir)]));
    const c = JSON.parse(r.stdout) as SystemComparison;
    expect(c.metrics[0].configs.map((x) => [x.nA, x.nB])).toEqual([[3, 2]]);
    expect(c.notes).toContain('B (B): 1 trial(s) of matched configurations left out, not complete (storage-only 1 partial): only complete trials count');
    expect(c.notes.filter((n) => n.includes('left out'))).toHaveLength(1);
  });
});
