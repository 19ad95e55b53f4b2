// Every metric ingest stores, read from its own field: each file below gives every field ingest reads
// a value no other field has, and the whole metrics object is compared, so a metric read from a
// neighbouring field (the P95 for the P50, the read rate for the write rate) or in the wrong unit fails.
import { describe, expect, it } from 'vitest';
import { ResultsFileSchema, ResultsValuesSchema, extractMetrics, extractRamBacking } from '../../../src-main/store/results-ingest.ts';

const GIB = 1024 ** 3;

/** The schemas import checks a file against before it reads the metrics: the fixtures are files it accepts. */
function accepted<T>(results: T): T {
  expect(ResultsFileSchema.safeParse(results).success).toBe(true);
  expect(ResultsValuesSchema.safeParse(results).success).toBe(true);
  return results;
}

/** A latency summary in ns as kvbench.latency holds it, with only the P95 that ingest reads. */
const ns = (p95Ms: number) => ({ count: 7, p95_ns: p95Ms * 1e6, sum_ns: 1 });

/**
 * The fields both formats share, each with its own value from `base` (hit rates as thousandths of
 * it, kept within 0–1), and the metrics they give.
 */
function sharedFields(base: number) {
  // cache_stats keys stored under their own names.
  const cacheStats = {
    gpu_read_p95_ms: base + 14,
    gpu_write_p95_ms: base + 15,
    cpu_read_p95_ms: base + 16,
    cpu_write_p95_ms: base + 17,
    total_read_bytes: base + 22,
    total_write_bytes: base + 23,
    cache_hit_rate: (base + 61) / 1000,
  };
  return {
    summary: {
      avg_throughput_tokens_per_sec: base + 4,
      requests_per_second: base + 6,
      end_to_end_latency_ms: { p50: base + 8, p95: base + 9, p99: base + 10 },
      storage_io_latency_ms: { p50: base + 11, p95: base + 12, p99: base + 13 },
      multi_turn_stats: { hit_rate: (base + 62) / 1000 },
    },
    cacheStats,
    metrics: {
      ...cacheStats,
      wall_clock_throughput_tok_per_s: base + 4,
      requests_per_s: base + 6,
      e2e_p50_ms: base + 8,
      e2e_p95_ms: base + 9,
      e2e_p99_ms: base + 10,
      storage_io_per_request_p95_ms: base + 12,
      multi_turn_hit_rate: (base + 62) / 1000,
    },
  };
}

describe('extractMetrics: every stored metric from its own field', () => {
  it('a kvbench results file: the kvbench section\'s exact fields win over the reference\'s GiB and nvme_ ones', () => {
    const a = sharedFields(100);
    const results = accepted({
      requests_completed: 101,
      total_tokens_generated: 102,
      total_storage_io_latency: 103,
      summary: {
        ...a.summary,
        storage_throughput_tokens_per_sec: 105,
        cache_stats: {
          ...a.cacheStats,
          storage_read_p95_ms: 118,
          storage_write_p95_ms: 119,
          storage_read_device_p95_ms: 120,
          storage_write_device_p95_ms: 121,
          // The reference's names for the same numbers: ignored where the kvbench fields are there.
          nvme_read_p95_ms: 901,
          nvme_write_p95_ms: 902,
          nvme_read_device_p95_ms: 903,
          nvme_write_device_p95_ms: 904,
          tier_storage_kv_bytes_read_gb: 905,
          tier_storage_read_bandwidth_gbps: 906,
          tier_cpu_write_bandwidth_gbps: 907,
          decode_bytes_read_gb: 908,
          prefill_bytes_written_gb: 909,
        },
        autoscaling_summary: { final_users: 124, peak_user_count: 125, peak_throughput_tokens_per_sec: 126 },
      },
      kvbench: {
        // A summary without elapsed_time (the reference file below has it): the kvbench section's, in ns.
        elapsed_ns: 107e9,
        latency: {
          queue_wait: ns(127),
          tier_read: { storage: ns(911) },
          tier_read_ns_per_mib: { storage: ns(128) },
          tier_write_ns_per_mib: { storage: ns(129) },
        },
        tier_bytes: {
          gpu: { read_bytes: 130, write_bytes: 131 },
          cpu: { read_bytes: 132, write_bytes: 133, read_bytes_per_sec: 134, write_bytes_per_sec: 135 },
          storage: { read_bytes: 136, write_bytes: 137, read_bytes_per_sec: 138, write_bytes_per_sec: 139 },
        },
        primary: { decode_bytes_read: 140, prefill_bytes_written: 141 },
        tiers: { gpu: { h2d_copy_bandwidth_bytes_per_sec: 142, d2h_copy_bandwidth_bytes_per_sec: 143 }, storage: { ram_backed: true } },
        device_io: { read_bytes: 144, write_bytes: 145, read_coverage: 0.63, process_read_coverage: 0.64 },
        requests_failed: 146,
        engine_health: { event_loop_lag_ns: { p99: 147e6 }, peak_rss_bytes: 148 },
      },
    });
    expect(extractMetrics(results)).toEqual({
      ...a.metrics,
      requests_completed: 101,
      tokens_generated: 102,
      storage_throughput_tok_per_s: 105,
      elapsed_s: 107,
      storage_read_p95_ms: 118,
      storage_write_p95_ms: 119,
      storage_read_device_p95_ms: 120,
      storage_write_device_p95_ms: 121,
      autoscale_final_users: 124,
      autoscale_peak_users: 125,
      autoscale_peak_throughput_tok_per_s: 126,
      queue_wait_p95_ms: 127,
      storage_read_p95_ms_per_mib: 128,
      storage_write_p95_ms_per_mib: 129,
      gpu_read_bytes: 130,
      gpu_write_bytes: 131,
      cpu_read_bytes: 132,
      cpu_write_bytes: 133,
      cpu_read_bytes_per_s: 134,
      cpu_write_bytes_per_s: 135,
      storage_read_bytes: 136,
      storage_write_bytes: 137,
      storage_read_bytes_per_s: 138,
      storage_write_bytes_per_s: 139,
      decode_bytes_read: 140,
      prefill_bytes_written: 141,
      gpu_h2d_copy_bytes_per_s: 142,
      gpu_d2h_copy_bytes_per_s: 143,
      storage_ram_backed: 1,
      device_read_bytes: 144,
      device_write_bytes: 145,
      device_read_coverage: 0.63,
      process_read_coverage: 0.64,
      requests_failed: 146,
      event_loop_lag_p99_ms: 147,
      peak_rss_bytes: 148,
    });
  });

  it('a reference results file: the nvme_ names, GiB amounts and storage throughput from the raw totals', () => {
    const b = sharedFields(200);
    const results = accepted({
      requests_completed: 201,
      total_tokens_generated: 2020,
      total_storage_io_latency: 4,
      summary: {
        ...b.summary,
        elapsed_time: 207,
        cache_stats: {
          ...b.cacheStats,
          nvme_read_p95_ms: 218,
          nvme_write_p95_ms: 219,
          nvme_read_device_p95_ms: 220,
          nvme_write_device_p95_ms: 221,
          ...Object.fromEntries(
            (['gpu', 'cpu', 'storage'] as const).flatMap((t, i) => [
              [`tier_${t}_kv_bytes_read_gb`, 230 + 4 * i],
              [`tier_${t}_kv_bytes_written_gb`, 231 + 4 * i],
              [`tier_${t}_read_bandwidth_gbps`, 232 + 4 * i],
              [`tier_${t}_write_bandwidth_gbps`, 233 + 4 * i],
            ]),
          ),
          decode_bytes_read_gb: 242,
          prefill_bytes_written_gb: 243,
        },
      },
    });
    expect(extractMetrics(results)).toEqual({
      ...b.metrics,
      requests_completed: 201,
      tokens_generated: 2020,
      // The reference's own rule, where its summary lacks the key: tokens ÷ storage seconds.
      storage_throughput_tok_per_s: 2020 / 4,
      elapsed_s: 207,
      storage_read_p95_ms: 218,
      storage_write_p95_ms: 219,
      storage_read_device_p95_ms: 220,
      storage_write_device_p95_ms: 221,
      gpu_read_bytes: 230 * GIB,
      gpu_write_bytes: 231 * GIB,
      cpu_read_bytes: 234 * GIB,
      cpu_write_bytes: 235 * GIB,
      cpu_read_bytes_per_s: 236 * GIB,
      cpu_write_bytes_per_s: 237 * GIB,
      storage_read_bytes: 238 * GIB,
      storage_write_bytes: 239 * GIB,
      storage_read_bytes_per_s: 240 * GIB,
      storage_write_bytes_per_s: 241 * GIB,
      decode_bytes_read: 242 * GIB,
      prefill_bytes_written: 243 * GIB,
    });
  });

  it('a merged multi-host file: latencies from kvbench_merge.histograms, failed requests from its counts', () => {
    const results = accepted({
      requests_completed: 301,
      total_tokens_generated: 302,
      summary: { cache_stats: {} },
      kvbench_merge: {
        version: '0.2.0',
        counts: { requests_failed: 303 },
        histograms: {
          queue_wait: ns(304),
          tier_read: { gpu: ns(305), cpu: ns(306), storage: ns(307) },
          tier_write: { gpu: ns(308), cpu: ns(309), storage: ns(310) },
          tier_read_ns_per_mib: { storage: ns(311) },
          tier_write_ns_per_mib: { storage: ns(312) },
        },
      },
    });
    expect(extractMetrics(results)).toEqual({
      requests_completed: 301,
      tokens_generated: 302,
      requests_failed: 303,
      queue_wait_p95_ms: 304,
      gpu_read_p95_ms: 305,
      cpu_read_p95_ms: 306,
      storage_read_p95_ms: 307,
      gpu_write_p95_ms: 308,
      cpu_write_p95_ms: 309,
      storage_write_p95_ms: 310,
      storage_read_p95_ms_per_mib: 311,
      storage_write_p95_ms_per_mib: 312,
    });
  });
});

describe('extractRamBacking: what held a RAM-backed cache directory in memory, as the file says it', () => {
  const withStorage = (storage: Record<string, unknown>) => ({ requests_completed: 1, total_tokens_generated: 1, kvbench: { version: '0.6.0', tiers: { storage } } });

  it("the chain of devices; a file written before it was kept, its shorter words; nothing when it was not RAM-backed", () => {
    expect(extractRamBacking(accepted(withStorage({ ram_backed: true, ram_filesystem: 'loop0 on tmpfs', ram_backing_chain: 'loop0 → /dev/shm/d.img on tmpfs' })))).toBe('loop0 → /dev/shm/d.img on tmpfs');
    expect(extractRamBacking(accepted(withStorage({ ram_backed: true, ram_filesystem: 'loop0 on tmpfs' })))).toBe('loop0 on tmpfs');
    expect(extractRamBacking(accepted(withStorage({ ram_backed: true, ram_filesystem: null, ram_backing_chain: null })))).toBeNull();
    expect(extractRamBacking(accepted(withStorage({ ram_backed: false, ram_filesystem: null, ram_backing_chain: null })))).toBeNull();
    // A backing beside no flag is not stored: the caution goes by the flag, which says there was none.
    expect(extractRamBacking(accepted(withStorage({ ram_filesystem: 'tmpfs', ram_backing_chain: 'tmpfs' })))).toBeNull();
    expect(extractRamBacking({ requests_completed: 1, total_tokens_generated: 1 })).toBeNull();
  });

  it('a buffered loop device under the cache directory is kept as storage_buffered_loop: 1 with loops listed, 0 with none, absent in older files', () => {
    const metric = (storage: Record<string, unknown>) => extractMetrics(accepted(withStorage(storage))).storage_buffered_loop;
    expect(metric({ ram_backed: false, buffered_loops: [{ name: 'loop0', backing_file: '/var/tmp/x.img', backing_filesystem: 'ext4' }] })).toBe(1);
    expect(metric({ ram_backed: false, buffered_loops: [] })).toBe(0);
    expect(metric({ ram_backed: false })).toBeUndefined();
    expect(ResultsValuesSchema.safeParse(withStorage({ buffered_loops: 'loop0' })).success).toBe(false);
  });

  it('a file whose backing is no text is refused, not stored with a number for a description', () => {
    expect(ResultsValuesSchema.safeParse(withStorage({ ram_backed: true, ram_backing_chain: 42 })).success).toBe(false);
    expect(ResultsValuesSchema.safeParse(withStorage({ ram_backed: true, ram_filesystem: ['tmpfs'] })).success).toBe(false);
  });
});
