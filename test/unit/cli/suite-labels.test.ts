// Two firmware builds on one drive, told apart only by the suites' labels (rev8-gui #3): `kvbench
// history --label`, `kvbench export --label` (CSV, XLSX, JSON) and `kvbench report --compare A B
// --labels`, and the app's backend over the same database, on a real SQLite file of imported trials.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { SystemComparison } from '../../../src-main/export/report-model.ts';
import { createBackend } from '../../../src-main/server/backend.ts';
import type { TrialRecord } from '../../../src-shared/domain/store-types.ts';
import { parseCsv } from '../../support/csv.ts';
import { importedDb } from '../../support/imported-db.ts';
import { removeTempDirs } from '../store/fixtures.ts';
import { runInProcess } from './in-process.ts';
import { downloaded } from '../../support/downloaded.ts';

afterEach(removeTempDirs);

const FW1 = 'drive A, firmware 2.1';
const FW2 = 'drive A, firmware 2.2';

/**
 * Suites 1 and 2 labelled FW1 (the second a later re-run), suite 3 FW2 (about 20 % faster), suite 4
 * unlabelled: every trial on the one drive nvme0 of system rig, in one configuration.
 */
const firmwareDb = (): Promise<{ dir: string; db: string }> =>
  importedDb([
    ['nvme0', [{ tokPerS: 100 }, { tokPerS: 102 }, { tokPerS: 101 }], 'storage-only', FW1],
    ['nvme0', [{ tokPerS: 103 }, { tokPerS: 99 }], 'storage-only', FW1],
    ['nvme0', [{ tokPerS: 120 }, { tokPerS: 122 }, { tokPerS: 121 }], 'storage-only', FW2],
    ['nvme0', [{ tokPerS: 50 }]],
  ]);

describe('suite labels on the command line', () => {
  it('report --compare A B --labels pools the suites of each label and names the better build; a label against itself is refused', async () => {
    const { db } = await firmwareDb();
    const report = (...args: string[]) => runInProcess(() => reportCommand([...args, '--db', db]));
    const json = await report('--compare', FW1, FW2, '--labels', '--json');
    expect(json.code, json.stderr).toBe(0);
    const c = JSON.parse(json.stdout) as SystemComparison;
    expect(c.kind).toBe('label');
    expect([c.a, c.b]).toEqual([
      { label: FW1, id: FW1, sizeBytes: null, trials: 5, suiteIds: [1, 2] },
      { label: FW2, id: FW2, sizeBytes: null, trials: 3, suiteIds: [3] },
    ]);
    expect(c.matched).toBe(1);
    const tput = c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!;
    expect(tput.configs.map((x) => [x.nA, x.nB, x.placeA, x.placeB])).toEqual([[5, 3, 'rig · nvme0', 'rig · nvme0']]);
    expect(tput.verdict).toBe('b');

    const text = await report('--compare', FW1, FW2, '--labels');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(`Suite label comparison: A = “${FW1}” (suites 1, 2), B = “${FW2}” (suite 3)`);

    expect(await report('--compare', FW1, ` ${FW1}`, '--labels')).toEqual({ code: 1, stdout: '', stderr: `kvbench report: A and B are the same suite label (${FW1}): compare two different labels\n` });
    expect(await report('--compare', FW1, 'firmware 2.3', '--labels')).toEqual({ code: 1, stdout: '', stderr: "kvbench report: no suite is labelled 'firmware 2.3' (see kvbench history --suites)\n" });
    expect(await report('--compare', FW1, FW2, '--labels', '--drives')).toEqual({ code: 1, stdout: '', stderr: 'kvbench report: --drives and --labels say what A and B are: give one\n' });
    expect(await report('--labels')).toEqual({ code: 1, stdout: '', stderr: "kvbench report: --labels only says what --compare's A and B are: give --compare A B\n" });
  });

  it('history --label lists the trials of every suite with that label, shows each trial\'s label, and lists the label\'s suites', async () => {
    const { db } = await firmwareDb();
    const history = (...args: string[]) => runInProcess(() => historyCommand([...args, '--db', db]));
    const json = await history('--label', FW1, '--json');
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as TrialRecord[]).map((t) => [t.suiteId, t.suiteLabel])).toEqual([
      [2, FW1],
      [2, FW1],
      [1, FW1],
      [1, FW1],
      [1, FW1],
    ]);
    const both = await history('--label', FW1, '--label', FW2, '--json');
    expect(JSON.parse(both.stdout)).toHaveLength(8);

    const table = await history();
    const lines = table.stdout.split('\n');
    expect(lines[0]).toMatch(/^trial\s+started\s+suite\s+label\s+system\s+drive\s+scenario/);
    expect(lines.filter((l) => / 3 {2}drive A, firmware 2\.2 {2,}rig /.test(l))).toHaveLength(3);
    expect(lines.filter((l) => / 4 {2,}rig /.test(l))).toHaveLength(1);

    const suites = await history('--suites', '--label', FW2, '--json');
    expect(suites.code, suites.stderr).toBe(0);
    expect((JSON.parse(suites.stdout) as { id: number; label: string }[]).map((s) => [s.id, s.label])).toEqual([[3, FW2]]);
    expect(await history('--label', 'firmware 2.3')).toEqual({ code: 1, stdout: '', stderr: "kvbench history: no suite is labelled 'firmware 2.3' (see kvbench history --suites)\n" });
    const systems = await history('--systems', '--label', FW1);
    expect(systems.code).toBe(1);
    expect(systems.stderr).toBe('kvbench history: --systems lists every system and drive: --label cannot be given with it\n');
  });

  it('export --label writes the label\'s trials with a suite_label column (CSV, XLSX with the labels in About, JSON); an unlabelled trial\'s is empty', async () => {
    const { dir, db } = await firmwareDb();
    const exp = (...args: string[]) => runInProcess(() => exportCommand([...args, '--db', db]));
    const all = path.join(dir, 'all.csv');
    expect((await exp('--out', all)).code).toBe(0);
    const rows = parseCsv(fs.readFileSync(all, 'utf8').replace(/^\uFEFF/, ''));
    const col = rows[0].indexOf('suite_label');
    expect(rows[0].slice(0, 3)).toEqual(['trial_id', 'suite_id', 'suite_label']);
    expect(rows.slice(1).map((r) => [r[1], r[col]])).toEqual([
      ...[1, 1, 1, 2, 2].map((id) => [String(id), FW1]),
      ...[3, 3, 3].map((id) => [String(id), FW2]),
      ['4', ''],
    ]);

    const xlsx = path.join(dir, 'fw2.xlsx');
    expect((await exp('--label', FW2, '--out', xlsx)).stderr).toBe(`exported 3 trial(s) to ${xlsx} (xlsx)\n`);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsx);
    const trials = wb.getWorksheet('Trials')!;
    const header = (trials.getRow(1).values as unknown[]).slice(1);
    const labelCol = header.indexOf('suite_label') + 1;
    expect([2, 3, 4].map((r) => trials.getRow(r).getCell(labelCol).value)).toEqual([FW2, FW2, FW2]);
    const about = wb.getWorksheet('About')!;
    const aboutRows = new Map<unknown, unknown>();
    about.eachRow((row) => aboutRows.set(row.getCell(1).value, row.getCell(2).value));
    expect(aboutRows.get('suite labels')).toBe(`${FW2} (suite 3)`);
    expect(aboutRows.get('filter')).toBe(JSON.stringify({ suiteLabels: [FW2] }));

    const jsonFile = path.join(dir, 'fw1.json');
    expect((await exp('--label', FW1, '--out', jsonFile)).code).toBe(0);
    const exported = JSON.parse(fs.readFileSync(jsonFile, 'utf8')) as { trials: TrialRecord[] };
    expect(exported.trials.map((t) => [t.suiteId, t.suiteLabel])).toEqual([1, 1, 1, 2, 2].map((id) => [id, FW1]));
  });

  it('the app lists, filters, compares and exports by label as the commands do', async () => {
    const { dir, db } = await firmwareDb();
    const app = await createBackend({ mode: 'browser', settingsFile: path.join(dir, 'settings.json'), databasePath: db, defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    const value = async <T>(p: Promise<{ ok: true; value: unknown } | { ok: false; error: { message: string } }>): Promise<T> => {
      const r = await p;
      if (!r.ok) throw new Error(r.error.message);
      return r.value as T;
    };
    try {
      const facets = await value<{ suiteLabels: unknown[] }>(app.invoke('history.facets', {}));
      expect(facets.suiteLabels).toEqual([
        { label: FW2, suites: 1, trialCount: 3 },
        { label: FW1, suites: 2, trialCount: 5 },
      ]);
      const listed = await value<{ trials: TrialRecord[]; total: number }>(app.invoke('history.list', { selection: { suiteLabels: [FW2] }, sort: { key: 'suiteLabel', dir: 'asc' } }));
      expect(listed.total).toBe(3);
      expect(new Set(listed.trials.map((t) => t.suiteLabel))).toEqual(new Set([FW2]));

      const compared = await value<SystemComparison & { unreadable: string[] }>(app.invoke('report.compare', { kind: 'label', a: FW1, b: FW2 }));
      const cli = await runInProcess(() => reportCommand(['--compare', FW1, FW2, '--labels', '--json', '--db', db]));
      const { unreadable, ...rest } = compared;
      expect(unreadable).toEqual([]);
      expect(rest).toEqual(JSON.parse(cli.stdout));
      expect(await app.invoke('report.compare', { kind: 'label', a: FW2, b: FW2 })).toEqual({
        ok: false,
        error: { code: 'VALIDATION', message: `A and B are the same suite label (${FW2}): compare two different labels` },
      });

      const out = path.join(dir, 'fw1.csv');
      expect((await runInProcess(() => exportCommand(['--label', FW1, '--out', out, '--db', db]))).code).toBe(0);
      const file = await value<{ trialCount: number }>(app.invoke('export.create', { selection: { suiteLabels: [FW1] }, format: 'csv' }));
      expect(file.trialCount).toBe(5);
      expect(downloaded(app, file).toString('utf8')).toBe(fs.readFileSync(out, 'utf8'));
    } finally {
      await app.close();
    }
  });
});
