// The app's reports and exports (report.build, report.compare, export.create), built from a store:
// the one place their answers are made, whether on the backend's thread or on a worker thread with
// its own connection (report-thread.ts, report-worker.ts). So both ways answer alike, byte for byte;
// only where they run differs. Nothing here writes.
import { inAppWords, scenarioLabelsIn } from '../../src-shared/domain/app-words.ts';
import type { TrialRecord } from '../../src-shared/domain/store-types.ts';
import type { ParsedRequestOf, ResponseOf, Selection, StatedBandwidthData } from '../../src-shared/ipc/contract.ts';
import { requireSuites } from '../export/export-model.ts';
import { planExport } from '../export/plan-export.ts';
import { buildScenarioReport, buildSystemComparison, buildTierComparison, StatedBandwidthRefused, type StatedBandwidth } from '../export/report-model.ts';
import { comparisonSides, resolveSelection } from '../export/selection.ts';
import type { Store } from '../store/store.ts';
import { StoreError } from '../store/store-error.ts';
import { sqliteCode } from '../store/sqlite.ts';
import { FileWriteError, writeTemporary, type AtomicFile } from '../util/write-file-atomic.ts';
import { fail, toIpcError } from './ipc-error.ts';

/** The channels whose answers are built here. */
export const REPORT_CHANNELS = ['report.build', 'report.compare', 'export.create'] as const;
export type ReportChannel = (typeof REPORT_CHANNELS)[number];

/**
 * One of them, with its (validated) request: what a worker thread is given. An export is written
 * into `file`'s temporary (the backend chose where: a private folder the page downloads from, or
 * the file the desktop app's save dialog named), never handed back as bytes.
 */
export type ReportJob =
  | { channel: 'report.build'; request: ParsedRequestOf<'report.build'> }
  | { channel: 'report.compare'; request: ParsedRequestOf<'report.compare'> }
  | { channel: 'export.create'; request: ParsedRequestOf<'export.create'>; file: AtomicFile };

/** What an export job answers once its file is written (its temporary, synced): the backend says where it went. */
export interface ExportWritten {
  bytes: number;
  trialCount: number;
  unreadable: string[];
}

/** The answer of a job on `channel`. */
export type ReportAnswer<C extends ReportChannel = ReportChannel> = C extends 'export.create' ? ExportWritten : ResponseOf<C>;

export function selectionOf(sel: Selection): Parameters<typeof resolveSelection>[1] {
  return {
    ...(sel.suiteIds?.length ? { suiteIds: sel.suiteIds } : {}),
    ...(sel.systemIds?.length ? { systems: sel.systemIds } : {}),
    ...(sel.driveIds?.length ? { drives: sel.driveIds } : {}),
    ...(sel.suiteLabels?.length ? { suiteLabels: sel.suiteLabels } : {}),
    ...(sel.scenarioIds?.length ? { scenarioIds: sel.scenarioIds } : {}),
    ...(sel.statuses?.length ? { statuses: sel.statuses } : {}),
    ...(sel.model ? { model: sel.model } : {}),
    ...(sel.since ? { since: sel.since } : {}),
    // A date-only `until` includes that whole day (isoDate), as --until does.
    ...(sel.until ? { until: sel.until } : {}),
  };
}

/** Where the app's user finds which database a suite is in (requireSuites). */
const SUITES_WHERE_TO_LOOK = 'see Settings';

/** The drive's stated (datasheet) bandwidth the page gives, as the model takes it. */
function statedOf(given: StatedBandwidthData | undefined): StatedBandwidth | null {
  const read = given?.readBytesPerS ?? null;
  const write = given?.writeBytesPerS ?? null;
  // Neither direction given is no statement at all (the model would refuse even an empty one for several drives).
  return read === null && write === null ? null : { readBytesPerS: read, writeBytesPerS: write };
}

/**
 * Builds what carries a tier comparison (the comparison itself, an export's model). A stated bandwidth
 * for a selection over several systems or drives is refused as VALIDATION, in the app's words (the
 * model's names the CLI's flags).
 */
function withStatedRefusedInAppWords<T>(build: () => T): T {
  try {
    return build();
  } catch (err) {
    if (err instanceof StatedBandwidthRefused) {
      fail('VALIDATION', 'a stated bandwidth describes one drive, and this selection spans several systems or drives: open the report of one suite to state its drive\'s bandwidth (each drive is otherwise measured against its own probe)');
    }
    throw err;
  }
}

function stamp(d = new Date()): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export const EXPORT_MIME_TYPES: Record<'csv' | 'xlsx' | 'json', string> = {
  csv: 'text/csv',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  json: 'application/json',
};

/** The name an exported file is offered under: `kvbench-<what>-<time stamp>.<format>`. */
export function exportFileName(name: string, format: 'csv' | 'xlsx' | 'json'): string {
  return `kvbench-${name}-${stamp()}.${format}`;
}

/** A file's bytes as the contract's exported file (an endpoint export, made whole on the backend's thread). */
export function exportedFile(name: string, format: 'csv' | 'xlsx' | 'json', data: Buffer): { fileName: string; mimeType: string; dataBase64: string; bytes: number } {
  return { fileName: exportFileName(name, format), mimeType: EXPORT_MIME_TYPES[format], dataBase64: data.toString('base64'), bytes: data.length };
}

/** The name export.create's file is offered under, from what it holds. */
export function storageExportFileName(r: ParsedRequestOf<'export.create'>): string {
  const reportCsv = r.format === 'csv' && r.content === 'report';
  const what = r.selection.suiteIds?.length === 1 ? `suite-${r.selection.suiteIds[0]}${reportCsv ? '-report' : ''}` : reportCsv ? 'report' : 'trials';
  return exportFileName(what, r.format);
}

/** The store's filter of the page's selection (its suites, systems and drives looked up: NOT_FOUND where one is not there). */
export const filterOf = (s: Store, sel: Selection): ReturnType<typeof resolveSelection> => resolveSelection(s, selectionOf(sel));

const trialsOf = (s: Store, sel: Selection): TrialRecord[] => s.listTrials({ ...filterOf(s, sel), order: 'asc' });

function buildReport(s: Store, r: ParsedRequestOf<'report.build'>): ResponseOf<'report.build'> {
  const { value: built, unreadable } = s.readDamaged(() =>
    s.inOneSnapshot(() => {
      requireSuites(s, r.selection.suiteIds, SUITES_WHERE_TO_LOOK);
      const trials = trialsOf(s, r.selection);
      const report = buildScenarioReport(trials, { includeIncomplete: r.includeIncomplete ?? false, excludeFlagged: r.excludeFlagged ?? false, histogramsOf: (id) => s.trialHistograms(id), hardwareOf: (id) => s.trialHardware(id) });
      const tiers = withStatedRefusedInAppWords(() => buildTierComparison(report, (id) => s.trialHardware(id), statedOf(r.stated)));
      const single = r.selection.suiteIds?.length === 1 ? s.getSuite(r.selection.suiteIds[0]) : null;
      return { trials, report, tiers, single };
    }),
  );
  const { trials, report, tiers, single } = built;
  const title = single ? `Suite ${single.id} · ${single.profile}${single.label ? ` · ${single.label}` : ''}` : `${trials.length} trial(s) of the selection`;
  return { title, trialCount: trials.length, report, tiers, suite: single, unreadable };
}

function compareReports(s: Store, r: ParsedRequestOf<'report.compare'>): ResponseOf<'report.compare'> {
  const { value, unreadable } = s.readDamaged(() =>
    s.inOneSnapshot(() => {
      const sides = comparisonSides(s, r.kind, r.a, r.b, { scenarioIds: r.scenarioIds, suiteLabel: r.suiteLabel });
      return buildSystemComparison(sides.a, sides.b, { match: r.match ?? 'config', kind: r.kind, excludeFlagged: r.excludeFlagged ?? false, suiteLabel: sides.suiteLabel });
    }),
  );
  return { ...value, unreadable };
}

/** Files kvbench writes for the page: read by their owner only (a lab's results may be private). */
const EXPORT_FILE_MODE = 0o600;

/**
 * Writes the export `r` into `file`'s temporary (the backend renames it into place). `alone`: `s` is
 * a connection of this job's own (a report worker's), so a trials CSV reads its trials a page at a
 * time as it is written, in one read transaction held across the writes (one snapshot, as before),
 * and the file is never held whole: memory stays that of a page (a report's or an XLSX's is that of
 * its model). Otherwise (the backend's thread, whose connection the suite runner writes through) the
 * export is read first, in one synchronous snapshot, then written.
 */
async function createExport(s: Store, r: ParsedRequestOf<'export.create'>, file: AtomicFile, alone: boolean): Promise<ExportWritten> {
  const content = r.content ?? 'trials';
  // What reading refuses (an unknown suite or system, a stated bandwidth over several drives, a
  // damaged or busy database) keeps its own code, also when a trials CSV's pages meet it as they are
  // written; only making the file is EXPORT_FAILED.
  const plan = (): ReturnType<typeof planExport> =>
    withStatedRefusedInAppWords(() =>
      planExport(s, selectionOf(r.selection), {
        includeIncomplete: r.includeIncomplete ?? false,
        excludeFlagged: r.excludeFlagged ?? false,
        stated: statedOf(r.stated),
        whereToLook: SUITES_WHERE_TO_LOOK,
        filter: r.selection,
        format: r.format,
        content,
        // The app's file names the app's controls in its notes, as the page does; the JSON is data, its notes as stored.
        words: (text) => inAppWords(scenarioLabelsIn(text)),
        readNow: !alone,
      }),
    );
  const write = async (planned: ReturnType<typeof planExport>): Promise<number> => {
    try {
      return await writeTemporary(file, planned.chunks, { mode: EXPORT_FILE_MODE });
    } catch (err) {
      if (err instanceof StoreError || sqliteCode(err) !== null) throw err;
      const why = err instanceof FileWriteError ? `could not write ${file.file}: ${err.message}` : toIpcError(err).message;
      throw Object.assign(new Error(`export failed: ${why}`), { code: 'EXPORT_FAILED' });
    }
  };
  if (!alone) {
    const { value: planned, unreadable } = s.readDamaged(() => s.inOneSnapshot(plan));
    return { bytes: await write(planned), trialCount: planned.trialCount(), unreadable };
  }
  const { value, unreadable } = await s.readDamagedAlone(async () => {
    s.db.exec('BEGIN');
    try {
      const planned = plan();
      return { bytes: await write(planned), trialCount: planned.trialCount() };
    } finally {
      s.db.exec('COMMIT'); // it only read: ends the snapshot
    }
  });
  return { ...value, unreadable };
}

/**
 * The answer to `job`, read from `s`; refusals are thrown with their contract code, as the handlers
 * throw them. `alone`: `s` is the job's own connection (a report worker's), which an export may hold
 * a read transaction on while it writes.
 */
export async function answerReportJob(s: Store, job: ReportJob, o: { alone?: boolean } = {}): Promise<ReportAnswer> {
  switch (job.channel) {
    case 'report.build':
      return buildReport(s, job.request);
    case 'report.compare':
      return compareReports(s, job.request);
    case 'export.create':
      return createExport(s, job.request, job.file, o.alone ?? false);
  }
}
