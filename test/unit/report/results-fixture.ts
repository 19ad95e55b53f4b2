/**
 * A realistic RunResults for the report tests: a 60 s llama3.1-8b run with CPU + storage tiers,
 * no GPU tier, latency profile, QoS data for two levels. Numbers are self-consistent where the
 * tests depend on it (GiB values = bytes / 1024^3, bandwidth = bytes / elapsed).
 */

import type {
  LatencySummaryNs,
  RunResults,
  RunSummary,
  StorageHealth,
  TierBytes,
} from '../../../src-shared/domain/results.ts';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
export const FIXTURE_ELAPSED_S = 60;
export const FIXTURE_DIGEST = '0123456789abcdeffedcba98765432100123456789abcdeffedcba9876543210';

export function latencyNs(p50Ms: number, p95Ms: number, count = 1000): LatencySummaryNs {
  return {
    count,
    mean_ns: p50Ms * 1.1e6,
    min_ns: p50Ms * 0.2e6,
    max_ns: p95Ms * 3e6,
    p50_ns: p50Ms * 1e6,
    p95_ns: p95Ms * 1e6,
    p99_ns: p95Ms * 1.5e6,
    p999_ns: p95Ms * 2e6,
    p9999_ns: p95Ms * 2.5e6,
    sum_ns: p50Ms * 1.1e6 * count,
    hdr: 'HISTFAAAAB94nJNpmSzMwMDAxAABzFCaEUrDwEAAAwNsAeY=',
  };
}

function tierBytes(readBytes: number, writeBytes: number, extra: Partial<TierBytes> = {}): TierBytes {
  return {
    read_bytes: readBytes,
    write_bytes: writeBytes,
    read_ops: Math.round(readBytes / (64 * MIB)),
    write_ops: Math.round(writeBytes / (64 * MIB)),
    read_bytes_per_sec: readBytes / FIXTURE_ELAPSED_S,
    write_bytes_per_sec: writeBytes / FIXTURE_ELAPSED_S,
    demoted_in_bytes: 0,
    demoted_out_bytes: 0,
    hit_read_bytes: readBytes,
    evicted_entries: 0,
    evicted_bytes: 0,
    entries_at_end: 0,
    used_bytes_at_end: 0,
    ...extra,
  };
}

export function makeStorageHealth(overall: 'PASS' | 'FAIL' = 'PASS'): StorageHealth {
  return {
    overall_status: overall,
    criteria: [
      { name: 'Storage Tier Write Device P95 < 500ms', target: 500, actual: 123.456, unit: 'ms', passed: true },
      { name: 'Storage Tier Read Device P95 < 200ms', target: 200, actual: 87.5, unit: 'ms', passed: true },
      { name: 'CPU RAM P95 < 150ms', target: 150, actual: 12.3, unit: 'ms', passed: true },
      {
        name: 'Cache Hit Rate > 30%',
        target: 0.3,
        actual: overall === 'PASS' ? 0.6534 : 0.12,
        unit: 'ratio',
        passed: overall === 'PASS',
      },
    ],
    passed_count: overall === 'PASS' ? 4 : 3,
    total_count: 4,
    note: 'kvbench tool criteria, not an MLPerf rule',
  };
}

export function makeSummary(): RunSummary {
  const storageReadBytes = 40 * GIB;
  const storageWriteBytes = 25 * GIB;
  const cpuReadBytes = 30 * GIB;
  const cpuWriteBytes = 20 * GIB;
  return {
    total_requests: 1200,
    total_tokens: 180000,
    elapsed_time: FIXTURE_ELAPSED_S,
    avg_throughput_tokens_per_sec: 3000,
    total_storage_io_time: 95.5,
    storage_throughput_tokens_per_sec: 1884.816753926702,
    requests_per_second: 20,
    end_to_end_latency_ms: { mean: 812.5, p50: 700.25, p95: 1500.75, p99: 2100.5, p999: 2500, p9999: 2600 },
    storage_io_latency_ms: { mean: 79.6, p50: 60.1, p95: 210.2, p99: 300.3, p999: 350, p9999: 360 },
    generation_latency_ms: { mean: 600, p50: 550, p95: 1200, p99: 1400, p999: 1450, p9999: 1490 },
    cache_stats: {
      cache_hit_rate: 0.6534,
      cache_hits: 6534,
      cache_misses: 3466,
      gpu_entries: 0,
      cpu_entries: 120,
      storage_entries: 800,
      gpu_memory_used_gb: 0,
      cpu_memory_used_gb: 7.5,
      offloads_cpu: 400,
      offloads_storage: 900,
      storage_health: makeStorageHealth('PASS'),
      prefill_writes: 1300,
      decode_reads: 9000,
      tier_gpu_kv_bytes_written_gb: 0,
      tier_cpu_kv_bytes_written_gb: cpuWriteBytes / GIB,
      tier_storage_kv_bytes_written_gb: storageWriteBytes / GIB,
      tier_gpu_kv_bytes_read_gb: 0,
      tier_cpu_kv_bytes_read_gb: cpuReadBytes / GIB,
      tier_storage_kv_bytes_read_gb: storageReadBytes / GIB,
      tier_gpu_read_bandwidth_gbps: 0,
      tier_gpu_write_bandwidth_gbps: 0,
      tier_cpu_read_bandwidth_gbps: cpuReadBytes / GIB / FIXTURE_ELAPSED_S,
      tier_cpu_write_bandwidth_gbps: cpuWriteBytes / GIB / FIXTURE_ELAPSED_S,
      tier_storage_read_bandwidth_gbps: storageReadBytes / GIB / FIXTURE_ELAPSED_S,
      tier_storage_write_bandwidth_gbps: storageWriteBytes / GIB / FIXTURE_ELAPSED_S,
      system_prompt_hits: 10,
      common_phrase_hits: 0,
      user_cache_hits: 5000,
      multi_turn_hits: 1524,
      total_read_bytes: storageReadBytes + cpuReadBytes,
      total_write_bytes: storageWriteBytes + cpuWriteBytes,
      total_read_gb: (storageReadBytes + cpuReadBytes) / GIB,
      total_write_gb: (storageWriteBytes + cpuWriteBytes) / GIB,
      read_write_ratio: (storageReadBytes + cpuReadBytes) / (storageWriteBytes + cpuWriteBytes),
      read_iops: 9000,
      write_iops: 1300,
      storage_tokens_processed: 123456,
      cpu_read_p50_ms: 2.1,
      cpu_read_p95_ms: 9.9,
      cpu_write_p50_ms: 3.2,
      cpu_write_p95_ms: 12.3,
      storage_read_p50_ms: 40.5,
      storage_read_p95_ms: 95.25,
      storage_read_p99_ms: 120,
      storage_read_p999_ms: 150,
      storage_read_p9999_ms: 160,
      storage_write_p50_ms: 60,
      storage_write_p95_ms: 140.75,
      storage_write_p99_ms: 170,
      storage_write_p999_ms: 190,
      storage_write_p9999_ms: 199,
      storage_read_device_p50_ms: 35,
      storage_read_device_p95_ms: 87.5,
      storage_read_device_p99_ms: 110,
      storage_read_device_p999_ms: 140,
      storage_read_device_p9999_ms: 150,
      storage_read_host_p50_ms: 5,
      storage_read_host_p95_ms: 8.25,
      storage_read_host_p99_ms: 10,
      storage_read_host_p999_ms: 11,
      storage_read_host_p9999_ms: 12,
      storage_write_device_p50_ms: 50,
      storage_write_device_p95_ms: 123.456,
      storage_write_device_p99_ms: 150,
      storage_write_device_p999_ms: 170,
      storage_write_device_p9999_ms: 180,
      storage_write_host_p50_ms: 10,
      storage_write_host_p95_ms: 17.3,
      storage_write_host_p99_ms: 20,
      storage_write_host_p999_ms: 21,
      storage_write_host_p9999_ms: 22,
    },
    qos_metrics: {
      interactive: {
        total_requests: 180,
        latency_ms: { mean: 500, p50: 450, p95: 900.5, p99: 1200.25, max: 1500 },
        sla: { target_p95_ms: 50, actual_p95_ms: 900.5, compliance: 0.1234, met: false },
      },
      responsive: {
        total_requests: 420,
        latency_ms: { mean: 600, p50: 550, p95: 1000, p99: 1300, max: 1600 },
        sla: { target_p95_ms: 100, actual_p95_ms: 1000, compliance: 0.2, met: false },
      },
      batch: { no_data: true },
    },
    prefix_cache_stats: {
      prefix_hits: 240,
      prefix_misses: 960,
      system_prompt_reuse: 240,
      common_phrase_reuse: 0,
      bytes_saved: 2 * GIB,
    },
    autoscaling_stats: [],
    autoscaling_summary: null,
    multi_turn_stats: { cache_hits: 1524, cache_misses: 476, hit_rate: 0.762 },
  };
}

export interface FixtureOptions {
  withSummary?: boolean;
  status?: RunResults['kvbench']['status'];
  statusReason?: string | null;
  directIo?: boolean;
  /** Turns data verification on with this many corrupt chunks (and as many failure records). */
  corruptChunks?: number;
  /** What the device read during the run (default: the storage tier's 40 GiB plus 1 %; less flags the run). */
  deviceReadBytes?: number;
}

export function makeRunResults(opts: FixtureOptions = {}): RunResults {
  const withSummary = opts.withSummary ?? true;
  const directIo = opts.directIo ?? true;
  const storageReadBytes = 40 * GIB;
  const deviceReadBytes = opts.deviceReadBytes ?? Math.round(storageReadBytes * 1.01);
  const readCoverage = deviceReadBytes / storageReadBytes;
  const deviceFlagged = readCoverage < 0.95;
  const summary = withSummary ? makeSummary() : undefined;
  return {
    requests_completed: withSummary ? 1200 : 0,
    total_tokens_generated: withSummary ? 180000 : 0,
    total_storage_io_latency: withSummary ? 95.5 : 0,
    total_generation_latency: withSummary ? 720 : 0,
    end_to_end_latencies: withSummary ? [0.7, 0.8, 1.5] : [],
    storage_latencies: withSummary ? [0.06, 0.07, 0.2] : [],
    generation_latencies: withSummary ? [0.55, 0.6, 1.2] : [],
    throughput_timeline: [],
    prefill_latencies: withSummary ? [0.05] : [],
    decode_latencies: withSummary ? [0.02] : [],
    multi_turn_cache_hits: withSummary ? 1524 : 0,
    multi_turn_cache_misses: withSummary ? 476 : 0,
    seed: 42,
    ...(summary ? { summary } : {}),
    kvbench: {
      version: '0.1.0',
      status: opts.status ?? 'complete',
      status_reason: opts.statusReason ?? null,
      effective_seed: 42,
      request_stream_digest: FIXTURE_DIGEST,
      requests_issued: 1250,
      requests_failed: 3,
      started_at: '2026-03-01T12:00:00.000Z',
      rank: null,
      elapsed_ns: 60_012_345_678,
      model: { key: 'llama3.1-8b', bytes_per_token: 131072, tensor_parallel: 1, entry_bytes_per_token: 131072 },
      tiers: {
        gpu: { present: false, budget_bytes: 0, reason: 'no CUDA device' },
        cpu: { present: true, budget_bytes: 32 * GIB, reason: null, peak_held_bytes: 30 * GIB },
        storage: {
          present: true,
          budget_bytes: 500 * GIB,
          reason: null,
          dir: '/mnt/nvme/kvbench',
          direct_io: directIo,
          direct_io_reason: directIo ? null : 'O_DIRECT not supported by tmpfs',
          fsync_policy: 'per-entry',
          ram_backed: false,
          ram_filesystem: null,
          ram_backing_chain: null,
          reads_may_hit_page_cache: !directIo || deviceFlagged,
        },
      },
      preparation: { rag_ingestion: null, decode_only_prepopulation: null, precondition: null },
      measured_window: {
        planned_ns: 60_000_000_000,
        warm_up_ns: 0,
        started_unix_ns: Date.parse('2026-03-01T12:00:00.000Z') * 1e6,
        elapsed_ns: 60_012_345_678,
        closed_by: 'duration',
        requests_in_flight_at_close: 12,
        requests_queued_at_close: 40,
        drain_ns: 350_000_000,
      },
      efficiency: null,
      device_io: {
        available: true,
        reason: null,
        device: 'nvme0n1p1',
        parent_device: 'nvme0n1',
        read_bytes: deviceReadBytes,
        write_bytes: 25 * GIB + 64 * MIB,
        read_ios: 2_600_000,
        write_ios: 1_700_000,
        flushes: 4_000,
        busy_ratio: 0.97,
        avg_queue_depth: 14.2,
        read_coverage: readCoverage,
        write_coverage: (25 * GIB + 64 * MIB) / (25 * GIB),
        process_read_bytes: deviceReadBytes - 8 * MIB,
        process_read_coverage: (deviceReadBytes - 8 * MIB) / storageReadBytes,
        min_read_coverage: 0.95,
        flagged: deviceFlagged,
        flag_reason: deviceFlagged ? `the device (nvme0n1p1) read ${(readCoverage * 100).toFixed(1)} % of the ${storageReadBytes} bytes the storage tier reported reading, buffered I/O: the page cache served the rest` : null,
      },
      tier_bytes: {
        gpu: tierBytes(0, 0),
        cpu: tierBytes(30 * GIB, 20 * GIB, {
          demoted_out_bytes: 5 * GIB,
          hit_read_bytes: 25 * GIB,
          entries_at_end: 120,
          used_bytes_at_end: 7.5 * GIB,
        }),
        storage: tierBytes(storageReadBytes, 25 * GIB, {
          demoted_in_bytes: 5 * GIB,
          evicted_entries: 3,
          evicted_bytes: 192 * MIB,
          entries_at_end: 800,
          used_bytes_at_end: 50 * GIB,
        }),
      },
      primary: {
        decode_bytes_read: 60 * GIB,
        prefill_bytes_written: 40 * GIB,
        wall_clock_throughput_tokens_per_sec: 2999.38,
        storage_read_bytes_per_sec: 1_500_000_000,
        storage_write_bytes_per_sec: 450_000_000,
      },
      latency: {
        end_to_end: latencyNs(700, 1500, 1200),
        queue_wait: latencyNs(12.5, 80.25, 1200),
        storage_io_per_request: latencyNs(60, 210, 1200),
        generation: latencyNs(550, 1200, 1200),
        prefill: latencyNs(50, 140, 1300),
        decode: latencyNs(20, 90, 9000),
        tier_read: { cpu: latencyNs(2.1, 9.9), storage: latencyNs(40.5, 95.25) },
        tier_write: { cpu: latencyNs(3.2, 12.3), storage: latencyNs(60, 140.75) },
        tier_read_ns_per_mib: { cpu: latencyNs(0.05, 0.2), storage: latencyNs(0.6, 1.4) },
        tier_write_ns_per_mib: { cpu: latencyNs(0.07, 0.3), storage: latencyNs(0.9, 2.1) },
        demotion: { 'cpu->storage': latencyNs(70, 160, 80) },
      },
      demotions: { 'cpu->storage': { count: 80, bytes: 5 * GIB } },
      cache: { placement_failures: 0, system_prompt_writes: 0, system_prompt_entries: null, prefix_blocks: null,
      rag: null },
      verification: {
        enabled: opts.corruptChunks !== undefined,
        corrupt_chunks: opts.corruptChunks ?? 0,
        failures: Array.from({ length: opts.corruptChunks ?? 0 }, (_, i) => ({
          key: `user_0001_req_00000${i}`,
          tier: 'storage' as const,
          offset_bytes: i * 4096,
        })),
      },
      config_keys_not_applied: [],
    run_options: {},
    promotion: { policy: 'none', moves: {}, failures: 0, first_failure: null },
    workload_source: { kind: 'synthetic' },
    autoscaling_timeline: null,
    queue: { max_depth: 37 },
      engine_health: {
        event_loop_lag_ns: { p50: 150_000, p99: 4_560_000, max: 12_000_000 },
        byte_workers: { threads: 4, utilisation: 0.456 },
        io_depth: 8,
        io_chunk_bytes: 4 * MIB,
        uv_threadpool_size: 16,
        peak_rss_bytes: 3 * GIB,
      },
      timeline: [
        {
          elapsed_ns: 1e9,
          interval_ns: 1e9,
          requests_completed: 20,
          generated_tokens_per_sec: 3000,
          requests_per_sec: 20,
          storage_read_bytes_per_sec: 1.5e9,
          storage_write_bytes_per_sec: 4.5e8,
          cpu_read_bytes_per_sec: 5e8,
          cpu_write_bytes_per_sec: 3e8,
          active_users: 100,
          queue_depth: 3,
          e2e_latency_p95_to_date_ns: 1.5e9,
          storage_read_p95_to_date_ns: 9.5e7,
        },
      ],
      units: 'bytes, nanoseconds, bytes per second',
    },
  };
}

export const FIXTURE_RUN_PARAMS: Record<string, string | number | boolean | null> = {
  Timestamp: '2026-03-01 12:01:00',
  Model: 'llama3.1-8b',
  'Num Users': 100,
  'Duration (s)': 60,
  'GPU Memory per Card (GiB)': 16,
  'Num GPUs': 1,
  'Tensor Parallel': 1,
  'Total GPU Memory (GiB)': 16,
  'CPU Memory (GiB)': 32,
  'Generation Mode': 'realistic',
  'Performance Profile': 'latency',
  'Multi-turn': true,
  'Prefix Caching': true,
  'RAG Enabled': false,
  Autoscaling: false,
  Seed: 42,
  'Max Concurrent Allocs': 0,
  'Request Rate': 0,
  'Max Requests': 0,
  'Dataset Path': 'N/A',
  'Cache Dir': '/mnt/nvme/kvbench',
  'Storage Capacity (GiB)': 0,
  Precondition: false,
  'Precondition Size (GiB)': 0,
  'Precondition Threads': 16,
  'Trace Speedup': 1,
  'Replay Cycles': 0,
};
