// Whether a directory's files live in RAM (tmpfs, ramfs, or a loop device whose file is on one).
// Direct I/O cannot tell: tmpfs accepts O_DIRECT since Linux 6.6, and a loop device on tmpfs takes it
// as any disk does, so a storage tier or probe there would otherwise report memory speed as a drive's.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { ramBackingAt, sysReader, type RamBacking } from '../../hardware/linux-storage.ts';

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

/**
 * 'tmpfs' or 'ramfs' when `dir` is on one; what holds it in RAM when a block device does (a loop
 * device whose file is on tmpfs: 'loop0 on tmpfs'; a RAM disk), from the mounts and sysfs; else null
 * (also when statfs fails: nothing is claimed).
 */
export async function ramFilesystemAt(dir: string, sysRoot = '/'): Promise<string | null> {
  return (await ramBackingOfDir(dir, sysRoot))?.backing ?? null;
}

/**
 * What holds `dir`'s files in RAM, in ramFilesystemAt's words and as the chain of devices down to
 * that RAM ('loop0 → /dev/shm/d.img on tmpfs', see ramChainOf); null when nothing does, or statfs fails.
 */
export async function ramBackingOfDir(dir: string, sysRoot = '/'): Promise<RamBacking | null> {
  let type: number;
  try {
    type = Number((await fsp.statfs(dir)).type);
  } catch {
    return null;
  }
  const byType = ramFilesystemOf(type);
  if (byType !== null) return { backing: byType, chain: byType };
  if (process.platform !== 'linux') return null;
  try {
    return ramBackingAt(sysReader(sysRoot), fs.realpathSync(dir));
  } catch {
    return null;
  }
}
