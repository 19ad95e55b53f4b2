// The raw-limit probe: what the device behind a directory sustains for sequential direct reads and
// writes at the engine's block size and concurrency, with nothing else in the way (no payload
// generation, no cache logic, no per-entry open/close). Every kvbench result can then be stated
// as a share of this limit ("the engine moved 5.1 GB/s; this device's limit here is 5.4 GB/s").
//
// Shape, like fio's `--rw=write|read --direct=1 --bs=<chunk> --ioengine=psync --numjobs=<depth>`:
// `ioDepth` lanes, each owning one file and one page-aligned buffer, each with one I/O in flight,
// sequential through its file and wrapping around at its end. Phases are time-bounded. The write
// phase ends with an fdatasync of every file, inside the timed phase (so the device's volatile
// cache cannot flatter it). The buffers are filled with random bytes once (like fio without
// refill_buffers): the probe measures the device, not payload generation.
//
// I/O goes through libuv's thread pool: the process must start with UV_THREADPOOL_SIZE ≥ ioDepth
// (the probe command starts the probe in its own process for that reason); fewer threads cap the
// I/Os really in flight, and the result says so.

import { randomBytes, randomFillSync } from 'node:crypto';
import { constants as fsConstants, promises as fsp } from 'node:fs';
import path from 'node:path';
import { KvbenchError } from '../../../src-shared/domain/errors.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { bufferedLoopMessage, ramBackedMessage } from '../../../src-shared/domain/hardware.ts';
import { AlignedSlab } from '../io/aligned-slab.ts';
import { DIRECT_IO_ALIGNMENT_BYTES, freeSpaceBytes, probeDirectIo } from '../io/direct-io.ts';
import { storageBehindDir } from '../io/ram-filesystem.ts';
import { assessDevicePageCache, DeviceStatsSampler, type DeviceStatsReport } from '../metrics/device-stats.ts';
import { LatencyHistogram } from '../metrics/latency-histogram.ts';
import { removeDeadOwnersRunDirs } from '../tiers/run-dir-ownership.ts';
import {
  DEFAULT_PROBE_FREE_SPACE_SHARE,
  DEFAULT_PROBE_MAX_BYTES,
  validateProbeOptions,
  type ProbeOptions,
  type ProbePhaseName,
} from './probe-options.ts';
import type { ProbeDeviceIo, ProbeLatencyNs, ProbePhaseResult, ProbeProgress, ProbeResult } from './probe-protocol.ts';

const MIB = 1024 * 1024;
/** Prefix of the probe's own working directory; the pid lets a host remove it after a crash. */
export const PROBE_DIR_PREFIX = 'kvbench-probe-';

export interface ProbeContext {
  signal?: AbortSignal;
  onProgress?: (p: ProbeProgress) => void;
  /** Progress every this many ms (default 500). */
  progressIntervalMs?: number;
}

function now(): bigint {
  return process.hrtime.bigint();
}

function latencyOf(h: LatencyHistogram): ProbeLatencyNs {
  const s = h.summary();
  return { count: s.count, mean_ns: s.meanNs, p50_ns: s.p50Ns, p95_ns: s.p95Ns, p99_ns: s.p99Ns, max_ns: s.maxNs };
}

function deviceOf(report: DeviceStatsReport): ProbeDeviceIo | null {
  if (!report.available || report.io === null) return null;
  const io = report.io;
  return {
    name: io.device,
    read_bytes: io.readBytes,
    write_bytes: io.writeBytes,
    read_ios: io.readIos,
    write_ios: io.writeIos,
    utilisation: io.elapsedNs > 0 ? Math.min(1, (io.ioBusyMs * 1e6) / io.elapsedNs) : 0,
  };
}

interface Lane {
  index: number;
  file: string;
  fh: fsp.FileHandle;
  buffer: Buffer;
  /** Bytes of the file that hold written data (what a read phase may read). */
  extentBytes: number;
}

/** Default size of the probe's files: min(8 GiB, 20 % of the free space), whole chunks per lane. */
export function defaultProbeBytes(freeBytes: number): number {
  return Math.min(DEFAULT_PROBE_MAX_BYTES, Math.floor(freeBytes * DEFAULT_PROBE_FREE_SPACE_SHARE));
}

/** Bytes per lane's file: the size split over the lanes, in whole chunks, at least one chunk. */
export function laneFileBytes(totalBytes: number, lanes: number, chunkBytes: number): number {
  return Math.max(1, Math.floor(totalBytes / lanes / chunkBytes)) * chunkBytes;
}

/**
 * Runs the probe in `opts.dir` and returns its result; removes every file it created, also when
 * it fails or is cancelled. Throws KvbenchError for bad options, a directory it cannot use, too
 * little free space, or `directIo: 'on'` where the filesystem refuses O_DIRECT.
 */
export async function runRawLimitProbe(rawOptions: unknown, ctx: ProbeContext = {}): Promise<ProbeResult> {
  const v = validateProbeOptions(rawOptions);
  if (!v.ok) throw new KvbenchError('VALIDATION', `Invalid probe options:\n  ${v.errors.join('\n  ')}`);
  const o: ProbeOptions = v.options;
  const baseDir = path.resolve(o.dir);
  try {
    const st = await fsp.stat(baseDir);
    if (!st.isDirectory()) throw new KvbenchError('TARGET_NOT_WRITABLE', `--dir is not a directory: ${baseDir}`);
  } catch (err) {
    if (err instanceof KvbenchError) throw err;
    throw new KvbenchError('TARGET_NOT_WRITABLE', `cannot use --dir ${baseDir}: ${(err as Error).message}`);
  }
  const chunkBytes = o.ioChunkMib * MIB;
  const lanes = o.ioDepth;
  // Run directories that ended kvbench engines left hold space the probe's files are sized by.
  const removedRunDirs = await removeDeadOwnersRunDirs(baseDir);
  const freeBytes = await freeSpaceBytes(baseDir);
  const wantedBytes = o.sizeBytes ?? defaultProbeBytes(freeBytes);
  const fileBytes = laneFileBytes(wantedBytes, lanes, chunkBytes);
  if (fileBytes * lanes > freeBytes * 0.9) {
    throw new KvbenchError(
      'INSUFFICIENT_SPACE',
      `the probe needs ${((fileBytes * lanes) / 1024 ** 3).toFixed(2)} GiB (${lanes} lanes × ${fileBytes / MIB} MiB) ` +
        `but ${baseDir} has ${(freeBytes / 1024 ** 3).toFixed(2)} GiB free: lower --io-depth, --io-chunk-mib or --size-gib`,
    );
  }

  const warnings: string[] = [];
  if (removedRunDirs.length > 0) warnings.push(`removed run directories left by ended kvbench processes: ${removedRunDirs.join(', ')}`);
  const uvThreads = process.env.UV_THREADPOOL_SIZE ? Number(process.env.UV_THREADPOOL_SIZE) : null;
  if ((uvThreads ?? 4) < lanes) {
    warnings.push(`UV_THREADPOOL_SIZE is ${uvThreads ?? '4 (default)'}, fewer than the ${lanes} I/Os meant to be in flight: at most ${uvThreads ?? 4} were`);
  }

  let direct: { enabled: boolean; reason: string | null };
  if (o.directIo === 'off') {
    direct = { enabled: false, reason: 'direct I/O turned off (--direct-io off)' };
  } else {
    const p = await probeDirectIo(baseDir);
    if (p.supported && p.logicalBlockBytes <= DIRECT_IO_ALIGNMENT_BYTES) direct = { enabled: true, reason: null };
    else {
      const reason = p.reason ?? `logical block size ${p.logicalBlockBytes} exceeds ${DIRECT_IO_ALIGNMENT_BYTES} bytes`;
      if (o.directIo === 'on') throw new KvbenchError('DIRECT_IO_UNSUPPORTED', `direct I/O was required but ${baseDir} does not support it: ${reason}`);
      direct = { enabled: false, reason };
    }
  }
  if (!direct.enabled) warnings.push(`buffered I/O (${direct.reason}): read rates may be the page cache's, not the device's`);
  const behind = await storageBehindDir(baseDir);
  const ram = behind.ram?.backing ?? null;
  if (ram !== null) warnings.push(`${ramBackedMessage(ram)}: these rates are RAM's, direct I/O or not`);
  // A loop reading its file through the page cache: the read rate may be RAM's; the writes, flushed
  // by the phase's closing fdatasync, reach the drive.
  const loops = behind.bufferedLoops;
  if (loops.length > 0) warnings.push(`${bufferedLoopMessage(loops)}: the read rate may be RAM's, direct I/O or not`);

  // Below a loop device, the disk holding its file: the loop's own counters count page-cache hits too.
  const sampler = DeviceStatsSampler.forDirectory(baseDir, {}, behind.servedBy);
  const deviceInfo = sampler.resolution.ok ? sampler.resolution.device : null;
  const deviceReason = sampler.resolution.ok ? null : sampler.resolution.reason;

  const workDir = path.join(baseDir, `${PROBE_DIR_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  await fsp.mkdir(workDir);
  const slab = new AlignedSlab(chunkBytes, lanes);
  const open: Lane[] = [];
  const phases: ProbeResult['phases'] = {};
  const startedAt = new Date().toISOString();
  let cancelled = false;
  try {
    const flags = fsConstants.O_RDWR | fsConstants.O_CREAT | fsConstants.O_EXCL | (direct.enabled ? fsConstants.O_DIRECT : 0);
    for (let i = 0; i < lanes; i++) {
      const slot = slab.tryAcquire();
      if (slot === null) throw new Error('probe: slab exhausted');
      // Incompressible bytes, once: the probe measures the device, not payload generation.
      randomFillSync(slot.buffer);
      const file = path.join(workDir, `lane-${i}.bin`);
      const fh = await fsp.open(file, flags, 0o600);
      open.push({ index: i, file, fh, buffer: slot.buffer.subarray(0, chunkBytes), extentBytes: 0 });
    }
    const order: ProbePhaseName[] = o.phases.includes('write') ? ['write', ...o.phases.filter((p) => p !== 'write')] : [...o.phases];
    for (const phase of order) {
      if (ctx.signal?.aborted) {
        cancelled = true;
        break;
      }
      if (phase === 'read' && open.some((l) => l.extentBytes === 0)) {
        // Nothing written yet (a read-only probe): lay the files out first, untimed.
        await runPhase('write', open, { ...o, durationS: Number.POSITIVE_INFINITY }, chunkBytes, fileBytes, null, ctx, 'preparing', true);
      }
      const r = await runPhase(phase, open, o, chunkBytes, fileBytes, sampler, ctx, phase, false);
      if (phase === 'read') {
        const pc = assessDevicePageCache({ engineReadBytes: r.bytes, engineWriteBytes: 0, device: r.deviceReport, directIo: direct.enabled });
        r.process_read_coverage = pc.processReadCoverage;
        // RAM-backed: no device at all, whatever the counters (none) and the I/O mode say. A buffered
        // loop: flagged as buffered I/O is, whatever the drive's counters (every process's) say.
        r.page_cache_suspected = pc.flagged || ram !== null || loops.length > 0;
        r.page_cache_reason = ram !== null ? `${ramBackedMessage(ram)}: the reads came from memory` : loops.length > 0 ? bufferedLoopMessage(loops) : pc.reason;
      }
      const { deviceReport: _unused, ...result } = r;
      phases[phase] = result;
      if (r.cancelled) {
        cancelled = true;
        break;
      }
    }
  } finally {
    for (const lane of open) {
      await lane.fh.close().catch(() => undefined);
      await fsp.unlink(lane.file).catch(() => undefined);
    }
    await fsp.rmdir(workDir).catch(() => undefined);
  }
  for (const [name, p] of Object.entries(phases)) {
    if (p.page_cache_suspected && ram === null && loops.length === 0) warnings.push(`${name}: ${p.page_cache_reason}`);
    if (p.wraps > 0 && !direct.enabled && name === 'read') {
      warnings.push(`${name}: the files were read ${p.wraps} time(s) over with buffered I/O; later passes can be served from the page cache`);
    }
  }
  return {
    kind: 'kvbench-probe',
    version: KVBENCH_VERSION,
    status: cancelled ? 'cancelled' : 'complete',
    started_at: startedAt,
    dir: baseDir,
    device: deviceInfo,
    device_reason: deviceReason,
    direct_io: direct.enabled,
    direct_io_reason: direct.reason,
    io_chunk_bytes: chunkBytes,
    io_depth: o.ioDepth,
    lanes,
    file_bytes_per_lane: fileBytes,
    uv_threadpool_size: uvThreads,
    phases,
    warnings,
    units: 'bytes, nanoseconds; bytes_per_sec per wall-clock second of the phase; cpu_seconds_per_gb per 10^9 bytes',
  };
}

async function writeFully(fh: fsp.FileHandle, buffer: Buffer, positionBytes: number): Promise<void> {
  let done = 0;
  while (done < buffer.length) {
    const { bytesWritten } = await fh.write(buffer, done, buffer.length - done, positionBytes + done);
    if (bytesWritten <= 0) throw new Error(`write made no progress at byte ${positionBytes + done}`);
    done += bytesWritten;
  }
}

async function readFully(fh: fsp.FileHandle, buffer: Buffer, positionBytes: number): Promise<number> {
  let done = 0;
  while (done < buffer.length) {
    const { bytesRead } = await fh.read(buffer, done, buffer.length - done, positionBytes + done);
    if (bytesRead <= 0) break;
    done += bytesRead;
  }
  return done;
}

async function runPhase(
  op: ProbePhaseName,
  lanes: Lane[],
  o: ProbeOptions,
  chunkBytes: number,
  fileBytes: number,
  sampler: DeviceStatsSampler | null,
  ctx: ProbeContext,
  label: ProbeProgress['phase'],
  untilFull: boolean,
): Promise<ProbePhaseResult & { deviceReport: DeviceStatsReport }> {
  const latency = new LatencyHistogram();
  const durationNs = o.durationS * 1e9;
  // Laying files out runs until they are full: no planned duration to report (0).
  const plannedNs = Number.isFinite(durationNs) ? durationNs : 0;
  let bytes = 0;
  let ios = 0;
  let wraps = 0;
  let cancelled = false;
  const signal = ctx.signal;

  const cpu0 = process.cpuUsage();
  sampler?.start();
  const t0 = now();
  const elapsedNs = (): number => Number(now() - t0);
  const progressTimer = ctx.onProgress
    ? setInterval(() => {
        const e = elapsedNs();
        ctx.onProgress?.({ phase: label, elapsedNs: e, durationNs: plannedNs, bytes, bytesPerSec: e > 0 ? (bytes * 1e9) / e : 0 });
      }, ctx.progressIntervalMs ?? 500)
    : null;

  const runLane = async (lane: Lane): Promise<void> => {
    let at = 0;
    // A read phase reads what was written; a write phase may fill the whole file.
    const limit = op === 'read' ? lane.extentBytes : fileBytes;
    while (true) {
      if (signal?.aborted) {
        cancelled = true;
        return;
      }
      if (untilFull ? at >= fileBytes : elapsedNs() >= durationNs) return;
      if (at >= limit) {
        at = 0;
        wraps++;
      }
      const s = now();
      if (op === 'write') {
        await writeFully(lane.fh, lane.buffer, at);
        lane.extentBytes = Math.max(lane.extentBytes, at + chunkBytes);
      } else {
        const n = await readFully(lane.fh, lane.buffer, at);
        if (n < chunkBytes) throw new Error(`${lane.file}: short read at byte ${at} (${n} of ${chunkBytes} bytes)`);
      }
      latency.record(Number(now() - s));
      bytes += chunkBytes;
      ios++;
      at += chunkBytes;
    }
  };

  let fdatasyncNs: number | null = null;
  try {
    await Promise.all(lanes.map(runLane));
    if (op === 'write') {
      const s = now();
      await Promise.all(lanes.map((l) => l.fh.datasync()));
      fdatasyncNs = Number(now() - s);
    }
  } finally {
    if (progressTimer) clearInterval(progressTimer);
  }
  const elapsed = elapsedNs();
  const deviceReport: DeviceStatsReport = sampler?.stop() ?? { available: false, reason: 'not sampled', device: null, io: null, parentIo: null, via: null, viaIo: null, processReadBytes: null, processReason: 'not sampled' };
  const cpu = process.cpuUsage(cpu0);
  const device = deviceOf(deviceReport);
  const deviceBytes = device === null ? null : op === 'read' ? device.read_bytes : device.write_bytes;
  ctx.onProgress?.({ phase: label, elapsedNs: elapsed, durationNs: plannedNs, bytes, bytesPerSec: elapsed > 0 ? (bytes * 1e9) / elapsed : 0 });
  return {
    op,
    bytes,
    ios,
    elapsed_ns: elapsed,
    bytes_per_sec: elapsed > 0 ? (bytes * 1e9) / elapsed : 0,
    wraps,
    io_latency: latencyOf(latency),
    fdatasync_ns: fdatasyncNs,
    cpu_user_ns: cpu.user * 1000,
    cpu_system_ns: cpu.system * 1000,
    cpu_seconds_per_gb: bytes > 0 ? (cpu.user + cpu.system) / 1e6 / (bytes / 1e9) : 0,
    device,
    device_coverage: deviceBytes === null || bytes === 0 ? null : deviceBytes / bytes,
    process_read_coverage: null,
    page_cache_suspected: false,
    page_cache_reason: null,
    cancelled,
    deviceReport,
  };
}
