// A run's efficiency against the device's measured limit: `kvbench run --probe-result FILE` takes the
// JSON of `kvbench probe` (sequential direct I/O at the engine's chunk size and depth) and states the
// storage tier's bandwidth as a share of it. The probe is read and checked before the run starts, so
// a wrong file costs nothing.
import { printable } from '../../../src-shared/domain/label-text.ts';
import fs from 'node:fs';
import { EFFICIENCY_NOISE_CEILING, type DeviceIoSection, type EfficiencySection, type TierBytes } from '../../../src-shared/domain/results.ts';
import { KvbenchError } from '../../../src-shared/domain/errors.ts';
import { ramBackedMessage } from '../../../src-shared/domain/hardware.ts';
import { ProbeLimitsFileSchema } from '../probe/probe-protocol.ts';

/** The limits a `--probe-result` file states (the report's per-row limits are report-model's ProbeLimits). */
export interface ProbeFileLimits {
  file: string;
  dir: string;
  device: string | null;
  probedAt: string;
  ioChunkBytes: number;
  ioDepth: number;
  readBytesPerSec: number | null;
  writeBytesPerSec: number | null;
}

/** Reads a `kvbench probe --json` / `--output` file; VALIDATION errors say what is wrong with it. */
export function loadProbeLimits(file: string): ProbeFileLimits {
  const bad = (why: string): KvbenchError => new KvbenchError('VALIDATION', `--probe-result ${printable(file)}: ${printable(why)}`);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw bad(`cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch {
    throw bad('is not JSON (write one with: kvbench probe --dir DIR --output FILE)');
  }
  const head = typeof j === 'object' && j !== null ? (j as { kind?: unknown; status?: unknown }) : {};
  if (head.kind !== 'kvbench-probe') throw bad('is not a kvbench probe result (no "kind": "kvbench-probe")');
  if (head.status !== 'complete') throw bad(`the probe did not complete (status ${String(head.status)})`);
  const parsed = ProbeLimitsFileSchema.safeParse(j);
  if (!parsed.success) {
    throw bad(`is not a probe result kvbench can read: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'the file'}: ${i.message}`).join('; ')}`);
  }
  const p = parsed.data;
  const rate = (op: 'read' | 'write'): number | null => {
    const phase = p.phases[op];
    if (!phase) return null;
    if (phase.page_cache_suspected) throw bad(`its ${op} phase was served by the page cache: not the device's limit`);
    return phase.bytes_per_sec > 0 ? phase.bytes_per_sec : null;
  };
  const readBytesPerSec = rate('read');
  const writeBytesPerSec = rate('write');
  if (readBytesPerSec === null && writeBytesPerSec === null) throw bad('has no read or write bandwidth');
  return {
    file,
    dir: p.dir,
    device: p.device?.name ?? null,
    probedAt: p.started_at,
    ioChunkBytes: p.io_chunk_bytes,
    ioDepth: p.io_depth,
    readBytesPerSec,
    writeBytesPerSec,
  };
}

/**
 * Storage-tier bandwidth ÷ the probed limit, per direction, and for the run's mix: the limit of a
 * mix is time-weighted (the time to move the read bytes at the read limit plus the written bytes at
 * the write limit), so a run that reads and writes at the device's limits scores 1. Reads the page
 * cache may have served are not the device's: a flagged run has no read or mixed efficiency. A
 * RAM-backed directory (tmpfs) has none at all: neither direction was a device's.
 */
export function efficiencySection(
  limits: ProbeFileLimits,
  storage: TierBytes,
  deviceIo: Pick<DeviceIoSection, 'device' | 'flagged' | 'flag_reason'>,
  run: { ioChunkBytes: number; ioDepth: number; ramFilesystem?: string | null },
): EfficiencySection {
  const runDevice = deviceIo.device;
  const ram = run.ramFilesystem ?? null;
  const cacheServed = deviceIo.flagged && storage.read_bytes > 0;
  const share = (bps: number, limit: number | null): number | null => (limit === null ? null : bps / limit);
  const moved = storage.read_bytes + storage.write_bytes;
  let mixed: number | null = null;
  const needRead = storage.read_bytes > 0;
  const needWrite = storage.write_bytes > 0;
  if (moved > 0 && !cacheServed && ram === null && (!needRead || limits.readBytesPerSec !== null) && (!needWrite || limits.writeBytesPerSec !== null)) {
    const limitSeconds = (needRead ? storage.read_bytes / limits.readBytesPerSec! : 0) + (needWrite ? storage.write_bytes / limits.writeBytesPerSec! : 0);
    const runBps = storage.read_bytes_per_sec + storage.write_bytes_per_sec;
    mixed = limitSeconds > 0 ? runBps / (moved / limitSeconds) : null;
  }
  const notes: string[] = [];
  if (ram !== null) notes.push(`no efficiency: ${ramBackedMessage(ram)}`);
  else if (cacheServed) notes.push(`no read or mixed efficiency: ${deviceIo.flag_reason ?? 'reads may have been served by the page cache'}`);
  if (runDevice !== null && limits.device !== null && runDevice !== limits.device) notes.push(`the probe measured ${limits.device}, this run's cache directory is on ${runDevice}`);
  if (limits.ioChunkBytes !== run.ioChunkBytes || limits.ioDepth !== run.ioDepth) {
    notes.push(`the probe ran ${limits.ioDepth} × ${limits.ioChunkBytes} B in flight, this run ${run.ioDepth} × ${run.ioChunkBytes} B`);
  }
  const readEfficiency = needRead && !cacheServed && ram === null ? share(storage.read_bytes_per_sec, limits.readBytesPerSec) : null;
  const writeEfficiency = needWrite && ram === null ? share(storage.write_bytes_per_sec, limits.writeBytesPerSec) : null;
  for (const [what, eff] of [['read', readEfficiency], ['write', writeEfficiency]] as const) {
    if (eff === null || eff <= EFFICIENCY_NOISE_CEILING) continue;
    notes.push(
      `${what}s ran at ${(eff * 100).toFixed(0)} % of the probed limit: above the device's measured rate, so either the probe ` +
        'under-measured it (other load at the time) or a cache below the filesystem (a VM host, a RAID controller) served part of this run',
    );
  }
  return {
    probe_file: limits.file,
    probe_dir: limits.dir,
    probe_device: limits.device,
    probed_at: limits.probedAt,
    read_limit_bytes_per_sec: limits.readBytesPerSec,
    write_limit_bytes_per_sec: limits.writeBytesPerSec,
    storage_read_efficiency: readEfficiency,
    storage_write_efficiency: writeEfficiency,
    storage_mixed_efficiency: mixed,
    notes,
  };
}
