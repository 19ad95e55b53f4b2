/**
 * The one contract between the renderer and the backend: for every channel its request and
 * response schema. The backend (Electron main, or `kvbench serve`) validates every request before
 * a handler sees it and every response before it leaves; failures and thrown errors come back as
 * data, `{ ok: false, error: { code, message } }`, never as exceptions or stacks.
 *
 * The response schemas describe the report model and store records that src-main produces, and the
 * backend's handlers are typed against them. The domain's records (src-shared/domain: the store's,
 * the endpoint runs', their comparison) have their schema beside them and their type inferred from
 * it, so a field added there reaches the answer. The report model's types (src-main/export) are
 * still written beside these schemas: the type check catches a field a schema requires and a handler
 * lacks, not the reverse (TypeScript accepts extra properties and zod strips them from the response).
 * The backend names every field a response parse drops in its log, and the backend tests fail on one
 * (src-main/server/dropped-fields.ts); a handler that narrows an answer on purpose does so itself.
 *
 * Pure TypeScript: no Node, no DOM, no electron.
 */
import { z } from 'zod';
import {
  ENDPOINT_RUN_STATUSES,
  EndpointAggregatesSchema,
  EndpointComparisonSchema,
  EndpointRunRecordSchema,
  REQUEST_STATUSES,
  ServerCacheMetricsSchema,
  type Distribution,
  type EndpointComparison,
} from '../domain/endpoint.ts';
import { labelTextSchema } from '../domain/label-text.ts';
import { ERROR_CODES } from '../domain/errors.ts';
import { HardwareProfileSchema } from '../domain/hardware.ts';
import { MAX_REQUESTS_RULE, PROFILE_IDS, StatedSizeSchema, SuiteEventSchema, SuitePlanSchema } from '../domain/scenarios.ts';
import { AggregateSchema } from '../domain/statistics.ts';
import { TRIAL_FLAG_KINDS } from '../domain/trial-flags.ts';
import { GpuTierSummarySchema, TrialGpuSchema } from '../domain/gpu-tier.ts';
import { TrialEngineSchema } from '../domain/trial-engine.ts';
import { FACET_FILTERS } from '../domain/facet-matches.ts';
import { MAX_DATE_MS } from '../domain/iso-time.ts';
import {
  COMPARISON_KINDS,
  DriveRecordSchema,
  MetricDefinitionSchema,
  RESULTS_FORMATS,
  STORE_ERROR_CODES,
  SuiteLabelFacetSchema,
  SuiteRecordSchema,
  SystemRecordSchema,
  TRIAL_ROW_STATUSES,
  TrialRecordSchema,
  type SuiteRecord,
  type TrialRecord,
} from '../domain/store-types.ts';
import type { Channel } from './channels.ts';

// ---------------------------------------------------------------------------------------------
// Errors and results

export const IPC_ERROR_CODES = [
  ...ERROR_CODES,
  ...STORE_ERROR_CODES.filter((c) => !(ERROR_CODES as readonly string[]).includes(c)),
  'EXPORT_FAILED',
  /** A suite is already running (one at a time per backend). */
  'BUSY',
  /** The served mode: no or a wrong token. */
  'UNAUTHORIZED',
  /** The served mode: the page could not reach the server (stopped, restarted, the network): a connection problem, not the server's error. */
  'UNREACHABLE',
  /** Electron: a request from a frame that is not the app's own page. */
  'FORBIDDEN',
] as const;
export type IpcErrorCode = (typeof IPC_ERROR_CODES)[number];

export const IpcErrorSchema = z.object({ code: z.enum(IPC_ERROR_CODES), message: z.string() });
export type IpcError = z.infer<typeof IpcErrorSchema>;

export type Result<T> = { ok: true; value: T } | { ok: false; error: IpcError };

export function isIpcErrorCode(value: unknown): value is IpcErrorCode {
  return typeof value === 'string' && (IPC_ERROR_CODES as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

const int = z.number().int();
const count = z.number().int().nonnegative();
const num = z.number();
const nnum = z.number().nullable();
const options = z.record(z.string(), z.unknown());
const trialRowStatus = z.enum(TRIAL_ROW_STATUSES);
const empty = z.strictObject({});

export const BYTE_UNITS = ['decimal', 'binary'] as const;
export const LATENCY_UNITS = ['ms', 'us'] as const;

export const SettingsSchema = z.strictObject({
  /** The trial database (SQLite). */
  databasePath: z.string().min(1),
  /** Suggested in the wizard; empty = none. */
  defaultCacheDir: z.string(),
  /** decimal: GB/s and GB (10^9, as drive makers state); binary: GiB/s and GiB. */
  byteUnits: z.enum(BYTE_UNITS),
  latencyUnit: z.enum(LATENCY_UNITS),
});
export type Settings = z.infer<typeof SettingsSchema>;

export const AdviceSchema = z.object({
  level: z.enum(['info', 'warn', 'error']),
  code: z.string(),
  /** Written once for the CLI and the app: a size in it is in binary units (binaryBytesText of sizeBytes). */
  message: z.string(),
  /** The size the message states, which the app shows in the units chosen in Settings instead (fmtAdviceMessage). */
  sizeBytes: z.number().nonnegative().optional(),
  /** Every size the message states, in any order (fmtStatedSizes); absent in advice that states one size only (sizeBytes). */
  sizes: z.array(StatedSizeSchema).optional(),
});
export type Advice = z.infer<typeof AdviceSchema>;

/**
 * Which trials a report, a listing or an export covers. Systems and drives by id, never by label;
 * suites by id, or by the label the user gave them (every suite that carries it, of any date).
 */
export const SelectionSchema = z.strictObject({
  suiteIds: z.array(int.positive()).max(1000).optional(),
  systemIds: z.array(z.string().min(1)).max(100).optional(),
  driveIds: z.array(z.string().min(1)).max(100).optional(),
  suiteLabels: z.array(z.string().trim().min(1).max(200)).max(100).optional(),
  scenarioIds: z.array(z.string().min(1)).max(100).optional(),
  statuses: z.array(trialRowStatus).max(10).optional(),
  model: z.string().trim().min(1).optional(),
  /**
   * Dates (YYYY-MM-DD) or ISO 8601 date-times, as --since/--until take them (isoDate refuses other
   * forms and days that do not exist); `until` as a date includes that whole day. An empty string is
   * refused (VALIDATION), not read as "no filter": leave the key out for that.
   */
  since: z.string().trim().min(1).optional(),
  until: z.string().trim().min(1).optional(),
});
export type Selection = z.infer<typeof SelectionSchema>;

/**
 * A drive's bandwidth as its datasheet states it, in bytes/s (positive, finite; zod's numbers refuse
 * Infinity and NaN), given by the user: storage efficiency is then measured against it instead of the
 * probe's. A direction left out (or null) keeps the probe's. One datasheet describes one drive: for a
 * selection over several systems or drives the backend refuses it (VALIDATION).
 */
export const StatedBandwidthSchema = z.strictObject({
  readBytesPerS: z.number().positive().nullable().optional(),
  writeBytesPerS: z.number().positive().nullable().optional(),
});
export type StatedBandwidthData = z.infer<typeof StatedBandwidthSchema>;

/** A bad maxRequests, refused in the words the CLI refuses a bad --max-requests with. */
const maxRequestsRefused = (iss: { input?: unknown }): string => `${MAX_REQUESTS_RULE}, got ${JSON.stringify(iss.input) ?? String(iss.input)}`;

export const PlanRequestSchema = z.strictObject({
  cacheDir: z.string().min(1),
  profile: z.enum(PROFILE_IDS),
  trials: int.min(1).max(100).optional(),
  scenarios: z.array(z.string().min(1)).max(50).optional(),
  extras: z.boolean().optional(),
  model: z.string().min(1).optional(),
  durationS: int.min(1).max(86_400).optional(),
  /** Seconds each trial runs before its measured window opens (not the autoscaling scenarios). */
  warmUpS: int.min(0).max(3600).optional(),
  /**
   * End each trial once this many requests have completed in its measured window, or at its duration
   * if that comes first (0 or absent: the duration alone), as the suite's --max-requests: stored in
   * every planned run's options, so a resume keeps it, and part of their configuration.
   */
  maxRequests: z.number({ error: maxRequestsRefused }).int({ error: maxRequestsRefused }).min(0, { error: maxRequestsRefused }).optional(),
  /**
   * The storage tier's cap in GiB (1024³ bytes; 0: 95 % of the free space). The value the suite's
   * --storage-capacity-gb flag takes: that flag keeps the reference's name, this API says the unit.
   */
  storageCapacityGib: z.number().nonnegative().max(1_000_000).optional(),
  /** Probe the drive (and memory copy) before the trials: efficiency needs it. */
  probe: z.boolean().optional(),
});
export type PlanRequest = z.infer<typeof PlanRequestSchema>;

// ---------------------------------------------------------------------------------------------
// Store records (src-shared/domain/store-types.ts) and the report model (mirrors src-main/export/report-model.ts)

export type TrialRecordData = TrialRecord;
export type SuiteRecordData = SuiteRecord;

export const ScenarioSummarySchema = z.object({
  scenarioId: z.string(),
  label: z.string(),
  configKey: z.string(),
  configDescription: z.string(),
  options,
  systemId: z.string(),
  systemLabel: z.string(),
  driveId: z.string().nullable(),
  driveLabel: z.string().nullable(),
  /** The size the drive's label states, for the app to restate in its units; null or absent: none known. */
  driveSizeBytes: z.number().nonnegative().nullable().optional(),
  systemLabels: z.array(z.string()),
  /** The suite label the group's trials share (null: none); groups of two labels are never one aggregate. */
  suiteLabel: z.string().nullable(),
  trialsTotal: count,
  trialIds: z.array(int),
  excluded: z.array(
    z.object({
      trialId: int,
      trialIndex: count,
      attempt: int,
      status: trialRowStatus,
      reason: z.string().nullable(),
      supersededBy: z.object({ trialId: int, attempt: int, status: trialRowStatus }).nullable(),
      /** Why a trial that would count was left out as flagged (excludeFlagged); empty for one excluded for its status. */
      flags: z.array(z.enum(TRIAL_FLAG_KINDS)),
    }),
  ),
  cautions: z.array(z.object({ trialId: int, trialIndex: count, message: z.string() })),
  /** The aggregated trials on a RAM-backed cache directory, by what held it in memory (null: not recorded). */
  ramBackings: z.array(z.object({ backing: z.string().nullable(), trials: count })),
  /** The aggregated trials whose storage reads the page cache served, not being RAM-backed. */
  pageCacheFlagged: count,
  /** The aggregated trials that spilled past the tiers their scenario names (CPU only reading the drive). */
  spilledTrials: count,
  /** The GPU tier of the trials that asked for one: reserved of asked, absent, pinned, the GPUs (gpuTierSummaryText); null or absent: none known. */
  gpuTier: GpuTierSummarySchema.nullable().optional(),
  /** One row per definition: a metric measured on both sides of a change of its definition has a row for each (olderDefinition: the change the row's trials predate). */
  metrics: z.array(z.object({ metric: MetricDefinitionSchema, aggregate: AggregateSchema, olderDefinition: z.object({ since: z.string(), change: z.string() }).nullable() })),
  /** The metrics with values measured under an older definition, and how many trials on each side (definitionSplitText says it). */
  definitionSplits: z.array(z.object({ metric: z.string(), label: z.string(), since: z.string(), change: z.string(), trialsBefore: count, trialsSince: count })),
  /** One row per histogram and definition: a latency whose definition changed is pooled apart for the older trials (olderDefinition, as for metrics). */
  pooled: z.array(
    z.object({ name: z.string(), trials: count, damagedTrials: count, count, p50Ms: nnum, p95Ms: nnum, p99Ms: nnum, olderDefinition: z.object({ since: z.string(), change: z.string() }).nullable() }),
  ),
  /** The aggregated trials that stored no latency histograms (in no pooled latency), and how many are imports of the reference's files. */
  withoutHistograms: z.object({ trials: count, referenceImports: count }),
});
export type ScenarioSummaryData = z.infer<typeof ScenarioSummarySchema>;

/** Trials by the kind of flag they carry (src-shared/domain/trial-flags.ts FlagKindCounts). */
const flagKindCounts = { traceOnly: count, ramBacked: count, pageCache: count, stalled: count, spilled: count, queueingBound: count, gpuTier: count, other: count };

/** One suite label of a report or a comparison's side (null: suites without one) and its suites. */
const SuiteLabelGroupSchema = z.object({ label: z.string().nullable(), suiteIds: z.array(int) });

export const ScenarioReportSchema = z.object({
  method: z.string(),
  includeIncomplete: z.boolean(),
  /** Flagged trials were left out of the aggregates (each in its group's `excluded`, with its flags). */
  excludeFlagged: z.boolean(),
  /** With excludeFlagged, the trials so left out, in all and by kind; null without it. */
  excludedFlagged: z.object({ trials: count, ...flagKindCounts }).nullable(),
  /** The suite labels of the report's trials with their suites; more than one: the groups are split by label. */
  suiteLabels: z.array(SuiteLabelGroupSchema),
  scenarios: z.array(ScenarioSummarySchema),
});

/**
 * source: where the drive's limits come from; measuredAt: when the drive probe behind them ran (ISO 8601), apart from source;
 * readNote: why a probe that ran gave no read limit (its reads came from memory …); null otherwise. read/writeLimitFrom: whose
 * each drive limit is (the probe's, or stated by the user); memoryCopySource and memoryCopyMeasuredAt: the memory copy's own
 * (always a probe's), so a stated drive bandwidth never reads as the memory copy's source.
 */
export const ProbeLimitsSchema = z.object({
  readBytesPerS: nnum,
  writeBytesPerS: nnum,
  memoryCopyBytesPerS: nnum,
  source: z.string(),
  /** The sizes source states (a drive's, in its name), for the app to restate in its units. */
  sourceSizes: z.array(StatedSizeSchema).optional(),
  measuredAt: z.string().nullable(),
  readNote: z.string().nullable(),
  readLimitFrom: z.enum(['probe', 'stated']),
  writeLimitFrom: z.enum(['probe', 'stated']),
  memoryCopySource: z.string(),
  memoryCopyMeasuredAt: z.string().nullable(),
  /** The GPU copy probe's limits, its source and time (all null / 'none' in reports made before it was kept). */
  gpuH2dBytesPerS: nnum.optional(),
  gpuD2hBytesPerS: nnum.optional(),
  gpuCopySource: z.string().optional(),
  gpuCopyMeasuredAt: z.string().nullable().optional(),
});

export const TierRowSchema = z.object({
  scenarioId: z.string(),
  label: z.string(),
  configKey: z.string(),
  configDescription: z.string(),
  systemId: z.string(),
  systemLabel: z.string(),
  driveId: z.string().nullable(),
  driveLabel: z.string().nullable(),
  driveSizeBytes: z.number().nonnegative().nullable().optional(),
  /** The suite label of the row's trials (null: none). */
  suiteLabel: z.string().nullable(),
  gpuMemGb: nnum,
  cpuMemGb: nnum,
  /** The users it started with; an autoscaled row's users at the end are finalUsers. */
  numUsers: nnum,
  finalUsers: nnum,
  /** Trials aggregated; fewestTrials: the fewest one of the row's medians is over, with trialsNote saying which (null where all are over n). */
  n: count,
  fewestTrials: count,
  trialsNote: z.string().nullable(),
  wallClockTokPerS: nnum,
  storageTokPerS: nnum,
  speedupWallClock: nnum,
  speedupStorageMetric: nnum,
  /** Why the row has no speedup, or how its baseline differs (other users); null for an exact baseline. */
  baselineNote: z.string().nullable(),
  /** The users of the storage-only run the speedup is against, where they differ from the row's. */
  speedupBaselineUsers: nnum,
  gpuReadP95Ms: nnum,
  cpuReadP95Ms: nnum,
  storageReadP95Ms: nnum,
  storageWriteP95Ms: nnum,
  bytesRead: nnum,
  bytesWritten: nnum,
  storageReadBytesPerS: nnum,
  storageWriteBytesPerS: nnum,
  storageReadEfficiency: nnum,
  storageWriteEfficiency: nnum,
  cpuReadEfficiency: nnum,
  /** While the link was busy, not over the window as the others (EFFICIENCY_DEFINITIONS in domain/tiers.ts). */
  gpuReadBusyEfficiency: nnum,
  gpuWriteBusyEfficiency: nnum,
  /** Why an efficiency is null (the tier moved no bytes that way, a RAM-backed directory, no limit …); null where there is one. */
  storageReadEfficiencyNote: z.string().nullable(),
  storageWriteEfficiencyNote: z.string().nullable(),
  cpuReadEfficiencyNote: z.string().nullable(),
  gpuReadBusyEfficiencyNote: z.string().nullable(),
  gpuWriteBusyEfficiencyNote: z.string().nullable(),
  limits: ProbeLimitsSchema,
});
export type TierRowData = z.infer<typeof TierRowSchema>;

export const TierComparisonSchema = z.object({
  baseline: z.string().nullable(),
  /** Partial trials were aggregated too. */
  includeIncomplete: z.boolean(),
  /** Flagged trials were left out of the medians. */
  excludeFlagged: z.boolean(),
  probe: ProbeLimitsSchema,
  rows: z.array(TierRowSchema),
  notes: z.array(z.string()),
});

const winnerSchema = z.enum(['a', 'b', 'tie']).nullable();

export const ConfigComparisonSchema = z.object({
  key: z.string(),
  scenarioId: z.string(),
  /** Every scenario whose trials the row counts (scenarios that ran the same configuration are one). */
  scenarioIds: z.array(z.string()),
  description: z.string(),
  placeA: z.string(),
  placeB: z.string(),
  cpuMemGb: nnum,
  model: z.string().nullable(),
  numUsers: nnum,
  nA: count,
  nB: count,
  medianA: nnum,
  medianB: nnum,
  ratio: nnum,
  cvA: nnum,
  cvB: nnum,
  winner: winnerSchema,
  /** The noise test (NOISE_RULE): mean ln A − mean ln B, its standard error, degrees of freedom, two-sided p-value. */
  logRatio: nnum,
  standardError: nnum,
  df: nnum,
  pValue: nnum,
  withinNoise: z.boolean().nullable(),
  /** Trials of each side's median that the report flags (RAM-backed, page-cache reads, a stall). */
  flaggedA: count,
  flaggedB: count,
  /** With excludeFlagged, each side's flagged trials of this row left out of it; 0 without. */
  excludedA: count,
  excludedB: count,
  /** The kvbench versions that measured the row's values (unknown ones left out); mixedDefinitions: they straddle a change of the metric's definition (no winner then). */
  measuredBy: z.array(z.string()),
  mixedDefinitions: z.boolean(),
});

/** Changes of a metric's definition a comparison's trials straddle: its ratios mix them, so it has no verdict, win rate or p-value. */
const mixedDefinitions = z.array(z.object({ since: z.string(), change: z.string() }));

export const MetricComparisonSchema = z.object({
  metric: MetricDefinitionSchema,
  configs: z.array(ConfigComparisonSchema),
  compared: count,
  meanRatio: nnum,
  geoMeanRatio: nnum,
  medianRatio: nnum,
  /**
   * A's share of the `tested` configurations beyond the noise by their own test with A better
   * (winsA ÷ tested); null where none tested is beyond the noise. Untested ones never count.
   */
  winRateA: nnum,
  winsA: count,
  winsB: count,
  /**
   * The side the metric favours: one Welch test of the mean log ratio over the configurations with 2
   * or more trials a side ('within-noise': p ≥ 0.05; 'unknown': no configuration has 2 trials a side,
   * so no side is named).
   */
  verdict: z.enum(['a', 'b', 'within-noise', 'unknown']).nullable(),
  /** The side the geometric mean (the bar, the quantity the verdict tests) favours; null at 1. */
  leader: z.enum(['a', 'b']).nullable(),
  /** Configurations in the metric's test, and its standard error, degrees of freedom and p-value. */
  tested: count,
  standardError: nnum,
  df: nnum,
  pValue: nnum,
  /** Why the arithmetic mean ratio or the win rate favour the other side than the verdict; null when they agree. */
  verdictCaveat: z.string().nullable(),
  withinNoise: count,
  noiseUnknown: count,
  medianCvA: nnum,
  medianCvB: nnum,
  /** Compared configurations with a flagged trial on either side. */
  flaggedConfigs: count,
  mixedDefinitions,
});
export type MetricComparisonData = z.infer<typeof MetricComparisonSchema>;

export const GroupComparisonSchema = z.object({
  group: z.string(),
  configs: count,
  /** Each metric over the group's configurations by the per-metric table's rules (no arithmetic mean: it would average in a 0x). */
  metrics: z.array(
    MetricComparisonSchema.pick({ compared: true, tested: true, noiseUnknown: true, geoMeanRatio: true, verdict: true, leader: true, pValue: true, winRateA: true, winsA: true, winsB: true, mixedDefinitions: true }).extend({
      key: z.string(),
      label: z.string(),
    }),
  ),
  /** A candidate whose verdict over the group is beyond the noise, or null; winRate its side's share of the configurations tested. */
  bestDifferentiator: z
    .object({ key: z.string(), label: z.string(), geoMeanRatio: num, pValue: nnum, tested: count, winRate: nnum, side: z.enum(['a', 'b']) })
    .nullable(),
});

const SideCautionsSchema = z.object({
  matchedTrials: count,
  flaggedTrials: count,
  ...flagKindCounts,
  /** The RAM-backed trials by what held the directory in memory ('loop0 → /dev/shm/d.img on tmpfs'; null: not recorded). */
  ramBackings: z.array(z.object({ backing: z.string().nullable(), trials: count })),
});
export type SideCautionsData = z.infer<typeof SideCautionsSchema>;

const ComparisonSideSchema = z.object({
  label: z.string(),
  /** The system's or drive's id; a suite label's is the label itself. */
  id: z.string(),
  /** A drive side's size in bytes, where its label states one, for the app to restate in its units; null or absent: none. */
  sizeBytes: z.number().nonnegative().nullable().optional(),
  trials: count,
  /** The suites its trials belong to: those a suite label pools. */
  suiteIds: z.array(int),
});

export const SystemComparisonSchema = z.object({
  kind: z.enum(COMPARISON_KINDS),
  a: ComparisonSideSchema,
  b: ComparisonSideSchema,
  match: z.enum(['config', 'scenario']),
  matched: count,
  unmatchedA: count,
  unmatchedB: count,
  method: z.string(),
  metrics: z.array(MetricComparisonSchema),
  byCpuMem: z.array(GroupComparisonSchema),
  byModel: z.array(GroupComparisonSchema),
  variance: z.array(z.object({ users: num, configs: count, medianCvA: nnum, medianCvB: nnum })),
  /** Each side's matched trials the report flags, by why (the notes say it in words). */
  cautions: z.object({ a: SideCautionsSchema, b: SideCautionsSchema }),
  /** Flagged trials were left out of every row, ratio and verdict (asked for; off by default). */
  excludeFlagged: z.boolean(),
  /** With excludeFlagged, each side's matched trials before it and those it left out, by why; null without. */
  excludedFlagged: z.object({ a: SideCautionsSchema, b: SideCautionsSchema }).nullable(),
  /** The suite labels of each side's matched trials (null: none) with their suites; several on a side: it counts them together, and a note says so. */
  suiteLabels: z.object({ a: z.array(SuiteLabelGroupSchema), b: z.array(SuiteLabelGroupSchema) }),
  /** The one suite label both sides (two systems or drives) are narrowed to; null: every suite of each side. */
  suiteLabel: z.string().nullable(),
  notes: z.array(z.string()),
});

// ---------------------------------------------------------------------------------------------
// Endpoint runs (the records of src-shared/domain/endpoint.ts, as src-main/endpoint/endpoint-store.ts reads them)

const endpointRunStatus = z.enum(ENDPOINT_RUN_STATUSES);
/** A system label to look up (the CLI's --system-label rules apply when a run is recorded). */
const systemLabel = z.string().min(1).max(100);

export type DistributionData = Distribution;

/** A stored run as listed: identity, configuration and flat metrics (the catalogue's keys), without its aggregates and server metrics. */
export const EndpointRunRowSchema = EndpointRunRecordSchema.omit({ aggregates: true, serverMetrics: true }).extend({
  /** Flat metric key → why it may not be the run's own share (serverMetricCaveats): a listing marks those values. */
  metricCaveats: z.record(z.string(), z.string()),
});
export type EndpointRunRowData = z.infer<typeof EndpointRunRowSchema>;

export const EndpointRunDetailSchema = EndpointRunRowSchema.extend({
  // The pooled inter-token histogram (for merging runs) stays in the store and the exports.
  aggregates: EndpointAggregatesSchema.omit({ itlHistogram: true }),
  serverMetrics: ServerCacheMetricsSchema,
});
export type EndpointRunDetailData = z.infer<typeof EndpointRunDetailSchema>;

export const EndpointFailedRequestSchema = z.object({
  seq: count,
  requestId: z.string(),
  batchIndex: count,
  contextTokens: count,
  status: z.enum(REQUEST_STATUSES),
  httpStatus: int.nullable(),
  error: z.string().nullable(),
});

export type EndpointComparisonData = EndpointComparison;

/** Which endpoint runs an export holds (none given: every run). */
export const EndpointExportFilterSchema = z.strictObject({
  labels: z.array(systemLabel).min(1).max(100).optional(),
  runIds: z.array(int.positive()).min(1).max(10_000).optional(),
  statuses: z.array(endpointRunStatus).min(1).max(3).optional(),
});
export type EndpointExportFilter = z.infer<typeof EndpointExportFilterSchema>;

// ---------------------------------------------------------------------------------------------
// Events from the backend to the page (events.ts: how they travel and are checked). Here rather than
// in events.ts because two of them carry this file's IpcError and Settings, and the suite status
// below carries them all.

export const PREPARATION_STEPS = ['detecting', 'probing', 'planning'] as const;

export const AppEventSchema = z.discriminatedUnion('type', [
  // The suite runner's own events, unchanged.
  SuiteEventSchema,
  /** Between suite.start and suite.started: hardware detection and the drive probe take seconds. */
  z.object({ type: z.literal('suite.preparationProgressed'), step: z.enum(PREPARATION_STEPS), message: z.string() }),
  /** The suite could not start or stopped on an error outside any trial (trial failures are trial events). */
  z.object({ type: z.literal('suite.failed'), suiteId: int.positive().nullable(), error: IpcErrorSchema }),
  /** Trials, suites or systems were added or removed (import, delete, a finished trial). */
  z.object({ type: z.literal('history.changed'), reason: z.string() }),
  /**
   * A database chosen in Settings is being upgraded as it opens (the once-only fill of imported
   * trials, backfillNotice): `message` is the line the log has, as the app's window title shows it
   * at the first open ("database /path: upgrading 3000 imported trials' records (once; …) …").
   */
  z.object({ type: z.literal('database.upgradeProgressed'), databasePath: z.string(), message: z.string() }),
  /**
   * A recovery of the damaged database (database.recover) is under way: its newest step ("copying
   * trials: 4,000 rows of about 10,000"), a few times a second at most; `ended` once it is over, however
   * it ended (its answer says how; a page takes app.info again). The recovery runs off the backend's
   * thread, so every other request answers meanwhile; app.info's databaseRecovering says the same.
   */
  z.object({ type: z.literal('database.recoveryProgressed'), databasePath: z.string(), outPath: z.string(), message: z.string(), ended: z.boolean() }),
  z.object({ type: z.literal('settings.changed'), settings: SettingsSchema }),
]);

// ---------------------------------------------------------------------------------------------
// Suite state (for a page that attaches while a suite runs, e.g. after a reload)

export const SUITE_STATES = ['idle', 'preparing', 'running'] as const;

export const SuiteStatusSchema = z.object({
  state: z.enum(SUITE_STATES),
  suiteId: int.nullable(),
  /** What the running suite was started with. */
  request: PlanRequestSchema.nullable(),
  plan: SuitePlanSchema.nullable(),
  startedAt: z.string().nullable(),
  /** This run's events so far (trial events all; progress thinned to the last few hundred). */
  events: z.array(AppEventSchema),
});
export type SuiteStatus = z.infer<typeof SuiteStatusSchema>;

// ---------------------------------------------------------------------------------------------
// The channels

export const EXPORT_FORMATS = ['csv', 'xlsx', 'json'] as const;
/** What a CSV export holds: the trials (one row per trial) or the report's table (one row per group and metric). */
export const EXPORT_CONTENTS = ['trials', 'report'] as const;
export const MAX_IMPORT_FILES = 50;
/** Per file, as text (results JSON with raw per-request lists can be large). */
export const MAX_IMPORT_FILE_CHARS = 64 * 1024 * 1024;
/**
 * All files of one import together. The served mode holds a whole request in memory several times
 * over (body, text, parsed), so this bounds its memory, not MAX_IMPORT_FILES × MAX_IMPORT_FILE_CHARS.
 */
export const MAX_IMPORT_TOTAL_CHARS = 128 * 1024 * 1024;

/** A file the backend made for the page to save (a download; a save dialog in the desktop app). */
const exportedFile = { fileName: z.string(), mimeType: z.string(), dataBase64: z.string(), bytes: count };

/**
 * Where export.create's file went: never through this reply (a large export would be held whole, and
 * again as base64, by both sides). `download`: kvbench serve wrote it to a private temporary file,
 * which the page downloads once from `url` (this server's origin; removed once downloaded, after 10
 * minutes unclaimed, or when the server stops). `saved`: the desktop app wrote it to `path`, the file
 * its save dialog named.
 */
const ExportDeliverySchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('download'), url: z.string() }),
  z.object({ kind: z.literal('saved'), path: z.string() }),
]);

/**
 * The damaged stored rows an answer had to leave out (or read without their hardware snapshot), in
 * the store's words (Store.unreadable): the page says them, so a trial is never missing unexplained.
 * Absent or empty: every row was read.
 */
const unreadableRows = z.array(z.string()).optional();

/**
 * The open database is damaged (PRAGMA quick_check fails): the app shows a read-only copy, in memory,
 * of what could be read (as the CLI's history, report and export read it), never writes to the file,
 * and refuses what would write (a suite, a resume, an import, a delete) as DB_CORRUPT.
 */
const DamagedDatabaseSchema = z.object({
  /** What SQLite found ("SQLite quick_check: …"). */
  damage: z.string(),
  /** Every finding is placed (in a row left out, an index, unused pages): with `unreadable` empty, every stored row was read. */
  allPlaced: z.boolean(),
  /** Each row or range of rows the copy could not read, and what that costs, in the store's words (empty: none). */
  unreadable: z.array(z.string()),
  /** The trials the copy holds. */
  trialsRead: count,
});
export type DamagedDatabase = z.infer<typeof DamagedDatabaseSchema>;

export const CONTRACT = {
  'app.info': {
    request: empty,
    response: z.object({
      version: z.string(),
      mode: z.enum(['electron', 'browser']),
      platform: z.string(),
      hostname: z.string(),
      databasePath: z.string(),
      /** Why the database could not be opened (the app still runs; Settings can point elsewhere). */
      databaseError: IpcErrorSchema.nullable(),
      /** The database is damaged and shown read-only from a copy of what could be read; null: it is not. */
      databaseDamaged: DamagedDatabaseSchema.nullable(),
      /** A recovery of the damaged database into `outPath` is under way (database.recover): its newest step; null: none. */
      databaseRecovering: z.object({ outPath: z.string(), message: z.string() }).nullable(),
      /**
       * The database was written by a newer kvbench that records this build may read it: it is read as
       * it is, and suites, resumes, imports and deletes are refused (DB_TOO_NEW) for this reason, which
       * names the kvbench they need; null: not so.
       */
      databaseReadOnly: z.string().nullable(),
      /** What opening the database did that its user must know: an upgrade of an older kvbench's file (from and to which schema, which kvbench can no longer open it, where the file as it was is kept). */
      databaseNotes: z.array(z.string()),
      settingsFile: z.string(),
      settings: SettingsSchema,
      /** Each part of the settings file that could not be used (an invalid value, an unknown key), by key and why; empty: all of it was. */
      settingsProblems: z.array(z.string()),
      /**
       * Why the default cache directory the settings hold would be refused if it were saved now (not an
       * absolute path, a system directory, a file), or null: one an older kvbench saved, or a folder that
       * has since become a file. It stays in the settings as saved, and is still the suggested one.
       */
      defaultCacheDirProblem: z.string().nullable(),
      /** The wizard's first cache directory: the default from Settings, else the one this machine's last suite used, else one under the temp directory. */
      suggestedCacheDir: z.string(),
      models: z.array(z.string()),
      defaultModel: z.string(),
      engineHasGpuTier: z.boolean(),
    }),
  },
  'settings.get': { request: empty, response: SettingsSchema },
  'settings.update': {
    request: SettingsSchema.partial()
      .extend({
        /** The user confirmed a new, empty database at `databasePath`: without it, a path with no database there is NOT_FOUND (the page then asks). */
        createDatabase: z.boolean().optional(),
      })
      .strict(),
    response: SettingsSchema,
  },
  /**
   * The open database is damaged: what could be read is written to a new database at `outPath` (an
   * absolute path naming no file, in a folder that exists), as `kvbench recover` does, and the app
   * switches to it as Settings does. Refused (VALIDATION) where the open database is not damaged or the
   * path exists; the damaged file is only read.
   */
  'database.recover': {
    request: z.strictObject({ outPath: z.string().min(1).max(4096) }),
    response: z.object({
      settings: SettingsSchema,
      recovery: z.object({
        file: z.string(),
        from: z.string(),
        damage: z.string(),
        /** Each part of the damaged database that could not be read, in the store's words (empty: nothing was lost). */
        lost: z.array(z.string()),
        trials: count,
        suites: count,
        systems: count,
        endpointRuns: count,
      }),
    }),
  },
  'hardware.detect': {
    request: z.strictObject({ cacheDir: z.string().min(1), probe: z.boolean().optional() }),
    response: z.object({ hardware: HardwareProfileSchema, advice: z.array(AdviceSchema) }),
  },
  'suite.plan': {
    request: PlanRequestSchema,
    response: z.object({ plan: SuitePlanSchema, hardware: HardwareProfileSchema, advice: z.array(AdviceSchema) }),
  },
  'suite.start': {
    request: PlanRequestSchema.extend({ label: labelTextSchema('label').nullable().optional() }).strict(),
    response: z.object({ suiteId: int }),
  },
  'suite.cancel': { request: empty, response: z.object({ cancelled: z.boolean() }) },
  'suite.status': { request: empty, response: SuiteStatusSchema },
  /**
   * rerunDeleted: also run again the slots whose complete trial the user deleted ("Run deleted trials again"; the CLI's
   * --rerun-deleted). acrossVersions: the user confirmed running the trials left although their metric definitions
   * differ from those of the suite's complete trials (suite.resumeCheck); without it such a resume is VALIDATION.
   */
  'suite.resume': {
    request: z.strictObject({ suiteId: int.positive(), rerunDeleted: z.boolean().optional(), acrossVersions: z.boolean().optional() }),
    response: z.object({ suiteId: int }),
  },
  /**
   * What a resume of the suite would cross, before the user confirms it: which kvbench started it, measured its
   * complete trials and would run the rest, the metric definitions that differ (changes), in words (text: null
   * where nothing differs); needsConsent: the definitions differ, so suite.resume wants acrossVersions.
   */
  'suite.resumeCheck': {
    request: z.strictObject({ suiteId: int.positive() }),
    response: z.object({
      startedBy: z.string(),
      measuredBy: z.array(z.string()),
      now: z.string(),
      changes: z.array(z.object({ metric: z.string(), since: z.string(), change: z.string() })),
      text: z.string().nullable(),
      needsConsent: z.boolean(),
    }),
  },
  'history.list': {
    request: z.strictObject({
      selection: SelectionSchema,
      sort: z.strictObject({ key: z.string().min(1).max(100), dir: z.enum(['asc', 'desc']) }).optional(),
      limit: int.min(1).max(5000).optional(),
      offset: count.optional(),
    }),
    response: z.object({
      trials: z.array(TrialRecordSchema),
      total: count,
      /** The listed trials the report flags, with why (as trials.get's `cautions`, the CLI's `!` and the CSV's caution column); absent: none. */
      cautions: z.array(z.object({ trialId: int, messages: z.array(z.string()) })).optional(),
      unreadable: unreadableRows,
    }),
  },
  'history.facets': {
    /** With History's selection, `matching` counts each filter's values under the selection's other filters. */
    request: z.strictObject({ selection: SelectionSchema.optional() }),
    response: z.object({
      systems: z.array(SystemRecordSchema.extend({ trialCount: count })),
      drives: z.array(DriveRecordSchema.extend({ trialCount: count })),
      scenarioIds: z.array(z.string()),
      models: z.array(z.string()),
      /** Labels of suites with trials, the most recently used first. */
      suiteLabels: z.array(SuiteLabelFacetSchema),
      trialCount: count,
      /** Given a selection: per filter, its values' trials under the selection's other filters (a value absent: none; facetMatches). */
      matching: z.record(z.enum(FACET_FILTERS), z.record(z.string(), count)).optional(),
    }),
  },
  'history.ids': {
    /** Every trial history.list lists under the selection, on every page (its order: newest start first), and their suites (ascending): History's "select all matching". */
    request: z.strictObject({ selection: SelectionSchema }),
    response: z.object({ trialIds: z.array(int), suiteIds: z.array(int) }),
  },
  'trials.get': {
    request: z.strictObject({ id: int.positive() }),
    response: z.object({
      trial: TrialRecordSchema,
      hardware: HardwareProfileSchema.nullable(),
      histograms: z.array(z.object({ name: z.string(), unit: z.string(), count })),
      /** Why its numbers need a second look, as the report says it (a RAM-backed cache directory and what held it, page-cache reads, a stall …). */
      cautions: z.array(z.string()),
      /** A damaged hardware snapshot (or results) the trial is shown without, in the store's words. */
      unreadable: unreadableRows,
      /** Its engine's memory over the window and the queueing verdict, from its stored results; null (or absent) without results or with unreadable ones. */
      engine: TrialEngineSchema.nullable().optional(),
      /** Its GPU tier as its stored results describe it (the GPUs, the driver, reserved of asked, pinned, why it fell short); null or absent: none asked for, or no readable results. */
      gpu: TrialGpuSchema.nullable().optional(),
    }),
  },
  'trials.delete': { request: z.strictObject({ ids: z.array(int.positive()).min(1).max(100_000) }), response: z.object({ deleted: count }) },
  'suites.list': {
    request: z.strictObject({ systemIds: z.array(z.string().min(1)).optional(), limit: int.min(1).max(10_000).optional() }),
    response: z.array(SuiteRecordSchema),
  },
  'suites.delete': { request: z.strictObject({ id: int.positive() }), response: z.object({ deleted: z.boolean() }) },
  'report.build': {
    request: z.strictObject({ selection: SelectionSchema, includeIncomplete: z.boolean().optional(), excludeFlagged: z.boolean().optional(), stated: StatedBandwidthSchema.optional() }),
    response: z.object({
      title: z.string(),
      trialCount: count,
      report: ScenarioReportSchema,
      tiers: TierComparisonSchema,
      suite: SuiteRecordSchema.nullable(),
      unreadable: unreadableRows,
    }),
  },
  'report.compare': {
    request: z.strictObject({
      /** A and B are system or drive ids (or labels), or suite labels. */
      kind: z.enum(COMPARISON_KINDS),
      a: z.string().min(1),
      b: z.string().min(1),
      match: z.enum(['config', 'scenario']).optional(),
      scenarioIds: z.array(z.string().min(1)).optional(),
      /** Leave the trials the report flags out of the comparison (default: counted, and marked). */
      excludeFlagged: z.boolean().optional(),
      /** Two systems or drives: only the trials of suites with this label, on both sides (refused with kind 'label'). */
      suiteLabel: z.string().min(1).optional(),
    }),
    response: SystemComparisonSchema.extend({ unreadable: unreadableRows }),
  },
  'export.create': {
    // The XLSX and JSON exports carry the tier comparison: with `stated`, as the report on screen shows it.
    request: z.strictObject({
      selection: SelectionSchema,
      format: z.enum(EXPORT_FORMATS),
      includeIncomplete: z.boolean().optional(),
      /** Leave flagged trials out of the aggregates (the file says so); a CSV, one row per trial, lists them all with their cautions. */
      excludeFlagged: z.boolean().optional(),
      stated: StatedBandwidthSchema.optional(),
      /**
       * What a CSV (one table) holds: the trials, one row per trial (the default: History's export), or
       * the report's rows, per group and metric the median, P95 and CV (the report page's). XLSX and
       * JSON files carry both.
       */
      content: z.enum(EXPORT_CONTENTS).optional(),
    }),
    response: z.union([
      z.object({ fileName: z.string(), mimeType: z.string(), bytes: count, trialCount: count, unreadable: unreadableRows, delivery: ExportDeliverySchema }),
      // The desktop app's save dialog was closed without a file: nothing read, nothing written.
      z.object({ dismissed: z.literal(true) }),
    ]),
  },
  'import.results': {
    request: z.strictObject({
      files: z
        .array(
          z.strictObject({
            name: z.string().min(1).max(255),
            text: z.string().max(MAX_IMPORT_FILE_CHARS),
            /** The file's modification time on the user's machine (File.lastModified), ms since the epoch. */
            lastModifiedMs: z
              .number()
              .int()
              .nonnegative()
              .max(MAX_DATE_MS, { error: 'lastModifiedMs is past any date (the year 275760)' })
              .optional(),
          }),
        )
        .min(1)
        .max(MAX_IMPORT_FILES)
        .refine((files) => files.reduce((n, f) => n + f.text.length, 0) <= MAX_IMPORT_TOTAL_CHARS, {
          message: `the files hold more than ${MAX_IMPORT_TOTAL_CHARS / 1024 / 1024} Mi characters in all: import them in smaller groups`,
        }),
      systemLabel: labelTextSchema('systemLabel').min(1),
      driveLabel: labelTextSchema('driveLabel').nullable().optional(),
      scenarioId: z.string().min(1).optional(),
      /** The kv-cache.py / kvbench run flags the files were produced with. */
      runFlags: z.string().max(4000).nullable().optional(),
      label: labelTextSchema('label').nullable().optional(),
    }),
    response: z.object({
      suiteId: int,
      systemId: z.string().nullable(),
      imported: z.array(z.object({ file: z.string(), trialId: int, format: z.enum(RESULTS_FORMATS), status: z.string(), reason: z.string().nullable(), configKnown: z.boolean() })),
      /** Files whose results are stored already (trialId: the trial that holds them; null: another file of this import). */
      skipped: z.array(z.object({ file: z.string(), trialId: int.nullable(), message: z.string() })),
      errors: z.array(z.object({ file: z.string(), message: z.string() })),
    }),
  },
  'endpoint.list': {
    request: z.strictObject({ labels: z.array(systemLabel).max(100).optional(), limit: int.min(1).max(10_000).optional() }),
    response: z.object({
      labels: z.array(z.object({ systemLabel: z.string(), runs: count, complete: count, latestStartedAt: z.string() })),
      /** Newest first. */
      runs: z.array(EndpointRunRowSchema),
    }),
  },
  'endpoint.get': {
    request: z.strictObject({ id: int.positive() }),
    response: z.object({
      run: EndpointRunDetailSchema,
      /** The requests that did not succeed, in order (at most MAX_FAILED_REQUESTS; the counts are in aggregates.failuresByStatus). */
      failedRequests: z.array(EndpointFailedRequestSchema),
    }),
  },
  'endpoint.compare': {
    request: z
      .strictObject({
        labelA: systemLabel,
        labelB: systemLabel,
        /** Only the newest run of each label (else every complete run that sent the same requests (same requests digest): the median). */
        latest: z.boolean().optional(),
        includePartial: z.boolean().optional(),
        runIdsA: z.array(int.positive()).min(1).max(1000).optional(),
        runIdsB: z.array(int.positive()).min(1).max(1000).optional(),
      })
      .refine((r) => r.labelA !== r.labelB || (r.runIdsA !== undefined && r.runIdsB !== undefined), {
        error: 'choose two different system labels (or the runs of each side)',
      }),
    response: EndpointComparisonSchema,
  },
  'endpoint.export': {
    request: EndpointExportFilterSchema.extend({
      format: z.enum(EXPORT_FORMATS),
      /** CSV: one row per request instead of one per run. */
      requests: z.boolean().optional(),
    }).strict(),
    response: z.object({ ...exportedFile, runCount: count }),
  },
} as const satisfies Record<Channel, { request: z.ZodType; response: z.ZodType }>;

/** How many failed requests `endpoint.get` lists (a dead server fails every request of a long workload). */
export const MAX_FAILED_REQUESTS = 500;

/** Compile-time check that CONTRACT has no channel beyond CHANNELS (satisfies checks the other way). */
type ExtraChannels = Exclude<keyof typeof CONTRACT, Channel>;
const noExtraChannels: ExtraChannels extends never ? true : false = true;
void noExtraChannels;

export type RequestOf<C extends Channel> = z.input<(typeof CONTRACT)[C]['request']>;
export type ParsedRequestOf<C extends Channel> = z.output<(typeof CONTRACT)[C]['request']>;
export type ResponseOf<C extends Channel> = z.output<(typeof CONTRACT)[C]['response']>;
