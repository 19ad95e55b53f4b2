import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KvbenchError } from '../../../src-shared/domain/errors.ts';
import { GIB } from '../../../src-shared/domain/results.ts';
import { resolveRealPath, systemDirectoryOf } from '../config/system-directories.ts';
import type { BufferedLoop } from '../../../src-shared/domain/hardware.ts';
import { storageBehindDir } from '../io/ram-filesystem.ts';
import { markRunDirOwner, removeDeadOwnersRunDirs, runDirPrefix, unmarkRunDir } from './run-dir-ownership.ts';
import { removeCreatedDirs } from '../../util/created-dirs.ts';

/** Share of the free space the storage tier may use when no capacity is given (the reference's rule). */
export const AUTO_CAPACITY_SHARE = 0.95;

export interface StorageTarget {
  /** The user's --cache-dir (or the temp dir). */
  baseDir: string;
  /** The run-owned subdirectory every entry file lives in; removed at the end. */
  runDir: string;
  /** The outermost directory kvbench had to create for baseDir (removed at the end if left empty), or null. */
  createdFrom: string | null;
  capacityBytes: number;
  freeBytesAtStart: number;
  /** What keeps baseDir's files in RAM ('tmpfs', 'ramfs', 'loop0 on tmpfs' …; see storageBehindDir), else null. */
  ramFilesystem: string | null;
  /** The same as the chain of devices down to that RAM ('loop0 → /dev/shm/d.img on tmpfs'; see ramChainOf); null exactly when ramFilesystem is. */
  ramBackingChain: string | null;
  /** Loop devices under baseDir that read their backing file through the page cache (loop/dio 0; see storageBehindDir); empty when RAM-backed. */
  bufferedLoops: BufferedLoop[];
  /** The block device holding baseDir's bytes below its filesystem's own (the disk under a loop's file), else null: where device counters are read. */
  servedBy: string | null;
  /** Run directories of ended processes on this host, removed from baseDir before its free space was read. */
  removedRunDirs: string[];
}

/** Follows symbolic links: a link to /dev/shm is /dev/shm, whatever its own path says. */
export function isSystemDirectory(dir: string): boolean {
  return systemDirectoryOf(resolveRealPath(dir)) !== undefined;
}

/**
 * Checks the cache directory and creates the run's own subdirectory in it. Refuses system
 * directories, unwritable targets and filesystems that cannot hold the largest entry the workload
 * can produce. Never touches files that are already there, except the run directories of ended
 * kvbench processes of this host.
 */
export async function prepareStorageTarget(opts: {
  cacheDir: string | null;
  storageCapacityGb: number;
  largestEntryBytes: number;
  /** Runs sharing this file system's free space (the ranks of a multi-host run): each plans on its share. */
  sharedBy?: number;
  /**
   * `cacheDir` is a rank's own subdirectory (`DIR/rank-N`) of the `--cache-dir` the ranks share: of the
   * levels created for it only that subdirectory is this run's to remove. DIR, and any level above it
   * created on the way, stay (empty once every rank is done): the ranks race to create DIR, and which
   * finished last would otherwise decide whether it is left.
   */
  rankSubdir?: boolean;
}): Promise<StorageTarget> {
  const baseDir = path.resolve(opts.cacheDir ?? os.tmpdir());
  if (isSystemDirectory(baseDir)) {
    throw new KvbenchError('VALIDATION', `--cache-dir cannot be a system directory: ${baseDir}`);
  }
  let createdFrom: string | null = null;
  try {
    const st = await fsp.stat(baseDir);
    if (!st.isDirectory()) throw new KvbenchError('TARGET_NOT_WRITABLE', `--cache-dir is not a directory: ${baseDir}`);
  } catch (err) {
    if (err instanceof KvbenchError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new KvbenchError('TARGET_NOT_WRITABLE', `cannot use --cache-dir ${baseDir}: ${(err as Error).message}`);
    }
    try {
      createdFrom = (await fsp.mkdir(baseDir, { recursive: true })) ?? null;
      if (opts.rankSubdir && createdFrom !== null) createdFrom = baseDir;
    } catch (mkErr) {
      throw new KvbenchError('TARGET_NOT_WRITABLE', `cannot create --cache-dir ${baseDir}: ${(mkErr as Error).message}`);
    }
  }
  try {
    return await prepareRunDir(baseDir, createdFrom, opts);
  } catch (err) {
    // A refused run leaves the file system as it found it: the levels it created go too.
    if (createdFrom !== null) await removeCreatedDirs(baseDir, createdFrom);
    throw err;
  }
}

async function prepareRunDir(
  baseDir: string,
  createdFrom: string | null,
  opts: { storageCapacityGb: number; largestEntryBytes: number; sharedBy?: number },
): Promise<StorageTarget> {
  try {
    await fsp.access(baseDir, fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    throw new KvbenchError('TARGET_NOT_WRITABLE', `--cache-dir is not writable: ${baseDir}`);
  }
  // An engine killed without cleaning up (its host gone too) left its KV files here, and nobody else
  // knows its pid: their space is this run's, so they go before the free space is read.
  const removedRunDirs = await removeDeadOwnersRunDirs(baseDir);
  const stat = await fsp.statfs(baseDir);
  const freeBytesAtStart = Number(stat.bavail) * Number(stat.bsize);
  const behind = await storageBehindDir(baseDir);
  const ram = behind.ram;
  const requested = opts.storageCapacityGb * GIB;
  if (requested > freeBytesAtStart) {
    const [want, free] = fmtGiBApart(requested, freeBytesAtStart);
    throw new KvbenchError('INSUFFICIENT_SPACE', `--storage-capacity-gb ${opts.storageCapacityGb} (${want}) exceeds the free space on ${baseDir} (${free})`);
  }
  const capacityBytes = requested > 0 ? requested : Math.floor((freeBytesAtStart * AUTO_CAPACITY_SHARE) / Math.max(1, opts.sharedBy ?? 1));
  if (capacityBytes < opts.largestEntryBytes) {
    const [holds, largest] = fmtGiBApart(capacityBytes, opts.largestEntryBytes);
    throw new KvbenchError(
      'INSUFFICIENT_SPACE',
      `the storage tier on ${baseDir} can hold ${holds} but this workload's largest KV entry is ${largest}: ` +
        `free up space, choose another --cache-dir, or a smaller model or --storage-capacity-gb`,
    );
  }
  let runDir: string | undefined;
  try {
    runDir = await fsp.mkdtemp(path.join(baseDir, runDirPrefix(process.pid)));
    await markRunDirOwner(runDir);
  } catch (err) {
    if (runDir !== undefined) await fsp.rm(runDir, { recursive: true, force: true }).catch(() => undefined);
    throw new KvbenchError('TARGET_NOT_WRITABLE', `cannot create a run directory in ${baseDir}: ${(err as Error).message}`);
  }
  return { baseDir, runDir, createdFrom, capacityBytes, freeBytesAtStart, ramFilesystem: ram?.backing ?? null, ramBackingChain: ram?.chain ?? null, bufferedLoops: behind.bufferedLoops, servedBy: behind.servedBy, removedRunDirs };
}

/** Removes the run directory (only if empty: the file store already removed its own files). */
export async function releaseStorageTarget(target: StorageTarget): Promise<void> {
  await unmarkRunDir(target.runDir).catch(() => undefined);
  await fsp.rmdir(target.runDir).catch(() => undefined);
  await removeCreatedDirs(target.baseDir, target.createdFrom);
}

/**
 * Two sizes in GiB with as many decimals (2 to 9) as it takes to tell them apart: a refusal must not
 * read "0.05 GiB exceeds the free space (0.05 GiB)".
 */
export function fmtGiBApart(a: number, b: number): [string, string] {
  let digits = 2;
  while (digits < 9 && (a / GIB).toFixed(digits) === (b / GIB).toFixed(digits)) digits++;
  return [`${(a / GIB).toFixed(digits)} GiB`, `${(b / GIB).toFixed(digits)} GiB`];
}
