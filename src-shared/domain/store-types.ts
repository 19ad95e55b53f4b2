/**
 * The trial store's records as the rest of kvbench sees them (CLI, reports, exports, the app over
 * IPC), and the catalogue of per-trial metrics every report and export draws from.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';
import type { TrialStatus } from './results.ts';
import { QUEUEING_BOUND_RULE } from './queueing-bound.ts';
import { TIER_NAMES, TIER_WORDS } from './tiers.ts';

/** A trial row is `running` while its engine runs; then one of the results' statuses. */
export type TrialRowStatus = TrialStatus | 'running';
export const TRIAL_ROW_STATUSES = ['running', 'complete', 'partial', 'failed', 'aborted'] as const;

export const SUITE_STATUSES = ['running', 'finished', 'cancelled', 'interrupted'] as const;
export type SuiteStatus = (typeof SUITE_STATUSES)[number];

/**
 * How a suite reads wherever it is listed (the run screen, History's Suites, a report's title,
 * `kvbench suite`'s last line, `kvbench history --suites`): its stored status, except that a suite
 * that finished without one complete trial reads 'failed': it has nothing to report. Derived from
 * the trial counts, never stored, so a resume that completes a trial makes the suite 'finished'
 * again and the stored statuses mean what they always meant. A cancelled or interrupted suite keeps
 * its status: that says why it ended.
 */
export type SuiteOutcome = SuiteStatus | 'failed';

export function suiteOutcome<S extends SuiteStatus>(status: S, completeTrials: number): S | 'failed' {
  return status === 'finished' && completeTrials === 0 ? 'failed' : status;
}

/** Where a trial's results came from. */
export const RESULTS_FORMATS = ['kvbench', 'reference-new', 'reference-mid', 'reference-old'] as const;
export type ResultsFormat = (typeof RESULTS_FORMATS)[number];

/** The store's own error codes (beside the shared ones in errors.ts). */
export const STORE_ERROR_CODES = [
  'DB_CORRUPT',
  'DB_FOREIGN',
  'DB_TOO_NEW',
  'DB_MIGRATION_FAILED',
  'DB_BUSY',
  'DB_WRITE_FAILED',
  'DB_READ_ONLY',
  /** The path no longer names the file kvbench opened (replaced by a rename, moved away): nothing is written (file-identity.ts). */
  'DB_REPLACED',
  'NOT_FOUND',
  'VALIDATION',
] as const;
export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

// ---------------------------------------------------------------------------------------------
// Metrics

const METRIC_UNITS = ['tok/s', 'req/s', 'ms', 'ms/MiB', 'bytes', 'bytes/s', 'ratio', 'count', 's', 'users'] as const;
export type MetricUnit = (typeof METRIC_UNITS)[number];
const METRIC_GROUPS = ['throughput', 'latency', 'bytes', 'cache', 'autoscaling', 'health'] as const;
export type MetricGroup = (typeof METRIC_GROUPS)[number];

export const MetricDefinitionSchema = z.object({
  key: z.string(),
  label: z.string(),
  unit: z.enum(METRIC_UNITS),
  /** Which direction is better, for win rates; null when neither is. */
  better: z.enum(['higher', 'lower']).nullable(),
  group: z.enum(METRIC_GROUPS),
  description: z.string(),
});
export type MetricDefinition = z.infer<typeof MetricDefinitionSchema>;

const m = (key: string, label: string, unit: MetricUnit, better: MetricDefinition['better'], group: MetricGroup, description: string): MetricDefinition =>
  Object.freeze({ key, label, unit, better, group, description });

/**
 * What total_read_bytes and total_write_bytes hold (docs/metrics.md "Bytes"), in the words every
 * reader uses: their catalogue descriptions, the tier comparison's legend, the app's column tips.
 */
export const REQUEST_LEVEL_BYTES_TEXT =
  'request-level KV bytes (hits read, entries written) on whichever tier served them; moves between tiers (demotions, promotions) left out, as the reference counts them';

/**
 * The pooled latency distributions a report merges, by the histogram's stored name, as the report
 * names them: the names of the metrics their P95s are (METRICS), without the percentile.
 */
export const POOLED_LATENCY_LABELS: Readonly<Record<string, string>> = Object.freeze({
  end_to_end: 'End-to-end',
  storage_io_per_request: 'Cache I/O per request',
  queue_wait: 'Queue wait',
  issue_lateness: 'Issue lateness',
  'tier_read.gpu': 'GPU read',
  'tier_write.gpu': 'GPU write',
  'tier_read.cpu': 'CPU read',
  'tier_write.cpu': 'CPU write',
  'tier_read.storage': 'Storage read',
  'tier_write.storage': 'Storage write',
});

/** A pooled latency's name for a reader; a histogram this version does not know keeps its stored name. */
export function pooledLatencyLabel(name: string): string {
  return Object.hasOwn(POOLED_LATENCY_LABELS, name) ? POOLED_LATENCY_LABELS[name]! : name;
}

/**
 * Every per-trial metric the store keeps, in report order. Latency metrics are one trial's
 * percentile (from its HDR histogram); across trials reports give their median and P95, never a mean.
 */
export const METRICS: readonly MetricDefinition[] = Object.freeze([
  m('wall_clock_throughput_tok_per_s', 'Wall-clock throughput', 'tok/s', 'higher', 'throughput', 'Generated tokens ÷ elapsed time: what the whole system sustained.'),
  m(
    'storage_throughput_tok_per_s',
    'Cache I/O throughput',
    'tok/s',
    'higher',
    'throughput',
    "Generated tokens ÷ the sum of the requests' cache I/O times: every read and write of a request on whichever tier served it (GPU, CPU or storage), so a run whose storage tier moved nothing has one too. The reference's storage_throughput_tokens_per_sec, under its key; not a bandwidth.",
  ),
  m('requests_per_s', 'Requests/s', 'req/s', 'higher', 'throughput', 'Completed requests ÷ elapsed time.'),
  m('requests_completed', 'Requests completed', 'count', 'higher', 'throughput', 'Requests that finished in the measured phase.'),
  m('tokens_generated', 'Tokens generated', 'count', 'higher', 'throughput', 'Generated tokens of completed requests.'),
  m('elapsed_s', 'Elapsed', 's', null, 'throughput', 'Wall-clock length of the measured phase.'),
  m('e2e_p50_ms', 'End-to-end P50', 'ms', 'lower', 'latency', 'Scheduled arrival → complete (queue wait + cache I/O + generation), median request.'),
  m('e2e_p95_ms', 'End-to-end P95', 'ms', 'lower', 'latency', 'Scheduled arrival → complete, 95th percentile request.'),
  m('e2e_p99_ms', 'End-to-end P99', 'ms', 'lower', 'latency', 'Scheduled arrival → complete, 99th percentile request.'),
  m(
    'storage_io_per_request_p95_ms',
    'Cache I/O per request P95',
    'ms',
    'lower',
    'latency',
    "The summed time of one request's cache reads and writes on every tier (GPU, CPU and storage; demotions apart), 95th percentile: the reference's storage_io_latency_ms, under its key.",
  ),
  m('queue_wait_p95_ms', 'Queue wait P95', 'ms', 'lower', 'latency', 'Dequeue − scheduled arrival, 95th percentile (kvbench results only).'),
  m(
    'issue_lateness_p95_ms',
    'Issue lateness P95',
    'ms',
    'lower',
    'latency',
    "Issue − scheduled arrival, 95th percentile: how late kvbench's scheduler issued a request (the backlog cap, a late event loop), part of its queue wait and end-to-end (kvbench 0.8.0 results on; none for an unpaced replay).",
  ),
  m('issue_lateness_max_ms', 'Issue lateness max', 'ms', 'lower', 'latency', 'Issue − scheduled arrival, the latest completed request (kvbench 0.8.0 results on; none for an unpaced replay).'),
  m('gpu_read_p95_ms', 'GPU read P95', 'ms', 'lower', 'latency', 'One whole-entry read from the GPU tier.'),
  m('gpu_write_p95_ms', 'GPU write P95', 'ms', 'lower', 'latency', 'One whole-entry write to the GPU tier.'),
  m('cpu_read_p95_ms', 'CPU read P95', 'ms', 'lower', 'latency', 'One whole-entry read from the CPU tier.'),
  m('cpu_write_p95_ms', 'CPU write P95', 'ms', 'lower', 'latency', 'One whole-entry write to the CPU tier.'),
  m('storage_read_p95_ms', 'Storage read P95', 'ms', 'lower', 'latency', 'One whole-entry read from the storage tier (device + host).'),
  m('storage_write_p95_ms', 'Storage write P95', 'ms', 'lower', 'latency', 'One whole-entry write to the storage tier (device + host).'),
  m('storage_read_device_p95_ms', 'Storage read device P95', 'ms', 'lower', 'latency', 'Time with the entry\'s reads in flight.'),
  m('storage_write_device_p95_ms', 'Storage write device P95', 'ms', 'lower', 'latency', 'Time with the entry\'s writes in flight.'),
  m('storage_read_p95_ms_per_mib', 'Storage read P95 per MiB', 'ms/MiB', 'lower', 'latency', 'Entry read latency ÷ its size, over entries of at least one I/O chunk (16 MiB by default; before kvbench 0.7.0 every entry): compares drives across entry sizes (kvbench only).'),
  m('storage_write_p95_ms_per_mib', 'Storage write P95 per MiB', 'ms/MiB', 'lower', 'latency', 'Entry write latency ÷ its size, over entries of at least one I/O chunk (16 MiB by default; before kvbench 0.7.0 every entry) (kvbench only).'),
  m('decode_bytes_read', 'Decode bytes read', 'bytes', 'higher', 'bytes', 'Bytes read by decode steps (decode passes, multi-turn reloads, RAG chunks): the primary metric at CPU 0 GiB.'),
  m('prefill_bytes_written', 'Prefill bytes written', 'bytes', 'higher', 'bytes', 'Bytes written by prefill steps.'),
  m('total_read_bytes', 'Total bytes read', 'bytes', 'higher', 'bytes', `The hits' bytes: ${REQUEST_LEVEL_BYTES_TEXT} (the per-tier bytes count the moves).`),
  m('total_write_bytes', 'Total bytes written', 'bytes', 'higher', 'bytes', `The entries' bytes: ${REQUEST_LEVEL_BYTES_TEXT} (the per-tier bytes count the moves).`),
  m('gpu_read_bytes', 'GPU bytes read', 'bytes', null, 'bytes', 'Bytes read from the GPU tier (demotions included in kvbench results).'),
  m('gpu_write_bytes', 'GPU bytes written', 'bytes', null, 'bytes', 'Bytes written to the GPU tier.'),
  m('cpu_read_bytes', 'CPU bytes read', 'bytes', null, 'bytes', 'Bytes read from the CPU tier (demotions included in kvbench results).'),
  m('cpu_write_bytes', 'CPU bytes written', 'bytes', null, 'bytes', 'Bytes written to the CPU tier.'),
  m('storage_read_bytes', 'Storage bytes read', 'bytes', null, 'bytes', 'Bytes read from the storage tier (demotions included in kvbench results).'),
  m('storage_write_bytes', 'Storage bytes written', 'bytes', null, 'bytes', 'Bytes written to the storage tier.'),
  ...TIER_NAMES.map((tier) =>
    m(
      `${tier}_hit_read_bytes`,
      `${TIER_WORDS[tier]} hits' bytes read`,
      'bytes',
      null,
      'bytes',
      `Bytes requests read from the ${TIER_WORDS[tier]} tier (its hits), every move between tiers (demotions, promotions) left out: its part of total_read_bytes (kvbench only: the results' kvbench.tier_bytes.${tier}.hit_read_bytes from 0.8.1; from 0.8.0 results without --promotion, read_bytes − demoted_out_bytes).`,
    ),
  ),
  m('storage_read_bytes_per_s', 'Storage read bandwidth', 'bytes/s', 'higher', 'bytes', 'Storage-tier bytes read ÷ elapsed.'),
  m('storage_write_bytes_per_s', 'Storage write bandwidth', 'bytes/s', 'higher', 'bytes', 'Storage-tier bytes written ÷ elapsed.'),
  m('cpu_read_bytes_per_s', 'CPU read bandwidth', 'bytes/s', 'higher', 'bytes', 'CPU-tier bytes read ÷ elapsed.'),
  m('cpu_write_bytes_per_s', 'CPU write bandwidth', 'bytes/s', 'higher', 'bytes', 'CPU-tier bytes written ÷ elapsed.'),
  m(
    'gpu_h2d_link_bytes_per_s',
    'GPU host→device link bandwidth (pinned staging)',
    'bytes/s',
    'higher',
    'bytes',
    "GPU-tier bytes copied host→device from pinned staging ÷ the time at least one such copy was executing (the union of the copies' own intervals): what the link carried while the tier kept it busy, the figure to compare with the GPU's pinned copy bandwidth (kvbench 0.8.1 results on: the results' kvbench.tiers.gpu.h2d_link_busy_bytes_per_sec; earlier results timed it from hand-off and are not stored).",
  ),
  m(
    'gpu_d2h_link_bytes_per_s',
    'GPU device→host link bandwidth (pinned staging)',
    'bytes/s',
    'higher',
    'bytes',
    "GPU-tier bytes copied device→host into pinned staging (the tier's reads; demotions left out) ÷ the time at least one such copy was executing (kvbench 0.8.1 results on: kvbench.tiers.gpu.d2h_staging_link_busy_bytes_per_sec).",
  ),
  m(
    'gpu_demotion_d2h_link_bytes_per_s',
    'GPU device→host link bandwidth (pageable demotions)',
    'bytes/s',
    'higher',
    'bytes',
    "GPU-tier bytes copied device→host straight into the tier below's pageable memory by demotions ÷ the time at least one such copy was executing: slower than pinned copies by design, so never compared with them (kvbench 0.8.1 results on: kvbench.tiers.gpu.demotion_d2h_link_busy_bytes_per_sec).",
  ),
  m(
    'gpu_h2d_copy_bytes_per_s',
    'GPU host→device per-copy bandwidth (diagnostic)',
    'bytes/s',
    null,
    'bytes',
    'GPU-tier bytes copied host→device ÷ the summed time of those copies: what one copy achieved. It falls as copies overlap on the link (a busier tier reads lower), so it compares no machines: gpu_h2d_link_bytes_per_s does (kvbench only).',
  ),
  m(
    'gpu_d2h_copy_bytes_per_s',
    'GPU device→host per-copy bandwidth, staging and demotions mixed (diagnostic)',
    'bytes/s',
    null,
    'bytes',
    "GPU-tier bytes copied device→host, pinned staging reads and pageable demotion copies together, ÷ the summed time of those copies: it falls as copies overlap and as demotions grow, so it compares no machines: gpu_d2h_link_bytes_per_s and gpu_demotion_d2h_link_bytes_per_s do (kvbench only).",
  ),
  m('cache_hit_rate', 'Cache hit rate', 'ratio', 'higher', 'cache', 'Hits ÷ (hits + misses) over every cache access.'),
  m('multi_turn_hit_rate', 'Multi-turn hit rate', 'ratio', 'higher', 'cache', 'Earlier turns found in the cache.'),
  m('autoscale_final_users', 'Autoscaler final users', 'users', 'higher', 'autoscaling', 'Users at the end of an autoscaling run (capacity mode: the step after the peak, added at the last interval; the peak\'s own users are autoscale_peak_users).'),
  m('autoscale_peak_users', 'Autoscaler peak users', 'users', 'higher', 'autoscaling', 'Users at the capacity peak (capacity mode).'),
  m('autoscale_peak_throughput_tok_per_s', 'Autoscaler peak throughput', 'tok/s', 'higher', 'autoscaling', 'Throughput at the capacity peak (capacity mode).'),
  m(
    'autoscale_peak_found',
    'Autoscaler peak found',
    'count',
    null,
    'autoscaling',
    '1 when the capacity autoscaler saw throughput stop rising and ended the run at its peak; 0 when the window closed first, so the peak figures are only the highest seen so far (capacity mode).',
  ),
  m(
    'autoscale_target_met',
    'Autoscaler latency target met',
    'count',
    null,
    'autoscaling',
    '1 when the storage P95 was within its threshold (read P95 200 ms by default; saturation ≤ 1, not ≤ the autoscaler\'s own target_saturation of 0.8) in the last interval of a qos autoscaling run that measured it; 0 when it was over, so the final users do not fit under the target; absent when no interval measured it (qos mode, kvbench 0.6.0 on).',
  ),
  m('device_read_bytes', 'Device bytes read', 'bytes', null, 'bytes', 'Bytes the block device behind the cache directory read during the measured phase (/proc/diskstats, every process); below a loop device, the disk holding its backing file.'),
  m('device_write_bytes', 'Device bytes written', 'bytes', null, 'bytes', 'Bytes the block device behind the cache directory wrote during the measured phase.'),
  m('device_read_coverage', 'Device read coverage', 'ratio', null, 'health', 'Device bytes read (every process) ÷ storage-tier bytes read; below 0.95 the page cache served reads and the trial is flagged.'),
  m('process_read_coverage', 'Engine device-read coverage', 'ratio', null, 'health', 'Bytes the engine process itself made the block layer read (/proc/self/io) ÷ storage-tier bytes read; page-cache hits and other processes never count. Below 0.95 the page cache served reads.'),
  m('page_cache_flagged', 'Storage reads flagged (page cache)', 'count', null, 'health', "1 when the engine judged that the page cache may have served the storage tier's reads (device or engine read coverage below 0.95, buffered I/O it could not prove reached the device, or a RAM-backed directory); 0 when it judged them the device's (kvbench only; results' kvbench.device_io.flagged)."),
  m('storage_direct_io', 'Storage tier used direct I/O', 'count', null, 'health', '1 when the storage tier read and wrote with O_DIRECT, 0 when through the page cache (kvbench only).'),
  m('storage_ram_backed', 'Cache dir on a RAM filesystem', 'count', null, 'health', '1 when the cache directory was on tmpfs or ramfs (or a loop device whose file is in RAM, or a RAM disk): the storage numbers describe memory, not a drive; 0 otherwise (kvbench only). What held it in memory is kept beside it (the trial\'s storageRamBacking, from the results\' ram_backing_chain).'),
  m(
    'storage_buffered_loop',
    'Cache dir on a buffered loop device',
    'count',
    null,
    'health',
    "1 when a loop device between the cache directory and the drive read and wrote its backing file through the host's page cache (loop/dio 0, losetup's default; `losetup --direct-io=on` turns it off): the storage reads may describe RAM, not the drive, and the trial is flagged; 0 otherwise (kvbench only, from the results' tiers.storage.buffered_loops; a RAM-backed directory counts as RAM-backed instead).",
  ),
  m(
    'gpu_tier_requested_bytes',
    'GPU tier asked for',
    'bytes',
    null,
    'health',
    "The GPU tier the run asked for (--gpu-mem-gb × GPUs), kept with the tier's facts where one was asked for (kvbench results, not trace-only mode; trials stored before kvbench kept them have none).",
  ),
  m(
    'gpu_tier_reserved_bytes',
    'GPU tier reserved',
    'bytes',
    null,
    'health',
    'Device memory the GPU tier reserved on its GPUs, 0 when it did not open: below what was asked for, the tier was smaller than its configuration says (another process held GPU memory) and the trial is flagged.',
  ),
  m(
    'gpu_tier_present',
    'GPU tier present',
    'count',
    null,
    'health',
    '1 when the GPU tier asked for opened; 0 when it did not (no driver, no usable GPU, the reservation failed) and the run went on in the tiers below: its numbers describe no GPU tier, and the trial is flagged.',
  ),
  m(
    'gpu_staging_pinned',
    'GPU staging pinned',
    'count',
    null,
    'health',
    "1 when the GPU tier's host staging was page-locked (pinned), as fast copies need; 0 when it was not (its copies went through pageable memory, slower than the link allows) and the trial is flagged.",
  ),
  m('requests_failed', 'Requests failed', 'count', 'lower', 'health', 'Requests that failed (storage errors).'),
  m(
    'queueing_bound',
    'Queueing-bound',
    'count',
    null,
    'health',
    `1 when the open loop's queue was still growing at the window's close: ${QUEUEING_BOUND_RULE}. Its end-to-end latency and queue wait then measure the queue, not the storage, and the trial is flagged; 0 otherwise (kvbench only; judged by this rule from the stored results whichever kvbench measured them, the results' kvbench.queue.queueing_bound being the engine's own verdict, by another rule before 0.8.0).`,
  ),
  m('requests_queued_at_close', 'Requests queued at close', 'count', null, 'health', "Requests issued but still waiting for a worker when the measured window closed (kvbench only; the results' kvbench.measured_window.requests_queued_at_close)."),
  m(
    'backlog_cap_reached',
    'Backlog cap reached',
    'count',
    null,
    'health',
    "1 when the open loop's queue reached its cap (500,000 requests) and later arrivals were held back and issued late; 0 otherwise (kvbench only; the results' kvbench.queue.backlog_cap_reached).",
  ),
  m('event_loop_lag_p99_ms', 'Engine event-loop lag P99', 'ms', 'lower', 'health', 'Whether kvbench itself kept up (kvbench only).'),
  m('peak_rss_bytes', 'Engine peak RSS', 'bytes', null, 'health', 'Peak resident memory of the engine process.'),
]);

/**
 * Metrics that store a yes/no fact as 1 or 0 (their descriptions say which is which): one trial's
 * value reads yes or no, not 1 or 0; over several trials a report counts them ("2 of 3", flagAggregate),
 * with no median or CV.
 */
export const FLAG_METRIC_KEYS: readonly string[] = Object.freeze([
  'autoscale_peak_found',
  'autoscale_target_met',
  'page_cache_flagged',
  'storage_direct_io',
  'storage_ram_backed',
  'storage_buffered_loop',
  'queueing_bound',
  'backlog_cap_reached',
  'gpu_tier_present',
  'gpu_staging_pinned',
]);
export const isFlagMetric = (key: string): boolean => FLAG_METRIC_KEYS.includes(key);

/** What a report shows per scenario unless all metrics are asked for: `kvbench report` and the app's report alike. */
export const HEADLINE_METRICS = [
  'wall_clock_throughput_tok_per_s',
  'storage_throughput_tok_per_s',
  'requests_per_s',
  'e2e_p50_ms',
  'e2e_p95_ms',
  'storage_io_per_request_p95_ms',
  'gpu_read_p95_ms',
  'gpu_write_p95_ms',
  'cpu_read_p95_ms',
  'storage_read_p95_ms',
  'storage_write_p95_ms',
  'storage_read_bytes_per_s',
  'storage_write_bytes_per_s',
  'decode_bytes_read',
  'cache_hit_rate',
  'autoscale_final_users',
  'autoscale_peak_users',
  'autoscale_peak_throughput_tok_per_s',
] as const;

/**
 * The headline metrics a group shows, in headline order, given the metrics its trials have. A
 * capacity run's answer is its peak and the users that produced it: its final users are the step
 * after the peak (the overshoot, added at the last interval), so they stay behind --all-metrics there.
 */
export function headlineMetricKeys(present: readonly string[]): string[] {
  const capacity = present.includes('autoscale_peak_users') || present.includes('autoscale_peak_throughput_tok_per_s');
  return HEADLINE_METRICS.filter((k) => present.includes(k) && !(capacity && k === 'autoscale_final_users'));
}

/**
 * Said beside a capacity group's peak medians over several trials: each median is taken on its own,
 * so the peak users need not be the users of the median peak throughput's trial.
 */
export const PEAK_MEDIANS_NOTE = "peak throughput and peak users are medians taken apart: the users need not be the median peak's own";

/** Whether a group's peak medians need PEAK_MEDIANS_NOTE: both are shown, over more than one trial. */
export const peakMediansApart = (metrics: readonly { metric: { key: string }; aggregate: { n: number } }[]): boolean =>
  ['autoscale_peak_users', 'autoscale_peak_throughput_tok_per_s'].every((k) => metrics.some((m) => m.metric.key === k && m.aggregate.n > 1));

/**
 * Whether a metric is one trial's percentile (`e2e_p95_ms`, `storage_read_p95_ms_per_mib`,
 * `event_loop_lag_p99_ms` …): across trials such values have a median, a P95 and a spread, but no
 * meaningful mean (style.md: never average percentiles).
 */
export const isPercentileMetric = (key: string): boolean => /(^|_)p\d+(_|$)/.test(key);

export const METRIC_BY_KEY: Readonly<Record<string, MetricDefinition>> = Object.freeze(Object.fromEntries(METRICS.map((d) => [d.key, d])));

export type TrialMetrics = Record<string, number>;

/** Histograms stored per trial: the compressed HDR histograms from `kvbench.latency`. */
export interface TrialHistogram {
  /** e.g. `end_to_end`, `tier_read.storage`, `tier_write_ns_per_mib.cpu`. */
  name: string;
  unit: 'ns' | 'ns/MiB';
  count: number;
  sumNs: number;
  /** HdrHistogram V2 compressed base64. */
  hdr: string;
}

/** A report group's aggregated trials that stored no latency histograms, and how many of them are imports of the reference's files (which keep none). */
export interface TrialsWithoutHistograms {
  trials: number;
  referenceImports: number;
}

/** Over which of a group's `aggregated` trials its pooled latencies are: "the trials", or "1 of the 2 trials". */
export const pooledOverText = (aggregated: number, w: TrialsWithoutHistograms): string => (w.trials === 0 ? 'the trials' : `${aggregated - w.trials} of the ${aggregated} trials`);

/**
 * Which of a group's trials stored no latency histograms, and why where kvbench knows (an import of
 * the reference's results); null where every one did. The text report and the app say it alike.
 */
export function withoutHistogramsText(aggregated: number, w: TrialsWithoutHistograms): string | null {
  if (w.trials === 0) return null;
  const files = w.referenceImports === 1 ? 'a reference-format results file, which keeps none' : 'reference-format results files, which keep none';
  const why = w.referenceImports === 0 ? '' : w.referenceImports === w.trials ? ` (imported from ${files})` : ` (${w.referenceImports} of them imported from ${files})`;
  const which = w.trials < aggregated ? `${w.trials} of the ${aggregated} trials stored no` : aggregated === 1 ? 'the one trial stored no' : `none of the ${aggregated} trials stored`;
  return `${which} latency histograms${why}`;
}

/**
 * The run options that make two trials comparable across systems: the workload and the tier
 * budgets, not where the files go or what the results are called. Trials of different systems are
 * "matched" when these are equal.
 */
export const CONFIG_MATCH_KEYS = [
  'model',
  'numUsers',
  'duration',
  'gpuMemGb',
  'numGpus',
  'tensorParallel',
  'cpuMemGb',
  'generationMode',
  'performanceProfile',
  'disableMultiTurn',
  'disablePrefixCaching',
  'enableRag',
  'ragNumDocs',
  'enableAutoscaling',
  'autoscalerMode',
  'targetSaturation',
  'maxConcurrentAllocs',
  'requestRate',
  'maxRequests',
  'precondition',
  'prefillOnly',
  'decodeOnly',
  'datasetPath',
  'useBurstTrace',
] as const;

/**
 * Options that change what is measured but joined the key later: kvbench's own I/O and window
 * options, and workload options first left out (the config file's tuning sections, replay pace and
 * length, the autoscaler's interval, the trace file; a merged multi-host run's world size). They join the key only where they differ from
 * their defaults, so trials stored before keep their keys. (A redefined model and trace-only mode
 * join it too: see configKey.)
 */
export const CONFIG_MATCH_KEYS_WHEN_SET = [
  'warmUp',
  'ioChunkMib',
  'ioDepth',
  'directIo',
  'fsyncPolicy',
  'promotion',
  'verify',
  'tuning',
  'traceSpeedup',
  'replayCycles',
  'maxConversations',
  'autoscalerInterval',
  'burstTracePath',
  'worldSize',
] as const;

// ---------------------------------------------------------------------------------------------
// Records

const int = z.number().int();
const count = z.number().int().nonnegative();
const trialRowStatus = z.enum(TRIAL_ROW_STATUSES);

export const SystemRecordSchema = z.object({
  id: z.string(),
  label: z.string(),
  hostname: z.string(),
  source: z.enum(['detected', 'imported']),
  firstSeenAt: z.string(),
  lastSeenAt: z.string(),
});
export type SystemRecord = z.infer<typeof SystemRecordSchema>;

export const DriveRecordSchema = z.object({
  id: z.string(),
  systemId: z.string(),
  label: z.string(),
  basis: z.string(),
  model: z.string().nullable(),
  serial: z.string().nullable(),
  /**
   * The size the label of a drive known by its local device states, from its newest trial's hardware
   * snapshot, for the app to restate in its units; null or absent: none known (listDrives gives it).
   */
  sizeBytes: z.number().nonnegative().nullable().optional(),
});
export type DriveRecord = z.infer<typeof DriveRecordSchema>;

/**
 * A suite's label as it is stored and matched: trimmed, and an empty one is none. The label names
 * what a suite measured ("drive A, firmware 2.1"); suites that carry the same label are one series,
 * filtered and compared together (`--label`, `report --compare --labels`) whatever their dates.
 */
export function suiteLabelOf(label: string | null | undefined): string | null {
  const trimmed = label?.trim() ?? '';
  return trimmed === '' ? null : trimmed;
}

/** What a comparison puts side by side: two systems, two drives or two suite labels. */
export const COMPARISON_KINDS = ['system', 'drive', 'label'] as const;
export type ComparisonKind = (typeof COMPARISON_KINDS)[number];

/** A suite label with the suites that carry it and their trials: what History and Compare offer to choose from. */
export const SuiteLabelFacetSchema = z.object({ label: z.string(), suites: count, trialCount: count });
export type SuiteLabelFacet = z.infer<typeof SuiteLabelFacetSchema>;

export const SuiteRecordSchema = z.object({
  id: int,
  systemId: z.string(),
  driveId: z.string().nullable(),
  profile: z.string(),
  label: z.string().nullable(),
  status: z.enum(SUITE_STATUSES),
  source: z.enum(['suite', 'import']),
  cacheDir: z.string().nullable(),
  createdAt: z.string(),
  finishedAt: z.string().nullable(),
  kvbenchVersion: z.string(),
  /** Attempts per status (a retried trial slot counts each attempt). */
  trialCounts: z.record(trialRowStatus, count),
  /** Planned trial slots without a complete attempt: what a resume would run (0 for imports). */
  trialsLeft: count,
  /** Planned trial slots whose complete trial the user deleted: not left to run, not "not complete". */
  trialsDeleted: count,
});
export type SuiteRecord = z.infer<typeof SuiteRecordSchema>;

export interface RunRecord {
  id: number;
  suiteId: number;
  position: number;
  scenarioId: string;
  label: string;
  configKey: string;
  options: Record<string, unknown>;
  trialsPlanned: number;
}

export const TrialRecordSchema = z.object({
  id: int,
  runId: int,
  suiteId: int,
  /** The label of the trial's suite (suiteLabelOf); null when it has none. */
  suiteLabel: z.string().nullable(),
  systemId: z.string(),
  systemLabel: z.string(),
  driveId: z.string().nullable(),
  driveLabel: z.string().nullable(),
  /**
   * The size of the drive the trial's cache directory was on, from its hardware snapshot, where its
   * label states one ("virtual disk vda (256 GiB)"): the app restates it in the chosen units. Null or
   * absent: not known, or a drive whose label states no size.
   */
  driveSizeBytes: z.number().nonnegative().nullable().optional(),
  scenarioId: z.string(),
  trialIndex: count,
  attempt: int,
  status: trialRowStatus,
  statusReason: z.string().nullable(),
  configKey: z.string(),
  options: z.record(z.string(), z.unknown()),
  seed: z.number().nullable(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  wallMs: z.number().nullable(),
  resultsFormat: z.enum(RESULTS_FORMATS).nullable(),
  sourceFile: z.string().nullable(),
  /** The kvbench that stored the trial (for an import, the importer). */
  kvbenchVersion: z.string(),
  /**
   * The kvbench that measured it: the results file's own version; null for the reference's files. A kvbench
   * file imported before it was kept has it once a read-write open has read it from its stored results
   * (Store.backfillMeasuringVersions); null until then, and for good where those results are damaged.
   */
  measuredByVersion: z.string().nullable(),
  /**
   * What held a RAM-backed cache directory in memory (storage_ram_backed 1), as its results said it:
   * 'loop0 → /dev/shm/d.img on tmpfs', 'zram0', 'tmpfs'. Null when it was not RAM-backed, and for
   * trials stored before kvbench kept it (the flag without its backing: unknown, never guessed).
   */
  storageRamBacking: z.string().nullable(),
  metrics: z.record(z.string(), z.number()),
});
export type TrialRecord = z.infer<typeof TrialRecordSchema>;

export interface TrialFilter {
  systemIds?: string[];
  driveIds?: string[];
  scenarioIds?: string[];
  statuses?: TrialRowStatus[];
  suiteIds?: number[];
  /** Trials of the suites that carry one of these labels (suiteLabelOf), of any date. */
  suiteLabels?: string[];
  configKeys?: string[];
  model?: string;
  /** ISO timestamps (inclusive) on started_at. */
  since?: string;
  until?: string;
  limit?: number;
  offset?: number;
  /** Newest first unless 'asc'. */
  order?: 'asc' | 'desc';
}
