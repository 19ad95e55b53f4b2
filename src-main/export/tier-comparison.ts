// The tier comparison: each tier configuration's speedup over the storage-only row it is compared
// with, and its storage efficiency against the drive's probed (or stated) bandwidth.
import { binaryBytesText, cacheDirRamBacking, driveLabelSizeSuffix, type GpuCopyProbe, type HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { MULTI_HOST_SCENARIO_ID, SCENARIOS, isScenarioId, type StatedSize } from '../../src-shared/domain/scenarios.ts';
import { ratio } from '../../src-shared/domain/statistics.ts';
import { CONFIG_MATCH_KEYS, CONFIG_MATCH_KEYS_WHEN_SET, METRIC_BY_KEY } from '../../src-shared/domain/store-types.ts';
import { configKey, optionValue } from '../store/results-ingest.ts';
import { optionFlag } from '../engine/config/flags.ts';
import { EFFICIENCY_NOISE_CEILING } from '../../src-shared/domain/results.ts';
import { groupWhere, placeKey, spansSeveralLabels, spansSeveralPlaces, suiteLabelKey } from '../../src-shared/domain/places.ts';
import { definitionSplitText } from '../../src-shared/domain/metric-changes.ts';
import { anyGpuTier } from '../../src-shared/domain/tiers.ts';
import { backedTrials, backingsText, countBackings, metricOf, scenarioOrder, spillBoundary, spillOwners, type ScenarioReport, type ScenarioSummary } from './scenario-report.ts';

export interface TierRow {
  scenarioId: string;
  label: string;
  configKey: string;
  configDescription: string;
  systemId: string;
  systemLabel: string;
  driveId: string | null;
  driveLabel: string | null;
  /** The size the drive's label states, for the app to restate in its units (TrialRecord.driveSizeBytes); null: none known. */
  driveSizeBytes: number | null;
  /** The suite label of the row's trials (ScenarioSummary.suiteLabel): rows of two labels are two rows. */
  suiteLabel: string | null;
  gpuMemGb: number | null;
  cpuMemGb: number | null;
  /** The users it started with (an autoscaled row's, not what it ended at: finalUsers). */
  numUsers: number | null;
  /** An autoscaled row's users at the end, the median over its trials; null for a fixed user count. */
  finalUsers: number | null;
  /** Trials aggregated. */
  n: number;
  /**
   * The fewest trials one of the row's medians is over: below n where some trials recorded no value
   * for a column (a partial trial counted in which no request completed has bytes and tier latencies,
   * but no throughput or request latency). The scenario report's per-metric n says the same.
   */
  fewestTrials: number;
  /** Which of the row's values are medians of fewer than n trials, and of how many; null where none is. */
  trialsNote: string | null;
  wallClockTokPerS: number | null;
  storageTokPerS: number | null;
  /** Median wall-clock throughput ÷ storage-only's. */
  speedupWallClock: number | null;
  /** Median cache I/O throughput (the reference's storage_throughput_tokens_per_sec, as in seeds/003) ÷ storage-only's. */
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
  /**
   * CPU-tier read bandwidth (cpu_read_bytes_per_s: bytes ÷ the measured window) ÷ one thread's
   * memory-copy bandwidth: memory bandwidth used, averaged over the window. Its reads include the
   * demotions out of it (each a copy out of its memory, as a hit is), so on a run whose CPU tier mostly
   * passed entries on to the drive it is mostly those: cpu_hit_read_bytes is what it served.
   */
  cpuReadEfficiency: number | null;
  /**
   * The GPU tier's device→host (host→device) rate while the link was busy with its pinned staging copies
   * (gpu_d2h_link_bytes_per_s, gpu_h2d_link_bytes_per_s: bytes ÷ the time those copies were executing,
   * not ÷ the window) ÷ the GPU copy probe's rate that way, measured the same way: how close the tier's
   * copies came to the link's pace while it kept the link busy, not how busy it kept it. Its reads
   * through staging are its hits; its demotions (pageable copies) are left out.
   */
  gpuReadBusyEfficiency: number | null;
  gpuWriteBusyEfficiency: number | null;
  /**
   * Why an efficiency is null (the tier moved no bytes that way, the directory was RAM-backed, the
   * page cache served the reads, no limit was measured …); null where there is an efficiency.
   */
  storageReadEfficiencyNote: string | null;
  storageWriteEfficiencyNote: string | null;
  cpuReadEfficiencyNote: string | null;
  gpuReadBusyEfficiencyNote: string | null;
  gpuWriteBusyEfficiencyNote: string | null;
  /** The limits this row's efficiencies are against: from its own trials' hardware snapshot. */
  limits: ProbeLimits;
}

export interface ProbeLimits {
  readBytesPerS: number | null;
  writeBytesPerS: number | null;
  memoryCopyBytesPerS: number | null;
  /** Where the drive's limits come from (the probe's settings and drive, or the stated figures), without the probe's time. */
  source: string;
  /** The sizes source states (the probed drive's, in its name, in binary units): the app restates them in its units. Absent: none. */
  sourceSizes?: StatedSize[];
  /** When the drive probe behind them ran (ISO 8601): each reader shows it in its own time format; null where no probe's figure is used. */
  measuredAt: string | null;
  /** Why a probe that ran gave no read limit (its reads came from memory, or its read phase did not complete); null otherwise. */
  readNote: string | null;
  /** Whose the drive's read (write) limit is: the probe's, or the figure the user stated (`--stated-read-gbps`, the app's datasheet field). */
  readLimitFrom: LimitOrigin;
  writeLimitFrom: LimitOrigin;
  /** Where the memory-copy limit comes from: always a probe's (nobody states it), or none. */
  memoryCopySource: string;
  /** When the memory-copy probe ran (the hardware detection it was part of); null where there is none. */
  memoryCopyMeasuredAt: string | null;
  /** The GPU tier's copy limits (the GPU copy probe's, link busy, each way); null where it did not run. */
  gpuH2dBytesPerS: number | null;
  gpuD2hBytesPerS: number | null;
  /** How the GPU copy probe measured (its GPU, copies, staging), or 'no GPU copy probe'; 'none' without any hardware. */
  gpuCopySource: string;
  /** When it ran; null where it did not. */
  gpuCopyMeasuredAt: string | null;
}

/** A drive limit measured by the probe, or stated by the user from the drive's datasheet. */
export type LimitOrigin = 'probe' | 'stated';

export interface TierComparison {
  baseline: string | null;
  /** Partial trials were aggregated too (`--include-incomplete`). */
  includeIncomplete: boolean;
  /** Flagged trials were left out of the medians (`--exclude-flagged`; the scenario report lists them). */
  excludeFlagged: boolean;
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

const NO_LIMITS: ProbeLimits = {
  readBytesPerS: null, writeBytesPerS: null, memoryCopyBytesPerS: null, source: 'none', measuredAt: null, readNote: null,
  readLimitFrom: 'probe', writeLimitFrom: 'probe', memoryCopySource: 'none', memoryCopyMeasuredAt: null,
  gpuH2dBytesPerS: null, gpuD2hBytesPerS: null, gpuCopySource: 'none', gpuCopyMeasuredAt: null,
};

/** The drive limits' source with the probe's time, as the text report and the exports give it. */
export const limitsSourceText = (l: ProbeLimits): string => (l.measuredAt === null ? l.source : `${l.source}, ${l.measuredAt}`);

/** The memory-copy limit's source with its probe's time, as the text report and the exports give it. */
export const memoryCopySourceText = (l: ProbeLimits): string => (l.memoryCopyMeasuredAt === null ? l.memoryCopySource : `${l.memoryCopySource}, ${l.memoryCopyMeasuredAt}`);

/**
 * What the storage efficiencies are against, as the tier comparison's legend says it: the drive's
 * sequential bandwidth the probe measured or the user stated, per direction where they differ.
 */
export function efficiencyBasisText(l: Pick<ProbeLimits, 'readLimitFrom' | 'writeLimitFrom'>): string {
  const against = (from: LimitOrigin, dir: string): string => (from === 'stated' ? `the drive's sequential ${dir}bandwidth stated by the user` : `the probe's sequential ${dir}bandwidth`);
  if (l.readLimitFrom === l.writeLimitFrom) return `rd/wr eff: storage-tier bandwidth ÷ ${against(l.readLimitFrom, '')}`;
  return `rd eff: storage-tier read bandwidth ÷ ${against(l.readLimitFrom, 'read ')}; wr eff: storage-tier write bandwidth ÷ ${against(l.writeLimitFrom, 'write ')}`;
}

/** The GPU copy limits' source with the probe's time, as the text report and the exports give it. */
export const gpuCopySourceText = (l: ProbeLimits): string => (l.gpuCopyMeasuredAt === null ? l.gpuCopySource : `${l.gpuCopySource}, ${l.gpuCopyMeasuredAt}`);

/** How a hardware snapshot's GPU copy probe measured. */
function gpuCopySource(p: GpuCopyProbe): string {
  return `kvbench GPU copy probe (GPU ${p.device}, ${p.model}: ${p.chunkBytes / 1048576} MiB copies through the GPU tier, ${p.stagingPinned ? 'pinned' : 'pageable (NOT pinned)'} staging, link busy)`;
}

/** Where a hardware snapshot's memory-copy figure comes from. */
const MEMORY_COPY_PROBE = 'kvbench memory-copy probe (one thread)';

/** Why the probe stored in `hw` has no read limit although it ran; null where it has one, or did not run. */
function probeReadNote(hw: HardwareProfile): string | null {
  const bw = hw.cacheDir?.bandwidth ?? null;
  if (!bw) return null;
  if (bw.pageCacheSuspected) {
    const ram = cacheDirRamBacking(hw.cacheDir!);
    if (ram !== null) return `the probe's reads came from memory (${ram} is RAM-backed)`;
    const loops = (hw.cacheDir!.bufferedLoops ?? []).map((l) => l.name);
    return loops.length > 0 ? `the page cache may have served the probe's reads (${loops.join(', ')} read ${loops.length === 1 ? 'its backing file' : 'their backing files'} through it: loop/dio 0)` : 'the page cache may have served the probe\'s reads';
  }
  return bw.readBytesPerSec === null ? 'the probe\'s read phase did not complete' : null;
}

/** The size a drive's name states ("virtual disk vda (256 GiB)"), with its byte count; none when the name states none. */
function driveLabelSizes(hw: HardwareProfile): StatedSize[] {
  const sizeBytes = hw.cacheDir?.blockDevice?.sizeBytes ?? null;
  if (sizeBytes === null || !hw.cacheDir!.driveLabel.endsWith(driveLabelSizeSuffix(sizeBytes))) return [];
  return [{ bytes: sizeBytes, text: binaryBytesText(sizeBytes) }];
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
    source: bw ? `kvbench probe (${bw.directIo ? 'O_DIRECT' : 'buffered'}, ${bw.chunkBytes / 1048576} MiB × ${bw.depth}) of ${hw.cacheDir!.driveLabel}` : 'no drive probe',
    ...(bw ? { sourceSizes: driveLabelSizes(hw) } : {}),
    measuredAt: bw?.measuredAt ?? null,
    readLimitFrom: 'probe',
    writeLimitFrom: 'probe',
    memoryCopySource: hw.memoryCopyBytesPerSec ? MEMORY_COPY_PROBE : 'no memory-copy probe',
    // The memory copy is probed during the hardware detection that took the snapshot.
    memoryCopyMeasuredAt: hw.memoryCopyBytesPerSec ? hw.detectedAt : null,
    gpuH2dBytesPerS: hw.gpuCopy?.h2dBytesPerSec ?? null,
    gpuD2hBytesPerS: hw.gpuCopy?.d2hBytesPerSec ?? null,
    gpuCopySource: hw.gpuCopy ? gpuCopySource(hw.gpuCopy) : 'no GPU copy probe',
    gpuCopyMeasuredAt: hw.gpuCopy?.measuredAt ?? null,
  };
}

/**
 * Bandwidth ÷ limit, or why there is none. A tier that moved no bytes that way gets none: 0 ÷ the
 * limit would read as a measured 0 %, of a device the run never asked for anything.
 */
function efficiencyOf(
  bytesPerS: number | null,
  limitBytesPerS: number | null,
  o: { tier: 'storage' | 'CPU' | 'GPU'; verb: 'read' | 'wrote'; device: string; blocked: string | null; noLimit: string; unrecorded?: string },
): { value: number | null; note: string | null } {
  if (o.blocked !== null) return { value: null, note: o.blocked };
  if (bytesPerS === null) return { value: null, note: o.unrecorded ?? `no ${o.tier} ${o.verb === 'read' ? 'read' : 'write'} bandwidth recorded` };
  if (bytesPerS === 0) return { value: null, note: `the ${o.tier} tier ${o.verb} no bytes (0 B/s): nothing of the ${o.device} to measure` };
  const value = ratio(bytesPerS, limitBytesPerS);
  return value === null ? { value: null, note: o.noLimit } : { value, note: null };
}

/** The metrics a tier row's values are medians of, in its columns' order. */
const ROW_METRICS = [
  'wall_clock_throughput_tok_per_s',
  'storage_throughput_tok_per_s',
  'gpu_read_p95_ms',
  'cpu_read_p95_ms',
  'storage_read_p95_ms',
  'storage_write_p95_ms',
  'total_read_bytes',
  'total_write_bytes',
  'storage_read_bytes_per_s',
  'storage_write_bytes_per_s',
  'cpu_read_bytes_per_s',
  'gpu_d2h_link_bytes_per_s',
  'gpu_h2d_link_bytes_per_s',
  'autoscale_final_users',
] as const;

const andList = (xs: readonly string[]): string => (xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`);

/**
 * Over how many trials the row's medians are: each metric's own count, which is below the trials
 * aggregated where some recorded no value for it. Said per count, so the row's n never claims more
 * trials than a median beside it has.
 */
function trialCounts(s: ScenarioSummary): { fewestTrials: number; trialsNote: string | null } {
  const n = s.trialIds.length;
  const fewer = new Map<number, string[]>();
  const parts: { k: number; text: string }[] = [];
  for (const key of ROW_METRICS) {
    const k = metricOf(s, key)?.n ?? 0;
    if (k === 0 || k >= n) continue;
    // A metric measured on both sides of a change of its definition: the row has the current side's median.
    const split = s.definitionSplits.find((d) => d.metric === key && d.trialsSince > 0);
    if (split === undefined) fewer.set(k, [...(fewer.get(k) ?? []), METRIC_BY_KEY[key].label]);
    else parts.push({ k, text: `${METRIC_BY_KEY[key].label}: median of the ${k} of the ${n} trials measured by kvbench ${split.since} or later (${split.trialsBefore} measured before it changed the definition are left out of it)` });
  }
  for (const [k, labels] of fewer) parts.push({ k, text: `${andList(labels)}: median${labels.length > 1 ? 's' : ''} of ${k} of the ${n} trials (the other${n - k > 1 ? ` ${n - k}` : ''} recorded none)` });
  if (parts.length === 0) return { fewestTrials: n, trialsNote: null };
  parts.sort((a, b) => a.k - b.k);
  return { fewestTrials: Math.min(...parts.map((p) => p.k)), trialsNote: parts.map((p) => p.text).join('; ') };
}

/**
 * A GPU link-busy rate (the median of `key`), or 0 where the tier moved no bytes that way (no copies:
 * no busy time, so no rate was stored), which efficiencyOf says is nothing to measure. Null otherwise:
 * a trial measured before kvbench 0.8.1 has no link-busy figure.
 */
function gpuLinkRate(s: ScenarioSummary, key: string, bytesKey: string): number | null {
  const rate = metricOf(s, key)?.median ?? null;
  if (rate !== null) return rate;
  return metricOf(s, bytesKey)?.median === 0 ? 0 : null;
}

const numberOption = (s: ScenarioSummary, key: string): number | null => (typeof s.options[key] === 'number' ? s.options[key] : null);

const hasProbe = (hw: HardwareProfile | null): boolean => Boolean(hw?.cacheDir?.bandwidth) || Boolean(hw?.memoryCopyBytesPerSec) || Boolean(hw?.gpuCopy);

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

/** The stated directions replace the probed drive ones; the source says which is which. The memory copy stays the probe's. */
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
    readLimitFrom: stated.readBytesPerS !== null ? 'stated' : l.readLimitFrom,
    writeLimitFrom: stated.writeBytesPerS !== null ? 'stated' : l.writeLimitFrom,
    source: `stated by the user (${given.join(', ')})${both ? '' : `; the other direction: ${l.source}`}`,
    // The probe's time goes with the direction still its own, after its source.
    measuredAt: both ? null : l.measuredAt,
  };
}

const sameLimits = (a: ProbeLimits, b: ProbeLimits): boolean =>
  (Object.keys(a) as (keyof ProbeLimits)[]).every((k) => (k === 'sourceSizes' ? JSON.stringify(a[k]) === JSON.stringify(b[k]) : a[k] === b[k]));

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

/**
 * The workload options (other than `ignore`, by default the tier layout) in which `a` differs from `b`,
 * by their flags, as "--num-users 200 vs 50": the CLI prints them so, and the app names each by its
 * field (inAppWords), never by the internal camelCase key.
 */
export function differingOptions(a: Record<string, unknown>, b: Record<string, unknown>, ignore: readonly string[] = TIER_LAYOUT_KEYS): string[] {
  const keys = [...CONFIG_MATCH_KEYS, ...CONFIG_MATCH_KEYS_WHEN_SET].filter((k) => !ignore.includes(k));
  const show = (v: unknown): string => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  return keys.filter((k) => show(optionValue(a, k)) !== show(optionValue(b, k))).map((k) => `${optionFlag(k)} ${show(optionValue(a, k))} vs ${show(optionValue(b, k))}`);
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
  // budgets, on the same system and drive and under the same suite label: a storage-only row with other users, warm-up or I/O
  // options (another suite, or the suite's high-user scenarios) would make the ratio say how the
  // load differs, not what the tiers do. A storage-only row is its own baseline.
  const baselines = rows.filter((s) => s.scenarioId === 'storage-only');
  const baselineFor = new Map<ScenarioSummary, { base: ScenarioSummary | null; note: string | null }>(
    rows.map((s) => {
      if (s.scenarioId === 'storage-only') return [s, { base: s, note: null }];
      const own = configApartFromTiers(s);
      if (own === null) return [s, { base: null, note: 'configuration unknown (imported without --run-flags): no storage-only run to compare with' }];
      const here = baselines.filter((b) => placeKey(b) === placeKey(s) && suiteLabelKey(b) === suiteLabelKey(s));
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
  // Which group of several a note is about: its system and drive, its suite label, as far as rows differ in them.
  const spans = { places: spansSeveralPlaces(rows), labels: spansSeveralLabels(rows) };
  const where = (s: ScenarioSummary): string => groupWhere(s, spans);
  const notes: string[] = [];
  if (multiHost.length > 0) {
    notes.push(
      `${multiHost.length} multi-host row(s) left out (${multiHost.map((s) => `${s.scenarioId}, ${s.configDescription}`).join('; ')}): ` +
        'several hosts on one storage, while this table compares one host\'s tier layouts',
    );
  }
  // A tmpfs "drive" against a probe taken on tmpfs is memory against memory: no storage efficiency.
  // A row counts as on RAM where any of its trials was, whatever its median: that trial's storage
  // numbers sit in the row's medians. Named by what held the directory in memory, as the trials
  // recorded it (their cautions say the same), and by how many of the row's trials, where not all.
  const ramTrials = (s: ScenarioSummary): number => backedTrials(s.ramBackings);
  const onRam = (s: ScenarioSummary): boolean => ramTrials(s) > 0;
  const ofTrials = (s: ScenarioSummary, k: number): string => `${s.scenarioId}${where(s)}: ${k} of ${s.trialIds.length} trial(s)`;
  const ramRows = rows.filter(onRam);
  if (ramRows.length > 0) {
    const inPart = ramRows.filter((s) => ramTrials(s) < s.trialIds.length);
    notes.push(
      `${ramRows.length} row(s) ran on a RAM-backed cache directory (${backingsText(countBackings(ramRows.flatMap((s) => s.ramBackings)))})` +
        `${inPart.length > 0 ? `, some in only part of their trials (${inPart.map((s) => ofTrials(s, ramTrials(s))).join('; ')})` : ''}: no storage efficiency there`,
    );
  }
  // Reads the page cache served are RAM's, whatever the drive's ceiling: no read efficiency (the
  // scenario report flags the same trials), rather than one above 100 % blamed on the probe. Only
  // trials not RAM-backed count here: a RAM-backed one's reads are memory's anyway, said above.
  const readsFromCache = (s: ScenarioSummary): boolean => s.pageCacheFlagged > 0;
  // A row whose storage tier moved no bytes (CPU only, say) has no storage efficiency to want a limit for.
  const noStorageBytes = (s: ScenarioSummary): boolean => med(s, 'storage_read_bytes_per_s') === 0 && med(s, 'storage_write_bytes_per_s') === 0;
  const cachedRows = rows.filter(readsFromCache);
  if (cachedRows.length > 0) {
    notes.push(
      `${cachedRows.length} row(s): the page cache served storage reads (${cachedRows.map((s) => ofTrials(s, s.pageCacheFlagged)).join('; ')}): ` +
        'their read numbers describe RAM, not the drive, so no read efficiency there',
    );
  }
  // A CPU-only row whose trials spilled to the drive is partly the drive's: said where the row is read.
  for (const s of rows.filter((x) => x.spilledTrials > 0)) {
    const boundary = spillBoundary(s.scenarioId);
    if (boundary === null) continue;
    notes.push(`${ofTrials(s, s.spilledTrials)} spilled past the ${boundary.named}: the row's numbers include ${spillOwners(boundary.below)} (those trials are flagged)`);
  }
  for (const s of rows.filter((x) => !onRam(x) && noStorageBytes(x))) {
    notes.push(`${s.scenarioId}${where(s)}: the storage tier read and wrote no bytes: no storage efficiency (—), not 0 %`);
  }
  for (const s of rows) {
    const { fewestTrials, trialsNote } = trialCounts(s);
    if (trialsNote !== null) notes.push(`${s.scenarioId}${where(s)}: n ${fewestTrials}–${s.trialIds.length}: ${trialsNote}`);
    // A column whose every value was measured under a definition since replaced: its median is of that one.
    for (const d of s.definitionSplits.filter((x) => x.trialsSince === 0 && (ROW_METRICS as readonly string[]).includes(x.metric))) {
      notes.push(`${s.scenarioId}${where(s)}: ${definitionSplitText(d)}`);
    }
  }
  const trialsWord = `${report.includeIncomplete ? 'complete or partial' : 'complete'}${report.excludeFlagged ? ' unflagged' : ''}`;
  if (!baseline) notes.push(`no storage-only scenario with ${trialsWord} trials: no speedups`);
  const orphans = baseline ? rows.filter((s) => baselineOf(s) === null) : [];
  const atOtherUsers = rows.filter((s) => s !== baselineOf(s) && baselineOf(s) !== null && baselineOf(s)!.options.numUsers !== s.options.numUsers);
  for (const s of atOtherUsers) notes.push(`${s.scenarioId}, ${s.configDescription}${where(s)}: speedup ${baselineFor.get(s)!.note}`);
  if (orphans.length > 0) {
    notes.push(
      `${orphans.length} row(s) have no storage-only run of the same configuration apart from the tier budgets (users, duration, warm-up, I/O options …)` +
        `${spans.places || spans.labels ? ` on the same ${[spans.places ? 'system and drive' : null, spans.labels ? 'suite label' : null].filter((x) => x !== null).join(' and ')}` : ''}: no speedup`,
    );
    for (const s of orphans) notes.push(`${s.scenarioId}, ${s.configDescription}${where(s)}: ${baselineFor.get(s)!.note}`);
  }
  // Rows on RAM have no storage efficiency whatever the probe did, and rows whose reads the page
  // cache served no read efficiency (their notes say so): what the probe lacks matters for the rest.
  const wantsLimit = rows.filter((s) => !onRam(s) && !noStorageBytes(s) && !(readsFromCache(s) && limitsOf.get(s)!.writeBytesPerS !== null));
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
    const ram = !onRam(s)
      ? null
      : ramTrials(s) === s.trialIds.length
        ? `the cache directory was RAM-backed (${backingsText(s.ramBackings)}): its storage numbers describe memory, not a drive`
        : `${ramTrials(s)} of ${s.trialIds.length} trial(s) ran on a RAM-backed cache directory (${backingsText(s.ramBackings)}): their storage numbers describe memory, not a drive`;
    const cached = readsFromCache(s) ? 'the page cache served storage reads: they describe RAM, not the drive' : null;
    const readEff = efficiencyOf(rd, limits.readBytesPerS, {
      tier: 'storage',
      verb: 'read',
      device: 'drive',
      blocked: ram === null && cached === null ? null : [ram, cached].filter((x) => x !== null).join('; '),
      noLimit: limits.readNote !== null ? `no read limit: ${limits.readNote}` : 'no bandwidth probe of the drive',
    });
    const writeEff = efficiencyOf(wr, limits.writeBytesPerS, { tier: 'storage', verb: 'wrote', device: 'drive', blocked: ram, noLimit: 'no bandwidth probe of the drive' });
    const cpuEff = efficiencyOf(cpuRd, limits.memoryCopyBytesPerS, { tier: 'CPU', verb: 'read', device: 'memory', blocked: null, noLimit: 'no memory-copy probe' });
    const gpuRd = gpuLinkRate(s, 'gpu_d2h_link_bytes_per_s', 'gpu_hit_read_bytes');
    const gpuWr = gpuLinkRate(s, 'gpu_h2d_link_bytes_per_s', 'gpu_write_bytes');
    const gpuEff = (verb: 'read' | 'wrote', rate: number | null, limit: number | null) =>
      efficiencyOf(rate, limit, {
        tier: 'GPU',
        verb,
        device: 'GPU link',
        // The tables' own rule for a GPU column: a GPU budget, or a GPU read latency (an import may lack the options).
        blocked: anyGpuTier([{ gpuMemGb: numberOption(s, 'gpuMemGb'), gpuReadP95Ms: med(s, 'gpu_read_p95_ms') }]) ? null : 'no GPU tier',
        noLimit: 'no GPU copy probe',
        unrecorded: `no GPU link-busy ${verb === 'read' ? 'read' : 'write'} rate recorded (stored from kvbench 0.8.1 results on)`,
      });
    const gpuReadEff = gpuEff('read', gpuRd, limits.gpuD2hBytesPerS);
    const gpuWriteEff = gpuEff('wrote', gpuWr, limits.gpuH2dBytesPerS);
    return {
      scenarioId: s.scenarioId,
      label: s.label,
      configKey: s.configKey,
      configDescription: s.configDescription,
      systemId: s.systemId,
      systemLabel: s.systemLabel,
      driveId: s.driveId,
      driveLabel: s.driveLabel,
      driveSizeBytes: s.driveSizeBytes,
      suiteLabel: s.suiteLabel,
      gpuMemGb: numberOption(s, 'gpuMemGb'),
      cpuMemGb: numberOption(s, 'cpuMemGb'),
      numUsers: typeof s.options.numUsers === 'number' ? s.options.numUsers : null,
      finalUsers: s.options.enableAutoscaling === true ? med(s, 'autoscale_final_users') : null,
      n: s.trialIds.length,
      ...trialCounts(s),
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
      storageReadEfficiency: readEff.value,
      storageWriteEfficiency: writeEff.value,
      cpuReadEfficiency: cpuEff.value,
      gpuReadBusyEfficiency: gpuReadEff.value,
      gpuWriteBusyEfficiency: gpuWriteEff.value,
      storageReadEfficiencyNote: readEff.note,
      storageWriteEfficiencyNote: writeEff.note,
      cpuReadEfficiencyNote: cpuEff.note,
      gpuReadBusyEfficiencyNote: gpuReadEff.note,
      gpuWriteBusyEfficiencyNote: gpuWriteEff.note,
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
    excludeFlagged: report.excludeFlagged,
    probe: commonLimits(out.map((r) => r.limits), hardware, stated),
    rows: out,
    notes,
  };
}


/** The one set of limits every row shares, or a placeholder that sends the reader to the rows. */
function commonLimits(all: readonly ProbeLimits[], hardware: HardwareSource, stated: StatedBandwidth | null): ProbeLimits {
  if (all.length === 0) return withStated(typeof hardware === 'function' ? NO_LIMITS : probeLimitsOf(hardware), stated);
  if (all.every((l) => sameLimits(l, all[0]))) return all[0];
  const several = 'several: each row against the probe stored with its own trials';
  return withStated({ ...NO_LIMITS, source: several, memoryCopySource: several, gpuCopySource: several }, stated);
}
