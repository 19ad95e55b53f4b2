/**
 * The end-of-run console summary.
 *
 * The first part reproduces the reference benchmark's final summary (same sections, same headings,
 * same line shapes, same units: its "GB"/"MB" are binary, its latencies are milliseconds) so people
 * and scripts used to the reference can read it. Two places differ on purpose and say so: the
 * storage assessment is labelled as a kvbench tool feature, and the storage latency breakdown
 * names what our Device/Host split measures. The last section reports kvbench's own measurements
 * in bytes and nanoseconds, with units named on every line.
 */

import { TIER_NAMES, TIER_WORDS, type TierName } from '../../../src-shared/domain/tiers.ts';
import { percentText } from '../../../src-shared/domain/worker-busy.ts';
import type {
  GpuTierDescription,
  KvbenchSection,
  LatencySummaryNs,
  PreparationPhase,
  QosLevelMetrics,
  RunResults,
  RunSummary,
  StorageHealthCriterion,
  TierBytes,
  TierDescription,
} from '../../../src-shared/domain/results.ts';
import {
  BYTES_PER_MIB,
  formatBytesAsGiB,
  formatBytesBinary,
  formatBytesPerSecAsGBps,
  formatBytesPerSecAsGiBps,
  formatFixedPy,
  formatIntegerGrouped,
  formatMs,
  formatNsAsMs,
  formatNsAsSeconds,
  formatNsPerMiBAsMsPerMiB,
  formatRatioAsPercent,
} from './format.ts';
import { noPeakFoundReason } from '../workload/autoscaler.ts';
import { bufferedLoopMessage } from '../../../src-shared/domain/hardware.ts';

export interface BlockSizeSummaryBytes {
  entries: number;
  minBytes: number;
  meanBytes: number;
  p95Bytes: number;
  maxBytes: number;
}

export interface ConsoleSummaryOptions {
  generationMode: string;
  msPerToken: number;
  performanceProfile: 'latency' | 'throughput';
  bytesPerToken: number;
  autoscalerMode?: string;
  /**
   * Sizes of the entries live at the end of the run, when the caller has them. The results file only
   * holds per-tier totals, so without this the note prints the mean block size alone.
   */
  blockSizes?: BlockSizeSummaryBytes;
  /**
   * Trace-only mode (--io-trace-log): no I/O happened, so its byte rates are logical (what the run
   * would have moved) and its tier latencies are 0 by construction; the summary labels them so.
   */
  traceOnly?: boolean;
}

const RULE_EQ = '='.repeat(80);
const PASS_SYMBOL = '[OK]';
const FAIL_SYMBOL = '[X]';
const MAX_VERIFICATION_FAILURES_SHOWN = 5;
const TIER_LABELS: Record<TierName, string> = { gpu: 'GPU', cpu: 'CPU', storage: 'Storage' };

export const KVBENCH_SECTION_HEADING = '### KVBENCH MEASUREMENTS (bytes and ns; GiB = 1024^3, GB = 10^9) ###';
/** Beside a rate of trace-only mode: bytes counted as if they had moved. */
const LOGICAL = '(logical: trace-only, no I/O)';
/** In place of a latency of trace-only mode, where every operation completes at once. */
const NOT_MEASURED = 'not measured (trace-only mode: no I/O)';
export const NO_REQUESTS_MESSAGE = 'No requests completed during benchmark!';

/** How much --verify checked: "1,234 chunks (52.10 GiB) read back and checked (GPU 40.00 GiB, storage 12.10 GiB)"; older results did not say. */
function checkedText(ver: KvbenchSection['verification']): string {
  if (ver.checked_chunks === undefined || ver.checked_bytes === undefined) return 'chunks checked not recorded (results before 0.8.1)';
  if (ver.checked_chunks === 0) return 'but no chunk was read back to check';
  const byTier = TIER_NAMES.filter((t) => (ver.checked_bytes_by_tier?.[t] ?? 0) > 0)
    .map((t) => `${TIER_LABELS[t]} ${formatBytesBinary(ver.checked_bytes_by_tier?.[t] ?? 0)}`)
    .join(', ');
  return `${formatIntegerGrouped(ver.checked_chunks)} chunks (${formatBytesBinary(ver.checked_bytes)}) read back and checked over the whole run${byTier ? ` (${byTier})` : ''}`;
}

export function formatConsoleSummary(results: RunResults, opts: ConsoleSummaryOptions): string {
  const out: string[] = [];
  const p = (line = ''): void => {
    out.push(line);
  };
  /** The reference prints every heading with a leading "\n": a blank line, then the heading. */
  const heading = (text: string): void => {
    p();
    p(text);
  };

  p();
  p(RULE_EQ);
  p('BENCHMARK RESULTS - MLPerf KV Cache Storage Benchmark');
  p(`Generation Mode: ${opts.generationMode} (${formatFixedPy(opts.msPerToken, 1)}ms/token)`);
  p(RULE_EQ);
  if (opts.traceOnly) {
    p();
    p('TRACE-ONLY MODE (--io-trace-log): no storage I/O happened, nothing below is a measurement of a device.');
    p('Bytes and rates are logical (what the run would have moved); tier latencies are not measured.');
  }

  const summary = results.summary;
  if (!summary) {
    p();
    p(NO_REQUESTS_MESSAGE);
  } else {
    printReferenceSections(summary, results.kvbench, opts, p, heading);
  }

  printKvbenchSection(results.kvbench, results.requests_completed, opts.traceOnly === true, p, heading);
  return out.join('\n') + '\n';
}

type Print = (line?: string) => void;
type Heading = (text: string) => void;

function printReferenceSections(
  summary: RunSummary,
  kv: KvbenchSection,
  opts: ConsoleSummaryOptions,
  p: Print,
  heading: Heading,
): void {
  const cs = summary.cache_stats;

  // Block-size note: latencies are per KV block (one whole entry), not per page.
  const bpt = opts.bytesPerToken;
  p();
  p('IMPORTANT: All storage latencies below are measured per KV cache BLOCK,');
  p('not per token or per disk page.  Each block holds the full KV state for');
  p('one request (all layers, all heads, full sequence length).');
  p(`  Model KV bytes/token: ${formatIntegerGrouped(bpt)} bytes (${formatFixedPy(bpt / 1024, 1)} KB)`);
  printBlockSizes(kv, cs, opts.blockSizes, p);
  p('  A 200 MB block at 1 GB/s NVMe read = ~200 ms device latency.');
  p('  Compare latencies against block sizes, not against 4 KB page I/O.');
  p();

  const health = cs.storage_health;
  if (health?.overall_status === 'N/A') {
    heading('### STORAGE PERFORMANCE ASSESSMENT: N/A ###');
    p('  (kvbench tool criteria, not an MLPerf rule)');
    p(`  Not assessed: ${health.not_assessed_reason ?? 'no reason recorded'}`);
  } else if (health) {
    const sym = health.overall_status === 'PASS' ? PASS_SYMBOL : FAIL_SYMBOL;
    heading(`### STORAGE PERFORMANCE ASSESSMENT: ${health.overall_status} ${sym} ###`);
    p('  (kvbench tool criteria, not an MLPerf rule)');
    p(`  Criteria Passed: ${health.passed_count}/${health.total_count}`);
    for (const c of health.criteria) {
      p(formatCriterion(c));
      if (c.caveat) p(`      (${c.caveat})`);
    }
  }

  heading('### OVERALL PERFORMANCE ###');
  p(`Requests Completed: ${summary.total_requests}`);
  p(`Total Tokens Generated: ${summary.total_tokens}`);
  p(`Throughput (wall-clock): ${formatFixedPy(summary.avg_throughput_tokens_per_sec, 2)} tokens/sec`);
  p(`Throughput (storage I/O): ${formatFixedPy(summary.storage_throughput_tokens_per_sec, 2)} tokens/sec`);
  p(`Requests/sec: ${formatFixedPy(summary.requests_per_second, 2)}`);

  heading('### END-TO-END LATENCY (Queue Wait + Storage I/O + Generation) ###');
  p(`  Mean: ${formatMs(summary.end_to_end_latency_ms.mean)}`);
  p(`  P50:  ${formatMs(summary.end_to_end_latency_ms.p50)}`);
  p(`  P95:  ${formatMs(summary.end_to_end_latency_ms.p95)}`);
  p(`  P99:  ${formatMs(summary.end_to_end_latency_ms.p99)}`);

  heading('### PER-REQUEST STORAGE LATENCY (All I/O ops for one request) ###');
  if (opts.traceOnly) {
    p(`  ${NOT_MEASURED}`);
  } else {
    p(`  Mean: ${formatMs(summary.storage_io_latency_ms.mean)}`);
    p(`  P50:  ${formatMs(summary.storage_io_latency_ms.p50)}`);
    p(`  P95:  ${formatMs(summary.storage_io_latency_ms.p95)}`);
    p(`  P99:  ${formatMs(summary.storage_io_latency_ms.p99)}`);
    p('  (= 1 prefill write + N decode reads per request)');
  }

  if (opts.generationMode !== 'none') {
    heading(`### TOKEN GENERATION LATENCY (Simulated @ ${formatFixedPy(opts.msPerToken, 1)}ms/token) ###`);
    p(`  Mean: ${formatMs(summary.generation_latency_ms.mean)}`);
    p(`  P50:  ${formatMs(summary.generation_latency_ms.p50)}`);
    p(`  P95:  ${formatMs(summary.generation_latency_ms.p95)}`);
  }

  heading('### STORAGE PERFORMANCE ###');
  p(`  Cache Hit Rate: ${fmt(num(cs, 'cache_hit_rate'), (v) => formatFixedPy(v * 100, 1))}%`);
  p(`  Total Read: ${fmt(num(cs, 'total_read_gb'), (v) => formatFixedPy(v, 2))} GB`);
  p(`  Total Write: ${fmt(num(cs, 'total_write_gb'), (v) => formatFixedPy(v, 2))} GB`);
  const rw = num(cs, 'read_write_ratio');
  if (rw === undefined) p('  Read/Write Ratio: n/a');
  else if (rw > 1e9) p('  Read/Write Ratio: ∞ (read-only)');
  else if (rw < 1e-9) p('  Read/Write Ratio: 0 (write-only)');
  else p(`  Read/Write Ratio: ${formatFixedPy(rw, 2)}`);
  // read_iops/write_iops are operation COUNTS. The reference divides them by the configured
  // --duration; the window can close earlier (--max-requests, the workload's end, a cancel), so they
  // are divided by the measured window like every other rate (Requests/sec above).
  p(`  Storage KV Read Operations/sec: ${fmt(num(cs, 'read_iops'), (v) => formatFixedPy(perSecond(v, summary.elapsed_time), 2))}`);
  p(`  Storage KV Write Operations/sec: ${fmt(num(cs, 'write_iops'), (v) => formatFixedPy(perSecond(v, summary.elapsed_time), 2))}`);

  heading('### CACHE TIER DISTRIBUTION ###');
  p(`  GPU Entries: ${pyStr(cs.gpu_entries)} (${fmt(num(cs, 'gpu_memory_used_gb'), (v) => formatFixedPy(v, 2))} GB)`);
  p(`  CPU Entries: ${pyStr(cs.cpu_entries)} (${fmt(num(cs, 'cpu_memory_used_gb'), (v) => formatFixedPy(v, 2))} GB)`);
  p(`  Storage Entries: ${pyStr(cs.storage_entries)}`);

  heading('### TIER-SPECIFIC KV BYTES ###');
  for (const tier of TIER_NAMES) {
    for (const [dir, label] of [
      ['written', 'Written'],
      ['read', 'Read'],
    ] as const) {
      const v = num(cs, `tier_${tier}_kv_bytes_${dir}_gb`) ?? 0;
      if (v > 0) p(`  ${TIER_LABELS[tier]} KV Bytes ${label}: ${formatFixedPy(v, 2)} GB`);
    }
  }

  heading('### STORAGE KV BANDWIDTH ###');
  const logical = opts.traceOnly ? ` ${LOGICAL}` : '';
  for (const tier of TIER_NAMES) {
    const readBw = num(cs, `tier_${tier}_read_bandwidth_gbps`) ?? 0;
    const writeBw = num(cs, `tier_${tier}_write_bandwidth_gbps`) ?? 0;
    if (readBw > 0) p(`  ${TIER_LABELS[tier]} KV Read Bandwidth${logical}: ${formatFixedPy(readBw, 2)} GB/s`);
    if (writeBw > 0) p(`  ${TIER_LABELS[tier]} KV Write Bandwidth${logical}: ${formatFixedPy(writeBw, 2)} GB/s`);
  }

  heading('### TIER-SPECIFIC LATENCIES (Total = Host + Device) ###');
  if (opts.traceOnly) p(`  ${NOT_MEASURED}`);
  for (const tier of opts.traceOnly ? [] : TIER_NAMES) {
    for (const op of ['read', 'write'] as const) {
      const v = num(cs, `${tier}_${op}_p95_ms`);
      if (v !== undefined) p(`  ${TIER_LABELS[tier]} ${titleCase(op)} P95 (Total): ${formatMs(v)}`);
    }
  }

  // Our split differs from the reference's (disk I/O vs serialisation): the heading says what it is.
  heading(
    "### STORAGE TIER LATENCY BREAKDOWN (Device = time with the entry's I/O in flight at the device, Host = the rest of the entry's time) ###",
  );
  if (opts.traceOnly) p(`  ${NOT_MEASURED}`);
  else printLatencySplit(cs, 'storage', 'I/O in flight', p);
  // kvbench's own section (the reference has no GPU split), only where a GPU tier measured one.
  if (!opts.traceOnly && (num(cs, 'gpu_read_device_p95_ms') ?? num(cs, 'gpu_write_device_p95_ms')) !== undefined) {
    heading(
      "### GPU TIER LATENCY BREAKDOWN (Device = time with at least one of the entry's own copies executing, Host = the rest: waiting for a staging slot, filling it or passing it on, copies queued behind other entries') ###",
    );
    printLatencySplit(cs, 'gpu', 'own copies executing', p);
  }

  heading('### CACHE TYPE BREAKDOWNS ###');
  p(`  System Prompt Hits: ${pyStr(cs.system_prompt_hits)}`);
  p(`  Common Phrase Hits: ${pyStr(cs.common_phrase_hits)}`);
  p(`  User Cache Hits: ${pyStr(cs.user_cache_hits)}`);
  p(`  Multi-turn Hits: ${pyStr(cs.multi_turn_hits)}`);

  const prefix = summary.prefix_cache_stats;
  if (prefix && (prefix.prefix_hits ?? 0) > 0) {
    heading('### PREFIX CACHING ###');
    p(`  Prefix Hits: ${pyStr(prefix.prefix_hits)}`);
    p(`  Prefix Misses: ${pyStr(prefix.prefix_misses)}`);
    p(`  System Prompt Reuse: ${pyStr(prefix.system_prompt_reuse)}`);
    p(`  Bytes Saved: ${formatFixedPy((prefix.bytes_saved ?? 0) / 1024 ** 3, 2)} GB`);
  }

  const mt = summary.multi_turn_stats;
  if (mt && mt.cache_hits > 0) {
    heading('### MULTI-TURN CONVERSATIONS ###');
    p(`  Multi-turn Cache Hits: ${mt.cache_hits}`);
    p(`  Multi-turn Cache Misses: ${mt.cache_misses}`);
    p(`  Multi-turn Hit Rate: ${formatFixedPy(mt.hit_rate * 100, 1)}%`);
  }

  if (opts.performanceProfile !== 'throughput') {
    heading('### QOS LATENCY METRICS (Informational - includes simulated generation) ###');
    for (const [level, metrics] of Object.entries(summary.qos_metrics ?? {})) {
      if (!hasQosData(metrics)) continue;
      p();
      p(`  ${level.toUpperCase()}:`);
      p(`    Requests: ${metrics.total_requests}`);
      p(`    Latency P95: ${formatMs(metrics.latency_ms.p95)}`);
      p(`    Latency P99: ${formatMs(metrics.latency_ms.p99)}`);
      if (metrics.sla) {
        const met = metrics.sla.met ? PASS_SYMBOL : FAIL_SYMBOL;
        p(`    SLA Met: ${met} (compliance: ${formatRatioAsPercent(metrics.sla.compliance)})`);
      }
    }
  }

  const scaling = summary.autoscaling_stats;
  if (Array.isArray(scaling) && scaling.length > 0) {
    const mode = opts.autoscalerMode ?? 'qos';
    const as = summary.autoscaling_summary;
    heading(`### AUTOSCALING (${mode} mode) ###`);
    p(`  Scaling Events: ${scaling.filter((e) => field(e, 'action') !== 'hold').length} (of ${scaling.length} steps)`);
    p(`  Final User Count: ${pyStr(field(as, 'final_users'))}`);
    if (mode === 'capacity') {
      const peak = field(as, 'peak_throughput_tokens_per_sec');
      const peakUsers = field(as, 'peak_user_count');
      // Files without peak_found (the reference's, older kvbench's) found their peak if a step stopped the run.
      const stated = field(as, 'peak_found');
      const found = typeof stated === 'boolean' ? stated : scaling.some((e) => field(e, 'action') === 'stop');
      if (found) {
        p(`  Peak Capacity Found: ${typeof peak === 'number' ? formatFixedPy(peak, 2) : 'n/a'} tok/s at ${pyStr(peakUsers)} users`);
      } else if (typeof peak === 'number' && typeof peakUsers === 'number') {
        p(`  Peak Capacity: not found — ${noPeakFoundReason(summary.elapsed_time, { throughputTokensPerSec: peak, users: peakUsers })}`);
      } else {
        p('  Peak Capacity: not found');
      }
    } else if (isRecord(as) && 'target_met' in as) {
      p(qosTargetLine(as));
    }
  }

  p();
  p(RULE_EQ);
  p('NOTES:');
  if (opts.generationMode === 'none') p('  - Pure storage I/O benchmark (no generation simulation)');
  else p('  - End-to-end latency includes simulated GPU inference');
  p('  - "GB" and "MB" above are binary units as in the reference (GiB = 1024^3, MiB = 1024^2 bytes);');
  p('    the KVBENCH section below writes GiB for binary and GB for decimal (10^9 bytes).');
  p(RULE_EQ);
}

/** Whether the qos autoscaler's latency target held at the end, and on which interval's numbers. */
function qosTargetLine(as: Record<string, unknown>): string {
  const met = as.target_met;
  const target = `storage read P95 ≤ ${pyStr(as.read_latency_p95_threshold_ms)} ms`;
  const e = isRecord(as.target_judged_interval) ? as.target_judged_interval : null;
  if (typeof met !== 'boolean' || e === null) {
    return `  P95 Target (${target}): never measured — in no interval did a storage operation complete or stay in flight past the threshold, so the final user count rests on no latency sample`;
  }
  const ms = (label: string, v: unknown): string[] => (typeof v === 'number' ? [`${label} ${formatFixedPy(v, 2)} ms`] : []);
  const basis = [
    ...ms('read P95', e.read_latency_p95_ms),
    ...ms('write P95', e.write_latency_p95_ms),
    ...(e.read_latency_p95_ms === null ? ms('oldest read in flight', e.read_in_flight_oldest_ms) : []),
    ...(e.write_latency_p95_ms === null ? ms('oldest write in flight', e.write_in_flight_oldest_ms) : []),
    `saturation ${typeof e.saturation_level === 'number' ? formatFixedPy(e.saturation_level, 2) : 'n/a'}`,
  ].join(', ');
  const at = `last measured interval, at ${typeof e.elapsed_s === 'number' ? formatFixedPy(e.elapsed_s, 1) : '?'} s: ${basis}`;
  return met
    ? `  P95 Target (${target}): met (${at})`
    : `  P95 Target (${target}): NOT met (${at}): the final user count does not fit under the target`;
}

function printBlockSizes(
  kv: KvbenchSection,
  cs: Record<string, unknown>,
  given: BlockSizeSummaryBytes | undefined,
  p: Print,
): void {
  const mib = (bytes: number): string => `${formatFixedPy(bytes / BYTES_PER_MIB, 1)} MB`;
  if (given && given.entries > 0) {
    p(`  Entries in cache: ${given.entries}`);
    p(`  Block size min:   ${mib(given.minBytes)}`);
    p(`  Block size mean:  ${mib(given.meanBytes)}`);
    p(`  Block size P95:   ${mib(given.p95Bytes)}`);
    p(`  Block size max:   ${mib(given.maxBytes)}`);
    return;
  }
  let entries = 0;
  let usedBytes = 0;
  for (const tier of TIER_NAMES) {
    const tb = kv.tier_bytes?.[tier];
    if (!tb) continue;
    entries += tb.entries_at_end;
    usedBytes += tb.used_bytes_at_end;
  }
  if (entries > 0) {
    p(`  Entries in cache: ${entries}`);
    p(`  Block size mean:  ${mib(usedBytes / entries)}`);
    p('  (block size min/P95/max are not in the results file)');
    return;
  }
  const writeBytes = num(cs, 'total_write_bytes') ?? 0;
  const writeOps = num(cs, 'write_iops') ?? 0;
  if (writeOps > 0) p(`  Avg block size:   ${mib(writeBytes / writeOps)} (from ${writeOps} writes)`);
}

/** One storage-health criterion the way the reference prints it. */
export function formatCriterion(c: StorageHealthCriterion): string {
  const sym = c.passed ? PASS_SYMBOL : FAIL_SYMBOL;
  if (c.unit === 'ratio') {
    const pct = (v: number | string): string => (typeof v === 'number' ? formatRatioAsPercent(v) : String(v));
    return `  ${sym} ${c.name}: ${pct(c.actual)} (target: ${pct(c.target)})`;
  }
  const text = (v: number | string): string => (typeof v === 'number' ? formatFixedPy(v, 2) : String(v));
  const unit = c.unit ?? '';
  return `  ${sym} ${c.name}: ${text(c.actual)}${unit} (target: ${text(c.target)}${unit})`;
}

// ---------------------------------------------------------------------------------------------------
// kvbench section

function printKvbenchSection(kv: KvbenchSection, requestsCompleted: number, traceOnly: boolean, p: Print, heading: Heading): void {
  heading(KVBENCH_SECTION_HEADING);

  const status = kv.status.toUpperCase();
  if (kv.status !== 'complete') {
    const bang = '!'.repeat(78);
    p(`  ${bang}`);
    p(`  !!! ${status} RUN: these results do not cover the whole planned run.`);
    p(`  !!! Reason: ${kv.status_reason ?? 'not recorded'}`);
    p(`  ${bang}`);
  }
  p(`  Status: ${status}${kv.status_reason ? ` (${kv.status_reason})` : ''}`);
  p(`  kvbench version: ${kv.version}`);
  p(`  Started at: ${kv.started_at}`);
  p(`  Elapsed (measured phase): ${formatNsAsSeconds(kv.elapsed_ns)} (${formatIntegerGrouped(kv.elapsed_ns)} ns)`);
  const mw = kv.measured_window;
  if (mw) {
    p(
      `  Measured window: closed by ${mw.closed_by} (planned ${formatNsAsSeconds(mw.planned_ns)}); ` +
        `${formatIntegerGrouped(mw.requests_in_flight_at_close)} requests in flight then were abandoned, ` +
        `${formatIntegerGrouped(mw.requests_queued_at_close)} still queued; drain ${formatNsAsSeconds(mw.drain_ns)} (not measured)`,
    );
  }
  p(
    `  Requests: ${formatIntegerGrouped(kv.requests_issued)} issued, ${formatIntegerGrouped(requestsCompleted)} completed, ` +
      `${formatIntegerGrouped(kv.requests_failed)} failed`,
  );
  // A run whose backlog only reached its cap (not queueing-bound at the close) gets the note under what happened to it.
  if (kv.queue?.note) p(`  ${kv.queue.queueing_bound === false ? 'Backlog capped' : 'Queueing-bound'}: ${kv.queue.note}`);
  const busy = kv.workers;
  if (busy && busy.busy_requests > 0 && busy.busy_ns.total > 0) {
    const b = busy.busy_ns;
    const of = (ns: number): string => percentText(ns / b.total);
    const tiers = TIER_NAMES.filter((t) => b.cache_io_by_tier[t] > 0).map((t) => `${TIER_WORDS[t]} ${percentText(b.cache_io_by_tier[t] / Math.max(1, b.cache_io))}`);
    p(
      `  Worker busy time (${formatIntegerGrouped(busy.busy_requests)} completed request${busy.busy_requests === 1 ? '' : 's'}, hand-over to completion): ${formatNsAsSeconds(b.total)}: ` +
        `simulated generation ${of(b.generation)}, cache I/O ${of(b.cache_io)}${tiers.length > 0 ? ` (${tiers.join(', ')} of it)` : ''}, other ${of(b.other)}`,
    );
  }
  p(`  Request stream digest (sha256, first 16 hex): ${kv.request_stream_digest.slice(0, 16)}`);
  p(`  Effective seed: ${kv.effective_seed}`);
  const m = kv.model;
  p(
    `  Model: ${m.key}, ${formatIntegerGrouped(m.bytes_per_token)} bytes/token, TP=${m.tensor_parallel}, ` +
      `${formatIntegerGrouped(m.entry_bytes_per_token)} entry bytes/token (per rank)`,
  );

  // Tiers and how the storage tier did its I/O.
  p();
  p(`  GPU tier: ${describeTier(kv.tiers.gpu)}`);
  printGpuTier(kv.tiers.gpu, p);
  const cpu = kv.tiers.cpu;
  p(
    `  CPU tier: ${describeTier(cpu)}${cpu.peak_held_bytes != null ? `, peak RAM held ${formatBytesBinary(cpu.peak_held_bytes)}` : ''}` +
      (cpu.arena_bytes != null ? ` of a ${formatBytesBinary(cpu.arena_bytes)} arena` : '') +
      (cpu.arena_overflow_chunks ? ` (${cpu.arena_overflow_chunks} chunks found no room in it and took buffers of their own)` : ''),
  );
  const st = kv.tiers.storage;
  p(
    `  Storage tier: ${describeTier(st)}` +
      (st.present ? `, dir ${st.dir ?? '(none)'}, fsync ${st.fsync_policy}` : ''),
  );
  if (st.present) {
    p(`  Direct I/O: ${st.direct_io ? 'on' : 'off'}${st.direct_io_reason ? ` (${st.direct_io_reason})` : ''}`);
    printDeviceIo(kv, p);
    printEfficiency(kv, p);
    printPreparation(kv, p);
    if (st.ram_backed === true) {
      p(`  WARNING: the cache directory is on a RAM-backed filesystem (${st.ram_backing_chain ?? st.ram_filesystem ?? 'RAM'}): the storage tier measured memory,`);
      p('           not a drive; its latency and bandwidth (reads and writes) describe RAM, whatever direct I/O says.');
    } else if (st.buffered_loops && st.buffered_loops.length > 0) {
      const loops = st.buffered_loops.map((l) => ({ name: l.name, backingFile: l.backing_file, backingFilesystem: l.backing_filesystem }));
      p(`  WARNING: the cache directory is on a ${bufferedLoopMessage(loops)};`);
      p(`           storage read latency and bandwidth may describe RAM, not the drive${st.fsync_policy === 'none' ? ', and with fsync none so may the writes' : ''}.`);
    } else if (st.reads_may_hit_page_cache) {
      const why = kv.device_io?.flag_reason ?? 'buffered I/O';
      p(`  WARNING: storage reads may have been served by the OS page cache (${why});`);
      p('           storage read latency and bandwidth may describe RAM, not the device.');
    }
  }

  p();
  p(`  Tier bytes${traceOnly ? ', logical: trace-only, no I/O' : ''} (reads and writes include demotions; rates = bytes / measured wall-clock, GB/s = 10^9 B/s):`);
  for (const tier of TIER_NAMES) {
    const desc = kv.tiers[tier];
    const tb = kv.tier_bytes?.[tier];
    if (!desc.present && (!tb || (tb.read_bytes === 0 && tb.write_bytes === 0))) {
      p(`    ${TIER_LABELS[tier]}: not present`);
      continue;
    }
    if (!tb) {
      p(`    ${TIER_LABELS[tier]}: no byte counters recorded`);
      continue;
    }
    printTierBytes(TIER_LABELS[tier], tb, p);
  }

  const ver = kv.verification;
  if (ver) {
    p();
    if (!ver.enabled) {
      p('  Data verification: off');
    } else if (ver.corrupt_chunks === 0) {
      p(`  Data verification: on, ${checkedText(ver)}${ver.checked_chunks === 0 ? '' : ', 0 corrupt'}`);
    } else {
      p(`  !!! DATA VERIFICATION FAILED: ${formatIntegerGrouped(ver.corrupt_chunks)} corrupt chunks read back (${checkedText(ver)})`);
      const shown = ver.failures.slice(0, MAX_VERIFICATION_FAILURES_SHOWN);
      for (const f of shown) p(`    ${f.tier} ${f.key} at offset ${formatIntegerGrouped(f.offset_bytes)} bytes`);
      if (ver.failures.length > shown.length) p(`    … and ${ver.failures.length - shown.length} more (see the results JSON)`);
    }
  }

  const pr = kv.primary;
  p();
  p(`  Decode bytes read: ${bytesWithExact(pr.decode_bytes_read)}`);
  p(`  Prefill bytes written: ${bytesWithExact(pr.prefill_bytes_written)}`);
  const logical = traceOnly ? ` ${LOGICAL}` : '';
  p(
    `  Storage read bandwidth${logical}: ${formatBytesPerSecAsGBps(pr.storage_read_bytes_per_sec)} ` +
      `(${formatBytesPerSecAsGiBps(pr.storage_read_bytes_per_sec)})`,
  );
  p(
    `  Storage write bandwidth${logical}: ${formatBytesPerSecAsGBps(pr.storage_write_bytes_per_sec)} ` +
      `(${formatBytesPerSecAsGiBps(pr.storage_write_bytes_per_sec)})`,
  );
  p(`  Wall-clock throughput: ${formatFixedPy(pr.wall_clock_throughput_tokens_per_sec, 2)} tokens/sec`);

  const lat = kv.latency;
  p();
  p('  Latency (percentiles read from HDR histograms; n = samples):');
  p(`    End-to-end:              ${p50p95(lat.end_to_end)}`);
  p(`    Queue wait:              ${p50p95(lat.queue_wait)}`);
  // Part of the two above (they run from the scheduled arrival): how much of them was the scheduler being late.
  if (lat.issue_lateness && lat.issue_lateness.count > 0) p(`    of which issue lateness: ${p50p95(lat.issue_lateness)}, max ${formatNsAsMs(lat.issue_lateness.max_ns)}`);
  p(`    Cache I/O per request:   ${traceOnly ? NOT_MEASURED : p50p95(lat.storage_io_per_request)}`);
  for (const tier of TIER_NAMES) {
    for (const op of ['read', 'write'] as const) {
      const perOp = op === 'read' ? lat.tier_read?.[tier] : lat.tier_write?.[tier];
      const perMiB = op === 'read' ? lat.tier_read_ns_per_mib?.[tier] : lat.tier_write_ns_per_mib?.[tier];
      if (!perOp || perOp.count === 0) continue;
      const label = `${TIER_LABELS[tier]} ${op}:`.padEnd(24);
      if (traceOnly) {
        p(`    ${label} ${NOT_MEASURED}, ${formatIntegerGrouped(perOp.count)} logical operations`);
        continue;
      }
      let line = `    ${label} ${p50p95(perOp)}`;
      // Per MiB takes entries of at least one I/O chunk (docs/metrics.md): the line says which, and how many.
      const atLeast = `entries ≥ ${formatBytesBinary(kv.engine_health.io_chunk_bytes)}`;
      if (perMiB && perMiB.count > 0) {
        line += `; per MiB (${atLeast}, n=${formatIntegerGrouped(perMiB.count)}) P50 ${formatNsPerMiBAsMsPerMiB(perMiB.p50_ns)}, P95 ${formatNsPerMiBAsMsPerMiB(perMiB.p95_ns)}`;
      } else if (perMiB) {
        line += `; per MiB: no ${atLeast}`;
      }
      p(line);
    }
  }

  const demotionKeys = Object.keys(kv.demotions ?? {});
  p();
  if (demotionKeys.length === 0) {
    p('  Demotions: none');
  } else {
    p('  Demotions (entries moved down a tier, or further when the next tier declines them):');
    for (const key of demotionKeys) {
      const d = kv.demotions[key];
      const dl = lat.demotion?.[key];
      const p95 = dl && dl.count > 0 ? formatNsAsMs(dl.p95_ns) : 'no samples';
      p(`    ${key}: ${formatIntegerGrouped(d.count)} entries, ${bytesWithExact(d.bytes)}, P95 ${p95}`);
    }
    // multi-tier-cache.ts: #demote counts a demotion once it has completed with the window open, whole;
    // #progress counts the tiers' bytes (demoted in/out included) chunk by chunk while it is open.
    p(DEMOTIONS_COUNTED);
  }
  printPromotions(kv, p);

  const h = kv.engine_health;
  p();
  p('  Engine health:');
  p(
    `    Event-loop lag: P99 ${formatNsAsMs(h.event_loop_lag_ns.p99)} ` +
      `(P50 ${formatNsAsMs(h.event_loop_lag_ns.p50)}, max ${formatNsAsMs(h.event_loop_lag_ns.max)})`,
  );
  p(`    Byte workers: ${h.byte_workers.threads} threads, utilisation ${formatRatioAsPercent(h.byte_workers.utilisation)}`);
  p(
    `    I/O depth: ${h.io_depth}, I/O chunk: ${formatBytesBinary(h.io_chunk_bytes)}, ` +
      `UV_THREADPOOL_SIZE: ${h.uv_threadpool_size ?? 'default'}, peak RSS: ${formatBytesBinary(h.peak_rss_bytes)}`,
  );
  const mem = h.memory;
  if (mem) {
    const b = mem.fixed_buffers;
    const s = mem.sampled_peak;
    p(
      `    Memory: buffers reserved ${formatBytesBinary(b.total_bytes)} (CPU tier arena ${formatBytesBinary(b.cpu_tier_arena_bytes)}, ` +
        `storage I/O ${formatBytesBinary(b.storage_io_buffers_bytes)}, CPU read staging ${formatBytesBinary(b.cpu_read_staging_bytes)}, payload ${formatBytesBinary(b.payload_pool_bytes)}` +
        (b.gpu_staging_bytes ? `, GPU staging ${formatBytesBinary(b.gpu_staging_bytes)}${b.gpu_staging_pinned === false ? ', not page-locked' : ' page-locked (pinned)'}` : '') +
        ')' +
        (s
          ? `; sampled peaks: RSS ${formatBytesBinary(s.rss_bytes)}, JS heap ${formatBytesBinary(s.heap_used_bytes)}, array buffers ${formatBytesBinary(s.array_buffers_bytes)}` +
            (s.byte_workers_heap_used_bytes === null ? '' : `, byte workers' heaps ${formatBytesBinary(s.byte_workers_heap_used_bytes)}`)
          : ''),
    );
  }
  const huge = h.io_buffer_huge_pages;
  if (huge) p(`    I/O buffers: ${huge.advised ? 'transparent huge pages' : `small pages (${huge.reason})`}`);
  p(`    Max queue depth: ${kv.queue?.max_depth ?? 'n/a'}, placement failures: ${kv.cache?.placement_failures ?? 'n/a'}`);
}

/** --promotion on-hit: the entries moved up after a hit, and the moves that failed. */
function printPromotions(kv: KvbenchSection, p: Print): void {
  const pr = kv.promotion;
  // Results written before promotion existed have no section; the reference's policy moves nothing up.
  if (!pr || pr.policy === 'none') return;
  const keys = Object.keys(pr.moves);
  p(keys.length === 0 ? '  Promotions (--promotion on-hit): none' : '  Promotions (--promotion on-hit: hit entries moved up a tier, timed apart from their reads):');
  for (const key of keys) {
    const m = pr.moves[key];
    p(`    ${key}: ${formatIntegerGrouped(m.count)} entries, ${bytesWithExact(m.bytes)}, P95 ${m.latency.count > 0 ? formatNsAsMs(m.latency.p95_ns) : 'no samples'}`);
  }
  if (pr.failures > 0) p(`    FAILED: ${formatIntegerGrouped(pr.failures)} promotions (entries stayed where they were; first: ${pr.first_failure ?? 'no message'})`);
}

/** Writes made before the measured phase: shown so nobody mistakes them for part of it. */
function printPreparation(kv: KvbenchSection, p: Print): void {
  const prep = kv.preparation;
  if (!prep) return;
  const line = (label: string, ph: PreparationPhase | null, extra = ''): void => {
    if (ph === null) return;
    p(
      `  ${label} (before the measured phase, not in its statistics): ${formatIntegerGrouped(ph.entries)} entries, ` +
        `${formatBytesBinary(ph.bytes_written)} in ${formatNsAsSeconds(ph.elapsed_ns)} (${formatBytesPerSecAsGBps(ph.write_bytes_per_sec)})${extra}`,
    );
  };
  line('RAG ingestion', prep.rag_ingestion);
  line('Decode-only pre-population', prep.decode_only_prepopulation);
  const pc = prep.precondition;
  if (pc) line('Preconditioning', pc, `, target ${formatBytesBinary(pc.target_bytes)}, ${pc.threads} writers`);
}

/** What the device behind the cache directory moved, beside the storage tier's own bytes. */
function printDeviceIo(kv: KvbenchSection, p: Print): void {
  const d = kv.device_io;
  // Results written before device counters existed have no section.
  if (!d) return;
  if (!d.available) {
    p(`  Device I/O: not measured (${d.reason ?? 'no device counters'})`);
    return;
  }
  const coverage = (c: number | null): string => (c === null ? '' : `, ${formatFixedPy(c, 3)} × the storage tier's`);
  const via = d.via ?? null;
  p(
    `  Device I/O (${d.device}${d.parent_device ? ` on ${d.parent_device}` : ''}${via ? `, holding ${via.device}'s backing file` : ''}, /proc/diskstats, measured phase, every process): ` +
      `read ${formatBytesBinary(d.read_bytes ?? 0)}${coverage(d.read_coverage)}; ` +
      `written ${formatBytesBinary(d.write_bytes ?? 0)}${coverage(d.write_coverage)}`,
  );
  p(
    `    busy ${d.busy_ratio === null ? 'n/a' : formatRatioAsPercent(d.busy_ratio)}, average queue depth ${d.avg_queue_depth === null ? 'n/a' : formatFixedPy(d.avg_queue_depth, 1)}, ` +
      `${formatIntegerGrouped(d.read_ios ?? 0)} reads, ${formatIntegerGrouped(d.write_ios ?? 0)} writes, ${formatIntegerGrouped(d.flushes ?? 0)} flushes`,
  );
  // Below a loop device the coverage is the disk's; what the loop itself was asked for is context.
  if (via) {
    p(
      `    through ${via.device} (the cache directory's filesystem; it counts page-cache hits of its file too): ` +
        `read ${formatBytesBinary(via.read_bytes ?? 0)}, written ${formatBytesBinary(via.write_bytes ?? 0)}`,
    );
  }
  // Results written before the per-process count existed have no such field.
  if (d.process_read_bytes !== undefined) {
    p(
      d.process_read_bytes === null
        ? '    the engine process alone (/proc/self/io): not measured'
        : `    the engine process alone (/proc/self/io, any device): read ${formatBytesBinary(d.process_read_bytes)}${coverage(d.process_read_coverage)}`,
    );
  }
}

/** `--probe-result`: the storage tier as a share of the probed sequential limit. */
function printEfficiency(kv: KvbenchSection, p: Print): void {
  const e = kv.efficiency;
  if (!e) return;
  const part = (label: string, eff: number | null, limit: number | null): string | null =>
    eff === null ? null : `${label} ${formatRatioAsPercent(eff)} of ${formatBytesPerSecAsGBps(limit ?? 0)}`;
  const parts = [part('read', e.storage_read_efficiency, e.read_limit_bytes_per_sec), part('write', e.storage_write_efficiency, e.write_limit_bytes_per_sec)].filter((x) => x !== null);
  const mixed = e.storage_mixed_efficiency === null ? '' : `; the run's mix ${formatRatioAsPercent(e.storage_mixed_efficiency)} of the probed limit`;
  p(`  Efficiency (storage tier ÷ kvbench probe of ${e.probe_device ?? e.probe_dir}, ${e.probed_at}): ${parts.join(', ') || 'no storage bytes'}${mixed}`);
  for (const n of e.notes) p(`    note: ${n}`);
}

function printTierBytes(label: string, tb: TierBytes, p: Print): void {
  p(`    ${label}:`);
  p(
    `      Read:  ${bytesWithExact(tb.read_bytes)}, ${formatIntegerGrouped(tb.read_ops)} ops, ` +
      `${formatBytesPerSecAsGBps(tb.read_bytes_per_sec)}`,
  );
  p(
    `      Write: ${bytesWithExact(tb.write_bytes)}, ${formatIntegerGrouped(tb.write_ops)} ops, ` +
      `${formatBytesPerSecAsGBps(tb.write_bytes_per_sec)}`,
  );
  p(`      Demoted in: ${formatBytesBinary(tb.demoted_in_bytes)}; demoted out: ${formatBytesBinary(tb.demoted_out_bytes)}; hits read (reads less moves): ${formatBytesBinary(tb.hit_read_bytes)}`);
  p(
    `      Evicted: ${formatIntegerGrouped(tb.evicted_entries)} entries (${formatBytesBinary(tb.evicted_bytes)}); ` +
      `at end: ${formatIntegerGrouped(tb.entries_at_end)} entries, ${formatBytesBinary(tb.used_bytes_at_end)}`,
  );
}

/** Why the demotions' bytes differ from the tier lines' demoted in/out bytes. */
const DEMOTIONS_COUNTED =
  '    (whole demotions that completed in the measured window, one begun before it opened included; the tier lines above count ' +
  'demotion bytes chunk by chunk as they moved in the window, so a demotion in flight when it opened or closed counts there in part)';

/** A tier's Device / Host / Total P95 per direction, where the results split them. */
function printLatencySplit(cs: Record<string, unknown>, tier: 'storage' | 'gpu', deviceMeans: string, p: Print): void {
  for (const op of ['read', 'write'] as const) {
    const device = num(cs, `${tier}_${op}_device_p95_ms`);
    const host = num(cs, `${tier}_${op}_host_p95_ms`);
    const total = num(cs, `${tier}_${op}_p95_ms`);
    if (device === undefined) continue;
    p(`  ${TIER_LABELS[tier]} ${titleCase(op)}:`);
    p(`    - Device P95 (${deviceMeans}): ${formatMs(device)}`);
    if (host !== undefined) p(`    - Host P95 (rest of entry time): ${formatMs(host)}`);
    if (total !== undefined) p(`    - Total P95: ${formatMs(total)}`);
  }
}

/** The GPUs, the driver, the staging and the copies of a GPU tier that was open. */
function printGpuTier(g: GpuTierDescription, p: Print): void {
  if (!g.present || !g.devices) return;
  for (const d of g.devices) {
    p(
      `    GPU ${d.index}: ${d.model}, ${formatBytesAsGiB(d.total_memory_bytes)}${d.pci_bus_id ? `, PCI ${d.pci_bus_id}` : ''}, ` +
        `reserved ${formatBytesAsGiB(d.reserved_bytes)}`,
    );
  }
  p(
    // cuDriverGetVersion: the highest CUDA version the driver supports, not a toolkit or runtime in use.
    `    NVIDIA driver ${g.driver_version ?? 'version unknown'} (supports CUDA ${g.cuda_version ?? '?'}; ${g.driver_library ?? 'libcuda.so.1'}); ` +
      `staging ${formatBytesBinary(g.staging_bytes ?? 0)} ${g.staging_pinned ? 'pinned' : `NOT pinned (${g.staging_reason ?? 'reason unknown'}): copies are slower`}, ` +
      `${g.copy_threads ?? '?'} copy threads, ${formatBytesBinary(g.chunk_bytes ?? 0)} chunks`,
  );
  const direction = (
    label: string,
    bytes: number | undefined,
    copies: number | undefined,
    link: number | null | undefined,
    perCopy: number | null | undefined,
  ): string =>
    `${label} ${formatBytesBinary(bytes ?? 0)} in ${formatIntegerGrouped(copies ?? 0)} copies` +
    (link ? `, ${formatBytesPerSecAsGBps(link)} link busy` : '') +
    (perCopy ? `, ${formatBytesPerSecAsGBps(perCopy)} per copy` : '');
  p(
    `    Copies (the measured phase; GB/s = 10^9 B/s; link busy = bytes ÷ time with a copy executing, per copy = bytes ÷ summed copy time): ` +
      `${direction('host→device', g.h2d_copy_bytes, g.h2d_copies, g.h2d_link_busy_bytes_per_sec, g.h2d_per_copy_bytes_per_sec ?? g.h2d_copy_bandwidth_bytes_per_sec)}; ` +
      `${direction('device→host (staging)', g.d2h_staging_copy_bytes ?? g.d2h_copy_bytes, g.d2h_staging_copies ?? g.d2h_copies, g.d2h_staging_link_busy_bytes_per_sec, g.d2h_staging_per_copy_bytes_per_sec ?? g.d2h_copy_bandwidth_bytes_per_sec)}` +
      (g.demotion_d2h_copies
        ? `; ${direction('device→host (demotions, pageable)', g.demotion_d2h_copy_bytes, g.demotion_d2h_copies, g.demotion_d2h_link_busy_bytes_per_sec, g.demotion_d2h_per_copy_bytes_per_sec)}`
        : ''),
  );
  if (g.staging_slot_acquisitions !== undefined && g.staging_slots !== undefined) {
    const taken = g.staging_slot_acquisitions;
    const waits = g.staging_slot_waits ?? 0;
    p(
      `    Staging slots (${g.staging_slots} × ${formatBytesBinary(g.chunk_bytes ?? 0)}, shared by every GPU read and write): ` +
        `${formatIntegerGrouped(taken)} taken in the measured phase, ${formatIntegerGrouped(waits)}${taken > 0 ? ` (${formatRatioAsPercent(waits / taken)})` : ''} after waiting for one` +
        (waits > 0
          ? `, mean wait ${formatNsAsMs((g.staging_slot_wait_ns ?? 0) / waits)}, longest ${formatNsAsMs(g.staging_slot_max_wait_ns ?? 0)}`
          : ''),
    );
  }
}

function describeTier(t: TierDescription): string {
  if (!t.present) return `not present${t.reason ? ` (${t.reason})` : ''}`;
  return `present, budget ${formatBytesAsGiB(t.budget_bytes)}${t.reason ? ` (${t.reason})` : ''}`;
}

function bytesWithExact(bytes: number): string {
  return `${formatBytesBinary(bytes)} (${formatIntegerGrouped(bytes)} bytes)`;
}

function p50p95(s: LatencySummaryNs | undefined): string {
  if (!s || s.count === 0) return 'no samples';
  return `P50 ${formatNsAsMs(s.p50_ns)}, P95 ${formatNsAsMs(s.p95_ns)} (n=${formatIntegerGrouped(s.count)})`;
}

// ---------------------------------------------------------------------------------------------------
// small helpers

function hasQosData(m: QosLevelMetrics | { no_data: true } | undefined): m is QosLevelMetrics {
  return m !== undefined && !('no_data' in m && m.no_data);
}

function num(rec: Record<string, unknown> | undefined, key: string): number | undefined {
  const v = rec?.[key];
  return typeof v === 'number' ? v : undefined;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function field(obj: unknown, key: string): unknown {
  return obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>)[key] : undefined;
}

function fmt(v: number | undefined, f: (v: number) => string): string {
  return v === undefined ? 'n/a' : f(v);
}

/** Python's str() for the values the reference prints bare (counts). */
function pyStr(v: unknown): string {
  if (v === undefined || v === null) return 'n/a';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  return String(v);
}

function perSecond(count: number, seconds: number): number {
  return seconds > 0 ? count / seconds : 0;
}

function titleCase(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
