// One result from the ranks of a multi-host run: what the shared storage sustained for all of them
// together. Throughput is only meaningful over a window every rank was measuring in, so bytes and
// tokens are summed over the ranks' common window (from each rank's per-second timeline), and
// latency percentiles come from the ranks' merged histograms, never from averaging percentiles.
import { printable } from '../../src-shared/domain/label-text.ts';
import path from 'node:path';
import type { LatencySummaryNs } from '../../src-shared/domain/results.ts';
import { METRIC_DEFINITION_CHANGES, straddledChanges } from '../../src-shared/domain/metric-changes.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { rankCacheDirName } from '../engine/config/ranks.ts';
import { formatNsAsSeconds } from '../engine/report/format.ts';
import { LatencyHistogram } from '../engine/metrics/latency-histogram.ts';
import { configKey, extractHistograms, num, obj } from '../store/results-ingest.ts';
import { gapsText, LATENCY_GAPS_REASON, latencySectionGaps } from '../store/kvbench-file-checks.ts';
import { failedRequestsNote, mergedCounts, type MergedCounts } from './merge-rank-counts.ts';
import { isoTimeOrNull } from '../../src-shared/domain/iso-time.ts';
import { mergedRawLists, type MergedRawListsFacts, type RankRawLists } from './merged-raw-lists.ts';
import { histogramsSection, mergedHistograms, reportedP95Ns, mergedReferenceKeys, mergedRunOptions, mergedStartedAt, mergedStatusReason } from './merged-results-file.ts';

type Obj = Record<string, unknown>;

export interface RankResultsFile {
  file: string;
  results: unknown;
}

export class MergeError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(problems.join('; '));
    this.problems = problems;
  }
}

/** Per-second amounts a timeline point gives, and the totals they add up to. */
const TIMELINE_AMOUNTS = {
  storage_read_bytes: 'storage_read_bytes_per_sec',
  storage_write_bytes: 'storage_write_bytes_per_sec',
  cpu_read_bytes: 'cpu_read_bytes_per_sec',
  cpu_write_bytes: 'cpu_write_bytes_per_sec',
  generated_tokens: 'generated_tokens_per_sec',
  requests_completed: 'requests_per_sec',
} as const;
type Amount = keyof typeof TIMELINE_AMOUNTS;
const AMOUNTS = Object.keys(TIMELINE_AMOUNTS) as Amount[];

/** The latencies a merged result reports: pooled over the ranks, and the reference's worst rank's P95. */
const MERGED_LATENCIES = [
  'end_to_end', 'queue_wait', 'issue_lateness', 'storage_io_per_request', 'generation', 'prefill', 'decode',
  ...['storage', 'cpu', 'gpu'].flatMap((t) => [`tier_read.${t}`, `tier_write.${t}`, `tier_read_ns_per_mib.${t}`, `tier_write_ns_per_mib.${t}`]),
  'demotion.gpu->cpu', 'demotion.gpu->storage', 'demotion.cpu->storage',
];

export interface MergedLatency {
  count: number;
  p50_ns: number;
  p95_ns: number;
  p99_ns: number;
  /** The reference's rule across ranks: the largest of the ranks' own P95s. */
  max_rank_p95_ns: number;
}

export interface MergedRanks {
  /**
   * The kvbench version that measured the run: every rank's (ranks of different versions are
   * refused). What an import stores as the trial's measuring version, as a single run's
   * `kvbench.version` is. A file without `merged_by_version` (merged by kvbench 0.7.0 or older)
   * has the merging kvbench's own version here, whatever measured its ranks.
   */
  version: string;
  /** The kvbench version that merged the ranks. */
  merged_by_version: string;
  status: 'complete' | 'partial';
  world_size: number;
  /** The configuration key of the run as one trial (with the world size): the one `kvbench import` stores it under. */
  config_key: string;
  ranks: {
    rank: number;
    host: string;
    /** The kvbench version that measured this rank (its `kvbench.version`). */
    version: string;
    file: string;
    status: string;
    seed: number | null;
    window_started_unix_ns: number;
    window_elapsed_ns: number;
    /** Share of this rank's window inside the common window. */
    share_in_common_window: number;
    /** How long after the earliest rank's window this rank's opened (wall clocks, so clock skew too). */
    late_ns: number;
    /** How long after `--start-at` (plus any warm-up) the window opened: the rank was not ready; null without --start-at. */
    start_at_late_ns: number | null;
    /** How much shorter this rank's window was than the longest: it stopped early. */
    short_ns: number;
    /** What the rank's own raw per-request lists kept (its file's, before the merge thinned them to one share). */
    raw_latency_lists: RankRawLists;
  }[];
  /** How the top-level raw per-request lists were made: null when no rank's file has them. */
  raw_latency_lists: MergedRawListsFacts | null;
  /** The span every rank was measuring in: the latest start to the earliest end. */
  common_window: { started_unix_ns: number; ended_unix_ns: number; duration_ns: number };
  /** Summed over the ranks within the common window (each rank's 1 s timeline, pro-rated at the edges). */
  totals: Record<Amount, number>;
  /** totals ÷ the common window's length. */
  rates_per_sec: Record<Amount, number>;
  /** Requests, cache lookups and tier operations summed over each rank's whole window, with the rates of those sums. */
  counts: MergedCounts;
  /** Over each rank's whole window (histograms are not kept per second). */
  latency: Record<string, MergedLatency>;
  notes: string[];
  /** Why the run is partial: each incomplete rank with its reason; null when complete. */
  status_reason: string | null;
  /** The earliest rank's start (ISO 8601). */
  started_at: string | null;
  /** The options of the run as one trial: the ranks' shared flags, with the world size. */
  run_options: Record<string, unknown>;
  /** Every latency distribution merged, in `kvbench.latency`'s layout with its HDR histograms (whole windows). */
  histograms: Record<string, unknown>;
  /** The reference's top-level keys for the whole run, written at the top level of the merged file (merged-results-file.ts). */
  reference: Record<string, unknown>;
}


interface RankRun {
  file: string;
  results: Obj;
  /** The kvbench version that measured this rank. */
  version: string;
  rank: number;
  worldSize: number | null;
  host: string;
  status: string;
  startNs: number;
  elapsedNs: number;
  /** When `--start-at` (and the warm-up after it) meant the window to open; null without it. */
  plannedStartNs: number | null;
  timeline: Obj[];
}

function readRank(f: RankResultsFile, problems: string[]): RankRun | null {
  const results = obj(f.results);
  const kv = obj(results.kvbench);
  if (typeof kv.version !== 'string') {
    problems.push(`${printable(f.file)} is not a kvbench results file (no kvbench section): only kvbench runs carry the timelines and histograms a merge needs`);
    return null;
  }
  const rank = obj(kv.rank);
  const rankNumber = num(rank.rank);
  if (rankNumber === undefined) {
    problems.push(`${printable(f.file)} is not one rank of a multi-host run (no kvbench.rank): run each host with --rank and --world-size, or under mpirun, Slurm or a Kubernetes Indexed Job`);
    return null;
  }
  // A launcher numbers ranks from 0 in a world of at least one: anything else was edited or damaged.
  const rankProblems = rankNumberProblems(f.file, rankNumber, rank.world_size);
  if (rankProblems.length > 0) {
    problems.push(...rankProblems);
    return null;
  }
  const window = obj(kv.measured_window);
  const startNs = num(window.started_unix_ns);
  const elapsedNs = num(kv.elapsed_ns);
  if (startNs === undefined || elapsedNs === undefined || !Array.isArray(kv.timeline)) {
    problems.push(`${printable(f.file)} has no window start time or timeline (written by an older kvbench): run the ranks again with this version`);
    return null;
  }
  // A start no clock can show (a damaged or hand-edited file) would be placed nowhere on the common window.
  if (startNs < 0 || isoTimeOrNull(startNs / 1e6) === null) {
    problems.push(`${printable(f.file)}: its window start (kvbench.measured_window.started_unix_ns ${startNs}) is not a time since 1970 any clock shows: the file is damaged; copy it from the rank's host again, or run the rank again`);
    return null;
  }
  // A missing histogram would leave this rank's latencies out of every pooled percentile while its
  // requests are still counted; a tier it did no operation on has none by design, and passes.
  const gaps = latencySectionGaps(kv.latency);
  if (gaps.length > 0) {
    problems.push(`rank ${rankNumber} (${printable(f.file)}): ${gapsText(gaps)}: ${LATENCY_GAPS_REASON}, so the file is damaged; copy it from the rank's host again, or run the rank again`);
  }
  // A damaged histogram is found here, with the file's name, rather than failing the merge halfway.
  for (const h of extractHistograms(results)) {
    const problem = LatencyHistogram.decodeProblem(h.hdr);
    if (problem !== null) problems.push(`${printable(f.file)}: the ${h.name} latency histogram (kvbench.latency.${h.name}.hdr) cannot be decoded (${problem}): the file is damaged; copy it from the rank's host again, or run the rank again`);
  }
  const startAtS = num(obj(kv.run_options).startAt);
  return {
    file: f.file,
    results,
    version: kv.version,
    rank: rankNumber,
    worldSize: num(rank.world_size) ?? null,
    host: typeof rank.host === 'string' ? rank.host : '?',
    status: typeof kv.status === 'string' ? kv.status : '?',
    startNs,
    elapsedNs,
    plannedStartNs: startAtS === undefined ? null : startAtS * 1e9 + (num(window.warm_up_ns) ?? 0),
    timeline: kv.timeline.map(obj),
  };
}

/** Why a file's rank or world size is none a launcher gives (a whole number from 0, a world of at least one). */
function rankNumberProblems(file: string, rank: number, worldSize: unknown): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(rank) || rank < 0) problems.push(`${printable(file)}: kvbench.rank.rank is ${rank}, not a rank (a whole number from 0): the file is damaged or edited`);
  if (worldSize !== null && worldSize !== undefined && !(Number.isInteger(worldSize) && (worldSize as number) >= 1)) {
    problems.push(`${printable(file)}: kvbench.rank.world_size is ${JSON.stringify(worldSize)}, not a world size (a whole number from 1): the file is damaged or edited`);
  }
  return problems;
}

/** What the user says about the run, where the files cannot. */
export interface MergeOptions {
  /** `kvbench merge --world-size N`: the ranks in the run, for ranks that did not record it. */
  worldSize?: number;
}

/** The ranks must form one run: each rank once, all of the world there, the same configuration. */
function consistencyProblems(runs: RankRun[], given: MergeOptions): { problems: string[]; worldSize: number } {
  const problems: string[] = [];
  const byRank = new Map<number, RankRun>();
  for (const r of runs) {
    const other = byRank.get(r.rank);
    if (other) problems.push(`rank ${r.rank} appears twice: ${printable(other.file)} and ${printable(r.file)}`);
    else byRank.set(r.rank, r);
  }
  const sizes = [...new Set(runs.map((r) => r.worldSize).filter((s): s is number => s !== null))];
  if (sizes.length > 1) problems.push(`the files disagree on the world size: ${sizes.join(', ')}`);
  if (given.worldSize !== undefined && sizes.length > 0 && sizes.some((s) => s !== given.worldSize)) {
    problems.push(`--world-size ${given.worldSize} disagrees with the world size the files record (${sizes.join(', ')})`);
  }
  // Without a recorded size, the highest rank present would make a lost last rank invisible.
  if (given.worldSize === undefined && sizes.length === 0) {
    problems.push(
      'no file records the world size (the ranks ran without --world-size): give kvbench merge --world-size N, ' +
        'so that a rank missing from the world is noticed instead of merged away',
    );
  }
  const worldSize = given.worldSize ?? sizes[0] ?? Math.max(...runs.map((r) => r.rank)) + 1;
  const outside = [...byRank.keys()].filter((rank) => rank >= worldSize);
  if (outside.length > 0) problems.push(`rank(s) ${outside.join(', ')} outside a world of ${worldSize}`);
  const missing = Array.from({ length: worldSize }, (_, i) => i).filter((i) => !byRank.has(i));
  if (missing.length > 0) {
    const shown = missing.slice(0, 10).join(', ') + (missing.length > 10 ? `, … (${missing.length} in all)` : '');
    problems.push(`rank(s) ${shown} of ${worldSize} missing: a merge of some ranks would understate what the storage served all of them`);
  }
  // One merged number pools the ranks' histograms and sums their counters: ranks measured by
  // different kvbench versions would mix two engines, and across a metric definition change two
  // definitions, in one value, and the trial can carry only one measuring version.
  const versions = rankGroups(runs, (r) => r.version, true);
  if (versions !== null) {
    problems.push(
      `the ranks were measured by different kvbench versions (${versions}): one merged number would mix their engines and metric definitions; run every rank with the same kvbench`,
    );
  }
  const options = (r: RankRun) => obj(obj(r.results.kvbench).run_options);
  const configs = rankGroups(runs, (r) => configKey(options(r)), false);
  if (configs !== null) problems.push(`the ranks ran different configurations (${configs}): give every rank the same flags`);
  // The configuration key leaves these out (they differ between systems), but within one run every
  // rank has the same: ranks that differ belong to different launches or different storage.
  const startAts = rankGroups(runs, (r) => String(num(options(r).startAt) ?? 'none'), true);
  if (startAts !== null) problems.push(`the ranks waited for different --start-at times (${startAts}): ranks of different launches are not one run`);
  const capacities = rankGroups(runs, (r) => String(num(options(r).storageCapacityGb) || 'a share of the free space'), true);
  if (capacities !== null) problems.push(`the ranks had different --storage-capacity-gb (${capacities}): give every rank the same flags`);
  const cacheBases = rankGroups(runs, (r) => sharedCacheDir(options(r).cacheDir, r.rank), true);
  if (cacheBases !== null) {
    problems.push(`the ranks' cache directories are not rank-N subdirectories of one --cache-dir (${cacheBases}): the ranks of one run share it`);
  }
  return { problems, worldSize };
}

/** `rank 0, rank 1 (a) vs rank 2 (b)` where the ranks differ in one value (shown or not); null where they agree. */
function rankGroups(runs: RankRun[], valueOf: (r: RankRun) => string, showValue: boolean): string | null {
  const groups = new Map<string, string[]>();
  for (const r of runs) groups.set(valueOf(r), [...(groups.get(valueOf(r)) ?? []), `rank ${r.rank}`]);
  if (groups.size <= 1) return null;
  return [...groups].map(([value, ranks]) => ranks.join(', ') + (showValue ? ` (${value})` : '')).join(' vs ');
}

/** The `--cache-dir` every rank was given: a rank's own is its `rank-N` subdirectory. */
function sharedCacheDir(cacheDir: unknown, rank: number): string {
  if (typeof cacheDir !== 'string') return 'none';
  return path.posix.basename(cacheDir) === rankCacheDirName(rank) ? path.posix.dirname(cacheDir) : cacheDir;
}

/** A rank's amounts inside [fromNs, toNs] (Unix ns): each timeline interval pro-rated by its overlap. */
function amountsWithin(r: RankRun, fromNs: number, toNs: number): Record<Amount, number> {
  const out = Object.fromEntries(AMOUNTS.map((a) => [a, 0])) as Record<Amount, number>;
  for (const p of r.timeline) {
    const endNs = num(p.elapsed_ns);
    const intervalNs = num(p.interval_ns);
    if (endNs === undefined || intervalNs === undefined || intervalNs <= 0) continue;
    const a = r.startNs + endNs - intervalNs;
    const b = r.startNs + endNs;
    const overlapNs = Math.min(b, toNs) - Math.max(a, fromNs);
    if (overlapNs <= 0) continue;
    for (const amount of AMOUNTS) out[amount] += (num(p[TIMELINE_AMOUNTS[amount]]) ?? 0) * (overlapNs / 1e9);
  }
  return out;
}

/**
 * The merged distributions (pooled, kept within what the ranks recorded), with the reference's rule
 * across ranks beside them: the largest P95 a rank reported itself, not one read back from its
 * bucketed histogram.
 */
function mergedLatencies(runs: RankRun[], histograms: Map<string, LatencySummaryNs>): Record<string, MergedLatency> {
  const out: Record<string, MergedLatency> = {};
  for (const name of MERGED_LATENCIES) {
    const h = histograms.get(name);
    if (!h || h.count === 0) continue;
    const rankP95s = runs.map((r) => reportedP95Ns(r.results, name)).filter((v): v is number => v !== null);
    out[name] = { count: h.count, p50_ns: h.p50_ns, p95_ns: h.p95_ns, p99_ns: h.p99_ns, max_rank_p95_ns: rankP95s.length > 0 ? Math.max(...rankP95s) : h.p95_ns };
  }
  return out;
}

interface RankTiming {
  late_ns: number;
  start_at_late_ns: number | null;
  short_ns: number;
}

function rankTimings(runs: RankRun[]): Map<RankRun, RankTiming> {
  const earliestNs = Math.min(...runs.map((r) => r.startNs));
  const longestNs = Math.max(...runs.map((r) => r.elapsedNs));
  return new Map(
    runs.map((r) => [
      r,
      {
        late_ns: r.startNs - earliestNs,
        start_at_late_ns: r.plannedStartNs === null ? null : r.startNs - r.plannedStartNs,
        short_ns: longestNs - r.elapsedNs,
      },
    ]),
  );
}

/**
 * Against the longest window: ranks that started late and ranks that stopped early both shrink the
 * common window. The span lost is at most the latest start's lateness plus the earliest-ending rank's
 * shortness, so naming every rank with at least half of it always names a cause.
 */
function commonWindowNote(runs: RankRun[], timing: Map<RankRun, RankTiming>, durationNs: number): string | null {
  const longestNs = Math.max(...runs.map((r) => r.elapsedNs));
  if (durationNs >= 0.9 * longestNs) return null;
  const lostNs = longestNs - durationNs;
  const s = (ns: number) => formatNsAsSeconds(ns, 1);
  const causes: string[] = [];
  const advice = new Set<string>();
  for (const r of runs) {
    const t = timing.get(r)!;
    if (t.late_ns >= lostNs / 2) {
      // Each rank waits for --start-at by its own clock, so a rank late against it was not ready in time.
      if (t.start_at_late_ns === null) {
        causes.push(`rank ${r.rank} started ${s(t.late_ns)} after the first`);
        advice.add('start the ranks together with --start-at');
      } else {
        causes.push(`rank ${r.rank} started ${s(t.late_ns)} after the first, ${s(t.start_at_late_ns)} after --start-at`);
        advice.add('leave the ranks more time to get ready before --start-at');
      }
    }
    if (t.short_ns >= lostNs / 2) {
      causes.push(`rank ${r.rank} measured ${s(t.short_ns)} less than the longest`);
      advice.add('see in its log why the short rank stopped early');
    }
  }
  return (
    `the common window is ${s(durationNs)} of the longest rank window's ${s(longestNs)}` +
    (causes.length > 0 ? ` (${causes.join('; ')})` : '') +
    `: the rates describe only that span; ${[...advice].join(', and ')}`
  );
}

/**
 * Ranks measured by an older kvbench keep that version's metric definitions, and so does their
 * merge: which of the results' metrics this kvbench defines differently, or null.
 */
function olderDefinitionsNote(measuredBy: string): string | null {
  const resultsMetrics = METRIC_DEFINITION_CHANGES.map((c) => c.metric).filter((m) => !m.startsWith('endpoint.'));
  const changes = straddledChanges([measuredBy, KVBENCH_VERSION], resultsMetrics);
  if (changes.length === 0) return null;
  const changed = changes.map((c) => `${c.metric} (changed in ${c.since})`).join(', ');
  return (
    `the ranks were measured by kvbench ${measuredBy}, and their merge keeps that version's definitions, which differ from this kvbench's (${KVBENCH_VERSION}) for ${changed}: ` +
    'compare those metrics only with runs measured on the same side of each change'
  );
}

/** Merges the results files of one multi-host run. Throws MergeError listing every problem. */
export function mergeRanks(files: readonly RankResultsFile[], given: MergeOptions = {}): MergedRanks {
  if (files.length === 0) throw new MergeError(['no results files given']);
  const problems: string[] = [];
  const runs = files.map((f) => readRank(f, problems)).filter((r): r is RankRun => r !== null);
  if (problems.length > 0) throw new MergeError(problems);
  const { problems: inconsistent, worldSize } = consistencyProblems(runs, given);
  if (inconsistent.length > 0) throw new MergeError(inconsistent);

  const fromNs = Math.max(...runs.map((r) => r.startNs));
  const toNs = Math.min(...runs.map((r) => r.startNs + r.elapsedNs));
  if (toNs <= fromNs) {
    throw new MergeError([
      'the ranks measured at different times (no moment when all of them were measuring): start them together with --start-at, ' +
        "and check that the hosts' clocks agree (NTP, chrony): the windows are placed by each host's wall clock",
    ]);
  }
  const durationNs = toNs - fromNs;
  runs.sort((a, b) => a.rank - b.rank);

  const totals = Object.fromEntries(AMOUNTS.map((a) => [a, 0])) as Record<Amount, number>;
  for (const r of runs) {
    const own = amountsWithin(r, fromNs, toNs);
    for (const a of AMOUNTS) totals[a] += own[a];
  }
  const rates = Object.fromEntries(AMOUNTS.map((a) => [a, totals[a] / (durationNs / 1e9)])) as Record<Amount, number>;

  const notes: string[] = [];
  const timing = rankTimings(runs);
  const windowNote = commonWindowNote(runs, timing, durationNs);
  if (windowNote !== null) notes.push(windowNote);
  const incomplete = runs.filter((r) => r.status !== 'complete');
  if (incomplete.length > 0) notes.push(`not every rank completed: ${incomplete.map((r) => `rank ${r.rank} ${r.status}`).join(', ')}`);
  const definitions = olderDefinitionsNote(runs[0].version);
  if (definitions !== null) notes.push(definitions);
  const failed = failedRequestsNote(runs);
  if (failed !== null) notes.push(failed);
  notes.push('throughput: summed over the ranks within the common window; latency: the ranks\' histograms merged, over each rank\'s whole window');
  notes.push('counts (requests, cache hits and misses, tier operations): summed over each rank\'s whole window; their hit rates are ratios of the sums, not means of the ranks\' rates');

  const histograms = mergedHistograms(runs.map((r) => r.results));
  const runOptions = mergedRunOptions(runs[0].results, worldSize);
  const rawLists = mergedRawLists(runs);
  if (rawLists.facts?.sampled) notes.push(rawLists.facts.note);
  return {
    version: runs[0].version,
    merged_by_version: KVBENCH_VERSION,
    status: incomplete.length > 0 ? 'partial' : 'complete',
    world_size: worldSize,
    // The key the imported trial is stored and matched under: with the world size, also when only --world-size gave it.
    config_key: configKey(runOptions),
    ranks: runs.map((r, i) => ({
      rank: r.rank,
      host: r.host,
      version: r.version,
      file: r.file,
      status: r.status,
      seed: num(obj(r.results.kvbench).effective_seed) ?? null,
      window_started_unix_ns: r.startNs,
      window_elapsed_ns: r.elapsedNs,
      share_in_common_window: durationNs / r.elapsedNs,
      ...timing.get(r)!,
      raw_latency_lists: rawLists.ranks[i],
    })),
    raw_latency_lists: rawLists.facts,
    common_window: { started_unix_ns: fromNs, ended_unix_ns: toNs, duration_ns: durationNs },
    totals,
    rates_per_sec: rates,
    counts: mergedCounts(runs.map((r) => r.results)),
    latency: mergedLatencies(runs, histograms),
    notes,
    status_reason: mergedStatusReason(runs),
    started_at: mergedStartedAt(runs.map((r) => r.results)),
    run_options: runOptions,
    histograms: histogramsSection(histograms),
    reference: mergedReferenceKeys({ ranks: runs, fromNs, toNs, totals, rates, histograms, rawLists: rawLists.lists }),
  };
}
