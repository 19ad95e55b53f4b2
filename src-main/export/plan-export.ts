// Which parts of the export model a file is made from, and its pieces: `kvbench export` and the app's
// export.create both plan here, so that each reads only what its file holds.
import type { Store } from '../store/store.ts';
import type { FileChunks } from '../util/write-file-atomic.ts';
import { buildExportModel, buildReportCsvModel, selectedTrialPages, type ExportModelOptions } from './export-model.ts';
import { exportChunks, toReportCsv, trialsCsvChunks, type ExportContent, type ExportFormat } from './export-trials.ts';
import type { ScenarioReport } from './report-model.ts';
import type { Selection } from './selection.ts';

/** An export ready to be written: its pieces, and what it holds (said once it is written). */
export interface PlannedExport {
  chunks: FileChunks;
  /** The trials it holds: for a trials CSV, those written so far (its pages are read as it is written). */
  trialCount: () => number;
  /** The report it holds (a report CSV, XLSX, JSON); null for a trials CSV. */
  report: ScenarioReport | null;
}

/**
 * The export of `format` and `content` for `kvbench export` and the app's export.create, reading only
 * what the file holds: a trials CSV its trials a page at a time (no report: pooling every trial's
 * latency histograms cost a 5,000-trial CSV 20 CPU seconds), a report CSV the report without the
 * hardware and tier comparison, XLSX and JSON everything. What it reads before it returns is read
 * (and refused) before any file is made. `readNow` (the app, in one readDamaged call) reads a trials
 * CSV's pages now too, so that every damaged row met is counted as this export's.
 */
export function planExport(
  store: Store,
  selection: Selection,
  o: ExportModelOptions & { format: ExportFormat; content: ExportContent; words?: (text: string) => string; readNow?: boolean },
): PlannedExport {
  if (o.format === 'csv' && o.content === 'trials') {
    const written = { trials: 0 };
    const chunks = trialsCsvChunks(selectedTrialPages(store, selection, o.whereToLook), written);
    return { chunks: o.readNow ? [[...chunks].join('')] : chunks, trialCount: () => written.trials, report: null };
  }
  if (o.format === 'csv') {
    const model = buildReportCsvModel(store, selection, o);
    return { chunks: [toReportCsv(model)], trialCount: () => model.trials.length, report: model.report };
  }
  const model = buildExportModel(store, selection, o);
  return { chunks: exportChunks(model, o.format, o.content, { words: o.words }), trialCount: () => model.trials.length, report: model.report };
}
