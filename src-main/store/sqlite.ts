// better-sqlite3, typed here with just what the store uses (the package ships no types, and its
// API is small and stable). Node-API, prebuilt: no compiler, no rebuild for Electron.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export type SqlValue = string | number | bigint | Buffer | null;
export type SqlParams = SqlValue[] | [Record<string, SqlValue>];

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface Statement {
  run(...params: SqlParams): RunResult;
  get(...params: SqlParams): unknown;
  all(...params: SqlParams): unknown[];
}

export interface DatabaseOptions {
  readonly?: boolean;
  fileMustExist?: boolean;
  /** Milliseconds to wait for a lock (busy_timeout). */
  timeout?: number;
}

export interface Database {
  readonly open: boolean;
  readonly inTransaction: boolean;
  readonly name: string;
  prepare(sql: string): Statement;
  exec(sql: string): this;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) & { immediate: (...args: A) => R };
  backup(destination: string): Promise<unknown>;
  /** The whole database as bytes (an in-memory one too): what openSerialized opens again, in another thread. */
  serialize(): Buffer;
  /** Lifts SQLITE_DBCONFIG_DEFENSIVE, which also forbids PRAGMA writable_schema (openForReading of a damaged file). */
  unsafeMode(on?: boolean): this;
  close(): this;
}

type DatabaseConstructor = new (filename: string | Buffer, options?: DatabaseOptions) => Database;

const require = createRequire(import.meta.url);
let ctor: DatabaseConstructor | undefined;

/** Opens a database file (loads the native module on first use). */
export function openDatabase(file: string, options: DatabaseOptions = {}): Database {
  // SQLite reads whether it accepts file: URIs once, when the module loads; kvbench needs one (see
  // openImmutable) and opens every other file by its absolute path, which never starts with "file:".
  process.env.SQLITE_USE_URI ??= '1';
  ctor ??= require('better-sqlite3') as DatabaseConstructor;
  return new ctor(file, options);
}

/** A database in memory holding `bytes` (Database.serialize's), copied: the buffer may go once it returns. */
export function openSerialized(bytes: Buffer): Database {
  process.env.SQLITE_USE_URI ??= '1';
  ctor ??= require('better-sqlite3') as DatabaseConstructor;
  return new ctor(bytes);
}

/**
 * Opens a database on read-only media without locks or a -shm file (SQLite's `immutable=1`): the
 * only way to read a WAL-mode database whose directory cannot be written. SQLite then assumes
 * nothing changes the file, so callers use it only where nothing can (and never with a -wal file
 * holding changes, which it would not read).
 */
export function openImmutable(file: string): Database {
  return openDatabase(`${pathToFileURL(file).href}?immutable=1`, { readonly: true, fileMustExist: true });
}

/** Whether the database has a table of this name. */
export function hasTable(db: Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** SQLite's error code ('SQLITE_BUSY', 'SQLITE_NOTADB', 'SQLITE_CORRUPT' …) of a thrown error, if any. */
export function sqliteCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
}
