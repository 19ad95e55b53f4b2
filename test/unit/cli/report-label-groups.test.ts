// A report over several suites never pools trials of different suite labels: two firmware builds of
// one drive measured by `kvbench report --suite 1,2` were one median of both builds' trials. Each
// label's trials are a group of their own (as two drives' are), every output names each group's
// label (text, --json, the XLSX and JSON exports, the app's report.build), the report says the
// labels are apart and points to `--compare A B --labels`; suites of one label still pool.
// On a real SQLite file of imported trials.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport, SystemComparison, TierComparison } from '../../../src-main/export/report-model.ts';
import { inAppWords } from '../../../src-shared/domain/app-words.ts';
import { createBackend } from '../../../src-main/server/backend.ts';
import { importedDb } from '../../support/imported-db.ts';
import { dbIn } from '../export/drive-imports.ts';
import { removeTempDirs } from '../store/fixtures.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

const FW1 = 'fw 2.1';
const FW2 = 'fw 2.2';

/**
 * Suite 1 FW1 (about 100 tok/s), suite 2 FW2 (about 120), suite 3 FW1 again, suite 4 unlabelled,
 * suite 5 FW2 with only a cpu-storage run: every trial on drive nvme0 of system rig, one configuration.
 */
async function firmwareDb(): Promise<string> {
  const { dir } = await importedDb([
    ['nvme0', [{ tokPerS: 100 }, { tokPerS: 102 }, { tokPerS: 101 }], 'storage-only', FW1],
    ['nvme0', [{ tokPerS: 120 }, { tokPerS: 122 }, { tokPerS: 121 }], 'storage-only', FW2],
    ['nvme0', [{ tokPerS: 103 }, { tokPerS: 99 }], 'storage-only', FW1],
    ['nvme0', [{ tokPerS: 50 }]],
    ['nvme0', [{ tokPerS: 240, options: { cpuMemGb: 4 } }], 'cpu-storage', FW2],
  ]);
  return dir;
}

const tput = (s: ScenarioReport['scenarios'][number]) => s.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.aggregate;

describe('a report over suites of different labels', () => {
  it('report --suite 1,2 keeps each label apart (n, median), names each group, and says so; suites of one label pool', async () => {
    const dir = await firmwareDb();
    const report = (...args: string[]) => runInProcess(() => reportCommand([...args, '--db', dbIn(dir)]));
    const json = await report('--suite', '1,2', '--json');
    expect(json.code, json.stderr).toBe(0);
    const { scenarios, tiers } = JSON.parse(json.stdout) as { scenarios: ScenarioReport; tiers: TierComparison };
    expect(scenarios.suiteLabels).toEqual([
      { label: FW1, suiteIds: [1] },
      { label: FW2, suiteIds: [2] },
    ]);
    expect(scenarios.scenarios.map((s) => [s.scenarioId, s.suiteLabel, s.trialIds.length, tput(s).median])).toEqual([
      ['storage-only', FW1, 3, 101],
      ['storage-only', FW2, 3, 121],
    ]);
    expect(tiers.rows.map((r) => [r.suiteLabel, r.n, r.wallClockTokPerS, r.speedupWallClock])).toEqual([
      [FW1, 3, 101, 1],
      [FW2, 3, 121, 1],
    ]);

    const text = await report('--suite', '1', '--suite', '2');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(`Suites 1 (import, ${FW1}), 2 (import, ${FW2})`);
    expect(text.stdout).toContain(
      `These suites carry 2 different suite labels (“${FW1}”: suite 1; “${FW2}”: suite 2): each label's trials are aggregated apart, never pooled into one median; ` +
        `for a verdict between two labels: kvbench report --compare '${FW1}' '${FW2}' --labels.\n`,
    );
    expect(text.stdout).toContain(`— label “${FW1}”\n   trials: 3 aggregated of 3\n`);
    expect(text.stdout).toContain(`— label “${FW2}”\n   trials: 3 aggregated of 3\n`);
    const tierLines = text.stdout.slice(text.stdout.indexOf('Tier comparison')).split('\n');
    expect(tierLines[2]).toMatch(/^suite label\s+scenario\s+users/);
    expect(tierLines.filter((l) => l.startsWith(`${FW2}  `))).toHaveLength(1);

    // Suites of one label pool as before, and nothing is said of labels.
    const same = await report('--suite', '1,3', '--json');
    const pooled = (JSON.parse(same.stdout) as { scenarios: ScenarioReport }).scenarios;
    expect(pooled.scenarios.map((s) => [s.suiteLabel, s.trialIds.length, tput(s).median])).toEqual([[FW1, 5, 101]]);
    const sameText = await report('--suite', '1,3');
    expect(sameText.stdout).not.toContain('suite labels');
    expect(sameText.stdout).not.toContain('— label');
  });

  it('an unlabelled suite is a label of its own, and a row\'s speedup is never against another label\'s storage-only run', async () => {
    const dir = await firmwareDb();
    const r = await runInProcess(() => reportCommand(['--system', 'rig', '--json', '--db', dbIn(dir)]));
    expect(r.code, r.stderr).toBe(0);
    const { scenarios, tiers } = JSON.parse(r.stdout) as { scenarios: ScenarioReport; tiers: TierComparison };
    expect(scenarios.scenarios.map((s) => [s.scenarioId, s.suiteLabel, s.trialIds.length])).toEqual([
      ['storage-only', FW1, 5],
      ['storage-only', FW2, 3],
      ['storage-only', null, 1],
      ['cpu-storage', FW2, 1],
    ]);
    // FW2's cpu-storage row is against FW2's storage-only run (240 ÷ 121), not FW1's nor the unlabelled one's.
    const cpu = tiers.rows.find((x) => x.scenarioId === 'cpu-storage')!;
    expect(cpu.speedupWallClock).toBeCloseTo(240 / 121, 6);

    const only = await runInProcess(() => reportCommand(['--suite', '1,5', '--json', '--db', dbIn(dir)]));
    const t = (JSON.parse(only.stdout) as { tiers: TierComparison }).tiers;
    const orphan = t.rows.find((x) => x.scenarioId === 'cpu-storage')!;
    expect([orphan.suiteLabel, orphan.speedupWallClock]).toEqual([FW2, null]);
    expect(t.notes).toContain('1 row(s) have no storage-only run of the same configuration apart from the tier budgets (users, duration, warm-up, I/O options …) on the same suite label: no speedup');

    const text = await runInProcess(() => reportCommand(['--suite', '1,4', '--db', dbIn(dir)]));
    expect(text.stdout).toContain(
      `These suites carry 2 different suite labels (“${FW1}”: suite 1; none: suite 4): each label's trials are aggregated apart, never pooled into one median; ` +
        'kvbench report --compare A B --labels gives a verdict between two labels (a suite without one takes part in none).\n',
    );
    expect(text.stdout).toContain('— no suite label\n');
  });

  it('report --label TEXT reports every suite of a label, as history and export filter by it, and combines with --system and --all', async () => {
    const dir = await firmwareDb();
    const report = (...args: string[]) => runInProcess(() => reportCommand([...args, '--db', dbIn(dir)]));
    const groups = async (...args: string[]) => {
      const r = await report(...args, '--json');
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { title: string; scenarios: ScenarioReport };
      return { title: out.title, rows: out.scenarios.scenarios.map((s) => [s.scenarioId, s.suiteLabel, s.trialIds.length, tput(s).median]) };
    };
    // Suites 1 and 3 are FW1, of any date: pooled as one label.
    expect(await groups('--label', FW1)).toEqual({ title: `Suite label “${FW1}”: every suite (1, 3)`, rows: [['storage-only', FW1, 5, 101]] });
    expect((await groups('--label', FW1, '--system', 'rig')).rows).toEqual([['storage-only', FW1, 5, 101]]);
    expect((await groups('--label', FW2, '--all')).rows).toEqual([
      ['storage-only', FW2, 3, 121],
      ['cpu-storage', FW2, 1, 240],
    ]);
    // Repeatable, never split at commas (a label may hold one): two labels are kept apart, as a multi-label report is.
    const two = await groups('--label', FW1, '--label', FW2, '--scenario', 'storage-only');
    expect(two.title).toBe(`Suite labels “${FW1}”, “${FW2}”: every suite (1, 2, 3, 5)`);
    expect(two.rows).toEqual([
      ['storage-only', FW1, 5, 101],
      ['storage-only', FW2, 3, 121],
    ]);
    const text = await report('--label', FW1);
    expect(text.stdout.split('\n')[0]).toBe(`Suite label “${FW1}”: every suite (1, 3)`);
    // The same refusal as history's for a label no suite carries.
    expect((await report('--label', 'FW 2.1')).stderr).toBe(`kvbench report: no suite is labelled 'FW 2.1' (labels differ in case: '${FW1}') (see kvbench history --suites)\n`);
    expect((await report('--label', 'fw 2.1,fw 2.2')).stderr).toMatch(/^kvbench report: no suite is labelled 'fw 2.1,fw 2.2'/);
  });

  it('the XLSX and JSON exports carry each group\'s label, and the app\'s report of selected suites splits them as the command does', async () => {
    const dir = await firmwareDb();
    const xlsx = path.join(dir, 'fw.xlsx');
    expect((await runInProcess(() => exportCommand(['--suite', '1,2', '--out', xlsx, '--db', dbIn(dir)]))).code).toBe(0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsx);
    const sheetRows = (name: string): Record<string, unknown>[] => {
      const ws = wb.getWorksheet(name)!;
      const head = (ws.getRow(1).values as unknown[]).slice(1) as string[];
      const out: Record<string, unknown>[] = [];
      for (let i = 2; i <= ws.rowCount; i++) out.push(Object.fromEntries(head.map((h, c) => [h, ws.getRow(i).getCell(c + 1).value])));
      return out;
    };
    const tputRows = sheetRows('Scenarios').filter((x) => x.metric === 'wall_clock_throughput_tok_per_s');
    expect(tputRows.map((x) => [x.suite_label, x.n, x.median])).toEqual([
      [FW1, 3, 101],
      [FW2, 3, 121],
    ]);
    expect(sheetRows('Tier comparison').map((x) => [x.suite_label, x.n, x.wall_clock_tok_per_s])).toEqual([
      [FW1, 3, 101],
      [FW2, 3, 121],
    ]);
    expect(sheetRows('Pooled latency').filter((x) => x.latency === 'end_to_end').map((x) => x.suite_label)).toEqual([FW1, FW2]);
    expect(sheetRows('Notes').map((x) => x.message)).toContain(
      `These suites carry 2 different suite labels (“${FW1}”: suite 1; “${FW2}”: suite 2): each label's trials are aggregated apart, never pooled into one median; ` +
        `for a verdict between two labels: kvbench report --compare '${FW1}' '${FW2}' --labels.`,
    );

    const jsonFile = path.join(dir, 'fw.json');
    expect((await runInProcess(() => exportCommand(['--suite', '1,2', '--out', jsonFile, '--db', dbIn(dir)]))).code).toBe(0);
    const exported = JSON.parse(fs.readFileSync(jsonFile, 'utf8')) as { report: { scenarios: ScenarioReport; tiers: TierComparison } };
    expect(exported.report.scenarios.scenarios.map((s) => s.suiteLabel)).toEqual([FW1, FW2]);
    expect(exported.report.tiers.rows.map((r) => r.suiteLabel)).toEqual([FW1, FW2]);

    const db = dbIn(dir);
    const app = await createBackend({ mode: 'browser', settingsFile: path.join(dir, 'settings.json'), databasePath: db, defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      const r = await app.invoke('report.build', { selection: { suiteIds: [1, 2] } });
      if (!r.ok) throw new Error(r.error.message);
      const built = r.value as { report: ScenarioReport; tiers: TierComparison };
      const cli = JSON.parse((await runInProcess(() => reportCommand(['--suite', '1,2', '--json', '--db', db]))).stdout) as { scenarios: ScenarioReport; tiers: TierComparison };
      expect(built.report).toEqual(cli.scenarios);
      expect(built.tiers).toEqual(cli.tiers);
      expect(built.report.suiteLabels.map((g) => g.label)).toEqual([FW1, FW2]);
    } finally {
      await app.close();
    }
  });

  it('--compare A B of two drives says where a side pools suites of several labels, in text, --json and the app, and what compares the labels', async () => {
    // nvme0: FW1 (suites 1, 3) and FW2 (suite 2); nvme1: FW1 (suite 4) and an unlabelled suite (5); nvme2: FW2 only (suite 6).
    const { dir, db } = await importedDb([
      ['nvme0', [{ tokPerS: 100 }, { tokPerS: 102 }], 'storage-only', FW1],
      ['nvme0', [{ tokPerS: 120 }, { tokPerS: 122 }], 'storage-only', FW2],
      ['nvme0', [{ tokPerS: 101 }], 'storage-only', FW1],
      ['nvme1', [{ tokPerS: 90 }, { tokPerS: 92 }], 'storage-only', FW1],
      ['nvme1', [{ tokPerS: 60 }]],
      ['nvme2', [{ tokPerS: 80 }, { tokPerS: 82 }], 'storage-only', FW2],
    ]);
    const compare = (...args: string[]) => runInProcess(() => reportCommand(['--compare', ...args, '--drives', '--db', db]));
    const noteA = `A (nvme0): its matched trials come from suites of 2 suite labels (“${FW1}”: suites 1, 3; “${FW2}”: suite 2), counted together as one side; for a verdict between two labels: kvbench report --compare '${FW1}' '${FW2}' --labels`;
    const noteB = `B (nvme1): its matched trials come from suites of 2 suite labels (“${FW1}”: suite 4; none: suite 5), counted together as one side; kvbench report --compare A B --labels gives a verdict between two labels (a suite without one takes part in none)`;
    const json = await compare('nvme0', 'nvme1', '--json');
    expect(json.code, json.stderr).toBe(0);
    const c = JSON.parse(json.stdout) as SystemComparison;
    // What --compare means is unchanged: each side is still one pool of its drive's trials.
    expect(c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.configs.map((x) => [x.nA, x.nB])).toEqual([[5, 3]]);
    expect(c.suiteLabels.a).toEqual([
      { label: FW1, suiteIds: [1, 3] },
      { label: FW2, suiteIds: [2] },
    ]);
    expect(c.suiteLabels.b).toEqual([
      { label: FW1, suiteIds: [4] },
      { label: null, suiteIds: [5] },
    ]);
    expect(c.notes).toContain(noteA);
    expect(c.notes).toContain(noteB);
    const text = await compare('nvme0', 'nvme1');
    expect(text.stdout).toContain(`note: ${noteA}\n`);
    expect(text.stdout).toContain(`note: ${noteB}\n`);

    // A side of one label says nothing of labels.
    const one = JSON.parse((await compare('nvme2', 'nvme1', '--json')).stdout) as SystemComparison;
    expect(one.notes.filter((n) => n.startsWith('A (nvme2)'))).toEqual([]);
    expect(one.suiteLabels.a).toEqual([{ label: FW2, suiteIds: [6] }]);

    // The app's compare view shows the same notes, naming its Suite labels tab instead of the command.
    const app = await createBackend({ mode: 'browser', settingsFile: path.join(dir, 'settings.json'), databasePath: db, defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      const r = await app.invoke('report.compare', { kind: 'drive', a: 'nvme0', b: 'nvme1' });
      if (!r.ok) throw new Error(r.error.message);
      const notes = (r.value as SystemComparison).notes;
      expect(notes).toEqual(c.notes);
      expect(inAppWords(noteA)).toBe(
        `A (nvme0): its matched trials come from suites of 2 suite labels (“${FW1}”: suites 1, 3; “${FW2}”: suite 2), counted together as one side; for a verdict between two labels: the Suite labels tab, A “${FW1}” and B “${FW2}”`,
      );
      expect(inAppWords(noteB)).toBe(
        `B (nvme1): its matched trials come from suites of 2 suite labels (“${FW1}”: suite 4; none: suite 5), counted together as one side; the Suite labels tab gives a verdict between two labels (a suite without one takes part in none)`,
      );
    } finally {
      await app.close();
    }
  });

  it('--compare A B --label TEXT narrows both drives to the suites of that label, says so in text, --json and the app, and names a side with none of its trials', async () => {
    // nvme0: FW1 (suite 1), FW2 (suite 2); nvme1: FW1 (suite 3), FW2 (suite 4); nvme2: FW2 only (suite 5).
    const { dir, db } = await importedDb([
      ['nvme0', [{ tokPerS: 100 }, { tokPerS: 102 }], 'storage-only', FW1],
      ['nvme0', [{ tokPerS: 120 }, { tokPerS: 122 }, { tokPerS: 121 }], 'storage-only', FW2],
      ['nvme1', [{ tokPerS: 90 }, { tokPerS: 92 }], 'storage-only', FW1],
      ['nvme1', [{ tokPerS: 60 }, { tokPerS: 62 }], 'storage-only', FW2],
      ['nvme2', [{ tokPerS: 80 }, { tokPerS: 82 }], 'storage-only', FW2],
    ]);
    const compare = (...args: string[]) => runInProcess(() => reportCommand(['--compare', ...args, '--drives', '--db', db]));
    const tputOf = (c: SystemComparison) => c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.configs.map((x) => [x.nA, x.nB, x.medianA, x.medianB]);

    const json = await compare('nvme0', 'nvme1', '--label', FW1, '--json');
    expect(json.code, json.stderr).toBe(0);
    const c = JSON.parse(json.stdout) as SystemComparison;
    expect(c.suiteLabel).toBe(FW1);
    // Only FW1's trials: without --label, each side would pool both labels (n 5 vs 4).
    expect(tputOf(c)).toEqual([[2, 2, 101, 91]]);
    expect([c.a.suiteIds, c.b.suiteIds]).toEqual([[1], [3]]);
    expect(c.suiteLabels).toEqual({ a: [{ label: FW1, suiteIds: [1] }], b: [{ label: FW1, suiteIds: [3] }] });
    expect(c.notes.filter((n) => n.includes('suite label'))).toEqual([]);
    const other = JSON.parse((await compare('nvme0', 'nvme1', '--label', FW2, '--json')).stdout) as SystemComparison;
    expect(tputOf(other)).toEqual([[3, 2, 121, 61]]);

    const text = await compare('nvme0', 'nvme1', '--label', FW1);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n')[0]).toBe(`Drive comparison under suite label “${FW1}”: A = nvme0 (${c.a.id}; suite 1), B = nvme1 (${c.b.id}; suite 3)`);

    // A side with no trial under the label: said, naming the label, and nothing is compared.
    const none = await compare('nvme0', 'nvme2', '--label', FW1, '--json');
    expect(none.code, none.stderr).toBe(0);
    const n = JSON.parse(none.stdout) as SystemComparison;
    expect(n.matched).toBe(0);
    expect(n.b.trials).toBe(0);
    const noneNote = `B (nvme2): none of its trials is in a suite labelled “${FW1}”, so under that label it has nothing to compare`;
    expect(n.notes).toEqual([noneNote, 'no configuration has complete trials on both sides']);
    expect((await compare('nvme0', 'nvme2', '--label', FW1)).stdout).toContain(`note: ${noneNote}\n`);

    // A label no suite carries is refused as history's and report --label's are.
    const unknown = await compare('nvme0', 'nvme1', '--label', 'FW 2.1');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(`kvbench report: no suite is labelled 'FW 2.1' (labels differ in case: '${FW1}') (see kvbench history --suites)\n`);

    // The app's Compare takes the label too, and answers as the command does.
    const app = await createBackend({ mode: 'browser', settingsFile: path.join(dir, 'settings.json'), databasePath: db, defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      const r = await app.invoke('report.compare', { kind: 'drive', a: 'nvme0', b: 'nvme1', suiteLabel: FW1 });
      if (!r.ok) throw new Error(r.error.message);
      const { unreadable: _, ...fromApp } = r.value as SystemComparison & { unreadable: unknown };
      expect(fromApp).toEqual(c);
      const refused = await app.invoke('report.compare', { kind: 'label', a: FW1, b: FW2, suiteLabel: FW1 });
      expect(refused.ok ? null : refused.error.code).toBe('VALIDATION');
      const unknownInApp = await app.invoke('report.compare', { kind: 'drive', a: 'nvme0', b: 'nvme1', suiteLabel: 'nope' });
      expect(unknownInApp.ok ? null : unknownInApp.error.message).toBe("no suite is labelled 'nope' (see kvbench history --suites)");
    } finally {
      await app.close();
    }
  });
});
