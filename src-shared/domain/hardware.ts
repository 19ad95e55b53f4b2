/**
 * What kvbench knows about the machine: the hardware profile that `kvbench hw` prints, the planner
 * derives a suite from, and every trial stores a snapshot of.
 *
 * Sizes are bytes, bandwidths bytes per second. Fields a platform or a virtual machine does not
 * report are null (a virtio disk has no model or serial; a container may have no machine-id):
 * detection degrades, it never fails for a missing field. The schema validates snapshots read back
 * from the store or received over IPC.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';

export const HARDWARE_PROFILE_VERSION = 1;

const bytes = z.number().nonnegative();
const nullableString = z.string().nullable();

export const SYSTEM_ID_SOURCES = ['machine-id', 'os-uuid', 'hostname'] as const;

export const SystemInfoSchema = z.object({
  /** Stable identity: sha256 of the machine-id and the hostname (trials from one machine group together). */
  id: z.string().min(1),
  idSource: z.enum(SYSTEM_ID_SOURCES),
  hostname: z.string(),
  manufacturer: nullableString,
  model: nullableString,
  virtual: z.boolean(),
  virtualHost: nullableString,
});

export const OsInfoSchema = z.object({
  platform: z.string(),
  distro: nullableString,
  release: nullableString,
  kernel: nullableString,
  arch: z.string(),
});

export const CpuInfoSchema = z.object({
  manufacturer: nullableString,
  brand: nullableString,
  /** Logical CPUs (hardware threads). */
  logicalCores: z.number().int().nonnegative(),
  physicalCores: z.number().int().nonnegative(),
  sockets: z.number().int().nonnegative().nullable(),
  baseSpeedGhz: z.number().nonnegative().nullable(),
  maxSpeedGhz: z.number().nonnegative().nullable(),
});

export const MemoryInfoSchema = z.object({
  totalBytes: bytes,
  availableBytes: bytes,
  swapTotalBytes: bytes,
});

export const GpuInfoSchema = z.object({
  index: z.number().int().nonnegative(),
  vendor: nullableString,
  model: nullableString,
  /** Device memory; null when the driver does not say. */
  memoryBytes: bytes.nullable(),
  driverVersion: nullableString,
  busId: nullableString,
  /** A discrete accelerator with its own memory (not integrated graphics sharing system RAM). */
  compute: z.boolean(),
  /** The engine's GPU tier can use it: the NVIDIA driver library opened it (CUDA device `index`). */
  engineUsable: z.boolean(),
});

/** What the NVIDIA driver library (the one the GPU tier uses) says; null when not asked. */
export const CudaInfoSchema = z.object({
  available: z.boolean(),
  /** Why no GPU can be used (null when available). */
  reason: nullableString,
  driverVersion: nullableString,
  cudaVersion: nullableString,
  devices: z.array(z.object({ index: z.number().int().nonnegative(), name: z.string(), totalMemoryBytes: bytes, pciBusId: nullableString })),
});

export const DISK_MEDIA = ['nvme', 'ssd', 'hdd', 'virtual', 'ram', 'unknown'] as const;
export type DiskMedia = (typeof DISK_MEDIA)[number];

export const DiskInfoSchema = z.object({
  /** Kernel name, e.g. nvme0n1, sda, vda. */
  name: z.string(),
  device: nullableString,
  sizeBytes: bytes,
  model: nullableString,
  serial: nullableString,
  vendor: nullableString,
  /** NVMe, SATA, SAS, virtio, USB … when reported. */
  protocol: nullableString,
  rotational: z.boolean().nullable(),
  media: z.enum(DISK_MEDIA),
  removable: z.boolean(),
});

export const DRIVE_ID_BASES = ['serial', 'wwid', 'local-device', 'filesystem'] as const;

export const BlockDeviceInfoSchema = z.object({
  /** The device the filesystem sits on (a partition, dm or md device, loop device …). */
  name: z.string(),
  /** The whole disk(s) behind it: a partition's parent, a dm/md device's members. */
  disks: z.array(z.string()),
  model: nullableString,
  serial: nullableString,
  wwid: nullableString,
  rotational: z.boolean().nullable(),
  logicalBlockBytes: z.number().int().positive().nullable(),
  physicalBlockBytes: z.number().int().positive().nullable(),
  sizeBytes: bytes.nullable(),
  media: z.enum(DISK_MEDIA),
  /** For a loop device: the file behind it. */
  backingFile: nullableString,
  /**
   * For a loop device: the filesystem holding its file (tmpfs puts the loop's bytes in RAM). Absent in
   * snapshots taken before loop devices were followed; null when the file's mount is unknown.
   */
  backingFilesystem: nullableString.optional(),
  /**
   * For a loop device: the bytes of its file not allocated yet (a sparse image's holes), i.e. what
   * writes through the loop can still add to the filesystem holding the file — RAM, on tmpfs. Null
   * when unknown (absent in older snapshots).
   */
  backingFileUnallocatedBytes: bytes.nullable().optional(),
});

/**
 * A loop device that reads and writes its backing file through the host's page cache (`loop/dio` 0,
 * losetup's default): O_DIRECT on the loop's filesystem bypasses the loop's own cache, not the one of
 * the file behind it, so its reads can be RAM's and its writes sit in RAM until flushed.
 */
export const BufferedLoopSchema = z.object({
  /** The loop device's kernel name (loop0). */
  name: z.string(),
  /** Its loop/backing_file as the kernel writes it (" (deleted)" kept). */
  backingFile: z.string(),
  /** The filesystem holding that file; null when no mount here holds it. */
  backingFilesystem: nullableString,
});
export type BufferedLoop = z.infer<typeof BufferedLoopSchema>;

export const DirectIoInfoSchema = z.object({
  supported: z.boolean(),
  reason: nullableString,
  logicalBlockBytes: z.number().int().nonnegative(),
});

/** The drive's raw sequential limit (`kvbench probe`, at the engine's block size and I/O depth). */
export const BandwidthProbeSchema = z.object({
  /** The device's limits; null when that phase did not complete or (read) the page cache may have served it. */
  readBytesPerSec: z.number().nonnegative().nullable(),
  writeBytesPerSec: z.number().nonnegative().nullable(),
  /** Total size of the probe's files. */
  fileBytes: bytes,
  chunkBytes: bytes,
  depth: z.number().int().positive(),
  directIo: z.boolean(),
  /** Reads may have come from the page cache (buffered I/O): the read rate is not the device's. */
  pageCacheSuspected: z.boolean(),
  phaseSeconds: z.number().positive(),
  measuredAt: z.string(),
});
export type BandwidthProbe = z.infer<typeof BandwidthProbeSchema>;

export const CacheDirInfoSchema = z.object({
  /** As given. */
  path: z.string(),
  /** Absolute, symlinks resolved (of the nearest existing ancestor when the directory does not exist yet). */
  resolvedPath: z.string(),
  exists: z.boolean(),
  writable: z.boolean(),
  /**
   * Why it is not writable, in words ("… is a file: …", "… is on a read-only file system"); null when
   * it is writable. Absent in snapshots taken before the reason was kept.
   */
  notWritableReason: nullableString.optional(),
  mountPoint: nullableString,
  filesystem: nullableString,
  /** What is mounted there: /dev/nvme0n1p1, tmpfs, server:/export … */
  mountSource: nullableString,
  blockDevice: BlockDeviceInfoSchema.nullable(),
  totalBytes: bytes.nullable(),
  freeBytes: bytes.nullable(),
  directIo: DirectIoInfoSchema.nullable(),
  /** Stable identity of the drive (or filesystem) behind the directory, for drive comparisons. */
  driveId: z.string(),
  driveIdBasis: z.enum(DRIVE_ID_BASES),
  /** For people: model and device, or the filesystem. */
  driveLabel: z.string(),
  bandwidth: BandwidthProbeSchema.nullable(),
  /**
   * What holds the directory's bytes in memory, device by device down to the RAM, as a trial's results
   * (`ram_backing_chain`) and the report's cautions name it: 'tmpfs', 'zram0', 'loop0 → /dev/shm/d.img
   * on tmpfs'; null when it is not RAM-backed (or the mounts could not be read). Absent in snapshots
   * taken before the chain was kept: read those with cacheDirRamBacking.
   */
  ramBackingChain: nullableString.optional(),
  /**
   * The loop devices between the directory and the drive that do buffered I/O on their backing file
   * (loop/dio 0), from the mount's device down through loops in loops and dm/md devices on loops; empty
   * when none does, and when the directory is RAM-backed (that says more). Absent in snapshots taken
   * before kvbench looked.
   */
  bufferedLoops: z.array(BufferedLoopSchema).optional(),
});

export const HardwareProfileSchema = z.object({
  version: z.literal(HARDWARE_PROFILE_VERSION),
  detectedAt: z.string(),
  kvbenchVersion: z.string(),
  system: SystemInfoSchema,
  os: OsInfoSchema,
  cpu: CpuInfoSchema,
  memory: MemoryInfoSchema,
  gpus: z.array(GpuInfoSchema),
  cuda: CudaInfoSchema.nullable(),
  disks: z.array(DiskInfoSchema),
  cacheDir: CacheDirInfoSchema.nullable(),
  /** Memory copy bandwidth of one thread (Buffer.copy), the CPU tier's practical limit; null when not probed. */
  memoryCopyBytesPerSec: z.number().nonnegative().nullable(),
  /** What could not be detected, and why. */
  warnings: z.array(z.string()),
});

export type GpuInfo = z.infer<typeof GpuInfoSchema>;
export type DiskInfo = z.infer<typeof DiskInfoSchema>;
export type BlockDeviceInfo = z.infer<typeof BlockDeviceInfoSchema>;
export type CacheDirInfo = z.infer<typeof CacheDirInfoSchema>;
export type HardwareProfile = z.infer<typeof HardwareProfileSchema>;

export type CudaInfo = z.infer<typeof CudaInfoSchema>;

/** Discrete accelerators with their own memory, whether or not the engine can use them. */
export function computeGpus(hw: Pick<HardwareProfile, 'gpus'>): GpuInfo[] {
  return hw.gpus.filter((g) => g.compute);
}

/** GPUs the engine's GPU tier can use (opened through the NVIDIA driver library). */
export function usableGpus(hw: Pick<HardwareProfile, 'gpus'>): GpuInfo[] {
  return hw.gpus.filter((g) => g.engineUsable);
}

/** Filesystems whose files live in RAM: a storage tier there measures memory, not a drive. */
export const RAM_FILESYSTEMS: ReadonlySet<string> = new Set(['tmpfs', 'ramfs']);

/**
 * What makes the cache directory RAM-backed: its filesystem ('tmpfs', 'ramfs'); a loop device whose
 * file is on one ('loop0 on tmpfs'); 'RAM disk' for a block device that is memory (brd, zram), also
 * behind a loop device ('loop0 on RAM disk zram0'); or null when it is not.
 */
export function ramBackingOf(c: Pick<CacheDirInfo, 'filesystem' | 'blockDevice'>): string | null {
  if (c.filesystem !== null && RAM_FILESYSTEMS.has(c.filesystem)) return c.filesystem;
  const b = c.blockDevice;
  if (b === null) return null;
  if (b.backingFilesystem && RAM_FILESYSTEMS.has(b.backingFilesystem)) return `${b.name} on ${b.backingFilesystem}`;
  if (b.media === 'ram') return b.backingFile ? `${b.name} on RAM disk ${b.disks.join('+')}` : 'RAM disk';
  return null;
}

/**
 * What makes a described cache directory RAM-backed, as `kvbench hw`, the suite plan and the app
 * say it: the chain detection kept (the same words the trial's results and cautions use), or, for a
 * snapshot taken before the chain was kept, ramBackingOf's short words; null when it is not.
 */
export function cacheDirRamBacking(c: Pick<CacheDirInfo, 'filesystem' | 'blockDevice' | 'ramBackingChain'>): string | null {
  return c.ramBackingChain !== undefined ? c.ramBackingChain : ramBackingOf(c);
}

/** The one wording of it, for the run's results and console, `kvbench hw`, the suite plan and the app's advice. */
export function ramBackedMessage(backing: string): string {
  return `RAM-backed filesystem (${backing}): the storage tier measures memory, not a drive`;
}

/**
 * The one wording of buffered loop devices under the cache directory, for the run's results and
 * console, `kvbench hw`, the suite plan, the probe and the app's advice: what they are, what it does
 * to the numbers, and the command that turns it off.
 */
export function bufferedLoopMessage(loops: readonly BufferedLoop[]): string {
  const each = loops.map((l) => `${l.name} → ${l.backingFile}${l.backingFilesystem === null ? '' : ` on ${l.backingFilesystem}`}`).join(', ');
  const what = loops.length === 1 ? 'loop device' : 'loop devices';
  const fix = loops.map((l) => `losetup --direct-io=on /dev/${l.name}`).join('; ');
  return (
    `${what} with buffered I/O on the backing file (${each}; loop/dio 0): reads through it may be served by the host's page cache ` +
    `of that file and writes held there until flushed, not the drive's, whatever direct I/O says (fix: ${fix})`
  );
}

/** Bytes in binary units to about three significant digits ("600 MiB", "20.0 MiB", "256 GiB", "2.50 TiB"): a size never rounds to "0.0 GiB". */
export function binaryBytesText(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[i]}`;
}

/**
 * How the label of a drive identified by its local device ends: its size in binary units,
 * "virtual disk vda (256 GiB)". The label is stored as the drive's name; where the size is at hand
 * (a hardware profile), the app states it in the units chosen in Settings instead.
 */
export function driveLabelSizeSuffix(sizeBytes: number | null): string {
  return ` (${sizeBytes === null ? '?' : binaryBytesText(sizeBytes)})`;
}
