// The merged result of a multi-host run as a results file: the reference's top-level keys, filled
// with the ranks' aggregate under the reference's meanings and units (so MLPerf KV-cache tooling
// reads it, and `kvbench import` stores it as one trial), beside `kvbench_merge`. `summary`'s rates
// and the totals they divide are over the common window (every rank loading the storage at once), so
// the reference's identities hold there (avg throughput = total_tokens ÷ elapsed_time); the top-level
// counters, the raw per-request lists, cache counts, byte totals and latencies cover each rank's
// whole window, as `kvbench_merge.counts` and `histograms` do, so they agree with one another (the
// top-level counts stay whole numbers). The raw lists are a sample where a rank's were: every rank's
// thinned to one share (merged-raw-lists.ts), which `kvbench_merge.raw_latency_lists` states. A key with no honest
// aggregate is left out: per-class QoS percentiles (a rank keeps no histogram of them), the storage
// device/host split (likewise), the pass/fail criteria, an autoscaler's steps.
import { TIER_NAMES } from '../../src-shared/domain/tiers.ts';
import path from 'node:path';
import { GIB, type LatencySummaryNs } from '../../src-shared/domain/results.ts';
import { LatencyHistogram } from '../engine/metrics/latency-histogram.ts';
import { latencySummaryNs } from '../engine/report/results-builder.ts';
import { extractHistograms, num, obj } from '../store/results-ingest.ts';
import { mergedCounts, sumOverRanks } from './merge-rank-counts.ts';
import type { MergedRanks } from './merge-ranks.ts';
import type { RawListKey } from './merged-raw-lists.ts';

type Obj = Record<string, unknown>;

/** One rank as the reference keys need it: its results, and its window's start and timeline. */
export interface RankForReference {
  results: Obj;
  startNs: number;
  timeline: Obj[];
}

/** Amounts of the common window, or per second of it, summed over the ranks (`kvbench_merge.totals`, `rates_per_sec`). */
export interface CommonWindowAmounts {
  storage_read_bytes: number;
  storage_write_bytes: number;
  cpu_read_bytes: number;
  cpu_write_bytes: number;
  generated_tokens: number;
  requests_completed: number;
}

/**
 * Every latency distribution of the ranks, merged, by its name in `kvbench.latency`
 * ("end_to_end", "tier_read.storage"). Percentiles are kept within the smallest and largest value
 * any rank recorded: the merged histogram knows them only to a bucket's edge.
 */
export function mergedHistograms(ranks: readonly Obj[]): Map<string, LatencySummaryNs> {
  const merged = new Map<string, { h: LatencyHistogram; minNs: number; maxNs: number }>();
  for (const results of ranks) {
    for (const rank of extractHistograms(results)) {
      const own = summaryAt(results, rank.name);
      const decoded = LatencyHistogram.decode(rank.hdr, rank.sumNs);
      let m = merged.get(rank.name);
      if (!m) merged.set(rank.name, (m = { h: new LatencyHistogram(), minNs: Infinity, maxNs: -Infinity }));
      m.h.merge(decoded);
      m.minNs = Math.min(m.minNs, num(own.min_ns) ?? decoded.summary().minNs);
      m.maxNs = Math.max(m.maxNs, num(own.max_ns) ?? decoded.summary().maxNs);
    }
  }
  const out = new Map<string, LatencySummaryNs>();
  for (const [name, { h, minNs, maxNs }] of merged) {
    const s = latencySummaryNs(h);
    const within = (v: number): number => Math.min(Math.max(v, minNs), maxNs);
    out.set(name, { ...s, min_ns: minNs, max_ns: maxNs, p50_ns: within(s.p50_ns), p95_ns: within(s.p95_ns), p99_ns: within(s.p99_ns), p999_ns: within(s.p999_ns), p9999_ns: within(s.p9999_ns) });
  }
  return out;
}

/**
 * The P95 of `name` that a rank reported itself (exact), or read back from its histogram for a file
 * without one; null where the rank has no such distribution.
 */
export function reportedP95Ns(results: Obj, name: string): number | null {
  const own = num(summaryAt(results, name).p95_ns);
  if (own !== undefined && own !== null) return own;
  const h = extractHistograms(results).find((x) => x.name === name);
  return h ? LatencyHistogram.decode(h.hdr, h.sumNs).summary().p95Ns : null;
}

/** A rank's own summary of the distribution `name` ("tier_read.storage" → kvbench.latency.tier_read.storage). */
function summaryAt(results: Obj, name: string): Obj {
  const dot = name.indexOf('.');
  const lat = obj(obj(results.kvbench).latency);
  return dot < 0 ? obj(lat[name]) : obj(obj(lat[name.slice(0, dot)])[name.slice(dot + 1)]);
}

/** The merged distributions in `kvbench.latency`'s layout, so the store reads them as it reads a rank's. */
export function histogramsSection(histograms: Map<string, LatencySummaryNs>): Record<string, unknown> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, s] of histograms) {
    const dot = name.indexOf('.');
    if (dot < 0) out[name] = s as unknown as Record<string, unknown>;
    else (out[name.slice(0, dot)] ??= {})[name.slice(dot + 1)] = s;
  }
  return out;
}

/**
 * The run's options as one trial: rank 0's, which every rank shares apart from its rank, its seed
 * (seed + rank: rank 0's is the base), its cache subdirectory and its results files. The world size
 * stays: eight hosts of 50 users are not one host of 50, and the trial's configuration says so.
 */
export function mergedRunOptions(rank0: Obj, worldSize: number): Record<string, unknown> {
  const o = { ...obj(obj(rank0.kvbench).run_options) };
  const cacheDir = typeof o.cacheDir === 'string' && /^rank-\d+$/.test(path.basename(o.cacheDir)) ? path.dirname(o.cacheDir) : o.cacheDir;
  return { ...o, rank: null, worldSize, cacheDir, output: null, xlsxOutput: null };
}

/** Why the merged run is partial: each incomplete rank with its own reason. */
export function mergedStatusReason(ranks: readonly { rank: number; status: string; results: Obj }[]): string | null {
  const incomplete = ranks.filter((r) => r.status !== 'complete');
  if (incomplete.length === 0) return null;
  return incomplete
    .map((r) => {
      const reason = obj(r.results.kvbench).status_reason;
      return `rank ${r.rank} ${r.status}${typeof reason === 'string' ? `: ${reason}` : ''}`;
    })
    .join('; ');
}

/** The earliest rank's `kvbench.started_at`: when the run began. */
export function mergedStartedAt(ranks: readonly Obj[]): string | null {
  const times = ranks.map((r) => obj(r.kvbench).started_at).filter((t): t is string => typeof t === 'string' && !Number.isNaN(Date.parse(t)));
  return times.length === 0 ? null : times.reduce((a, b) => (Date.parse(b) < Date.parse(a) ? b : a));
}

/**
 * The reference's throughput_timeline over the common window: at the end of each second of it,
 * the tokens every rank generated since it opened ÷ the seconds since (each rank's 1 s timeline
 * intervals pro-rated into the seconds they overlap).
 */
function throughputTimeline(ranks: readonly RankForReference[], fromNs: number, toNs: number): { timestamp: number; throughput_tokens_per_sec: number }[] {
  const seconds = Math.ceil((toNs - fromNs) / 1e9);
  const tokensIn = new Array<number>(seconds).fill(0);
  for (const r of ranks) {
    for (const p of r.timeline) {
      const endNs = num(p.elapsed_ns);
      const intervalNs = num(p.interval_ns);
      const rate = num(p.generated_tokens_per_sec) ?? 0;
      if (endNs === undefined || intervalNs === undefined || intervalNs <= 0 || rate === 0) continue;
      const a = Math.max(r.startNs + endNs - intervalNs, fromNs);
      const b = Math.min(r.startNs + endNs, toNs);
      for (let k = Math.floor((a - fromNs) / 1e9); k < seconds && fromNs + k * 1e9 < b; k++) {
        const overlapNs = Math.min(b, fromNs + (k + 1) * 1e9) - Math.max(a, fromNs + k * 1e9);
        if (overlapNs > 0) tokensIn[k] += rate * (overlapNs / 1e9);
      }
    }
  }
  let tokens = 0;
  return tokensIn.map((t, k) => {
    tokens += t;
    const elapsedS = Math.min((k + 1) * 1e9, toNs - fromNs) / 1e9;
    return { timestamp: elapsedS, throughput_tokens_per_sec: tokens / elapsedS };
  });
}

/** The reference's per-distribution keys in ms: {mean, p50, p95, p99, p999, p9999}. */
function percentilesMs(s: LatencySummaryNs | undefined): Record<string, number> | undefined {
  if (s === undefined) return undefined;
  const ms = (ns: number): number => ns / 1e6;
  return { mean: ms(s.mean_ns), p50: ms(s.p50_ns), p95: ms(s.p95_ns), p99: ms(s.p99_ns), p999: ms(s.p999_ns), p9999: ms(s.p9999_ns) };
}

/** cache_stats keys that are counts or amounts of one rank's cache: the run's are their sums. */
const SUMMED_CACHE_STATS = [
  'cache_hits', 'cache_misses', 'gpu_entries', 'cpu_entries', 'storage_entries', 'gpu_memory_used_gb', 'cpu_memory_used_gb',
  'offloads_cpu', 'offloads_storage', 'prefill_writes', 'decode_reads',
  ...TIER_NAMES.flatMap((t) => [`tier_${t}_kv_bytes_written_gb`, `tier_${t}_kv_bytes_read_gb`]),
  'system_prompt_hits', 'common_phrase_hits', 'user_cache_hits', 'multi_turn_hits',
  'total_read_bytes', 'total_write_bytes', 'total_read_gb', 'total_write_gb', 'read_iops', 'write_iops',
  'storage_tokens_processed', 'prefill_bytes_written_gb', 'decode_bytes_read_gb',
];

const PERCENTILE_KEYS = [['p50', 'p50_ns'], ['p95', 'p95_ns'], ['p99', 'p99_ns'], ['p999', 'p999_ns'], ['p9999', 'p9999_ns']] as const;

function cacheStats(ranks: readonly Obj[], rates: CommonWindowAmounts, histograms: Map<string, LatencySummaryNs>): Record<string, unknown> {
  const cs = (r: Obj): Obj => obj(obj(r.summary).cache_stats);
  const out: Record<string, unknown> = {};
  for (const key of SUMMED_CACHE_STATS) {
    const total = sumOverRanks(ranks, (r) => cs(r)[key]);
    if (total !== null) out[key] = total;
  }
  const hits = num(out.cache_hits);
  const misses = num(out.cache_misses);
  if (hits !== undefined && misses !== undefined) out.cache_hit_rate = hits + misses > 0 ? hits / (hits + misses) : 0;
  const read = num(out.total_read_bytes);
  const written = num(out.total_write_bytes);
  if (read !== undefined && written !== undefined) out.read_write_ratio = read / Math.max(written, 1);
  // GiB per second of the common window (the reference divides by 1024³ and says GB/s). The GPU
  // tier's bytes are not in the ranks' per-second timelines, so it gets no rate.
  out.tier_cpu_read_bandwidth_gbps = rates.cpu_read_bytes / GIB;
  out.tier_cpu_write_bandwidth_gbps = rates.cpu_write_bytes / GIB;
  out.tier_storage_read_bandwidth_gbps = rates.storage_read_bytes / GIB;
  out.tier_storage_write_bandwidth_gbps = rates.storage_write_bytes / GIB;
  for (const tier of TIER_NAMES) {
    for (const op of ['read', 'write']) {
      const s = histograms.get(`tier_${op}.${tier}`);
      if (s === undefined || s.count === 0) continue;
      for (const [name, field] of PERCENTILE_KEYS) out[`${tier}_${op}_${name}_ms`] = s[field] / 1e6;
    }
  }
  return out;
}

/** Each numeric key the ranks' section has, summed ({} when the ranks' are empty: prefix caching off). */
function summedSection(ranks: readonly Obj[], pick: (r: Obj) => unknown): Record<string, number> {
  const keys = new Set(ranks.flatMap((r) => Object.keys(obj(pick(r)))));
  const out: Record<string, number> = {};
  for (const k of keys) {
    const total = sumOverRanks(ranks, (r) => obj(pick(r))[k]);
    if (total !== null) out[k] = total;
  }
  return out;
}

/** Every rank's raw per-request list (seconds), one after another in rank order; absent if a rank has none. */
export interface ReferenceInput {
  /** In rank order. */
  ranks: readonly RankForReference[];
  /** The common window, Unix ns. */
  fromNs: number;
  toNs: number;
  /** Summed over the ranks within the common window (pro-rated from their timelines, so not whole numbers). */
  totals: CommonWindowAmounts;
  /** totals ÷ the common window's length. */
  rates: CommonWindowAmounts;
  histograms: Map<string, LatencySummaryNs>;
  /** The ranks' raw per-request lists at one share (merged-raw-lists.ts). */
  rawLists: Record<RawListKey, number[] | undefined>;
}

/** A rank's `storage_throughput_tokens_per_sec`: its own, or by the reference's definition from its totals. */
function rankStorageThroughput(results: Obj): number | undefined {
  const own = num(obj(results.summary).storage_throughput_tokens_per_sec);
  if (own !== undefined) return own;
  const tokens = num(results.total_tokens_generated);
  const storageS = num(results.total_storage_io_latency);
  if (tokens === undefined || storageS === undefined) return undefined;
  return storageS > 0 ? tokens / storageS : 0;
}

/** The reference's top-level keys for the merged run (see the file's comment for the windows). */
export function mergedReferenceKeys(input: ReferenceInput): Record<string, unknown> {
  const ranks = input.ranks.map((r) => r.results);
  const counts = mergedCounts(ranks);
  const sum = (key: string): number | null => sumOverRanks(ranks, (r) => r[key]);
  const out: Record<string, unknown> = {
    requests_completed: counts.requests_completed,
    total_tokens_generated: counts.tokens_generated,
    total_storage_io_latency: sum('total_storage_io_latency'),
    total_generation_latency: sum('total_generation_latency'),
  };
  for (const key of ['end_to_end_latencies', 'storage_latencies', 'generation_latencies'] as const) out[key] = input.rawLists[key];
  out.throughput_timeline = throughputTimeline(input.ranks, input.fromNs, input.toNs);
  for (const key of ['prefill_latencies', 'decode_latencies'] as const) out[key] = input.rawLists[key];
  out.multi_turn_cache_hits = counts.multi_turn_hits;
  out.multi_turn_cache_misses = counts.multi_turn_misses;
  // The base seed: rank N ran with seed + N.
  out.seed = ranks[0]?.seed ?? null;
  const completed = counts.requests_completed ?? 0;
  if (completed > 0) {
    const elapsedS = (input.toNs - input.fromNs) / 1e9;
    const storageS = num(out.total_storage_io_latency);
    const autoscaled = ranks.some((r) => (obj(r.summary).autoscaling_summary ?? null) !== null);
    out.summary = {
      // The common window's, like the rates beside them: the reference defines the rates as these ÷ elapsed_time.
      total_requests: input.totals.requests_completed,
      total_tokens: input.totals.generated_tokens,
      elapsed_time: elapsedS,
      avg_throughput_tokens_per_sec: input.rates.generated_tokens,
      total_storage_io_time: storageS,
      // The reference's rule across ranks (sum the ranks' throughputs), so the key means what
      // MLPerf tooling that aggregated rank files itself would show.
      storage_throughput_tokens_per_sec: sumOverRanks(ranks, rankStorageThroughput) ?? undefined,
      requests_per_second: input.rates.requests_completed,
      end_to_end_latency_ms: percentilesMs(input.histograms.get('end_to_end')),
      storage_io_latency_ms: percentilesMs(input.histograms.get('storage_io_per_request')),
      generation_latency_ms: percentilesMs(input.histograms.get('generation')),
      cache_stats: cacheStats(ranks, input.rates, input.histograms),
      prefix_cache_stats: summedSection(ranks, (r) => obj(r.summary).prefix_cache_stats),
      ...(autoscaled ? {} : { autoscaling_stats: [], autoscaling_summary: null }),
      multi_turn_stats: {
        cache_hits: counts.multi_turn_hits,
        cache_misses: counts.multi_turn_misses,
        hit_rate: (counts.multi_turn_hits ?? 0) / Math.max((counts.multi_turn_hits ?? 0) + (counts.multi_turn_misses ?? 0), 1),
      },
    };
  }
  return out;
}

/** The merged results file: the reference's keys at the top, `kvbench_merge` beside them. */
export function mergedResultsFile(merged: MergedRanks): Record<string, unknown> {
  const { reference, ...kvbenchMerge } = merged;
  return { ...reference, kvbench_merge: kvbenchMerge };
}
