// `--exclude-flagged` on kvbench report (its scenario report and --compare) and kvbench export, on a
// real database of imported drives: off by default, and said wherever it was on.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { SystemComparison } from '../../../src-main/export/report-model.ts';
import { importedDb } from '../../support/imported-db.ts';
import { removeTempDirs } from '../store/fixtures.ts';
import { dbIn } from '../export/drive-imports.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

/** A: three clean trials and one on a RAM disk; B: two clean trials and one whose reads the page cache served. */
async function seed(): Promise<string> {
  const { dir } = await importedDb([
    ['A-disk', [{ tokPerS: 100 }, { tokPerS: 102 }, { tokPerS: 101 }, { tokPerS: 300, ramBacked: true }]],
    ['B-disk', [{ tokPerS: 90 }, { tokPerS: 91 }, { tokPerS: 95, readCoverage: 0.3 }]],
  ]);
  return dir;
}

describe('kvbench report --exclude-flagged', () => {
  it('--compare leaves flagged trials out, says how many per side and why; without it they count and are marked', async () => {
    const dir = await seed();
    const report = (...args: string[]) => runInProcess(() => reportCommand(['--compare', 'A-disk', 'B-disk', '--drives', ...args, '--db', dbIn(dir)]));

    const json = await report('--json', '--exclude-flagged');
    expect(json.code, json.stderr).toBe(0);
    const c = JSON.parse(json.stdout) as SystemComparison;
    expect(c.excludeFlagged).toBe(true);
    expect(c.excludedFlagged).toEqual({
      a: { matchedTrials: 4, flaggedTrials: 1, traceOnly: 0, ramBacked: 1, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [{ backing: 'loop0 on tmpfs', trials: 1 }] },
      b: { matchedTrials: 3, flaggedTrials: 1, traceOnly: 0, ramBacked: 0, pageCache: 1, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [] },
    });
    const tput = c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!;
    expect(tput.configs.map((x) => [x.nA, x.nB, x.excludedA, x.excludedB, x.medianA])).toEqual([[3, 2, 1, 1, 101]]);

    const text = await report('--per-config', '--exclude-flagged');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(
      'Flagged trials excluded (--exclude-flagged): A 1 of 4 matched trial(s) left out (1 on a RAM-backed cache directory); B 1 of 3 matched trial(s) left out (1 with storage reads the page cache served).',
    );
    expect(text.stdout).toContain('note: A (A-disk): 1 of its 4 matched trial(s) left out as flagged (1 on a RAM-backed cache directory)');
    expect(text.stdout).toMatch(/^storage-only: tiny-1b, 4 users.*\s1\/1$/m);
    expect(text.stdout).not.toMatch(/flagged A\/B|count those trials like any other/);

    // The default is unchanged: the flagged trials count, and are marked.
    const plain = await report('--json');
    const d = JSON.parse(plain.stdout) as SystemComparison;
    expect([d.excludeFlagged, d.excludedFlagged]).toEqual([false, null]);
    expect(d.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.configs.map((x) => [x.nA, x.nB, x.flaggedA, x.flaggedB])).toEqual([[4, 3, 1, 1]]);
    expect((await report()).stdout).not.toMatch(/exclude-flagged|left out/);
  });

  it('the scenario report and tier comparison leave them out, each listed with why', async () => {
    const dir = await seed();
    const r = await runInProcess(() => reportCommand(['--all', '--exclude-flagged', '--db', dbIn(dir)]));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Flagged trials are excluded (--exclude-flagged): 2 trial(s) left out (1 on a RAM-backed cache directory, 1 with storage reads the page cache served), each listed with why.');
    expect(r.stdout).toMatch(/! trial #\d+ \(id \d+\) FLAGGED, excluded: the cache directory was RAM-backed/);
    expect(r.stdout).toMatch(/^Tier comparison \(medians across complete trials, flagged ones excluded; /m);
    expect(r.stdout).toMatch(/trials: 3 aggregated of 4/);
    const plain = await runInProcess(() => reportCommand(['--all', '--db', dbIn(dir)]));
    expect(plain.stdout).toMatch(/trials: 4 aggregated of 4/);
    expect(plain.stdout).toMatch(/! trial #\d+ \(id \d+\) FLAGGED: the cache directory was RAM-backed/);
    expect(plain.stdout).not.toMatch(/exclude-flagged|flagged ones excluded/);
  });
});

describe('kvbench export --exclude-flagged', () => {
  it('the XLSX and JSON say the exclusion was on; a CSV, which has no aggregates, is refused with it', async () => {
    const dir = await seed();
    const exp = (...args: string[]) => runInProcess(() => exportCommand([...args, '--db', dbIn(dir)]));

    const csv = await exp('--out', path.join(dir, 'x.csv'), '--exclude-flagged');
    expect(csv.code).toBe(1);
    expect(csv.stderr).toBe(
      'kvbench export: --exclude-flagged applies to the aggregates, which only a report CSV (--content report), XLSX and JSON carry (a trials CSV has one row per trial, each flagged one with its caution)\n',
    );
    expect(fs.existsSync(path.join(dir, 'x.csv'))).toBe(false);

    const xlsx = path.join(dir, 'x.xlsx');
    const x = await exp('--out', xlsx, '--exclude-flagged');
    expect(x.code, x.stderr).toBe(0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsx);
    const about = new Map<unknown, unknown>();
    wb.getWorksheet('About')!.eachRow((row) => about.set(row.getCell(1).value, row.getCell(2).value));
    expect(about.get('flagged trials')).toMatch(/^EXCLUDED from aggregates \(exclude flagged trials was on\): 2 trial\(s\) left out /);

    const json = path.join(dir, 'x.json');
    expect((await exp('--out', json, '--exclude-flagged')).code).toBe(0);
    expect((JSON.parse(fs.readFileSync(json, 'utf8')) as { excludeFlagged: boolean }).excludeFlagged).toBe(true);
    expect((await exp('--out', json)).code).toBe(0);
    expect((JSON.parse(fs.readFileSync(json, 'utf8')) as { excludeFlagged: boolean }).excludeFlagged).toBe(false);
  });
});
