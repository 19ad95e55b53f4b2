/**
 * Shape of the results JSON that `kvbench run --output` writes.
 *
 * The top level and `summary` carry the reference benchmark's keys with the reference's meanings and
 * units (seconds in the raw per-request lists, milliseconds in `summary`, "GB" meaning GiB), so existing
 * MLPerf KV-cache tooling reads our files. The `kvbench` section beside them holds our own metrics in
 * plain bytes and nanoseconds, with names that say exactly what they measure.
 */

import type { TierName } from './tiers.ts';

export type TrialStatus = 'complete' | 'partial' | 'failed' | 'aborted';

/**
 * An amount (tokens, bytes, requests) per second of `elapsedNs`: the one rule of the results'
 * run-average rates, each the amount ÷ its window's seconds (the measured window's: wall-clock
 * throughput, requests per second, a tier's read/write bandwidth, the storage-health bandwidths;
 * the timeline's tokens so far ÷ the seconds so far; a preparation phase's bytes ÷ its own), which
 * the live views apply to a progress event's cumulative counts so they show what the trial will
 * store. Null before any time has passed (the results write 0 there).
 */
export function perSecondOver(amount: number, elapsedNs: number): number | null {
  return elapsedNs > 0 ? amount / (elapsedNs / 1e9) : null;
}

export interface PercentilesMs {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  p999: number;
  p9999: number;
}

export interface LatencySummaryNs {
  count: number;
  mean_ns: number;
  min_ns: number;
  max_ns: number;
  p50_ns: number;
  p95_ns: number;
  p99_ns: number;
  p999_ns: number;
  p9999_ns: number;
  /** Sum of all samples, exact (not from the histogram). */
  sum_ns: number;
  /** HdrHistogram V2 compressed base64: merge trials by decoding, never by averaging percentiles. */
  hdr: string;
}

export interface StorageHealthCriterion {
  name: string;
  target: number | string;
  actual: number | string;
  unit: string;
  passed: boolean;
  /** kvbench: why the criterion's number may not be the device's (reads served by the page cache). */
  caveat?: string;
}

export interface StorageHealth {
  /**
   * 'N/A' (kvbench): nothing to judge, no criteria (trace-only mode moves no bytes); the key stays so
   * readers of the reference's results still find it, and anything but 'PASS' is no pass.
   */
  overall_status: 'PASS' | 'FAIL' | 'N/A';
  criteria: StorageHealthCriterion[];
  passed_count: number;
  total_count: number;
  /** kvbench: these criteria are a tool feature, not an MLPerf rule. */
  note: string;
  /** kvbench: why the run was not assessed; present only with 'N/A'. */
  not_assessed_reason?: string;
}

export interface QosLevelMetrics {
  total_requests: number;
  latency_ms: { mean: number; p50: number; p95: number; p99: number; max: number };
  sla: { target_p95_ms: number; actual_p95_ms: number; compliance: number; met: boolean };
}

/** The storage tier's bandwidth ÷ the limit `kvbench probe` measured (1 = the device's sequential limit). */
export interface EfficiencySection {
  probe_file: string;
  probe_dir: string;
  probe_device: string | null;
  probed_at: string;
  read_limit_bytes_per_sec: number | null;
  write_limit_bytes_per_sec: number | null;
  /** null: the run moved no bytes that way, or the probe has no limit for it. */
  storage_read_efficiency: number | null;
  storage_write_efficiency: number | null;
  /** Both directions against the time-weighted limit of the run's own mix. */
  storage_mixed_efficiency: number | null;
  /** Why the comparison may be off (another device, another chunk size or depth). */
  notes: string[];
}

export interface TierBytes {
  read_bytes: number;
  write_bytes: number;
  read_ops: number;
  write_ops: number;
  /** Bytes ÷ elapsed wall-clock seconds of the measured phase (perSecondOver). */
  read_bytes_per_sec: number;
  write_bytes_per_sec: number;
  /** Of write_bytes, those demotions wrote into the tier, chunk by chunk in the window (one in flight at the close counts its chunks). */
  demoted_in_bytes: number;
  /** Of read_bytes, those demotions read out of the tier, chunk by chunk in the window. */
  demoted_out_bytes: number;
  /**
   * Of read_bytes, those requests read: the tier's hits, every move between tiers (demotions,
   * promotions) left out, counted as read_bytes is. The tiers' sum is summary.cache_stats.total_read_bytes.
   * Absent from results of kvbench 0.8.0 and before.
   */
  hit_read_bytes: number;
  evicted_entries: number;
  evicted_bytes: number;
  entries_at_end: number;
  used_bytes_at_end: number;
}

export interface TierDescription {
  present: boolean;
  budget_bytes: number;
  reason: string | null;
}

/** The GPU tier; the device fields are present when a GPU tier was opened. */
export interface GpuTierDescription extends TierDescription {
  requested_bytes?: number;
  devices?: { index: number; model: string; total_memory_bytes: number; pci_bus_id: string | null; reserved_bytes: number; shortfall: string | null }[];
  driver_version?: string | null;
  cuda_version?: string;
  driver_library?: string;
  staging_pinned?: boolean;
  staging_reason?: string | null;
  staging_bytes?: number;
  /** Staging buffers of chunk_bytes each: the most chunks in flight through the tier at once. */
  staging_slots?: number;
  /** Chunks that took a staging slot in the measured window; of them, those that found none free and waited. */
  staging_slot_acquisitions?: number;
  staging_slot_waits?: number;
  /** Those waits summed over chunks (chunks wait side by side: not wall-clock time), and the longest. */
  staging_slot_wait_ns?: number;
  staging_slot_max_wait_ns?: number;
  copy_threads?: number;
  chunk_bytes?: number;
  /** Host→device copies from pinned staging. */
  h2d_copy_bytes?: number;
  h2d_copies?: number;
  /** = h2d_per_copy_bytes_per_sec (its older name). */
  h2d_copy_bandwidth_bytes_per_sec?: number | null;
  /** Bytes ÷ summed copy time: what one copy achieves (copies in flight together share the link, each slower). */
  h2d_per_copy_bytes_per_sec?: number | null;
  /** Time with at least one host→device copy in flight. */
  h2d_busy_ns?: number;
  /** Bytes ÷ h2d_busy_ns: what the link carried while kept busy (compare this with torch's pinned copies). */
  h2d_link_busy_bytes_per_sec?: number | null;
  /** Every device→host copy (staging and demotions), demotions included (their older definition); bandwidth per copy. */
  d2h_copy_bytes?: number;
  d2h_copies?: number;
  d2h_copy_bandwidth_bytes_per_sec?: number | null;
  /** Device→host copies into pinned staging (reads) only. */
  d2h_staging_copy_bytes?: number;
  d2h_staging_copies?: number;
  d2h_staging_per_copy_bytes_per_sec?: number | null;
  d2h_staging_busy_ns?: number;
  /** Bytes ÷ d2h_staging_busy_ns (compare this with torch's pinned copies). */
  d2h_staging_link_busy_bytes_per_sec?: number | null;
  /** Device→host copies straight into the tier below's (pageable) buffer during demotions. */
  demotion_d2h_copy_bytes?: number;
  demotion_d2h_copies?: number;
  demotion_d2h_per_copy_bytes_per_sec?: number | null;
  demotion_d2h_busy_ns?: number;
  demotion_d2h_link_busy_bytes_per_sec?: number | null;
}

/** The CPU tier; `peak_held_bytes` is null when no CPU memory was allocated (absent, or trace-only mode). */
export interface CpuTierDescription extends TierDescription {
  /** The most RAM the tier held at once: the part of its arena ever used, plus any overflow chunks. */
  peak_held_bytes: number | null;
  /** The tier's arena (its budget plus an eighth, at least two chunks); absent from results of kvbench 0.7.0 and before. */
  arena_bytes?: number | null;
  /** Chunks that found no room in the arena (fragmentation) and got a buffer of their own; absent from results of kvbench 0.7.0 and before. */
  arena_overflow_chunks?: number | null;
}

export interface StorageTierDescription extends TierDescription {
  /** Free space of the cache directory's file system when the run began (budget_bytes is a share of it unless --storage-capacity-gb). */
  free_bytes_at_start?: number;
  dir: string | null;
  direct_io: boolean;
  direct_io_reason: string | null;
  fsync_policy: 'per-entry' | 'none';
  /**
   * True when the storage tier's files were in RAM (--cache-dir on tmpfs or ramfs, from statfs, or on a
   * loop device whose file is on one or on a RAM disk):
   * its reads and writes measured memory, not a drive, whatever direct I/O says. Absent in results
   * written by earlier kvbench builds.
   */
  ram_backed?: boolean;
  /** What held it in RAM ('tmpfs', 'ramfs', 'loop0 on tmpfs', 'loop0 on RAM disk zram0'), or null. */
  ram_filesystem?: string | null;
  /**
   * The same, as every device and file between the cache directory and that RAM, so a reader of the
   * trial knows exactly what was measured: 'tmpfs', 'zram0', 'loop0 → /dev/shm/d.img on tmpfs',
   * 'loop2 → /mnt/z/d.img on ext4 → zram0'. Null when not RAM-backed; absent in results written
   * before kvbench kept it.
   */
  ram_backing_chain?: string | null;
  /**
   * Loop devices between the cache directory and the drive that read and write their backing file
   * through the host's page cache (loop/dio 0, losetup's default): O_DIRECT on the loop's filesystem
   * does not keep that cache out. Empty when none did, when the directory was RAM-backed (that says
   * more) and in trace-only mode; absent in results written before kvbench looked.
   */
  buffered_loops?: { name: string; backing_file: string; backing_filesystem: string | null }[];
  /**
   * True when reads may have been served by the page cache or other RAM: buffered I/O, the device
   * read less than the tier did (`device_io.flagged`), a RAM-backed filesystem (`ram_backed`), or a
   * buffered loop device under the directory (`buffered_loops`). False in trace-only mode, which reads
   * nothing at all.
   */
  reads_may_hit_page_cache: boolean;
}

/**
 * What the block device behind the cache directory moved during the measured phase
 * (/proc/diskstats), beside what the storage tier says it moved. The device's counters include every
 * process's I/O on it, so coverage above 1 is normal; below MIN coverage, reads came from somewhere
 * other than the device (the page cache) and the run is flagged.
 */
export interface DeviceIoSection {
  available: boolean;
  /** Why there are no device counters (a tmpfs or network filesystem, not Linux, trace-only mode). */
  reason: string | null;
  /**
   * The name /proc/diskstats uses: `nvme0n1p2`, `vda`, `loop3`. Below a loop device whose backing file
   * is on a block device, that device (`via` names the loop): the one whose reads show the drive's work.
   */
  device: string | null;
  /** The whole disk under a partition, whose counters also include its other partitions. */
  parent_device: string | null;
  /**
   * The device the cache directory's filesystem is on, when the bytes reach `device` through it: a
   * loop device (or dm on loops) whose backing file is on `device`. Its counters count every byte the
   * filesystem asked of it, served by the drive or by the host's page cache alike, so the coverage is
   * `device`'s; these are context. Null otherwise; absent in results written before kvbench followed loops.
   */
  via?: { device: string; read_bytes: number | null; write_bytes: number | null; read_ios: number | null; write_ios: number | null } | null;
  read_bytes: number | null;
  write_bytes: number | null;
  read_ios: number | null;
  write_ios: number | null;
  flushes: number | null;
  /** Share of the measured phase the device had at least one I/O in flight (iostat's %util ÷ 100). */
  busy_ratio: number | null;
  /** Σ(requests in flight × time) ÷ time (iostat's aqu-sz). */
  avg_queue_depth: number | null;
  /** Device read bytes ÷ storage-tier read bytes; null when the tier read nothing or no counters. */
  read_coverage: number | null;
  write_coverage: number | null;
  /**
   * Bytes this process made the block layer read during the measured phase (/proc/self/io
   * read_bytes): its own device reads only, page-cache hits excluded; null where unreadable.
   */
  process_read_bytes: number | null;
  /** process_read_bytes ÷ storage-tier read bytes: what clears buffered reads as the device's. */
  process_read_coverage: number | null;
  /** The minimum read coverage for the storage reads to count as served by the device. */
  min_read_coverage: number;
  /** True when the storage tier's reads were not (all) served by the device: storage read numbers describe a cache. */
  flagged: boolean;
  flag_reason: string | null;
}

/** A preparatory phase before the measured one: its writes go through the normal path but are not in the measured statistics. */
export interface PreparationPhase {
  entries: number;
  bytes_written: number;
  elapsed_ns: number;
  write_bytes_per_sec: number;
}

export interface TimelinePoint {
  elapsed_ns: number;
  interval_ns: number;
  requests_completed: number;
  generated_tokens_per_sec: number;
  requests_per_sec: number;
  storage_read_bytes_per_sec: number;
  storage_write_bytes_per_sec: number;
  cpu_read_bytes_per_sec: number;
  cpu_write_bytes_per_sec: number;
  active_users: number;
  queue_depth: number;
  /** P95 over the run so far (cumulative), not over this interval alone. */
  e2e_latency_p95_to_date_ns: number | null;
  storage_read_p95_to_date_ns: number | null;
  /**
   * The engine process's memory at this point (process.memoryUsage()): RSS; the main thread's JS heap in
   * use; what JS objects hold outside it (array buffers included) and, of that, array buffers (the CPU
   * tier's arena among them); the byte workers' JS heaps, summed (null before first measured or without
   * workers). Absent from results of kvbench 0.7.0 and before.
   */
  rss_bytes?: number;
  heap_used_bytes?: number;
  external_bytes?: number;
  array_buffers_bytes?: number;
  byte_workers_heap_used_bytes?: number | null;
}

/** engine_health.memory: bytes. */
export interface EngineMemory {
  /** Each kind's own peak over the samples (not one moment's); null when no sample was taken. */
  sampled_peak: {
    rss_bytes: number;
    heap_used_bytes: number;
    external_bytes: number;
    array_buffers_bytes: number;
    byte_workers_heap_used_bytes: number | null;
  } | null;
  /** Reserved when the run started and held to its end; the kernel maps them as they are first written. */
  fixed_buffers: {
    cpu_tier_arena_bytes: number;
    storage_io_buffers_bytes: number;
    cpu_read_staging_bytes: number;
    payload_pool_bytes: number;
    /** The GPU tier's staging: page-locked (pinned) host memory unless gpu_staging_pinned is false; absent before 0.8.1. */
    gpu_staging_bytes?: number;
    /** Null without a GPU tier. */
    gpu_staging_pinned?: boolean | null;
    /** Every buffer above (the GPU staging since 0.8.1). */
    total_bytes: number;
  };
}

export interface KvbenchSection {
  version: string;
  status: TrialStatus;
  status_reason: string | null;
  /** The seed actually used: --seed when given, otherwise one drawn at start so the run can be repeated. */
  effective_seed: number;
  /** sha256 over the offered request stream (every request's parameters, in arrival order). */
  request_stream_digest: string;
  requests_issued: number;
  requests_failed: number;
  started_at: string;
  elapsed_ns: number;
  /** This run's place in a multi-host run (--rank, or the launcher's); null on one host. */
  rank: { rank: number; world_size: number | null; host: string } | null;
  model: { key: string; bytes_per_token: number; tensor_parallel: number; entry_bytes_per_token: number };
  tiers: { gpu: GpuTierDescription; cpu: CpuTierDescription; storage: StorageTierDescription };
  /** Per tier and direction, demotions included (a demotion is a read in one tier and a write in the next). */
  tier_bytes: Record<TierName, TierBytes>;
  device_io: DeviceIoSection;
  /** `--probe-result`: the storage tier against the device's probed limit; null without a probe. */
  efficiency: EfficiencySection | null;
  /**
   * The measured window (fio's time_based semantics): it closes at --duration or when the run ends
   * otherwise, and every number above is frozen then. Requests in flight are abandoned, their
   * operations cancelled at the next chunk; chunks completed inside the window count in bytes.
   */
  measured_window: {
    planned_ns: number;
    /** --warm-up: the workload ran this long before the window opened (not measured). */
    warm_up_ns: number;
    /** Wall-clock time the window opened, ns since the Unix epoch (kvbench merge lines ranks up by it). */
    started_unix_ns: number;
    elapsed_ns: number;
    closed_by: 'duration' | 'max-requests' | 'workload-end' | 'autoscaler' | 'cancel' | 'error';
    requests_in_flight_at_close: number;
    requests_queued_at_close: number;
    /** Time after the close for in-flight I/O to end (not measured, not in elapsed_ns). */
    drain_ns: number;
  };
  /** What was written before the measured phase began (null: that phase did not run). */
  preparation: {
    rag_ingestion: PreparationPhase | null;
    decode_only_prepopulation: PreparationPhase | null;
    precondition: (PreparationPhase & { target_bytes: number; threads: number }) | null;
  };
  /** The metrics the seeds' analysis calls primary. */
  primary: {
    decode_bytes_read: number;
    prefill_bytes_written: number;
    wall_clock_throughput_tokens_per_sec: number;
    storage_read_bytes_per_sec: number;
    storage_write_bytes_per_sec: number;
  };
  latency: {
    /** Complete − scheduled arrival (from 0.8.0; before, complete − issue). An unpaced replay's: complete − issue. */
    end_to_end: LatencySummaryNs;
    /** Dequeue − scheduled arrival (from 0.8.0; before, dequeue − issue), so issue_lateness is part of it. */
    queue_wait: LatencySummaryNs;
    /**
     * How late the scheduler issued each completed request behind its scheduled arrival (the backlog
     * cap, a late event loop): part of queue_wait and end_to_end. Empty for an unpaced replay, whose
     * requests arrive when issued. Absent before 0.8.0.
     */
    issue_lateness?: LatencySummaryNs;
    storage_io_per_request: LatencySummaryNs;
    generation: LatencySummaryNs;
    prefill: LatencySummaryNs;
    decode: LatencySummaryNs;
    tier_read: Partial<Record<TierName, LatencySummaryNs>>;
    tier_write: Partial<Record<TierName, LatencySummaryNs>>;
    /** Per-operation latency divided by MiB moved (ns per MiB): compares drives across entry sizes. */
    tier_read_ns_per_mib: Partial<Record<TierName, LatencySummaryNs>>;
    tier_write_ns_per_mib: Partial<Record<TierName, LatencySummaryNs>>;
    demotion: Record<string, LatencySummaryNs>;
  };
  demotions: Record<string, { count: number; bytes: number }>;
  /** Opt-in promotion of hit entries to a faster tier (--promotion on-hit); moves keyed `from->to`. */
  promotion: {
    policy: 'none' | 'on-hit';
    moves: Record<string, { count: number; bytes: number; latency: LatencySummaryNs }>;
    /** Promotions whose copy up failed: the entry stayed where it was and its read still counted. */
    failures: number;
    /** The first such failure's message (null when none). */
    first_failure: string | null;
  };
  cache: {
    placement_failures: number;
    system_prompt_writes: number;
    /**
     * Lookups of the shared system-prompt entries: found cached (hits) or not (misses, then written),
     * and the model's KV bytes of the prompts found. Null when no lookup was made.
     */
    system_prompt_entries: { hits: number; misses: number; hit_rate: number; bytes_saved: number } | null;
    rag: { documents: number; chunks: number; ingested_bytes: number; retrievals: number; chunk_reads: number } | null;
    /** Shared prefix blocks of a replayed trace (Mooncake hash IDs): reuse shows as hits and bytes. */
    prefix_blocks: { hits: number; misses: number; hit_rate: number; bytes_reused: number } | null;
  };
  verification: {
    enabled: boolean;
    /** Chunks read back and checked against their payload over the whole run (warm-up included, as corrupt_chunks), and their bytes; absent before 0.8.1. */
    checked_chunks?: number;
    checked_bytes?: number;
    /** The checked bytes by the tier that served the read (a tier that served none is absent). */
    checked_bytes_by_tier?: Partial<Record<TierName, number>>;
    corrupt_chunks: number;
    failures: { key: string; tier: TierName; offset_bytes: number }[];
  };
  /**
   * The reference's raw per-request lists (end_to_end_latencies …): every completed request up to
   * `cap_requests`, then a uniform random sample of them in completion order (`sampled`). Percentiles
   * never come from them (the histograms count every request). Absent in older results: every request.
   */
  raw_latency_lists?: { cap_requests: number; requests_completed: number; requests_kept: number; sampled: boolean };
  queue: {
    max_depth: number;
    /** Queued arrivals an open loop may hold (arrivals past it are issued late, in order); null: an unpaced replay (2 × workers). Absent in older results. */
    backlog_cap_requests?: number | null;
    backlog_cap_reached?: boolean;
    /**
     * At the window's close the queue held at least 10 requests per worker and at least a quarter as many as had
     * completed (src-shared/domain/queueing-bound.ts): end-to-end latency and queue wait measure queueing, not
     * storage. Before kvbench 0.8.0: the queue reached max(1000, 10 × workers) at some point.
     */
    queueing_bound?: boolean;
    /** The workers serving the queue when the window closed (0.8.0 on). */
    workers_at_close?: number | null;
    /** The latest any arrival was issued behind its scheduled time, ns (the cap, or a stalled event loop). */
    issue_lateness_max_ns?: number;
    /** What the summary says about a queueing-bound run, or one whose backlog reached its cap; null when it was neither. */
    note?: string | null;
  };
  /**
   * What the workers spent their busy time on, ns, summed over the requests completed in the measured
   * window (each from the queue's hand-over to its completion; a request abandoned at the close is not
   * in it): `cache_io`, the tiers' own operation time (the per-request cache I/O: its sum is
   * latency.storage_io_per_request.sum_ns), and the same by the tier that served it; `generation`, the
   * simulated generation sleeps as slept; `other`, the rest (waits for room in a tier, write
   * admission, an entry another request is writing, promotions, event-loop turns). The queue's note
   * names the bound from it (src-shared/domain/worker-busy.ts). Absent before kvbench 0.8.1.
   */
  workers?: {
    /** The completed requests summed (requests_completed). */
    busy_requests: number;
    busy_ns: { total: number; cache_io: number; cache_io_by_tier: Record<TierName, number>; generation: number; other: number };
  };
  /** Keys of the --config tuning sections this build accepted but does not act on. */
  config_keys_not_applied: string[];
  /** The validated options of this run (every flag, defaults filled in): how to repeat it. */
  run_options: Record<string, unknown>;
  /** Where the requests came from (synthetic users or a replayed file) and its statistics. */
  workload_source: Record<string, unknown>;
  /** Every autoscaler interval: cumulative throughput (the reference's timeline) and the user count. */
  autoscaling_timeline: { timestamp: number; throughput_tokens_per_sec: number; users: number }[] | null;
  engine_health: {
    event_loop_lag_ns: { p50: number; p99: number; max: number };
    byte_workers: { threads: number; utilisation: number };
    io_depth: number;
    io_chunk_bytes: number;
    uv_threadpool_size: number | null;
    peak_rss_bytes: number;
    /**
     * Whether the storage tier's I/O buffers were advised into transparent huge pages (less kernel
     * CPU per direct I/O), or why not; null without storage I/O (trace-only mode). Absent from older
     * kvbench results.
     */
    io_buffer_huge_pages?: { advised: boolean; reason: string | null } | null;
    /**
     * What the engine's memory was made of: each kind's peak over the timeline's samples (warm-up
     * included), and the buffers reserved when the run started. Absent from results of kvbench 0.6.0
     * and before, and of the first 0.7.0 builds (0.7.0 as released has it).
     */
    memory?: EngineMemory;
  };
  timeline: TimelinePoint[];
  units: string;
  /**
   * Trace-only mode (--io-trace-log): the trace file written, `rows` operations logged. Not `complete`:
   * writing it failed (the run is partial), and `path` is NAME.partial, holding fewer rows.
   */
  io_trace?: { path: string; rows: number; compressed: boolean; complete: boolean };
}

/** The results JSON: reference keys plus `kvbench`. Loosely typed where the reference is loose. */
export interface RunResults {
  requests_completed: number;
  total_tokens_generated: number;
  total_storage_io_latency: number;
  total_generation_latency: number;
  end_to_end_latencies: number[];
  storage_latencies: number[];
  generation_latencies: number[];
  /**
   * Every monitor interval (the autoscaler's, else 1 s): seconds since the measured phase began and
   * the tokens generated so far ÷ those seconds.
   */
  throughput_timeline: { timestamp: number; throughput_tokens_per_sec: number }[];
  prefill_latencies: number[];
  decode_latencies: number[];
  multi_turn_cache_hits: number;
  multi_turn_cache_misses: number;
  seed: number | null;
  summary?: RunSummary;
  /** With --validation-trace: the run's hit rate against the trace's (the reference's block). */
  validation?: Record<string, unknown>;
  kvbench: KvbenchSection;
}

export interface RunSummary {
  total_requests: number;
  total_tokens: number;
  elapsed_time: number;
  avg_throughput_tokens_per_sec: number;
  total_storage_io_time: number;
  storage_throughput_tokens_per_sec: number;
  requests_per_second: number;
  end_to_end_latency_ms: PercentilesMs;
  storage_io_latency_ms: PercentilesMs;
  generation_latency_ms: PercentilesMs;
  cache_stats: Record<string, unknown> & { storage_health: StorageHealth };
  qos_metrics: Record<'interactive' | 'responsive' | 'batch', QosLevelMetrics | { no_data: true }>;
  prefix_cache_stats: Record<string, number>;
  autoscaling_stats: unknown[];
  autoscaling_summary: unknown | null;
  multi_turn_stats: { cache_hits: number; cache_misses: number; hit_rate: number };
}

/** Share of the storage tier's read bytes the device must have read for the reads to count as the device's (below it, the run is flagged). */
export const MIN_DEVICE_READ_COVERAGE = 0.95;

/**
 * An efficiency (storage bandwidth ÷ the device's probed or stated limit) this far above 1 is more
 * than run-to-run noise: the limit does not describe what served the run (a probe under other load,
 * a stated figure below the drive, a cache below the filesystem). Not lower: runs that write new
 * files beat a sequential probe's write limit by a few per cent on ordinary drives (docs/benchmarks.md).
 * The engine's notes (`kvbench run --probe-result`) and the report's tier comparison both use it.
 */
export const EFFICIENCY_NOISE_CEILING = 1.1;

export const GIB = 1024 ** 3;
export const MIB = 1024 ** 2;
