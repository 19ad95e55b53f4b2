// The scenario report: per scenario, configuration, system and drive, every catalogue metric
// aggregated over the included trials, with the trials that need a second look (cautions).
//
// Aggregation rules (src-shared/domain/statistics.ts): per metric, the median and the P95 of the
// per-trial values (linear interpolation), with the trial count and the CV. Latency percentiles are
// never averaged across trials; where histograms are stored, pooled percentiles come from merging them.
import { SCENARIO_IDS, SCENARIOS, isScenarioId, scenarioLabel, spilledTiers, tiersPastScenario } from '../../src-shared/domain/scenarios.ts';
import { TIER_NAMES, TIER_WORDS, tiersText, type TierName } from '../../src-shared/domain/tiers.ts';
import { binaryBytesText } from '../../src-shared/domain/hardware.ts';
import { aggregate, flagAggregate, type Aggregate, PERCENTILE_METHOD } from '../../src-shared/domain/statistics.ts';
import { isFlagMetric, isPercentileMetric, METRICS, type MetricDefinition, type TrialHistogram, type TrialRecord, type TrialRowStatus, type TrialsWithoutHistograms } from '../../src-shared/domain/store-types.ts';
import { LatencyHistogram } from '../engine/metrics/latency-histogram.ts';
import { describeConfig } from '../store/results-ingest.ts';
import { isTraceOnlyRun } from '../../src-shared/domain/run-options.ts';
import { groupedFixed } from '../../src-shared/domain/number-text.ts';
import { assessPageCache, type PageCacheVerdict } from '../../src-shared/domain/page-cache.ts';
import { placeKey, placeLabel, reportGroupKey, suiteLabelKey } from '../../src-shared/domain/places.ts';
import { compareVersions, olderDefinitionOf, pooledDefinitionMetric, type DefinitionSplit, type MetricDefinitionChange } from '../../src-shared/domain/metric-changes.ts';
import { attemptStandings } from '../../src-shared/domain/trial-slots.ts';
import { ENGINE_STALL_REASON_START, engineStallReason } from '../../src-shared/domain/engine-stall.ts';
import { countFlagKinds, type FlagKindCounts, type TrialFlagKind } from '../../src-shared/domain/trial-flags.ts';
import { gpuDevicesText, gpuTierSummaryOf, reservedOfAskedText, type GpuTierSummary } from '../../src-shared/domain/gpu-tier.ts';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';

const GIB = 1024 ** 3;

/** How each metric is aggregated over a group's trials. */
export const PER_TRIAL_METHOD = `median and P95 across trials (${PERCENTILE_METHOD}); CV = sample standard deviation ÷ mean`;
/** How the pooled latencies are made, where trials stored histograms. */
export const POOLED_METHOD = 'pooled latency percentiles from merged HDR histograms';
export const REPORT_METHOD = `${PER_TRIAL_METHOD}; ${POOLED_METHOD}`;
/** What a report or comparison asked to exclude flagged trials adds to its method. */
export const FLAGGED_EXCLUDED_METHOD =
  'flagged trials excluded (trace-only mode, a RAM-backed cache directory, page-cache reads, a stalled engine, a spill past the tiers the scenario names, a queueing-bound run, a GPU tier absent, smaller than asked or not pinned, an autoscaler short of its peak or target): each is listed with why';


export interface ExcludedTrial {
  trialId: number;
  trialIndex: number;
  attempt: number;
  status: TrialRowStatus;
  reason: string | null;
  /** A later attempt of the same trial slot (a resumed suite's retry) counts instead of this one. */
  supersededBy: { trialId: number; attempt: number; status: TrialRowStatus } | null;
  /**
   * Why a trial that would count was left out as flagged (the report was asked to exclude flagged
   * trials; `reason` then gives the flags' words); empty for a trial excluded for its status.
   */
  flags: TrialFlagKind[];
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
  /**
   * Null: values of the current definition (or of a kvbench version not known). Else the listed
   * change (src-shared/domain/metric-changes.ts) these trials were measured before: an older
   * definition, aggregated apart from the others of the group and marked "(definition before …)".
   */
  olderDefinition: { since: string; change: string } | null;
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
  /**
   * Null: histograms of the current definition (or of a kvbench version not known). Else the listed
   * change of the histogram's latency (pooledDefinitionMetric) these trials were measured before: a
   * pool of its own beside the current one, never one merge of both, marked "(definition before …)".
   */
  olderDefinition: { since: string; change: string } | null;
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
  /** The size the drive's label states, for the app to restate in its units (TrialRecord.driveSizeBytes); null: none known. */
  driveSizeBytes: number | null;
  /** [systemLabel]; kept for readers of older exports. */
  systemLabels: string[];
  /**
   * The suite label the group's trials share (null: their suites carry none). Trials of suites with
   * different labels (two firmware builds of one drive) are never one aggregate; suites of one label pool.
   */
  suiteLabel: string | null;
  trialsTotal: number;
  /** Trials whose metrics are aggregated (complete ones, unless incomplete ones were asked for). */
  trialIds: number[];
  excluded: ExcludedTrial[];
  cautions: TrialCaution[];
  /**
   * The aggregated trials that ran on a RAM-backed cache directory, by what held it in memory
   * (countBackings): whatever the group's median says, each is counted here, never as page-cache reads.
   * With pageCacheFlagged, the trials whose storage reads were not all the device's: their read
   * numbers describe RAM, so the tier comparison gives the group no read efficiency.
   */
  ramBackings: RamBackingCount[];
  /** The aggregated trials whose storage reads the page cache served, the directory not being RAM-backed (trialFlags' 'page-cache'). */
  pageCacheFlagged: number;
  /** The aggregated trials that spilled past the tiers their scenario names (trialFlags' 'spilled'): CPU only reading the drive. */
  spilledTrials: number;
  /**
   * The GPU tier of the aggregated trials that asked for one, from their stored facts: what it reserved
   * of what was asked, whether it opened and its staging was pinned, and the GPUs (gpuTierSummaryText);
   * null where no trial has the facts (no GPU tier asked for, or stored before kvbench kept them).
   */
  gpuTier: GpuTierSummary | null;
  /**
   * One row per definition: a metric whose aggregated trials were measured on both sides of a
   * listed change of its definition has a row for each side (the current one first), never one
   * median of both; see definitionSplits.
   */
  metrics: MetricAggregate[];
  /** The metrics of the group with values measured under an older definition, and how many trials on each side: every reader says so. */
  definitionSplits: DefinitionSplit[];
  pooled: PooledLatency[];
  /**
   * The aggregated trials that stored no latency histograms (imports of the reference's files keep
   * none): in no pooled latency, and every reader says so. Zeros where histograms were not looked up.
   */
  withoutHistograms: TrialsWithoutHistograms;
}

export interface ScenarioReport {
  method: string;
  includeIncomplete: boolean;
  /** Flagged trials (trialFlags) were left out of the aggregates, each listed in its group's `excluded`. */
  excludeFlagged: boolean;
  /** With excludeFlagged, the trials so left out, in all and by kind; null without it. */
  excludedFlagged: ({ trials: number } & FlagKindCounts) | null;
  /**
   * The suite labels of the report's trials, each with its suites (labelled ones by name, then the
   * unlabelled). More than one: the groups are split by label (ScenarioSummary.suiteLabel), and
   * every reader says so.
   */
  suiteLabels: SuiteLabelGroup[];
  scenarios: ScenarioSummary[];
}

/** One suite label of a report (null: suites without one) and its suites, ascending. */
export interface SuiteLabelGroup {
  label: string | null;
  suiteIds: number[];
}

/** The suite labels of these trials with their suites: labelled ones by name, the unlabelled last. */
export function suiteLabelGroups(trials: readonly TrialRecord[]): SuiteLabelGroup[] {
  const suites = new Map<string | null, Set<number>>();
  for (const t of trials) suites.set(t.suiteLabel, (suites.get(t.suiteLabel) ?? new Set()).add(t.suiteId));
  return [...suites]
    .map(([label, ids]) => ({ label, suiteIds: [...ids].sort((a, b) => a - b) }))
    .sort((a, b) => (a.label === null ? 1 : b.label === null ? -1 : a.label.localeCompare(b.label)));
}

export function scenarioOrder(id: string): number {
  const i = (SCENARIO_IDS as readonly string[]).indexOf(id);
  return i < 0 ? SCENARIO_IDS.length : i;
}

/** Pooled percentiles of one histogram over several trials: merge, then read. */
export function pooledLatency(name: string, histograms: readonly TrialHistogram[]): PooledLatency | null {
  return pooledLatencies([name], histograms)[0] ?? null;
}

/**
 * Pooled percentiles of each of `names` over several trials' histograms (pooledLatency of each, in
 * the order of `names`, those no trial stored left out), in one pass: each histogram is decoded once,
 * straight into its name's merge, in the order given (a merge's bounds depend on it). With
 * `definitionOf` (the change whose older definition a histogram was measured under, null for the
 * current one), each definition of a name is pooled apart: the current one first, then older ones,
 * newest first, as the per-trial metrics are (aggregateByDefinition).
 */
export function pooledLatencies(
  names: readonly string[],
  histograms: readonly TrialHistogram[],
  definitionOf: (h: TrialHistogram, index: number) => MetricDefinitionChange | null = () => null,
): PooledLatency[] {
  type Pool = { merged: LatencyHistogram; trials: number; damagedTrials: number; older: MetricDefinitionChange | null };
  const pools = new Map(names.map((name) => [name, new Map<string | null, Pool>()]));
  histograms.forEach((h, i) => {
    const sides = pools.get(h.name);
    if (sides === undefined || h.count <= 0) return;
    const older = definitionOf(h, i);
    const since = older?.since ?? null;
    let pool = sides.get(since);
    if (pool === undefined) sides.set(since, (pool = { merged: new LatencyHistogram(), trials: 0, damagedTrials: 0, older }));
    if (pool.merged.mergeEncoded(h.hdr, h.sumNs) !== null) {
      // Left out rather than failing the report, but counted: a latency must never vanish unsaid.
      pool.damagedTrials += 1;
      return;
    }
    pool.trials += 1;
  });
  return [...pools].flatMap(([name, sides]) =>
    [...sides]
      .sort(([a], [b]) => (a === null ? -1 : b === null ? 1 : compareVersions(b, a)))
      .flatMap(([, { merged, trials, damagedTrials, older }]): PooledLatency[] => {
        const olderDefinition = older === null ? null : { since: older.since, change: older.change };
        if (merged.count === 0) return damagedTrials === 0 ? [] : [{ name, trials, damagedTrials, count: 0, p50Ms: null, p95Ms: null, p99Ms: null, olderDefinition }];
        const [p50Ns, p95Ns, p99Ns] = merged.percentilesNs([50, 95, 99]);
        return [{ name, trials, damagedTrials, count: merged.count, p50Ms: p50Ns / 1e6, p95Ms: p95Ns / 1e6, p99Ms: p99Ns / 1e6, olderDefinition }];
      }),
  );
}

/** One reason a report flags a trial, by kind (src-shared/domain/trial-flags.ts) and in words. */
export interface TrialFlag {
  kind: TrialFlagKind;
  message: string;
}

/**
 * Why a trial's numbers need a second look, if they do: it did no storage I/O at all (trace-only
 * mode), its storage reads were not all the device's (a RAM-backed cache directory, or the page
 * cache), its engine stalled, its capacity autoscaler found no peak, or its qos autoscaler's target
 * was not met. The one rule of what "flagged" means: the report's cautions, the comparison's counts
 * and the exclusion of flagged trials all read it.
 */
export function trialFlags(t: TrialRecord): TrialFlag[] {
  const as = (kind: TrialFlagKind) => (message: string): TrialFlag => ({ kind, message });
  return [
    ...traceOnlyCaution(t).map(as('trace-only')),
    ...storageReadFlags(t),
    ...stallCaution(t).map(as('stalled')),
    ...gpuTierCaution(t).map(as('gpu-tier')),
    ...spillCaution(t).map(as('spilled')),
    ...queueingBoundCaution(t).map(as('queueing-bound')),
    ...noPeakCaution(t).map(as('no-peak')),
    ...qosTargetCaution(t).map(as('qos-target')),
  ];
}

/** Said of a trial run in trace-only mode: the one caution it carries for all its storage numbers. */
export const TRACE_ONLY_CAUTION =
  'trace-only mode (--io-trace-log): no storage I/O happened, so its storage bandwidths and byte rates are logical (what the run would have moved) and its storage latencies are 0 by construction: not a measurement of any drive';

/** A trial of trace-only mode (its stored options say so, whichever kvbench stored it). */
function traceOnlyCaution(t: TrialRecord): string[] {
  return isTraceOnlyRun(t.options) ? [TRACE_ONLY_CAUTION] : [];
}

/** A trial's flags (trialFlags) as one build reads them: see flagsOnce. */
export type FlagsOf = (t: TrialRecord) => readonly TrialFlag[];

/**
 * trialFlags, worked out once per trial for one build: a builder asks of a trial several times
 * (does it count, its cautions, the counts by kind, each metric's flagged column), and each answer
 * rereads its metrics and reruns the page-cache rule.
 */
export function flagsOnce(): FlagsOf {
  const known = new Map<TrialRecord, TrialFlag[]>();
  return (t) => {
    let flags = known.get(t);
    if (flags === undefined) known.set(t, (flags = trialFlags(t)));
    return flags;
  };
}

/** The trials by the kind of flag they carry (see FlagKindCounts). */
export const flagKindCountsOf = (trials: readonly TrialRecord[], flagsOf: FlagsOf): FlagKindCounts => countFlagKinds(trials.map((t) => flagsOf(t).map((f) => f.kind)));

/** The report's cautions of a trial: its flags (trialFlags, unless already worked out) in words. */
export function cautionsOf(t: TrialRecord, flags: readonly TrialFlag[] = trialFlags(t)): TrialCaution[] {
  return flags.map((f) => ({ trialId: t.id, trialIndex: t.trialIndex, message: f.message }));
}

/** Whose numbers a tier's are, in a sentence: the storage tier's are the drive's. */
const tierOwner = (tier: TierName): string => (tier === 'storage' ? "the drive's" : `the ${TIER_WORDS[tier]} tier's`);

/**
 * What a scenario names and what lies past it (tiersPastScenario), for one meant to stay off the
 * slower tiers (CPU only, GPU only, GPU + CPU); null for one that names the storage tier, or none known.
 */
export function spillBoundary(scenarioId: string): { named: string; below: TierName[] } | null {
  const below = tiersPastScenario(scenarioId);
  if (below.length === 0 || !isScenarioId(scenarioId)) return null;
  return { named: `${tiersText(SCENARIOS[scenarioId].tiers)} that “${SCENARIOS[scenarioId].label}” names`, below };
}

/** Whose numbers spill into, for a note: "the drive's", "the CPU tier's or the drive's". */
export const spillOwners = (below: readonly TierName[]): string => below.map(tierOwner).join(' or ');

/**
 * A trial of a scenario meant to stay off a slower tier that moved bytes to or from one (its tier
 * overflowed, and the hierarchy spilled the rest down): its latencies and throughput are partly that
 * tier's, so "CPU only" would be partly the drive. Stored without per-tier bytes: nothing to tell.
 * What the tier served is its hits (`${tier}_hit_read_bytes`), as a share of the trial's request-level
 * reads (total_read_bytes): a tier's reads also count the demotions that moved its entries on down
 * (24.1 GiB of a GPU-only trial's CPU reads, where its hits were at most 0.6 GB). A trial stored
 * without its hits says what moved through the tier, with no share.
 */
function spillCaution(t: TrialRecord): string[] {
  const boundary = spillBoundary(t.scenarioId);
  if (boundary === null) return [];
  const bytes = (tier: TierName, op: 'read' | 'write'): number => t.metrics[`${tier}_${op}_bytes`] ?? 0;
  const spilled = spilledTiers(t.scenarioId, t.metrics);
  if (spilled.length === 0) return [];
  const allHits = t.metrics.total_read_bytes;
  const parts = spilled.map((tier) => {
    const [written, read, hits] = [bytes(tier, 'write'), bytes(tier, 'read'), t.metrics[`${tier}_hit_read_bytes`]];
    if (hits === undefined) return `${binaryBytesText(written)} written to and ${binaryBytesText(read)} read from the ${TIER_WORDS[tier]} tier, moved through it (demotions included)`;
    const share = allHits !== undefined && allHits > 0 ? `, ${percentText(hits / allHits)} of the trial's reads` : '';
    const moved = read > hits ? `; ${binaryBytesText(read - hits)} more left it for other tiers (demotions, promotions)` : '';
    return `${binaryBytesText(written)} written to the ${TIER_WORDS[tier]} tier and ${binaryBytesText(hits)} read back from it by requests (its hits${share}${moved})`;
  });
  return [`spilled past the ${boundary.named}: ${parts.join('; ')}, so its numbers include ${spillOwners(spilled)}`];
}

/** A share as a percentage, to two decimals below 1 % (0.09 %, not a 0.1 % it is not), else to one. */
const percentText = (share: number): string => `${(100 * share).toFixed(share < 0.01 ? 2 : 1)} %`;

/**
 * A trial whose GPU tier was not what its configuration asked for (its stored facts, gpu-tier.ts): it
 * did not open (the run went on in the tiers below, where a GPU-only trial would otherwise read only
 * as spilled), it opened smaller than asked (another process held GPU memory), or its staging was not
 * pinned. A trial stored without the facts gets none: unknown, never guessed.
 */
function gpuTierCaution(t: TrialRecord): string[] {
  const m = t.metrics;
  const asked = m.gpu_tier_requested_bytes;
  if (asked === undefined) return [];
  if (m.gpu_tier_present === 0) {
    return [`its GPU tier was absent though ${(asked / GIB).toFixed(1)} GiB was asked for (it did not open; the trial's results say why): the run went on in the tiers below, so its numbers describe no GPU tier`];
  }
  const out: string[] = [];
  const reserved = m.gpu_tier_reserved_bytes;
  if (m.gpu_tier_present === 1 && reserved !== undefined && reserved < asked) {
    out.push(`its GPU tier was smaller than asked (${reservedOfAskedText(reserved, asked)} reserved): it held less and moved entries down sooner than its configuration says`);
  }
  if (m.gpu_staging_pinned === 0) out.push("its GPU tier's staging was not pinned (page-locked): its copies went through pageable memory, slower than the GPU's link allows");
  return out;
}

/**
 * A run whose queue was still growing at the window's close (the metric queueing_bound, judged by
 * src-shared/domain/queueing-bound.ts at import, for whichever kvbench measured it): its end-to-end
 * latency and queue wait measure how long the queue had become. Kept in the group's aggregates with
 * this caution, as the other flags are; "exclude flagged" leaves it out.
 */
function queueingBoundCaution(t: TrialRecord): string[] {
  if (t.metrics.queueing_bound !== 1) return [];
  const queued = t.metrics.requests_queued_at_close;
  const completed = t.metrics.requests_completed;
  const counts =
    queued === undefined ? '' : ` (${groupedFixed(queued, 0)} requests still queued at the window's close${completed === undefined ? '' : `, ${groupedFixed(completed, 0)} completed`})`;
  const device = isTraceOnlyRun(t.options) ? '' : '; its storage bandwidth and per-operation latencies still describe the device';
  return [`queueing-bound${counts}: the configuration offered more load than the run served, so its end-to-end latency and queue wait measure the queue, not the storage${device}`];
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
 * (the reference's, or one whose stored results could not be read for it) gets no version-gated
 * caution: its rules cannot be told.
 */
const measuredSince = (t: TrialRecord, version: string): boolean =>
  t.resultsFormat === 'kvbench' && t.measuredByVersion !== null && compareVersions(t.measuredByVersion, version) >= 0;

/**
 * A window that closed far past its plan. Trials kvbench measures from now on are partial then; this
 * flags those stored complete before, and partial ones a report was asked to include. Only kvbench's
 * fixed windows (0.2.0 on) close at the plan: 0.1.0 drained in-flight requests inside the window.
 */
export function stallCaution(t: TrialRecord): string[] {
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

/** Said of a RAM-backed trial stored before kvbench kept what held it: the flag is all there is. */
export const RAM_BACKING_NOT_RECORDED = 'backing not recorded by the kvbench that stored it';

/**
 * What held a RAM-backed trial's cache directory in memory, as its results said ('loop0 →
 * /dev/shm/d.img on tmpfs'), or that it was not recorded; null when the trial was not RAM-backed.
 */
export function ramBackingText(t: TrialRecord): string | null {
  if (t.metrics.storage_ram_backed !== 1) return null;
  return t.storageRamBacking ?? RAM_BACKING_NOT_RECORDED;
}

/** RAM-backed trials that share a backing (TrialRecord.storageRamBacking; null: not recorded). */
export interface RamBackingCount {
  backing: string | null;
  trials: number;
}

/** Counts of RAM-backed trials summed by backing, most trials first (then by name, unrecorded last). */
export function countBackings(counts: Iterable<RamBackingCount>): RamBackingCount[] {
  const sums = new Map<string | null, number>();
  for (const c of counts) sums.set(c.backing, (sums.get(c.backing) ?? 0) + c.trials);
  return [...sums]
    .map(([backing, trials]) => ({ backing, trials }))
    .sort((x, y) => y.trials - x.trials || (x.backing === null ? 1 : y.backing === null ? -1 : x.backing.localeCompare(y.backing)));
}

/** The trials these counts hold, whatever their backing. */
export const backedTrials = (backings: readonly RamBackingCount[]): number => backings.reduce((n, b) => n + b.trials, 0);

/** "loop0 → /dev/shm/d.img on tmpfs", or with several: "loop0 → /dev/shm/d.img on tmpfs: 2; tmpfs: 1" (ramBackingText's words for each). */
export function backingsText(backings: readonly RamBackingCount[]): string {
  const words = (b: string | null): string => b ?? RAM_BACKING_NOT_RECORDED;
  return backings.length === 1 ? words(backings[0].backing) : backings.map((b) => `${words(b.backing)}: ${b.trials}`).join('; ');
}

/**
 * Said of a trial whose cache directory was on a buffered loop device (storage_buffered_loop): the
 * stored facts keep that one was there, not its name; the trial's results file names it.
 */
function bufferedLoopCaution(t: TrialRecord): string | null {
  if (t.metrics.storage_buffered_loop !== 1) return null;
  const coverage = t.metrics.device_read_coverage;
  const drive = coverage === undefined ? '' : ` (device read coverage ${(coverage * 100).toFixed(1)} %)`;
  return (
    `the cache directory was on a loop device with buffered I/O on its backing file (loop/dio 0): the host's page cache may have served its storage reads${drive}, ` +
    'so its storage read numbers may describe RAM (losetup --direct-io=on avoids it)'
  );
}

/** Storage reads that were not all the device's: a RAM-backed cache directory (then never also page-cache), a buffered loop device, or the page cache. */
function storageReadFlags(t: TrialRecord): TrialFlag[] {
  const backing = ramBackingText(t);
  if (backing !== null) {
    return [{ kind: 'ram-backed', message: `the cache directory was RAM-backed (${backing}): its storage numbers describe memory, not a drive` }];
  }
  const loop = bufferedLoopCaution(t);
  if (loop !== null) return [{ kind: 'page-cache', message: loop }];
  const verdict = pageCacheVerdict(t);
  return verdict.flagged ? [{ kind: 'page-cache', message: `${verdict.reason ?? 'the engine flagged its storage reads'}, so its storage read numbers may describe RAM` }] : [];
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

/**
 * Every catalogue metric over these trials, one aggregate per definition its values were measured
 * under (olderDefinitionOf, by the kvbench that measured each trial): a median of values of two
 * definitions describes neither. The current definition's row first, then older ones, newest first.
 */
function aggregateByDefinition(trials: readonly TrialRecord[]): { metrics: MetricAggregate[]; definitionSplits: DefinitionSplit[] } {
  const metrics: MetricAggregate[] = [];
  const definitionSplits: DefinitionSplit[] = [];
  for (const metric of METRICS) {
    const byDefinition = new Map<string | null, { change: string | null; values: number[] }>();
    for (const t of trials) {
      const v = t.metrics[metric.key];
      if (v === undefined || !Number.isFinite(v)) continue;
      const older = olderDefinitionOf(metric.key, t.measuredByVersion);
      const since = older?.since ?? null;
      let side = byDefinition.get(since);
      if (!side) byDefinition.set(since, (side = { change: older?.change ?? null, values: [] }));
      side.values.push(v);
    }
    const sides = [...byDefinition].sort(([a], [b]) => (a === null ? -1 : b === null ? 1 : compareVersions(b, a)));
    for (const [since, side] of sides) {
      // Per-trial percentiles get no mean: a mean of P95s is no percentile of anything (style.md).
      // A yes/no metric is counted (2 of 3), never given a median or a CV.
      const agg = isFlagMetric(metric.key) ? flagAggregate(side.values) : aggregate(side.values, { percentiles: isPercentileMetric(metric.key) });
      if (agg.n === 0) continue;
      metrics.push({ metric, aggregate: agg, olderDefinition: since === null ? null : { since, change: side.change! } });
      if (since === null) continue;
      const later = sides.filter(([s]) => s === null || compareVersions(s, since) > 0).reduce((n, [, x]) => n + x.values.length, 0);
      definitionSplits.push({ metric: metric.key, label: metric.label, since, change: side.change!, trialsBefore: side.values.length, trialsSince: later });
    }
  }
  return { metrics, definitionSplits };
}

/** The stored histograms a report pools per group (ScenarioSummary.pooled), in its order. */
export const POOLED_HISTOGRAMS = ['end_to_end', 'storage_io_per_request', 'tier_read.storage', 'tier_write.storage', 'tier_read.cpu', 'tier_write.cpu', 'tier_read.gpu', 'tier_write.gpu'];

/**
 * Per scenario, configuration, system, drive and suite label: every catalogue metric aggregated over
 * the included trials. Equal options on two machines, or under two suite labels (two firmware builds
 * of one drive), are two measurements, never one aggregate; suites of one label (or all unlabelled) pool.
 * Incomplete trials (partial, failed, aborted, still running) are listed as excluded unless
 * `includeIncomplete` (then partial ones count; failed and aborted never do). One trial slot counts
 * once: an attempt a resume retried is listed as superseded by the attempt that counts
 * (src-shared/domain/trial-slots.ts, the rule resume runs by).
 */
export function buildScenarioReport(
  trials: readonly TrialRecord[],
  opts: {
    includeIncomplete?: boolean;
    excludeFlagged?: boolean;
    histogramsOf?: (trialId: number) => TrialHistogram[];
    /** A trial's hardware snapshot: where given, a group's GPU tier names its GPUs (its newest trial's). */
    hardwareOf?: (trialId: number) => HardwareProfile | null;
  } = {},
): ScenarioReport {
  const includeIncomplete = opts.includeIncomplete ?? false;
  const excludeFlagged = opts.excludeFlagged ?? false;
  const standings = attemptStandings(trials, includeIncomplete);
  const flagsOf = flagsOnce();
  // With excludeFlagged, a trial that would count but is flagged is left out, its flags said as why.
  const flagsLeftOut = (t: TrialRecord): readonly TrialFlag[] => (excludeFlagged && standings.get(t)!.counted ? flagsOf(t) : []);
  const counts = (t: TrialRecord): boolean => standings.get(t)!.counted && flagsLeftOut(t).length === 0;
  const groups = new Map<string, TrialRecord[]>();
  for (const t of trials) {
    const k = reportGroupKey(t, t.configKey);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(t);
  }
  const scenarios: ScenarioSummary[] = [];
  for (const group of groups.values()) {
    const first = group[0];
    const included = group.filter(counts);
    const { metrics, definitionSplits } = aggregateByDefinition(included);
    let pooled: PooledLatency[] = [];
    const withoutHistograms: TrialsWithoutHistograms = { trials: 0, referenceImports: 0 };
    if (opts.histogramsOf && included.length > 0) {
      const perTrial = included.map((t) => ({ t, hs: opts.histogramsOf!(t.id) }));
      for (const { t } of perTrial.filter((x) => x.hs.length === 0)) {
        withoutHistograms.trials += 1;
        if (t.resultsFormat?.startsWith('reference') === true) withoutHistograms.referenceImports += 1;
      }
      // Each histogram's definition by the kvbench that measured its trial: a latency whose definition
      // changed (end_to_end in 0.8.0) is pooled per definition, as its per-trial metrics are aggregated.
      const hs = perTrial.flatMap((x) => x.hs);
      const versions = perTrial.flatMap((x) => x.hs.map(() => x.t.measuredByVersion));
      pooled = pooledLatencies(POOLED_HISTOGRAMS, hs, (h, i) => olderDefinitionOf(pooledDefinitionMetric(h.name), versions[i]));
    }
    const flagKinds = flagKindCountsOf(included, flagsOf);
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
      driveSizeBytes: first.driveSizeBytes ?? null,
      systemLabels: [first.systemLabel],
      suiteLabel: first.suiteLabel,
      trialsTotal: group.length,
      trialIds: included.map((t) => t.id),
      excluded: group
        .filter((t) => !counts(t))
        .map((t) => {
          const by = standings.get(t)!.supersededBy;
          const flags = flagsLeftOut(t);
          return {
            trialId: t.id,
            trialIndex: t.trialIndex,
            attempt: t.attempt,
            status: t.status,
            reason: flags.length > 0 ? flags.map((f) => f.message).join('; ') : t.statusReason,
            supersededBy: by === null ? null : { trialId: by.id, attempt: by.attempt, status: by.status },
            flags: flags.map((f) => f.kind),
          };
        }),
      cautions: included.flatMap((t) => [...incompleteCaution(t), ...cautionsOf(t, flagsOf(t))]),
      ramBackings: countBackings(included.filter((t) => ramBackingText(t) !== null).map((t) => ({ backing: t.storageRamBacking, trials: 1 }))),
      pageCacheFlagged: flagKinds.pageCache,
      spilledTrials: flagKinds.spilled,
      gpuTier: groupGpuTier(included, opts.hardwareOf),
      metrics,
      definitionSplits,
      pooled,
      withoutHistograms,
    });
  }
  scenarios.sort(
    (a, b) =>
      scenarioOrder(a.scenarioId) - scenarioOrder(b.scenarioId) ||
      a.configDescription.localeCompare(b.configDescription) ||
      placeLabel(a).localeCompare(placeLabel(b)) ||
      placeKey(a).localeCompare(placeKey(b)) ||
      (a.suiteLabel === null ? 1 : 0) - (b.suiteLabel === null ? 1 : 0) ||
      suiteLabelKey(a).localeCompare(suiteLabelKey(b)),
  );
  const leftOut = scenarios.flatMap((s) => s.excluded.filter((x) => x.flags.length > 0));
  return {
    method: excludeFlagged ? `${REPORT_METHOD}; ${FLAGGED_EXCLUDED_METHOD}` : REPORT_METHOD,
    includeIncomplete,
    excludeFlagged,
    excludedFlagged: excludeFlagged ? { trials: leftOut.length, ...countFlagKinds(leftOut.map((x) => x.flags)) } : null,
    suiteLabels: suiteLabelGroups(trials),
    scenarios,
  };
}

/** The GPU tier of a group's trials (gpuTierSummaryOf), its GPUs from the newest such trial's hardware snapshot where one is known. */
function groupGpuTier(trials: readonly TrialRecord[], hardwareOf?: (trialId: number) => HardwareProfile | null): GpuTierSummary | null {
  const withFacts = trials.filter((t) => t.metrics.gpu_tier_requested_bytes !== undefined);
  if (withFacts.length === 0) return null;
  const newest = withFacts.reduce((a, b) => (b.startedAt > a.startedAt ? b : a));
  const numGpus = typeof newest.options.numGpus === 'number' ? newest.options.numGpus : 1;
  return gpuTierSummaryOf(
    withFacts.map((t) => t.metrics),
    hardwareOf ? gpuDevicesText(hardwareOf(newest.id), numGpus) : null,
  );
}

/** A metric's aggregate in a group: of its current definition where the group has values of it (metrics lists it first), else of the older one it has. */
export function metricOf(s: ScenarioSummary, key: string): Aggregate | null {
  return s.metrics.find((m) => m.metric.key === key)?.aggregate ?? null;
}
