// `kvbench export --content report`: the report's table as CSV (per scenario group and metric: the
// trials, n, median, P95, CV, min, max), byte for byte the file the app's Report page saves as
// "Report CSV" for the same selection and options, from a real SQLite file of stored trials.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Selection } from '../../../src-shared/ipc/contract.ts';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { createBackend } from '../../../src-main/server/backend.ts';
import { importedDb } from '../../support/imported-db.ts';
import { parseCsv } from '../../support/csv.ts';
import { KVBENCH_BIN } from '../../integration/cli/cli-harness.ts';
import { removeTempDirs } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';
import { downloaded } from '../../support/downloaded.ts';

afterEach(() => removeTempDirs());

/** Three suites on two drives under two suite labels: a partial trial, a RAM-backed one and one the page cache served. */
function labDb(): Promise<{ dir: string; db: string }> {
  return importedDb([
    ['A-disk', [{ tokPerS: 100 }, { tokPerS: 120 }, { tokPerS: 90, status: 'partial' }], 'storage-only', 'fw 2.1'],
    ['A-disk', [{ tokPerS: 300, ramBacked: true }, { tokPerS: 310 }], 'cpu-storage', 'fw 2.1'],
    ['B-disk', [{ tokPerS: 200 }, { tokPerS: 210, readCoverage: 0.5 }], 'storage-only', 'fw 2.2'],
  ]);
}

type AppFile = { fileName: string; trialCount: number };

describe('kvbench export --content report', () => {
  it("writes the app's Report CSV, byte for byte, for the same selection and options", async () => {
    const { dir, db } = await labDb();
    const app = await createBackend({ mode: 'browser', settingsFile: path.join(dir, 'settings.json'), databasePath: db, defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      const cases: { flags: string[]; selection: Selection; includeIncomplete?: boolean; excludeFlagged?: boolean; trials: number }[] = [
        { flags: ['--suite', '1'], selection: { suiteIds: [1] }, trials: 3 },
        { flags: ['--include-incomplete', '--exclude-flagged'], selection: {}, includeIncomplete: true, excludeFlagged: true, trials: 7 },
        { flags: [], selection: {}, trials: 7 },
        { flags: ['--label', 'fw 2.1', '--scenario', 'cpu-storage,storage-only'], selection: { suiteLabels: ['fw 2.1'], scenarioIds: ['cpu-storage', 'storage-only'] }, trials: 5 },
        { flags: ['--drive', 'B-disk', '--exclude-flagged'], selection: { driveIds: ['B-disk'] }, excludeFlagged: true, trials: 2 },
      ];
      for (const [i, c] of cases.entries()) {
        const out = path.join(dir, `report-${i}.csv`);
        const cli = await run(() => exportCommand(['--db', db, '--content', 'report', ...c.flags, '--out', out]));
        expect(cli.code, cli.stderr).toBe(0);
        const fromApp = await app.invoke('export.create', {
          selection: c.selection,
          format: 'csv',
          content: 'report',
          ...(c.includeIncomplete ? { includeIncomplete: true } : {}),
          ...(c.excludeFlagged ? { excludeFlagged: true } : {}),
        });
        if (!fromApp.ok) throw new Error(fromApp.error.message);
        const file = fromApp.value as AppFile;
        expect(file.trialCount, c.flags.join(' ')).toBe(c.trials);
        expect(fs.readFileSync(out).equals(downloaded(app, file)), `${c.flags.join(' ')}: the same bytes`).toBe(true);
        const [header, ...rows] = parseCsv(fs.readFileSync(out, 'utf8').replace(/^\uFEFF/, ''));
        expect(header.slice(0, 2)).toEqual(['scenario_id', 'scenario']);
        expect(header).toEqual(expect.arrayContaining(['configuration', 'trials', 'metric', 'n', 'median', 'p95', 'cv', 'min', 'max']));
        expect(rows.length, 'one row per group and metric').toBeGreaterThan(0);
        const groups = new Set(rows.map((r) => r.slice(0, header.indexOf('configuration') + 1).join('|'))).size;
        expect(cli.stderr).toBe(`exported the report of ${c.trials} trial(s), ${groups} group(s) in ${rows.length} row(s), to ${out} (csv)\n`);
      }
    } finally {
      await app.close();
    }
  });

  it('writes into /dev/stdout when it is a pipe, and takes CSV for a name without an extension', async () => {
    const { dir, db } = await labDb();
    const piped = execFileSync(process.execPath, [KVBENCH_BIN, 'export', '--db', db, '--content', 'report', '--suite', '3', '--out', '/dev/stdout'], { encoding: 'utf8' });
    const out = path.join(dir, 'report');
    const named = await run(() => exportCommand(['--db', db, '--content', 'report', '--suite', '3', '--out', out]));
    expect(named.code, named.stderr).toBe(0);
    expect(piped).toBe(fs.readFileSync(out, 'utf8'));
    expect(piped).toMatch(/^\uFEFFscenario_id,scenario,/);
  });

  it('refuses what a report CSV cannot hold, before anything is written', async () => {
    const { dir, db } = await labDb();
    const refused = async (args: string[], message: string): Promise<void> => {
      const r = await run(() => exportCommand(['--db', db, ...args]));
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 1, stdout: '', stderr: `kvbench export: ${message}\n` });
    };
    const xlsx = path.join(dir, 'r.xlsx');
    await refused(['--content', 'report', '--out', xlsx], '--content report is a CSV (the report\'s table); an XLSX or JSON file holds the report and the trials both: leave --content out');
    await refused(['--content', 'report', '--format', 'json', '--out', path.join(dir, 'r.csv')], '--content report is a CSV (the report\'s table); an XLSX or JSON file holds the report and the trials both: leave --content out');
    await refused(['--content', 'tables', '--out', path.join(dir, 'r.csv')], '--content must be trials or report, got tables');
    await refused(
      ['--content', 'report', '--stated-read-gbps', '7', '--out', path.join(dir, 'r.csv')],
      '--stated-read-gbps/--stated-write-gbps apply to the tier comparison, which only XLSX and JSON carry (the report CSV holds the per-scenario table)',
    );
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('r.'))).toEqual([]);
    // The trials' CSV (the default) still refuses --exclude-flagged, which has no aggregate to act on there.
    await refused(['--exclude-flagged', '--out', path.join(dir, 'r.csv')], '--exclude-flagged applies to the aggregates, which only a report CSV (--content report), XLSX and JSON carry (a trials CSV has one row per trial, each flagged one with its caution)');
  });
});
