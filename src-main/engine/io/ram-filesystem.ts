// Whether a directory's files live in RAM (tmpfs, ramfs). Direct I/O cannot tell: tmpfs accepts
// O_DIRECT since Linux 6.6, and no block device counters exist to compare against, so a storage
// tier or probe there would otherwise report memory speed as a drive's.
import fsp from 'node:fs/promises';

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

/** 'tmpfs' or 'ramfs' when `dir` is on one, else null (also when statfs fails: nothing is claimed). */
export async function ramFilesystemAt(dir: string): Promise<string | null> {
  try {
    return ramFilesystemOf(Number((await fsp.statfs(dir)).type));
  } catch {
    return null;
  }
}
