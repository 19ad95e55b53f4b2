// `kvbench run` end to end: the real CLI, a real engine process, real files on a temp dir.
// Checks the results JSON a user gets: every reference key, internal consistency, and that the
// cache directory is left exactly as it was found.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LatencySummaryNs, PercentilesMs, QosLevelMetrics, RunResults, TierBytes } from '../../../src-shared/domain/results.ts';
import { GIB, TINY_RUN_FLAGS, cacheDirWithForeignFile, explain, makeTempDir, readResults, removeTempDirs, runCli, snapshotDir } from './cli-harness.ts';
import { expectLatencyProfileHealth } from './storage-health-expectations.ts';

afterEach(removeTempDirs);

const TOP_LEVEL_KEYS = [
  'requests_completed',
  'total_tokens_generated',
  'total_storage_io_latency',
  'total_generation_latency',
  'end_to_end_latencies',
  'storage_latencies',
  'generation_latencies',
  'throughput_timeline',
  'prefill_latencies',
  'decode_latencies',
  'multi_turn_cache_hits',
  'multi_turn_cache_misses',
  'seed',
  'summary',
];
const SUMMARY_KEYS = [
  'total_requests',
  'total_tokens',
  'elapsed_time',
  'avg_throughput_tokens_per_sec',
  'total_storage_io_time',
  'storage_throughput_tokens_per_sec',
  'requests_per_second',
  'end_to_end_latency_ms',
  'storage_io_latency_ms',
  'generation_latency_ms',
  'cache_stats',
  'qos_metrics',
  'prefix_cache_stats',
  'autoscaling_stats',
  'autoscaling_summary',
  'multi_turn_stats',
];
const TIERS = ['gpu', 'cpu', 'storage'] as const;
const CACHE_STATS_KEYS = [
  'cache_hit_rate',
  'cache_hits',
  'cache_misses',
  'gpu_entries',
  'cpu_entries',
  'storage_entries',
  'gpu_memory_used_gb',
  'cpu_memory_used_gb',
  'offloads_cpu',
  'offloads_storage',
  'storage_health',
  'prefill_writes',
  'decode_reads',
  ...TIERS.flatMap((t) => [`tier_${t}_kv_bytes_written_gb`, `tier_${t}_kv_bytes_read_gb`]),
  ...TIERS.flatMap((t) => [`tier_${t}_read_bandwidth_gbps`, `tier_${t}_write_bandwidth_gbps`]),
  'system_prompt_hits',
  'common_phrase_hits',
  'user_cache_hits',
  'multi_turn_hits',
  'total_read_bytes',
  'total_write_bytes',
  'total_read_gb',
  'total_write_gb',
  'read_write_ratio',
  'read_iops',
  'write_iops',
  'storage_tokens_processed',
  'storage_read_p95_ms',
];
const PERCENTILE_KEYS = ['mean', 'p50', 'p95', 'p99', 'p999', 'p9999'];

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

/** |a − b| within a relative tolerance (floating-point sums, GiB round trips). */
function expectClose(actual: number, expected: number, what: string, relTol = 1e-9): void {
  const tol = Math.max(Math.abs(expected) * relTol, 1e-9);
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(tol);
}

function expectOrderedPercentiles(p: PercentilesMs, what: string): void {
  expect(Object.keys(p).sort(), what).toEqual([...PERCENTILE_KEYS].sort());
  for (const k of PERCENTILE_KEYS) expect(Number.isFinite(p[k as keyof PercentilesMs]), `${what}.${k}`).toBe(true);
  expect(p.p50, `${what} p50 <= p95`).toBeLessThanOrEqual(p.p95);
  expect(p.p95, `${what} p95 <= p99`).toBeLessThanOrEqual(p.p99);
  expect(p.p99, `${what} p99 <= p999`).toBeLessThanOrEqual(p.p999);
  expect(p.p999, `${what} p999 <= p9999`).toBeLessThanOrEqual(p.p9999);
}

function expectLatencySummaryMatchesList(s: LatencySummaryNs, listS: number[], what: string): void {
  expect(s.count, `${what} count`).toBe(listS.length);
  // sum_ns is exact; the raw list is the same samples in seconds.
  expectClose(sum(listS), s.sum_ns / 1e9, `${what} sum`, 1e-6);
  if (listS.length > 0) {
    expect(s.min_ns).toBeLessThanOrEqual(s.p50_ns);
    expect(s.p50_ns).toBeLessThanOrEqual(s.p95_ns);
    expect(s.p95_ns).toBeLessThanOrEqual(s.max_ns * 1.001 + 1); // HDR buckets round up by < 0.1 %
  }
}

/** The rank an HDR histogram reads percentile `pct` at: the ⌈pct·n/100⌉-th smallest of n values (1-based). */
const hdrRank = (pct: number, n: number): number => Math.max(Math.ceil((pct * n) / 100 - 1e-9), 1);

/**
 * Percentiles (ms) against the raw list they summarise (s). HDR reads the value at hdrRank, to its 3
 * significant digits (0.1 %): one of the two closest ranks between which numpy's default (type 7)
 * interpolates, so it is compared with that rank, and checked to lie within type 7's bracket.
 */
function expectPercentilesOfList(p: Omit<PercentilesMs, 'mean'>, listS: number[], what: string): void {
  const sorted = listS.map((x) => x * 1e3).sort((a, b) => a - b);
  const n = sorted.length;
  for (const [key, pct] of [['p50', 50], ['p95', 95], ['p99', 99], ['p999', 99.9], ['p9999', 99.99]] as const) {
    const atRankMs = sorted[hdrRank(pct, n) - 1];
    expect(Math.abs(p[key] - atRankMs), `${what}.${key}: ${p[key]} vs ${atRankMs} (of ${n} values)`).toBeLessThanOrEqual(atRankMs / 1000 + 1e-6);
    const h = ((n - 1) * pct) / 100;
    expect(p[key], `${what}.${key} within type 7's bracket`).toBeGreaterThanOrEqual(sorted[Math.floor(h)] - 1e-6);
    expect(p[key], `${what}.${key} within type 7's bracket`).toBeLessThanOrEqual(sorted[Math.min(Math.floor(h) + 1, n - 1)] * 1.001 + 1e-6);
  }
}

/**
 * A QoS class's compliance (the share of its requests within the target) against the class's stored
 * percentiles: a percentile at or under the target puts at least its rank's share within it, one over
 * it (by more than HDR's 0.1 %) puts every request from its rank up over it.
 */
function expectComplianceOfClass(q: QosLevelMetrics, what: string): void {
  const n = q.total_requests;
  const target = q.sla.target_p95_ms;
  const violations = Math.round((1 - q.sla.compliance) * n);
  expectClose((1 - q.sla.compliance) * n, violations, `${what}: violations are whole requests`, 1e-9);
  expect(q.sla.met, `${what}.met`).toBe(q.sla.compliance >= 0.95);
  expect(q.sla.actual_p95_ms, `${what}.actual_p95_ms`).toBe(q.latency_ms.p95);
  for (const [key, pct] of [['p50', 50], ['p95', 95], ['p99', 99], ['max', 100]] as const) {
    const v = q.latency_ms[key];
    const r = hdrRank(pct, n);
    if (v <= target) expect(violations, `${what}: ${key} ${v} ms is within ${target} ms`).toBeLessThanOrEqual(n - r);
    if (v > target * 1.001) expect(violations, `${what}: ${key} ${v} ms is over ${target} ms`).toBeGreaterThanOrEqual(n - r + 1);
  }
}

describe('kvbench run (storage only, tiny-1b, 5 s)', () => {
  it('exits 0, writes every reference key with consistent values, and leaves the cache dir as it found it', async () => {
    const tmp = makeTempDir();
    const { cacheDir, foreign, foreignBytes } = cacheDirWithForeignFile(tmp);
    const before = snapshotDir(cacheDir);
    const output = path.join(tmp, 'results.json');

    const r = await runCli(
      [
        'run',
        ...TINY_RUN_FLAGS,
        '--num-users', '8',
        '--duration', '5',
        '--cpu-mem-gb', '0',
        '--cache-dir', cacheDir,
        '--seed', '42',
        '--output', output,
      ],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toContain(`Results saved to ${output}`);
    expect(r.stdout).toContain('BENCHMARK RESULTS');

    // The cache directory: the foreign file byte for byte, nothing added, nothing left behind.
    expect(snapshotDir(cacheDir)).toEqual(before);
    expect(fs.readFileSync(foreign).equals(foreignBytes)).toBe(true);
    // Only the results file appeared next to it (no temporary file of the atomic write left over).
    expect(fs.readdirSync(tmp).sort()).toEqual(['cache', 'results.json']);

    const res: RunResults = readResults(output);

    // ---- keys ----
    for (const k of TOP_LEVEL_KEYS) expect(res, `top-level key ${k}`).toHaveProperty([k]);
    expect(res).toHaveProperty(['kvbench']);
    const s = res.summary!;
    for (const k of SUMMARY_KEYS) expect(s, `summary key ${k}`).toHaveProperty([k]);
    const cs = s.cache_stats as Record<string, unknown>;
    for (const k of CACHE_STATS_KEYS) expect(cs, `cache_stats key ${k}`).toHaveProperty([k]);
    for (const level of ['interactive', 'responsive', 'batch'] as const) expect(s.qos_metrics, `qos ${level}`).toHaveProperty([level]);
    expectOrderedPercentiles(s.end_to_end_latency_ms, 'end_to_end_latency_ms');
    expectOrderedPercentiles(s.storage_io_latency_ms, 'storage_io_latency_ms');
    expectOrderedPercentiles(s.generation_latency_ms, 'generation_latency_ms');
    // The reference's monitor samples every second without autoscaling: {seconds so far, tokens so far ÷ them}.
    const tl = res.throughput_timeline;
    expect(tl.length, 'one point per second of the 5 s run').toBeGreaterThanOrEqual(4);
    expect(tl.map((p) => Object.keys(p).sort())).toEqual(tl.map(() => ['throughput_tokens_per_sec', 'timestamp']));
    for (let i = 1; i < tl.length; i++) expect(tl[i].timestamp).toBeGreaterThan(tl[i - 1].timestamp);
    expect(tl.map((p) => p.timestamp)).toEqual(res.kvbench.timeline.map((p) => p.elapsed_ns / 1e9));
    // The last point closes the measured phase: all tokens ÷ all of it, the summary's throughput.
    expectClose(tl.at(-1)!.throughput_tokens_per_sec, s.avg_throughput_tokens_per_sec, 'last throughput_timeline point', 1e-9);
    expect(Array.isArray(s.autoscaling_stats)).toBe(true);
    // The file's own statement of its units names the reference keys in seconds checked above.
    for (const said of ['seconds in the raw lists (*_latencies)', 'throughput_timeline timestamps', 'elapsed_time', 'total_storage_io_time', 'GiB/s ("gbps")', 'milliseconds in keys ending _ms']) {
      expect(res.kvbench.units).toContain(said);
    }

    // ---- the run itself ----
    const kv = res.kvbench;
    expect(kv.status).toBe('complete');
    expect(kv.status_reason).toBeNull();
    expect(res.seed).toBe(42);
    expect(kv.effective_seed).toBe(42);
    expect(kv.request_stream_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(kv.model.key).toBe('tiny-1b');
    expect(kv.model.bytes_per_token).toBe(24_576);
    expect(res.requests_completed).toBeGreaterThan(0);
    expect(kv.requests_failed).toBe(0);
    expect(kv.requests_issued).toBeGreaterThanOrEqual(res.requests_completed);
    // The measured phase lasts the requested 5 s (plus at most the drain of requests in flight).
    expect(kv.elapsed_ns).toBeGreaterThanOrEqual(5e9);
    expectClose(s.elapsed_time, kv.elapsed_ns / 1e9, 'elapsed_time');

    // ---- counts: one entry per completed request in the per-request lists; the prefill and decode
    // lists hold only the requests that had that phase (as in the reference), and every request had one ----
    const n = res.requests_completed;
    expect(s.total_requests).toBe(n);
    for (const list of ['end_to_end_latencies', 'storage_latencies', 'generation_latencies', 'prefill_latencies', 'decode_latencies'] as const) {
      if (list === 'prefill_latencies' || list === 'decode_latencies') expect(res[list].length, list).toBeLessThanOrEqual(n);
      else expect(res[list], list).toHaveLength(n);
      expect(res[list].every((x) => Number.isFinite(x) && x >= 0), `${list} values`).toBe(true);
    }
    expect(res.prefill_latencies.length + res.decode_latencies.length).toBeGreaterThanOrEqual(n);
    expectLatencySummaryMatchesList(kv.latency.end_to_end, res.end_to_end_latencies, 'end_to_end');
    expectLatencySummaryMatchesList(kv.latency.storage_io_per_request, res.storage_latencies, 'storage_io_per_request');
    expectLatencySummaryMatchesList(kv.latency.generation, res.generation_latencies, 'generation');
    expectLatencySummaryMatchesList(kv.latency.prefill, res.prefill_latencies, 'prefill');
    expectLatencySummaryMatchesList(kv.latency.decode, res.decode_latencies, 'decode');
    expect(kv.latency.queue_wait.count).toBe(n);
    // The percentiles are those of the samples the raw lists hold, in the summary and in the kvbench section.
    expectPercentilesOfList(s.end_to_end_latency_ms, res.end_to_end_latencies, 'end_to_end_latency_ms');
    expectPercentilesOfList(s.storage_io_latency_ms, res.storage_latencies, 'storage_io_latency_ms');
    const e2eMs = kv.latency.end_to_end;
    expectPercentilesOfList({ p50: e2eMs.p50_ns / 1e6, p95: e2eMs.p95_ns / 1e6, p99: e2eMs.p99_ns / 1e6, p999: e2eMs.p999_ns / 1e6, p9999: e2eMs.p9999_ns / 1e6 }, res.end_to_end_latencies, 'kvbench.latency.end_to_end');
    // Every request's end-to-end time contains its storage time.
    for (let i = 0; i < n; i++) expect(res.end_to_end_latencies[i]).toBeGreaterThanOrEqual(res.storage_latencies[i]);
    const qosTotal = sum(
      (['interactive', 'responsive', 'batch'] as const).map((l) => {
        const q = s.qos_metrics[l];
        return 'no_data' in q ? 0 : q.total_requests;
      }),
    );
    expect(qosTotal, 'requests over the QoS classes').toBe(n);
    for (const level of ['interactive', 'responsive', 'batch'] as const) {
      const q = s.qos_metrics[level];
      if (!('no_data' in q)) expectComplianceOfClass(q, `qos_metrics.${level}`);
    }

    // ---- totals and the rates derived from them ----
    expect(s.total_tokens).toBe(res.total_tokens_generated);
    expect(res.total_tokens_generated).toBeGreaterThan(0);
    expectClose(s.avg_throughput_tokens_per_sec * s.elapsed_time, res.total_tokens_generated, 'avg_throughput × elapsed', 1e-9);
    expectClose(kv.primary.wall_clock_throughput_tokens_per_sec, s.avg_throughput_tokens_per_sec, 'wall-clock throughput');
    expectClose(s.requests_per_second * s.elapsed_time, n, 'requests_per_second × elapsed');
    expectClose(res.total_storage_io_latency, sum(res.storage_latencies), 'total_storage_io_latency = Σ storage_latencies', 1e-6);
    expectClose(s.total_storage_io_time, res.total_storage_io_latency, 'total_storage_io_time');
    expectClose(s.storage_throughput_tokens_per_sec * s.total_storage_io_time, res.total_tokens_generated, 'storage throughput × Σ storage time', 1e-9);
    // --generation-mode none: no simulated GPU time at all.
    expect(res.total_generation_latency).toBe(0);
    expect(res.generation_latencies.every((x) => x === 0)).toBe(true);
    expect(s.generation_latency_ms.mean).toBe(0);
    // Zeros read back as 0 ms, as the reference's numpy percentiles, not the histogram's 1 ns unit.
    expect(s.generation_latency_ms).toEqual({ mean: 0, p50: 0, p95: 0, p99: 0, p999: 0, p9999: 0 });
    expect(kv.latency.generation).toMatchObject({ min_ns: 0, max_ns: 0, p50_ns: 0, p9999_ns: 0 });
    expectClose(s.end_to_end_latency_ms.mean, (kv.latency.end_to_end.sum_ns / n) / 1e6, 'mean end-to-end ms', 1e-6);

    // ---- tiers: only storage present, with direct I/O stated ----
    expect(kv.tiers.gpu.present).toBe(false);
    expect(kv.tiers.cpu.present).toBe(false);
    expect(kv.tiers.storage.present).toBe(true);
    expect(kv.tiers.storage.dir).toBe(cacheDir);
    expect(typeof kv.tiers.storage.direct_io).toBe('boolean');
    expect(kv.tiers.storage.reads_may_hit_page_cache).toBe(!kv.tiers.storage.direct_io || kv.tiers.storage.ram_backed === true);
    if (kv.tiers.storage.direct_io) expect(kv.tiers.storage.direct_io_reason).toBeNull();
    else expect(kv.tiers.storage.direct_io_reason, 'why direct I/O is off').toMatch(/\S/);
    expect(kv.tiers.storage.budget_bytes).toBeGreaterThan(0);

    // ---- bytes: the reference's GiB keys are the kvbench section's bytes ÷ 1024³ ----
    const tb = kv.tier_bytes as Record<(typeof TIERS)[number], TierBytes>;
    for (const t of TIERS) {
      expectClose((cs[`tier_${t}_kv_bytes_read_gb`] as number) * GIB, tb[t].read_bytes, `tier_${t}_kv_bytes_read_gb × 1024³`);
      expectClose((cs[`tier_${t}_kv_bytes_written_gb`] as number) * GIB, tb[t].write_bytes, `tier_${t}_kv_bytes_written_gb × 1024³`);
      expectClose((cs[`tier_${t}_read_bandwidth_gbps`] as number) * GIB * s.elapsed_time, tb[t].read_bytes, `tier_${t}_read_bandwidth_gbps`, 1e-9);
      expectClose((cs[`tier_${t}_write_bandwidth_gbps`] as number) * GIB * s.elapsed_time, tb[t].write_bytes, `tier_${t}_write_bandwidth_gbps`, 1e-9);
    }
    for (const t of ['gpu', 'cpu'] as const) {
      expect(tb[t].read_bytes + tb[t].write_bytes, `${t} tier moved no bytes`).toBe(0);
      expect(cs[`${t}_entries`]).toBe(0);
    }
    expect(tb.storage.write_bytes).toBeGreaterThan(0);
    expect(tb.storage.read_bytes).toBeGreaterThan(0);
    expect(cs.total_read_bytes).toBe(sum(TIERS.map((t) => tb[t].read_bytes)));
    expect(cs.total_write_bytes).toBe(sum(TIERS.map((t) => tb[t].write_bytes)));
    expectClose(cs.total_read_gb as number, (cs.total_read_bytes as number) / GIB, 'total_read_gb');
    expectClose(cs.total_write_gb as number, (cs.total_write_bytes as number) / GIB, 'total_write_gb');
    expectClose(cs.read_write_ratio as number, (cs.total_read_bytes as number) / (cs.total_write_bytes as number), 'read_write_ratio');
    expect(cs.read_iops).toBe(sum(TIERS.map((t) => tb[t].read_ops)));
    expect(cs.write_iops).toBe(sum(TIERS.map((t) => tb[t].write_ops)));
    expectClose(cs.storage_tokens_processed as number, (tb.storage.read_bytes + tb.storage.write_bytes) / kv.model.entry_bytes_per_token, 'storage_tokens_processed');
    expectClose(kv.primary.storage_read_bytes_per_sec * s.elapsed_time, tb.storage.read_bytes, 'primary storage read rate');
    // Storage-only: every prefill byte went to storage (plus the shared system-prompt entries).
    expect(tb.storage.write_bytes).toBeGreaterThanOrEqual(kv.primary.prefill_bytes_written);
    expect(tb.storage.read_bytes).toBeGreaterThanOrEqual(kv.primary.decode_bytes_read);
    // (Prefill and decode bytes count chunk by chunk: an entry in flight when the window closed
    // contributes the chunks it completed, so these need not be whole entries or whole tokens.)
    expect(kv.measured_window.closed_by).toBe('duration');
    expect(kv.measured_window.elapsed_ns).toBe(kv.elapsed_ns);
    expect(kv.elapsed_ns).toBeGreaterThanOrEqual(5e9);
    // The window closes at the deadline, not after the requests in flight have drained: late by at
    // most the scheduler's 50 ms tick and whatever stalled the engine's event loop (a loaded machine).
    expect(kv.elapsed_ns).toBeLessThan(5e9 + 0.2e9 + kv.engine_health.event_loop_lag_ns.max);
    expectClose((cs.prefill_bytes_written_gb as number) * GIB, kv.primary.prefill_bytes_written, 'prefill_bytes_written_gb × 1024³');
    expectClose((cs.decode_bytes_read_gb as number) * GIB, kv.primary.decode_bytes_read, 'decode_bytes_read_gb × 1024³');
    expect(kv.demotions).toEqual({});
    expect(cs.offloads_cpu).toBe(0);
    expect(cs.offloads_storage).toBe(tb.storage.write_ops);
    expect(cs.storage_entries).toBe(tb.storage.entries_at_end);
    expect(tb.storage.used_bytes_at_end).toBeLessThanOrEqual(kv.tiers.storage.budget_bytes);
    expect(cs.storage_read_p95_ms).toBeGreaterThan(0);
    expectClose(cs.storage_read_p95_ms as number, kv.latency.tier_read.storage!.p95_ns / 1e6, 'storage_read_p95_ms');
    expect(kv.latency.tier_read.storage!.count).toBe(tb.storage.read_ops);
    expect(kv.latency.tier_write.storage!.count).toBe(tb.storage.write_ops);

    // ---- hits ----
    const hits = cs.cache_hits as number;
    const misses = cs.cache_misses as number;
    expectClose(cs.cache_hit_rate as number, hits / (hits + misses), 'cache_hit_rate');
    // Every hit is a read served by some tier.
    expect(hits).toBe(cs.read_iops);
    expect(s.multi_turn_stats.cache_hits).toBe(res.multi_turn_cache_hits);
    expect(s.multi_turn_stats.cache_misses).toBe(res.multi_turn_cache_misses);
    expect(cs.multi_turn_hits).toBe(res.multi_turn_cache_hits);
    // The reference's prefix_cache_stats: per completed request, a system prompt detected (hit) or not (miss).
    const pcs = s.prefix_cache_stats;
    expect(pcs.prefix_hits + pcs.prefix_misses, 'prefix_hits + prefix_misses = requests completed').toBe(n);
    expect(pcs.prefix_misses, 'about 80 % of requests detect no system prompt').toBeGreaterThan(0);
    expect(pcs.system_prompt_reuse).toBe(pcs.prefix_hits);
    // bytes_saved: each detected prompt's KV bytes (the prompts are 5, 9 and 6 tokens).
    expect(pcs.bytes_saved % kv.model.bytes_per_token).toBe(0);
    expect(pcs.bytes_saved).toBeGreaterThanOrEqual(5 * kv.model.bytes_per_token * pcs.prefix_hits);
    expect(pcs.bytes_saved).toBeLessThanOrEqual(9 * kv.model.bytes_per_token * pcs.prefix_hits);
    // Whether the prompt's entry was cached is counted per lookup, apart: every detected request made
    // one, and a request cut off by the close may have made its lookup without completing.
    const spe = kv.cache.system_prompt_entries ?? { hits: 0, misses: 0, hit_rate: 0, bytes_saved: 0 };
    expect(spe.hits + spe.misses).toBeGreaterThanOrEqual(pcs.prefix_hits);
    expect(spe.hits + spe.misses).toBeLessThanOrEqual(pcs.prefix_hits + kv.measured_window.requests_in_flight_at_close + kv.requests_failed);
    expect(spe.misses, "each prompt's first lookup misses and writes it").toBeGreaterThanOrEqual(kv.cache.system_prompt_writes);
    if (spe.hits + spe.misses > 0) expectClose(spe.hit_rate, spe.hits / (spe.hits + spe.misses), 'system_prompt_entries.hit_rate');
    else expect(kv.cache.system_prompt_entries).toBeNull();
    const health = cs.storage_health as { criteria: { passed: boolean }[]; passed_count: number; total_count: number; overall_status: string };
    expect(health.total_count).toBe(health.criteria.length);
    expect(health.passed_count).toBe(health.criteria.filter((c) => c.passed).length);
    expect(health.overall_status).toBe(health.passed_count === health.total_count ? 'PASS' : 'FAIL');
    expectLatencyProfileHealth(res);

    // ---- timeline ----
    expect(kv.timeline.length, 'about one point per second of a 5 s run').toBeGreaterThanOrEqual(3);
    for (let i = 1; i < kv.timeline.length; i++) expect(kv.timeline[i].elapsed_ns).toBeGreaterThan(kv.timeline[i - 1].elapsed_ns);
    expect(kv.timeline.at(-1)!.requests_completed).toBe(n);
  });
});
