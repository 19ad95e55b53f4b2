// The model every trial export is drawn from, built in one place for `kvbench export` and the app's
// export.create, so the two cannot disagree on what a selection covers or when it is refused.
import { StoreError } from '../store/store-error.ts';
import type { Store } from '../store/store.ts';
import type { ExportModel, TrialPages } from './export-trials.ts';
import { buildScenarioReport, buildTierComparison, type StatedBandwidth } from './report-model.ts';
import { resolveSelection, type Selection } from './selection.ts';

/**
 * The suites a selection names must exist: an unknown id (a deleted suite, another database) is
 * NOT_FOUND, not an empty selection whose report and export would read as a suite without trials.
 * `whereToLook` says where the ids are (the CLI names a command, the app its Settings).
 */
export function requireSuites(store: Store, suiteIds: readonly number[] | undefined, whereToLook: string): void {
  const missing = (suiteIds ?? []).filter((id) => store.getSuite(id) === null);
  if (missing.length === 0) return;
  const what = missing.length === 1 ? `Suite ${missing[0]}` : `Suites ${missing.join(', ')}`;
  throw new StoreError('NOT_FOUND', `${what} not found: deleted, or in another database than the one open (${whereToLook})`);
}

export interface ExportModelOptions {
  /** Aggregate partial trials in the summary too. */
  includeIncomplete: boolean;
  /** Leave flagged trials out of the summary (the file says so); absent: counted and marked, as always. */
  excludeFlagged?: boolean;
  /** The drive's stated (datasheet) bandwidth; refused (StatedBandwidthRefused) for rows over several drives. */
  stated: StatedBandwidth | null;
  /** For a missing suite's message: see requireSuites. */
  whereToLook: string;
  /** What was selected, as the caller's request put it, for the record (default: the selection). */
  filter?: Record<string, unknown>;
}

/**
 * The selected trials, their hardware, the scenario report and the tier comparison: what an XLSX or
 * JSON file holds. Everything here only reads, so what it throws (an unknown suite or system, a bad
 * filter, damaged rows, a stated bandwidth over several drives) is the request's problem, never an
 * export failure: callers build the model first and call only the writing of the file EXPORT_FAILED.
 */
export function buildExportModel(store: Store, selection: Selection, o: ExportModelOptions): ExportModel {
  // One snapshot: a trial deleted by another connection between the list and its histograms or
  // hardware would be counted in a group yet pooled from nothing, and written with no hardware.
  return store.inOneSnapshot(() => {
    const { trials, report } = buildReportCsvModel(store, selection, o);
    // Each stored snapshot parsed once, shared by its trials (trialHardwareOf).
    const hardware = store.trialHardwareOf(trials.map((t) => t.id));
    // Each row's efficiency against its own system's and drive's probe, never the newest trial's.
    const tiers = buildTierComparison(report, (id) => hardware.get(id) ?? null, o.stated);
    return { trials, hardware, report, tiers, filter: o.filter ?? { ...selection } };
  });
}

/**
 * What a report CSV holds (toReportCsv): the selected trials and their scenario report, without the
 * hardware and the tier comparison, which it does not carry (a stated bandwidth plays no part).
 */
export function buildReportCsvModel(store: Store, selection: Selection, o: Omit<ExportModelOptions, 'stated'>): Pick<ExportModel, 'trials' | 'report'> {
  // One snapshot (Store.inOneSnapshot): the trials listed are the trials whose histograms are pooled.
  return store.inOneSnapshot(() => {
    requireSuites(store, selection.suiteIds, o.whereToLook);
    const trials = store.listTrials({ ...resolveSelection(store, selection), order: 'asc' });
    const report = buildScenarioReport(trials, { includeIncomplete: o.includeIncomplete, excludeFlagged: o.excludeFlagged ?? false, histogramsOf: (id) => store.trialHistograms(id), hardwareOf: (id) => store.trialHardware(id) });
    return { trials, report };
  });
}

/**
 * What a trials CSV holds (trialsCsvChunks): the selected trials with their hardware, read a page at
 * a time as the file is written (Store.trialPages), and nothing else: no report, which it does not
 * carry. The selection is checked now (an unknown suite, system or drive is refused before any file
 * is made); the pages are read as they are taken.
 */
export function selectedTrialPages(store: Store, selection: Selection, whereToLook: string): TrialPages {
  requireSuites(store, selection.suiteIds, whereToLook);
  const filter = { ...resolveSelection(store, selection), order: 'asc' as const };
  return {
    *[Symbol.iterator]() {
      for (const trials of store.trialPages(filter)) yield { trials, hardware: store.trialHardwareOf(trials.map((t) => t.id)) };
    },
  };
}
