import { describe, expect, it } from 'vitest';
import {
  formatConsoleSummary,
  formatCriterion,
  KVBENCH_SECTION_HEADING,
  type ConsoleSummaryOptions,
} from '../../../src-main/engine/report/console-summary.ts';
import { FIXTURE_DIGEST, makeRunResults, makeStorageHealth } from './results-fixture.ts';

const OPTS: ConsoleSummaryOptions = {
  generationMode: 'realistic',
  msPerToken: 30,
  performanceProfile: 'latency',
  bytesPerToken: 131072,
};

function headingsOf(text: string): string[] {
  return text.split('\n').filter((l) => l.startsWith('### '));
}

function indexOfLine(lines: string[], prefix: string): number {
  return lines.findIndex((l) => l.startsWith(prefix));
}

describe('formatConsoleSummary', () => {
  it('prints the reference sections in order, then the kvbench section', () => {
    const text = formatConsoleSummary(makeRunResults(), OPTS);
    const headings = headingsOf(text);
    const expected = [
      '### STORAGE PERFORMANCE ASSESSMENT: PASS [OK] ###',
      '### OVERALL PERFORMANCE ###',
      '### END-TO-END LATENCY (Queue Wait + Storage I/O + Generation) ###',
      '### PER-REQUEST STORAGE LATENCY (All I/O ops for one request) ###',
      '### TOKEN GENERATION LATENCY (Simulated @ 30.0ms/token) ###',
      '### STORAGE PERFORMANCE ###',
      '### CACHE TIER DISTRIBUTION ###',
      '### TIER-SPECIFIC KV BYTES ###',
      '### STORAGE KV BANDWIDTH ###',
      '### TIER-SPECIFIC LATENCIES (Total = Host + Device) ###',
      "### STORAGE TIER LATENCY BREAKDOWN (Device = time with the entry's I/O in flight at the device, Host = the rest of the entry's time) ###",
      '### CACHE TYPE BREAKDOWNS ###',
      '### PREFIX CACHING ###',
      '### MULTI-TURN CONVERSATIONS ###',
      '### QOS LATENCY METRICS (Informational - includes simulated generation) ###',
      KVBENCH_SECTION_HEADING,
    ];
    expect(headings).toEqual(expected);

    const lines = text.split('\n');
    // Header, block note and NOTES come where the reference puts them.
    expect(lines[1]).toBe('='.repeat(80));
    expect(lines[2]).toBe('BENCHMARK RESULTS - MLPerf KV Cache Storage Benchmark');
    expect(lines[3]).toBe('Generation Mode: realistic (30.0ms/token)');
    const notes = lines.indexOf('NOTES:');
    expect(notes).toBeGreaterThan(lines.indexOf('### QOS LATENCY METRICS (Informational - includes simulated generation) ###'));
    expect(notes).toBeLessThan(lines.indexOf(KVBENCH_SECTION_HEADING));
    expect(lines[notes + 1]).toBe('  - End-to-end latency includes simulated GPU inference');
    // Every heading follows a blank line, as the reference prints "\n###".
    for (const h of headingsOf(text)) expect(lines[lines.indexOf(h) - 1]).toBe('');
  });

  it('prints the key reference lines with the reference formats', () => {
    const text = formatConsoleSummary(makeRunResults(), OPTS);
    const lines = text.split('\n');
    expect(lines).toContain('  (kvbench tool criteria, not an MLPerf rule)');
    expect(lines).toContain('  Criteria Passed: 4/4');
    expect(lines).toContain('  [OK] Storage Tier Write Device P95 < 500ms: 123.46ms (target: 500.00ms)');
    expect(lines).toContain('  [OK] Cache Hit Rate > 30%: 65.3% (target: 30.0%)');
    expect(lines).toContain('Requests Completed: 1200');
    expect(lines).toContain('Total Tokens Generated: 180000');
    expect(lines).toContain('Throughput (wall-clock): 3000.00 tokens/sec');
    expect(lines).toContain('Throughput (storage I/O): 1884.82 tokens/sec');
    expect(lines).toContain('Requests/sec: 20.00');
    expect(lines).toContain('  P95:  1500.75 ms');
    expect(lines).toContain('  (= 1 prefill write + N decode reads per request)');
    expect(lines).toContain('  Cache Hit Rate: 65.3%');
    expect(lines).toContain('  Total Read: 70.00 GB');
    expect(lines).toContain('  Read/Write Ratio: 1.56');
    expect(lines).toContain('  Storage KV Read Operations/sec: 150.00');
    expect(lines).toContain('  GPU Entries: 0 (0.00 GB)');
    expect(lines).toContain('  Storage Entries: 800');
    expect(lines).toContain('  Storage KV Bytes Read: 40.00 GB');
    expect(lines.some((l) => l.startsWith('  GPU KV Bytes'))).toBe(false);
    expect(lines).toContain('  Storage KV Read Bandwidth: 0.67 GB/s');
    expect(lines).toContain('  Storage Read P95 (Total): 95.25 ms');
    expect(lines).toContain('    - Device P95 (I/O in flight): 87.50 ms');
    expect(lines).toContain('    - Host P95 (rest of entry time): 8.25 ms');
    expect(lines).toContain('  Bytes Saved: 2.00 GB');
    expect(lines).toContain('  Multi-turn Hit Rate: 76.2%');
    expect(lines).toContain('  INTERACTIVE:');
    expect(lines).toContain('    SLA Met: [X] (compliance: 12.3%)');
    expect(lines).not.toContain('  BATCH:');
    expect(lines).toContain('  Model KV bytes/token: 131,072 bytes (128.0 KB)');
    expect(lines).toContain('  Entries in cache: 920');
    expect(lines).not.toContain('### AUTOSCALING (qos mode) ###');
  });

  it('says what the engine memory was made of, and the CPU tier arena, when the results carry them (0.7.0 results do not)', () => {
    const GiB = 1024 ** 3;
    const MiB = 1024 ** 2;
    const older = formatConsoleSummary(makeRunResults(), OPTS).split('\n');
    expect(older.some((l) => l.startsWith('    Memory:'))).toBe(false);
    const results = makeRunResults();
    const kv = results.kvbench;
    kv.tiers.cpu = { ...kv.tiers.cpu, peak_held_bytes: 1 * GiB, arena_bytes: 1.125 * GiB, arena_overflow_chunks: 2 };
    kv.engine_health.memory = {
      sampled_peak: { rss_bytes: 1.75 * GiB, heap_used_bytes: 100 * MiB, external_bytes: 1200 * MiB, array_buffers_bytes: 1176 * MiB, byte_workers_heap_used_bytes: 16 * MiB },
      fixed_buffers: { cpu_tier_arena_bytes: 1.125 * GiB, storage_io_buffers_bytes: 256 * MiB, cpu_read_staging_bytes: 64 * MiB, payload_pool_bytes: 16 * MiB, total_bytes: 1.125 * GiB + 336 * MiB },
    };
    const lines = formatConsoleSummary(results, OPTS).split('\n');
    expect(lines.find((l) => l.startsWith('  CPU tier:'))).toMatch(/peak RAM held 1\.00 GiB of a 1\.13 GiB arena \(2 chunks found no room in it and took buffers of their own\)$/);
    expect(lines.find((l) => l.startsWith('    Memory:'))).toBe(
      '    Memory: buffers reserved 1.45 GiB (CPU tier arena 1.13 GiB, storage I/O 256.0 MiB, CPU read staging 64.0 MiB, payload 16.0 MiB); ' +
        "sampled peaks: RSS 1.75 GiB, JS heap 100.0 MiB, array buffers 1.15 GiB, byte workers' heaps 16.0 MiB",
    );
    // A GPU tier's staging is page-locked host memory: a part of the buffers, named as such.
    const fixed = kv.engine_health.memory.fixed_buffers;
    kv.engine_health.memory.fixed_buffers = { ...fixed, gpu_staging_bytes: 128 * MiB, gpu_staging_pinned: true, total_bytes: fixed.total_bytes + 128 * MiB };
    const withGpu = formatConsoleSummary(results, OPTS).split('\n');
    expect(withGpu.find((l) => l.startsWith('    Memory:'))).toMatch(
      /^ {4}Memory: buffers reserved 1\.58 GiB \(CPU tier arena 1\.13 GiB, storage I\/O 256\.0 MiB, CPU read staging 64\.0 MiB, payload 16\.0 MiB, GPU staging 128\.0 MiB page-locked \(pinned\)\); /,
    );
    kv.engine_health.memory.fixed_buffers.gpu_staging_pinned = false;
    expect(formatConsoleSummary(results, OPTS)).toContain('GPU staging 128.0 MiB, not page-locked);');
  });

  it('splits GPU latency into device and host in a section of its own, and says how chunks got their staging slots', () => {
    const MiB = 1024 ** 2;
    const without = formatConsoleSummary(makeRunResults(), OPTS);
    expect(without).not.toContain('GPU TIER LATENCY BREAKDOWN');
    const results = makeRunResults();
    const cs = results.summary!.cache_stats as Record<string, unknown>;
    Object.assign(cs, {
      gpu_read_p95_ms: 127.8,
      gpu_read_device_p95_ms: 40.5,
      gpu_read_host_p95_ms: 95.25,
      gpu_write_p95_ms: 1700.79,
      gpu_write_device_p95_ms: 60,
      gpu_write_host_p95_ms: 1650.5,
    });
    results.kvbench.tiers.gpu = {
      present: true,
      budget_bytes: 8 * 1024 ** 3,
      reason: null,
      devices: [{ index: 0, model: 'NVIDIA H200', total_memory_bytes: 150109880320, pci_bus_id: '0000:00:06.0', reserved_bytes: 8 * 1024 ** 3, shortfall: null }],
      driver_version: '580.159.04',
      cuda_version: '13.0',
      staging_pinned: true,
      staging_bytes: 128 * MiB,
      staging_slots: 8,
      staging_slot_acquisitions: 40_000,
      staging_slot_waits: 10_000,
      staging_slot_wait_ns: 10_000 * 3.5e6,
      staging_slot_max_wait_ns: 250e6,
      copy_threads: 2,
      chunk_bytes: 16 * MiB,
    };
    const text = formatConsoleSummary(results, OPTS);
    const headings = headingsOf(text);
    const gpuHeading =
      "### GPU TIER LATENCY BREAKDOWN (Device = time with at least one of the entry's own copies executing, Host = the rest: waiting for a staging slot, filling it or passing it on, copies queued behind other entries') ###";
    // After the storage breakdown, before the cache types.
    expect(headings.indexOf(gpuHeading)).toBe(headings.findIndex((h) => h.startsWith('### STORAGE TIER LATENCY BREAKDOWN')) + 1);
    const lines = text.split('\n');
    const at = lines.indexOf(gpuHeading);
    expect(lines.slice(at + 1, at + 9)).toEqual([
      '  GPU Read:',
      '    - Device P95 (own copies executing): 40.50 ms',
      '    - Host P95 (rest of entry time): 95.25 ms',
      '    - Total P95: 127.80 ms',
      '  GPU Write:',
      '    - Device P95 (own copies executing): 60.00 ms',
      '    - Host P95 (rest of entry time): 1650.50 ms',
      '    - Total P95: 1700.79 ms',
    ]);
    expect(lines).toContain(
      '    Staging slots (8 × 16.0 MiB, shared by every GPU read and write): 40,000 taken in the measured phase, 10,000 (25.0%) after waiting for one, mean wait 3.50 ms, longest 250.00 ms',
    );
  });

  it('divides the operation counts by the measured window, as Requests/sec, not by the planned --duration', () => {
    // The review's --prefill-only --max-requests 6 --duration 3 run: 6 writes in a 1.2 s window.
    const results = makeRunResults();
    const summary = results.summary!;
    summary.elapsed_time = 1.2;
    summary.requests_per_second = 5;
    summary.cache_stats.read_iops = 0;
    summary.cache_stats.write_iops = 6;
    const lines = formatConsoleSummary(results, OPTS).split('\n');
    expect(lines).toContain('Requests/sec: 5.00');
    expect(lines).toContain('  Storage KV Write Operations/sec: 5.00');
    expect(lines).toContain('  Storage KV Read Operations/sec: 0.00');
  });

  it('marks a failed assessment with [X]', () => {
    const results = makeRunResults();
    results.summary!.cache_stats.storage_health = makeStorageHealth('FAIL');
    const text = formatConsoleSummary(results, OPTS);
    expect(text).toContain('\n### STORAGE PERFORMANCE ASSESSMENT: FAIL [X] ###\n');
    expect(text).toContain('  [X] Cache Hit Rate > 30%: 12.0% (target: 30.0%)');
  });

  it('prints string criteria as-is (throughput profile)', () => {
    expect(
      formatCriterion({ name: 'Storage KV Read Bandwidth', target: '>0', actual: '1.23', unit: 'GB/s', passed: true }),
    ).toBe('  [OK] Storage KV Read Bandwidth: 1.23GB/s (target: >0GB/s)');
  });

  it('omits TOKEN GENERATION for mode none and says pure storage in NOTES', () => {
    const text = formatConsoleSummary(makeRunResults(), { ...OPTS, generationMode: 'none', msPerToken: 0 });
    expect(text).not.toContain('### TOKEN GENERATION LATENCY');
    expect(text).toContain('Generation Mode: none (0.0ms/token)');
    expect(text).toContain('  - Pure storage I/O benchmark (no generation simulation)');
  });

  it('omits QoS in the throughput profile', () => {
    const text = formatConsoleSummary(makeRunResults(), { ...OPTS, performanceProfile: 'throughput' });
    expect(text).not.toContain('### QOS LATENCY METRICS');
  });

  it('prints autoscaling in capacity mode', () => {
    const results = makeRunResults();
    results.summary!.autoscaling_stats = [{ action: 'hold' }, { action: 'scale_up' }, { action: 'stop' }];
    results.summary!.autoscaling_summary = {
      initial_users: 10,
      final_users: 24,
      total_scale_events: 2,
      peak_user_count: 20,
      peak_throughput_tokens_per_sec: 4321.5,
    };
    const text = formatConsoleSummary(results, { ...OPTS, autoscalerMode: 'capacity' });
    expect(text).toContain('\n### AUTOSCALING (capacity mode) ###\n  Scaling Events: 2 (of 3 steps)\n  Final User Count: 24\n');
    expect(text).toContain('  Peak Capacity Found: 4321.50 tok/s at 20 users');
  });

  it('says a capacity run found no peak when its window closed first, and gives the highest throughput so far', () => {
    const results = makeRunResults();
    results.summary!.elapsed_time = 3.0002;
    results.summary!.autoscaling_stats = [{ action: 'scale_up' }, { action: 'scale_up' }, { action: 'scale_up' }];
    results.summary!.autoscaling_summary = {
      initial_users: 2,
      final_users: 17,
      total_scale_events: 3,
      peak_user_count: 12,
      peak_throughput_tokens_per_sec: 568.066,
      peak_found: false,
    };
    const text = formatConsoleSummary(results, { ...OPTS, autoscalerMode: 'capacity' });
    expect(text).not.toContain('Peak Capacity Found');
    expect(text).toContain(
      '  Peak Capacity: not found — no peak found: the window closed at 3.0 s before throughput stopped rising; highest so far 568.1 tokens/s at 12 users (a longer run, --duration, may find more)\n',
    );
  });

  it('says whether the qos autoscaler met its latency target at the end, or never measured it', () => {
    const qos = (target: Record<string, unknown>): string => {
      const results = makeRunResults();
      results.summary!.autoscaling_stats = [{ action: 'scale_up' }, { action: 'scale_down' }];
      results.summary!.autoscaling_summary = { initial_users: 2, final_users: 2, total_scale_events: 2, target_saturation: 0.8, read_latency_p95_threshold_ms: 200, write_latency_p95_threshold_ms: 500, ...target };
      return formatConsoleSummary(results, { ...OPTS, autoscalerMode: 'qos' });
    };
    const interval = { elapsed_s: 9.0009, saturation_level: 4.994, read_latency_p95_ms: 998.9, write_latency_p95_ms: 751.04, read_in_flight_oldest_ms: 12, write_in_flight_oldest_ms: null };
    expect(qos({ target_met: false, target_judged_interval: interval })).toContain(
      '  Final User Count: 2\n  P95 Target (storage read P95 ≤ 200 ms): NOT met (last measured interval, at 9.0 s: read P95 998.90 ms, write P95 751.04 ms, saturation 4.99): the final user count does not fit under the target\n',
    );
    const inFlight = { ...interval, saturation_level: 3.5, read_latency_p95_ms: null, write_latency_p95_ms: null, read_in_flight_oldest_ms: 700 };
    expect(qos({ target_met: false, target_judged_interval: inFlight })).toContain('NOT met (last measured interval, at 9.0 s: oldest read in flight 700.00 ms, saturation 3.50)');
    expect(qos({ target_met: true, target_judged_interval: { ...interval, saturation_level: 0.6, read_latency_p95_ms: 120, write_latency_p95_ms: null } })).toContain(
      '  P95 Target (storage read P95 ≤ 200 ms): met (last measured interval, at 9.0 s: read P95 120.00 ms, saturation 0.60)\n',
    );
    expect(qos({ target_met: null, target_judged_interval: null })).toContain(
      '  P95 Target (storage read P95 ≤ 200 ms): never measured — in no interval did a storage operation complete or stay in flight past the threshold, so the final user count rests on no latency sample\n',
    );
    // A file from before 0.6.0 (or the reference's) does not say: nothing is claimed.
    expect(qos({})).not.toContain('P95 Target');
  });

  it('reports the kvbench measurements with units', () => {
    const lines = formatConsoleSummary(makeRunResults(), OPTS).split('\n');
    const start = lines.indexOf(KVBENCH_SECTION_HEADING);
    const kv = lines.slice(start);
    expect(kv).toContain('  Status: COMPLETE');
    expect(kv.some((l) => l.includes('PARTIAL'))).toBe(false);
    expect(kv).toContain(`  Request stream digest (sha256, first 16 hex): ${FIXTURE_DIGEST.slice(0, 16)}`);
    expect(kv).toContain('  Effective seed: 42');
    expect(kv).toContain('  Requests: 1,250 issued, 1,200 completed, 3 failed');
    expect(kv).toContain('  Direct I/O: on');
    expect(kv.some((l) => l.includes('page cache'))).toBe(false);
    expect(kv).toContain('  GPU tier: not present (no CUDA device)');
    expect(kv).toContain('    GPU: not present');
    expect(kv).toContain('      Read:  40.00 GiB (42,949,672,960 bytes), 640 ops, 0.72 GB/s');
    // The storage tier's: what requests read of it (its hits), beside what demotions moved.
    expect(kv).toContain('      Demoted in: 5.00 GiB; demoted out: 0 B; hits read (reads less moves): 40.00 GiB');
    expect(kv).toContain('      Demoted in: 0 B; demoted out: 5.00 GiB; hits read (reads less moves): 25.00 GiB');
    expect(kv).toContain('  Decode bytes read: 60.00 GiB (64,424,509,440 bytes)');
    expect(kv).toContain('  Prefill bytes written: 40.00 GiB (42,949,672,960 bytes)');
    expect(kv).toContain('  Storage read bandwidth: 1.50 GB/s (1.40 GiB/s)');
    expect(kv).toContain('    Queue wait:              P50 12.50 ms, P95 80.25 ms (n=1,200)');
    const storageRead = kv.find((l) => l.startsWith('    Storage read:'));
    expect(storageRead).toBe(
      '    Storage read:            P50 40.50 ms, P95 95.25 ms (n=1,000); per MiB (entries ≥ 4.0 MiB, n=1,000) P50 0.600 ms/MiB, P95 1.400 ms/MiB',
    );
    const demotions = kv.indexOf('    cpu->storage: 80 entries, 5.00 GiB (5,368,709,120 bytes), P95 160.00 ms');
    expect(demotions).toBeGreaterThan(0);
    // Why its bytes are not the tier lines' demoted in/out.
    expect(kv[demotions + 1]).toBe(
      '    (whole demotions that completed in the measured window, one begun before it opened included; the tier lines above count demotion bytes chunk by chunk as they moved in the window, so a demotion in flight when it opened or closed counts there in part)',
    );
    expect(kv).toContain('    Event-loop lag: P99 4.56 ms (P50 0.15 ms, max 12.00 ms)');
    expect(kv).toContain('    Byte workers: 4 threads, utilisation 45.6%');
    // The device's counters (every process), then the engine's own device reads beside them.
    const device = kv.findIndex((l) => l.startsWith('  Device I/O (nvme0n1p1 on nvme0n1, /proc/diskstats, measured phase, every process): read 40.40 GiB, 1.010 × the storage tier\'s'));
    expect(device).toBeGreaterThan(0);
    expect(kv[device + 2]).toBe('    the engine process alone (/proc/self/io, any device): read 40.39 GiB, 1.010 × the storage tier\'s');
  });

  it('says when no entry was large enough for a per-MiB latency', () => {
    const results = makeRunResults();
    results.kvbench.latency.tier_write_ns_per_mib.storage = { ...results.kvbench.latency.tier_write_ns_per_mib.storage!, count: 0 };
    const line = formatConsoleSummary(results, OPTS).split('\n').find((l) => l.startsWith('    Storage write:'));
    expect(line).toMatch(/\(n=1,000\); per MiB: no entries ≥ 4\.0 MiB$/);
  });

  it('warns when storage reads may hit the page cache', () => {
    const text = formatConsoleSummary(makeRunResults({ directIo: false }), OPTS);
    expect(text).toContain('  Direct I/O: off (O_DIRECT not supported by tmpfs)');
    expect(text).toContain('  WARNING: storage reads may have been served by the OS page cache (buffered I/O);');
  });

  it('reports data verification, loudly when chunks came back corrupt', () => {
    expect(formatConsoleSummary(makeRunResults(), OPTS)).toContain('\n  Data verification: off\n');
    // How much was checked stands beside "0 corrupt": nothing checked is not a clean result.
    const clean = makeRunResults({ corruptChunks: 0 });
    clean.kvbench.verification = { ...clean.kvbench.verification, checked_chunks: 1234, checked_bytes: 3 * 1024 ** 3, checked_bytes_by_tier: { gpu: 2 * 1024 ** 3, storage: 1024 ** 3 } };
    expect(formatConsoleSummary(clean, OPTS)).toContain(
      '  Data verification: on, 1,234 chunks (3.00 GiB) read back and checked over the whole run (GPU 2.00 GiB, Storage 1.00 GiB), 0 corrupt\n',
    );
    const none = makeRunResults({ corruptChunks: 0 });
    none.kvbench.verification = { ...none.kvbench.verification, checked_chunks: 0, checked_bytes: 0, checked_bytes_by_tier: {} };
    expect(formatConsoleSummary(none, OPTS)).toContain('  Data verification: on, but no chunk was read back to check\n');
    // Results from before the count say so rather than imply it.
    expect(formatConsoleSummary(makeRunResults({ corruptChunks: 0 }), OPTS)).toContain('  Data verification: on, chunks checked not recorded (results before 0.8.1), 0 corrupt');
    const text = formatConsoleSummary(makeRunResults({ corruptChunks: 7 }), OPTS);
    expect(text).toContain('  !!! DATA VERIFICATION FAILED: 7 corrupt chunks read back (');
    expect(text).toContain('    storage user_0001_req_000001 at offset 4,096 bytes');
    expect(text).toContain('    … and 2 more (see the results JSON)');
  });

  it('lists promotions only under --promotion on-hit, and failed ones loudly', () => {
    expect(formatConsoleSummary(makeRunResults(), OPTS)).not.toContain('Promotions');
    const res = makeRunResults();
    const latency = { ...res.kvbench.latency.end_to_end, count: 3, p95_ns: 12_500_000 };
    res.kvbench.promotion = {
      policy: 'on-hit',
      moves: { 'storage->cpu': { count: 3, bytes: 3 * 1024 ** 2, latency } },
      failures: 2,
      first_failure: 'promoting u1-t2: cpu tier out of memory',
    };
    const lines = formatConsoleSummary(res, OPTS).split('\n');
    const at = lines.indexOf('  Promotions (--promotion on-hit: hit entries moved up a tier, timed apart from their reads):');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('    storage->cpu: 3 entries, 3.0 MiB (3,145,728 bytes), P95 12.50 ms');
    expect(lines[at + 2]).toBe('    FAILED: 2 promotions (entries stayed where they were; first: promoting u1-t2: cpu tier out of memory)');
  });

  it('marks a partial run loudly', () => {
    const text = formatConsoleSummary(makeRunResults({ status: 'partial', statusReason: 'cancelled by user' }), OPTS);
    const lines = text.split('\n');
    const start = lines.indexOf(KVBENCH_SECTION_HEADING);
    expect(lines[start + 1]).toBe(`  ${'!'.repeat(78)}`);
    expect(lines[start + 2]).toBe('  !!! PARTIAL RUN: these results do not cover the whole planned run.');
    expect(lines[start + 3]).toBe('  !!! Reason: cancelled by user');
    expect(lines).toContain('  Status: PARTIAL (cancelled by user)');
  });

  it('prints the reference warning and still the kvbench section when no request completed', () => {
    const text = formatConsoleSummary(makeRunResults({ withSummary: false, status: 'failed', statusReason: 'engine crashed' }), OPTS);
    const lines = text.split('\n');
    expect(lines).toContain('No requests completed during benchmark!');
    expect(text).not.toContain('### OVERALL PERFORMANCE ###');
    expect(indexOfLine(lines, KVBENCH_SECTION_HEADING)).toBeGreaterThan(lines.indexOf('No requests completed during benchmark!'));
    expect(lines).toContain('  Status: FAILED (engine crashed)');
  });
});
