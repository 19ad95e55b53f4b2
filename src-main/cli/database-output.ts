import { printable } from '../../src-shared/domain/label-text.ts';
import { isSameFile } from '../engine/config/system-directories.ts';

/** Where SQLite keeps a database: the file, WAL mode's -wal and -shm, and a rollback -journal. */
const DATABASE_FILE_SUFFIXES = ['', '-wal', '-shm', '-journal'] as const;

/**
 * Why a command that reads the database `dbPath` must not write `out`, or null. Exports replace their
 * file atomically, so an `--out` naming the database (or one of its companion files, through any
 * spelling or link) would swap every stored trial for the export, with no way back.
 */
export function databaseOutputError(flag: string, out: string, dbPath: string): string | null {
  const hit = DATABASE_FILE_SUFFIXES.map((s) => `${dbPath}${s}`).find((f) => isSameFile(out, f));
  return hit === undefined ? null : `${flag} ${printable(out)} is the database${hit === dbPath ? '' : ` file ${printable(hit)}`} this command reads (${printable(dbPath)}): writing it would destroy what is stored; choose another file`;
}
