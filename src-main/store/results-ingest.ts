// Results JSON → what the store keeps of a trial: which format it is (kvbench's own, or one of the
// reference benchmark's versions), its status, the metrics of the catalogue, and the latency
// histograms. One extractor for both formats, so a trial imported from the reference and one run by
// the suite are measured by the same rulers (where the reference has the number at all).
import { TIER_NAMES } from '../../src-shared/domain/tiers.ts';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { CONFIG_MATCH_KEYS, CONFIG_MATCH_KEYS_WHEN_SET, type ResultsFormat, type TrialHistogram, type TrialMetrics } from '../../src-shared/domain/store-types.ts';
import { DEFAULT_RUN_OPTIONS, isTraceOnlyRun } from '../../src-shared/domain/run-options.ts';
import type { TrialStatus } from '../../src-shared/domain/results.ts';
import { FLAG_BY_KEY } from '../engine/config/flags.ts';
import { LatencyHistogram } from '../engine/metrics/latency-histogram.ts';
import { MAX_WORKERS } from '../engine/workload/personas.ts';
import { isQueueingBound } from '../../src-shared/domain/queueing-bound.ts';
import { olderDefinitionOf } from '../../src-shared/domain/metric-changes.ts';
import { askedGpuTier, gpuReservedBytes } from '../../src-shared/domain/gpu-tier.ts';

const GIB = 1024 ** 3;

/** The least a results file must have: the reference's top-level counters. Everything else is optional. */
export const ResultsFileSchema = z
  .object({
    requests_completed: z.number().int().nonnegative(),
    total_tokens_generated: z.number().nonnegative(),
    total_storage_io_latency: z.number().nonnegative().optional(),
    summary: z.record(z.string(), z.unknown()).optional(),
    kvbench: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

/** The GPU tier's per-copy bandwidths (`kvbench.tiers.gpu`), stored as diagnostics under their older definition. */
const GPU_COPY_FIELDS = ['h2d_copy_bandwidth_bytes_per_sec', 'd2h_copy_bandwidth_bytes_per_sec'] as const;

/**
 * The GPU tier's link-busy bandwidths per kind of copy (`kvbench.tiers.gpu`), by the trial metric
 * that stores each: host→device from pinned staging, device→host into pinned staging (reads), and
 * device→host into the tier below's pageable memory (demotions).
 */
const GPU_LINK_FIELDS = {
  gpu_h2d_link_bytes_per_s: 'h2d_link_busy_bytes_per_sec',
  gpu_d2h_link_bytes_per_s: 'd2h_staging_link_busy_bytes_per_sec',
  gpu_demotion_d2h_link_bytes_per_s: 'demotion_d2h_link_busy_bytes_per_sec',
} as const;

/** Counts, bytes, rates and latencies: a number, never negative (null, as Python writes None: absent). */
const amount = z.number().nonnegative().nullish();
/** Hit rates: the share of accesses that hit, 0 to 1. */
const fraction = z.number().min(0).max(1).nullish();
/** A section of the file: an object, or absent (null or missing); keys not named here pass as they are. */
const section = <S extends z.ZodRawShape>(shape: S) => z.looseObject(shape).nullish();
const amounts = (keys: readonly string[]): Record<string, typeof amount> => Object.fromEntries(keys.map((k) => [k, amount]));

const OPS = ['read', 'write'] as const;
const msPercentiles = section({ p50: amount, p95: amount, p99: amount });
/** An HDR histogram that decodes: a damaged one stored would drop out of every pooled latency unseen. */
const hdrText = z.string().superRefine((encoded, ctx) => {
  const problem = LatencyHistogram.decodeProblem(encoded);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: `not a decodable HDR histogram: ${problem}` });
});
const nsSummaryShape = { p95_ns: amount, sum_ns: amount, hdr: hdrText.nullish() };
const nsSummary = section({ count: amount, ...nsSummaryShape });
/** `kvbench.latency`: summaries (with a count), or groups of them by tier or direction (without). */
const latencyEntry = z.union([z.looseObject({ count: z.number().nonnegative(), ...nsSummaryShape }), z.record(z.string(), nsSummary)]).nullish();

/** The reference's raw per-request lists (kvbench writes them too, and a merge concatenates them). */
const RAW_LATENCY_LISTS = ['end_to_end_latencies', 'storage_latencies', 'generation_latencies', 'prefill_latencies', 'decode_latencies'] as const;

/**
 * Every field of a results file that extractMetrics and extractHistograms read, and the per-request
 * lists the stored file keeps for whoever reads it later, with the values a run can produce: numbers where numbers belong, nothing negative, hit rates within 0–1 (device
 * coverage may exceed 1: other processes read the drive too). A file that breaks one is refused
 * rather than stored with impossible numbers (a negative throughput, a 750 % hit rate).
 */
export const ResultsValuesSchema = z.looseObject({
  // Seconds each completed request took: never negative, never null.
  ...Object.fromEntries(RAW_LATENCY_LISTS.map((k) => [k, z.array(z.number().nonnegative()).nullish()])),
  summary: section({
    avg_throughput_tokens_per_sec: amount,
    storage_throughput_tokens_per_sec: amount,
    requests_per_second: amount,
    elapsed_time: amount,
    end_to_end_latency_ms: msPercentiles,
    storage_io_latency_ms: msPercentiles,
    cache_stats: section({
      ...amounts(TIER_NAMES.flatMap((t) => OPS.flatMap((op) => [`${t}_${op}_p95_ms`, `tier_${t}_kv_bytes_${op === 'read' ? 'read' : 'written'}_gb`, `tier_${t}_${op}_bandwidth_gbps`]))),
      ...amounts(OPS.flatMap((op) => [`nvme_${op}_p95_ms`, `storage_${op}_device_p95_ms`, `nvme_${op}_device_p95_ms`])),
      ...amounts(['decode_bytes_read_gb', 'prefill_bytes_written_gb', 'total_read_bytes', 'total_write_bytes']),
      cache_hit_rate: fraction,
    }),
    multi_turn_stats: section({ hit_rate: fraction }),
    autoscaling_summary: section({ final_users: amount, peak_user_count: amount, peak_throughput_tokens_per_sec: amount, peak_found: z.boolean().nullish(), target_met: z.boolean().nullish() }),
  }),
  kvbench: section({
    elapsed_ns: amount,
    requests_failed: amount,
    latency: z.record(z.string(), latencyEntry).nullish(),
    tier_bytes: section(Object.fromEntries(TIER_NAMES.map((t) => [t, section(amounts(['read_bytes', 'write_bytes', 'read_bytes_per_sec', 'write_bytes_per_sec', 'demoted_out_bytes', 'hit_read_bytes']))]))),
    primary: section({ decode_bytes_read: amount, prefill_bytes_written: amount }),
    tiers: section({ gpu: section(amounts([...GPU_COPY_FIELDS, ...Object.values(GPU_LINK_FIELDS)])), storage: section({ ram_backed: z.boolean().nullish(), ram_filesystem: z.string().nullish(), ram_backing_chain: z.string().nullish(), direct_io: z.boolean().nullish(), buffered_loops: z.array(z.looseObject({ name: z.string() })).nullish() }) }),
    device_io: section({ read_bytes: amount, write_bytes: amount, read_coverage: amount, process_read_coverage: amount, flagged: z.boolean().nullish() }),
    engine_health: section({ event_loop_lag_ns: section({ p99: amount }), peak_rss_bytes: amount }),
  }),
  kvbench_merge: section({
    histograms: z.record(z.string(), latencyEntry).nullish(),
    counts: section({ requests_failed: amount }),
  }),
});

/** The two counters every results file has; a trial whose file yields nothing else tells nothing. */
const FILE_COUNTERS: readonly string[] = ['requests_completed', 'tokens_generated'];

/** The catalogue metrics beyond the counters every file has: none means the file measured nothing usable. */
export const usableMetricKeys = (metrics: TrialMetrics): string[] => Object.keys(metrics).filter((k) => !FILE_COUNTERS.includes(k));

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A results file's object at `v`, or an empty one: reading a missing section gives nothing, not an error. */
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});
/** A finite number at `v`, else undefined. */
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function detectFormat(results: Obj): ResultsFormat {
  const kv = results.kvbench;
  if (isObj(kv) && typeof kv.version === 'string') return 'kvbench';
  if (isMergedResults(results)) return 'kvbench';
  const summary = obj(results.summary);
  const cs = obj(summary.cache_stats);
  if ('storage_entries' in cs || 'storage_read_p95_ms' in cs || 'tier_storage_kv_bytes_read_gb' in cs || 'storage_throughput_tokens_per_sec' in summary) return 'reference-new';
  if ('elapsed_time' in summary) return 'reference-mid';
  return 'reference-old';
}

/** The trial's status as its results say: the engine's own status, or for the reference "complete" when it has a summary. */
export function statusFromResults(results: Obj, format: ResultsFormat, maxRequests = 0): { status: TrialStatus; reason: string | null } {
  if (format === 'kvbench') {
    // A merged multi-host file states the run's status where a single run's file does.
    const kv = isMergedResults(results) ? obj(results.kvbench_merge) : obj(results.kvbench);
    const s = kv.status;
    const status: TrialStatus = s === 'complete' || s === 'partial' || s === 'failed' || s === 'aborted' ? s : 'failed';
    return { status, reason: typeof kv.status_reason === 'string' ? kv.status_reason : null };
  }
  const completed = num(results.requests_completed) ?? 0;
  if (!isObj(results.summary) || completed === 0) return { status: 'failed', reason: 'no request completed (the results have no summary)' };
  // 003's finding: a run that stopped short of its --max-requests is incomplete (timeout, contention).
  if (maxRequests > 0 && completed < maxRequests) {
    return { status: 'partial', reason: `completed ${completed} of ${maxRequests} requests (--max-requests)` };
  }
  return { status: 'complete', reason: null };
}

function latencyMs(summaryNs: unknown, key = 'p95_ns'): number | undefined {
  const s = obj(summaryNs);
  const count = num(s.count);
  if (count === undefined || count <= 0) return undefined;
  const v = num(s[key]);
  return v === undefined ? undefined : v / 1e6;
}

/** Every catalogue metric the file has. Missing numbers are absent, never 0. */
export function extractMetrics(results: Obj): TrialMetrics {
  const out: TrialMetrics = {};
  const put = (key: string, v: number | undefined): void => {
    if (v !== undefined && Number.isFinite(v)) out[key] = v;
  };
  const summary = obj(results.summary);
  const cs = obj(summary.cache_stats);
  const kv = obj(results.kvbench);
  const lat = latencySection(results);
  const tierBytes = obj(kv.tier_bytes);
  const primary = obj(kv.primary);
  const gib = (v: unknown): number | undefined => (num(v) === undefined ? undefined : num(v)! * GIB);

  const completed = num(results.requests_completed);
  const tokens = num(results.total_tokens_generated);
  const storageS = num(results.total_storage_io_latency);
  put('wall_clock_throughput_tok_per_s', num(summary.avg_throughput_tokens_per_sec));
  put(
    'storage_throughput_tok_per_s',
    num(summary.storage_throughput_tokens_per_sec) ?? (tokens !== undefined && storageS !== undefined && storageS > 0 && isObj(results.summary) ? tokens / storageS : undefined),
  );
  put('requests_per_s', num(summary.requests_per_second));
  put('requests_completed', completed);
  put('tokens_generated', tokens);
  put('elapsed_s', num(summary.elapsed_time) ?? (num(kv.elapsed_ns) !== undefined ? num(kv.elapsed_ns)! / 1e9 : undefined));
  const e2e = obj(summary.end_to_end_latency_ms);
  put('e2e_p50_ms', num(e2e.p50));
  put('e2e_p95_ms', num(e2e.p95));
  put('e2e_p99_ms', num(e2e.p99));
  put('storage_io_per_request_p95_ms', num(obj(summary.storage_io_latency_ms).p95));
  put('queue_wait_p95_ms', latencyMs(lat.queue_wait));
  put('issue_lateness_p95_ms', latencyMs(lat.issue_lateness));
  put('issue_lateness_max_ms', latencyMs(lat.issue_lateness, 'max_ns'));
  for (const tier of TIER_NAMES) {
    for (const op of ['read', 'write'] as const) {
      // NEW names first, then the MID/OLD `nvme_*` names for the storage tier.
      put(`${tier}_${op}_p95_ms`, num(cs[`${tier}_${op}_p95_ms`]) ?? (tier === 'storage' ? num(cs[`nvme_${op}_p95_ms`]) : undefined) ?? latencyMs(obj(lat[`tier_${op}`])[tier]));
      const kvBytes = obj(tierBytes[tier]);
      put(`${tier}_${op}_bytes`, num(kvBytes[`${op}_bytes`]) ?? gib(cs[`tier_${tier}_kv_bytes_${op === 'read' ? 'read' : 'written'}_gb`]));
    }
  }
  for (const tier of TIER_NAMES) put(`${tier}_hit_read_bytes`, hitReadBytes(results, obj(tierBytes[tier])));
  put('storage_read_device_p95_ms', num(cs.storage_read_device_p95_ms) ?? num(cs.nvme_read_device_p95_ms));
  put('storage_write_device_p95_ms', num(cs.storage_write_device_p95_ms) ?? num(cs.nvme_write_device_p95_ms));
  put('storage_read_p95_ms_per_mib', latencyMs(obj(lat.tier_read_ns_per_mib).storage));
  put('storage_write_p95_ms_per_mib', latencyMs(obj(lat.tier_write_ns_per_mib).storage));
  put('decode_bytes_read', num(primary.decode_bytes_read) ?? gib(cs.decode_bytes_read_gb));
  put('prefill_bytes_written', num(primary.prefill_bytes_written) ?? gib(cs.prefill_bytes_written_gb));
  put('total_read_bytes', num(cs.total_read_bytes));
  put('total_write_bytes', num(cs.total_write_bytes));
  const storageBytes = obj(tierBytes.storage);
  const cpuBytes = obj(tierBytes.cpu);
  put('storage_read_bytes_per_s', num(storageBytes.read_bytes_per_sec) ?? gib(cs.tier_storage_read_bandwidth_gbps));
  put('storage_write_bytes_per_s', num(storageBytes.write_bytes_per_sec) ?? gib(cs.tier_storage_write_bandwidth_gbps));
  put('cpu_read_bytes_per_s', num(cpuBytes.read_bytes_per_sec) ?? gib(cs.tier_cpu_read_bandwidth_gbps));
  put('cpu_write_bytes_per_s', num(cpuBytes.write_bytes_per_sec) ?? gib(cs.tier_cpu_write_bandwidth_gbps));
  const gpu = obj(obj(kv.tiers).gpu);
  put('gpu_h2d_copy_bytes_per_s', num(gpu.h2d_copy_bandwidth_bytes_per_sec));
  put('gpu_d2h_copy_bytes_per_s', num(gpu.d2h_copy_bandwidth_bytes_per_sec));
  // Only of today's definition (the copies' own intervals, 0.8.1 on): before, the busy time ran from
  // hand-off to reply and counted a copy's wait behind one of the other direction (the H200's
  // host→device link read 29.16 GB/s beside 40.39 GB/s per copy in its first gpu-only run, kvbench
  // 0.8.0). Stored marked, such a value would still be ratioed against another system's of the same
  // age as a link rate; it is left out instead.
  const version = measuringVersion(results);
  for (const [key, field] of Object.entries(GPU_LINK_FIELDS)) {
    if (version !== null && olderDefinitionOf(key, version) === null) put(key, num(gpu[field]));
  }
  // What the GPU tier was, where one was asked for: it may not have opened (the run went on below), or
  // opened smaller than asked, or without pinned staging, which only these facts tell.
  const asked = askedGpuTier(results);
  if (asked !== null) {
    put('gpu_tier_requested_bytes', asked.requestedBytes);
    put('gpu_tier_present', asked.gpu.present === true ? 1 : 0);
    put('gpu_tier_reserved_bytes', gpuReservedBytes(asked.gpu));
    if (asked.gpu.present === true && typeof asked.gpu.staging_pinned === 'boolean') put('gpu_staging_pinned', asked.gpu.staging_pinned ? 1 : 0);
  }
  put('cache_hit_rate', num(cs.cache_hit_rate));
  put('multi_turn_hit_rate', num(obj(summary.multi_turn_stats).hit_rate));
  const auto = obj(summary.autoscaling_summary);
  put('autoscale_final_users', num(auto.final_users));
  put('autoscale_peak_users', num(auto.peak_user_count));
  put('autoscale_peak_throughput_tok_per_s', num(auto.peak_throughput_tokens_per_sec));
  put('autoscale_peak_found', peakFound(auto, summary.autoscaling_stats));
  if (typeof auto.target_met === 'boolean') put('autoscale_target_met', auto.target_met ? 1 : 0);
  const device = obj(kv.device_io);
  put('device_read_bytes', num(device.read_bytes));
  put('device_write_bytes', num(device.write_bytes));
  put('device_read_coverage', num(device.read_coverage));
  put('process_read_coverage', num(device.process_read_coverage));
  // The engine's own page-cache verdict, so a report never judges the trial by a second rule.
  if (typeof device.flagged === 'boolean') put('page_cache_flagged', device.flagged ? 1 : 0);
  const storageTier = obj(obj(kv.tiers).storage);
  if (typeof storageTier.direct_io === 'boolean') put('storage_direct_io', storageTier.direct_io ? 1 : 0);
  if (typeof storageTier.ram_backed === 'boolean') put('storage_ram_backed', storageTier.ram_backed ? 1 : 0);
  if (Array.isArray(storageTier.buffered_loops)) put('storage_buffered_loop', storageTier.buffered_loops.length > 0 ? 1 : 0);
  put('requests_failed', num(kv.requests_failed) ?? num(obj(obj(results.kvbench_merge).counts).requests_failed));
  const health = obj(kv.engine_health);
  const queue = obj(kv.queue);
  const queuedAtClose = num(obj(kv.measured_window).requests_queued_at_close);
  put('requests_queued_at_close', queuedAtClose);
  put('queueing_bound', queueingBoundOf(results, queuedAtClose));
  if (typeof queue.backlog_cap_reached === 'boolean') put('backlog_cap_reached', queue.backlog_cap_reached ? 1 : 0);
  put('event_loop_lag_p99_ms', num(obj(health.event_loop_lag_ns).p99) !== undefined ? num(obj(health.event_loop_lag_ns).p99)! / 1e6 : undefined);
  put('peak_rss_bytes', num(health.peak_rss_bytes));
  return out;
}

/**
 * What requests read from one tier (its hits): the results' own count (0.8.1 on), else its reads less
 * what demotions read out of it, where that is exact: demotions counted chunk by chunk in the window
 * as the reads are (0.8.0 on) and no promotion moving bytes too. Undefined otherwise (older results,
 * a run with --promotion, the reference's files): a tier's reads then include moves, and a reader
 * must not take them for what the tier served.
 */
function hitReadBytes(results: Obj, tier: Obj): number | undefined {
  const own = num(tier.hit_read_bytes);
  if (own !== undefined) return own;
  const kv = obj(results.kvbench);
  const version = measuringVersion(results);
  const read = num(tier.read_bytes);
  const demotedOut = num(tier.demoted_out_bytes);
  const promotion = obj(kv.promotion).policy ?? obj(kv.run_options).promotion;
  if (version === null || olderDefinitionOf('kvbench.tier_bytes.demoted_out_bytes', version) !== null || promotion !== 'none') return undefined;
  return read === undefined || demotedOut === undefined ? undefined : read - demotedOut;
}

/**
 * Whether a kvbench run was queueing-bound (1) or not (0), by today's rule (isQueueingBound) over the
 * queue its results say it closed with, whichever kvbench measured it: the engine's own verdict before
 * 0.8.0 needed 1,000 queued requests, which a run of a few users never reached however far behind it
 * fell. The workers at the close are the results' own (0.8.0 on), else the users then (the autoscaler's
 * final users, or --num-users), at most MAX_WORKERS, as the engine sizes its pool. Results without the
 * queue at the close keep the engine's verdict, if any; an unpaced replay (its backlog bounded at
 * 2 × workers by design) never is one; the reference's files say nothing.
 */
function queueingBoundOf(results: Obj, queuedAtClose: number | undefined): number | undefined {
  const kv = obj(results.kvbench);
  const queue = obj(kv.queue);
  const engineVerdict = typeof queue.queueing_bound === 'boolean' ? (queue.queueing_bound ? 1 : 0) : undefined;
  const completed = num(results.requests_completed);
  if (queuedAtClose === undefined || completed === undefined || !isObj(kv.queue)) return engineVerdict;
  if (queue.backlog_cap_requests === null) return 0;
  const options = obj(kv.run_options);
  const users = num(obj(obj(results.summary).autoscaling_summary).final_users) ?? num(options.numUsers);
  const workers = num(queue.workers_at_close) ?? (users === undefined ? undefined : Math.min(users, MAX_WORKERS));
  if (workers === undefined) return engineVerdict;
  return isQueueingBound({ queuedRequests: queuedAtClose, workers, requestsCompleted: completed }) ? 1 : 0;
}

/**
 * What held a RAM-backed cache directory in memory, as the results say it: the chain of devices
 * (`ram_backing_chain`, 'loop0 → /dev/shm/d.img on tmpfs'), else the shorter words of a file written
 * before it was kept (`ram_filesystem`, 'loop0 on tmpfs'). Null when the storage tier was not
 * RAM-backed (`ram_backed`, which storage_ram_backed stores) or the file says nothing of what held it.
 */
export function extractRamBacking(results: Obj): string | null {
  const storageTier = obj(obj(obj(results.kvbench).tiers).storage);
  if (storageTier.ram_backed !== true) return null;
  const said = [storageTier.ram_backing_chain, storageTier.ram_filesystem].find((v) => typeof v === 'string' && v.trim() !== '');
  return typeof said === 'string' ? said : null;
}

/**
 * Whether a capacity run found its peak (1) or its window closed first (0); undefined for other runs.
 * kvbench says so (`peak_found`); the reference's capacity runs found it when a step stopped the run.
 */
function peakFound(auto: Obj, steps: unknown): number | undefined {
  if (typeof auto.peak_found === 'boolean') return auto.peak_found ? 1 : 0;
  if (num(auto.peak_user_count) === undefined || !Array.isArray(steps)) return undefined;
  return steps.some((e) => obj(e).action === 'stop') ? 1 : 0;
}

/**
 * A `kvbench merge` result (docs/multi-host.md): the reference's keys for the whole multi-host run,
 * and `kvbench_merge` where a single run's file has `kvbench`.
 */
export function isMergedResults(results: Obj): boolean {
  return !isObj(results.kvbench) && isObj(results.kvbench_merge) && typeof results.kvbench_merge.version === 'string';
}

/**
 * The kvbench version that measured these results: `kvbench.version`, or a merged file's
 * `kvbench_merge.version`; null for the reference's files, which carry none. What version-gated
 * rules judge a trial by (a stall in 0.1.0's draining window, a metric whose definition changed).
 */
export function measuringVersion(results: Obj): string | null {
  const version = (isMergedResults(results) ? obj(results.kvbench_merge) : obj(results.kvbench)).version;
  return typeof version === 'string' ? version : null;
}

/** `kvbench.latency`, or a merged file's `kvbench_merge.histograms`: the same layout, pooled over the ranks. */
function latencySection(results: Obj): Obj {
  return isMergedResults(results) ? obj(obj(results.kvbench_merge).histograms) : obj(obj(results.kvbench).latency);
}

/** The compressed HDR histograms of `kvbench.latency` (kvbench results only; the reference keeps raw lists). */
export function extractHistograms(results: Obj): TrialHistogram[] {
  const lat = latencySection(results);
  const out: TrialHistogram[] = [];
  const take = (name: string, s: unknown, unit: TrialHistogram['unit']): void => {
    const o = obj(s);
    const count = num(o.count);
    if (typeof o.hdr !== 'string' || count === undefined || count <= 0) return;
    out.push({ name, unit, count, sumNs: num(o.sum_ns) ?? 0, hdr: o.hdr });
  };
  for (const [key, value] of Object.entries(lat)) {
    const o = obj(value);
    if (typeof o.hdr === 'string') take(key, o, 'ns');
    else for (const [sub, s] of Object.entries(o)) take(`${key}.${sub}`, s, key.endsWith('_ns_per_mib') ? 'ns/MiB' : 'ns');
  }
  return out;
}

/** The run options a kvbench results file carries (`kvbench.run_options`), when the engine wrote them. */
export function optionsFromResults(results: Obj): Record<string, unknown> | null {
  const o = (isMergedResults(results) ? obj(results.kvbench_merge) : obj(results.kvbench)).run_options;
  return isObj(o) ? o : null;
}

/**
 * The key that matches trials of different systems: sha256 over the workload-defining options
 * (CONFIG_MATCH_KEYS, defaults filled in; CONFIG_MATCH_KEYS_WHEN_SET where not their defaults),
 * first 16 hex digits. Where files go, output names, seeds and storage capacity are left out: they
 * differ between machines without changing the test.
 */
export function configKey(options: Record<string, unknown>): string {
  const defaults = DEFAULT_RUN_OPTIONS as unknown as Record<string, unknown>;
  const value = (k: string): unknown => optionValue(options, k);
  const canonical: [string, unknown][] = CONFIG_MATCH_KEYS.map((k) => [k, value(k)]);
  for (const k of CONFIG_MATCH_KEYS_WHEN_SET) {
    if (!appliesInKey(k, value)) continue;
    if (options[k] !== undefined && canonicalJson(options[k]) !== canonicalJson(defaults[k])) canonical.push([k, options[k]]);
  }
  const redefined = redefinedModel(options);
  if (redefined !== undefined) canonical.push(['customModel', redefined]);
  // Trace-only mode does no I/O at all: never the same test as a run that does (whatever the log's path).
  if (isTraceOnlyRun(options)) canonical.push(['traceOnly', true]);
  return createHash('sha256').update(canonicalJson(canonical)).digest('hex').slice(0, 16);
}

/**
 * A model redefined in the config file is another geometry under the same name (other added models
 * do not change this trial): the redefinition, or undefined.
 */
function redefinedModel(options: Record<string, unknown>): unknown {
  const model = String(optionValue(options, 'model'));
  return isObj(options.customModels) ? options.customModels[model] : undefined;
}

/** Whether a CONFIG_MATCH_KEYS_WHEN_SET option acts in a run of these options (see APPLIES_WHEN). */
const appliesInKey = (k: string, value: (k: string) => unknown): boolean => APPLIES_WHEN[k]?.(value) ?? true;

/** Options that change the run only together with another: elsewhere they must not split trials (a suite sets the autoscaler's interval on every scenario). */
const APPLIES_WHEN: Partial<Record<string, (value: (k: string) => unknown) => boolean>> = {
  autoscalerInterval: (v) => v('enableAutoscaling') === true,
  traceSpeedup: (v) => v('useBurstTrace') === true || v('datasetPath') !== null,
  replayCycles: (v) => v('useBurstTrace') === true || v('datasetPath') !== null,
  maxConversations: (v) => v('datasetPath') !== null,
  burstTracePath: (v) => v('useBurstTrace') === true,
  // A merged multi-host run: N hosts of these users each. One host (no rank, or a world of one) is not keyed by it.
  worldSize: (v) => typeof v('worldSize') === 'number' && (v('worldSize') as number) > 1,
};

/**
 * What identifies a results file's content: sha256 over its JSON with keys sorted, so a copy, a
 * re-indented file or the results a suite stored and a file written from them give the same digest.
 */
export function resultsDigest(results: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(results)).digest('hex');
}

/** Equal as JSON values, whatever the order of object keys. */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** JSON with object keys sorted at every level, so equal values always give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (isObj(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]])) : v));
}

/**
 * The key of a trial whose run options are unknown (a reference file imported without --run-flags):
 * a digest of its own content, so it matches no configuration, whatever the defaults would say.
 */
export function unknownConfigKey(resultsText: string): string {
  return `${UNKNOWN_CONFIG_PREFIX}${createHash('sha256').update(resultsText).digest('hex').slice(0, 12)}`;
}

const UNKNOWN_CONFIG_PREFIX = 'unknown-';

/** Whether a trial's configuration is unknown (see unknownConfigKey). */
export const isUnknownConfigKey = (key: string): boolean => key.startsWith(UNKNOWN_CONFIG_PREFIX);

/** A stored trial's run option, or its default where the trial's options leave it out. */
export function optionValue(options: Record<string, unknown>, key: string): unknown {
  return options[key] === undefined ? (DEFAULT_RUN_OPTIONS as unknown as Record<string, unknown>)[key] : options[key];
}

/**
 * A short description of a configuration for tables and notes, in words a reader knows ("tiny-1b,
 * 4 users, 30 s, CPU 0.25 GiB, GPU 0 GiB, generation none"): model, users, seconds, CPU and GPU
 * budgets, generation, and a storage cap when there is one (an MLPerf option added to a quick or
 * standard suite runs capped, where the reference's has 95 % of the free space: the row says so); then
 * every other option of the configuration key that is not its default, by its flag ("warm-up 1",
 * "direct-io off", "disable-multi-turn"), so two rows kept apart never read alike. Made when a report
 * is read, never stored, and no key: trials match by configKey; trials of any age are described by
 * the same rule.
 */
export function describeConfig(options: Record<string, unknown>): string {
  const v = (k: string): unknown => optionValue(options, k);
  const users = v('numUsers');
  const parts = [
    `${v('model')}`,
    `${users} user${users === 1 ? '' : 's'}`,
    `${v('duration')} s`,
    `CPU ${v('cpuMemGb')} GiB`,
    `GPU ${v('gpuMemGb')} GiB`,
    `generation ${v('generationMode')}`,
  ];
  if (Number(v('worldSize')) > 1) parts.push(`× ${v('worldSize')} hosts`);
  if (Number(v('storageCapacityGb')) > 0) parts.push(`storage ${v('storageCapacityGb')} GiB`);
  if (v('maxConcurrentAllocs') !== 0) parts.push(optionText('maxConcurrentAllocs', v('maxConcurrentAllocs')));
  if (v('enableAutoscaling')) parts.push(`autoscaling ${v('autoscalerMode')}`);
  if (v('maxRequests') !== 0) parts.push(`max ${v('maxRequests')} requests`);
  const described = [...DESCRIBED_KEYS, ...(v('enableAutoscaling') ? ['autoscalerMode'] : [])];
  const defaults = DEFAULT_RUN_OPTIONS as unknown as Record<string, unknown>;
  for (const k of [...CONFIG_MATCH_KEYS, ...CONFIG_MATCH_KEYS_WHEN_SET]) {
    if (described.includes(k) || !appliesInKey(k, v) || canonicalJson(v(k)) === canonicalJson(defaults[k])) continue;
    parts.push(optionText(k, v(k)));
  }
  if (redefinedModel(options) !== undefined) parts.push('model redefined');
  if (isTraceOnlyRun(options)) parts.push('trace only');
  return parts.join(', ');
}

/** The options describeConfig words itself. */
const DESCRIBED_KEYS: readonly string[] = ['model', 'numUsers', 'duration', 'cpuMemGb', 'gpuMemGb', 'generationMode', 'worldSize', 'maxConcurrentAllocs', 'enableAutoscaling', 'maxRequests'];

/** One option as its flag says it: "warm-up 1", "disable-multi-turn" (a flag that is on), a file by its name. */
function optionText(key: string, value: unknown): string {
  const name = FLAG_BY_KEY.get(key)?.flag.replace(/^--/, '') ?? key;
  if (value === true) return name;
  if (typeof value === 'object' && value !== null) return `${name} set`; // the config file's tuning sections: too long for a label
  if (typeof value === 'string' && (key === 'datasetPath' || key === 'burstTracePath')) return `${name} ${path.basename(value)}`;
  return `${name} ${String(value)}`;
}
