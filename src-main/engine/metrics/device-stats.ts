// Bytes the block device behind a directory really moved, read from /proc/diskstats, so a result
// can show device bytes beside the engine's own and flag reads the device never saw (the page
// cache served them). Self-contained: no engine imports, Linux only, degrades to "unavailable"
// with a reason everywhere else (tmpfs, overlay, network filesystems, macOS, Windows).
//
// How the device is found: stat(dir).dev is the filesystem's device number; /sys/dev/block/M:m
// links to the device's sysfs directory, whose name is the name /proc/diskstats uses. A partition
// (sysfs has a `partition` file) also names its parent disk. Filesystems that report an anonymous
// device (major 0: btrfs, tmpfs, overlay, NFS) are looked up in /proc/self/mountinfo: when the
// mount's source is a /dev node (btrfs on one device), that node's rdev is used.
//
// Below a loop device the filesystem's own device is not the one to judge by: the loop counts every
// byte the filesystem asks of it, whether its backing file's pages came from the drive or from the
// host's page cache (a loop with loop/dio 0 reads through it). There the caller names the disk holding
// the backing file (`servedBy`, from the walk in hardware/linux-storage.ts) and the sampler counts that
// device, keeping the loop's own counters beside it as `via`.
//
// Counters: /proc/diskstats sectors are always 512 bytes, whatever the device's logical block
// size. They count every process's I/O on the device, so other activity inflates them: a
// comparison is meaningful when the benchmark is the device's main user.
//
// Beside them, /proc/self/io `read_bytes`: what this process (all its threads) made the block
// layer read, charged when the read is submitted (submit_bio), so page-cache hits never count and
// other processes' I/O never does. It is what proves a buffered run's reads came from the device;
// it also counts the process's reads of other files (its own code, a dataset) during the window.

import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { MIN_DEVICE_READ_COVERAGE } from '../../../src-shared/domain/results.ts';
import { assessPageCache, type PageCacheVerdict } from '../../../src-shared/domain/page-cache.ts';

export const DISKSTATS_SECTOR_BYTES = 512;

/** One device's cumulative counters from a /proc/diskstats line. */
export interface DiskstatsCounters {
  readsCompleted: number;
  readsMerged: number;
  sectorsRead: number;
  readTimeMs: number;
  writesCompleted: number;
  writesMerged: number;
  sectorsWritten: number;
  writeTimeMs: number;
  ioInProgress: number;
  /** Milliseconds the device had at least one I/O in flight ("%util" numerator). */
  ioTimeMs: number;
  weightedIoTimeMs: number;
  /** Kernel ≥ 4.18 (0 where absent). */
  discardsCompleted: number;
  sectorsDiscarded: number;
  /** Kernel ≥ 5.5 (0 where absent). */
  flushesCompleted: number;
}

export interface DiskstatsLine {
  major: number;
  minor: number;
  name: string;
  counters: DiskstatsCounters;
}

/** Parses /proc/diskstats text; lines it cannot read are skipped. Keyed by device name. */
export function parseDiskstats(text: string): Map<string, DiskstatsLine> {
  const out = new Map<string, DiskstatsLine>();
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 14) continue;
    const n = f.map((x, i) => (i === 2 ? 0 : Number(x)));
    if (n.some((x, i) => i !== 2 && !Number.isFinite(x))) continue;
    const at = (i: number): number => (i < n.length ? n[i] : 0);
    out.set(f[2], {
      major: at(0),
      minor: at(1),
      name: f[2],
      counters: {
        readsCompleted: at(3),
        readsMerged: at(4),
        sectorsRead: at(5),
        readTimeMs: at(6),
        writesCompleted: at(7),
        writesMerged: at(8),
        sectorsWritten: at(9),
        writeTimeMs: at(10),
        ioInProgress: at(11),
        ioTimeMs: at(12),
        weightedIoTimeMs: at(13),
        discardsCompleted: at(14),
        sectorsDiscarded: at(16),
        flushesCompleted: at(18),
      },
    });
  }
  return out;
}

/** Linux dev_t → major, minor (glibc's gnu_dev_major/minor, for 64-bit dev_t as stat returns it). */
export function decodeDevT(dev: bigint): { major: number; minor: number } {
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn & 0xffffffffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn & 0xffffffffn));
  return { major, minor };
}

/** The device behind a directory, as /proc and /sys name it (a probe result carries it across processes). */
export const BlockDeviceInfoSchema = z.object({
  /** The name /proc/diskstats uses: `nvme0n1p2`, `vda`, `loop0`, `dm-0`. */
  name: z.string(),
  majorMinor: z.string(),
  isPartition: z.boolean(),
  /** The whole disk holding a partition; null for a whole device. */
  parent: z.object({ name: z.string(), majorMinor: z.string() }).nullable(),
  /** Devices under a device-mapper or md device (`slaves/`); empty otherwise. */
  underlying: z.array(z.string()),
  logicalBlockBytes: z.number().int().nonnegative().nullable(),
  rotational: z.boolean().nullable(),
  /** How it was found: from stat's device number, or from the mount source in mountinfo. */
  resolvedVia: z.enum(['stat', 'mountinfo']),
});
export type BlockDeviceInfo = z.infer<typeof BlockDeviceInfoSchema>;

/**
 * `device`: the device whose counters are judged; `via`: the directory's own device when the bytes
 * reach `device` through it (a loop device whose backing file is on `device`), else absent.
 */
export type DeviceResolution = { ok: true; device: BlockDeviceInfo; via?: BlockDeviceInfo } | { ok: false; reason: string };

/** Where to read the kernel's views from; tests point these at fixture trees. */
export interface DeviceStatsRoots {
  /** Default `/proc`. */
  proc?: string;
  /** Default `/sys`. */
  sys?: string;
}

function readTrimmed(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** A kernel file's text, or why it could not be read. */
function readOrExplain(file: string): string | { why: string } {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { why: `cannot read ${file}: ${(err as Error).message}` };
  }
}

function numberFrom(file: string): number | null {
  const s = readTrimmed(file);
  if (s === null || s === '') return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/** The block device `major:minor` names, described from sysfs; null when sysfs has no such device. */
export function describeBlockDevice(majorMinor: string, roots: DeviceStatsRoots = {}, resolvedVia: BlockDeviceInfo['resolvedVia'] = 'stat'): BlockDeviceInfo | null {
  const sys = roots.sys ?? '/sys';
  let devDir: string;
  try {
    devDir = fs.realpathSync(path.join(sys, 'dev', 'block', majorMinor));
  } catch {
    return null;
  }
  const name = path.basename(devDir);
  const isPartition = fs.existsSync(path.join(devDir, 'partition'));
  let parent: BlockDeviceInfo['parent'] = null;
  // A partition's queue attributes live on its disk.
  let queueDir = path.join(devDir, 'queue');
  if (isPartition) {
    const parentDir = path.dirname(devDir);
    const parentDev = readTrimmed(path.join(parentDir, 'dev'));
    parent = { name: path.basename(parentDir), majorMinor: parentDev ?? '' };
    queueDir = path.join(parentDir, 'queue');
  }
  let underlying: string[] = [];
  try {
    underlying = fs.readdirSync(path.join(devDir, 'slaves')).sort();
  } catch {
    underlying = [];
  }
  const rotational = numberFrom(path.join(queueDir, 'rotational'));
  return {
    name,
    majorMinor,
    isPartition,
    parent,
    underlying,
    logicalBlockBytes: numberFrom(path.join(queueDir, 'logical_block_size')),
    rotational: rotational === null ? null : rotational === 1,
    resolvedVia,
  };
}

interface MountInfoEntry {
  majorMinor: string;
  mountPoint: string;
  fsType: string;
  source: string;
}

/** /proc/self/mountinfo lines (octal escapes in paths decoded). */
export function parseMountInfo(text: string): MountInfoEntry[] {
  const unescape = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  const out: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const pre = line.slice(0, dash).split(' ');
    const post = line.slice(dash + 3).split(' ');
    if (pre.length < 5 || post.length < 2) continue;
    out.push({ majorMinor: pre[2], mountPoint: unescape(pre[4]), fsType: post[0], source: unescape(post[1]) });
  }
  return out;
}

/** The mount holding `realDir` (the longest mount point that is a prefix of it; the last one mounted wins). */
export function mountFor(realDir: string, mounts: MountInfoEntry[]): MountInfoEntry | null {
  let best: MountInfoEntry | null = null;
  for (const m of mounts) {
    const mp = m.mountPoint;
    const inside = mp === '/' || realDir === mp || realDir.startsWith(mp.endsWith('/') ? mp : `${mp}/`);
    if (inside && (best === null || mp.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

/**
 * Finds the block device whose /proc/diskstats counters describe I/O to files in `dir`.
 * Never throws: a directory on no block device (tmpfs, overlay, NFS) or a platform without
 * /proc and /sys gives `{ ok: false, reason }`.
 */
export function resolveBlockDevice(dir: string, roots: DeviceStatsRoots = {}): DeviceResolution {
  if (process.platform !== 'linux' && roots.proc === undefined) {
    return { ok: false, reason: `device counters need Linux /proc/diskstats (this is ${process.platform})` };
  }
  let realDir: string;
  let dev: bigint;
  try {
    realDir = fs.realpathSync(dir);
    dev = fs.statSync(realDir, { bigint: true }).dev;
  } catch (err) {
    return { ok: false, reason: `cannot stat ${dir}: ${(err as Error).message}` };
  }
  const { major, minor } = decodeDevT(dev);
  if (major !== 0) {
    const device = describeBlockDevice(`${major}:${minor}`, roots, 'stat');
    if (device !== null) return { ok: true, device };
  }
  // Anonymous device numbers (btrfs, tmpfs, overlay, network filesystems): ask mountinfo.
  const mountinfo = readTrimmed(path.join(roots.proc ?? '/proc', 'self', 'mountinfo'));
  const mount = mountinfo === null ? null : mountFor(realDir, parseMountInfo(mountinfo));
  if (mount !== null && mount.source.startsWith('/dev/')) {
    try {
      const rdev = fs.statSync(mount.source, { bigint: true }).rdev;
      const mm = decodeDevT(rdev);
      const device = describeBlockDevice(`${mm.major}:${mm.minor}`, roots, 'mountinfo');
      if (device !== null) return { ok: true, device };
    } catch {
      // fall through to the explanation below
    }
  }
  const what = mount !== null ? `${mount.fsType} filesystem (${mount.source}) mounted at ${mount.mountPoint}` : `device ${major}:${minor}`;
  return { ok: false, reason: `${dir} is on a ${what}, which is not a block device with /proc/diskstats counters` };
}

/** What a device moved between two samples. */
export interface DeviceIoDelta {
  device: string;
  readBytes: number;
  writeBytes: number;
  readIos: number;
  writeIos: number;
  /** Time with at least one I/O in flight; ÷ elapsedNs is the device's utilisation. */
  ioBusyMs: number;
  /** Σ (requests in flight × time), ms; ÷ elapsed ms is the average queue depth (iostat's aqu-sz). */
  weightedIoMs: number;
  flushes: number;
  elapsedNs: number;
}

export function deltaOf(device: string, before: DiskstatsCounters, after: DiskstatsCounters, elapsedNs: number): DeviceIoDelta {
  // Counters are unsigned longs that may wrap on 32-bit kernels; a negative delta means a wrap or
  // a device that was removed and re-added, and is reported as 0 rather than as nonsense.
  const d = (a: number, b: number): number => Math.max(0, a - b);
  return {
    device,
    readBytes: d(after.sectorsRead, before.sectorsRead) * DISKSTATS_SECTOR_BYTES,
    writeBytes: d(after.sectorsWritten, before.sectorsWritten) * DISKSTATS_SECTOR_BYTES,
    readIos: d(after.readsCompleted, before.readsCompleted),
    writeIos: d(after.writesCompleted, before.writesCompleted),
    ioBusyMs: d(after.ioTimeMs, before.ioTimeMs),
    weightedIoMs: d(after.weightedIoTimeMs, before.weightedIoTimeMs),
    flushes: d(after.flushesCompleted, before.flushesCompleted),
    elapsedNs,
  };
}

export interface DeviceStatsReport {
  available: boolean;
  /** Why no counters were taken, when `available` is false. */
  reason: string | null;
  device: BlockDeviceInfo | null;
  /** The device itself (the partition, for a partition). */
  io: DeviceIoDelta | null;
  /** The whole disk under a partition: includes I/O to the disk's other partitions. */
  parentIo: DeviceIoDelta | null;
  /** The directory's own device when the bytes reach `device` through it (DeviceResolution.via), and what it moved; null otherwise. */
  via: BlockDeviceInfo | null;
  viaIo: DeviceIoDelta | null;
  /** Bytes this process made the block layer read (/proc/self/io), any device; null when unreadable. */
  processReadBytes: number | null;
  /** Why `processReadBytes` is null. */
  processReason: string | null;
}

/** `read_bytes` of a /proc/<pid>/io text; null when the line is missing or not a number. */
export function parseProcessReadBytes(text: string): number | null {
  const m = /^read_bytes:\s*(\d+)\s*$/m.exec(text);
  return m === null ? null : Number(m[1]);
}

/**
 * Samples the device behind a directory: `start()` takes the first reading, `stop()` (or
 * `current()`, for a live view) returns what the device moved since. Reads /proc/diskstats
 * synchronously (a few hundred bytes), so the reading is taken exactly when called.
 */
export class DeviceStatsSampler {
  readonly resolution: DeviceResolution;
  private readonly diskstatsPath: string;
  private readonly processIoPath: string;
  private startNs: bigint | null = null;
  private startCounters: Map<string, DiskstatsCounters> | null = null;
  private startProcessReadBytes: number | null = null;
  private failure: string | null = null;
  private processFailure: string | null = null;

  constructor(resolution: DeviceResolution, roots: DeviceStatsRoots = {}) {
    this.resolution = resolution;
    this.diskstatsPath = path.join(roots.proc ?? '/proc', 'diskstats');
    this.processIoPath = path.join(roots.proc ?? '/proc', 'self', 'io');
  }

  /**
   * A sampler for the device behind `dir` (one that reports "unavailable" when there is none). With
   * `servedBy`, the kernel name of the device holding the bytes below the directory's own (the disk
   * under a loop device's backing file), that device is counted and judged, the directory's own kept
   * as `via`; a name sysfs does not know leaves the directory's own device.
   */
  static forDirectory(dir: string, roots: DeviceStatsRoots = {}, servedBy: string | null = null): DeviceStatsSampler {
    const own = resolveBlockDevice(dir, roots);
    if (!own.ok || servedBy === null || servedBy === own.device.name) return new DeviceStatsSampler(own, roots);
    const majorMinor = readTrimmed(path.join(roots.sys ?? '/sys', 'class', 'block', servedBy, 'dev'));
    const serving = majorMinor === null ? null : describeBlockDevice(majorMinor, roots, own.device.resolvedVia);
    return new DeviceStatsSampler(serving === null ? own : { ok: true, device: serving, via: own.device }, roots);
  }

  get available(): boolean {
    return this.resolution.ok && this.failure === null;
  }

  private names(): string[] {
    if (!this.resolution.ok) return [];
    const d = this.resolution.device;
    return [d.name, ...(d.parent !== null ? [d.parent.name] : []), ...(this.resolution.via ? [this.resolution.via.name] : [])];
  }

  private read(): Map<string, DiskstatsCounters> | null {
    const text = readOrExplain(this.diskstatsPath);
    if (typeof text !== 'string') {
      this.failure = text.why;
      return null;
    }
    const all = parseDiskstats(text);
    const out = new Map<string, DiskstatsCounters>();
    for (const name of this.names()) {
      const line = all.get(name);
      if (line === undefined) {
        this.failure = `${name} is not listed in ${this.diskstatsPath}`;
        return null;
      }
      out.set(name, line.counters);
    }
    return out;
  }

  private readProcessReadBytes(): number | null {
    const text = readOrExplain(this.processIoPath);
    if (typeof text !== 'string') {
      this.processFailure = text.why;
      return null;
    }
    const n = parseProcessReadBytes(text);
    if (n === null) this.processFailure = `${this.processIoPath} has no read_bytes line`;
    return n;
  }

  start(): void {
    this.failure = null;
    this.processFailure = null;
    this.startNs = process.hrtime.bigint();
    this.startCounters = this.resolution.ok ? this.read() : null;
    this.startProcessReadBytes = this.resolution.ok ? this.readProcessReadBytes() : null;
  }

  /** What the device moved since `start()`; the sampler keeps running. */
  current(): DeviceStatsReport {
    const device = this.resolution.ok ? this.resolution.device : null;
    const unavailable = (reason: string): DeviceStatsReport => ({
      available: false, reason, device, io: null, parentIo: null, via: this.resolution.ok ? (this.resolution.via ?? null) : null, viaIo: null, processReadBytes: null, processReason: 'no device counters',
    });
    if (!this.resolution.ok) return unavailable(this.resolution.reason);
    if (this.startNs === null) return unavailable('the sampler was never started');
    if (this.startCounters === null) return unavailable(this.failure ?? 'no first reading');
    const now = this.read();
    const nowProcessReadBytes = this.startProcessReadBytes === null ? null : this.readProcessReadBytes();
    const elapsedNs = Number(process.hrtime.bigint() - this.startNs);
    if (now === null) return unavailable(this.failure ?? 'no reading');
    const d = this.resolution.device;
    const io = deltaOf(d.name, this.startCounters.get(d.name)!, now.get(d.name)!, elapsedNs);
    const parentIo = d.parent !== null ? deltaOf(d.parent.name, this.startCounters.get(d.parent.name)!, now.get(d.parent.name)!, elapsedNs) : null;
    const via = this.resolution.via ?? null;
    const viaIo = via === null ? null : deltaOf(via.name, this.startCounters.get(via.name)!, now.get(via.name)!, elapsedNs);
    const processReadBytes =
      this.startProcessReadBytes === null || nowProcessReadBytes === null ? null : Math.max(0, nowProcessReadBytes - this.startProcessReadBytes);
    const processReason = processReadBytes === null ? (this.processFailure ?? 'no first reading') : null;
    return { available: true, reason: null, device: d, io, parentIo, via, viaIo, processReadBytes, processReason };
  }

  /** The final reading: what the device moved between `start()` and now. */
  stop(): DeviceStatsReport {
    const report = this.current();
    this.startNs = null;
    this.startCounters = null;
    return report;
  }
}

export { MIN_DEVICE_READ_COVERAGE };

export interface PageCacheAssessment extends PageCacheVerdict {
  /** device read bytes ÷ engine storage read bytes (null when the engine read nothing or no counters). */
  readCoverage: number | null;
  /** device write bytes ÷ engine storage write bytes (null when the engine wrote nothing or no counters). */
  writeCoverage: number | null;
  /** this process's block-layer read bytes ÷ engine storage read bytes (null when either is missing). */
  processReadCoverage: number | null;
}

/** The coverages of a sampler's report, judged by the one page-cache rule (src-shared/domain/page-cache.ts). */
export function assessDevicePageCache(opts: {
  engineReadBytes: number;
  engineWriteBytes: number;
  device: DeviceStatsReport;
  directIo: boolean;
}): PageCacheAssessment {
  const { engineReadBytes, engineWriteBytes, device, directIo } = opts;
  const facts = { directIo, storageReadBytes: engineReadBytes, unavailableReason: device.reason ?? 'no device counters' };
  if (!device.available || device.io === null) {
    return { readCoverage: null, writeCoverage: null, processReadCoverage: null, ...assessPageCache({ ...facts, counters: null }) };
  }
  const readCoverage = engineReadBytes > 0 ? device.io.readBytes / engineReadBytes : null;
  const writeCoverage = engineWriteBytes > 0 ? device.io.writeBytes / engineWriteBytes : null;
  const processReadCoverage = engineReadBytes > 0 && device.processReadBytes !== null ? device.processReadBytes / engineReadBytes : null;
  const counters = { device: device.io.device, readCoverage, processReadCoverage, processReason: device.processReason };
  return { readCoverage, writeCoverage, processReadCoverage, ...assessPageCache({ ...facts, counters }) };
}
