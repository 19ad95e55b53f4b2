// Whether a directory's files live in RAM (tmpfs, ramfs, or a loop device whose file is on one).
// Direct I/O cannot tell: tmpfs accepts O_DIRECT since Linux 6.6, and a loop device on tmpfs takes it
// as any disk does, so a storage tier or probe there would otherwise report memory speed as a drive's.
// The same walk finds loop devices that read their backing file through the page cache (loop/dio 0),
// where O_DIRECT cannot keep the host's RAM out either, and the disk that holds a loop's file.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import type { BufferedLoop } from '../../../src-shared/domain/hardware.ts';
import { storageBehindPath, sysReader, type RamBacking } from '../../hardware/linux-storage.ts';

/** statfs(2) f_type of the Linux filesystems that keep their files in RAM (linux/magic.h). */
const RAM_FILESYSTEM_MAGIC: ReadonlyMap<number, string> = new Map([
  [0x01021994, 'tmpfs'],
  [0x858458f6, 'ramfs'],
]);

/** The RAM-backed filesystem a statfs `type` names, or null. Linux only: elsewhere f_type is no magic number. */
export function ramFilesystemOf(statfsType: number, platform: NodeJS.Platform = process.platform): string | null {
  if (platform !== 'linux') return null;
  return RAM_FILESYSTEM_MAGIC.get(statfsType >>> 0) ?? null;
}

/** What the engine needs to know of the storage behind a directory before it measures there. */
export interface DirStorage {
  /**
   * What holds its files in RAM, else null: 'tmpfs' or 'ramfs' when the directory is on one; what
   * holds it when a block device does ('loop0 on tmpfs', a RAM disk), from the mounts and sysfs,
   * with the chain of devices down to that RAM ('loop0 → /dev/shm/d.img on tmpfs', see ramChainOf).
   */
  ram: RamBacking | null;
  /** Loop devices under it that read and write their backing file through the page cache (loop/dio 0); empty when RAM-backed. */
  bufferedLoops: BufferedLoop[];
  /**
   * The block device holding its bytes when that is not the device its filesystem is on: the disk
   * under a loop device's backing file (vda for a loop on a file in /var/tmp), whose counters show
   * whether the drive or the page cache served the reads. Null when it is the filesystem's own device,
   * or no block device is known to hold them.
   */
  servedBy: string | null;
}

/** What holds a directory's files in RAM, the buffered loops and the device holding the bytes, from one walk (nothing claimed when statfs fails). */
export async function storageBehindDir(dir: string, sysRoot = '/'): Promise<DirStorage> {
  const none: DirStorage = { ram: null, bufferedLoops: [], servedBy: null };
  let type: number;
  try {
    type = Number((await fsp.statfs(dir)).type);
  } catch {
    return none;
  }
  const byType = ramFilesystemOf(type);
  if (byType !== null) return { ...none, ram: { backing: byType, chain: byType } };
  if (process.platform !== 'linux') return none;
  try {
    const behind = storageBehindPath(sysReader(sysRoot), fs.realpathSync(dir));
    if (behind === null) return none;
    const servedBy = behind.servedBy === behind.block?.name ? null : behind.servedBy;
    return { ram: behind.ramBacking, bufferedLoops: behind.bufferedLoops, servedBy };
  } catch {
    return none;
  }
}
