// Exports of stored trials: CSV (one row per trial), XLSX (trials, per-scenario aggregates, pooled
// latencies, tier comparison, the report's notes and flags, and a sheet that says what the numbers
// are) and JSON (everything, including each trial's hardware snapshot). Every format carries the full
// configuration of every trial, and every flag the terminal report prints.
// All are drawn from the same model: the trial records and the report model. Each file is made a
// piece at a time (FileChunks) and written as it is made, never held whole: a trials CSV reads its
// trials a page at a time too (TrialPages), and the XLSX is written by exceljs's streaming writer,
// whose rows are XML on their way to the zip as soon as they are added, not a workbook in memory.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import ExcelJS from 'exceljs';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { RUN_OPTION_KEYS } from '../../src-shared/domain/run-options.ts';
import { scenarioLabel } from '../../src-shared/domain/scenarios.ts';
import { METRICS, type TrialRecord } from '../../src-shared/domain/store-types.ts';
import { EFFICIENCY_DEFINITIONS } from '../../src-shared/domain/tiers.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import type { EXPORT_CONTENTS } from '../../src-shared/ipc/contract.ts';
import { flagKindsText } from '../../src-shared/domain/trial-flags.ts';
import { suitesText } from '../../src-shared/domain/places.ts';
import { definitionRowLabel, definitionSplitText, pooledDefinitionText } from '../../src-shared/domain/metric-changes.ts';
import { cautionsOf, gpuCopySourceText, limitsSourceText, memoryCopySourceText, PER_TRIAL_METHOD, POOLED_METHOD, type ScenarioReport, type TierComparison } from './report-model.ts';
import { suiteLabelGroups } from './scenario-report.ts';
import { suiteLabelsNote } from './render-text.ts';
import type { FileChunks } from '../util/write-file-atomic.ts';
import { csvChunks, csvTable } from './csv.ts';
import { cellText } from '../engine/report/xlsx-export.ts';
import { jsonArrayTexts, jsonText } from '../../src-shared/domain/label-text.ts';

export const EXPORT_FORMATS = ['csv', 'xlsx', 'json'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** What a CSV holds (see EXPORT_CONTENTS); XLSX and JSON files hold both. */
export type ExportContent = (typeof EXPORT_CONTENTS)[number];

export type Cell = string | number | boolean | null;

export interface ExportModel {
  trials: TrialRecord[];
  /** Hardware snapshot per trial id (null when the trial has none, e.g. imported). */
  hardware: Map<number, HardwareProfile | null>;
  report: ScenarioReport;
  tiers: TierComparison;
  /** What was selected, for the record. */
  filter: Record<string, unknown>;
}

const TRIAL_COLUMNS = [
  'trial_id',
  'suite_id',
  'suite_label',
  'system_id',
  'system_label',
  'drive_id',
  'drive_label',
  'scenario_id',
  'scenario_label',
  'trial_number',
  'attempt',
  'status',
  'status_reason',
  'caution',
  'started_at',
  'finished_at',
  'wall_ms',
  'results_format',
  'source_file',
  'config_key',
  // The kvbench that stored the trial (for an import, the importer), and the one that measured it
  // (an imported file's own version; empty for the reference's files): a metric whose definition
  // changed (metric-changes.ts) means what the measuring version defined.
  'kvbench_version',
  'measured_by_version',
] as const;

const HW_COLUMNS = ['hw.cpu', 'hw.logical_cores', 'hw.memory_bytes', 'hw.gpus', 'hw.cache_filesystem', 'hw.cache_drive', 'hw.direct_io', 'hw.probe_read_bytes_per_s', 'hw.probe_write_bytes_per_s', 'hw.probe_page_cache_suspected'] as const;

/** Column names of the trial table: identity, `config.<option>` for every run option, metrics, hardware. */
export function trialColumns(): string[] {
  return [...TRIAL_COLUMNS, ...RUN_OPTION_KEYS.map((k) => `config.${k}`), ...METRICS.map((m) => m.key), ...HW_COLUMNS];
}

function cell(v: unknown): Cell {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  return JSON.stringify(v); // customModels, tuning: nested objects as JSON
}

export function trialRow(t: TrialRecord, hw: HardwareProfile | null): Cell[] {
  const base: Cell[] = [
    t.id,
    t.suiteId,
    t.suiteLabel,
    t.systemId,
    t.systemLabel,
    t.driveId,
    t.driveLabel,
    t.scenarioId,
    scenarioLabel(t.scenarioId),
    t.trialIndex + 1,
    t.attempt,
    t.status,
    t.statusReason,
    // The report's flag (the page cache served storage reads, a RAM-backed cache directory), per trial.
    cautionsOf(t).map((c) => c.message).join('; ') || null,
    t.startedAt,
    t.finishedAt,
    t.wallMs === null ? null : Math.round(t.wallMs),
    t.resultsFormat,
    t.sourceFile,
    t.configKey,
    t.kvbenchVersion,
    t.measuredByVersion,
  ];
  const config = RUN_OPTION_KEYS.map((k) => cell(t.options[k]));
  const metrics = METRICS.map((m) => (m.key in t.metrics ? t.metrics[m.key] : null));
  const hwCells: Cell[] = hw
    ? [
        [hw.cpu.manufacturer, hw.cpu.brand].filter(Boolean).join(' ') || null,
        hw.cpu.logicalCores,
        hw.memory.totalBytes,
        hw.gpus.map((g) => `${g.model ?? 'GPU'} ${g.memoryBytes ?? '?'} B`).join('; ') || 'none',
        hw.cacheDir ? `${hw.cacheDir.filesystem ?? '?'} at ${hw.cacheDir.mountPoint ?? '?'}` : null,
        hw.cacheDir?.driveLabel ?? null,
        hw.cacheDir?.directIo?.supported ?? null,
        hw.cacheDir?.bandwidth?.readBytesPerSec ?? null,
        hw.cacheDir?.bandwidth?.writeBytesPerSec ?? null,
        hw.cacheDir?.bandwidth?.pageCacheSuspected ?? null,
      ]
    : HW_COLUMNS.map(() => null);
  return [...base, ...config, ...metrics, ...hwCells];
}

/** "fw 2.1 (suites 3, 5); fw 2.2 (suite 7)": the labels of the trials' suites, or why there is none. */
function suiteLabelsOf(trials: readonly TrialRecord[]): string {
  const labelled = suiteLabelGroups(trials).filter((g) => g.label !== null);
  if (labelled.length === 0) return 'none: no suite of these trials has a label';
  return labelled.map((g) => `${g.label} (${suitesText(g.suiteIds)})`).join('; ');
}

/** Each group's suite label: groups of suites with different labels are aggregated apart. */
const GROUP_COLUMNS = ['scenario_id', 'scenario', 'system_id', 'system_label', 'drive_id', 'drive_label', 'suite_label', 'config_key', 'configuration'];
const groupCells = (s: ScenarioReport['scenarios'][number]): Cell[] => [s.scenarioId, s.label, s.systemId, s.systemLabel, s.driveId, s.driveLabel, s.suiteLabel, s.configKey, s.configDescription];
/**
 * definition_before: empty for the current definition; else the kvbench version whose change of the
 * metric's definition the row's trials predate (its metric_label says "(definition before …)"): a
 * metric measured on both sides of a change has a row for each side, never one median of both.
 * yes: for a yes/no metric (FLAG_METRIC_KEYS), the trials that said yes of n, its median, P95 and CV
 * left empty (a median of 1s and 0s is no share); empty for every other metric.
 */
const SCENARIO_COLUMNS = [...GROUP_COLUMNS, 'trials', 'excluded', 'flagged', 'metric', 'metric_label', 'unit', 'n', 'median', 'p95', 'cv', 'min', 'max', 'definition_before', 'yes'];

/** The report's table: per group (scenario, configuration, system, drive, suite label) and metric, the aggregate over its counted trials. */
function scenarioRows(model: Pick<ExportModel, 'report'>): Cell[][] {
  return model.report.scenarios.flatMap((s) =>
    s.metrics.map((m): Cell[] => [
      ...groupCells(s),
      s.trialsTotal,
      s.excluded.length,
      s.cautions.length,
      m.metric.key,
      definitionRowLabel(m.metric.label, m.olderDefinition),
      m.metric.unit,
      m.aggregate.n,
      m.aggregate.median,
      m.aggregate.p95,
      m.aggregate.cv,
      m.aggregate.min,
      m.aggregate.max,
      m.olderDefinition?.since ?? null,
      m.aggregate.yes ?? null,
    ]),
  );
}

/** Trials a page at a time, each page with its trials' hardware snapshots (the trials CSV's rows). */
export type TrialPages = Iterable<{ trials: readonly TrialRecord[]; hardware: ReadonlyMap<number, HardwareProfile | null> }>;

/**
 * The trials CSV (see csv.ts: BOM, RFC 4180, formula-like text defused): one header row, one row per
 * trial, a page of rows per chunk. `written.trials` counts the rows as they are made.
 */
export function* trialsCsvChunks(pages: TrialPages, written: { trials: number } = { trials: 0 }): Generator<string> {
  yield* csvChunks(
    trialColumns(),
    (function* () {
      for (const page of pages) {
        yield page.trials.map((t) => trialRow(t, page.hardware.get(t.id) ?? null));
        written.trials += page.trials.length;
      }
    })(),
  );
}

/**
 * The report as CSV: the XLSX's Scenarios sheet, one row per group and metric with the median, P95
 * and CV of the per-trial values (the report page's table), for a report exported from the app.
 */
export function toReportCsv(model: Pick<ExportModel, 'report'>): string {
  return csvTable(SCENARIO_COLUMNS, scenarioRows(model));
}

/**
 * The JSON export: one document, `jsonText(…, 2)` of everything, made a trial at a time. The trials'
 * array is the document's bulk: the rest is made whole, with a marker where the array goes, and the
 * array a trial at a time (jsonArrayTexts), so the bytes are those of the whole document made at once.
 */
export function* jsonChunks(model: ExportModel): Generator<string> {
  const marker = `kvbench-trials-${randomUUID()}`;
  const whole = `${jsonText(
    {
      format: 'kvbench-export',
      version: 1,
      kvbenchVersion: KVBENCH_VERSION,
      exportedAt: new Date().toISOString(),
      method: model.report.method,
      filter: model.filter,
      // Whether the report's aggregates left flagged trials out (report.scenarios.excludedFlagged counts them); the trials are all here.
      excludeFlagged: model.report.excludeFlagged,
      units: 'metric units are in each metric definition (bytes, bytes/s, ms, tok/s); trial options use the reference units (GiB, seconds)',
      metrics: METRICS,
      trials: marker,
      report: { scenarios: model.report, tiers: model.tiers },
    },
    2,
  )}\n`;
  const at = whole.indexOf(`"trials": "${marker}"`);
  yield `${whole.slice(0, at)}"trials": `;
  yield* jsonArrayTexts(
    (function* () {
      for (const t of model.trials) yield { ...t, hardware: model.hardware.get(t.id) ?? null };
    })(),
    2,
    1,
  );
  yield whole.slice(at + `"trials": "${marker}"`.length);
}

/** Rows of a sheet the streaming writer is given before it waits for the zip to take them. */
const XLSX_ROWS_PER_TURN = 200;

/**
 * The workbook, as the pieces of its file. `words` rewords its prose (the Notes sheet's messages),
 * written in the CLI's words (its flags and commands): the app passes its own (inAppWords), so a file
 * saved from the app names the app's controls, as the page beside it does; the CLI's files keep the
 * flags. Written by exceljs's streaming writer: each sheet's rows go to the zip as XML as they are
 * added (every XLSX_ROWS_PER_TURN rows it lets the zip take them), and only the shared strings are
 * kept to the end, where an in-memory workbook held every cell of every sheet as an object.
 */
export async function* xlsxChunks(model: ExportModel, opts: { words?: (text: string) => string } = {}): AsyncGenerator<Buffer> {
  const out = new PassThrough();
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: true });
  wb.creator = `kvbench ${KVBENCH_VERSION}`;
  const made = writeWorkbook(wb, model, opts.words ?? ((text: string): string => text)).then(
    () => null,
    (err: unknown) => {
      out.destroy(err as Error);
      return err;
    },
  );
  for await (const chunk of out) yield chunk as Buffer;
  const failed = await made;
  if (failed !== null) throw failed;
}

async function writeWorkbook(wb: ExcelJS.stream.xlsx.WorkbookWriter, model: ExportModel, words: (text: string) => string): Promise<void> {
  const add = async (name: string, columns: readonly string[], rows: Iterable<Cell[]>): Promise<void> => {
    const ws = wb.addWorksheet(name, { views: [{ state: 'frozen', ySplit: 1 }] });
    const head = ws.addRow([...columns]);
    head.font = { bold: true };
    head.commit();
    let n = 0;
    // Controls escaped; long text (a failure's engine output, custom models as JSON) cut to what a cell holds.
    for (const r of rows) {
      ws.addRow(r.map((c) => (typeof c === 'string' ? cellText(c, 'the CSV and JSON exports have it whole') : c))).commit();
      if (++n % XLSX_ROWS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    ws.commit();
  };
  await add(
    'Trials',
    trialColumns(),
    (function* () {
      for (const t of model.trials) yield trialRow(t, model.hardware.get(t.id) ?? null);
    })(),
  );
  await add('Scenarios', SCENARIO_COLUMNS, scenarioRows(model));
  // The terminal report's pooled table: percentiles of the merged histograms, never averaged.
  const pooledRows = model.report.scenarios.flatMap((s) => s.pooled.map((p): Cell[] => [...groupCells(s), p.name, p.trials, p.damagedTrials, p.count, p.p50Ms, p.p95Ms, p.p99Ms, p.olderDefinition?.since ?? null]));
  await add('Pooled latency', [...GROUP_COLUMNS, 'latency', 'trials', 'damaged_trials_left_out', 'samples', 'p50_ms', 'p95_ms', 'p99_ms', 'definition_before'], pooledRows);
  await add(
    'Tier comparison',
    [
      'scenario_id', 'scenario', 'system_id', 'system_label', 'drive_id', 'drive_label', 'suite_label', 'config_key', 'configuration', 'users', 'gpu_mem_gib', 'cpu_mem_gib', 'n', 'fewest_trials', 'wall_clock_tok_per_s', 'speedup_wall_clock', 'storage_tok_per_s', 'speedup_storage_metric', 'speedup_baseline_users',
      'gpu_read_p95_ms', 'cpu_read_p95_ms', 'storage_read_p95_ms', 'storage_write_p95_ms', 'bytes_read', 'bytes_written',
      'storage_read_bytes_per_s', 'storage_write_bytes_per_s', 'storage_read_efficiency', 'storage_write_efficiency', 'cpu_read_efficiency', 'gpu_read_busy_efficiency', 'gpu_write_busy_efficiency',
      'drive_read_limit_bytes_per_s', 'drive_write_limit_bytes_per_s', 'drive_limits_source', 'memory_copy_bytes_per_s', 'memory_copy_source',
      'gpu_h2d_limit_bytes_per_s', 'gpu_d2h_limit_bytes_per_s', 'gpu_copy_source',
    ],
    model.tiers.rows.map((r) => [
      r.scenarioId, r.label, r.systemId, r.systemLabel, r.driveId, r.driveLabel, r.suiteLabel, r.configKey, r.configDescription, r.numUsers, r.gpuMemGb, r.cpuMemGb, r.n, r.fewestTrials, r.wallClockTokPerS, r.speedupWallClock, r.storageTokPerS, r.speedupStorageMetric, r.speedupBaselineUsers,
      r.gpuReadP95Ms, r.cpuReadP95Ms, r.storageReadP95Ms, r.storageWriteP95Ms, r.bytesRead, r.bytesWritten,
      r.storageReadBytesPerS, r.storageWriteBytesPerS, r.storageReadEfficiency, r.storageWriteEfficiency, r.cpuReadEfficiency, r.gpuReadBusyEfficiency, r.gpuWriteBusyEfficiency,
      r.limits.readBytesPerS, r.limits.writeBytesPerS, limitsSourceText(r.limits), r.limits.memoryCopyBytesPerS, memoryCopySourceText(r.limits),
      r.limits.gpuH2dBytesPerS, r.limits.gpuD2hBytesPerS, gpuCopySourceText(r.limits),
    ]),
  );
  // What the terminal report says beside its tables: trials left out or flagged, and the tier comparison's notes.
  const labelsNote = suiteLabelsNote(model.report);
  const noteRows: Cell[][] = [
    ...(labelsNote === null ? [] : [['scenarios', ...GROUP_COLUMNS.map(() => null), null, null, 'note', words(labelsNote)] as Cell[]]),
    ...model.report.scenarios.flatMap((s) => [
      ...s.excluded.map((x): Cell[] => [
        'scenarios',
        ...groupCells(s),
        x.trialId,
        x.trialIndex + 1,
        x.flags.length > 0 ? `excluded (flagged: ${x.flags.join(', ')})` : x.supersededBy === null ? `excluded (${x.status})` : `superseded (${x.status}; retried: attempt ${x.supersededBy.attempt} ${x.supersededBy.status}, trial id ${x.supersededBy.trialId})`,
        x.reason === null ? 'no reason recorded' : words(x.reason),
      ]),
      ...s.cautions.map((c): Cell[] => ['scenarios', ...groupCells(s), c.trialId, c.trialIndex + 1, 'flagged', words(c.message)]),
      ...s.definitionSplits.map((d): Cell[] => ['scenarios', ...groupCells(s), null, null, 'definition', words(definitionSplitText(d))]),
      ...s.pooled.flatMap((p): Cell[][] => {
        const note = pooledDefinitionText(p);
        return note === null ? [] : [['pooled latency', ...groupCells(s), null, null, 'definition', words(note)]];
      }),
    ]),
    ...model.tiers.notes.map((n): Cell[] => ['tier comparison', ...GROUP_COLUMNS.map(() => null), null, null, 'note', words(n)]),
  ];
  await add('Notes', ['section', ...GROUP_COLUMNS, 'trial_id', 'trial_number', 'kind', 'message'], noteRows);
  await add(
    'About',
    ['item', 'value'],
    [
      ['kvbench version', KVBENCH_VERSION],
      ['exported at', new Date().toISOString()],
      ['aggregation', `Scenarios: ${PER_TRIAL_METHOD}`],
      [
        'pooled latency',
        pooledRows.length > 0
          ? `Pooled latency: ${POOLED_METHOD} of each group's aggregated trials`
          : 'none: no aggregated trial of this export stored latency histograms (the reference benchmark\'s files have none)',
      ],
      ['notes', noteRows.length > 0 ? `Notes: ${noteRows.length} (trials excluded or flagged, as the terminal report marks them; metrics measured under an older definition; the tier comparison's notes)` : 'none: no trial excluded or flagged, no metric of an older definition, no tier comparison note'],
      [
        'definition_before',
        "Scenarios: a metric whose definition changed between kvbench versions (docs/metrics.md) is aggregated apart for the trials measured before the change, in a row marked \"(definition before VERSION)\" with VERSION in this column; Notes says how many trials each side. Pooled latency: likewise, a latency whose definition changed is pooled apart for the older trials' histograms, its row's definition_before giving the version",
      ],
      ['yes', 'Scenarios: for a yes/no metric (1 or 0 per trial: page cache flagged, queueing-bound, autoscaler peak found or target met …), the trials that said yes of n; its median, P95 and CV are left empty (a median of 1s and 0s is no share)'],
      ['incomplete trials', model.report.includeIncomplete ? 'partial trials included in aggregates' : 'excluded from aggregates (listed in Trials with their status, and in Notes)'],
      ['flagged trials', flaggedTrialsText(model.report)],
      ['caution column', 'Trials: why a trial\'s storage numbers need a second look (the page cache served its reads, a RAM-backed cache directory); the report flags it'],
      ['filter', JSON.stringify(model.filter)],
      ['suite labels', suiteLabelsOf(model.trials)],
      ['config.* columns', 'the run options given to the engine; GiB and seconds as the reference'],
      // The tier comparison's efficiencies are of two kinds (over the window, while the link was busy): each says which.
      ...Object.entries(EFFICIENCY_DEFINITIONS).map(([column, text]): Cell[] => [column, `Tier comparison: ${text}`]),
      ...METRICS.map((m): Cell[] => [m.key, `${m.label} [${m.unit}]: ${m.description}`]),
    ],
  );
  await wb.commit();
}

/** What the About sheet says of the flagged trials: counted and marked (the default), or left out of the aggregates, how many and why. */
function flaggedTrialsText(report: ScenarioReport): string {
  const x = report.excludedFlagged;
  if (x === null) return 'included in aggregates and marked (the caution column in Trials, "flagged" in Scenarios and Notes)';
  const which = x.trials > 0 ? `${x.trials} trial(s) left out (${flagKindsText(x)}), each in Notes as "excluded (flagged: …)" with why` : 'none of the exported trials is flagged, so none was left out';
  return `EXCLUDED from aggregates (exclude flagged trials was on): ${which}; Trials still lists every trial, with its caution`;
}

/**
 * The file of `format` and `content`, a piece at a time (see FileChunks): the trials CSV holds the
 * trials only, the report CSV the report only, XLSX and JSON both and the tier comparison.
 */
export function exportChunks(model: ExportModel, format: ExportFormat, content: ExportContent = 'trials', opts: { words?: (text: string) => string } = {}): FileChunks {
  if (format === 'csv') return content === 'report' ? [toReportCsv(model)] : trialsCsvChunks([{ trials: model.trials, hardware: model.hardware }]);
  return format === 'json' ? jsonChunks(model) : xlsxChunks(model, opts);
}

export function formatFromPath(file: string): ExportFormat | null {
  const ext = path.extname(file).toLowerCase().slice(1);
  return (EXPORT_FORMATS as readonly string[]).includes(ext) ? (ext as ExportFormat) : null;
}
