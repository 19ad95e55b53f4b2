// Shared test data for the hardware, suite, store and export tests: a hardware profile, results
// JSON in the reference's formats (written here from the reference's documented keys), and
// kvbench results with chosen headline numbers.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import type { RunOutcome } from '../../../src-shared/engine-protocol.ts';
import { makeRunResults } from '../report/results-fixture.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';

const GIB = 1024 ** 3;

export function fakeHardware(over: { systemId?: string; hostname?: string; ramGiB?: number; gpuGiB?: number | null; gpuUsable?: boolean; freeGiB?: number; probe?: boolean } = {}): HardwareProfile {
  const gpu = over.gpuGiB ?? null;
  return {
    version: 1,
    detectedAt: '2026-11-01T00:00:00.000Z',
    kvbenchVersion: '0.1.0',
    system: { id: over.systemId ?? 'sys-0123456789abcdef', idSource: 'machine-id', hostname: over.hostname ?? 'lab1', manufacturer: null, model: null, virtual: false, virtualHost: null },
    os: { platform: 'linux', distro: 'Debian GNU/Linux', release: '12', kernel: '6.1', arch: 'x64' },
    cpu: { manufacturer: 'AMD', brand: 'EPYC', logicalCores: 2, physicalCores: 2, sockets: 1, baseSpeedGhz: null, maxSpeedGhz: null },
    memory: { totalBytes: (over.ramGiB ?? 24) * GIB, availableBytes: 20 * GIB, swapTotalBytes: 0 },
    gpus: gpu === null ? [] : [{ index: 0, vendor: 'NVIDIA', model: 'H100', memoryBytes: gpu * GIB, driverVersion: '580', busId: null, compute: true, engineUsable: over.gpuUsable ?? true }],
    cuda:
      gpu === null || over.gpuUsable === false
        ? { available: false, reason: 'libcuda.so.1 could not be loaded: no NVIDIA driver is installed', driverVersion: null, cudaVersion: null, devices: [] }
        : { available: true, reason: null, driverVersion: '580', cudaVersion: '13.0', devices: [{ index: 0, name: 'H100', totalMemoryBytes: gpu * GIB, pciBusId: null }] },
    disks: [],
    cacheDir: {
      path: '/mnt/kv',
      resolvedPath: '/mnt/kv',
      exists: true,
      writable: true,
      mountPoint: '/',
      filesystem: 'ext4',
      mountSource: '/dev/vda',
      blockDevice: null,
      totalBytes: 256 * GIB,
      freeBytes: (over.freeGiB ?? 80) * GIB,
      directIo: { supported: true, reason: null, logicalBlockBytes: 512 },
      driveId: `drv-${(over.systemId ?? 'sys-0123456789abcdef').slice(4)}`,
      driveIdBasis: 'local-device',
      driveLabel: 'virtual disk vda (256 GiB)',
      bandwidth: over.probe
        ? { readBytesPerSec: 2e9, writeBytesPerSec: 1.5e9, fileBytes: GIB, chunkBytes: 16 * 1024 ** 2, depth: 16, directIo: true, pageCacheSuspected: false, phaseSeconds: 1, measuredAt: '2026-11-01T00:00:00.000Z' }
        : null,
    },
    memoryCopyBytesPerSec: over.probe ? 10e9 : null,
    warnings: [],
  };
}

/**
 * kvbench results with chosen headline numbers (everything else from the report fixture). `durationS`:
 * the planned window of the run they stand for (a suite's run options say it), which the window then
 * lasts; without it the fixture's own 60 s. A window far longer than its run's plan is a stall.
 */
export function kvbenchResults(o: {
  tokPerS: number;
  storageTokPerS?: number;
  readBytesPerS?: number;
  decodeBytes?: number;
  e2eP95Ms?: number;
  status?: 'complete' | 'partial';
  durationS?: number;
}): RunResults {
  const r = makeRunResults();
  if (o.durationS !== undefined) {
    const w = r.kvbench.measured_window;
    w.elapsed_ns = w.elapsed_ns - w.planned_ns + o.durationS * 1e9;
    w.planned_ns = o.durationS * 1e9;
    r.summary!.elapsed_time = w.elapsed_ns / 1e9;
  }
  r.summary!.avg_throughput_tokens_per_sec = o.tokPerS;
  r.summary!.storage_throughput_tokens_per_sec = o.storageTokPerS ?? o.tokPerS / 2;
  r.summary!.end_to_end_latency_ms.p95 = o.e2eP95Ms ?? 1500;
  r.kvbench.tier_bytes.storage.read_bytes_per_sec = o.readBytesPerS ?? 1e9;
  r.kvbench.primary.decode_bytes_read = o.decodeBytes ?? 50 * GIB;
  r.kvbench.status = o.status ?? 'complete';
  // Real HDR encodings (the report fixture's placeholder does not decode): samples around each summary's P50.
  const walk = (v: unknown): void => {
    if (typeof v !== 'object' || v === null) return;
    const s = v as { hdr?: unknown; p50_ns?: number; count?: number };
    if (typeof s.hdr === 'string') {
      const h = new LatencyHistogram();
      for (let i = 0; i < Math.min(s.count ?? 10, 200); i++) h.record((s.p50_ns ?? 1e6) * (0.5 + i / 200));
      s.hdr = h.encode();
      return;
    }
    for (const x of Object.values(v)) walk(x);
  };
  walk(r.kvbench.latency);
  r.kvbench.status_reason = o.status === 'partial' ? 'disk full' : null;
  return r;
}

/**
 * Results of a 3 s run (`run_options.duration`) whose window closed after 9 s, measured by kvbench
 * `version`: a stall from 0.2.0 on, whose fixed windows close at the plan; 0.1.0 drained in-flight
 * requests inside the window, so there it is none.
 */
export function stalledResults(version: string, tokPerS = 100): RunResults {
  const r = kvbenchResults({ tokPerS, durationS: 3 });
  r.kvbench.version = version;
  r.kvbench.run_options = { ...r.kvbench.run_options, duration: 3 };
  r.kvbench.measured_window.elapsed_ns = 9e9;
  r.kvbench.elapsed_ns = 9e9;
  r.summary!.elapsed_time = 9;
  return r;
}

/**
 * What the real engine answers a cancel with once its measured window is open, whoever sent the
 * cancel: partial, its window closed by 'cancel', in the engine's own words.
 */
export function cancelledOutcome(results: Record<string, unknown>): RunOutcome {
  (results as unknown as RunResults).kvbench.measured_window.closed_by = 'cancel';
  return { status: 'partial', reason: 'cancelled by the user before the planned end', results, summaryText: 'partial' };
}

/**
 * A results file as the reference (NEW package, `storage_*` keys) writes it: the raw top-level
 * accumulators plus `summary`, seconds in the lists, ms in the summary, GiB in `_gb` keys.
 */
export function referenceResultsNew(o: { tokPerS: number; storageTokPerS: number; readGiB?: number; e2eP95Ms?: number; requests?: number }): Record<string, unknown> {
  const requests = o.requests ?? 500;
  const elapsed = 300;
  const tokens = Math.round(o.tokPerS * elapsed);
  const storageS = tokens / o.storageTokPerS;
  const lat = (p95: number) => ({ mean: p95 / 2, p50: p95 / 3, p95, p99: p95 * 1.3, p999: p95 * 1.6, p9999: p95 * 1.8 });
  const readGiB = o.readGiB ?? 90;
  return {
    requests_completed: requests,
    total_tokens_generated: tokens,
    total_storage_io_latency: storageS,
    total_generation_latency: 0,
    end_to_end_latencies: [0.5, 1.2, 0.8],
    storage_latencies: [0.2, 0.4, 0.3],
    generation_latencies: [0, 0, 0],
    throughput_timeline: [],
    prefill_latencies: [0.01],
    decode_latencies: [0.02],
    multi_turn_cache_hits: 10,
    multi_turn_cache_misses: 5,
    seed: 42,
    summary: {
      total_requests: requests,
      total_tokens: tokens,
      elapsed_time: elapsed,
      avg_throughput_tokens_per_sec: o.tokPerS,
      total_storage_io_time: storageS,
      storage_throughput_tokens_per_sec: o.storageTokPerS,
      requests_per_second: requests / elapsed,
      end_to_end_latency_ms: lat(o.e2eP95Ms ?? 2000),
      storage_io_latency_ms: lat(800),
      generation_latency_ms: lat(0),
      cache_stats: {
        cache_hit_rate: 0.93,
        cache_hits: 930,
        cache_misses: 70,
        gpu_entries: 0,
        cpu_entries: 0,
        storage_entries: 400,
        gpu_memory_used_gb: 0,
        cpu_memory_used_gb: 0,
        offloads_cpu: 0,
        offloads_storage: 500,
        storage_health: { overall_status: 'PASS', criteria: [], passed_count: 0, total_count: 0 },
        prefill_writes: 500,
        decode_reads: 5400,
        tier_gpu_kv_bytes_written_gb: 0,
        tier_cpu_kv_bytes_written_gb: 0,
        tier_storage_kv_bytes_written_gb: 7.5,
        tier_gpu_kv_bytes_read_gb: 0,
        tier_cpu_kv_bytes_read_gb: 0,
        tier_storage_kv_bytes_read_gb: readGiB,
        tier_gpu_read_bandwidth_gbps: 0,
        tier_gpu_write_bandwidth_gbps: 0,
        tier_cpu_read_bandwidth_gbps: 0,
        tier_cpu_write_bandwidth_gbps: 0,
        tier_storage_read_bandwidth_gbps: readGiB / elapsed,
        tier_storage_write_bandwidth_gbps: 7.5 / elapsed,
        system_prompt_hits: 0,
        common_phrase_hits: 0,
        user_cache_hits: 900,
        multi_turn_hits: 30,
        total_read_bytes: readGiB * GIB,
        total_write_bytes: 7.5 * GIB,
        total_read_gb: readGiB,
        total_write_gb: 7.5,
        read_write_ratio: readGiB / 7.5,
        read_iops: 5400,
        write_iops: 500,
        storage_tokens_processed: 123456,
        storage_read_p50_ms: 100,
        storage_read_p95_ms: 358.2,
        storage_read_p99_ms: 400,
        storage_read_p999_ms: 450,
        storage_read_p9999_ms: 460,
        storage_write_p50_ms: 50,
        storage_write_p95_ms: 120,
        storage_write_p99_ms: 130,
        storage_write_p999_ms: 140,
        storage_write_p9999_ms: 150,
        storage_read_device_p95_ms: 300,
        storage_write_device_p95_ms: 100,
      },
      qos_metrics: { interactive: { no_data: true }, responsive: { no_data: true }, batch: { no_data: true } },
      prefix_cache_stats: {},
      autoscaling_stats: [],
      autoscaling_summary: null,
      multi_turn_stats: { cache_hits: 10, cache_misses: 5, hit_rate: 10 / 15 },
    },
  };
}

/** The MID build's shape (seeds/003's trial JSON): `nvme_*` keys, decode/prefill bytes in GiB, no storage throughput in the summary. */
export function referenceResultsMid(o: { tokens: number; storageS: number; requests: number; decodeGiB: number }): Record<string, unknown> {
  return {
    requests_completed: o.requests,
    total_tokens_generated: o.tokens,
    total_storage_io_latency: o.storageS,
    total_generation_latency: 0,
    end_to_end_latencies: [],
    storage_latencies: [],
    generation_latencies: [],
    throughput_timeline: [],
    prefill_latencies: [],
    decode_latencies: [],
    multi_turn_cache_hits: 0,
    multi_turn_cache_misses: 0,
    seed: 42,
    summary: {
      total_requests: o.requests,
      total_tokens: o.tokens,
      elapsed_time: 120,
      avg_throughput_tokens_per_sec: o.tokens / 120,
      requests_per_second: o.requests / 120,
      end_to_end_latency_ms: { mean: 1, p50: 1, p95: 2, p99: 3 },
      storage_io_latency_ms: { mean: 1, p50: 1, p95: 2, p99: 3 },
      generation_latency_ms: { mean: 0, p50: 0, p95: 0, p99: 0 },
      cache_stats: {
        cache_hit_rate: 0.93,
        nvme_entries: 100,
        decode_bytes_read_gb: o.decodeGiB,
        prefill_bytes_written_gb: 7.4,
        total_read_bytes: o.decodeGiB * GIB,
        total_write_bytes: 7.4 * GIB,
        nvme_read_p95_ms: 358.2,
        nvme_write_p95_ms: 90,
        nvme_read_device_p95_ms: 0.3,
      },
    },
  };
}

/** Writes a results file into `dir`: JSON of `value`, or `value` itself when it is text (a broken file). */
export function writeResults(dir: string, name: string, value: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof value === 'string' || Buffer.isBuffer(value) ? value : JSON.stringify(value));
  return f;
}

const tempDirs: string[] = [];
export function tempDir(prefix = 'kvb-store-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.push(d);
  return d;
}
export function removeTempDirs(): void {
  for (const d of tempDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}
