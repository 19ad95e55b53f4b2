// A database whose filesystem is full. SQLite says only "database or disk is full" (SQLITE_FULL),
// or "disk I/O error" when it cannot size the -shm file that a WAL database needs even to be read
// (SQLITE_IOERR_SHMSIZE). Neither names the file or says what to do, so the store says both.
import { printable } from '../../src-shared/domain/label-text.ts';
import fs from 'node:fs';
import path from 'node:path';
import { sqliteCode } from './sqlite.ts';
import { StoreError } from './store-error.ts';

export const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;

/** Bytes this user may still write on the filesystem holding `dir`; null when it cannot be told. */
export function freeBytesIn(dir: string): number | null {
  try {
    const st = fs.statfsSync(dir);
    return Number(st.bavail) * Number(st.bsize);
  } catch {
    return null;
  }
}

/**
 * With less than this free, an I/O error from SQLite is taken for a full filesystem: it gives
 * SQLITE_IOERR_SHMSIZE, not SQLITE_FULL, when the -shm file cannot grow.
 */
const NEARLY_FULL_BYTES = 1024 * 1024;

/** Whether SQLite failed on `file` for want of room on its filesystem. */
export function isNoRoomError(file: string, err: unknown): boolean {
  const code = sqliteCode(err);
  if (code === 'SQLITE_FULL') return true;
  if (code === null || !code.startsWith('SQLITE_IOERR')) return false;
  const free = freeBytesIn(path.dirname(file));
  return free !== null && free < NEARLY_FULL_BYTES;
}

/** `file` (or what SQLite needs beside it) could not be written for want of room: the file, its filesystem, and `advice`. */
export function noRoomError(file: string, err: unknown, advice: string): StoreError {
  const dir = path.dirname(file);
  const free = freeBytesIn(dir);
  return new StoreError(
    'DB_WRITE_FAILED',
    `${printable(file)}: the filesystem holding it is full (${free === null ? 'free space unknown' : `${mib(free)} free in ${printable(dir)}`}), ` +
      `so SQLite could not write (${sqliteCode(err) ?? 'error'}: ${(err as Error).message}). ${advice}`,
  );
}

/** A failed write as users should read it: a full filesystem is said with `advice`; any other error is returned as it is. */
export function explainWriteFailure(file: string, err: unknown, advice: string): unknown {
  return isNoRoomError(file, err) ? noRoomError(file, err, advice) : err;
}
