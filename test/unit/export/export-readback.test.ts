import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { buildScenarioReport, buildTierComparison } from '../../../src-main/export/report-model.ts';
import { trialColumns, type ExportModel } from '../../../src-main/export/export-trials.ts';
import { writeExport } from '../../support/write-export.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { extractHistograms, extractMetrics } from '../../../src-main/store/results-ingest.ts';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { RUN_OPTION_KEYS } from '../../../src-shared/domain/run-options.ts';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { METRICS } from '../../../src-shared/domain/store-types.ts';
import { fakeHardware, kvbenchResults, referenceResultsNew, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { addSuiteTrials } from '../store/seed-store.ts';
import { parseCsv } from '../../support/csv.ts';

/** A sheet's rows as objects keyed by its header row. */
function sheetRows(wb: ExcelJS.Workbook, name: string): Record<string, unknown>[] {
  const ws = wb.getWorksheet(name)!;
  const head = (ws.getRow(1).values as unknown[]).slice(1) as string[];
  return ws.getRows(2, ws.rowCount - 1)?.map((r) => Object.fromEntries(head.map((h, i) => [h, r.getCell(i + 1).value]))) ?? [];
}

let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
  removeTempDirs();
});

/** A three-trial storage-only suite on `hw` (the third failed, with a reason full of commas, quotes and a newline); returns its id. */
function addSuite(s: Store, hw: HardwareProfile, tokPerS: number): number {
  return addSuiteTrials(s, hw, 3, (i, options) =>
    i === 2
      ? { failed: 'ENGINE_CRASHED: engine process "x" was killed, by SIGKILL\nlast output' }
      : { results: kvbenchResults({ tokPerS: tokPerS + i, durationS: Number(options.duration) }) as unknown as Record<string, unknown> },
  );
}

/** A store with one three-trial suite. */
function model(dir: string): ExportModel {
  store = openStore(path.join(dir, 'kvbench.db'));
  const hw = fakeHardware({ probe: true });
  const suiteId = addSuite(store, hw, 1000);
  const trials = store.listTrials({ order: 'asc' });
  const report = buildScenarioReport(trials, { histogramsOf: (id) => store!.trialHistograms(id) });
  return { trials, hardware: new Map(trials.map((t) => [t.id, store!.trialHardware(t.id)])), report, tiers: buildTierComparison(report, hw), filter: { suiteIds: [suiteId] } };
}

describe('exports read back', () => {
  it('CSV: one row per trial with the full configuration, status, reason and metrics', async () => {
    const dir = tempDir();
    const m = model(dir);
    const file = path.join(dir, 'trials.csv');
    await writeExport(m, 'csv', file);
    const text = fs.readFileSync(file, 'utf8');
    expect(text.startsWith('\uFEFF')).toBe(true); // UTF-8 for Windows Excel
    const rows = parseCsv(text.slice(1));
    const [header, ...body] = rows;
    expect(header).toEqual(trialColumns());
    for (const k of RUN_OPTION_KEYS) expect(header).toContain(`config.${k}`);
    for (const mt of METRICS) expect(header).toContain(mt.key);
    expect(body).toHaveLength(3);
    const col = (name: string) => header.indexOf(name);
    expect(body.map((r) => r[col('status')])).toEqual(['complete', 'complete', 'failed']);
    expect(body[2][col('status_reason')]).toBe('ENGINE_CRASHED: engine process "x" was killed, by SIGKILL\nlast output');
    expect(body[0][col('config.model')]).toBe('tiny-1b');
    expect(Number(body[0][col('config.numUsers')])).toBe(4);
    expect(body[0][col('config.disableMultiTurn')]).toBe('false');
    expect(JSON.parse(body[0][col('config.tuning')])).toEqual({});
    expect(Number(body[1][col('wall_clock_throughput_tok_per_s')])).toBe(1001);
    expect(body[2][col('wall_clock_throughput_tok_per_s')]).toBe('');
    expect(Number(body[0][col('hw.probe_read_bytes_per_s')])).toBe(2e9);
    expect(body[0][col('hw.probe_page_cache_suspected')]).toBe('false');
  });

  it('CSV and XLSX: which kvbench measured each trial, beside the one that stored it', async () => {
    // review rev13 #6: an import of 0.2.0's results read kvbench_version 0.7.0 (the importer) and nothing said 0.2.0.
    const dir = tempDir();
    const m = model(dir);
    const old = kvbenchResults({ tokPerS: 500 });
    old.kvbench.version = '0.2.0';
    const files = [writeResults(dir, 'old.json', old), writeResults(dir, 'reference.json', referenceResultsNew({ tokPerS: 50, storageTokPerS: 25 }))];
    const r = await importResultsFiles(store!, files, { systemLabel: 'lab', scenarioId: 'storage-only' });
    expect(r.errors).toEqual([]);
    const trials = store!.listTrials({ order: 'asc' });
    const report = buildScenarioReport(trials);
    const all: ExportModel = { ...m, trials, report, tiers: buildTierComparison(report, null), hardware: new Map() };
    const expected = (t: (typeof trials)[number]): [string, string] => {
      const file = t.sourceFile === null ? 'suite' : path.basename(t.sourceFile);
      return [file, { suite: KVBENCH_VERSION, 'old.json': '0.2.0', 'reference.json': '' }[file]!];
    };
    const csvFile = path.join(dir, 'versions.csv');
    await writeExport(all, 'csv', csvFile);
    const [header, ...body] = parseCsv(fs.readFileSync(csvFile, 'utf8').replace(/^\uFEFF/, ''));
    expect(header.indexOf('measured_by_version')).toBe(header.indexOf('kvbench_version') + 1);
    expect(body.map((row) => row[header.indexOf('kvbench_version')])).toEqual(trials.map(() => KVBENCH_VERSION));
    expect(body.map((row, i) => [expected(trials[i])[0], row[header.indexOf('measured_by_version')]])).toEqual(trials.map(expected));
    const xlsxFile = path.join(dir, 'versions.xlsx');
    await writeExport(all, 'xlsx', xlsxFile);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsxFile);
    const rows = sheetRows(wb, 'Trials');
    expect(rows.map((row, i) => [expected(trials[i])[0], row.measured_by_version ?? ''])).toEqual(trials.map(expected));
  });

  it('CSV: text a spreadsheet would run as a formula stays text; numbers and the label\'s … are untouched', async () => {
    const dir = tempDir();
    const m = model(dir);
    // Labels and reasons come from users and imported files.
    m.trials[0] = { ...m.trials[0], systemLabel: '=HYPERLINK("http://evil","x")', driveLabel: 'Samsung 990 PRO … nvme0n1' };
    m.trials[1] = { ...m.trials[1], systemLabel: '@SUM(A1)', statusReason: '-1+2' };
    m.trials[2] = { ...m.trials[2], systemLabel: '+cmd', statusReason: '\tTAB', driveLabel: '\rCR' };
    const file = path.join(dir, 'inject.csv');
    await writeExport(m, 'csv', file);
    const bytes = fs.readFileSync(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const [header, ...body] = parseCsv(bytes.toString('utf8').slice(1));
    const col = (name: string) => header.indexOf(name);
    expect(body.map((r) => r[col('system_label')])).toEqual([`'=HYPERLINK("http://evil","x")`, "'@SUM(A1)", "'+cmd"]);
    expect(body[1][col('status_reason')]).toBe("'-1+2");
    expect(body[2][col('status_reason')]).toBe("'\tTAB");
    expect(body[2][col('drive_label')]).toBe("'\rCR");
    expect(body[0][col('drive_label')]).toBe('Samsung 990 PRO … nvme0n1');
    expect(body.every((r) => /^\d+$/.test(r[col('trial_id')]))).toBe(true);
  });

  it('CSV and XLSX: a stored label\'s bidirectional and control characters written escaped, \\u{202e}, as the app shows them', async () => {
    // s12 left alone: a label stored before labels were checked ("abc\u202Efdp.exe") went into the cells
    // as it is, and Excel or LibreOffice applied the override (the cell read "abcexe.pdf").
    const dir = tempDir();
    const m = model(dir);
    const trials = m.trials.map((t) => ({ ...t, suiteLabel: 'abc\u202Efdp.exe', systemLabel: 'lab\u2067\u05d0\u05d1\u2069 \u200e1', driveLabel: 'd\u001b[2Jx\u009b' }));
    trials[2] = { ...trials[2], statusReason: 'ENGINE_CRASHED: \u202Ekcab\nline two\tend' };
    const report = buildScenarioReport(trials, { histogramsOf: (id) => store!.trialHistograms(id) });
    const all: ExportModel = { ...m, trials, report, tiers: buildTierComparison(report, null) };
    const SUITE = 'abc\\u{202e}fdp.exe';
    const SYSTEM = 'lab\\u{2067}\u05d0\u05d1\\u{2069} \u200e1'; // a mark (U+200E) reorders no run: kept, as labels keep it
    const DRIVE = 'd\\u{1b}[2Jx\\u{9b}';
    const REASON = 'ENGINE_CRASHED: \\u{202e}kcab\nline two\tend'; // a cell keeps its lines and tabs
    const BIDI = /[\u202a-\u202e\u2066-\u2069\u001b\u009b]/;

    const csvFile = path.join(dir, 'bidi.csv');
    await writeExport(all, 'csv', csvFile);
    const csv = fs.readFileSync(csvFile, 'utf8');
    expect(csv).not.toMatch(BIDI);
    const [header, ...body] = parseCsv(csv.slice(1));
    const col = (name: string) => header.indexOf(name);
    expect(body.map((r) => [r[col('suite_label')], r[col('system_label')], r[col('drive_label')]])).toEqual(trials.map(() => [SUITE, SYSTEM, DRIVE]));
    expect(body[2][col('status_reason')]).toBe(REASON);

    const xlsxFile = path.join(dir, 'bidi.xlsx');
    await writeExport(all, 'xlsx', xlsxFile);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsxFile);
    const texts: string[] = [];
    wb.eachSheet((ws) => ws.eachRow((row) => row.eachCell((c) => texts.push(String(c.value)))));
    expect(texts.filter((t) => BIDI.test(t))).toEqual([]);
    const rows = sheetRows(wb, 'Trials');
    expect(rows.map((r) => [r.suite_label, r.system_label, r.drive_label])).toEqual(trials.map(() => [SUITE, SYSTEM, DRIVE]));
    expect(rows[2].status_reason).toBe(REASON);
    expect(sheetRows(wb, 'Scenarios').every((r) => r.suite_label === SUITE && r.system_label === SYSTEM)).toBe(true);

    // The JSON export keeps the exact text: JSON's own escapes, which a reader reads back as stored.
    const jsonFile = path.join(dir, 'bidi.json');
    await writeExport(all, 'json', jsonFile);
    const json = fs.readFileSync(jsonFile, 'utf8');
    expect(json).not.toMatch(BIDI);
    expect((JSON.parse(json) as { trials: { suiteLabel: string }[] }).trials[0].suiteLabel).toBe('abc\u202Efdp.exe');
  });

  it('XLSX: Trials, Scenarios, Tier comparison and About sheets, opened with exceljs', async () => {
    const dir = tempDir();
    const m = model(dir);
    const file = path.join(dir, 'trials.xlsx');
    await writeExport(m, 'xlsx', file);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Trials', 'Scenarios', 'Pooled latency', 'Tier comparison', 'Notes', 'About']);
    const trials = wb.getWorksheet('Trials')!;
    const header = (trials.getRow(1).values as unknown[]).slice(1);
    expect(header).toEqual(trialColumns());
    expect(trials.rowCount).toBe(4);
    const cell = (row: number, name: string) => trials.getRow(row).getCell(header.indexOf(name) + 1).value;
    expect(cell(2, 'config.model')).toBe('tiny-1b');
    expect(cell(2, 'config.numUsers')).toBe(4);
    expect(cell(2, 'config.enableAutoscaling')).toBe(false);
    expect(cell(3, 'wall_clock_throughput_tok_per_s')).toBe(1001);
    expect(cell(4, 'status')).toBe('failed');
    expect(cell(4, 'wall_clock_throughput_tok_per_s')).toBeNull();
    const scen = wb.getWorksheet('Scenarios')!;
    const sh = (scen.getRow(1).values as unknown[]).slice(1);
    const tputRow = scen.getRows(2, scen.rowCount - 1)!.find((r) => r.getCell(sh.indexOf('metric') + 1).value === 'wall_clock_throughput_tok_per_s')!;
    expect(tputRow.getCell(sh.indexOf('n') + 1).value).toBe(2);
    expect(tputRow.getCell(sh.indexOf('median') + 1).value).toBe(1000.5);
    expect(tputRow.getCell(sh.indexOf('excluded') + 1).value).toBe(1);
    const tiers = wb.getWorksheet('Tier comparison')!;
    const th = (tiers.getRow(1).values as unknown[]).slice(1);
    expect(tiers.getRow(2).getCell(th.indexOf('scenario_id') + 1).value).toBe('storage-only');
    expect(tiers.getRow(2).getCell(th.indexOf('speedup_wall_clock') + 1).value).toBe(1); // speedup against itself
  });

  it('XLSX Notes: an attempt a resume retried is superseded by its retry, not excluded', async () => {
    const dir = tempDir();
    const m = model(dir);
    const failed = m.trials[2];
    // The resume's retry of the failed trial's slot: attempt 2, complete.
    const retry = store!.startTrial({ runId: failed.runId, suiteId: failed.suiteId, systemId: failed.systemId, driveId: failed.driveId, hardwareSnapshotId: null, scenarioId: failed.scenarioId, trialIndex: failed.trialIndex, options: failed.options, configKey: failed.configKey, runner: currentProcess(), cacheDir: '/mnt/kv' });
    const r = kvbenchResults({ tokPerS: 1002, durationS: Number(failed.options.duration) }) as unknown as Record<string, unknown>;
    store!.finishTrial(retry, { status: 'complete', reason: null, wallMs: 4000, results: r, metrics: extractMetrics(r), histograms: extractHistograms(r) });
    const trials = store!.listTrials({ order: 'asc' });
    const report = buildScenarioReport(trials);
    expect(report.scenarios[0].trialIds).toHaveLength(3);
    const file = path.join(dir, 'retried.xlsx');
    await writeExport({ ...m, trials, report, tiers: buildTierComparison(report, null) }, 'xlsx', file);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const notes = sheetRows(wb, 'Notes').filter((n) => n.section === 'scenarios');
    expect(notes.map((n) => [n.trial_id, n.trial_number, n.kind])).toEqual([[failed.id, 3, `superseded (failed; retried: attempt 2 complete, trial id ${retry})`]]);
  });

  it('XLSX and CSV carry what the terminal report prints besides its tables: flagged and excluded trials, the pooled latencies, the tier notes', async () => {
    // review #8: the report said FLAGGED and printed pooled latencies; the XLSX had neither, and its About claimed the pooled method.
    const dir = tempDir();
    const m = model(dir);
    const flagged = m.trials[1];
    // As the engine would have stored it: the coverage and its own verdict on it.
    store!.db.prepare("INSERT OR REPLACE INTO trial_metrics (trial_id, key, value) VALUES (?, 'device_read_coverage', 0.4)").run(flagged.id);
    store!.db.prepare("INSERT OR REPLACE INTO trial_metrics (trial_id, key, value) VALUES (?, 'page_cache_flagged', 1)").run(flagged.id);
    const trials = store!.listTrials({ order: 'asc' });
    const report = buildScenarioReport(trials, { histogramsOf: (id) => store!.trialHistograms(id) });
    const flaggedModel: ExportModel = { ...m, trials, report, tiers: buildTierComparison(report, null) };
    expect(report.scenarios[0].cautions).toHaveLength(1);
    const file = path.join(dir, 'flagged.xlsx');
    await writeExport(flaggedModel, 'xlsx', file);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const rowsOf = (name: string): Record<string, unknown>[] => sheetRows(wb, name);
    const notes = rowsOf('Notes');
    expect(notes.map((n) => [n.section, n.trial_number, n.kind])).toEqual([
      ['scenarios', 3, 'excluded (failed)'],
      ['scenarios', 2, 'flagged'],
      ['tier comparison', null, 'note'],
      ['tier comparison', null, 'note'],
    ]);
    expect(notes[1].message).toMatch(/^the device read 40\.0 % of the bytes the storage tier reported reading, /);
    expect(notes[2].message).toBe('1 row(s): the page cache served storage reads (storage-only: 1 of 2 trial(s)): their read numbers describe RAM, not the drive, so no read efficiency there');
    expect(notes[3].message).toMatch(/^no bandwidth probe of the drive/);
    // The CLI's file (kvbench export) in the CLI's words; the app's names its controls (test/unit/server/export-app-words.test.ts).
    expect(notes[3].message).toContain('kvbench hw --probe');
    expect(rowsOf('Scenarios').every((r) => r.flagged === 1)).toBe(true);
    const pooled = rowsOf('Pooled latency');
    expect(pooled.map((p) => p.latency)).toEqual(report.scenarios[0].pooled.map((p) => p.name));
    expect(pooled[0]).toMatchObject({ scenario_id: 'storage-only', trials: 2, p95_ms: report.scenarios[0].pooled[0].p95Ms });
    const about = Object.fromEntries(rowsOf('About').map((r) => [r.item, r.value]));
    expect(about['pooled latency']).toMatch(/^Pooled latency: pooled latency percentiles from merged HDR histograms/);
    expect(about.notes).toMatch(/^Notes: 4 /);
    const trialRows = rowsOf('Trials');
    expect(trialRows.map((r) => r.caution)).toEqual([null, notes[1].message, null]);
    // The CSV: the same caution column.
    const csvFile = path.join(dir, 'flagged.csv');
    await writeExport(flaggedModel, 'csv', csvFile);
    const csv = parseCsv(fs.readFileSync(csvFile, 'utf8').replace(/^\uFEFF/, ''));
    const ci = csv[0].indexOf('caution');
    expect(csv.slice(1).map((r) => r[ci])).toEqual(['', notes[1].message, '']);

    // Without histograms (the reference's files), About says there is no pooled latency rather than claim a method.
    const noHist = buildScenarioReport(trials);
    const plain = path.join(dir, 'plain.xlsx');
    await writeExport({ ...flaggedModel, report: noHist, tiers: buildTierComparison(noHist, null) }, 'xlsx', plain);
    const wb2 = new ExcelJS.Workbook();
    await wb2.xlsx.readFile(plain);
    const about2 = Object.fromEntries(sheetRows(wb2, 'About').map((r) => [r.item, r.value]));
    expect(about2['pooled latency']).toMatch(/^none: no aggregated trial of this export stored latency histograms/);
    expect(wb2.getWorksheet('Pooled latency')!.rowCount).toBe(1);
  });

  it('XLSX: text longer than a cell holds (32,767 characters) is cut, saying where the whole is; CSV keeps it', async () => {
    const dir = tempDir();
    const m = model(dir);
    const long = `ENGINE_CRASHED: ${'x'.repeat(40_000)}`;
    m.trials[2] = { ...m.trials[2], statusReason: long };
    await writeExport(m, 'xlsx', path.join(dir, 'long.xlsx'));
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(dir, 'long.xlsx'));
    const ws = wb.getWorksheet('Trials')!;
    const header = (ws.getRow(1).values as unknown[]).slice(1);
    const cell = String(ws.getRow(4).getCell(header.indexOf('status_reason') + 1).value);
    expect(cell.length).toBeLessThanOrEqual(32_767);
    expect(cell.startsWith('ENGINE_CRASHED: xxx')).toBe(true);
    expect(cell).toMatch(/…\(truncated; the CSV and JSON exports have it whole\)$/);
    await writeExport(m, 'csv', path.join(dir, 'long.csv'));
    expect(fs.readFileSync(path.join(dir, 'long.csv'), 'utf8')).toContain(long);
  });

  it('XLSX and JSON over two systems: one aggregate per system and drive, each row labelled with both', async () => {
    const dir = tempDir();
    model(dir);
    const other = fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab2', probe: true });
    addSuite(store!, other, 5000);
    const trials = store!.listTrials({ order: 'asc' });
    const report = buildScenarioReport(trials);
    const m: ExportModel = { trials, hardware: new Map(trials.map((t) => [t.id, store!.trialHardware(t.id)])), report, tiers: buildTierComparison(report, null), filter: {} };
    const file = path.join(dir, 'two.xlsx');
    await writeExport(m, 'xlsx', file);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const rowsOf = (name: string): Record<string, unknown>[] => sheetRows(wb, name);
    const tput = rowsOf('Scenarios').filter((r) => r.metric === 'wall_clock_throughput_tok_per_s');
    expect(tput.map((r) => [r.system_label, r.drive_label, r.n, r.median])).toEqual([
      ['lab1', 'virtual disk vda (256 GiB)', 2, 1000.5],
      ['lab2', 'virtual disk vda (256 GiB)', 2, 5000.5],
    ]);
    expect(new Set(tput.map((r) => r.drive_id)).size).toBe(2);
    const tiers = rowsOf('Tier comparison');
    expect(tiers.map((r) => [r.system_label, r.drive_label, r.wall_clock_tok_per_s])).toEqual([
      ['lab1', 'virtual disk vda (256 GiB)', 1000.5],
      ['lab2', 'virtual disk vda (256 GiB)', 5000.5],
    ]);
    await writeExport(m, 'json', path.join(dir, 'two.json'));
    const j = JSON.parse(fs.readFileSync(path.join(dir, 'two.json'), 'utf8'));
    expect(j.report.scenarios.scenarios.map((s: { systemLabel: string }) => s.systemLabel)).toEqual(['lab1', 'lab2']);
    expect(j.report.tiers.rows.map((r: { systemLabel: string; driveLabel: string }) => `${r.systemLabel}/${r.driveLabel}`)).toEqual(['lab1/virtual disk vda (256 GiB)', 'lab2/virtual disk vda (256 GiB)']);
  });

  it('kvbench export and kvbench report: each system\'s rows against the probe stored with its own trials, not the newest trial\'s', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    store = openStore(db);
    const a = fakeHardware({ hostname: 'lab1', probe: true }); // drive 2 GB/s, memory copy 10 GB/s
    const b = fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab2', probe: true });
    b.cacheDir!.bandwidth = { ...b.cacheDir!.bandwidth!, readBytesPerSec: 4e9, writeBytesPerSec: 3e9 };
    b.memoryCopyBytesPerSec = 20e9;
    addSuite(store, a, 1000);
    addSuite(store, b, 2000); // the newest trials: their probe must not describe lab1's rows
    store.close();
    store = null;
    const out = path.join(dir, 'x.json');
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let printed = '';
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((printed += String(chunk)), true));
    try {
      expect(await exportCommand(['--db', db, '--out', out])).toBe(0);
      expect(await reportCommand(['--db', db, '--all', '--json'])).toBe(0);
    } finally {
      err.mockRestore();
      stdout.mockRestore();
    }
    type Row = { systemLabel: string; storageReadBytesPerS: number; storageReadEfficiency: number };
    const probeOf: Record<string, number> = { lab1: 2e9, lab2: 4e9 };
    const effs = (rows: Row[]) => rows.map((r) => [r.systemLabel, r.storageReadEfficiency]);
    const expected = (rows: Row[]) => rows.map((r) => [r.systemLabel, r.storageReadBytesPerS / probeOf[r.systemLabel]]);
    const exported = JSON.parse(fs.readFileSync(out, 'utf8')).report.tiers as { rows: Row[]; probe: { readBytesPerS: number | null; source: string } };
    expect(exported.rows.map((r) => r.systemLabel)).toEqual(['lab1', 'lab2']);
    expect(effs(exported.rows)).toEqual(expected(exported.rows));
    expect(exported.probe).toMatchObject({ readBytesPerS: null, source: expect.stringMatching(/^several/) });
    const reported = JSON.parse(printed).tiers as { rows: Row[] };
    expect(reported.rows.map((r) => r.systemLabel)).toEqual(['lab1', 'lab2']);
    expect(effs(reported.rows)).toEqual(expected(reported.rows));
    // review #9: neither JSON averages percentiles: a per-trial P95 has a median, a P95 and a CV, no mean.
    type Metrics = { metric: { key: string }; aggregate: Record<string, unknown> }[];
    for (const metrics of [
      (JSON.parse(fs.readFileSync(out, 'utf8')).report.scenarios.scenarios[0] as { metrics: Metrics }).metrics,
      (JSON.parse(printed).scenarios.scenarios[0] as { metrics: Metrics }).metrics,
    ]) {
      const byKey = Object.fromEntries(metrics.map((x) => [x.metric.key, x.aggregate]));
      expect(byKey.e2e_p95_ms).toMatchObject({ n: 2, median: expect.any(Number), cv: expect.any(Number) });
      expect(metrics.filter((x) => /_p\d+/.test(x.metric.key) && 'mean' in x.aggregate).map((x) => x.metric.key)).toEqual([]);
      expect(byKey.wall_clock_throughput_tok_per_s.mean).toBe(1000.5);
    }
  });

  it('JSON: every trial with its options, metrics and hardware snapshot, and the report', async () => {
    const dir = tempDir();
    const m = model(dir);
    const file = path.join(dir, 'trials.json');
    await writeExport(m, 'json', file);
    const j = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(j).toMatchObject({ format: 'kvbench-export', version: 1 });
    expect(j.trials).toHaveLength(3);
    expect(j.trials[0].options).toEqual(m.trials[0].options);
    expect(j.trials[0].metrics.wall_clock_throughput_tok_per_s).toBe(1000);
    expect(j.trials[0].hardware.system.id).toBe('sys-0123456789abcdef');
    expect(j.report.scenarios.scenarios[0].trialIds).toHaveLength(2);
    expect(j.report.tiers.rows[0].scenarioId).toBe('storage-only');
  });

  it('a failed export leaves an existing file untouched', async () => {
    const dir = tempDir();
    const m = model(dir);
    const file = path.join(dir, 'keep.csv');
    fs.writeFileSync(file, 'old');
    const bad = { ...m, trials: [{ ...m.trials[0], get options(): Record<string, unknown> { throw new Error('boom'); } }] } as ExportModel;
    await expect(writeExport(bad, 'csv', file)).rejects.toThrow('boom');
    expect(fs.readFileSync(file, 'utf8')).toBe('old');
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
