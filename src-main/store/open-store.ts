// Opening the trial store: a SQLite file that is checked before anything writes to it, migrated in
// one transaction, and shared safely between processes (the CLI and the app at the same time).
//
//   1. A file that exists is first opened read-only: it must start with SQLite's header, pass
//      PRAGMA quick_check, and carry kvbench's application_id (or be an empty SQLite file). Garbage,
//      corruption, another application's database or a newer schema → a StoreError, and the file is
//      never written. An open that asks (`skipCheckIfSound`: the commands that only read) skips the
//      check, a read of the whole file, where the file is exactly as a check found it sound
//      (sound-file-record.ts); it is then made before anything writes (Store.checkBeforeWriting).
//   2. Read-write: WAL (readers never block the writer), foreign keys on, busy_timeout so a second
//      process waits for the lock instead of failing.
//   3. Pending migrations run in one IMMEDIATE transaction together with user_version and the
//      record of who made the change (schema-meta.ts); an existing database is copied first (VACUUM
//      INTO) and the copy is kept, beside it, whether the upgrade succeeds or fails (Store.upgrade
//      says where, for the front end to tell). A copy that cannot be written (a full disk) stops the
//      upgrade before it starts, leaving no partial copy. An open that only reads (`readonly`, or
//      `keepSchema` on a file of another schema) never upgrades: it reads the file as it is.
//   4. Trials left `running` by a runner that no longer exists (kill -9, crash, power loss) become
//      `aborted`, and their suites `interrupted`.
//   5. Trials imported before schema 4 get the kvbench version that measured them, read from their
//      stored results (Store.backfillMeasuringVersions): once, in short batches, between which
//      openStoreYielding lets the event loop turn. Likewise, once, the queue's facts of trials stored
//      before they were kept (Store.queueFactBatches; kvbench_meta records how far it has gone).
import { printable } from '../../src-shared/domain/label-text.ts';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { createDatabaseFile } from './database-file.ts';
import { freeBytesIn, isNoRoomError, mib, noRoomError } from './disk-full.ts';
import { openDatabase, openImmutable, sqliteCode, type Database } from './sqlite.ts';
import { APPLICATION_ID, LATEST_SCHEMA_VERSION, MIGRATIONS, oldestReadableSchema, type Migration } from './migrations.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { placeDamage, salvageRows, unreadableDatabase, type SalvageProgress } from './salvage.ts';
import { copyLastingMeta, raiseIdsGiven, readSchemaMeta, recordSchemaChange, upgradeNotice, type SchemaMeta, type SchemaUpgrade, type ShownIdTable } from './schema-meta.ts';
import { fileIdentityOf, pathNow, replacedFileError, type FileIdentity } from './file-identity.ts';
import { forgetSound, recordedSound, recordSound, soundnessKey } from './sound-file-record.ts';
import { StoreError } from './store-error.ts';
import { Store, type BackfillProgress } from './store.ts';

const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');
export const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

export interface OpenStoreOptions {
  /** Only read (reports from a database another process owns); no migration, no recovery. */
  readonly?: boolean;
  /**
   * For a command that only reads: an existing database of another schema than this build's (an
   * older kvbench's, or a newer one's marked readable by this build) is opened read-only, as it is,
   * never upgraded (Store.openNotes says so); one of this build's schema opens read-write as usual.
   */
  keepSchema?: boolean;
  /**
   * Skips PRAGMA quick_check where the file (and its -wal) is exactly as an earlier check found it
   * sound (sound-file-record.ts): for the commands that only read. The check is made all the same
   * before this open migrates the file, and before anything else writes to it (Store.checkBeforeWriting).
   */
  skipCheckIfSound?: boolean;
  /** For tests: a different migration list. */
  migrations?: readonly Migration[];
  busyTimeoutMs?: number;
  /** Skip marking dead runners' trials as aborted (default: done on every read-write open). */
  skipRecovery?: boolean;
  /**
   * How a person chooses another database, in the messages of a refused open that tell them to:
   * the CLI's flag by default; the app passes its own words, as its users never type a flag.
   */
  chooseDatabase?: string;
  /**
   * What reads a newer kvbench's file this build may only read, in the refusal of a write to it: the
   * CLI's commands by default; the app names its own screens (its notice says the refusal).
   */
  readersOfNewer?: string;
  /**
   * Hears the once-only fill of imported trials' measuring versions (step 5) where there is any:
   * thousands of trials take seconds, which the front end says rather than seem to hang (backfillNotice).
   */
  onBackfill?: (p: BackfillProgress) => void;
}

const CLI_CHOOSE_DATABASE = 'with --db';

/** How a person opens the file now at a database's path once it was replaced (DB_REPLACED), in the words of `choose`. */
const reopenWords = (choose: string): string => (choose === CLI_CHOOSE_DATABASE ? 'run the command again' : `choose it again ${choose}`);

function hex(n: number): string {
  return `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
}

/**
 * Opening a WAL-mode database, even read-only, makes SQLite create its -wal and -shm companions.
 * After kvbench's own connection closed, those its open created (absent before) go the only way
 * that cannot race: SQLite removes them itself when a read-write connection closes as the last one,
 * under an EXCLUSIVE lock on the database that every connection's open waits on before it opens
 * either file. kvbench never unlinks them: no lock it could take from Node keeps a writer from
 * opening the -shm between a check and the unlink (and /proc/locks does not list the locks of a
 * process in another PID namespace, a container sharing the directory), and two writers on
 * different -shm files disagree about the WAL, which corrupts the database.
 * Where SQLite keeps them (another connection uses the database, this user may not write it, no
 * room to size the -shm) they stay, harmless, but writable by their owner: SQLite gives them the
 * database's mode (an empty -wal again at every open), and a -shm or -wal of a mode-444 database
 * would keep it unwritable (SQLITE_READONLY) after the database itself is made writable again.
 */
export function releaseCreatedCompanions(file: string, existedBefore: Record<string, boolean>): void {
  const created = ['-wal', '-shm'].some((ext) => !existedBefore[ext] && fs.existsSync(file + ext));
  // Only with an empty -wal: closing then writes nothing to the database (a refused file is never
  // written); changes another process left in it go at that process's or the next writer's close.
  if (created && (fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) === 0) {
    try {
      // No wait for locks: a connection still using the database keeps its files, which is right.
      const db = openDatabase(file, { fileMustExist: true, timeout: 0 });
      try {
        db.pragma('schema_version'); // opens the WAL, so that closing can remove it
      } finally {
        db.close();
      }
    } catch {
      // SQLite could not open it read-write or read it: the files stay.
    }
  }
  for (const ext of ['-wal', '-shm']) {
    try {
      const st = fs.statSync(file + ext);
      if ((st.mode & 0o200) === 0) fs.chmodSync(file + ext, (st.mode & 0o7777) | 0o200);
    } catch {
      // gone (SQLite removed it), or not this user's: nothing to do
    }
  }
}

/** Which of `file`'s -wal and -shm exist now: what releaseCreatedCompanions is given, taken before an open. */
export function companionsOf(file: string): Record<string, boolean> {
  return { '-wal': fs.existsSync(`${file}-wal`), '-shm': fs.existsSync(`${file}-shm`) };
}

/** SQLite could not open or write the file, or its -wal/-shm companions (read-only media, permissions). */
function isReadOnlyError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code !== null && (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN'));
}

/** SQLite found the file damaged (or could not read it from the disk) where it read it. */
export function isDamageError(err: unknown): boolean {
  const code = sqliteCode(err);
  return code !== null && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_IOERR'));
}

const why = (err: unknown): string => `${sqliteCode(err) ?? 'error'}: ${(err as Error).message}`;

/**
 * Opens an existing database only to read it. Even then a WAL-mode database needs its -shm file;
 * where none exists and the directory cannot be written (read-only media), or its filesystem has no
 * room for it (a full disk), the file is opened immutable instead — safe only when no -wal file
 * holds changes the file lacks, so with one that does, this says what to do rather than show stale data.
 */
function openForReading(file: string, choose: string, timeout?: number, damaged = false): Database {
  // A damaged database's schema may name pages it no longer has (a truncated file), which SQLite
  // refuses when it loads the schema, unless the schema is "writable" (a connection flag; this one
  // cannot write): then it loads what it can, and each table reads as far as it can be read.
  const tolerate = (db: Database): void => {
    if (!damaged) return;
    db.unsafeMode(true); // better-sqlite3 opens defensive, which refuses writable_schema
    db.pragma('writable_schema = ON');
  };
  let db: Database | undefined;
  try {
    db = openDatabase(file, { readonly: true, fileMustExist: true, ...(timeout !== undefined ? { timeout } : {}) });
    tolerate(db);
    db.pragma('schema_version'); // SQLite opens the file (and the -shm) lazily: fail here, not later
    return db;
  } catch (err) {
    db?.close();
    const noRoom = isNoRoomError(file, err);
    if (!isReadOnlyError(err) && !noRoom) throw err;
    const wal = fs.statSync(`${file}-wal`, { throwIfNoEntry: false });
    if (wal && wal.size > 0) {
      if (noRoom) {
        throw noRoomError(
          file,
          err,
          'Its -wal file holds changes not yet in the database, and SQLite needs room for the -shm file to read them: free some space there, ' +
            `or copy the database together with its -wal file to another filesystem and open the copy ${choose}.`,
        );
      }
      throw new StoreError(
        'DB_READ_ONLY',
        `${printable(file)} cannot be read here (${why(err)}): its -wal file holds changes not yet in the database, and SQLite cannot create the -shm file it needs ` +
          `to read them in a directory it may not write. Copy the database together with its -wal file to a writable directory and open the copy ${choose}.`,
      );
    }
    // What the failed attempt created (an empty -wal, a -shm it could not size) stays: the immutable
    // open uses neither, and only SQLite may remove them (see releaseCreatedCompanions; the store's close tries).
    const immutable = openImmutable(file);
    try {
      tolerate(immutable);
      immutable.pragma('schema_version');
      return immutable;
    } catch (again) {
      immutable.close();
      throw new StoreError('DB_READ_ONLY', `${printable(file)} cannot be opened (${why(again)}): check that it exists and that this user may read it.`);
    }
  }
}

/**
 * SQLite opens a file it may not write read-only without a word, and the first write would fail:
 * find out now with a write that is rolled back. (Taking the write lock alone is not enough: in WAL
 * mode it succeeds on a read-only file.)
 */
function assertWritable(db: Database): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.pragma(`user_version = ${Number(db.pragma('user_version', { simple: true }))}`);
  } finally {
    db.exec('ROLLBACK');
  }
}

/** A read-write open refused by the file system, as users should read it. */
function notWritable(file: string, err: unknown, choose: string): StoreError {
  return new StoreError(
    'DB_READ_ONLY',
    `${printable(file)} cannot be written (${why(err)}): it is on read-only media, or this user may not write it or its directory. ` +
      `kvbench history, report and export still read it; a suite or an import needs a database it can write: choose one elsewhere ${choose}.`,
  );
}

/** An open the file system refused: read-only opens cannot read it, read-write ones cannot write it. */
function refusedOpen(file: string, err: unknown, readonly: boolean, choose: string): StoreError {
  return readonly ? new StoreError('DB_READ_ONLY', `${printable(file)} cannot be read (${why(err)}).`) : notWritable(file, err, choose);
}

/** What inspecting an existing file found: its schema, and where it is newer than this build's, the record that lets this build read it. */
interface Inspected {
  version: number;
  /** Set only for a newer schema (version > latest) that kvbench_meta marks readable by this build. */
  newer: SchemaMeta | null;
  /** PRAGMA quick_check was skipped (`skipCheckIfSound`): the file is as an earlier check found it sound. */
  checkSkipped: boolean;
}

/** Checks an existing file without writing to it. */
function inspectExisting(file: string, latest: number, choose: string, skipCheckIfSound: boolean): Inspected {
  const existedBefore = { '-wal': fs.existsSync(`${file}-wal`), '-shm': fs.existsSync(`${file}-shm`) };
  try {
    return inspectExistingFile(file, latest, choose, skipCheckIfSound);
  } catch (err) {
    releaseCreatedCompanions(file, existedBefore);
    throw err;
  }
}

/**
 * What PRAGMA quick_check finds wrong, at most `limit` findings, one line each ("ok" and SQLite's
 * "*** in database main ***" heading dropped); throws where it cannot even run (SQLITE_CORRUPT).
 */
function quickCheckFindings(db: Database, limit: number): string[] {
  return (db.prepare(`PRAGMA quick_check(${limit})`).all() as { quick_check: string }[])
    .flatMap((r) => r.quick_check.split('\n'))
    .filter((line) => line !== 'ok' && !/^\*\*\* in database /.test(line));
}

/** Findings as said in a message: the first three, and "…" where there are more. */
const saidFindings = (findings: readonly string[]): string => `${findings.slice(0, 3).join('; ')}${findings.length > 3 ? ' …' : ''}`;

/** What PRAGMA quick_check finds wrong (its first three findings), or null; throws where it cannot even run (SQLITE_CORRUPT). */
function quickCheckProblems(db: Database): string | null {
  const findings = quickCheckFindings(db, 4);
  return findings.length === 0 ? null : saidFindings(findings);
}

/** SQLite's SQLITE_CORRUPT or SQLITE_NOTADB as kvbench says it (DB_CORRUPT); any other error as it is. */
function damagedOrNotADatabase(file: string, err: unknown): unknown {
  const code = sqliteCode(err);
  if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CORRUPT') return err;
  return new StoreError('DB_CORRUPT', `${printable(file)} is damaged or not a database (${code}: ${(err as Error).message}). kvbench will not write to it.`);
}

/** The refusal of a file PRAGMA quick_check finds damaged: `problems` its findings, or the error that stopped it. */
const damagedFile = (file: string, problems: string): StoreError =>
  new StoreError('DB_CORRUPT', `${printable(file)} is damaged (${problems}). kvbench will not write to it: restore a backup or move it away.`);

/**
 * Runs PRAGMA quick_check on `db` (the database at `file`): throws DB_CORRUPT where it finds damage
 * (and forgets any record of the file as sound); where it finds none, records the file sound
 * (sound-file-record.ts) if it stayed as it was throughout.
 */
function checkSound(db: Database, file: string): void {
  const before = soundnessKey(file);
  const startMs = Date.now();
  let problems: string | null;
  try {
    problems = quickCheckProblems(db);
  } catch (err) {
    forgetSound(file);
    throw damagedOrNotADatabase(file, err);
  }
  if (problems !== null) {
    forgetSound(file);
    throw damagedFile(file, `SQLite quick_check: ${problems}`);
  }
  if (before !== null) recordSound(before, soundnessKey(file), startMs);
}

/**
 * A file this user may not read (another user's mode-600 database), as users should read it: Node's
 * EACCES names no way out.
 */
function unreadableFile(file: string, err: unknown, choose: string): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'EACCES' && code !== 'EPERM') return err;
  const st = fs.statSync(file, { throwIfNoEntry: false });
  const whose = st ? ` (it belongs to user id ${st.uid}, mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})` : '';
  return new StoreError(
    'DB_READ_ONLY',
    `${printable(file)} cannot be read by this user${whose}: ${code}, permission denied. Ask its owner to let you read it (for example, a group you share and chmod g+r) ` +
      `or to copy it for you, then open the copy ${choose}.`,
  );
}

/** Who wrote a newer database, in words ("kvbench 0.9.0", or "a newer kvbench" where it is not recorded). */
const newerWriter = (meta: SchemaMeta | null): string => (meta?.schemaWrittenBy ? `kvbench ${meta.schemaWrittenBy}` : 'a newer kvbench');

function inspectExistingFile(file: string, latest: number, choose: string, skipCheckIfSound: boolean): Inspected {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    throw unreadableFile(file, err, choose);
  }
  let header: Buffer;
  try {
    header = Buffer.alloc(16);
    const n = fs.readSync(fd, header, 0, 16, 0);
    if (n === 0) return { version: 0, newer: null, checkSkipped: false }; // an empty file is an empty database
    header = header.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
  if (!header.equals(SQLITE_HEADER)) {
    throw new StoreError(
      'DB_CORRUPT',
      `${printable(file)} is not a SQLite database (its first bytes are not the SQLite header). kvbench will not touch it: move it away or choose another database ${choose}.`,
    );
  }
  let db: Database | undefined;
  try {
    db = openForReading(file, choose);
    const key = skipCheckIfSound ? soundnessKey(file) : null;
    const checkSkipped = key !== null && recordedSound(key);
    if (!checkSkipped) checkSound(db, file);
    const appId = Number(db.pragma('application_id', { simple: true }));
    const version = Number(db.pragma('user_version', { simple: true }));
    if (appId !== APPLICATION_ID) {
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
      if (appId !== 0 || tables.length > 0 || version !== 0) {
        throw new StoreError(
          'DB_FOREIGN',
          `${printable(file)} is a SQLite database of another application (application_id ${hex(appId)}, tables: ${tables.slice(0, 6).join(', ') || 'none'}). ` +
            `kvbench will not modify it: choose another database ${choose}.`,
        );
      }
    }
    if (version > latest) {
      // A newer kvbench records the oldest schema that still reads the file as it is: this build reads it read-only where it knows that one.
      const meta = readSchemaMeta(db);
      if (meta?.readableBySchema != null && meta.readableBySchema <= latest) return { version, newer: meta, checkSkipped };
      const needed = meta?.schemaWrittenBy ? ` to ${meta.schemaWrittenBy} or newer` : '';
      throw new StoreError(
        'DB_TOO_NEW',
        `${printable(file)} was written by ${newerWriter(meta)} (schema ${version}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${latest} and older` +
          `${meta?.readableBySchema != null ? `, and the file can be read only by a kvbench that knows schema ${meta.readableBySchema}` : ''}. ` +
          `Upgrade kvbench${needed}, or choose another database ${choose}.`,
      );
    }
    return { version, newer: null, checkSkipped };
  } catch (err) {
    if (err instanceof StoreError) throw err;
    const code = sqliteCode(err);
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      forgetSound(file);
      throw damagedOrNotADatabase(file, err);
    }
    if (code === 'SQLITE_BUSY') throw new StoreError('DB_BUSY', `${printable(file)} is locked by another process: ${(err as Error).message}`);
    if (isReadOnlyError(err)) throw refusedOpen(file, err, true, choose);
    throw err;
  } finally {
    db?.close();
  }
}

/**
 * A consistent copy of the database (readers are not blocked), kept beside it: named for what it is
 * (`k.db.schema-3-before-upgrade-<time>`), so that the kvbench that wrote it can still open it. When
 * it cannot be written (a full disk: SQLITE_FULL), the partial copy is removed and the error says
 * how much room the copy needs beside what is free: no upgrade without the copy.
 */
function backupBeforeMigration(db: Database, file: string, from: number): string {
  const backup = `${file}.schema-${from}-before-upgrade-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  try {
    // The copy holds what the database holds: made with its mode, not the umask's (VACUUM INTO fills an empty file).
    createDatabaseFile(backup, fs.statSync(file).mode & 0o777);
    db.prepare('VACUUM INTO ?').run(backup);
    return backup;
  } catch (err) {
    fs.rmSync(backup, { force: true });
    const pageBytes = Number(db.pragma('page_size', { simple: true }));
    const usedPages = Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }));
    // Free space unknown: the need alone still says what to do.
    const freeBytes = freeBytesIn(path.dirname(file));
    const free = freeBytes === null ? '' : `, ${mib(freeBytes)} free`;
    throw new Error(
      `the copy made before upgrading could not be written (${sqliteCode(err) ?? 'error'}: ${(err as Error).message}): ` +
        `it needs about ${mib(usedPages * pageBytes)} (${usedPages * pageBytes} bytes) in ${path.dirname(file)}${free}; free some space and open it again`,
    );
  }
}

/**
 * Runs the pending migrations in one transaction; a file's copy is taken first unless `copyFirst` is
 * false (a database in memory), and kept. A file records the change (kvbench_meta) unless `scratch`
 * (a damaged database's copy built in a scratch file: as one in memory, it is no database of its
 * own). Returns the upgrade of a database that had a schema already (null for none, or a new one).
 */
function migrate(db: Database, file: string, from: number, migrations: readonly Migration[], copyFirst = true, scratch = false): SchemaUpgrade | null {
  const pending = migrations.filter((m) => m.version > from);
  if (pending.length === 0) return null;
  const onFile = db.name !== ':memory:' && !scratch;
  let backup: string | null = null;
  const latest = pending[pending.length - 1].version;
  let current = from;
  try {
    if (from > 0 && copyFirst) backup = backupBeforeMigration(db, file, from);
    db.exec('BEGIN IMMEDIATE');
    try {
      // Another process may have migrated while this one waited for the lock.
      current = Number(db.pragma('user_version', { simple: true }));
      for (const m of migrations.filter((x) => x.version > current)) {
        try {
          db.exec(m.sql);
        } catch (err) {
          throw new Error(`migration ${m.version} (${m.name}) failed: ${(err as Error).message}`);
        }
      }
      if (current < latest) {
        db.pragma(`user_version = ${latest}`);
        db.pragma(`application_id = ${APPLICATION_ID}`);
        if (onFile) recordSchemaChange(db, { fromSchema: current, readableBySchema: oldestReadableSchema(migrations), previousFile: backup });
      }
      db.exec('COMMIT');
    } catch (err) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw err;
    }
  } catch (err) {
    throw new StoreError(
      'DB_MIGRATION_FAILED',
      `could not upgrade ${printable(file)} from schema ${current} to ${latest}: ${(err as Error).message}. ` +
        `Nothing was changed${backup ? `; a copy made before the attempt is at ${backup}` : ''}.`,
    );
  }
  // Another process upgraded it while this one waited for the lock: that one kept its own copy, and
  // this one changed nothing.
  if (current >= latest) {
    if (backup) fs.rmSync(backup, { force: true });
    return null;
  }
  // Kept: the kvbench that wrote the file can open only the copy now.
  return onFile && current > 0 ? { file, fromSchema: current, toSchema: latest, previousFile: backup } : null;
}

const stayedLocked = (file: string, busyTimeoutMs: number): StoreError => new StoreError('DB_BUSY', `${printable(file)} stayed locked by another process for ${busyTimeoutMs} ms`);

/** A read-write open on a full filesystem, as users should read it. */
const noRoomToOpen = (file: string, err: unknown, choose: string): StoreError =>
  noRoomError(file, err, `Nothing was changed. kvbench history, report and export can still read it; a suite or an import needs room: free some space there, or choose another database ${choose}.`);

/** Steps 1–4 of the open: the store as it is before the once-only fill of step 5 (fillAfterOpen). */
function openUnfilled(file: string, opts: OpenStoreOptions): Store {
  const abs = path.resolve(file);
  const migrations = opts.migrations ?? MIGRATIONS;
  const latest = migrations.length > 0 ? migrations[migrations.length - 1].version : 0;
  const choose = opts.chooseDatabase ?? CLI_CHOOSE_DATABASE;
  const exists = fs.existsSync(abs);
  const companionsBefore = { '-wal': fs.existsSync(`${abs}-wal`), '-shm': fs.existsSync(`${abs}-shm`) };
  let version = 0;
  let newer: SchemaMeta | null = null;
  let checkSkipped = false;
  let writeProtected = false;
  if (exists) {
    const st = fs.statSync(abs);
    if (!st.isFile()) throw new StoreError('DB_FOREIGN', `${abs} is not a file`);
    // No write permission for anyone: its owner protected it (chmod a-w). Root may write it all the same; kvbench does not.
    writeProtected = (st.mode & 0o222) === 0;
    ({ version, newer, checkSkipped } = inspectExisting(abs, latest, choose, Boolean(opts.skipCheckIfSound)));
  } else if (opts.readonly) {
    throw new StoreError('NOT_FOUND', `no kvbench database at ${abs}`);
  } else {
    try {
      fs.mkdirSync(path.dirname(abs), { recursive: true });
    } catch (err) {
      throw new StoreError('DB_READ_ONLY', `cannot create ${abs}: ${(err as Error).message}. Choose a database in a directory this user may write (${choose}).`);
    }
    try {
      // Before SQLite makes it with the umask's mode (often world-readable).
      createDatabaseFile(abs);
    } catch {
      // Not writable here: SQLite's open below fails the same way and says why, in the store's words.
    }
  }

  // A command that only reads reads a file of another schema (or one protected from writing) as it is.
  const readonly = Boolean(opts.readonly) || (Boolean(opts.keepSchema) && exists && (version !== latest || writeProtected));
  const notes: string[] = [];
  // Refused before SQLite opens it to write: what inspecting it made (an empty -wal, a -shm) goes again.
  const refuse = (err: StoreError): never => {
    releaseCreatedCompanions(abs, companionsBefore);
    throw err;
  };
  if (newer !== null) {
    if (!readonly) {
      refuse(new StoreError(
        'DB_TOO_NEW',
        `${abs} was written by ${newerWriter(newer)} (schema ${version}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${latest} and older: ` +
          `it reads the file read-only (${opts.readersOfNewer ?? 'kvbench history, report and export'}), but writing to it needs ${newerWriter(newer)}${newer.schemaWrittenBy ? ' or newer' : ''}. ` +
          `Upgrade kvbench, or choose another database ${choose}.`,
      ));
    }
    notes.push(`${abs} was written by ${newerWriter(newer)} (schema ${version}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${latest} and older, and reads it read-only, as it is.`);
  } else if (readonly && opts.keepSchema && exists && version < latest && version > 0) {
    notes.push(
      `${abs} has schema ${version}, an older kvbench's (this build's is ${latest}): read as it is, not upgraded. ` +
        'A command that writes to it (a suite, an import) upgrades it, keeping a copy of the file as it was.',
    );
  }
  if (!readonly && writeProtected) {
    refuse(new StoreError(
      'DB_READ_ONLY',
      `${abs} has no write permission (mode ${(fs.statSync(abs).mode & 0o777).toString(8).padStart(4, '0')}): kvbench treats it as read-only, even for root, and does not ` +
        `write to or upgrade a file its owner protected. kvbench history, report and export still read it; to write to it, make it writable first (chmod u+w), or choose another database ${choose}.`,
    ));
  }

  const busyTimeoutMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  let db: Database;
  try {
    db = readonly ? openForReading(abs, choose, busyTimeoutMs) : openDatabase(abs, { readonly: false, timeout: busyTimeoutMs });
  } catch (err) {
    if (err instanceof StoreError) throw err;
    if (isReadOnlyError(err)) throw refusedOpen(abs, err, readonly, choose);
    throw err;
  }
  const identity = fileIdentityOf(abs);
  let upgrade: SchemaUpgrade | null = null;
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('foreign_keys = ON');
    if (!readonly) {
      db.pragma('journal_mode = WAL');
      // In WAL mode NORMAL loses no committed transaction on a process crash (only on power loss).
      db.pragma('synchronous = NORMAL');
      assertWritable(db);
      // An upgrade writes: the check skipped as the file was found sound is made first.
      if (checkSkipped && version < latest) {
        checkSound(db, abs);
        checkSkipped = false;
      }
      upgrade = migrate(db, abs, version, migrations);
    } else if (version < oldestReadableSchema(migrations)) {
      throw new StoreError(
        'DB_MIGRATION_FAILED',
        `${abs} has schema ${version}, which this kvbench reads only once it is upgraded to schema ${latest}: a command that writes to it (a suite, an import) ` +
          'upgrades it, keeping a copy of the file as it was',
      );
    }
  } catch (err) {
    db.close();
    if (err instanceof StoreError) throw err;
    if (sqliteCode(err) === 'SQLITE_BUSY') throw stayedLocked(abs, busyTimeoutMs);
    const noRoom = !readonly && isNoRoomError(abs, err);
    if (isReadOnlyError(err) || noRoom) {
      // A refused read-write open leaves nothing SQLite can remove: it may have made an empty -wal and a -shm.
      releaseCreatedCompanions(abs, companionsBefore);
      throw noRoom ? noRoomToOpen(abs, err, choose) : refusedOpen(abs, err, readonly, choose);
    }
    throw err;
  }
  // A read-write connection removes its -wal and -shm itself when it is the last to close; a
  // read-only one cannot, so what this open created is released when it closes.
  const store = new Store(db, abs, readonly, readonly ? () => releaseCreatedCompanions(abs, companionsBefore) : null);
  // The file the connection has open: the path is compared with it before every write (Store.requireSameFile).
  if (identity !== null) store.watchFile(identity, reopenWords(choose));
  store.upgrade = upgrade;
  if (checkSkipped) store.deferCheck(() => checkSound(db, abs));
  if (upgrade) notes.push(upgradeNotice(upgrade, migrations));
  store.openNotes.push(...notes);
  if (!readonly && !opts.skipRecovery) {
    try {
      store.recoverInterrupted();
    } catch (err) {
      store.close();
      if (sqliteCode(err)?.startsWith('SQLITE_BUSY')) throw stayedLocked(abs, busyTimeoutMs);
      if (isNoRoomError(abs, err)) throw noRoomToOpen(abs, err, choose);
      throw err;
    }
  }
  return store;
}

/** Opens (creating if needed) the trial store at `file`. Throws StoreError for files it must not touch. */
export function openStore(file: string, opts: OpenStoreOptions = {}): Store {
  try {
    const store = openUnfilled(file, opts);
    const batches = fillAfterOpen(store, opts);
    while (!batches.next().done) {
      // every batch at once
    }
    return store;
  } catch (err) {
    throw damageMetByTheOpen(file, err);
  }
}

/**
 * A page SQLite found damaged where the open read after its check (its upkeep: dead runners' trials,
 * measuring versions) as the damage the check finds is said: DB_CORRUPT, the file forgotten as sound.
 * The check, skipped on a file recorded sound, cannot see bit rot that changed nothing else.
 */
function damageMetByTheOpen(file: string, err: unknown): unknown {
  if (err instanceof StoreError || !isDamageError(err)) return err;
  const abs = path.resolve(file);
  forgetSound(abs);
  return damagedFile(abs, why(err));
}

/**
 * openStore for a process that must go on answering while the once-only fill (step 5) runs: a
 * server or the app switching to a database made by an older kvbench, whose page hears its
 * progress meanwhile. Its event loop turns between the fill's batches; the store is handed out
 * only once it is done.
 */
export async function openStoreYielding(file: string, opts: OpenStoreOptions = {}): Promise<Store> {
  try {
    const store = openUnfilled(file, opts);
    for (const batches = fillAfterOpen(store, opts); !batches.next().done; ) await setImmediate();
    return store;
  } catch (err) {
    throw damageMetByTheOpen(file, err);
  }
}

/** Step 5, one batch a step, on a store openUnfilled opened read-write. */
function* fillAfterOpen(store: Store, opts: OpenStoreOptions): Generator<void, void, void> {
  if (store.readonly) return;
  try {
    // One notice per open: where the measuring versions were filled (a database from before schema 4,
    // whose trials the queue's facts then fill too), their notice stands for both passes.
    let told = false;
    const hear = opts.onBackfill && ((p: BackfillProgress): void => ((told = true), opts.onBackfill!(p)));
    yield* store.measuringVersionBatches(hear);
    yield* store.queueFactBatches(told ? undefined : opts.onBackfill);
  } catch (err) {
    // Nothing needs it to open: a writer holding the lock past the busy timeout, or a full disk,
    // leaves the rest to a later open rather than refuse this one (the versions read as unknown).
    if (!sqliteCode(err)?.startsWith('SQLITE_BUSY') && !isNoRoomError(store.path, err)) {
      store.close();
      throw err;
    }
  }
}

/**
 * An empty store of the latest schema, in memory, under the name `file` (for its messages): what a
 * command that only lists reads where no database exists yet, answering as a new one would without
 * creating the file (which a later "which database has my trials?" would find, empty, looking real).
 */
export function openEmptyStore(file: string, opts: Pick<OpenStoreOptions, 'migrations'> = {}): Store {
  const db = openDatabase(':memory:');
  try {
    db.pragma('foreign_keys = ON');
    migrate(db, path.resolve(file), 0, opts.migrations ?? MIGRATIONS);
  } catch (err) {
    db.close();
    throw err;
  }
  return new Store(db, path.resolve(file), true);
}

/**
 * A second connection, read-only, to a database this process has opened (and so checked) with
 * openStore: what a worker thread reads it through while the first goes on serving (a report or an
 * export built off the app's backend thread: server/report-thread.ts). None of openStore's checks
 * is made again (quick_check alone reads the whole file: seconds on a large one), no schema is
 * changed; SQLite's WAL gives this connection its own consistent view beside the writer's.
 */
export function openStoreToRead(file: string, opts: Pick<OpenStoreOptions, 'chooseDatabase' | 'busyTimeoutMs'> & { sameFileAs?: FileIdentity | null } = {}): Store {
  const abs = path.resolve(file);
  if (!fs.existsSync(abs)) throw new StoreError('NOT_FOUND', `no kvbench database at ${abs}`);
  const choose = opts.chooseDatabase ?? CLI_CHOOSE_DATABASE;
  // `sameFileAs`: the first connection's file. The path is looked at before and after this open: the
  // same file both times is the file this connection opened, so both read one database.
  const expected = opts.sameFileAs ?? null;
  const requireSame = (): void => {
    const now = expected === null ? 'same' : pathNow(abs, expected);
    if (now !== 'same') throw replacedFileError(abs, now, reopenWords(choose));
  };
  requireSame();
  const companionsBefore = { '-wal': fs.existsSync(`${abs}-wal`), '-shm': fs.existsSync(`${abs}-shm`) };
  const busyTimeoutMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const db = openForReading(abs, choose, busyTimeoutMs);
  let store: Store;
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('foreign_keys = ON');
    store = new Store(db, abs, true, () => releaseCreatedCompanions(abs, companionsBefore));
  } catch (err) {
    db.close();
    throw err;
  }
  try {
    requireSame();
  } catch (err) {
    store.close();
    throw err;
  }
  const identity = expected ?? fileIdentityOf(abs);
  if (identity !== null) store.watchFile(identity, reopenWords(choose));
  return store;
}

/** What a damaged database still holds (openDamagedStore). */
export interface DamagedStore {
  /** Its readable rows, copied into memory; `store.unreadable` says each row (or range) that could not be read. */
  store: Store;
  /** What SQLite found ("SQLite quick_check: …", or the error a read met). */
  damage: string;
  /** Every finding of quick_check is placed (a row left out, an index, unused pages): what could be read is sound. */
  allPlaced: boolean;
}

/** How a note names the ids of a shown table. */
const ID_WORDS: Readonly<Record<ShownIdTable, string>> = { trials: 'trial', suites: 'suite', endpoint_runs: 'endpoint run' };

/** How many findings of quick_check are placed (salvage's placeDamage) at most: each is a page kvbench reads. */
const QUICK_CHECK_FINDINGS = 1000;

/**
 * What a damaged kvbench database (PRAGMA quick_check fails) still holds, for the commands that only
 * read (openStore refuses it: DB_CORRUPT): its rows copied into a store in memory as far as they can
 * be read (salvageRows), leaving out those whose bytes quick_check places on damaged pages; the file
 * is only read. Null where the file is not one to read this way (not SQLite, another application's,
 * a newer kvbench's): openStore's refusal says what it is. Throws DB_CORRUPT where nothing can be
 * read (its schema lies on a damaged page). An older schema's copy is read as the file holds it, as a
 * read-only open reads an intact one, unless `toLatestSchema`.
 */
export function openDamagedStore(
  file: string,
  opts: Pick<OpenStoreOptions, 'chooseDatabase'> & {
    toLatestSchema?: boolean;
    onProgress?: SalvageProgress;
    /**
     * Builds the copy in this new file instead of in memory (the worker thread's salvage, whose caller
     * reads the file's bytes once the store is closed: SQLite's copy in memory is made of pages the
     * process does not give back, so it stayed beside every later copy of the bytes). Not synced, no journal: a scratch file.
     */
    copyFile?: string;
  } = {},
): DamagedStore | null {
  const abs = path.resolve(file);
  const choose = opts.chooseDatabase ?? CLI_CHOOSE_DATABASE;
  const header = Buffer.alloc(SQLITE_HEADER.length);
  // Called after openStore refused the file as damaged, which it may no longer be as then (removed,
  // its mode changed): said in the store's words, as openStore says them, never as a raw Node error.
  let fd: number;
  try {
    if (fs.statSync(abs, { throwIfNoEntry: false })?.isDirectory()) throw new StoreError('DB_FOREIGN', `${abs} is not a file`);
    fd = fs.openSync(abs, 'r');
  } catch (err) {
    if (err instanceof StoreError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new StoreError('NOT_FOUND', `no kvbench database at ${abs}`);
    throw unreadableFile(abs, err, choose);
  }
  try {
    if (fs.readSync(fd, header, 0, header.length, 0) < header.length || !header.equals(SQLITE_HEADER)) return null;
  } finally {
    fs.closeSync(fd);
  }
  const existedBefore = { '-wal': fs.existsSync(`${abs}-wal`), '-shm': fs.existsSync(`${abs}-shm`) };
  let src: Database | undefined;
  let copy: Database | undefined;
  try {
    src = openForReading(abs, choose, undefined, true);
    const version = Number(src.pragma('user_version', { simple: true }));
    if (Number(src.pragma('application_id', { simple: true })) !== APPLICATION_ID || version > LATEST_SCHEMA_VERSION || version < 1) return null;
    let findings: string[] | null;
    try {
      findings = quickCheckFindings(src, QUICK_CHECK_FINDINGS);
    } catch (err) {
      if (!isDamageError(err)) throw err;
      findings = null; // the check itself stops at a page it cannot read: nothing is placed
    }
    const damage = findings === null || findings.length === 0 ? 'SQLite: database disk image is malformed' : `SQLite quick_check: ${saidFindings(findings)}`;
    const walHoldsChanges = (fs.statSync(`${abs}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0;
    const placed = placeDamage(src, abs, findings, walHoldsChanges);
    copy = openDatabase(opts.copyFile ?? ':memory:');
    if (opts.copyFile !== undefined) copy.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF');
    copy.pragma('foreign_keys = OFF'); // rows whose parent could not be read are copied, and said (salvageRows)
    migrate(copy, abs, 0, MIGRATIONS.filter((m) => m.version <= version), false, true);
    const { notes: lost, idsSeen } = salvageRows(src, copy, abs, placed.suspects, opts.onProgress);
    try {
      // The ids the file has given (a recovery's new file never gives one again) and the recoveries it came through.
      copyLastingMeta(src, copy);
    } catch (err) {
      if (!isDamageError(err)) throw err;
      lost.push(
        `kvbench's own record in ${abs} (kvbench_meta) could not be read (a damaged page): the ids of trials, suites and endpoint runs deleted before may be given again, and any earlier recovery it came through is not known`,
      );
    }
    // The record may be missing (a file no build since 0.7.0 wrote, or its page lost) or behind the
    // rows: the ids of rows lost to the damage, or dropped from the copy, were given all the same.
    for (const [table, seen] of idsSeen) {
      const recorded = raiseIdsGiven(copy, table as ShownIdTable, seen.largest);
      if (!seen.exact && recorded === null) {
        const one = ID_WORDS[table as ShownIdTable];
        lost.push(`${abs} holds no record of the ids it gave, and its largest ${one} id could not be read (damaged pages): ${one} ids above ${seen.largest} may be given again`);
      }
    }
    // Read as the file holds it, as a read-only open reads an intact file of its schema: only the
    // migrations Store cannot read without run on the copy; the others (migration 6's clearing of
    // made-up labels) stay undone, and an older file's measuring versions are worked out in memory
    // (Store's measuringVersionsAsIs), not left unknown as migration 4 alone would leave them.
    // `toLatestSchema` (recover: a new database that suites and imports go on with) upgrades the copy, as a writer's open would.
    migrate(copy, abs, version, opts.toLatestSchema ? MIGRATIONS : MIGRATIONS.filter((m) => m.version <= oldestReadableSchema(MIGRATIONS)), false, true);
    copy.pragma('foreign_keys = ON');
    const store = new Store(copy, abs, true);
    store.noteLost(lost);
    copy = undefined;
    return { store, damage, allPlaced: placed.allPlaced };
  } catch (err) {
    if (err instanceof StoreError) throw err;
    if (isDamageError(err)) throw unreadableDatabase(abs, why(err));
    throw err;
  } finally {
    copy?.close();
    src?.close();
    releaseCreatedCompanions(abs, existedBefore);
  }
}

export { LATEST_SCHEMA_VERSION };
