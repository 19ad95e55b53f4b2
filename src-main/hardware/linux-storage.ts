// The storage behind a directory on Linux: its mount (from /proc/self/mountinfo), the block device
// of that mount and the disks behind it (from sysfs). systeminformation reports machine-wide disks
// and filesystems but cannot say which device holds a given directory; the kernel can.
//
// Every reader takes the root of /proc and /sys so tests can point it at a fake tree; anything
// missing comes back null rather than failing (virtual disks have no model, containers may hide sysfs).
import fs from 'node:fs';
import path from 'node:path';
import { RAM_FILESYSTEMS, ramBackingOf, type BlockDeviceInfo, type BufferedLoop, type DiskMedia } from '../../src-shared/domain/hardware.ts';
import { decodeDevT } from '../engine/metrics/device-stats.ts';

export interface MountEntry {
  majorMinor: string;
  /** The mount's root within its filesystem (for bind mounts). */
  root: string;
  mountPoint: string;
  fsType: string;
  source: string;
}

/** Octal escapes (\040 for a space …) as the kernel writes them in mountinfo. */
function unescapeMountField(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Parses /proc/self/mountinfo (proc(5)); malformed lines are skipped. */
export function parseMountInfo(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const fields = line.split(' ');
    const sep = fields.indexOf('-', 6);
    if (sep < 0 || fields.length < sep + 3) continue;
    out.push({
      majorMinor: fields[2],
      root: unescapeMountField(fields[3]),
      mountPoint: unescapeMountField(fields[4]),
      fsType: fields[sep + 1],
      source: unescapeMountField(fields[sep + 2]),
    });
  }
  return out;
}

/**
 * The mount holding `absPath`: the longest mount point that is `absPath` or one of its ancestors.
 * When a mount point is mounted over several times, the last one (the visible one) wins.
 */
export function findMount(mounts: readonly MountEntry[], absPath: string): MountEntry | null {
  let best: MountEntry | null = null;
  for (const m of mounts) {
    const mp = m.mountPoint;
    const inside = mp === '/' || absPath === mp || absPath.startsWith(mp.endsWith('/') ? mp : `${mp}/`);
    if (!inside) continue;
    if (best === null || mp.length >= best.mountPoint.length) best = m;
  }
  return best;
}

/** The nearest existing ancestor of `p` (or `p` itself), symlinks resolved. */
export function nearestExisting(p: string): { resolved: string; exists: boolean } {
  let cur = path.resolve(p);
  let exists = true;
  for (;;) {
    try {
      return { resolved: fs.realpathSync(cur), exists };
    } catch {
      exists = false;
      const parent = path.dirname(cur);
      if (parent === cur) return { resolved: cur, exists: false };
      cur = parent;
    }
  }
}

export interface SysReader {
  /** Trimmed file content, or null when absent or unreadable. */
  read(p: string): string | null;
  readlink(p: string): string | null;
  list(p: string): string[];
  /** `p` with every symlink resolved, as a path inside the root; null when it does not resolve. */
  realpath(p: string): string | null;
  /** major:minor of the block device node at `p` (symlinks followed); null for anything else. */
  blockDeviceNumber(p: string): string | null;
  /** Bytes of the regular file at `p` that hold no storage yet (a sparse file's holes); null when it cannot be told. */
  unallocatedBytes(p: string): number | null;
}

export function sysReader(root = '/'): SysReader {
  const abs = (p: string): string => path.join(root, p);
  return {
    read: (p) => {
      try {
        const s = fs.readFileSync(abs(p), 'utf8').trim();
        return s === '' ? null : s;
      } catch {
        return null;
      }
    },
    readlink: (p) => {
      try {
        return fs.readlinkSync(abs(p));
      } catch {
        return null;
      }
    },
    list: (p) => {
      try {
        return fs.readdirSync(abs(p)).sort();
      } catch {
        return [];
      }
    },
    realpath: (p) => {
      try {
        const real = fs.realpathSync(abs(p));
        const rel = path.relative(fs.realpathSync(root), real);
        return rel.startsWith('..') || path.isAbsolute(rel) ? null : `/${rel}`;
      } catch {
        return null;
      }
    },
    blockDeviceNumber: (p) => {
      try {
        const st = fs.statSync(abs(p), { bigint: true });
        if (!st.isBlockDevice()) return null;
        const { major, minor } = decodeDevT(st.rdev);
        return `${major}:${minor}`;
      } catch {
        return null;
      }
    },
    unallocatedBytes: (p) => {
      try {
        const st = fs.statSync(abs(p));
        // st_blocks is always in 512-byte units (stat(2)), whatever the filesystem's block size.
        return st.isFile() ? Math.max(0, st.size - st.blocks * 512) : null;
      } catch {
        return null;
      }
    },
  };
}

/** Kernel name of the block device with this major:minor (e.g. 259:1 → nvme0n1p1), via /sys/dev/block. */
export function blockNameFromMajorMinor(sys: SysReader, majorMinor: string): string | null {
  const link = sys.readlink(`/sys/dev/block/${majorMinor}`);
  return link ? path.basename(link) : null;
}

/** The whole disk of a partition (its parent in sysfs); the name itself for a whole disk. */
function parentDisk(sys: SysReader, name: string): string {
  if (sys.read(`/sys/class/block/${name}/partition`) === null) return name;
  const link = sys.readlink(`/sys/class/block/${name}`);
  if (!link) return name;
  return path.basename(path.dirname(link));
}

/** Disks behind a device: a partition's parent; a dm/md device's members (recursively); else itself. */
export function disksBehind(sys: SysReader, name: string, depth = 0): string[] {
  const disk = parentDisk(sys, name);
  const slaves = sys.list(`/sys/block/${disk}/slaves`);
  if (slaves.length === 0 || depth > 4) return [disk];
  return [...new Set(slaves.flatMap((s) => disksBehind(sys, s, depth + 1)))];
}

function readPositiveInt(sys: SysReader, p: string): number | null {
  const s = sys.read(p);
  if (s === null) return null;
  const n = Number(s);
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** What kind of medium a disk is, from its name, driver and rotational flag. */
export function diskMedia(name: string, driver: string | null, rotational: boolean | null): DiskMedia {
  if (name.startsWith('nvme')) return 'nvme';
  if (name.startsWith('zram') || name.startsWith('ram') || name.startsWith('pmem')) return 'ram';
  if (driver === 'virtio_blk' || name.startsWith('vd') || name.startsWith('xvd')) return 'virtual';
  if (rotational === true) return 'hdd';
  if (rotational === false) return 'ssd';
  return 'unknown';
}

export interface DiskFacts {
  name: string;
  model: string | null;
  serial: string | null;
  vendor: string | null;
  wwid: string | null;
  rotational: boolean | null;
  logicalBlockBytes: number | null;
  physicalBlockBytes: number | null;
  sizeBytes: number | null;
  driver: string | null;
  protocol: string | null;
  media: DiskMedia;
  removable: boolean;
}

/** What sysfs says about one whole disk. */
export function diskFacts(sys: SysReader, name: string): DiskFacts {
  const base = `/sys/block/${name}`;
  const rot = sys.read(`${base}/queue/rotational`);
  const rotational = rot === null ? null : rot === '1';
  const driverLink = sys.readlink(`${base}/device/driver`);
  const driver = driverLink ? path.basename(driverLink) : null;
  // NVMe namespaces keep model and serial on the controller (device/), SCSI disks on device/ too.
  const model = sys.read(`${base}/device/model`);
  const serial = sys.read(`${base}/device/serial`) ?? sys.read(`${base}/serial`);
  const vendor = sys.read(`${base}/device/vendor`);
  const wwid = sys.read(`${base}/wwid`) ?? sys.read(`${base}/device/wwid`);
  const sectors = readPositiveInt(sys, `${base}/size`);
  const media = diskMedia(name, driver, rotational);
  const protocol =
    media === 'nvme' ? (sys.read(`${base}/device/transport`) ?? 'pcie').toUpperCase() === 'PCIE' ? 'NVMe' : `NVMe/${sys.read(`${base}/device/transport`)}`
    : driver === 'virtio_blk' ? 'virtio'
    : name.startsWith('sd') ? 'SCSI/SATA'
    : name.startsWith('loop') ? 'loop'
    : null;
  return {
    name,
    model,
    serial,
    vendor,
    wwid,
    rotational,
    logicalBlockBytes: readPositiveInt(sys, `${base}/queue/logical_block_size`),
    physicalBlockBytes: readPositiveInt(sys, `${base}/queue/physical_block_size`),
    sizeBytes: sectors === null ? null : sectors * 512,
    driver,
    protocol,
    media,
    removable: sys.read(`${base}/removable`) === '1',
  };
}

/**
 * The kernel name of the block device a mount's /dev source names. btrfs reports an anonymous
 * major:minor (0:NN) in mountinfo, so its source is all there is; on LUKS or LVM that source is
 * /dev/mapper/luks-… or /dev/mapper/vg-lv, whose basename is no sysfs name: the node's device number
 * (as the engine's device-stats.ts does) or the symlink's target (../dm-0) names the device.
 */
function blockNameFromSource(sys: SysReader, source: string): string | null {
  const rdev = sys.blockDeviceNumber(source);
  const byNumber = rdev === null ? null : blockNameFromMajorMinor(sys, rdev);
  if (byNumber !== null) return byNumber;
  for (const p of [sys.realpath(source), source]) {
    const candidate = p === null ? null : path.basename(p);
    if (candidate && sys.read(`/sys/class/block/${candidate}/dev`) !== null) return candidate;
  }
  return null;
}

/** The mounts of this process's namespace, or null when /proc/self/mountinfo cannot be read. */
export function readMounts(sys: SysReader): MountEntry[] | null {
  const text = sys.read('/proc/self/mountinfo');
  return text === null ? null : parseMountInfo(text);
}

/** Loops of loop devices (a loop on a file in a loop's filesystem …) followed at most this deep. */
const MAX_LOOP_DEPTH = 4;

/** The path in a loop's backing_file without the " (deleted)" the kernel appends to an unlinked file. */
const withoutDeleted = (file: string): string => file.replace(/ \(deleted\)$/, '');

/** The kernel name of a mount's block device: by major:minor, else by its /dev source; null for tmpfs, NFS, FUSE … */
function blockNameOfMount(sys: SysReader, mount: MountEntry): string | null {
  const name = blockNameFromMajorMinor(sys, mount.majorMinor);
  if (name === null && mount.source.startsWith('/dev/')) return blockNameFromSource(sys, mount.source);
  return name;
}

/**
 * What one walk down a mount's devices finds: its block device (blockDeviceForMount), its chain down
 * to RAM (ramChainOf), the loops on the way that do buffered I/O, and the device the bytes reach.
 */
interface MountWalk {
  block: BlockDeviceInfo | null;
  ramChain: string | null;
  /** Loop devices on the way down (the mount's own, loops in loops, loops under dm/md) with loop/dio 0. */
  bufferedLoops: BufferedLoop[];
  /**
   * The block device whose /proc/diskstats counters show what reached a drive: the mount's own device,
   * or below loop devices the one holding the (innermost) backing file; null when no block device is
   * known to hold the bytes (a loop file on tmpfs or NFS, one no mount here holds, members on several).
   */
  servedBy: string | null;
}

/** A loop device: /sys/block/NAME/loop/backing_file is there (loop0, never a partition loop0p1). */
const loopBackingFile = (sys: SysReader, name: string): string | null => (name.startsWith('loop') ? sys.read(`/sys/block/${name}/loop/backing_file`) : null);

/**
 * Whether a loop device reads its backing file through the page cache: loop/dio is 1 with direct
 * I/O on (losetup --direct-io=on), 0 without (losetup's default). A kernel without the file (before
 * Linux 4.4) had no direct I/O for loops at all.
 */
const loopIsBuffered = (sys: SysReader, name: string): boolean => sys.read(`/sys/block/${name}/loop/dio`) !== '1';

/**
 * The block device behind a mount (by major:minor, else by its /dev source), or null for tmpfs, NFS,
 * FUSE … A loop device is followed to the filesystem holding its backing file (`mounts`, default
 * this process's): on tmpfs or ramfs its media is 'ram' (the files live in memory); on a disk it has
 * that disk's model, serial, media and disks, so the drive is the one the bytes reach.
 */
export function blockDeviceForMount(sys: SysReader, mount: MountEntry, mounts?: readonly MountEntry[] | null): BlockDeviceInfo | null {
  return walkMount(sys, mount, mounts, 0).block;
}

/**
 * The devices and files from `mount` down to the memory that holds its bytes, joined by "→": the
 * RAM filesystem itself ('tmpfs'); a RAM disk, under whatever sits on it ('zram0', 'dm-3 → zram0');
 * a loop device, its backing file as the kernel names it (" (deleted)" once unlinked) and the
 * filesystem holding that file, then what holds that filesystem. Null where the bytes reach no RAM:
 * a disk, a network filesystem, a loop file no mount here holds, loops nested past MAX_LOOP_DEPTH.
 */
export function ramChainOf(sys: SysReader, mount: MountEntry, mounts: readonly MountEntry[]): string | null {
  return walkMount(sys, mount, mounts, 0).ramChain;
}

/** blockDeviceForMount and ramChainOf in one walk: each device's sysfs and each loop's file read once. */
function walkMount(sys: SysReader, mount: MountEntry, mounts: readonly MountEntry[] | null | undefined, depth: number): MountWalk {
  const ramFs = RAM_FILESYSTEMS.has(mount.fsType) ? mount.fsType : null;
  const name = blockNameOfMount(sys, mount);
  if (name === null) return { block: null, ramChain: ramFs, bufferedLoops: [], servedBy: null };
  const ownSectors = readPositiveInt(sys, `/sys/class/block/${name}/size`);
  const own = diskFacts(sys, name);
  // loop/backing_file as the kernel writes it, " (deleted)" kept: what the chain says of the loop.
  const named = loopBackingFile(sys, name);
  if (named !== null) {
    const loop = loopDevice(sys, name, own, ownSectors, named, mounts, depth);
    return { ...loop, ramChain: ramFs ?? loop.ramChain };
  }
  const disks = disksBehind(sys, name);
  const first = diskFacts(sys, disks[0]);
  const ramDisk = first.media !== 'ram' ? null : disks.length === 1 && disks[0] === name ? name : `${name} → ${disks.join('+')}`;
  // A partition of a loop (loop0p1), or dm/md on loops: the bytes go on through those loops' files.
  const loops = disks.flatMap((d) => {
    const file = d === name ? null : loopBackingFile(sys, d);
    return file === null ? [] : [loopDevice(sys, d, diskFacts(sys, d), null, file, mounts, depth)];
  });
  const below = new Set(loops.map((l) => l.servedBy));
  const servedBy = loops.length === 0 ? name : loops.length === disks.length && below.size === 1 ? [...below][0] : null;
  return {
    block: {
      name,
      disks,
      model: disks.length === 1 ? first.model : null,
      serial: disks.length === 1 ? first.serial : null,
      wwid: disks.length === 1 ? first.wwid : null,
      rotational: first.rotational,
      logicalBlockBytes: own.logicalBlockBytes ?? first.logicalBlockBytes,
      physicalBlockBytes: own.physicalBlockBytes ?? first.physicalBlockBytes,
      sizeBytes: ownSectors === null ? first.sizeBytes : ownSectors * 512,
      media: name.startsWith('loop') ? 'virtual' : first.media,
      backingFile: null,
      backingFilesystem: null,
      backingFileUnallocatedBytes: null,
    },
    ramChain: ramFs ?? ramDisk,
    bufferedLoops: loops.flatMap((l) => l.bufferedLoops),
    servedBy,
  };
}

function loopDevice(
  sys: SysReader,
  name: string,
  own: DiskFacts,
  ownSectors: number | null,
  named: string,
  mounts: readonly MountEntry[] | null | undefined,
  depth: number,
): MountWalk {
  const backingFile = withoutDeleted(named);
  const all = mounts === undefined ? readMounts(sys) : mounts;
  const holder = all === null ? null : findMount(all, backingFile);
  const behind = holder === null || depth >= MAX_LOOP_DEPTH ? null : walkMount(sys, holder, all, depth + 1);
  const inRam = holder !== null && RAM_FILESYSTEMS.has(holder.fsType);
  const below = behind?.ramChain ?? null;
  const buffered: BufferedLoop[] = loopIsBuffered(sys, name) ? [{ name, backingFile: named, backingFilesystem: holder?.fsType ?? null }] : [];
  return {
    block: {
      name,
      disks: behind?.block?.disks ?? [name],
      model: behind?.block?.model ?? null,
      serial: behind?.block?.serial ?? null,
      wwid: behind?.block?.wwid ?? null,
      rotational: behind?.block?.rotational ?? null,
      logicalBlockBytes: own.logicalBlockBytes,
      physicalBlockBytes: own.physicalBlockBytes,
      sizeBytes: ownSectors === null ? own.sizeBytes : ownSectors * 512,
      media: inRam ? 'ram' : (behind?.block?.media ?? 'virtual'),
      backingFile,
      backingFilesystem: holder?.fsType ?? null,
      backingFileUnallocatedBytes: sys.unallocatedBytes(backingFile),
    },
    ramChain: holder === null || below === null ? null : `${name} → ${named} on ${inRam ? holder.fsType : `${holder.fsType} → ${below}`}`,
    bufferedLoops: [...buffered, ...(behind?.bufferedLoops ?? [])],
    servedBy: behind?.servedBy ?? null,
  };
}

/**
 * What makes a directory RAM-backed, in two wordings. `backing` is ramBackingOf's short one ('tmpfs',
 * 'loop0 on tmpfs', 'RAM disk'), the results' ram_filesystem; `chain` is every device and file
 * between the directory's mount and the memory holding its bytes, for a trial's record and the hardware
 * profile (CacheDirInfo.ramBackingChain): 'tmpfs',
 * 'zram0', 'loop0 → /dev/shm/d.img on tmpfs', 'loop2 → /mnt/z/d.img on ext4 → zram0'.
 */
export interface RamBacking {
  backing: string;
  chain: string;
}

/** What is behind a mount: its block device, what holds it in RAM, its buffered loops, the device the bytes reach. */
export interface StorageBehind {
  block: BlockDeviceInfo | null;
  ramBacking: RamBacking | null;
  /**
   * The loop devices on the way down that do buffered I/O on their backing file (loop/dio 0): the
   * host's page cache of that file may serve the reads. Empty when the directory is RAM-backed: its
   * bytes are RAM's whatever a loop on the way does, and ramBacking says so.
   */
  bufferedLoops: BufferedLoop[];
  /** The kernel name of the block device whose counters show what reached a drive (MountWalk.servedBy). */
  servedBy: string | null;
}

/**
 * What is behind a mount found among `mounts`, from one walk down its devices: its block device
 * (blockDeviceForMount), what makes it RAM-backed (ramBackingOf, and ramChainOf's chain: a loop device
 * on a file in tmpfs holds ext4 whose statfs type says nothing of RAM), the loops on the way that read and
 * write through the page cache, and the device that holds the bytes, for the hardware profile and the engine.
 */
export function storageBehindMount(sys: SysReader, mount: MountEntry, mounts: readonly MountEntry[]): StorageBehind {
  const { block, ramChain, bufferedLoops, servedBy } = walkMount(sys, mount, mounts, 0);
  const backing = ramBackingOf({ filesystem: mount.fsType, blockDevice: block });
  // The chain follows the same mounts and sysfs by the same rules; were it ever to find no RAM where
  // ramBackingOf did, the short wording still says what was found rather than nothing.
  const ramBacking = backing === null ? null : { backing, chain: ramChain ?? backing };
  return { block, ramBacking, bufferedLoops: ramBacking === null ? bufferedLoops : [], servedBy };
}

/**
 * What is behind `absPath` (storageBehindMount of the mount holding it, the mounts read here); null
 * when the mounts cannot be read or none holds it.
 */
export function storageBehindPath(sys: SysReader, absPath: string): StorageBehind | null {
  const mounts = readMounts(sys);
  const mount = mounts === null ? null : findMount(mounts, absPath);
  return mounts === null || mount === null ? null : storageBehindMount(sys, mount, mounts);
}
