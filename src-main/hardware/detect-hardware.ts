// systeminformation + the kernel → a HardwareProfile: CPUs, RAM, GPUs and their memory, disks, and
// for a chosen directory its mount, filesystem, block device and model, free space, whether direct
// I/O works there, and a stable identity for the system and the drive.
//
// Every source is injectable (tests replace systeminformation by a fake with the empty fields this
// VM gives), and every missing field degrades to null with a warning, never to a failure.
import fsp from 'node:fs/promises';
import os from 'node:os';
import type { Systeminformation } from 'systeminformation';
import * as si from 'systeminformation';
import {
  HARDWARE_PROFILE_VERSION,
  type BandwidthProbe,
  type BufferedLoop,
  type CacheDirInfo,
  type DiskInfo,
  type DiskMedia,
  type CudaInfo,
  type GpuInfo,
  type HardwareProfile,
} from '../../src-shared/domain/hardware.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { SYSTEM_DIRECTORY_ROOTS, systemDirectoryOf } from '../engine/config/system-directories.ts';
import { probeDirectIo } from '../engine/io/direct-io.ts';
import { probeMemoryCopy } from './bandwidth-probe.ts';
import { probeDriveLimit, type DriveProbeOptions } from './drive-probe.ts';
import { probeGpuCopy, type GpuCopyProbeOptions } from './gpu-copy-probe.ts';
import { probeCudaDriver, type CudaDriverProbe } from './gpu-driver.ts';
import { driveIdentity, readMachineId, systemIdentity } from './identity.ts';
import { cacheDirRefusal } from './cache-dir-access.ts';
import { pciSysfsName, readPcieLink } from './pcie-link.ts';
import { diskFacts, findMount, nearestExisting, readMounts, storageBehindMount, sysReader, type SysReader } from './linux-storage.ts';

/** The parts of systeminformation kvbench uses. */
export interface HardwareSource {
  cpu(): Promise<Systeminformation.CpuData>;
  mem(): Promise<Systeminformation.MemData>;
  graphics(): Promise<Systeminformation.GraphicsData>;
  diskLayout(): Promise<Systeminformation.DiskLayoutData[]>;
  blockDevices(): Promise<Systeminformation.BlockDevicesData[]>;
  osInfo(): Promise<Systeminformation.OsData>;
  system(): Promise<Systeminformation.SystemData>;
  uuid(): Promise<Systeminformation.UuidData>;
}

export const systeminformationSource: HardwareSource = {
  cpu: () => si.cpu(),
  mem: () => si.mem(),
  graphics: () => si.graphics(),
  diskLayout: () => si.diskLayout(),
  blockDevices: () => si.blockDevices(),
  osInfo: () => si.osInfo(),
  system: () => si.system(),
  uuid: () => si.uuid(),
};

export interface DetectOptions {
  source?: HardwareSource;
  /** Root of /proc and /sys (tests); default '/'. */
  sysRoot?: string;
  machineIdPaths?: readonly string[];
  hostname?: string;
  /** Try O_DIRECT in the directory (a 4 KiB file, removed). Default true. */
  probeDirectIo?: boolean;
  /** Measure the drive's raw sequential limit with the raw-limit probe (files in the directory, removed after). Default false. */
  probeBandwidth?: boolean | DriveProbeOptions;
  /** Measure one thread's memory-copy bandwidth (~0.5 s). Default false. */
  probeMemory?: boolean;
  /**
   * Measure the GPU tier's copy limit on the first usable GPU (~1 s: gpu-copy-probe.ts), beside the
   * memory copy; nothing without a usable GPU. Default false.
   */
  probeGpu?: boolean | GpuCopyProbeOptions;
  /** Ask the NVIDIA driver library which GPUs the engine can use (default: yes, with gpu-driver.ts). */
  cudaProbe?: (() => Promise<CudaDriverProbe>) | false;
}

const str = (s: string | null | undefined): string | null => {
  const t = typeof s === 'string' ? s.trim() : '';
  return t === '' || t === '-' || t.toLowerCase() === 'unknown' ? null : t;
};

async function settle<T>(what: string, p: () => Promise<T>, fallback: T, warnings: string[]): Promise<T> {
  try {
    return await p();
  } catch (err) {
    warnings.push(`${what}: ${(err as Error).message}`);
    return fallback;
  }
}

const MIB = 1024 * 1024;

/** Discrete accelerators: NVIDIA/AMD/Intel devices with their own memory (≥ 2 GiB, not shared with the CPU). */
export function gpusFrom(data: Systeminformation.GraphicsData): GpuInfo[] {
  return data.controllers.map((c, index) => {
    // nvidia-smi's memoryTotal (MiB) is the most exact; vram (MiB) otherwise.
    const mib = typeof c.memoryTotal === 'number' && c.memoryTotal > 0 ? c.memoryTotal : typeof c.vram === 'number' && c.vram > 0 ? c.vram : null;
    const vendor = str(c.vendor);
    const isNvidia = /nvidia/i.test(vendor ?? '') || /nvidia/i.test(c.model ?? '');
    const compute = isNvidia || (mib !== null && mib >= 2048 && !c.vramDynamic);
    return {
      index,
      vendor,
      model: str(c.name) ?? str(c.model),
      memoryBytes: mib === null ? null : mib * MIB,
      driverVersion: str(c.driverVersion),
      busId: str(c.pciBus) ?? str(c.busAddress),
      compute,
      engineUsable: false,
    };
  });
}

const normBus = (s: string | null): string | null => (s ? s.toLowerCase().replace(/^0000(0000)?:/, '') : null);

/**
 * The address systeminformation's OpenCL pass gives the NVIDIA GPU at `busId`: it writes
 * CL_DEVICE_PCI_BUS_ID_NV in decimal and splits CL_DEVICE_PCI_SLOT_ID_NV, which is the device
 * number, as if it were a devfn byte (device = slot >> 3, function = slot & 7). So the H200 at
 * 00:06.0 came back as a second GPU at "00:00.6", and a GPU at 3b:00.0 would as "59:00.0". Null
 * for an id that is not [domain:]bus:device.function.
 */
function openClMisreadOf(busId: string | null): string | null {
  // "dddd:bb:dd.f", parsed once for sysfs and here.
  const name = pciSysfsName(busId);
  if (name === null) return null;
  const [, busHex, deviceFunction] = name.split(':');
  const bus = Number.parseInt(busHex, 16);
  const device = Number.parseInt(deviceFunction.split('.')[0], 16);
  return `${String(bus).padStart(2, '0')}:${String(device >> 3).padStart(2, '0')}.${device & 7}`;
}

const isNvidiaGpu = (g: GpuInfo): boolean => /nvidia/i.test(`${g.vendor ?? ''} ${g.model ?? ''}`);

/** A bus id with its PCI domain ("00000000:3b:00.0", as nvidia-smi gives it): a real address, never the OpenCL misreading. */
const hasDomain = (busId: string | null): boolean => busId !== null && /^[0-9a-f]{4,8}:[0-9a-f]{2}:/i.test(busId);

/**
 * Drops each NVIDIA controller whose id is the OpenCL misreading of one of `realBusIds` (and not
 * itself one of them). One whose id has a domain came from nvidia-smi, so it is real and stays.
 */
function withoutMisreadCopies(gpus: GpuInfo[], realBusIds: (string | null)[]): GpuInfo[] {
  const real = new Set(realBusIds.map(normBus).filter((b): b is string => b !== null));
  const misread = new Set(realBusIds.map(openClMisreadOf).filter((b): b is string => b !== null));
  return gpus.filter((g) => {
    const bus = normBus(g.busId);
    return !(isNvidiaGpu(g) && !hasDomain(g.busId) && bus !== null && !real.has(bus) && misread.has(bus));
  });
}

/**
 * The GPU list: the CUDA devices the driver library opened (exact memory, usable by the engine,
 * indexed as the engine indexes them), then the other controllers systeminformation found
 * (integrated graphics, GPUs without a working driver), which the engine cannot use.
 */
export function mergeGpus(fromSi: GpuInfo[], cuda: CudaInfo | null): GpuInfo[] {
  if (!cuda?.available || cuda.devices.length === 0) {
    // Without the driver library, the addresses nvidia-smi gave are the real ones.
    const siGpus = withoutMisreadCopies(fromSi, fromSi.filter(isNvidiaGpu).map((g) => g.busId).filter(hasDomain));
    return siGpus.map((g, i) => ({ ...g, index: i }));
  }
  const usable: GpuInfo[] = cuda.devices.map((d) => ({
    index: d.index,
    vendor: 'NVIDIA',
    model: d.name,
    memoryBytes: d.totalMemoryBytes,
    driverVersion: cuda.driverVersion,
    busId: d.pciBusId,
    compute: true,
    engineUsable: true,
  }));
  const cudaBuses = new Set(usable.map((g) => normBus(g.busId)).filter((b): b is string => b !== null));
  const others = withoutMisreadCopies(fromSi, usable.map((g) => g.busId)).filter((g) => {
    const bus = normBus(g.busId);
    if (bus !== null) return !cudaBuses.has(bus);
    // Without bus ids, an NVIDIA controller is taken to be one of the CUDA devices.
    return !(cudaBuses.size === 0 && isNvidiaGpu(g));
  });
  return [...usable, ...others.map((g, i) => ({ ...g, index: usable.length + i }))];
}

function mediaFromSi(b: Systeminformation.BlockDevicesData | undefined, fallback: DiskMedia): DiskMedia {
  if (!b) return fallback;
  if (/nvme/i.test(b.protocol ?? '') || b.name.startsWith('nvme')) return 'nvme';
  return fallback;
}

/** Whole disks: sysfs facts merged with what systeminformation found (lsblk, smartctl) by name. */
export function disksFrom(
  sys: SysReader,
  blockDevices: Systeminformation.BlockDevicesData[],
  layout: Systeminformation.DiskLayoutData[],
): DiskInfo[] {
  const disks = blockDevices.filter((b) => b.type === 'disk');
  return disks.map((b) => {
    const f = diskFacts(sys, b.name);
    const l = layout.find((d) => d.device === `/dev/${b.name}` || d.device === b.device);
    const media = mediaFromSi(b, f.media);
    return {
      name: b.name,
      device: str(b.device) ?? `/dev/${b.name}`,
      sizeBytes: b.size > 0 ? b.size : (f.sizeBytes ?? 0),
      model: f.model ?? str(b.model) ?? str(l?.name),
      serial: f.serial ?? str(b.serial) ?? str(l?.serialNum),
      vendor: f.vendor ?? str(l?.vendor),
      protocol: f.protocol ?? str(b.protocol) ?? str(l?.interfaceType),
      rotational: f.rotational,
      media,
      removable: Boolean(b.removable) || f.removable,
    };
  });
}

/** Everything about the storage behind `dir` (which need not exist yet: its nearest existing ancestor is examined). */
export async function describeCacheDir(
  dir: string,
  ctx: { systemId: string; sys: SysReader; warnings: string[]; probeDirectIo: boolean; probeBandwidth: false | DriveProbeOptions },
): Promise<CacheDirInfo> {
  const { resolved, exists } = nearestExisting(dir);
  let mountPoint: string | null = null;
  let filesystem: string | null = null;
  let mountSource: string | null = null;
  let block = null;
  let ramBackingChain: string | null = null;
  let bufferedLoops: BufferedLoop[] = [];
  const mounts = readMounts(ctx.sys);
  if (mounts === null) {
    ctx.warnings.push('cache dir: /proc/self/mountinfo is not readable; mount and block device unknown');
  } else {
    const mount = findMount(mounts, resolved);
    if (mount) {
      mountPoint = mount.mountPoint;
      filesystem = mount.fsType;
      mountSource = mount.source;
      // The engine's own walk (ram-filesystem.ts), so hw and the plan name what the trial's results will.
      const behind = storageBehindMount(ctx.sys, mount, mounts);
      block = behind.block;
      ramBackingChain = behind.ramBacking?.chain ?? null;
      bufferedLoops = behind.bufferedLoops;
      if (block === null) ctx.warnings.push(`cache dir: ${mount.fsType} at ${mount.mountPoint} has no block device (network, memory or FUSE filesystem)`);
      else if (block.backingFile !== null && block.backingFilesystem === null) ctx.warnings.push(`cache dir: no mount holds ${block.name}'s file ${block.backingFile} here (set up in another mount namespace?); the drive behind it is unknown`);
      else if (!block.model && block.media !== 'ram') ctx.warnings.push(`cache dir: the disk ${block.disks.join('+')} reports no model (virtual disk?); its identity is local to this system`);
    }
  }
  let totalBytes: number | null = null;
  let freeBytes: number | null = null;
  try {
    const st = await fsp.statfs(resolved);
    totalBytes = Number(st.blocks) * Number(st.bsize);
    freeBytes = Number(st.bavail) * Number(st.bsize);
  } catch (err) {
    ctx.warnings.push(`cache dir: statfs failed: ${(err as Error).message}`);
  }
  const refusal = cacheDirRefusal(dir);
  const writable = refusal === null;
  // The probes write files; never into a system directory, whoever asks (and as whichever user).
  const systemDir = systemDirectoryOf(resolved);
  if (systemDir && (ctx.probeDirectIo || ctx.probeBandwidth)) {
    // A directory not made yet is probed in the nearest one that exists. Where that is / or /var (refused
    // themselves, not what is below them), the user's own path (/data/new/kv) is no system directory:
    // said so, with the way to have it probed.
    ctx.warnings.push(
      !exists && SYSTEM_DIRECTORY_ROOTS.includes(resolved)
        ? `cache dir: ${dir} does not exist yet (a suite creates it), and the nearest directory that does, ${resolved}, is a system directory: nothing probed there. Create ${dir} first to have its drive probed.`
        : `cache dir: ${resolved} is in the system directory ${systemDir}; nothing probed there`,
    );
  }
  let directIo = null;
  if (ctx.probeDirectIo && !systemDir) {
    if (refusal !== null) ctx.warnings.push(`cache dir: ${refusal.message}; direct I/O not probed`);
    else {
      directIo = await probeDirectIo(resolved).catch((err: Error) => {
        ctx.warnings.push(`cache dir: direct I/O probe failed: ${err.message}`);
        return null;
      });
    }
  }
  let bandwidth: BandwidthProbe | null = null;
  if (ctx.probeBandwidth && writable && !systemDir) {
    bandwidth = await probeDriveLimit(resolved, ctx.probeBandwidth).catch((err: Error) => {
      ctx.warnings.push(`cache dir: bandwidth probe failed: ${err.message}`);
      return null;
    });
  }
  const drive = driveIdentity({ systemId: ctx.systemId, block, mountSource, filesystem, mountPoint });
  return {
    path: dir,
    resolvedPath: resolved,
    exists,
    writable,
    notWritableReason: refusal?.message ?? null,
    mountPoint,
    filesystem,
    mountSource,
    blockDevice: block,
    totalBytes,
    freeBytes,
    directIo,
    driveId: drive.id,
    driveIdBasis: drive.basis,
    driveLabel: drive.label,
    bandwidth,
    ramBackingChain,
    bufferedLoops,
  };
}

/**
 * Detects the machine, and the storage behind `cacheDir` when one is given. A few hundred ms; with
 * `probeBandwidth` a few seconds more (it writes and reads a file in the directory).
 */
export async function detectHardware(cacheDir: string | null, opts: DetectOptions = {}): Promise<HardwareProfile> {
  const source = opts.source ?? systeminformationSource;
  const sys = sysReader(opts.sysRoot ?? '/');
  const warnings: string[] = [];
  const [cpu, mem, graphics, layout, blocks, osData, system, uuid] = await Promise.all([
    settle('cpu', () => source.cpu(), null, warnings),
    settle('memory', () => source.mem(), null, warnings),
    settle('graphics', () => source.graphics(), { controllers: [], displays: [] }, warnings),
    settle('disk layout', () => source.diskLayout(), [], warnings),
    settle('block devices', () => source.blockDevices(), [], warnings),
    settle('os', () => source.osInfo(), null, warnings),
    settle('system', () => source.system(), null, warnings),
    settle('uuid', () => source.uuid(), null, warnings),
  ]);
  const hostname = opts.hostname ?? str(osData?.hostname) ?? os.hostname();
  const identity = systemIdentity({
    machineId: readMachineId(opts.machineIdPaths),
    osUuid: str(uuid?.os) ?? str(uuid?.hardware),
    hostname,
  });
  if (identity.source !== 'machine-id') warnings.push(`system identity: no machine-id; identified by ${identity.source}`);

  let cuda: CudaInfo | null = null;
  if (opts.cudaProbe !== false) {
    const probe = opts.cudaProbe ?? (() => probeCudaDriver());
    const r = await probe().catch((err: Error): CudaDriverProbe => ({ available: false, reason: err.message, driverVersion: null, cudaVersion: null, library: '?', devices: [] }));
    cuda = {
      available: r.available,
      reason: r.reason,
      driverVersion: r.driverVersion,
      cudaVersion: r.cudaVersion,
      devices: r.devices.map((d) => ({ index: d.index, name: d.name, totalMemoryBytes: d.totalMemoryBytes, pciBusId: d.pciBusId ?? null })),
    };
  }
  const gpus = mergeGpus(gpusFrom(graphics), cuda).map((g) => ({ ...g, pcieLink: readPcieLink(sys, g.busId) }));
  for (const g of gpus.filter((x) => x.compute && x.busId !== null && x.pcieLink === null)) {
    warnings.push(`GPU #${g.index} (${g.model ?? 'unnamed'}): no PCIe link in sysfs for its bus id ${pciSysfsName(g.busId) ?? g.busId}`);
  }
  if (gpus.length === 0) warnings.push('no GPU found: GPU scenarios will be skipped');
  else if (!gpus.some((g) => g.engineUsable)) warnings.push(`GPU found but the engine cannot use it${cuda?.reason ? `: ${cuda.reason}` : ''}`);
  const disks = disksFrom(sys, blocks, layout);

  const probeBandwidth = opts.probeBandwidth === true ? {} : opts.probeBandwidth ? opts.probeBandwidth : false;
  const cacheDirInfo =
    cacheDir === null
      ? null
      : await describeCacheDir(cacheDir, { systemId: identity.id, sys, warnings, probeDirectIo: opts.probeDirectIo ?? true, probeBandwidth });

  const memoryCopyBytesPerSec = opts.probeMemory ? probeMemoryCopy() : null;
  const gpuCopy =
    opts.probeGpu && gpus.some((g) => g.engineUsable)
      ? await probeGpuCopy(opts.probeGpu === true ? {} : opts.probeGpu).catch((err: Error) => {
          warnings.push(`GPU copy probe: ${err.message}`);
          return null;
        })
      : null;

  const speed = (ghz: number | undefined): number | null => (typeof ghz === 'number' && ghz > 0 ? ghz : null);
  return {
    version: HARDWARE_PROFILE_VERSION,
    detectedAt: new Date().toISOString(),
    kvbenchVersion: KVBENCH_VERSION,
    system: {
      id: identity.id,
      idSource: identity.source,
      hostname,
      manufacturer: str(system?.manufacturer),
      model: str(system?.model),
      virtual: Boolean(system?.virtual),
      virtualHost: str(system?.virtualHost),
    },
    os: {
      platform: str(osData?.platform) ?? process.platform,
      distro: str(osData?.distro),
      release: str(osData?.release),
      kernel: str(osData?.kernel) ?? os.release(),
      arch: str(osData?.arch) ?? process.arch,
    },
    cpu: {
      manufacturer: str(cpu?.manufacturer),
      brand: str(cpu?.brand),
      logicalCores: cpu?.cores || os.availableParallelism(),
      physicalCores: cpu?.physicalCores || cpu?.cores || os.availableParallelism(),
      sockets: cpu?.processors || null,
      baseSpeedGhz: speed(cpu?.speed),
      maxSpeedGhz: speed(cpu?.speedMax),
    },
    memory: {
      totalBytes: mem?.total || os.totalmem(),
      availableBytes: mem?.available || os.freemem(),
      swapTotalBytes: mem?.swaptotal ?? 0,
    },
    gpus,
    cuda,
    disks,
    cacheDir: cacheDirInfo,
    memoryCopyBytesPerSec,
    gpuCopy,
    warnings,
  };
}
