import { printable } from '../../src-shared/domain/label-text.ts';
import type { StoreErrorCode } from '../../src-shared/domain/store-types.ts';
import { resolveDatabasePath } from '../store/data-dir.ts';
import { DEFAULT_BUSY_TIMEOUT_MS, isDamageError, openDamagedStore, openEmptyStore, type DamagedStore } from '../store/open-store.ts';
import { recoveryNotice } from '../store/schema-meta.ts';
import { forgetSound } from '../store/sound-file-record.ts';
import { StoreError } from '../store/store-error.ts';
import type { Store } from '../store/store.ts';
import { backfillNotice, openStoreAndRecover } from '../suite/services.ts';
import { statOrNull } from '../util/stat-or-null.ts';
import { EXIT_PARTIAL } from './run-command.ts';
import { emptyValueErrors } from './command-args.ts';

/**
 * Why a command that only reads what is stored refuses `dbPath`, or null; `missing` where no file is
 * there and no --db named it. An explicit `--db` naming no file is a typo, not a request for a new
 * empty database; a zero-byte file is SQLite's empty database, and opening it read-write would make
 * whatever file it was pointed at kvbench's.
 */
function refusedForReading(command: string, dbFlag: string | undefined, dbPath: string): { why: string; missing: boolean } | null {
  const st = statOrNull(dbPath);
  const creator = whatCreatesOne(command);
  if (!st) {
    return dbFlag
      ? { why: `no database at ${printable(dbPath)} (${creator}; --db must name an existing file here)`, missing: false }
      : { why: `no kvbench database at ${printable(dbPath)} yet (${creator}; --db or KVBENCH_DB names another)`, missing: true };
  }
  return st.isFile() && st.size === 0 ? { why: `${printable(dbPath)} is empty, not a kvbench database (${creator})`, missing: false } : null;
}

/** What stores what `command` reads, for its refusal to say: endpoint runs come only from `kvbench endpoint run` (import takes suite results). */
function whatCreatesOne(command: string): string {
  return command.startsWith('endpoint ') ? 'kvbench endpoint run creates one' : 'a suite or an import creates one';
}

/** Where the CLI's user finds the suites a missing --suite might be (requireSuites). */
export const SUITES_WHERE_TO_LOOK = 'see kvbench history --suites';

/**
 * How long a command that only reads waits for the write lock its open wants (to mark dead runners'
 * trials aborted, or to migrate) before it reads without: in WAL mode a reader never waits for a
 * writer, so a long import or a suite in another process must not stop `history` or `report`.
 */
export const READER_LOCK_WAIT_MS = 250;

/** Said before a command reads a damaged database's readable rows (openDamagedStore). */
function damagedDatabaseWarning({ store, damage, allPlaced }: DamagedStore): string {
  const read =
    store.unreadable.length > 0
      ? 'some stored rows could not be (each is said below), so what follows may be incomplete'
      : allPlaced
        ? 'every stored row could be read (the damage lies in an index or in unused pages)'
        : 'every row it found could be read, but SQLite could not say where all the damage lies: what follows may be incomplete';
  return `${printable(store.path)} is damaged (${damage}). Reading it read-only, as far as it can be read: ${read}. kvbench writes nothing to it, and a suite or an import refuses it: restore a backup or move it away.`;
}

/**
 * The readable rows of the damaged database at `dbPath` (openDamagedStore), said on stderr first;
 * throws `err` (why it was found damaged) where the file is not one to read so.
 */
function salvagedStore(command: string, dbPath: string, err: unknown): Store {
  const salvaged = openDamagedStore(dbPath);
  if (salvaged === null) throw err;
  process.stderr.write(`kvbench ${command}: ${damagedDatabaseWarning(salvaged)}\n`);
  return salvaged.store;
}

/**
 * What a command that only reads does with an error its reading threw, in its own catch: a page SQLite
 * found damaged goes on to withCommandStore, which reads the database again as a damaged one.
 */
export function passOnDamage(err: unknown): void {
  if (isDamageError(err)) throw err;
}

/** Why a read-write open failed where a command that only reads still reads read-only. */
const READ_ANYWAY: readonly StoreErrorCode[] = ['DB_READ_ONLY', 'DB_BUSY', 'DB_WRITE_FAILED', 'DB_MIGRATION_FAILED'];

/** The once-only upgrade of many imported trials (openStore's onBackfill), said on stderr as `kvbench COMMAND: …`. */
export function backfillOnStderr(command: string): ReturnType<typeof backfillNotice> {
  return backfillNotice((line) => process.stderr.write(`kvbench ${command}: ${line}\n`));
}

/**
 * Opens the database a command works on (`--db`, else the default), runs `fn` on it and closes it.
 * A database that cannot be opened is answered on stderr with exit code 1; rows found damaged while
 * `fn` read (Store.unreadable) are said on stderr after it, and its 0 becomes 3. `readOnly` commands
 * (history, report, export) also refuse an explicit `--db` naming no file: that is a typo, and
 * opening it would create an empty database there; and an empty file, which opening would migrate
 * into one. Nor do they create the default database where it does not exist yet: they say so, and
 * a `listing` lists nothing. They never upgrade a database: one of an older schema (or a newer
 * kvbench's that this build may read) is read read-only, as it is, and said so on stderr. One of this
 * build's schema they open read-write only to recover dead runners' trials; where that is refused
 * (read-only media, a file without write permission, a full disk) or the write lock stays taken
 * (another process is writing), they read read-only. Commands that write upgrade an older database,
 * and say so on stderr (Store.openNotes), as every command says what its open found.
 * Commands that only read skip PRAGMA quick_check on a file exactly as a check found it sound
 * (openStore's skipCheckIfSound); damage that changed nothing a file system records (bit rot), met
 * by a read, is read as a damaged database is, from a copy of what can still be read.
 */
export async function withCommandStore(
  command: string,
  dbFlag: string | undefined,
  opts: {
    readOnly: boolean;
    /** A command that writes only what is stored already (a delete): refused as reading ones are. */
    mustExist?: boolean;
    /**
     * A listing (history, endpoint list): where the default database ($KVBENCH_DB, else the data
     * directory) does not exist yet, it lists what a new one holds, nothing, after saying so (exit 0);
     * the other readers refuse there (1). Neither creates it.
     */
    listing?: boolean;
  },
  fn: (store: Store) => Promise<number> | number,
): Promise<number> {
  // `--db ''` (a script's unset variable) would be the default database: another one than meant.
  const empty = emptyValueErrors({ db: dbFlag }, ['db']);
  if (empty.length > 0) {
    process.stderr.write(`kvbench ${command}: ${empty[0]}\n`);
    return 1;
  }
  const dbPath = resolveDatabasePath(dbFlag);
  const refused = opts.readOnly || opts.mustExist ? refusedForReading(command, dbFlag, dbPath) : null;
  if (refused !== null) {
    process.stderr.write(`kvbench ${command}: ${refused.why}\n`);
    if (!(refused.missing && opts.listing && opts.readOnly)) return 1;
    const empty = openEmptyStore(dbPath);
    try {
      return await fn(empty);
    } finally {
      empty.close();
    }
  }
  let store: Store;
  let damaged = false;
  try {
    ({ store } = await openStoreAndRecover(dbPath, {
      ...(opts.readOnly ? { busyTimeoutMs: READER_LOCK_WAIT_MS, keepSchema: true, skipCheckIfSound: true } : {}),
      onBackfill: backfillOnStderr(command),
    }));
    // Opened: the short wait was for the write lock only; reads wait as long as any open.
    if (opts.readOnly) store.db.pragma(`busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
  } catch (err) {
    // A database on read-only media (or another user's), one another process is writing, one on a
    // full disk, or one whose upgrade could not be made (no room for the copy taken first) can still
    // be read: without the recovery of dead runners' trials, which would write, and as it is where its
    // schema is readable without the upgrade.
    // A damaged one (quick_check fails) is read as far as it can be, from a copy of what is readable.
    const readOnly = opts.readOnly && err instanceof StoreError && READ_ANYWAY.includes(err.code);
    try {
      if (opts.readOnly && err instanceof StoreError && err.code === 'DB_CORRUPT') {
        store = salvagedStore(command, dbPath, err);
        damaged = true;
      } else {
        if (!readOnly) throw err;
        ({ store } = await openStoreAndRecover(dbPath, { readonly: true, skipCheckIfSound: true }));
      }
    } catch (err2) {
      // A schema that needs the upgrade to be read: why the upgrade failed is what the user can act on.
      const shown = err2 instanceof StoreError && err2.code === 'DB_MIGRATION_FAILED' && err instanceof StoreError ? err : err2;
      process.stderr.write(`kvbench ${command}: ${(shown as Error).message}\n`);
      return 1;
    }
  }
  for (const note of store.openNotes) process.stderr.write(`kvbench ${command}: ${note}\n`);
  // What a reader shows of a recovered database lacks what the recovery could not read: said every time, as a damaged database's losses are.
  if (opts.readOnly && store.recovery) process.stderr.write(`kvbench ${command}: ${recoveryNotice(store.path, store.recovery)}\n`);
  try {
    let code: number;
    try {
      code = await fn(store);
    } catch (err) {
      // A page SQLite finds damaged while reading: damage the open's check did not see, made after it
      // (bit rot, which changes no times, in a file recorded sound), or of a kind quick_check does not
      // look for. Read again as a damaged database is read (reading comes before any output).
      if (!opts.readOnly || damaged || !isDamageError(err)) throw err;
      forgetSound(store.path);
      store.close();
      try {
        store = salvagedStore(command, dbPath, err);
      } catch (err2) {
        process.stderr.write(`kvbench ${command}: ${(err2 as Error).message}\n`);
        return 1;
      }
      damaged = true;
      code = await fn(store);
    }
    // Damaged rows were left out (or shown without their hardware): said, and what was written is partial (3),
    // as is all that was read from a damaged database.
    for (const m of store.unreadable) process.stderr.write(`kvbench ${command}: ${m}\n`);
    return code === 0 && (damaged || store.unreadable.length > 0) ? EXIT_PARTIAL : code;
  } finally {
    store.close();
  }
}
