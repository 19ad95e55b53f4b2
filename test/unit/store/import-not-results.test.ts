// kvbench's own documents that are no results file (its exports, its endpoint runs' files), given
// to `kvbench import`: said for what they are, with what to do instead (review rev13 #9: "requests_completed
// is missing" for a JSON export, "not JSON: Unexpected token" for a CSV one).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ExportModel } from '../../../src-main/export/export-trials.ts';
import { writeExport } from '../../support/write-export.ts';
import { buildScenarioReport, buildTierComparison } from '../../../src-main/export/report-model.ts';
import { csvTable } from '../../../src-main/export/csv.ts';
import { runColumns } from '../../../src-main/endpoint/endpoint-export.ts';
import { RESULTS_FILE_FORMAT } from '../../../src-main/endpoint/results-file.ts';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from './fixtures.ts';

afterEach(removeTempDirs);

describe('import of kvbench documents that are no results file', () => {
  it("names kvbench's exports (JSON, trials and report CSV, XLSX) and endpoint files, and says what to import or open instead", async () => {
    const dir = tempDir();
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const results = kvbenchResults({ tokPerS: 100 });
      const first = await importResultsFiles(store, [writeResults(dir, 'run.json', results)], { systemLabel: 'lab', scenarioId: 'storage-only' });
      expect(first.errors).toEqual([]);
      // Real exports of that database, as kvbench export writes them.
      const trials = store.listTrials({});
      const report = buildScenarioReport(trials);
      const model: ExportModel = { trials, hardware: new Map(), report, tiers: buildTierComparison(report, null), filter: {} };
      const file = (name: string) => path.join(dir, name);
      await writeExport(model, 'json', file('exp.json'));
      await writeExport(model, 'csv', file('exp.csv'));
      await writeExport(model, 'csv', file('report.csv'), 'report');
      await writeExport(model, 'xlsx', file('exp.xlsx'));
      // kvbench 0.2.0's trials CSV: no byte order mark, and system_id where suite_label is now.
      fs.writeFileSync(file('old.csv'), 'trial_id,suite_id,system_id,system_label\n1,1,vm,vm\n');
      fs.writeFileSync(file('endpoint.csv'), csvTable(runColumns(), []));
      writeResults(dir, 'endpoint-results.json', { format: RESULTS_FILE_FORMAT, version: 1, runs: {} });
      writeResults(dir, 'endpoint-export.json', { format: 'kvbench-endpoint-export', version: 1, kvbenchVersion: '0.7.0', runs: [] });
      const names = ['exp.json', 'exp.csv', 'report.csv', 'exp.xlsx', 'old.csv', 'endpoint.csv', 'endpoint-results.json', 'endpoint-export.json'];
      const r = await importResultsFiles(store, names.map(file), { systemLabel: 'lab' });
      expect(r.imported).toEqual([]);
      const message = new Map(r.errors.map((e) => [path.basename(e.file), e.message]));
      const exportAdvice =
        "an export holds stored trials' numbers, not the raw results a trial is stored from: import the results JSON files (kvbench run --output, kvbench merge --output, " +
        "or the reference benchmark's) the trials came from, or open the database the export came from with --db";
      expect(message.get('exp.json')).toMatch(/^a kvbench export \(JSON: kvbench export, or the app's JSON export\) written by kvbench \d+\.\d+\.\d+, not a results file: /);
      expect(message.get('exp.json')).toContain(exportAdvice);
      expect(message.get('exp.csv')).toBe(`a kvbench trials export (CSV: kvbench export, or the app's Trials CSV), not a results JSON file: ${exportAdvice}`);
      expect(message.get('old.csv')).toBe(message.get('exp.csv'));
      expect(message.get('report.csv')).toMatch(/^a kvbench report export \(CSV: kvbench export --content report, or the app's Report CSV\), not a results JSON file: an export holds/);
      expect(message.get('exp.xlsx')).toMatch(/^a spreadsheet \(XLSX, as kvbench export and kvbench run --xlsx-output write\), not a results JSON file: .*, or, for an export, open the database it came from with --db$/);
      for (const name of ['endpoint.csv', 'endpoint-results.json', 'endpoint-export.json']) {
        expect(message.get(name)).toMatch(/^a kvbench endpoint .*: endpoint runs are stored by kvbench endpoint run into its database, not imported as trials/);
      }
      // The app says how its users choose a database.
      const app = await importResultsFiles(store, [file('exp.csv')], { systemLabel: 'lab', chooseDatabase: 'in Settings' });
      expect(app.errors[0].message).toMatch(/open the database the export came from in Settings$/);
      // Any other text that is not JSON is still said as it was.
      fs.writeFileSync(file('notes.txt'), 'hello');
      const other = await importResultsFiles(store, [file('notes.txt')], { systemLabel: 'lab' });
      expect(other.errors[0].message).toMatch(/^not JSON: /);
    } finally {
      store.close();
    }
  });
});
