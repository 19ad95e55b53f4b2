import os from 'node:os';
import type { ModelSpec } from '../../../src-shared/domain/models.ts';
import { TIER_NAMES, type TierName } from '../../../src-shared/domain/tiers.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { bufferedLoopMessage, ramBackedMessage, type BufferedLoop } from '../../../src-shared/domain/hardware.ts';
import { entryBytes } from '../../../src-shared/domain/models.ts';
import {
  GIB,
  type DeviceIoSection,
  type KvbenchSection,
  type PreparationPhase,
  type LatencySummaryNs,
  type PercentilesMs,
  type QosLevelMetrics,
  type RunResults,
  type RunSummary,
  type StorageHealth,
  type StorageHealthCriterion,
  type TierBytes,
  type TimelinePoint,
  type EngineMemory,
  type TrialStatus,
  perSecondOver,
} from '../../../src-shared/domain/results.ts';
import { isTraceOnlyRun, type RunOptions } from '../../../src-shared/domain/run-options.ts';
import type { MultiTierCache } from '../cache/multi-tier-cache.ts';
import { assessDevicePageCache, MIN_DEVICE_READ_COVERAGE, type DeviceStatsReport } from '../metrics/device-stats.ts';
import type { LatencyHistogram } from '../metrics/latency-histogram.ts';
import type { FixedBuffers, MemorySample } from '../metrics/memory-usage.ts';
import type { RunRecorder } from '../metrics/run-recorder.ts';
import type { DirectionStats } from '../metrics/tier-stats.ts';
import type { TierAvailability } from '../tiers/tier-backend.ts';
import type { GpuTierReport } from '../tiers/gpu/gpu-tier.ts';
import type { VerifyFailure } from '../workload/request-processor.ts';
import { backlogNote, type BacklogFacts } from '../workload/backlog-watch.ts';
import { efficiencySection, type ProbeFileLimits } from './probe-limits.ts';

const PCTS = [
  ['p50', 50],
  ['p95', 95],
  ['p99', 99],
  ['p999', 99.9],
  ['p9999', 99.99],
] as const;

/** One preparatory phase: what it wrote, and how long it took (not part of the measured statistics). */
export interface PhaseFacts {
  entries: number;
  bytes: number;
  elapsedNs: number;
}

export interface PreparationFacts {
  ragIngestion: PhaseFacts | null;
  decodeOnlyPrepopulation: PhaseFacts | null;
  precondition: (PhaseFacts & { targetBytes: number; threads: number }) | null;
}

/** What ended the measured window. */
export type WindowCloser = 'duration' | 'max-requests' | 'workload-end' | 'autoscaler' | 'cancel' | 'error';

export interface RunFacts {
  options: RunOptions;
  model: ModelSpec;
  seed: number;
  startedAt: string;
  elapsedNs: number;
  status: TrialStatus;
  statusReason: string | null;
  digest: string;
  requestsIssued: number;
  cache: MultiTierCache;
  recorder: RunRecorder;
  timeline: TimelinePoint[];
  gpu: TierAvailability;
  gpuReport: GpuTierReport | null;
  cpuBudgetBytes: number;
  /** The CPU tier's peak held memory; null when it allocated none (absent, or trace-only mode). */
  cpuPeakHeldBytes: number | null;
  /** The CPU tier's arena and the chunks that found no room in it; null when it allocated none. */
  cpuArena: { arenaBytes: number; overflowChunks: number } | null;
  /** engine_health.memory's sources. */
  memory: { peak: MemorySample | null; fixedBuffers: FixedBuffers };
  storage: {
    capacityBytes: number;
    /** Free space of the cache directory's file system when the run began. */
    freeBytesAtStart: number;
    dir: string;
    directIo: boolean;
    directIoReason: string | null;
    fsyncPolicy: 'per-entry' | 'none';
    /** What held the storage tier's files in RAM ('tmpfs', 'loop0 on tmpfs' …); null otherwise and in trace-only mode. */
    ramFilesystem: string | null;
    /** The same as a chain of devices ('loop0 → /dev/shm/d.img on tmpfs'); null exactly when ramFilesystem is. */
    ramBackingChain: string | null;
    /** Loop devices under the directory that read their backing file through the page cache (loop/dio 0); empty when RAM-backed and in trace-only mode. */
    bufferedLoops: BufferedLoop[];
  };
  /** The cache directory's block device over the measured phase; null in trace-only mode (no storage I/O). */
  deviceIo: DeviceStatsReport | null;
  /** `--probe-result`: the device's probed limits. */
  probeLimits: ProbeFileLimits | null;
  window: { plannedNs: number; warmUpNs: number; startedUnixNs: number; closedBy: WindowCloser; requestsInFlight: number; requestsQueued: number; drainNs: number };
  eventLoopLagNs: { p50: number; p99: number; max: number };
  byteWorkers: { busyNs: number; wallNs: number; threads: number };
  /** The storage tier's I/O buffers in transparent huge pages, or why not; null without storage I/O. */
  ioBufferHugePages: { advised: boolean; reason: string | null } | null;
  ioDepth: number;
  chunkBytes: number;
  verify: { enabled: boolean; errors: number; failures: VerifyFailure[]; checked: Partial<Record<TierName, { chunks: number; bytes: number }>> };
  rag: { documents: number; chunks: number; ingestedBytes: number } | null;
  preparation: PreparationFacts;
  queueMaxDepth: number;
  backlog: BacklogFacts;
  configKeysNotApplied: string[];
  autoscaling: { events: unknown[]; timeline: { timestamp: number; throughput_tokens_per_sec: number; users: number }[]; summary: Record<string, unknown> } | null;
  workloadSource: Record<string, unknown>;
}

const ms = (ns: number): number => ns / 1e6;

function engineMemory(m: RunFacts['memory']): EngineMemory {
  const b = m.fixedBuffers;
  const p = m.peak;
  return {
    sampled_peak: p
      ? {
          rss_bytes: p.rssBytes,
          heap_used_bytes: p.heapUsedBytes,
          external_bytes: p.externalBytes,
          array_buffers_bytes: p.arrayBuffersBytes,
          byte_workers_heap_used_bytes: p.byteWorkersHeapUsedBytes,
        }
      : null,
    fixed_buffers: {
      cpu_tier_arena_bytes: b.cpuTierArenaBytes,
      storage_io_buffers_bytes: b.storageIoBuffersBytes,
      cpu_read_staging_bytes: b.cpuReadStagingBytes,
      payload_pool_bytes: b.payloadPoolBytes,
      gpu_staging_bytes: b.gpuStagingBytes,
      gpu_staging_pinned: b.gpuStagingPinned,
      total_bytes: b.cpuTierArenaBytes + b.storageIoBuffersBytes + b.cpuReadStagingBytes + b.payloadPoolBytes + b.gpuStagingBytes,
    },
  };
}

export function percentilesMs(h: LatencyHistogram): PercentilesMs {
  const s = h.summary();
  return { mean: ms(s.meanNs), p50: ms(s.p50Ns), p95: ms(s.p95Ns), p99: ms(s.p99Ns), p999: ms(s.p999Ns), p9999: ms(s.p9999Ns) };
}

export function latencySummaryNs(h: LatencyHistogram): LatencySummaryNs {
  const s = h.summary();
  return {
    count: s.count,
    mean_ns: s.meanNs,
    min_ns: s.minNs,
    max_ns: s.maxNs,
    p50_ns: s.p50Ns,
    p95_ns: s.p95Ns,
    p99_ns: s.p99Ns,
    p999_ns: s.p999Ns,
    p9999_ns: s.p9999Ns,
    sum_ns: s.sumNs,
    hdr: h.encode(),
  };
}

/** The reference's `{tier}_{op}_{pXX}_ms` keys, present only when that distribution has samples. */
function tierPercentileKeys(prefix: string, h: LatencyHistogram, out: Record<string, unknown>): void {
  if (h.count === 0) return;
  for (const [name, p] of PCTS) out[`${prefix}_${name}_ms`] = ms(h.percentileNs(p));
}

/** Why the storage read (write) criteria's numbers may not be the device's (null: they are). */
interface StorageCaveats {
  read: string | null;
  write: string | null;
}

const HEALTH_NOTE = 'kvbench tool criteria (the reference tool’s thresholds), not an MLPerf rule';

/** Why trace-only mode's results carry no storage verdict. */
export const TRACE_ONLY_NOT_ASSESSED = 'trace-only mode (--io-trace-log): no storage I/O happened, so there is no latency or bandwidth to judge';

export function storageHealth(
  f: { options: Pick<RunOptions, 'performanceProfile'> & Partial<Pick<RunOptions, 'ioTraceLog'>>; cache: Pick<MultiTierCache, 'tierStats' | 'hits'> },
  cs: Record<string, unknown>,
  elapsedNs: number,
  caveats: StorageCaveats,
): StorageHealth {
  // Its latencies are 0 by construction and its bytes never moved: a PASS would be made of nothing.
  if (isTraceOnlyRun(f.options)) {
    return { overall_status: 'N/A', criteria: [], passed_count: 0, total_count: 0, note: HEALTH_NOTE, not_assessed_reason: TRACE_ONLY_NOT_ASSESSED };
  }
  const caveat = caveats.read === null ? {} : { caveat: caveats.read };
  const writeCaveat = caveats.write === null ? {} : { caveat: caveats.write };
  const criteria: StorageHealthCriterion[] = [];
  const storage = f.cache.tierStats.get('storage');
  if (f.options.performanceProfile === 'latency') {
    const sw = storage?.write.deviceLatency.count ? storage.write.deviceLatency : storage?.write.latency;
    const sr = storage?.read.deviceLatency.count ? storage.read.deviceLatency : storage?.read.latency;
    const basis = (d: DirectionStats | undefined, h: LatencyHistogram | undefined) => (d && h === d.deviceLatency ? 'Device' : 'Total');
    if (sw && sw.count > 0) {
      const p95 = ms(sw.percentileNs(95));
      criteria.push({ name: `Storage Tier Write ${basis(storage?.write, sw)} P95 < 500ms`, target: 500, actual: p95, unit: 'ms', passed: p95 < 500, ...writeCaveat });
    }
    if (sr && sr.count > 0) {
      const p95 = ms(sr.percentileNs(95));
      criteria.push({ name: `Storage Tier Read ${basis(storage?.read, sr)} P95 < 200ms`, target: 200, actual: p95, unit: 'ms', passed: p95 < 200, ...caveat });
    }
    const cpu = f.cache.tierStats.get('cpu');
    if (cpu && cpu.read.latency.count + cpu.write.latency.count > 0) {
      const pooled = cpu.read.latency.copy();
      pooled.merge(cpu.write.latency);
      const p95 = ms(pooled.percentileNs(95));
      criteria.push({ name: 'CPU RAM P95 < 150ms', target: 150, actual: p95, unit: 'ms', passed: p95 < 150 });
    }
    const accesses = f.cache.hits.hits + f.cache.hits.misses;
    if (accesses > 0) {
      const rate = cs.cache_hit_rate as number;
      criteria.push({ name: 'Cache Hit Rate > 30%', target: 0.3, actual: rate, unit: 'ratio', passed: rate > 0.3 });
    }
  } else {
    const readBytes = storage?.read.bytes ?? 0;
    const writeBytes = storage?.write.bytes ?? 0;
    // The reference's numbers (1024³ bytes per second) under their true unit: it labels them GB/s.
    const readBw = (perSecondOver(readBytes, elapsedNs) ?? 0) / GIB;
    const writeBw = (perSecondOver(writeBytes, elapsedNs) ?? 0) / GIB;
    if (readBytes > 0 || writeBytes === 0) {
      criteria.push({ name: 'Storage KV Read Bandwidth', target: '>0', actual: readBw.toFixed(2), unit: 'GiB/s', passed: readBw > 0, ...caveat });
    }
    if (writeBytes > 0 || readBytes === 0) {
      criteria.push({ name: 'Storage KV Write Bandwidth', target: '>0', actual: writeBw.toFixed(2), unit: 'GiB/s', passed: writeBw > 0, ...writeCaveat });
    }
  }
  const passed = criteria.filter((c) => c.passed).length;
  return {
    overall_status: passed === criteria.length ? 'PASS' : 'FAIL',
    criteria,
    passed_count: passed,
    total_count: criteria.length,
    note: HEALTH_NOTE,
  };
}

function tierBytes(f: RunFacts, tier: TierName): TierBytes {
  const st = f.cache.tierStats.get(tier);
  const usage = f.cache.usage().find((u) => u.name === tier);
  const perSec = (b: number): number => perSecondOver(b, f.elapsedNs) ?? 0;
  return {
    read_bytes: st?.read.bytes ?? 0,
    write_bytes: st?.write.bytes ?? 0,
    read_ops: st?.read.ops ?? 0,
    write_ops: st?.write.ops ?? 0,
    read_bytes_per_sec: perSec(st?.read.bytes ?? 0),
    write_bytes_per_sec: perSec(st?.write.bytes ?? 0),
    demoted_in_bytes: st?.demotedInBytes ?? 0,
    demoted_out_bytes: st?.demotedOutBytes ?? 0,
    hit_read_bytes: st ? st.read.bytes - st.read.movedBytes : 0,
    evicted_entries: st?.evictedEntries ?? 0,
    evicted_bytes: st?.evictedBytes ?? 0,
    entries_at_end: usage?.entries ?? 0,
    used_bytes_at_end: usage?.usedBytes ?? 0,
  };
}

/** Entries demoted into `tier` from any tier above it. */
function demotionsInto(c: RunFacts['cache'], tier: TierName): number {
  let n = 0;
  for (const d of c.demotions.values()) if (d.to === tier) n += d.count;
  return n;
}

function cacheStats(f: RunFacts, caveats: StorageCaveats): Record<string, unknown> & { storage_health: StorageHealth } {
  const c = f.cache;
  const rec = f.recorder;
  const usage = new Map(c.usage().map((u) => [u.name, u]));
  const st = (t: TierName) => c.tierStats.get(t);
  const bytesOf = (t: TierName, dir: 'read' | 'write'): number => st(t)?.[dir].bytes ?? 0;
  const accesses = c.hits.hits + c.hits.misses;
  const cs: Record<string, unknown> = {
    cache_hit_rate: accesses > 0 ? c.hits.hits / accesses : 0,
    cache_hits: c.hits.hits,
    cache_misses: c.hits.misses,
    gpu_entries: usage.get('gpu')?.entries ?? 0,
    cpu_entries: usage.get('cpu')?.entries ?? 0,
    storage_entries: usage.get('storage')?.entries ?? 0,
    gpu_memory_used_gb: (usage.get('gpu')?.usedBytes ?? 0) / GIB,
    cpu_memory_used_gb: (usage.get('cpu')?.usedBytes ?? 0) / GIB,
    offloads_cpu: (st('cpu')?.placements ?? 0) + demotionsInto(c, 'cpu'),
    offloads_storage: (st('storage')?.placements ?? 0) + demotionsInto(c, 'storage'),
    storage_health: null,
    prefill_writes: rec.prefillWrites,
    decode_reads: rec.decodeReads,
  };
  // kvbench counts demotions in both tiers' bytes (the reference leaves them out): documented fix.
  for (const t of TIER_NAMES) cs[`tier_${t}_kv_bytes_written_gb`] = bytesOf(t, 'write') / GIB;
  for (const t of TIER_NAMES) cs[`tier_${t}_kv_bytes_read_gb`] = bytesOf(t, 'read') / GIB;
  for (const t of TIER_NAMES) {
    cs[`tier_${t}_read_bandwidth_gbps`] = (perSecondOver(bytesOf(t, 'read'), f.elapsedNs) ?? 0) / GIB;
    cs[`tier_${t}_write_bandwidth_gbps`] = (perSecondOver(bytesOf(t, 'write'), f.elapsedNs) ?? 0) / GIB;
  }
  cs.system_prompt_hits = c.hits.typeHits('system');
  cs.common_phrase_hits = c.hits.typeHits('common');
  cs.user_cache_hits = c.hits.typeHits('user');
  cs.multi_turn_hits = c.hits.typeHits('multi_turn');
  // The reference's totals are request-level (hits read, entries written): moves between tiers are
  // in the tier_* keys above and in kvbench.demotions / promotions, not here.
  const requestLevel = (dir: 'read' | 'write', field: 'bytes' | 'ops'): number =>
    TIER_NAMES.reduce((n, t) => {
      const d = st(t)?.[dir];
      return n + (d ? (field === 'bytes' ? d.bytes - d.movedBytes : d.ops - d.movedOps) : 0);
    }, 0);
  const totalRead = requestLevel('read', 'bytes');
  const totalWrite = requestLevel('write', 'bytes');
  cs.total_read_bytes = totalRead;
  cs.total_write_bytes = totalWrite;
  cs.total_read_gb = totalRead / GIB;
  cs.total_write_gb = totalWrite / GIB;
  cs.read_write_ratio = totalRead / Math.max(totalWrite, 1);
  cs.read_iops = requestLevel('read', 'ops');
  cs.write_iops = requestLevel('write', 'ops');
  const bpt = entryBytes(f.model, 1, f.options.tensorParallel);
  cs.storage_tokens_processed = bpt > 0 ? (bytesOf('storage', 'read') + bytesOf('storage', 'write')) / bpt : 0;
  // The older reference's phase keys, which the seeds' analysis calls primary.
  cs.prefill_bytes_written_gb = rec.prefillBytesWritten / GIB;
  cs.decode_bytes_read_gb = rec.decodeBytesRead / GIB;
  for (const t of TIER_NAMES) {
    const s = st(t);
    if (!s) continue;
    tierPercentileKeys(`${t}_read`, s.read.latency, cs);
    tierPercentileKeys(`${t}_write`, s.write.latency, cs);
  }
  // The tiers that split their time (storage: I/O in flight at the device; GPU: its own copies executing).
  for (const t of ['storage', 'gpu'] as const) {
    const s = st(t);
    if (!s) continue;
    tierPercentileKeys(`${t}_read_device`, s.read.deviceLatency, cs);
    tierPercentileKeys(`${t}_read_host`, s.read.hostLatency, cs);
    tierPercentileKeys(`${t}_write_device`, s.write.deviceLatency, cs);
    tierPercentileKeys(`${t}_write_host`, s.write.hostLatency, cs);
  }
  const result = cs as Record<string, unknown> & { storage_health: StorageHealth };
  result.storage_health = storageHealth(f, cs, f.elapsedNs, caveats);
  return result;
}

export function qosMetrics(recorder: RunRecorder): RunSummary['qos_metrics'] {
  const out = {} as RunSummary['qos_metrics'];
  for (const level of ['interactive', 'responsive', 'batch'] as const) {
    const q = recorder.qos.get(level);
    if (!q || q.latency.count === 0) {
      out[level] = { no_data: true };
      continue;
    }
    const s = q.latency.summary();
    const compliance = 1 - q.violations / s.count;
    const m: QosLevelMetrics = {
      total_requests: s.count,
      latency_ms: { mean: ms(s.meanNs), p50: ms(s.p50Ns), p95: ms(s.p95Ns), p99: ms(s.p99Ns), max: ms(s.maxNs) },
      sla: { target_p95_ms: q.targetP95Ms, actual_p95_ms: ms(s.p95Ns), compliance, met: compliance >= 0.95 },
    };
    out[level] = m;
  }
  return out;
}

function tierLatencies(f: RunFacts, pick: (d: { read: DirectionStats; write: DirectionStats }) => LatencyHistogram): Partial<Record<TierName, LatencySummaryNs>> {
  const out: Partial<Record<TierName, LatencySummaryNs>> = {};
  for (const t of TIER_NAMES) {
    const s = f.cache.tierStats.get(t);
    if (s && pick(s).count > 0) out[t] = latencySummaryNs(pick(s));
  }
  return out;
}

function gpuDescription(f: RunFacts): KvbenchSection['tiers']['gpu'] {
  const base = { present: f.gpu.present, budget_bytes: f.gpu.budgetBytes, reason: f.gpu.reason };
  const r = f.gpuReport;
  if (!r) return base;
  return {
    ...base,
    requested_bytes: r.requestedBytes,
    devices: r.devices.map((d) => ({
      index: d.index,
      model: d.name,
      total_memory_bytes: d.totalMemoryBytes,
      pci_bus_id: d.pciBusId,
      reserved_bytes: d.reservedBytes,
      shortfall: d.shortfall,
    })),
    driver_version: r.driverVersion,
    cuda_version: r.cudaVersion,
    driver_library: r.driverLibrary,
    staging_pinned: r.stagingPinned,
    staging_reason: r.stagingReason,
    staging_bytes: r.stagingBytes,
    staging_slots: r.stagingSlots,
    staging_slot_acquisitions: r.stagingWait.acquisitions,
    staging_slot_waits: r.stagingWait.waits,
    staging_slot_wait_ns: r.stagingWait.waitNs,
    staging_slot_max_wait_ns: r.stagingWait.maxWaitNs,
    copy_threads: r.copyThreads,
    chunk_bytes: r.chunkBytes,
    h2d_copy_bytes: r.h2d.bytes,
    h2d_copies: r.h2d.copies,
    h2d_copy_bandwidth_bytes_per_sec: r.h2d.perCopyBytesPerSec,
    h2d_per_copy_bytes_per_sec: r.h2d.perCopyBytesPerSec,
    h2d_busy_ns: r.h2d.busyNs,
    h2d_link_busy_bytes_per_sec: r.h2d.linkBusyBytesPerSec,
    // The older d2h_* fields keep their definition (every device→host copy, demotions included).
    d2h_copy_bytes: r.d2h.bytes + r.demotionD2h.bytes,
    d2h_copies: r.d2h.copies + r.demotionD2h.copies,
    d2h_copy_bandwidth_bytes_per_sec:
      r.d2h.copyNs + r.demotionD2h.copyNs > 0 ? ((r.d2h.bytes + r.demotionD2h.bytes) / (r.d2h.copyNs + r.demotionD2h.copyNs)) * 1e9 : null,
    d2h_staging_copy_bytes: r.d2h.bytes,
    d2h_staging_copies: r.d2h.copies,
    d2h_staging_per_copy_bytes_per_sec: r.d2h.perCopyBytesPerSec,
    d2h_staging_busy_ns: r.d2h.busyNs,
    d2h_staging_link_busy_bytes_per_sec: r.d2h.linkBusyBytesPerSec,
    demotion_d2h_copy_bytes: r.demotionD2h.bytes,
    demotion_d2h_copies: r.demotionD2h.copies,
    demotion_d2h_per_copy_bytes_per_sec: r.demotionD2h.perCopyBytesPerSec,
    demotion_d2h_busy_ns: r.demotionD2h.busyNs,
    demotion_d2h_link_busy_bytes_per_sec: r.demotionD2h.linkBusyBytesPerSec,
  };
}

/**
 * A RAM-backed directory (tmpfs, ramfs) has no device at all: its reads are flagged whatever the
 * I/O mode (tmpfs takes O_DIRECT since Linux 6.6, and it would still be RAM). A loop device that
 * reads its backing file through the page cache is flagged as buffered I/O is: what the drive read
 * cannot clear it (other processes' reads count there too), so the counters are only stated.
 */
function deviceIoSection(f: RunFacts, storage: TierBytes): DeviceIoSection {
  const section = deviceCountersSection(f, storage);
  const ram = f.storage.ramFilesystem;
  if (f.deviceIo === null || storage.read_bytes === 0) return section;
  if (ram !== null) return { ...section, flagged: true, flag_reason: `${ramBackedMessage(ram)}: the storage reads came from memory` };
  const loops = f.storage.bufferedLoops;
  if (loops.length === 0) return section;
  // Below the loop, the disk holding its file: what it read of the storage tier's reads, for the record.
  const drive = section.via == null || section.read_coverage === null ? '' : `; ${section.device} read ${(section.read_coverage * 100).toFixed(1)} % of the ${storage.read_bytes} bytes the storage tier reported reading`;
  return { ...section, flagged: true, flag_reason: `${bufferedLoopMessage(loops)}${drive}` };
}

/** What the directory's own device moved when the counters judged are those of the device below it (a loop's backing disk). */
function viaSection(report: DeviceStatsReport): DeviceIoSection['via'] {
  if (report.via === null) return null;
  const io = report.viaIo;
  return { device: report.via.name, read_bytes: io?.readBytes ?? null, write_bytes: io?.writeBytes ?? null, read_ios: io?.readIos ?? null, write_ios: io?.writeIos ?? null };
}

function deviceCountersSection(f: RunFacts, storage: TierBytes): DeviceIoSection {
  const report = f.deviceIo;
  const base = { min_read_coverage: MIN_DEVICE_READ_COVERAGE };
  if (report === null || !report.available || report.io === null) {
    const reason = report === null ? 'trace-only mode: no storage I/O' : (report.reason ?? 'no device counters');
    // Trace-only mode reads no storage: nothing to judge.
    const pc = report === null ? { flagged: false, reason: null } : assessDevicePageCache({ engineReadBytes: storage.read_bytes, engineWriteBytes: storage.write_bytes, device: report, directIo: f.storage.directIo });
    return {
      ...base, available: false, reason, device: report?.device?.name ?? null, parent_device: report?.device?.parent?.name ?? null,
      read_bytes: null, write_bytes: null, read_ios: null, write_ios: null, flushes: null, busy_ratio: null, avg_queue_depth: null,
      read_coverage: null, write_coverage: null, process_read_bytes: null, process_read_coverage: null,
      via: report === null ? null : viaSection(report),
      flagged: pc.flagged,
      flag_reason: pc.reason,
    };
  }
  const io = report.io;
  const pc = assessDevicePageCache({ engineReadBytes: storage.read_bytes, engineWriteBytes: storage.write_bytes, device: report, directIo: f.storage.directIo });
  return {
    ...base,
    available: true,
    reason: null,
    device: io.device,
    parent_device: report.parentIo?.device ?? null,
    read_bytes: io.readBytes,
    write_bytes: io.writeBytes,
    read_ios: io.readIos,
    write_ios: io.writeIos,
    flushes: io.flushes,
    busy_ratio: io.elapsedNs > 0 ? Math.min(1, (io.ioBusyMs * 1e6) / io.elapsedNs) : null,
    avg_queue_depth: io.elapsedNs > 0 ? (io.weightedIoMs * 1e6) / io.elapsedNs : null,
    read_coverage: pc.readCoverage,
    write_coverage: pc.writeCoverage,
    process_read_bytes: report.processReadBytes,
    process_read_coverage: pc.processReadCoverage,
    via: viaSection(report),
    flagged: pc.flagged,
    flag_reason: pc.reason,
  };
}

function phaseSection(p: PhaseFacts | null): PreparationPhase | null {
  if (p === null) return null;
  return { entries: p.entries, bytes_written: p.bytes, elapsed_ns: p.elapsedNs, write_bytes_per_sec: perSecondOver(p.bytes, p.elapsedNs) ?? 0 };
}

function preparationSection(f: RunFacts): KvbenchSection['preparation'] {
  const pc = f.preparation.precondition;
  return {
    rag_ingestion: phaseSection(f.preparation.ragIngestion),
    decode_only_prepopulation: phaseSection(f.preparation.decodeOnlyPrepopulation),
    precondition: pc === null ? null : { ...phaseSection(pc)!, target_bytes: pc.targetBytes, threads: pc.threads },
  };
}

/** Lookups of one kind of shared entry: hits, misses, their hit rate and `extra`; null when none was made. */
function lookupCounts<T extends object>(hits: number, misses: number, extra: T): ({ hits: number; misses: number; hit_rate: number } & T) | null {
  return hits + misses > 0 ? { hits, misses, hit_rate: hits / (hits + misses), ...extra } : null;
}

function kvbenchSection(f: RunFacts): KvbenchSection {
  const rec = f.recorder;
  const tb = Object.fromEntries(TIER_NAMES.map((t) => [t, tierBytes(f, t)])) as Record<TierName, TierBytes>;
  const deviceIo = deviceIoSection(f, tb.storage);
  const demotion: Record<string, LatencySummaryNs> = {};
  const demotions: Record<string, { count: number; bytes: number }> = {};
  for (const [k, d] of f.cache.demotions) {
    demotions[k] = { count: d.count, bytes: d.bytes };
    demotion[k] = latencySummaryNs(d.latency);
  }
  const promotions: Record<string, { count: number; bytes: number; latency: LatencySummaryNs }> = {};
  for (const [k, p] of f.cache.promotions) if (p.count > 0) promotions[k] = { count: p.count, bytes: p.bytes, latency: latencySummaryNs(p.latency) };
  const cpuPresent = f.cpuBudgetBytes > 0;
  return {
    version: KVBENCH_VERSION,
    status: f.status,
    status_reason: f.statusReason,
    effective_seed: f.seed,
    request_stream_digest: f.digest,
    requests_issued: f.requestsIssued,
    requests_failed: rec.requestsFailed,
    started_at: f.startedAt,
    rank: f.options.rank === null ? null : { rank: f.options.rank, world_size: f.options.worldSize, host: os.hostname() },
    elapsed_ns: f.elapsedNs,
    model: {
      key: f.model.key,
      bytes_per_token: entryBytes(f.model, 1, 1),
      tensor_parallel: f.options.tensorParallel,
      entry_bytes_per_token: entryBytes(f.model, 1, f.options.tensorParallel),
    },
    tiers: {
      gpu: gpuDescription(f),
      cpu: {
        present: cpuPresent,
        budget_bytes: f.cpuBudgetBytes,
        reason: cpuPresent ? null : '--cpu-mem-gb 0 disables the CPU tier',
        peak_held_bytes: f.cpuPeakHeldBytes,
        arena_bytes: f.cpuArena?.arenaBytes ?? null,
        arena_overflow_chunks: f.cpuArena?.overflowChunks ?? null,
      },
      storage: {
        present: true,
        budget_bytes: f.storage.capacityBytes,
        reason: null,
        free_bytes_at_start: f.storage.freeBytesAtStart,
        dir: f.storage.dir,
        direct_io: f.storage.directIo,
        direct_io_reason: f.storage.directIoReason,
        fsync_policy: f.storage.fsyncPolicy,
        ram_backed: f.storage.ramFilesystem !== null,
        ram_filesystem: f.storage.ramFilesystem,
        ram_backing_chain: f.storage.ramBackingChain,
        buffered_loops: f.storage.bufferedLoops.map((l) => ({ name: l.name, backing_file: l.backingFile, backing_filesystem: l.backingFilesystem })),
        // Trace-only mode reads nothing, from the page cache or anywhere (its direct_io is off all the same).
        reads_may_hit_page_cache:
          !isTraceOnlyRun(f.options) &&
          (!f.storage.directIo || deviceIo.flagged || f.storage.ramFilesystem !== null || f.storage.bufferedLoops.length > 0),
      },
    },
    tier_bytes: tb,
    device_io: deviceIo,
    efficiency: f.probeLimits === null ? null : efficiencySection(f.probeLimits, tb.storage, deviceIo, { ioChunkBytes: f.chunkBytes, ioDepth: f.ioDepth, ramFilesystem: f.storage.ramFilesystem }),
    measured_window: {
      planned_ns: f.window.plannedNs,
      warm_up_ns: f.window.warmUpNs,
      started_unix_ns: f.window.startedUnixNs,
      elapsed_ns: f.elapsedNs,
      closed_by: f.window.closedBy,
      requests_in_flight_at_close: f.window.requestsInFlight,
      requests_queued_at_close: f.window.requestsQueued,
      drain_ns: f.window.drainNs,
    },
    preparation: preparationSection(f),
    primary: {
      decode_bytes_read: rec.decodeBytesRead,
      prefill_bytes_written: rec.prefillBytesWritten,
      wall_clock_throughput_tokens_per_sec: perSecondOver(rec.tokensGenerated, f.elapsedNs) ?? 0,
      storage_read_bytes_per_sec: tb.storage.read_bytes_per_sec,
      storage_write_bytes_per_sec: tb.storage.write_bytes_per_sec,
    },
    latency: {
      end_to_end: latencySummaryNs(rec.endToEnd),
      queue_wait: latencySummaryNs(rec.queueWait),
      issue_lateness: latencySummaryNs(rec.issueLateness),
      storage_io_per_request: latencySummaryNs(rec.storageIo),
      generation: latencySummaryNs(rec.generation),
      prefill: latencySummaryNs(rec.prefill),
      decode: latencySummaryNs(rec.decode),
      tier_read: tierLatencies(f, (d) => d.read.latency),
      tier_write: tierLatencies(f, (d) => d.write.latency),
      tier_read_ns_per_mib: tierLatencies(f, (d) => d.read.nsPerMiB),
      tier_write_ns_per_mib: tierLatencies(f, (d) => d.write.nsPerMiB),
      demotion,
    },
    demotions,
    promotion: { policy: f.options.promotion, moves: promotions, failures: f.cache.promotionFailures, first_failure: f.cache.firstPromotionError },
    cache: {
      placement_failures: f.cache.placementFailures,
      system_prompt_writes: rec.systemPromptWrites,
      system_prompt_entries: lookupCounts(rec.systemPromptEntryHits, rec.systemPromptEntryMisses, { bytes_saved: rec.systemPromptEntryBytesSaved }),
      rag: f.rag
        ? { documents: f.rag.documents, chunks: f.rag.chunks, ingested_bytes: f.rag.ingestedBytes, retrievals: rec.ragRetrievals, chunk_reads: rec.ragChunkReads }
        : null,
      prefix_blocks: lookupCounts(rec.prefixBlockHits, rec.prefixBlockMisses, { bytes_reused: rec.prefixBlockBytesReused }),
    },
    verification: {
      enabled: f.verify.enabled,
      checked_chunks: Object.values(f.verify.checked).reduce((n, c) => n + c.chunks, 0),
      checked_bytes: Object.values(f.verify.checked).reduce((n, c) => n + c.bytes, 0),
      checked_bytes_by_tier: Object.fromEntries(Object.entries(f.verify.checked).map(([tier, c]) => [tier, c.bytes])),
      corrupt_chunks: f.verify.errors,
      failures: f.verify.failures.map((v) => ({ key: v.key, tier: v.tier, offset_bytes: v.offsetBytes })),
    },
    raw_latency_lists: rec.rawLatencies.facts(),
    queue: {
      max_depth: f.queueMaxDepth,
      backlog_cap_requests: f.backlog.capRequests,
      backlog_cap_reached: f.backlog.capReached,
      queueing_bound: f.backlog.queueingBound,
      workers_at_close: f.backlog.workersAtClose,
      issue_lateness_max_ns: f.backlog.issueLatenessMaxNs,
      note: backlogNote(f.backlog, { maxDepth: f.queueMaxDepth, queuedAtClose: f.window.requestsQueued }, f.requestsIssued, rec.requestsCompleted),
    },
    workers: {
      busy_requests: rec.busy.requests,
      busy_ns: {
        total: rec.busy.totalNs,
        cache_io: rec.busy.cacheIoNs,
        cache_io_by_tier: { ...rec.busy.cacheIoByTierNs },
        generation: rec.busy.generationNs,
        other: Math.max(0, rec.busy.totalNs - rec.busy.cacheIoNs - rec.busy.generationNs),
      },
    },
    config_keys_not_applied: f.configKeysNotApplied,
    run_options: f.options as unknown as Record<string, unknown>,
    workload_source: f.workloadSource,
    autoscaling_timeline: f.autoscaling ? f.autoscaling.timeline : null,
    engine_health: {
      event_loop_lag_ns: f.eventLoopLagNs,
      byte_workers: { threads: f.byteWorkers.threads, utilisation: f.byteWorkers.wallNs > 0 ? f.byteWorkers.busyNs / (f.byteWorkers.wallNs * Math.max(1, f.byteWorkers.threads)) : 0 },
      io_depth: f.ioDepth,
      io_chunk_bytes: f.chunkBytes,
      uv_threadpool_size: process.env.UV_THREADPOOL_SIZE ? Number(process.env.UV_THREADPOOL_SIZE) : null,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
      io_buffer_huge_pages: f.ioBufferHugePages,
      memory: engineMemory(f.memory),
    },
    timeline: f.timeline,
    units:
      'bytes and nanoseconds (bytes_per_sec: per wall-clock second of the measured phase; autoscaling_timeline, the reference\'s throughput_timeline, in seconds); ' +
      'latency.tier_*_ns_per_mib: each entry\'s latency ÷ its size in MiB, over entries of at least one I/O chunk (engine_health.io_chunk_bytes); ' +
      'the reference\'s keys above keep the reference\'s units: GiB ("gb"), GiB/s ("gbps"), milliseconds in keys ending _ms, ' +
      'seconds in the raw lists (*_latencies), throughput_timeline timestamps, elapsed_time, total_storage_io_time and total_*_latency; ' +
      'throughput_tokens_per_sec is cumulative in throughput_timeline and autoscaling_timeline (all tokens so far ÷ the time so far, as the reference\'s timeline) ' +
      'but the interval\'s own in summary.autoscaling_stats (its tokens ÷ its length, what the autoscaler decided on)',
  };
}

/**
 * A read criterion "passed" by the page cache says nothing about the device: the caveat says so
 * beside it. On a RAM-backed filesystem the writes went to memory too, and so did they through a
 * buffered loop device when nothing flushed them (--fsync-policy none): with an fdatasync per entry
 * the loop writes its file's dirty pages to the drive before the write completes.
 */
function storageCaveats(f: RunFacts, kv: KvbenchSection): StorageCaveats {
  const d = kv.device_io;
  // Flagged only where reads were made and the device did not serve them (never in trace-only runs).
  const read = kv.tier_bytes.storage.read_bytes === 0 || !d.flagged ? null : `not the device's number: ${d.flag_reason ?? 'reads may have been served by the page cache'}`;
  const ram = f.storage.ramFilesystem;
  const loops = f.storage.bufferedLoops;
  const writesHeld = ram !== null ? ramBackedMessage(ram) : loops.length > 0 && f.storage.fsyncPolicy === 'none' ? `${bufferedLoopMessage(loops)}; nothing flushed the writes (--fsync-policy none)` : null;
  const write = writesHeld === null || kv.tier_bytes.storage.write_bytes === 0 ? null : `not the device's number: ${writesHeld}`;
  return { read, write };
}

/**
 * The reference's throughput_timeline: at every monitor interval (the autoscaler's, else each
 * second) the seconds since the measured phase began and the tokens generated so far ÷ those
 * seconds. Autoscaled runs keep the autoscaler's own samples; every other run takes kvbench's
 * per-second timeline, whose interval rates add back up to the tokens so far.
 */
function throughputTimeline(f: RunFacts): RunResults['throughput_timeline'] {
  if (f.autoscaling) return f.autoscaling.timeline.map((t) => ({ timestamp: t.timestamp, throughput_tokens_per_sec: t.throughput_tokens_per_sec }));
  let tokens = 0;
  return f.timeline.map((p) => {
    tokens += (p.generated_tokens_per_sec * p.interval_ns) / 1e9;
    return { timestamp: p.elapsed_ns / 1e9, throughput_tokens_per_sec: perSecondOver(Math.round(tokens), p.elapsed_ns) ?? 0 };
  });
}

/** Assembles the results JSON: the reference's keys and meanings, plus the kvbench section. */
export function buildResults(f: RunFacts): RunResults {
  const rec = f.recorder;
  const elapsedS = f.elapsedNs / 1e9;
  const raw = rec.rawLatencies.lists();
  const results: RunResults = {
    requests_completed: rec.requestsCompleted,
    total_tokens_generated: rec.tokensGenerated,
    total_storage_io_latency: rec.storageNsTotal / 1e9,
    total_generation_latency: rec.generationNsTotal / 1e9,
    end_to_end_latencies: raw.endToEndS,
    storage_latencies: raw.storageS,
    generation_latencies: raw.generationS,
    throughput_timeline: throughputTimeline(f),
    prefill_latencies: raw.prefillS,
    decode_latencies: raw.decodeS,
    multi_turn_cache_hits: rec.multiTurnHits,
    multi_turn_cache_misses: rec.multiTurnMisses,
    seed: f.options.seed,
    kvbench: kvbenchSection(f),
  };
  if (rec.requestsCompleted > 0) {
    const storageS = rec.storageNsTotal / 1e9;
    results.summary = {
      total_requests: rec.requestsCompleted,
      total_tokens: rec.tokensGenerated,
      elapsed_time: elapsedS,
      avg_throughput_tokens_per_sec: perSecondOver(rec.tokensGenerated, f.elapsedNs) ?? 0,
      total_storage_io_time: storageS,
      storage_throughput_tokens_per_sec: storageS > 0 ? rec.tokensGenerated / storageS : 0,
      requests_per_second: perSecondOver(rec.requestsCompleted, f.elapsedNs) ?? 0,
      end_to_end_latency_ms: percentilesMs(rec.endToEnd),
      storage_io_latency_ms: percentilesMs(rec.storageIo),
      generation_latency_ms: percentilesMs(rec.generation),
      cache_stats: cacheStats(f, storageCaveats(f, results.kvbench)),
      qos_metrics: qosMetrics(f.recorder),
      prefix_cache_stats: f.options.disablePrefixCaching
        ? {}
        : {
            // The reference's meanings, per completed request: a system prompt detected or not. Whether
            // its entry was cached is kvbench.cache.system_prompt_entries.
            prefix_hits: rec.prefixHits,
            prefix_misses: rec.prefixMisses,
            system_prompt_reuse: rec.prefixHits,
            common_phrase_reuse: 0,
            bytes_saved: rec.prefixBytesSaved,
          },
      autoscaling_stats: f.autoscaling ? f.autoscaling.events : [],
      autoscaling_summary: f.autoscaling ? f.autoscaling.summary : null,
      multi_turn_stats: {
        cache_hits: rec.multiTurnHits,
        cache_misses: rec.multiTurnMisses,
        hit_rate: rec.multiTurnHits / Math.max(rec.multiTurnHits + rec.multiTurnMisses, 1),
      },
    };
  }
  return results;
}
