// The one report model every output is drawn from (terminal tables, CSV, XLSX, JSON, and later the
// app's charts): per-scenario aggregates across trials, the tier comparison, and the comparison of
// two systems or drives over matched configurations (the analysis of seeds/002, automated).
//
// Aggregation rules (src-shared/domain/statistics.ts): per metric, the median and the P95 of the
// per-trial values (linear interpolation), with the trial count and the CV. Latency percentiles are
// never averaged across trials; where histograms are stored, pooled percentiles come from merging them.
import { ramBackingOf, type HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { MULTI_HOST_SCENARIO_ID, SCENARIOS, SCENARIO_IDS, isScenarioId, scenarioLabel } from '../../src-shared/domain/scenarios.ts';
import { aggregate, combinedLogTest, formatP, geometricMean, meanLogRatio, mean, median, NOISE_RULE, ratio, welchLogTest, type Aggregate, type NoiseTest, PERCENTILE_METHOD } from '../../src-shared/domain/statistics.ts';
import { CONFIG_MATCH_KEYS, CONFIG_MATCH_KEYS_WHEN_SET, isPercentileMetric, METRIC_BY_KEY, METRICS, type MetricDefinition, type TrialHistogram, type TrialRecord, type TrialRowStatus } from '../../src-shared/domain/store-types.ts';
import { LatencyHistogram } from '../engine/metrics/latency-histogram.ts';
import { configKey, describeConfig, isUnknownConfigKey, optionValue } from '../store/results-ingest.ts';
import { assessPageCache, type PageCacheVerdict } from '../../src-shared/domain/page-cache.ts';
import { EFFICIENCY_NOISE_CEILING } from '../../src-shared/domain/results.ts';
import { placeKey, placeLabel, spansSeveralPlaces } from '../../src-shared/domain/places.ts';
import { compareVersions, straddledChanges } from '../../src-shared/domain/metric-changes.ts';
import { attemptStandings } from '../../src-shared/domain/trial-slots.ts';
import { ENGINE_STALL_REASON_START, engineStallReason } from '../../src-shared/domain/engine-stall.ts';

/** How each metric is aggregated over a group's trials. */
export const PER_TRIAL_METHOD = `median and P95 across trials (${PERCENTILE_METHOD}); CV = sample standard deviation ÷ mean`;
/** How the pooled latencies are made, where trials stored histograms. */
export const POOLED_METHOD = 'pooled latency percentiles from merged HDR histograms';
export const REPORT_METHOD = `${PER_TRIAL_METHOD}; ${POOLED_METHOD}`;


export interface ExcludedTrial {
  trialId: number;
  trialIndex: number;
  attempt: number;
  status: TrialRowStatus;
  reason: string | null;
  /** A later attempt of the same trial slot (a resumed suite's retry) counts instead of this one. */
  supersededBy: { trialId: number; attempt: number; status: TrialRowStatus } | null;
}

/** An aggregated trial whose numbers need a second look (it is partial, its storage reads were not all the device's, its engine stalled, or its autoscaler found no peak or missed its latency target). */
export interface TrialCaution {
  trialId: number;
  trialIndex: number;
  message: string;
}

export interface MetricAggregate {
  metric: MetricDefinition;
  aggregate: Aggregate;
}

export interface PooledLatency {
  name: string;
  trials: number;
  /**
   * Trials whose histogram of this name does not decode (stored before imports refused such files):
   * left out of the percentiles, and every reader says so.
   */
  damagedTrials: number;
  count: number;
  /** Null where no trial's histogram could be read. */
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

export interface ScenarioSummary {
  scenarioId: string;
  label: string;
  configKey: string;
  configDescription: string;
  options: Record<string, unknown>;
  /** The one system (and drive, where known) whose trials these are: aggregates never mix machines. */
  systemId: string;
  systemLabel: string;
  driveId: string | null;
  driveLabel: string | null;
  /** [systemLabel]; kept for readers of older exports. */
  systemLabels: string[];
  trialsTotal: number;
  /** Trials whose metrics are aggregated (complete ones, unless incomplete ones were asked for). */
  trialIds: number[];
  excluded: ExcludedTrial[];
  cautions: TrialCaution[];
  /**
   * Aggregated trials whose storage reads were not all the device's (the page cache served them, or
   * the cache directory was RAM-backed): cautionsOf's test. Their read numbers describe RAM, so the
   * tier comparison gives the group no read efficiency.
   */
  storageReadFlagged: number;
  metrics: MetricAggregate[];
  pooled: PooledLatency[];
}

export interface ScenarioReport {
  method: string;
  includeIncomplete: boolean;
  scenarios: ScenarioSummary[];
}

function scenarioOrder(id: string): number {
  const i = (SCENARIO_IDS as readonly string[]).indexOf(id);
  return i < 0 ? SCENARIO_IDS.length : i;
}

/** Pooled percentiles of one histogram over several trials: merge, then read. */
export function pooledLatency(name: string, histograms: readonly TrialHistogram[]): PooledLatency | null {
  const merged = new LatencyHistogram();
  let trials = 0;
  let damagedTrials = 0;
  for (const h of histograms) {
    if (h.name !== name || h.count <= 0) continue;
    if (LatencyHistogram.decodeProblem(h.hdr) !== null) {
      // Left out rather than failing the report, but counted: a latency must never vanish unsaid.
      damagedTrials += 1;
      continue;
    }
    merged.merge(LatencyHistogram.decode(h.hdr, h.sumNs));
    trials += 1;
  }
  if (merged.count === 0) return damagedTrials === 0 ? null : { name, trials, damagedTrials, count: 0, p50Ms: null, p95Ms: null, p99Ms: null };
  const s = merged.summary();
  return { name, trials, damagedTrials, count: s.count, p50Ms: s.p50Ns / 1e6, p95Ms: s.p95Ns / 1e6, p99Ms: s.p99Ns / 1e6 };
}

/** Why a trial's numbers need a second look, if they do: its storage reads were not all the device's, its engine stalled, its capacity autoscaler found no peak, or its qos autoscaler's target was not met. */
export function cautionsOf(t: TrialRecord): TrialCaution[] {
  return [...storageReadCaution(t), ...stallCaution(t), ...noPeakCaution(t), ...qosTargetCaution(t)].map((message) => ({ trialId: t.id, trialIndex: t.trialIndex, message }));
}

/** A capacity run whose window closed before throughput stopped rising: its "peak" is a lower bound. */
function noPeakCaution(t: TrialRecord): string[] {
  if (t.metrics.autoscale_peak_found !== 0) return [];
  return ['the capacity autoscaler found no peak (the window closed while throughput was still rising): its peak throughput and users are only the highest seen so far'];
}

/** A qos run whose final users do not fit under its latency target, or rest on no latency sample. */
function qosTargetCaution(t: TrialRecord): string[] {
  if (t.metrics.autoscale_target_met === 0) {
    return ["the qos autoscaler's latency target was not met at the end (the storage P95 was over its threshold in the last interval that measured it): its final users do not fit under the target"];
  }
  // From 0.6.0 on a qos run states whether it met the target; without that, no interval measured it.
  const qos = t.options.enableAutoscaling === true && t.options.autoscalerMode === 'qos';
  if (!qos || t.metrics.autoscale_target_met !== undefined || t.resultsFormat !== 'kvbench' || !measuredSince(t, '0.6.0')) return [];
  return ['the qos autoscaler never measured storage latency (in no interval did a storage operation complete or stay in flight past the threshold): its final users rest on no latency sample'];
}

/**
 * Whether kvbench `version` or later measured the trial. A trial whose measuring version is not known
 * (the reference's, or one imported before it was kept) gets no version-gated caution: its rules
 * cannot be told.
 */
const measuredSince = (t: TrialRecord, version: string): boolean =>
  t.resultsFormat === 'kvbench' && t.measuredByVersion !== null && compareVersions(t.measuredByVersion, version) >= 0;

/**
 * A window that closed far past its plan. Trials kvbench measures from now on are partial then; this
 * flags those stored complete before, and partial ones a report was asked to include. Only kvbench's
 * fixed windows (0.2.0 on) close at the plan: 0.1.0 drained in-flight requests inside the window.
 */
function stallCaution(t: TrialRecord): string[] {
  // The engine's own verdict already says it stalled (the status reason, shown with the trial).
  if (t.status !== 'complete' && (t.statusReason ?? '').startsWith(ENGINE_STALL_REASON_START)) return [];
  const durationS = t.options.duration;
  const elapsedS = t.metrics.elapsed_s;
  if (!measuredSince(t, '0.2.0')) return [];
  if (typeof durationS !== 'number' || elapsedS === undefined) return [];
  const stall = engineStallReason({ plannedNs: durationS * 1e9, elapsedNs: elapsedS * 1e9, lagMaxNs: null });
  return stall === null ? [] : [stall];
}

/**
 * A trial counted although it is not complete (a partial one a report was asked to include): its
 * numbers sit in the medians beside complete trials', so its status and reason go with them.
 */
function incompleteCaution(t: TrialRecord): TrialCaution[] {
  if (t.status === 'complete') return [];
  const why = (t.statusReason ?? 'no reason recorded').split('\n')[0];
  return [{ trialId: t.id, trialIndex: t.trialIndex, message: `counted although ${t.status}: ${why}` }];
}

/**
 * What a RAM-backed cache directory may be on. A trial stores only that it was (the results' kind of
 * backing is no metric), so the words cover every kind kvbench tells, not only a filesystem: a loop
 * device whose file is on tmpfs is the common one on a test machine.
 */
const RAM_BACKED_KINDS = 'tmpfs, ramfs, or a loop device or RAM disk whose bytes are in memory';

function storageReadCaution(t: TrialRecord): string[] {
  if (t.metrics.storage_ram_backed === 1) {
    return [`the cache directory was RAM-backed (${RAM_BACKED_KINDS}): its storage numbers describe memory, not a drive`];
  }
  const verdict = pageCacheVerdict(t);
  return verdict.flagged ? [`${verdict.reason ?? 'the engine flagged its storage reads'}, so its storage read numbers may describe RAM`] : [];
}

/**
 * The engine's own verdict where its file carried one (page_cache_flagged), else the same rule
 * (src-shared/domain/page-cache.ts) over the coverages stored with the trial: a trial stored before
 * the verdict was kept. A file with neither (the reference's) had no device counters to judge by.
 * The stored facts rebuild the engine's reason, less the device's name and byte counts.
 */
function pageCacheVerdict(t: TrialRecord): PageCacheVerdict {
  const m = t.metrics;
  const engine = m.page_cache_flagged;
  const hasCoverage = m.device_read_coverage !== undefined || m.process_read_coverage !== undefined;
  if (engine === undefined && !hasCoverage) return { flagged: false, reason: null };
  const verdict = assessPageCache({
    directIo: m.storage_direct_io === undefined ? null : m.storage_direct_io === 1,
    storageReadBytes: null,
    counters: hasCoverage ? { device: null, readCoverage: m.device_read_coverage ?? null, processReadCoverage: m.process_read_coverage ?? null, processReason: null } : null,
    unavailableReason: null,
  });
  if (engine === undefined) return verdict;
  return { flagged: engine === 1, reason: engine === 1 ? verdict.reason : null };
}

const POOLED_HISTOGRAMS = ['end_to_end', 'storage_io_per_request', 'tier_read.storage', 'tier_write.storage', 'tier_read.cpu', 'tier_write.cpu'];

/**
 * Per scenario, configuration, system and drive: every catalogue metric aggregated over the
 * included trials. Equal options on two machines are two measurements, never one aggregate.
 * Incomplete trials (partial, failed, aborted, still running) are listed as excluded unless
 * `includeIncomplete` (then partial ones count; failed and aborted never do). One trial slot counts
 * once: an attempt a resume retried is listed as superseded by the attempt that counts
 * (src-shared/domain/trial-slots.ts, the rule resume runs by).
 */
export function buildScenarioReport(
  trials: readonly TrialRecord[],
  opts: { includeIncomplete?: boolean; histogramsOf?: (trialId: number) => TrialHistogram[] } = {},
): ScenarioReport {
  const includeIncomplete = opts.includeIncomplete ?? false;
  const standings = attemptStandings(trials, includeIncomplete);
  const groups = new Map<string, TrialRecord[]>();
  for (const t of trials) {
    const k = `${t.scenarioId}\u0000${t.configKey}\u0000${placeKey(t)}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(t);
  }
  const scenarios: ScenarioSummary[] = [];
  for (const group of groups.values()) {
    const first = group[0];
    const included = group.filter((t) => standings.get(t)!.counted);
    // Per-trial percentiles get no mean: a mean of P95s is no percentile of anything (style.md).
    const aggregateOf = (key: string): Aggregate => aggregate(included.map((t) => t.metrics[key]), { percentiles: isPercentileMetric(key) });
    const metrics = METRICS.map((metric) => ({ metric, aggregate: aggregateOf(metric.key) })).filter((m) => m.aggregate.n > 0);
    let pooled: PooledLatency[] = [];
    if (opts.histogramsOf && included.length > 0) {
      const hs = included.flatMap((t) => opts.histogramsOf!(t.id));
      pooled = POOLED_HISTOGRAMS.map((n) => pooledLatency(n, hs)).filter((p): p is PooledLatency => p !== null);
    }
    scenarios.push({
      scenarioId: first.scenarioId,
      label: scenarioLabel(first.scenarioId),
      configKey: first.configKey,
      configDescription: Object.keys(first.options).length > 0 ? describeConfig(first.options) : 'configuration unknown',
      options: first.options,
      systemId: first.systemId,
      systemLabel: first.systemLabel,
      driveId: first.driveId,
      driveLabel: first.driveLabel,
      systemLabels: [first.systemLabel],
      trialsTotal: group.length,
      trialIds: included.map((t) => t.id),
      excluded: group
        .filter((t) => !standings.get(t)!.counted)
        .map((t) => {
          const by = standings.get(t)!.supersededBy;
          return {
            trialId: t.id,
            trialIndex: t.trialIndex,
            attempt: t.attempt,
            status: t.status,
            reason: t.statusReason,
            supersededBy: by === null ? null : { trialId: by.id, attempt: by.attempt, status: by.status },
          };
        }),
      cautions: included.flatMap((t) => [...incompleteCaution(t), ...cautionsOf(t)]),
      storageReadFlagged: included.filter((t) => storageReadCaution(t).length > 0).length,
      metrics,
      pooled,
    });
  }
  scenarios.sort(
    (a, b) =>
      scenarioOrder(a.scenarioId) - scenarioOrder(b.scenarioId) ||
      a.configDescription.localeCompare(b.configDescription) ||
      placeLabel(a).localeCompare(placeLabel(b)) ||
      placeKey(a).localeCompare(placeKey(b)),
  );
  return { method: REPORT_METHOD, includeIncomplete, scenarios };
}

export function metricOf(s: ScenarioSummary, key: string): Aggregate | null {
  return s.metrics.find((m) => m.metric.key === key)?.aggregate ?? null;
}

// ---------------------------------------------------------------------------------------------
// Tier comparison

export interface TierRow {
  scenarioId: string;
  label: string;
  configKey: string;
  configDescription: string;
  systemId: string;
  systemLabel: string;
  driveId: string | null;
  driveLabel: string | null;
  gpuMemGb: number | null;
  cpuMemGb: number | null;
  /** The users it started with (an autoscaled row's, not what it ended at: finalUsers). */
  numUsers: number | null;
  /** An autoscaled row's users at the end, the median over its trials; null for a fixed user count. */
  finalUsers: number | null;
  n: number;
  wallClockTokPerS: number | null;
  storageTokPerS: number | null;
  /** Median wall-clock throughput ÷ storage-only's. */
  speedupWallClock: number | null;
  /** Median storage throughput (the reference's metric, as in seeds/003) ÷ storage-only's. */
  speedupStorageMetric: number | null;
  /** Why this row has no speedup, or how its baseline differs (other users); null for an exact baseline. */
  baselineNote: string | null;
  /** The users of the storage-only run this row's speedup is against, where they differ from the row's. */
  speedupBaselineUsers: number | null;
  gpuReadP95Ms: number | null;
  cpuReadP95Ms: number | null;
  storageReadP95Ms: number | null;
  storageWriteP95Ms: number | null;
  bytesRead: number | null;
  bytesWritten: number | null;
  storageReadBytesPerS: number | null;
  storageWriteBytesPerS: number | null;
  /** Storage read (write) bandwidth ÷ the drive's sequential read (write) bandwidth from the probe. */
  storageReadEfficiency: number | null;
  storageWriteEfficiency: number | null;
  /** CPU-tier read bandwidth ÷ one thread's memory-copy bandwidth. */
  cpuReadEfficiency: number | null;
  /** The limits this row's efficiencies are against: from its own trials' hardware snapshot. */
  limits: ProbeLimits;
}

export interface ProbeLimits {
  readBytesPerS: number | null;
  writeBytesPerS: number | null;
  memoryCopyBytesPerS: number | null;
  source: string;
  /** Why a probe that ran gave no read limit (its reads came from memory, or its read phase did not complete); null otherwise. */
  readNote: string | null;
}

export interface TierComparison {
  baseline: string | null;
  /** Partial trials were aggregated too (`--include-incomplete`). */
  includeIncomplete: boolean;
  /** The rows' limits when they share them (one suite); with several, null rates and a source that says so. */
  probe: ProbeLimits;
  rows: TierRow[];
  notes: string[];
}

/** One profile for every row, or each trial's own snapshot. */
export type HardwareSource = HardwareProfile | null | ((trialId: number) => HardwareProfile | null);

/** A drive's bandwidth as its datasheet states it (bytes/s), given by the user instead of the probe's. */
export interface StatedBandwidth {
  readBytesPerS: number | null;
  writeBytesPerS: number | null;
}

/** A stated bandwidth for rows of several systems or drives (one datasheet describes one drive): a VALIDATION error. */
export class StatedBandwidthRefused extends Error {
  readonly code = 'VALIDATION';
}

const NO_LIMITS: ProbeLimits = { readBytesPerS: null, writeBytesPerS: null, memoryCopyBytesPerS: null, source: 'none', readNote: null };

/** Why the probe stored in `hw` has no read limit although it ran; null where it has one, or did not run. */
function probeReadNote(hw: HardwareProfile): string | null {
  const bw = hw.cacheDir?.bandwidth ?? null;
  if (!bw) return null;
  if (bw.pageCacheSuspected) {
    const ram = ramBackingOf(hw.cacheDir!);
    return ram !== null ? `the probe's reads came from memory (${ram} is RAM-backed)` : 'the page cache may have served the probe\'s reads';
  }
  return bw.readBytesPerSec === null ? 'the probe\'s read phase did not complete' : null;
}

/** The drive's and memory's limits a hardware snapshot measured. */
export function probeLimitsOf(hw: HardwareProfile | null): ProbeLimits {
  if (!hw) return NO_LIMITS;
  const bw = hw.cacheDir?.bandwidth ?? null;
  return {
    readNote: probeReadNote(hw),
    // Snapshots stored before the probe refused them kept a read rate the page cache may have served.
    readBytesPerS: bw?.pageCacheSuspected ? null : (bw?.readBytesPerSec ?? null),
    writeBytesPerS: bw?.writeBytesPerSec ?? null,
    memoryCopyBytesPerS: hw.memoryCopyBytesPerSec ?? null,
    source: bw
      ? `kvbench probe (${bw.directIo ? 'O_DIRECT' : 'buffered'}, ${bw.chunkBytes / 1048576} MiB × ${bw.depth}) of ${hw.cacheDir!.driveLabel}, ${bw.measuredAt}`
      : hw.memoryCopyBytesPerSec
        ? 'memory-copy probe only'
        : 'none',
  };
}

const hasProbe = (hw: HardwareProfile | null): boolean => Boolean(hw?.cacheDir?.bandwidth) || Boolean(hw?.memoryCopyBytesPerSec);

/**
 * A group's own limits: from the newest of its aggregated trials' snapshots that probed anything
 * (else its newest snapshot), never another system's or drive's.
 */
function groupLimits(s: ScenarioSummary, hardware: HardwareSource): ProbeLimits {
  if (typeof hardware !== 'function') return probeLimitsOf(hardware);
  let newest: HardwareProfile | null = null;
  for (const id of [...s.trialIds].reverse()) {
    const hw = hardware(id);
    if (!hw) continue;
    if (hasProbe(hw)) return probeLimitsOf(hw);
    newest ??= hw;
  }
  return probeLimitsOf(newest);
}

/** The stated directions replace the probed ones; the source says which is which. */
function withStated(l: ProbeLimits, stated: StatedBandwidth | null): ProbeLimits {
  if (!stated || (stated.readBytesPerS === null && stated.writeBytesPerS === null)) return l;
  const gbps = (b: number): string => `${(b / 1e9).toFixed(2)} GB/s`;
  const given = [
    stated.readBytesPerS !== null ? `read ${gbps(stated.readBytesPerS)}` : null,
    stated.writeBytesPerS !== null ? `write ${gbps(stated.writeBytesPerS)}` : null,
  ].filter((x): x is string => x !== null);
  const both = stated.readBytesPerS !== null && stated.writeBytesPerS !== null;
  return {
    ...l,
    readBytesPerS: stated.readBytesPerS ?? l.readBytesPerS,
    writeBytesPerS: stated.writeBytesPerS ?? l.writeBytesPerS,
    readNote: stated.readBytesPerS !== null ? null : l.readNote,
    source: `stated by the user (${given.join(', ')})${both ? '' : `; the other direction: ${l.source}`}`,
  };
}

const sameLimits = (a: ProbeLimits, b: ProbeLimits): boolean =>
  a.readBytesPerS === b.readBytesPerS && a.writeBytesPerS === b.writeBytesPerS && a.memoryCopyBytesPerS === b.memoryCopyBytesPerS && a.source === b.source && a.readNote === b.readNote;

/** The tier layout: what a row may differ in from the storage-only row it is compared with. */
const TIER_LAYOUT_KEYS: readonly string[] = ['gpuMemGb', 'cpuMemGb'];

/**
 * A configuration apart from its tier layout: the configuration key of the options without the tier
 * budgets. A speedup is only a speedup between runs that differ in nothing else (users, duration,
 * warm-up, I/O chunk and depth …); null for a configuration that is not known (an import without
 * --run-flags), which matches nothing.
 */
function configApartFromTiers(s: ScenarioSummary, alsoIgnore: readonly string[] = []): string | null {
  if (Object.keys(s.options).length === 0) return null;
  return configKey(Object.fromEntries(Object.entries(s.options).filter(([k]) => !TIER_LAYOUT_KEYS.includes(k) && !alsoIgnore.includes(k))));
}

/** The workload options (other than `ignore`, by default the tier layout) in which `a` differs from `b`, as "numUsers 200 vs 50". */
function differingOptions(a: Record<string, unknown>, b: Record<string, unknown>, ignore: readonly string[] = TIER_LAYOUT_KEYS): string[] {
  const keys = [...CONFIG_MATCH_KEYS, ...CONFIG_MATCH_KEYS_WHEN_SET].filter((k) => !ignore.includes(k));
  const show = (v: unknown): string => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  return keys.filter((k) => show(optionValue(a, k)) !== show(optionValue(b, k))).map((k) => `${k} ${show(optionValue(a, k))} vs ${show(optionValue(b, k))}`);
}

/** Run by several hosts at once (a merged multi-host result, or one rank's share of one): world size above 1. */
function isMultiHost(s: ScenarioSummary): boolean {
  const worldSize = optionValue(s.options, 'worldSize');
  return s.scenarioId === MULTI_HOST_SCENARIO_ID || (typeof worldSize === 'number' && worldSize > 1);
}

/**
 * Each tier configuration's throughput, per-tier P95 (medians across trials of per-trial P95s),
 * bytes moved, speedup against storage-only, and efficiency against the probed limits: of
 * `hardware` when one profile is given (one suite), else of each row's own trials' snapshots; or
 * against the drive's stated (datasheet) bandwidth where the user gives it.
 */
export function buildTierComparison(report: ScenarioReport, hardware: HardwareSource, stated: StatedBandwidth | null = null): TierComparison {
  const med = (s: ScenarioSummary, key: string): number | null => metricOf(s, key)?.median ?? null;
  // A multi-host run is many hosts' load on one storage, not a tier configuration of one host: known
  // by its world size, not its scenario, since an import may file a merged run under any scenario.
  const measured = report.scenarios.filter((s) => s.scenarioId !== 'imported' && metricOf(s, 'wall_clock_throughput_tok_per_s') !== null);
  const multiHost = measured.filter(isMultiHost);
  const rows = measured.filter((s) => !isMultiHost(s));
  // Each row's speedup is against the storage-only run of its own configuration apart from the tier
  // budgets, on the same system and drive: a storage-only row with other users, warm-up or I/O
  // options (another suite, or the suite's high-user scenarios) would make the ratio say how the
  // load differs, not what the tiers do. A storage-only row is its own baseline.
  const baselines = rows.filter((s) => s.scenarioId === 'storage-only');
  const baselineFor = new Map<ScenarioSummary, { base: ScenarioSummary | null; note: string | null }>(
    rows.map((s) => {
      if (s.scenarioId === 'storage-only') return [s, { base: s, note: null }];
      const own = configApartFromTiers(s);
      if (own === null) return [s, { base: null, note: 'configuration unknown (imported without --run-flags): no storage-only run to compare with' }];
      const here = baselines.filter((b) => placeKey(b) === placeKey(s));
      const same = here.filter((b) => configApartFromTiers(b) === own);
      if (same.length === 1) return [s, { base: same[0], note: null }];
      if (same.length > 1) return [s, { base: null, note: `${same.length} storage-only runs of this configuration differ only in their tier budgets: no single baseline` }];
      // The suite runs its spill-over scenarios (cpu-storage, gpu-cpu-storage) at more users than
      // storage-only, and the reference's wrapper compares them with it all the same: so does this,
      // saying so, when exactly one storage-only run differs in the users alone.
      const byUsers = configApartFromTiers(s, ['numUsers']);
      const otherUsers = here.filter((b) => configApartFromTiers(b, ['numUsers']) === byUsers);
      if (otherUsers.length === 1) {
        const b = otherUsers[0];
        return [s, { base: b, note: `against storage-only at ${String(b.options.numUsers)} users (this row: ${String(s.options.numUsers)}): the ratio includes the load difference` }];
      }
      const nearest = here.filter((b) => configApartFromTiers(b) !== null).map((b) => differingOptions(s.options, b.options)).sort((x, y) => x.length - y.length)[0];
      return [s, { base: null, note: `no storage-only run of this configuration${nearest ? ` (the nearest differs in ${nearest.join(', ')})` : ''}` }];
    }),
  );
  const baselineOf = (s: ScenarioSummary): ScenarioSummary | null => baselineFor.get(s)!.base;
  const baseline = baselines[0] ?? null;
  if (stated && spansSeveralPlaces(rows)) {
    throw new StatedBandwidthRefused('a stated bandwidth describes one drive, and these rows span several systems or drives: report one of them (--suite, --system)');
  }
  const limitsOf = new Map(rows.map((s) => [s, withStated(groupLimits(s, hardware), stated)]));
  const notes: string[] = [];
  if (multiHost.length > 0) {
    notes.push(
      `${multiHost.length} multi-host row(s) left out (${multiHost.map((s) => `${s.scenarioId}, ${s.configDescription}`).join('; ')}): ` +
        'several hosts on one storage, while this table compares one host\'s tier layouts',
    );
  }
  // A tmpfs "drive" against a probe taken on tmpfs is memory against memory: no storage efficiency.
  const onRam = (s: ScenarioSummary): boolean => (med(s, 'storage_ram_backed') ?? 0) > 0;
  const ramRows = rows.filter(onRam).length;
  if (ramRows > 0) notes.push(`${ramRows} row(s) ran on a RAM-backed cache directory (${RAM_BACKED_KINDS}): no storage efficiency there`);
  // Reads the page cache served are RAM's, whatever the drive's ceiling: no read efficiency (the
  // scenario report flags the same trials), rather than one above 100 % blamed on the probe.
  const readsFromCache = (s: ScenarioSummary): boolean => !onRam(s) && s.storageReadFlagged > 0;
  const cachedRows = rows.filter(readsFromCache);
  if (cachedRows.length > 0) {
    notes.push(
      `${cachedRows.length} row(s): the page cache served storage reads (${cachedRows.map((s) => `${s.scenarioId}${spansSeveralPlaces(rows) ? ` on ${placeLabel(s)}` : ''}: ${s.storageReadFlagged} of ${s.trialIds.length} trial(s)`).join('; ')}): ` +
        'their read numbers describe RAM, not the drive, so no read efficiency there',
    );
  }
  const trialsWord = report.includeIncomplete ? 'complete or partial' : 'complete';
  if (!baseline) notes.push(`no storage-only scenario with ${trialsWord} trials: no speedups`);
  const orphans = baseline ? rows.filter((s) => baselineOf(s) === null) : [];
  const atOtherUsers = rows.filter((s) => s !== baselineOf(s) && baselineOf(s) !== null && baselineOf(s)!.options.numUsers !== s.options.numUsers);
  for (const s of atOtherUsers) notes.push(`${s.scenarioId}, ${s.configDescription}${spansSeveralPlaces(rows) ? ` on ${placeLabel(s)}` : ''}: speedup ${baselineFor.get(s)!.note}`);
  if (orphans.length > 0) {
    notes.push(
      `${orphans.length} row(s) have no storage-only run of the same configuration apart from the tier budgets (users, duration, warm-up, I/O options …)` +
        `${spansSeveralPlaces(rows) ? ' on the same system and drive' : ''}: no speedup`,
    );
    for (const s of orphans) notes.push(`${s.scenarioId}, ${s.configDescription}${spansSeveralPlaces(rows) ? ` on ${placeLabel(s)}` : ''}: ${baselineFor.get(s)!.note}`);
  }
  // Rows on RAM have no storage efficiency whatever the probe did, and rows whose reads the page
  // cache served no read efficiency (their notes say so): what the probe lacks matters for the rest.
  const wantsLimit = rows.filter((s) => !onRam(s) && !(readsFromCache(s) && limitsOf.get(s)!.writeBytesPerS !== null));
  const unprobed = wantsLimit.filter((s) => limitsOf.get(s)!.readBytesPerS === null && limitsOf.get(s)!.readNote === null).length;
  const wantReadLimit = wantsLimit.filter((s) => !readsFromCache(s) && limitsOf.get(s)!.readBytesPerS === null);
  if (unprobed > 0 && unprobed === wantsLimit.length) notes.push('no bandwidth probe of the drive: no storage efficiency (run the suite with its probe, kvbench hw --probe, or state the drive\'s bandwidth: kvbench report --stated-read-gbps)');
  else if (unprobed > 0) notes.push(`${unprobed} row(s) have no bandwidth probe of their drive: no storage efficiency there (run the suite with its probe, or kvbench hw --probe)`);
  for (const why of new Set(wantReadLimit.map((s) => limitsOf.get(s)!.readNote).filter((n): n is string => n !== null))) {
    const n = wantReadLimit.filter((s) => limitsOf.get(s)!.readNote === why).length;
    notes.push(`${n} row(s): the drive was probed, but ${why}: no read limit, so no read efficiency there (state the drive's read bandwidth: kvbench report --stated-read-gbps)`);
  }
  const out: TierRow[] = rows.map((s) => {
    const base = baselineOf(s);
    const tok = med(s, 'wall_clock_throughput_tok_per_s');
    const stok = med(s, 'storage_throughput_tok_per_s');
    const rd = med(s, 'storage_read_bytes_per_s');
    const wr = med(s, 'storage_write_bytes_per_s');
    const cpuRd = med(s, 'cpu_read_bytes_per_s');
    const limits = limitsOf.get(s)!;
    return {
      scenarioId: s.scenarioId,
      label: s.label,
      configKey: s.configKey,
      configDescription: s.configDescription,
      systemId: s.systemId,
      systemLabel: s.systemLabel,
      driveId: s.driveId,
      driveLabel: s.driveLabel,
      gpuMemGb: typeof s.options.gpuMemGb === 'number' ? s.options.gpuMemGb : null,
      cpuMemGb: typeof s.options.cpuMemGb === 'number' ? s.options.cpuMemGb : null,
      numUsers: typeof s.options.numUsers === 'number' ? s.options.numUsers : null,
      finalUsers: s.options.enableAutoscaling === true ? med(s, 'autoscale_final_users') : null,
      n: s.trialIds.length,
      wallClockTokPerS: tok,
      storageTokPerS: stok,
      speedupWallClock: base ? ratio(tok, med(base, 'wall_clock_throughput_tok_per_s')) : null,
      speedupStorageMetric: base ? ratio(stok, med(base, 'storage_throughput_tok_per_s')) : null,
      baselineNote: baselineFor.get(s)!.note,
      speedupBaselineUsers: base && base.options.numUsers !== s.options.numUsers && typeof base.options.numUsers === 'number' ? base.options.numUsers : null,
      gpuReadP95Ms: med(s, 'gpu_read_p95_ms'),
      cpuReadP95Ms: med(s, 'cpu_read_p95_ms'),
      storageReadP95Ms: med(s, 'storage_read_p95_ms'),
      storageWriteP95Ms: med(s, 'storage_write_p95_ms'),
      bytesRead: med(s, 'total_read_bytes'),
      bytesWritten: med(s, 'total_write_bytes'),
      storageReadBytesPerS: rd,
      storageWriteBytesPerS: wr,
      storageReadEfficiency: onRam(s) || readsFromCache(s) ? null : ratio(rd, limits.readBytesPerS),
      storageWriteEfficiency: onRam(s) ? null : ratio(wr, limits.writeBytesPerS),
      cpuReadEfficiency: ratio(cpuRd, limits.memoryCopyBytesPerS),
      limits,
    };
  });
  // Above the ceiling (beyond noise): the ceiling, not the run, is what is off.
  const aboveCeiling = out.filter((r) => (r.storageReadEfficiency ?? 0) > EFFICIENCY_NOISE_CEILING || (r.storageWriteEfficiency ?? 0) > EFFICIENCY_NOISE_CEILING);
  if (aboveCeiling.length > 0) {
    const pct = (x: number | null): string => (x === null ? '—' : `${(x * 100).toFixed(0)} %`);
    notes.push(
      `${aboveCeiling.length} row(s) moved more than the drive's bandwidth the efficiency is measured against ` +
        `(${aboveCeiling.map((r) => `${r.scenarioId}: read ${pct(r.storageReadEfficiency)}, write ${pct(r.storageWriteEfficiency)}`).join('; ')}): ` +
        'that ceiling is too low — a probe disturbed by other load, one measuring another access pattern, or a stated figure below the drive — ' +
        'so the efficiencies are overstated; probe again on an idle machine (kvbench hw --probe) or state the drive\'s bandwidth',
    );
  }
  // Tier configurations first, in the wrapper's order; the rest after.
  out.sort((a, b) => {
    const ta = isScenarioId(a.scenarioId) && SCENARIOS[a.scenarioId].inTierComparison ? 0 : 1;
    const tb = isScenarioId(b.scenarioId) && SCENARIOS[b.scenarioId].inTierComparison ? 0 : 1;
    return ta - tb || scenarioOrder(a.scenarioId) - scenarioOrder(b.scenarioId);
  });
  return {
    baseline: baseline?.scenarioId ?? null,
    includeIncomplete: report.includeIncomplete,
    probe: commonLimits(out.map((r) => r.limits), hardware, stated),
    rows: out,
    notes,
  };
}


/** The one set of limits every row shares, or a placeholder that sends the reader to the rows. */
function commonLimits(all: readonly ProbeLimits[], hardware: HardwareSource, stated: StatedBandwidth | null): ProbeLimits {
  if (all.length === 0) return withStated(typeof hardware === 'function' ? NO_LIMITS : probeLimitsOf(hardware), stated);
  if (all.every((l) => sameLimits(l, all[0]))) return all[0];
  return { ...NO_LIMITS, source: 'several: each row against the probe stored with its own system and drive' };
}

// ---------------------------------------------------------------------------------------------
// System (or drive) comparison

export const COMPARISON_METRICS = [
  'decode_bytes_read',
  'wall_clock_throughput_tok_per_s',
  'storage_throughput_tok_per_s',
  'storage_read_bytes_per_s',
  'storage_write_bytes_per_s',
  'requests_per_s',
  'e2e_p95_ms',
  'storage_read_p95_ms',
  'storage_write_p95_ms',
] as const;

/** The metrics whose ability to tell A and B apart is ranked per CPU-tier size (seeds/002). */
const DIFFERENTIATOR_CANDIDATES = ['decode_bytes_read', 'wall_clock_throughput_tok_per_s', 'storage_throughput_tok_per_s', 'storage_read_bytes_per_s'];

export interface Side {
  label: string;
  id: string;
  trials: number;
}

export interface ConfigComparison {
  key: string;
  /** The first of scenarioIds. */
  scenarioId: string;
  /**
   * Every scenario whose trials this row counts, in suite order: scenarios that ran the same
   * configuration (a smoke suite's cpu-only and production) are one configuration, matched as one.
   */
  scenarioIds: string[];
  description: string;
  /** The system and drive each side's trials ran on (placeLabel): one each, never a pool of drives. */
  placeA: string;
  placeB: string;
  cpuMemGb: number | null;
  model: string | null;
  numUsers: number | null;
  nA: number;
  nB: number;
  medianA: number | null;
  medianB: number | null;
  /**
   * A ÷ B: the ratio of the sides' geometric means over their trials (exp of logRatio, the quantity
   * the noise test tests); where a value is 0 (no logarithm), medianA ÷ medianB.
   */
  ratio: number | null;
  cvA: number | null;
  cvB: number | null;
  /** Which side is better by the metric's direction (by the ratio); 'tie' at 1; null without both values or without a direction. */
  winner: 'a' | 'b' | 'tie' | null;
  /** mean(ln A) − mean(ln B) over the trials; null where a value is ≤ 0. */
  logRatio: number | null;
  /** The noise test's standard error of logRatio, degrees of freedom and two-sided p-value (NOISE_RULE); null where untestable. */
  standardError: number | null;
  df: number | null;
  pValue: number | null;
  /**
   * The difference may be run-to-run noise: p ≥ 0.05 (identical values always are); null when the
   * test cannot judge it (fewer than 2 trials on a side, or a value ≤ 0).
   */
  withinNoise: boolean | null;
  /** Trials of each side's median that the report flags (cautionsOf: RAM-backed, page-cache reads, a stall): counted in it all the same. */
  flaggedA: number;
  flaggedB: number;
}

export interface MetricComparison {
  metric: MetricDefinition;
  configs: ConfigComparison[];
  compared: number;
  /** Arithmetic mean of per-configuration ratios (seeds/002's "mean ratio"), and the geometric mean. */
  meanRatio: number | null;
  /**
   * The geometric mean of the per-configuration ratios over the configurations the noise test
   * covers (2 or more trials a side; where none has, over every one with a ratio): exp(D), with D the
   * mean of their log ratios, the very quantity the verdict tests, so the bar the app draws and the
   * verdict never point different ways.
   */
  geoMeanRatio: number | null;
  medianRatio: number | null;
  /**
   * Share of the configurations beyond the run-to-run noise (each by its own test) where A is
   * better; where none is, of those whose noise is unknown. A difference within the noise is a tie,
   * as equal values are; ties and undirected metrics have no side.
   */
  winRateA: number | null;
  /**
   * The side the metric favours, as every reader colours it: one Welch test of D (see geoMeanRatio)
   * over the configurations with 2 or more trials a side, Var(D) = Σ SE_i² ÷ k²: the side D
   * favours where p < 0.05, else 'within-noise'; 'unknown' when no configuration has 2 trials a
   * side (or a logarithm), unless every one is a tie; null without a direction or a ratio.
   */
  verdict: MetricVerdict;
  /** The side the geometric mean favours (the verdict's side, or the one an 'unknown' or a within-noise one leans to); null at 1. */
  leader: 'a' | 'b' | null;
  /** Configurations in the metric's test (2 or more trials a side, positive values), and its standard error, degrees of freedom and p-value. */
  tested: number;
  standardError: number | null;
  df: number | null;
  pValue: number | null;
  /**
   * Why the arithmetic mean ratio, or most configurations beyond the noise, favour the other side
   * than the verdict (or an 'unknown''s leader); null when they agree. The bar cannot disagree: it is
   * the geometric mean the verdict tests. Every reader shows it beside the verdict.
   */
  verdictCaveat: string | null;
  /** Configurations whose difference may be noise. */
  withinNoise: number;
  /** Configurations whose noise is unknown (one trial a side, or a value ≤ 0): neither within the noise nor beyond it. */
  noiseUnknown: number;
  /** Median CV of each side across configurations. */
  medianCvA: number | null;
  medianCvB: number | null;
  /** Compared configurations with a flagged trial on either side (see ConfigComparison.flaggedA): their ratios count, and are marked. */
  flaggedConfigs: number;
}

/**
 * A side's matched trials (complete trials of the configurations both sides ran) that the report
 * flags, by why: a trial may be counted under several reasons, and once in `flaggedTrials`.
 */
export interface SideCautions {
  matchedTrials: number;
  flaggedTrials: number;
  /** The cache directory was RAM-backed: the storage numbers describe memory, not a drive. */
  ramBacked: number;
  /** The page cache served storage reads (device or engine read coverage below the threshold). */
  pageCache: number;
  /** The engine's window closed far past its plan. */
  stalled: number;
  /** Flagged for a reason other than those three. */
  other: number;
}

export interface GroupComparison {
  group: string;
  configs: number;
  metrics: { key: string; label: string; meanRatio: number | null; winRateA: number | null; compared: number }[];
  /** The candidate that separates A and B best here: highest win rate for the winning side, then largest |ln ratio|. */
  bestDifferentiator: { key: string; label: string; meanRatio: number | null; winRate: number | null; side: 'a' | 'b' } | null;
}

export interface SystemComparison {
  a: Side;
  b: Side;
  match: 'config' | 'scenario';
  matched: number;
  unmatchedA: number;
  unmatchedB: number;
  method: string;
  metrics: MetricComparison[];
  byCpuMem: GroupComparison[];
  byModel: GroupComparison[];
  variance: { users: number; configs: number; medianCvA: number | null; medianCvB: number | null }[];
  /** Each side's matched trials the report flags: the ratios and verdicts count them, so the notes say so. */
  cautions: { a: SideCautions; b: SideCautions };
  notes: string[];
}

/** The side a ratio A ÷ B favours by the metric's direction; null at 1, without one or without a direction. */
function ratioSide(def: MetricDefinition, r: number | null): 'a' | 'b' | null {
  if (r === null || r === 1 || def.better === null) return null;
  return (def.better === 'higher') === r > 1 ? 'a' : 'b';
}

function winner(def: MetricDefinition, r: number | null, a: number | null, b: number | null): ConfigComparison['winner'] {
  if (a === null || b === null || def.better === null) return null;
  if (r !== null) return r === 1 ? 'tie' : ratioSide(def, r);
  if (a === b) return 'tie';
  return (def.better === 'higher') === a > b ? 'a' : 'b';
}

interface MatchedPair {
  key: string;
  a: TrialRecord[];
  b: TrialRecord[];
  /** A side of this configuration spans several drives: the description names each side's. */
  severalPlaces: boolean;
}

function compareConfigs(def: MetricDefinition, pairs: readonly MatchedPair[]): ConfigComparison[] {
  return pairs.map(({ key, a, b, severalPlaces }) => {
    const first = a[0] ?? b[0];
    const valuesA = a.map((t) => t.metrics[def.key]);
    const valuesB = b.map((t) => t.metrics[def.key]);
    const ga = aggregate(valuesA);
    const gb = aggregate(valuesB);
    const logRatio = meanLogRatio(valuesA, valuesB);
    const r = logRatio !== null ? Math.exp(logRatio) : ratio(ga.median, gb.median);
    const test = welchLogTest(valuesA, valuesB);
    return {
      key,
      scenarioId: first.scenarioId,
      scenarioIds: scenariosOf([...a, ...b]),
      description: `${describeConfig(first.options)}${severalPlaces ? ` — A on ${placeLabel(a[0])}, B on ${placeLabel(b[0])}` : ''}`,
      placeA: placeLabel(a[0]),
      placeB: placeLabel(b[0]),
      cpuMemGb: typeof first.options.cpuMemGb === 'number' ? first.options.cpuMemGb : null,
      model: typeof first.options.model === 'string' ? first.options.model : null,
      numUsers: typeof first.options.numUsers === 'number' ? first.options.numUsers : null,
      nA: ga.n,
      nB: gb.n,
      medianA: ga.median,
      medianB: gb.median,
      ratio: r,
      cvA: ga.cv,
      cvB: gb.cv,
      winner: winner(def, r, ga.median, gb.median),
      logRatio,
      standardError: test?.standardError ?? null,
      df: test?.df ?? null,
      pValue: test?.pValue ?? null,
      withinNoise: test === null ? null : !test.beyondNoise,
      flaggedA: a.filter(isFlagged).length,
      flaggedB: b.filter(isFlagged).length,
    };
  });
}

/**
 * 'unknown': no configuration has 2 or more trials a side (or a logarithm: a value ≤ 0), so the
 * noise cannot be judged and no side is named (as the endpoint compare names none without 2 runs a
 * side); `leader` says which side the geometric mean leans to.
 */
export type MetricVerdict = 'a' | 'b' | 'within-noise' | 'unknown' | null;

/**
 * The configurations the win rate counts: those whose difference is beyond the run-to-run noise;
 * where none is, those whose noise is unknown. A difference within the noise, or a tie, never counts.
 */
function deciding(configs: readonly ConfigComparison[]): ConfigComparison[] {
  const sided = configs.filter((c) => c.winner === 'a' || c.winner === 'b');
  const beyond = sided.filter((c) => c.withinNoise === false);
  return beyond.length > 0 ? beyond : sided.filter((c) => c.withinNoise === null);
}

/** A configuration's test as the metric's test combines it; null where it cannot take part (fewer than 2 trials a side). */
function configTest(c: ConfigComparison): NoiseTest | null {
  if (c.nA < 2 || c.nB < 2 || c.logRatio === null || c.standardError === null || c.pValue === null) return null;
  return { logRatio: c.logRatio, standardError: c.standardError, df: c.df, pValue: c.pValue, beyondNoise: c.withinNoise === false };
}

/** The metric's test over its configurations and the geometric mean it tests (see MetricComparison). */
function metricTest(configs: readonly ConfigComparison[]): { test: NoiseTest | null; tested: number; geoMeanRatio: number | null } {
  const tests = configs.map(configTest).filter((t): t is NoiseTest => t !== null);
  const test = combinedLogTest(tests);
  if (test !== null) return { test, tested: tests.length, geoMeanRatio: Math.exp(test.logRatio) };
  const logs = configs.map((c) => c.logRatio).filter((l): l is number => l !== null);
  // Untested: the bar is still the geometric mean of the ratios, with a zero where a side had none.
  const geo = logs.length > 0 ? Math.exp(mean(logs)!) : geometricMean(configs.map((c) => c.ratio));
  return { test: null, tested: 0, geoMeanRatio: geo };
}

/** See MetricComparison.verdict. */
export function metricVerdict(def: MetricDefinition, configs: readonly ConfigComparison[]): MetricVerdict {
  const valid = configs.filter((c) => c.ratio !== null);
  if (def.better === null || valid.length === 0) return null;
  const { test, geoMeanRatio } = metricTest(valid);
  if (test === null) return valid.every((c) => c.withinNoise === true) ? 'within-noise' : 'unknown';
  return test.beyondNoise ? ratioSide(def, geoMeanRatio) : 'within-noise';
}

const fmtX = (r: number | null): string => (r === null ? '—' : `${r.toFixed(2)}x`);

/**
 * See MetricComparison.verdictCaveat. The verdict weighs each configuration's difference by its
 * size on a log scale; the arithmetic mean weighs a ratio above 1 more than its inverse, and the
 * win rate counts configurations whatever the size of their differences.
 */
function verdictCaveat(
  def: MetricDefinition,
  verdict: MetricVerdict,
  leader: 'a' | 'b' | null,
  decided: readonly ConfigComparison[],
  figures: { meanRatio: number | null; geoMeanRatio: number | null; tested: number; pValue: number | null },
): string | null {
  const side = verdict === 'a' || verdict === 'b' ? verdict : verdict === 'unknown' ? leader : null;
  if (side === null) return null;
  const other = side === 'a' ? 'b' : 'a';
  const reasons: string[] = [];
  if (ratioSide(def, figures.meanRatio) === other) {
    reasons.push(`the arithmetic mean of the ratios, ${fmtX(figures.meanRatio)}, leans ${other.toUpperCase()}: it weighs a ratio above 1 more than its inverse (2x and 0.5x average 1.25x)`);
  }
  const forOther = decided.filter((c) => c.winner === other).length;
  if (forOther * 2 > decided.length) {
    const which = decided.some((c) => c.withinNoise === false) ? 'beyond the run-to-run noise' : 'of unknown noise';
    reasons.push(`${forOther} of the ${decided.length} configuration(s) ${which} favour ${other.toUpperCase()}: the win rate counts configurations, the verdict weighs each difference by its size`);
  }
  if (reasons.length === 0) return null;
  const basis =
    verdict === 'unknown'
      ? `${side.toUpperCase()}? (no side named): the geometric mean, ${fmtX(figures.geoMeanRatio)}, leans ${side.toUpperCase()}, untested (no configuration has 2 trials a side)`
      : `verdict ${side.toUpperCase()}: the geometric mean over the ${figures.tested} configuration(s) tested, ${fmtX(figures.geoMeanRatio)}, is beyond the noise (p = ${formatP(figures.pValue)})`;
  return `${basis}; ${reasons.join('; ')}`;
}

function summarise(def: MetricDefinition, configs: ConfigComparison[]): Omit<MetricComparison, 'flaggedConfigs'> {
  const valid = configs.filter((c) => c.ratio !== null);
  // A tie (both 0 where a tier is absent, or equal) favours neither side, so it is not in the rate;
  // nor does a difference within the run-to-run noise.
  const decided = deciding(configs);
  const withinNoiseCount = configs.filter((c) => c.withinNoise === true).length;
  const { test, tested, geoMeanRatio } = metricTest(valid);
  const meanRatio = mean(valid.map((c) => c.ratio));
  const verdict = metricVerdict(def, configs);
  const leader = ratioSide(def, geoMeanRatio);
  return {
    metric: def,
    configs,
    compared: valid.length,
    meanRatio,
    geoMeanRatio,
    medianRatio: median(valid.map((c) => c.ratio)),
    winRateA: decided.length > 0 ? decided.filter((c) => c.winner === 'a').length / decided.length : null,
    verdict,
    leader,
    tested,
    standardError: test?.standardError ?? null,
    df: test?.df ?? null,
    pValue: test?.pValue ?? null,
    verdictCaveat: verdictCaveat(def, verdict, leader, decided, { meanRatio, geoMeanRatio, tested, pValue: test?.pValue ?? null }),
    withinNoise: withinNoiseCount,
    noiseUnknown: valid.filter((c) => c.withinNoise === null).length,
    medianCvA: median(configs.map((c) => c.cvA)),
    medianCvB: median(configs.map((c) => c.cvB)),
  };
}

function groupComparison(group: string, metrics: MetricComparison[], keep: (c: ConfigComparison) => boolean): GroupComparison {
  const rows = metrics.map((m) => {
    const s = summarise(m.metric, m.configs.filter(keep));
    return { key: m.metric.key, label: m.metric.label, meanRatio: s.meanRatio, winRateA: s.winRateA, compared: s.compared };
  });
  let best: GroupComparison['bestDifferentiator'] = null;
  let bestScore = -Infinity;
  for (const r of rows) {
    if (!DIFFERENTIATOR_CANDIDATES.includes(r.key) || r.winRateA === null || r.meanRatio === null || r.meanRatio <= 0) continue;
    if (r.winRateA === 0.5) continue; // neither side is better more often: no differentiator
    const side: 'a' | 'b' = r.winRateA > 0.5 ? 'a' : 'b';
    const winRate = side === 'a' ? r.winRateA : 1 - r.winRateA;
    const score = winRate * 1000 + Math.abs(Math.log(r.meanRatio));
    if (score > bestScore) {
      bestScore = score;
      best = { key: r.key, label: r.label, meanRatio: r.meanRatio, winRate, side };
    }
  }
  const configs = metrics[0] ? metrics[0].configs.filter(keep).length : 0;
  return { group, configs, metrics: rows, bestDifferentiator: best };
}

const isFlagged = (t: TrialRecord): boolean => cautionsOf(t).length > 0;

/**
 * A side's trials of matched configurations that the comparison leaves out, not being complete
 * (partial, failed, aborted, running); an attempt a resume retried to completion is no trial missing.
 */
function leftOutOfMatched(trials: readonly TrialRecord[], matched: (key: string) => boolean, keyOf: (t: TrialRecord) => string): TrialRecord[] {
  const standings = attemptStandings(trials, false);
  return trials.filter((t) => t.status !== 'complete' && standings.get(t)!.supersededBy === null && matched(keyOf(t)));
}

/** "mlperf-large-model 1 partial; storage-only 2 failed": left-out trials counted per scenario and status. */
function describeLeftOut(trials: readonly TrialRecord[]): string {
  const counts = new Map<string, { scenarioId: string; status: string; n: number }>();
  for (const t of trials) {
    const k = `${t.scenarioId}\u0000${t.status}`;
    counts.set(k, { scenarioId: t.scenarioId, status: t.status, n: (counts.get(k)?.n ?? 0) + 1 });
  }
  return [...counts.values()].map((c) => `${c.scenarioId} ${c.n} ${c.status}`).join('; ');
}

/** The scenarios of these trials, once each, in suite order. */
const scenariosOf = (ts: readonly TrialRecord[]): string[] => [...new Set(ts.map((t) => t.scenarioId))].sort((x, y) => scenarioOrder(x) - scenarioOrder(y) || x.localeCompare(y));

/** See SideCautions. */
function sideCautions(trials: readonly TrialRecord[]): SideCautions {
  const ramBacked = (t: TrialRecord): boolean => t.metrics.storage_ram_backed === 1;
  // A RAM-backed directory's reads are memory's anyway: counted there, not as page-cache reads.
  const pageCache = (t: TrialRecord): boolean => !ramBacked(t) && storageReadCaution(t).length > 0;
  const stalled = (t: TrialRecord): boolean => stallCaution(t).length > 0;
  const flagged = trials.filter(isFlagged);
  return {
    matchedTrials: trials.length,
    flaggedTrials: flagged.length,
    ramBacked: trials.filter(ramBacked).length,
    pageCache: trials.filter(pageCache).length,
    stalled: trials.filter(stalled).length,
    other: flagged.filter((t) => !ramBacked(t) && !pageCache(t) && !stalled(t)).length,
  };
}

/** The notes that say what a side's flagged trials are: the comparison counts them like any other. */
function cautionNotes(name: string, label: string, c: SideCautions): string[] {
  const of = (n: number): string => `${n} of its ${c.matchedTrials} matched trial(s)`;
  return [
    c.ramBacked > 0 ? `${name} (${label}): ${of(c.ramBacked)} ran on a RAM-backed cache directory: their storage numbers describe memory, not a drive` : null,
    c.pageCache > 0 ? `${name} (${label}): in ${of(c.pageCache)} the page cache served storage reads: their storage read numbers describe RAM, not the drive` : null,
    c.stalled > 0 ? `${name} (${label}): in ${of(c.stalled)} the engine stalled (the window closed far past its plan): kvbench, not the drive, may have set their pace` : null,
    c.other > 0 ? `${name} (${label}): ${of(c.other)} carry another caution (kvbench report lists it per trial)` : null,
  ].filter((n): n is string => n !== null);
}

/** What the planner derives from each machine (its RAM and GPU memory): the only options `--match scenario` lets differ (storage capacity is no part of a configuration). */
const MACHINE_DERIVED_KEYS: readonly string[] = ['numUsers', 'gpuMemGb', 'cpuMemGb'];

/**
 * What `--match scenario` matches: the scenario, and every option of the configuration key but the
 * user count and tier budgets the planner derives from each machine. So a smoke suite never pools
 * with a standard one, nor a run with a concurrency cap, multi-turn off or another seed's dataset
 * with one without. A trial of unknown configuration (imported without --run-flags) keeps its own
 * key: the defaults are no guess at how it ran.
 */
function scenarioMatchKey(t: TrialRecord): string {
  const ownKey = t.scenarioId === 'imported' || isUnknownConfigKey(t.configKey);
  const workload = Object.fromEntries(Object.entries(t.options).filter(([k]) => !MACHINE_DERIVED_KEYS.includes(k)));
  return JSON.stringify([t.scenarioId, ownKey ? t.configKey : configKey(workload)]);
}

/** "numUsers 4 vs 8" for each machine-derived option whose values differ between the sides (several on a side: "4/8"). */
function derivedDifferences(a: readonly TrialRecord[], b: readonly TrialRecord[]): string[] {
  const values = (ts: readonly TrialRecord[], k: string): string => [...new Set(ts.map((t) => String(optionValue(t.options, k))))].sort().join('/');
  return MACHINE_DERIVED_KEYS.filter((k) => values(a, k) !== values(b, k)).map((k) => `${k} ${values(a, k)} vs ${values(b, k)}`);
}

/**
 * With `--match scenario`, what a reader cannot see in the rows: per matched scenario, the users and
 * tier budgets that differ between the sides; per scenario both sides ran but that matched nothing,
 * the options in which the other side's nearest configuration differs.
 */
function scenarioMatchNotes(ga: Map<string, Map<string, TrialRecord[]>>, gb: Map<string, Map<string, TrialRecord[]>>): string[] {
  const trialsOf = (g: Map<string, TrialRecord[]>): TrialRecord[] => [...g.values()].flat();
  const notes: string[] = [];
  for (const [k, pa] of ga) {
    const ta = trialsOf(pa);
    const first = ta[0];
    const pb = gb.get(k);
    if (pb) {
      const differ = derivedDifferences(ta, trialsOf(pb));
      if (differ.length > 0) notes.push(`${first.scenarioId} (${describeConfig(first.options)}): matched by scenario, A and B differ in ${differ.join(', ')}`);
      continue;
    }
    if (isUnknownConfigKey(first.configKey)) continue;
    const others = [...gb.entries()].filter(([kb, g]) => !ga.has(kb) && trialsOf(g)[0].scenarioId === first.scenarioId && !isUnknownConfigKey(trialsOf(g)[0].configKey));
    const nearest = others.map(([, g]) => differingOptions(first.options, trialsOf(g)[0].options, MACHINE_DERIVED_KEYS)).sort((x, y) => x.length - y.length)[0];
    if (nearest) notes.push(`${first.scenarioId} (${describeConfig(first.options)}): not matched, B's nearest run of this scenario differs in ${nearest.join(', ')} (--match scenario lets only the users and tier budgets differ)`);
  }
  return notes;
}

/** A comparison of a system or drive with itself: a VALIDATION error (its ratios would only show the noise of one set of trials split in two). */
export class ComparisonRefused extends Error {
  readonly code = 'VALIDATION';
}

/** How a system comparison is made, as every reader prints it beneath its table. */
export const COMPARISON_METHOD =
  'per configuration and drive (a side that ran a configuration on several drives has one row per drive, never a pool), over each side\'s complete trials: ' +
  'ratio = A ÷ B of the geometric means of the trials (medians shown beside it); ' +
  `beyond noise: ${NOISE_RULE}, per configuration (2 or more trials a side, values above 0; else its noise is unknown); ` +
  'better = the side the geometric mean of the ratios over the configurations so tested favours, where one such test of it (its variance the sum of theirs) gives p < 0.05, ' +
  '≈ noise where p ≥ 0.05, A? or B? (no side named) where no configuration has 2 trials a side; ' +
  'win rate = share of the configurations beyond the noise where A is better by the metric\'s direction (where none is, of those whose noise is unknown)';

/**
 * Compares two sets of trials (two systems, or two drives) over matched configurations: trials
 * with equal workload options (`config`), or, for suites planned on machines with different RAM,
 * the same scenario (`scenario`). Only complete trials count.
 */
export function buildSystemComparison(
  a: { label: string; id: string; trials: readonly TrialRecord[] },
  b: { label: string; id: string; trials: readonly TrialRecord[] },
  opts: { match?: 'config' | 'scenario'; metrics?: readonly string[]; kind?: 'system' | 'drive' } = {},
): SystemComparison {
  if (a.id === b.id) {
    const kind = opts.kind ?? 'system';
    throw new ComparisonRefused(`A and B are the same ${kind} (${a.label}, ${a.id}): compare two different ${kind}s`);
  }
  const match = opts.match ?? 'config';
  const keyOf = (t: TrialRecord): string => (match === 'config' ? t.configKey : scenarioMatchKey(t));
  // Per configuration, then per system and drive: a system whose configuration ran on two drives
  // has two measurements of it, and pooling them would hide the drives' difference (3× can come
  // out as a tie). Each drive is compared on its own, as the scenario report keeps them apart.
  const group = (ts: readonly TrialRecord[]): Map<string, Map<string, TrialRecord[]>> => {
    const m = new Map<string, Map<string, TrialRecord[]>>();
    for (const t of ts) {
      if (t.status !== 'complete') continue;
      let byPlace = m.get(keyOf(t));
      if (!byPlace) m.set(keyOf(t), (byPlace = new Map()));
      let g = byPlace.get(placeKey(t));
      if (!g) byPlace.set(placeKey(t), (g = []));
      g.push(t);
    }
    return m;
  };
  const ga = group(a.trials);
  const gb = group(b.trials);
  const pairs: MatchedPair[] = [...ga.keys()]
    .filter((k) => gb.has(k))
    .flatMap((k) => {
      const [pa, pb] = [ga.get(k)!, gb.get(k)!];
      const severalPlaces = pa.size > 1 || pb.size > 1;
      return [...pa].flatMap(([placeA, ta]) => [...pb].map(([placeB, tb]) => ({ key: severalPlaces ? `${k}\u0000${placeA}\u0000${placeB}` : k, a: ta, b: tb, severalPlaces })));
    });
  pairs.sort((x, y) => scenarioOrder(scenariosOf([...x.a, ...x.b])[0]) - scenarioOrder(scenariosOf([...y.a, ...y.b])[0]) || x.key.localeCompare(y.key));
  const metricKeys = opts.metrics ?? COMPARISON_METRICS;
  const metrics = metricKeys
    .map((k) => METRIC_BY_KEY[k])
    .filter((d): d is MetricDefinition => d !== undefined)
    .map((def) => summarise(def, compareConfigs(def, pairs)))
    .map((m) => ({ ...m, flaggedConfigs: m.configs.filter((c) => c.ratio !== null && c.flaggedA + c.flaggedB > 0).length }));
  const cpuValues = [...new Set(pairs.map((p) => p.a[0].options.cpuMemGb).filter((v): v is number => typeof v === 'number'))].sort((x, y) => x - y);
  const models = [...new Set(pairs.map((p) => p.a[0].options.model).filter((v): v is string => typeof v === 'string'))].sort();
  const users = [...new Set(pairs.map((p) => p.a[0].options.numUsers).filter((v): v is number => typeof v === 'number'))].sort((x, y) => x - y);
  const tput = metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s');
  const notes: string[] = [];
  if (pairs.length === 0) notes.push(`no ${match === 'config' ? 'configuration' : 'scenario'} has complete trials on both sides${match === 'config' ? ' (try --match scenario)' : ''}`);
  const oneTrial = pairs.filter((p) => p.a.length < 2 || p.b.length < 2).length;
  if (oneTrial > 0) {
    notes.push(
      `${oneTrial} matched configuration(s) have fewer than 2 trials on a side: their noise is unknown, so they stay out of each metric's geometric mean and verdict ` +
        'where other configurations have 2 or more, and where none has, no side is named (run 3–5 trials)',
    );
  }
  if (match === 'scenario') notes.push(...scenarioMatchNotes(ga, gb));
  for (const [name, side] of [['A', a], ['B', b]] as const) {
    const left = leftOutOfMatched(side.trials, (k) => ga.has(k) && gb.has(k), keyOf);
    if (left.length > 0) notes.push(`${name} (${side.label}): ${left.length} trial(s) of matched configurations left out, not complete (${describeLeftOut(left)}): only complete trials count`);
  }
  // Scenarios that ran one configuration are one measurement of it: matched as one row, under every name.
  const pooled = pairs.filter((p) => scenariosOf([...p.a, ...p.b]).length > 1);
  if (pooled.length > 0) {
    const named = (p: MatchedPair): string => {
      const [all, sa, sb] = [scenariosOf([...p.a, ...p.b]), scenariosOf(p.a), scenariosOf(p.b)].map((ids) => ids.join(' + '));
      return sa === sb ? all : `${all} (A ${sa}, B ${sb})`;
    };
    const scenarios = new Set(pairs.flatMap((p) => scenariosOf([...p.a, ...p.b]))).size;
    notes.push(
      `${pooled.length} matched configuration(s) were run by several scenarios, whose trials count together in one row: ${pooled.map(named).join('; ')} ` +
        `(${scenarios} scenarios, ${pairs.length} configurations)`,
    );
  }
  for (const [name, side] of [['A', a], ['B', b]] as const) {
    const unknown = side.trials.filter((t) => t.status === 'complete' && isUnknownConfigKey(t.configKey)).length;
    if (unknown > 0) notes.push(`${name} (${side.label}) has ${unknown} complete trial(s) of unknown configuration (imported without --run-flags): they match nothing`);
  }
  // The versions that measured the trials (the reference's, and imports from before it was kept, are unknown: left out).
  const measuredBy = pairs.flatMap((p) => [...p.a, ...p.b]).flatMap((t) => (t.measuredByVersion === null ? [] : [t.measuredByVersion]));
  for (const c of straddledChanges([...new Set(measuredBy)], metrics.map((m) => m.metric.key))) {
    notes.push(`${c.metric} changed definition in kvbench ${c.since} (it ${c.change}), and these trials were measured on both sides of it: its ratios mix the two`);
  }
  // Flagged trials stay in the medians: the numbers are what that setup measured (a RAM disk as a
  // ceiling is a fair question), and the caution concerns every throughput of the trial, not one
  // storage metric that could be left out. So they count, and the reader is told which and why.
  const cautions = { a: sideCautions(pairs.flatMap((p) => p.a)), b: sideCautions(pairs.flatMap((p) => p.b)) };
  const cautioned = [...cautionNotes('A', a.label, cautions.a), ...cautionNotes('B', b.label, cautions.b)];
  if (cautioned.length > 0) {
    notes.push(
      ...cautioned,
      'the ratios, win rates and verdicts count those trials like any other: a side named better on them may owe it to what flagged them, not to its drive ' +
        '(the flagged column counts the configurations they are in; --per-config shows them per configuration)',
    );
  }
  for (const [name, side, groups] of [['A', a, ga], ['B', b, gb]] as const) {
    const spread = [...groups].filter(([k, places]) => places.size > 1 && ga.has(k) && gb.has(k));
    if (spread.length === 0) continue;
    const drives = [...new Set(spread.flatMap(([, places]) => [...places.values()].map((ts) => placeLabel(ts[0]))))].sort();
    notes.push(
      `${name} (${side.label}) ran ${spread.length} matched configuration(s) on several drives (${drives.join('; ')}): each drive is compared on its own row, never pooled, ` +
        'so those configurations count once per drive in the ratios and win rates (see --per-config; compare drives directly with --drives)',
    );
  }
  return {
    a: { label: a.label, id: a.id, trials: a.trials.length },
    b: { label: b.label, id: b.id, trials: b.trials.length },
    match,
    matched: pairs.length,
    unmatchedA: [...ga.keys()].filter((k) => !gb.has(k)).length,
    unmatchedB: [...gb.keys()].filter((k) => !ga.has(k)).length,
    method: COMPARISON_METHOD,
    metrics,
    byCpuMem: cpuValues.map((v) => groupComparison(`CPU ${v} GiB`, metrics, (c) => c.cpuMemGb === v)),
    byModel: models.map((v) => groupComparison(v, metrics, (c) => c.model === v)),
    variance: users.map((u) => {
      const cs = tput ? tput.configs.filter((c) => c.numUsers === u) : [];
      return { users: u, configs: cs.length, medianCvA: median(cs.map((c) => c.cvA)), medianCvB: median(cs.map((c) => c.cvB)) };
    }),
    cautions,
    notes,
  };
}
