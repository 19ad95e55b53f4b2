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

/**
 * A GPU's PCIe link as sysfs states it (/sys/bus/pci/devices/<bus id>/current_link_* and max_link_*).
 * It decides the GPU tier's copy bandwidth: a Gen4 link, or a GPU in an x8 slot, carries about half
 * of a Gen5 x16 one. A field sysfs does not state is null.
 */
export const PcieLinkSchema = z.object({
  /**
   * The generation and lanes the link ran at when the hardware was detected. An idle GPU's link often
   * trains down to a lower speed (Gen1 on many cards) and back up under load, so below the max here
   * says little; fewer lanes than the max usually means a narrower slot.
   */
  currentGen: z.number().int().positive().nullable(),
  currentLanes: z.number().int().positive().nullable(),
  /** The most the GPU's own link can do. */
  maxGen: z.number().int().positive().nullable(),
  maxLanes: z.number().int().positive().nullable(),
  /**
   * The most the port above the GPU (the root or switch port of its slot) can do: a Gen5 card in a
   * Gen4 slot runs at Gen4. Null where there is none to read (a virtual machine's GPU on its root bus).
   */
  upstreamMaxGen: z.number().int().positive().nullable(),
  upstreamMaxLanes: z.number().int().positive().nullable(),
});
export type PcieLink = z.infer<typeof PcieLinkSchema>;

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
  /**
   * Its PCIe link; null when sysfs could not be read for its bus id (no bus id, not Linux). Absent in
   * snapshots taken before kvbench read it.
   */
  pcieLink: PcieLinkSchema.nullable().optional(),
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

/**
 * The GPU tier's practical copy limit (`probeGpuCopy`): entries written to and read back from one GPU
 * through the engine's own GpuTier (pinned staging, copy threads, chunked copies), with nothing else
 * running, as the memory-copy probe is the CPU tier's.
 */
export const GpuCopyProbeSchema = z.object({
  /** The CUDA device probed (the GPU tier's first) and its name. */
  device: z.number().int().nonnegative(),
  model: z.string(),
  /**
   * Bytes per second the link carried host→device (device→host) while the probe's copies kept it busy:
   * bytes ÷ the union of the copies' own intervals, as the tier's link-busy figures are; null when no copy completed.
   */
  h2dBytesPerSec: z.number().nonnegative().nullable(),
  d2hBytesPerSec: z.number().nonnegative().nullable(),
  chunkBytes: bytes,
  /** Bytes moved each way in the timed part. */
  bytesPerDirection: bytes,
  copyThreads: z.number().int().nonnegative(),
  /** Whether the staging was page-locked: copies from pageable memory are slower, and the limit then is theirs. */
  stagingPinned: z.boolean(),
  measuredAt: z.string(),
});
export type GpuCopyProbe = z.infer<typeof GpuCopyProbeSchema>;

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
  /**
   * The GPU tier's copy limit on the first usable GPU, the GPU tier's as the memory copy is the CPU
   * tier's; null when not probed (no usable GPU, or not asked). Absent in snapshots taken before it was kept.
   */
  gpuCopy: GpuCopyProbeSchema.nullable().optional(),
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

/** Transfers per second of one PCIe lane, by generation (Gen1 2.5 GT/s … Gen6 64 GT/s). */
const PCIE_GIGATRANSFERS_PER_SEC: Readonly<Record<number, number>> = { 1: 2.5, 2: 5, 3: 8, 4: 16, 5: 32, 6: 64 };

/** The PCIe generation of a link's transfer rate in GT/s (32 → 5); null for a rate no generation has. */
export function pcieGenOfGigatransfers(gigatransfersPerSec: number): number | null {
  const hit = Object.entries(PCIE_GIGATRANSFERS_PER_SEC).find(([, gt]) => Math.abs(gt - gigatransfersPerSec) < 0.01);
  return hit === undefined ? null : Number(hit[0]);
}

/**
 * A link's bytes per second in each direction after the line encoding (8b/10b to Gen2, 128b/130b
 * Gen3–5, Gen6's FLIT of 242 payload bytes in 256), before packet headers: Gen5 x16 63.0 GB/s, of which
 * copies reach about 85 % (53 GB/s measured on an H200). Null for a generation not in the table.
 */
export function pcieLinkBytesPerSec(gen: number, lanes: number): number | null {
  const gt = PCIE_GIGATRANSFERS_PER_SEC[gen];
  if (gt === undefined) return null;
  const encoding = gen <= 2 ? 8 / 10 : gen <= 5 ? 128 / 130 : 242 / 256;
  return ((gt * 1e9 * encoding) / 8) * lanes;
}

/**
 * A GPU's PCIe link in words, for `kvbench hw`, the app's hardware panel and a trial's hardware:
 * the link at detection and the most it can do ("PCIe Gen1 x16 at detection, max Gen5 x16 (63.0 GB/s
 * per direction …)"), and why they differ where they do. `rateText` states the max link's rate in the
 * reader's units; without it the rate is left out.
 */
export function pcieLinkText(link: PcieLink | null | undefined, rateText?: (bytesPerSec: number) => string): string {
  if (link === undefined) return 'PCIe link not recorded (detected by an older kvbench)';
  if (link === null) return 'PCIe link not read (no sysfs entry for its bus id)';
  const of = (gen: number | null, lanes: number | null): string => `Gen${gen ?? '?'} x${lanes ?? '?'}`;
  const reach = {
    gen: link.upstreamMaxGen !== null && link.maxGen !== null ? Math.min(link.maxGen, link.upstreamMaxGen) : link.maxGen,
    lanes: link.upstreamMaxLanes !== null && link.maxLanes !== null ? Math.min(link.maxLanes, link.upstreamMaxLanes) : link.maxLanes,
  };
  const rate = rateText && reach.gen !== null && reach.lanes !== null ? pcieLinkBytesPerSec(reach.gen, reach.lanes) : null;
  const parts = [`PCIe ${of(link.currentGen, link.currentLanes)} at detection, max ${of(link.maxGen, link.maxLanes)}`];
  const upstreamBelow =
    (link.upstreamMaxGen !== null && link.maxGen !== null && link.upstreamMaxGen < link.maxGen) ||
    (link.upstreamMaxLanes !== null && link.maxLanes !== null && link.upstreamMaxLanes < link.maxLanes);
  if (upstreamBelow) parts.push(`its slot's port reaches only ${of(link.upstreamMaxGen, link.upstreamMaxLanes)}`);
  if (rate !== null) parts.push(`${rateText!(rate)} per direction at ${of(reach.gen, reach.lanes)} before packet overhead`);
  const notes: string[] = [];
  if (link.currentGen !== null && reach.gen !== null && link.currentGen < reach.gen) notes.push('below its max at detection: an idle GPU\'s link trains down, and back up under load');
  if (link.currentLanes !== null && reach.lanes !== null && link.currentLanes < reach.lanes) notes.push(`${link.currentLanes} of ${reach.lanes} lanes in use: a narrower slot or riser carries that much less`);
  return `${parts.join('; ')}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
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
