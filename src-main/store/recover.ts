// `kvbench recover` (and the app's "Save what could be read as a new database"): what a damaged
// database still holds, written to a new, healthy database file that suites and imports can go on
// with. The read-only path (openDamagedStore) already copies every readable row into a database in
// memory; this writes that copy to a file, checks it, and records in it where it came from and what
// was lost (kvbench_meta: recordRecovery), so that every later reader can say so.
//
// The damaged file is only read. The new file never replaces anything: it is written under a
// temporary name beside the destination (readable by its owner only, as every database kvbench
// creates), checked (integrity_check, foreign_key_check, then opened as any database is, by openStore),
// and only then given its name, by a hard link that fails where a file of that name appeared meanwhile.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { createDatabaseFile } from './database-file.ts';
import { isNoRoomError, noRoomError } from './disk-full.ts';
import { MIGRATIONS, oldestReadableSchema } from './migrations.ts';
import { openDamagedStore, openStore, type OpenStoreOptions } from './open-store.ts';
import { recordIdsBeforeDelete, recordRecovery, recordSchemaChange, recoveryChain, type RecoveryRecord } from './schema-meta.ts';
import { openDatabase, sqliteCode } from './sqlite.ts';
import { StoreError } from './store-error.ts';
import type { Store } from './store.ts';
import { leftByDeadProcesses } from '../util/dead-process-leftovers.ts';
import { statOrNull } from '../util/stat-or-null.ts';
import { salvageProgressText } from './salvage.ts';

/** What a recovery wrote, and what it could not read. */
export interface Recovery {
  /** The new database. */
  file: string;
  /** The damaged database it was read from (untouched). */
  from: string;
  /** What SQLite found in the damaged file. */
  damage: string;
  /** Each part that could not be read, as the read-only path says it (empty: everything was read). */
  lost: string[];
  /** What the new database holds. */
  trials: number;
  suites: number;
  systems: number;
  endpointRuns: number;
}

export interface RecoverOptions extends Pick<OpenStoreOptions, 'chooseDatabase'> {
  /** Hears each step as it starts, and the copy's progress, in words ("copying trials: 4,000 rows of about 10,000"). */
  onProgress?: (message: string) => void;
}

/**
 * The temporary name a recovery into `dst` writes under (beside it, hidden), for this process:
 * `${prefix}${random}`. A recovery whose thread was stopped before its own clean-up ran leaves
 * only files of this prefix (removeRecoveryLeftovers).
 */
export const recoveringPrefix = (dst: string): string => path.join(path.dirname(dst), `${recoveringStem(dst)}${process.pid}-`);

/** The start of every temporary name of a recovery into `dst`, whichever process wrote it. */
const recoveringStem = (dst: string): string => `.${path.basename(dst)}.recovering-`;

/** Removes what recoveries into `dst` by this process left (a thread stopped mid-write): files named recoveringPrefix(dst)…, and their -wal, -shm, -journal. */
export function removeRecoveryLeftovers(dst: string): void {
  const prefix = path.basename(recoveringPrefix(dst));
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(dst));
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix)) fs.rmSync(path.join(path.dirname(dst), name), { force: true });
}

/** How long a dead process's temporary file must have been left unchanged before a recovery removes it (removeStaleRecoveryLeftovers). */
export const STALE_RECOVERY_MS = 10 * 60_000;

/**
 * Removes what recoveries into `dst` by processes now gone left (killed mid-write, or an app that quit
 * before its worker's clean-up ran): files named as recoveringPrefix names them for another pid, that
 * pid dead on this host, the file unchanged for STALE_RECOVERY_MS. The name holds no host: on a folder
 * other hosts share, a recovery another host is writing into the same name right now (a busy file,
 * changed within minutes) is left alone.
 */
export function removeStaleRecoveryLeftovers(dst: string, nowMs = Date.now()): void {
  for (const file of leftByDeadProcesses(path.dirname(dst), recoveringStem(dst), /^(\d+)-[0-9a-f]{8}(-wal|-shm|-journal)?$/)) {
    const st = statOrNull(file);
    if (st === null || !st.isFile() || nowMs - st.mtimeMs < STALE_RECOVERY_MS) continue;
    fs.rmSync(file, { force: true });
  }
}

/** How a recovery ends for a front end: everything read (0), parts lost (3); nothing read is a refusal (StoreError). */
export const recoveryComplete = (r: Recovery): boolean => r.lost.length === 0;

/** Said where quick_check's findings could not all be placed though no row was found lost. */
const UNPLACED =
  'SQLite could not say where all of the damage lies: every row kvbench found was read, but rows it could not find (on a page no longer linked) may be missing';

/**
 * Why `out` cannot be the new database, or null. It must not exist (nor a -wal or -journal of that
 * name, which SQLite would read into it), and its folder must exist.
 */
export function recoveryTargetProblem(out: string, from: string): string | null {
  if (path.resolve(out) === path.resolve(from)) return `the new database must be another file than the damaged ${from}: kvbench never writes to a damaged database`;
  for (const ext of ['', '-wal', '-journal']) {
    if (statOrNull(out + ext) !== null) {
      return ext === ''
        ? `${out} exists already: kvbench never overwrites a file with a recovered database. Name a new file (or move that one away first)`
        : `${out}${ext} exists already (a journal SQLite would read into a new database of that name): name another file, or move it away first`;
    }
  }
  const folder = path.dirname(out);
  const st = statOrNull(folder);
  if (st === null) return `the folder ${folder} does not exist: create it first, or name a new database in an existing folder`;
  if (!st.isDirectory()) return `${folder} is not a folder, so the database ${out} cannot be created in it`;
  return null;
}

/** Rows that are part of another (child table, its key column, the parent table): without the parent they are nothing. */
const ORPHANED_PARTS = [
  ['trial_metrics', 'trial_id', 'trials'],
  ['trial_histograms', 'trial_id', 'trials'],
  ['endpoint_run_metrics', 'run_id', 'endpoint_runs'],
  ['endpoint_requests', 'run_id', 'endpoint_runs'],
] as const;

/** Trials whose stored JSON no longer parses (damage quick_check does not see), and snapshots: taken out of the copy, said as the readers say them. */
function dropUnreadableRows(store: Store): string[] {
  const trialIds = (store.db.prepare('SELECT id FROM trials ORDER BY id').all() as { id: number }[]).map((r) => r.id);
  const { unreadable } = store.readDamaged(() => {
    store.listTrials({});
    for (const id of trialIds) store.trialHardware(id);
  });
  const fails = (read: () => unknown): boolean => {
    try {
      read();
      return false;
    } catch (err) {
      if (err instanceof StoreError) return true;
      throw err;
    }
  };
  const snapshotIds = (store.db.prepare('SELECT id FROM hardware_snapshots ORDER BY id').all() as { id: number }[]).map((r) => r.id);
  const tx = store.db.transaction(() => {
    // The ids of the trials taken out were given (openDamagedStore raised the record to them already; this keeps every delete alike).
    recordIdsBeforeDelete(store.db, 'trials');
    // Foreign keys are on in the copy: a trial's metrics and histograms go with it, a snapshot's trials keep going without it.
    for (const id of trialIds) if (fails(() => store.getTrial(id))) store.db.prepare('DELETE FROM trials WHERE id = ?').run(id);
    for (const id of snapshotIds) if (fails(() => store.getHardwareSnapshot(id))) store.db.prepare('DELETE FROM hardware_snapshots WHERE id = ?').run(id);
    // The metrics, histograms and requests of a trial or endpoint run whose own row could not be read
    // (its loss is said already): nothing can show them, and they would break the new file's foreign keys.
    for (const [child, column, parent] of ORPHANED_PARTS) {
      if (count(store, child) > 0) store.db.prepare(`DELETE FROM ${child} WHERE ${column} NOT IN (SELECT id FROM ${parent})`).run();
    }
  });
  tx();
  return unreadable;
}

const count = (store: Store, table: string): number => {
  try {
    return Number((store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n);
  } catch {
    return 0; // a table an older schema lacks
  }
};

/**
 * Reads the damaged kvbench database `from` as far as it can be read and writes what it holds to the
 * new database `out`; returns what it wrote and what it could not read. Refuses (StoreError) a
 * database that is not damaged (it opens as it is: copy it instead), one that is not a kvbench
 * database or cannot be read at all, an `out` that exists, and a copy that fails its checks.
 */
export function recoverDatabase(from: string, out: string, opts: RecoverOptions = {}): Recovery {
  const src = path.resolve(from);
  const dst = path.resolve(out);
  const say = opts.onProgress ?? ((): void => {});
  if (statOrNull(src) === null) throw new StoreError('NOT_FOUND', `no database at ${src}`);
  const refused = recoveryTargetProblem(dst, src);
  if (refused) throw new StoreError('VALIDATION', refused);

  try {
    removeStaleRecoveryLeftovers(dst);
  } catch {
    // a folder where nothing can be removed: the recovery below says what it cannot do there
  }
  let healthy = false;
  say(`checking ${src}`);
  try {
    openStore(src, { readonly: true, chooseDatabase: opts.chooseDatabase }).close();
    healthy = true;
  } catch (err) {
    // An old schema that this build reads only once upgraded passed every check too.
    healthy = err instanceof StoreError && err.code === 'DB_MIGRATION_FAILED';
    if (!healthy && (!(err instanceof StoreError) || err.code !== 'DB_CORRUPT')) throw err;
  }
  if (healthy) {
    throw new StoreError(
      'VALIDATION',
      `${src} is not damaged (SQLite quick_check finds nothing wrong): there is nothing to recover. To copy it, use sqlite3 ${src} ".backup NEW.db", or cp while no kvbench writes to it.`,
    );
  }
  // Upgraded in memory: the new file is one that suites and imports write to (its imported trials' measuring versions are filled at its first open, below).
  say(`reading what can be read of ${src}`);
  const damaged = openDamagedStore(src, { chooseDatabase: opts.chooseDatabase, toLatestSchema: true, onProgress: (table, rows, last) => say(salvageProgressText(table, rows, last)) });
  if (damaged === null) {
    // Not one to read so (not SQLite, another application's, a newer kvbench's): openStore's refusal says what it is.
    openStore(src, { readonly: true, chooseDatabase: opts.chooseDatabase }).close();
    throw new StoreError('DB_CORRUPT', `${src} cannot be recovered by this kvbench`);
  }
  const { store, damage, allPlaced } = damaged;
  // Where the damaged file was itself made by a recovery: that one's record, and those before it, go on in the new file.
  const earlier = recoveryChain(store.recovery);
  let lost: string[];
  say('checking the rows read');
  try {
    lost = [...store.unreadable, ...dropUnreadableRows(store)];
  } catch (err) {
    store.close();
    throw err;
  }
  if (!allPlaced && lost.length === 0) lost.push(UNPLACED);
  const result: Recovery = {
    file: dst,
    from: src,
    damage,
    lost,
    trials: count(store, 'trials'),
    suites: count(store, 'suites'),
    systems: count(store, 'systems'),
    endpointRuns: count(store, 'endpoint_runs'),
  };
  if (result.systems === 0 && result.endpointRuns === 0) {
    store.close();
    throw new StoreError('DB_CORRUPT', `nothing could be read from ${src} (${damage}): ${lost.join('; ')}. No new database was written: restore a backup.`);
  }

  const temp = `${recoveringPrefix(dst)}${randomBytes(4).toString('hex')}`;
  const removeTemp = (): void => {
    for (const ext of ['', '-wal', '-shm', '-journal']) fs.rmSync(temp + ext, { force: true });
  };
  try {
    try {
      // Readable by its owner only, as every database kvbench creates (VACUUM INTO fills an empty file).
      createDatabaseFile(temp);
    } catch (err) {
      throw new StoreError('DB_READ_ONLY', `cannot create ${dst}: ${(err as Error).message}. Name a new database in a folder this user may write.`);
    }
    say(`writing ${dst}`);
    try {
      store.db.prepare('VACUUM INTO ?').run(temp);
    } finally {
      store.close();
    }
    const db = openDatabase(temp, { fileMustExist: true });
    try {
      db.transaction(() => {
        recordSchemaChange(db, { fromSchema: 0, readableBySchema: oldestReadableSchema(MIGRATIONS), previousFile: null });
        const record: RecoveryRecord = { recoveredFrom: src, recoveredAt: new Date().toISOString(), recoveredBy: KVBENCH_VERSION, damage, lost, earlier };
        recordRecovery(db, record);
      })();
      say(`checking ${dst}`);
      const integrity = (db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[]).map((r) => r.integrity_check);
      if (integrity.join() !== 'ok') throw new StoreError('DB_CORRUPT', `the new database failed SQLite's integrity_check (${integrity.slice(0, 3).join('; ')}); nothing was written to ${dst}`);
      const orphans = db.prepare('PRAGMA foreign_key_check').all() as { table: string; parent: string }[];
      if (orphans.length > 0) {
        // A trial whose suite run could not be read (said already: a resume cannot run it) is kept, with the run's id it had.
        const byTable = new Map<string, number>();
        for (const o of orphans) byTable.set(`${o.table} → ${o.parent}`, (byTable.get(`${o.table} → ${o.parent}`) ?? 0) + 1);
        const which = [...byTable].map(([k, n]) => `${n} ${k.replace(' → ', ' rows refer to ')}`).join(', ');
        result.lost.push(`rows kept whose parent row could not be read (${which}): they read as before, and keep the id they had`);
        recordRecovery(db, { recoveredFrom: src, recoveredAt: new Date().toISOString(), recoveredBy: KVBENCH_VERSION, damage, lost: result.lost, earlier });
      }
    } finally {
      db.close();
    }
    // Opened as every database is (checked, WAL, dead runners' trials marked aborted) before it has its name.
    openStore(temp).close();
    const fd = fs.openSync(temp, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    publish(temp, dst);
    return result;
  } catch (err) {
    store.close();
    removeTemp();
    if (err instanceof StoreError) throw err;
    if (isNoRoomError(temp, err)) throw noRoomError(dst, err, 'No new database was written: free some space there, or name a new database on another filesystem.');
    if (sqliteCode(err) !== null) throw new StoreError('DB_WRITE_FAILED', `the new database ${dst} could not be written (${sqliteCode(err)}: ${(err as Error).message}); nothing was left there`);
    throw err;
  } finally {
    removeTemp();
  }
}

/**
 * Gives the checked file its name without replacing a file that appeared meanwhile: a hard link fails
 * where the name exists (rename would replace it). Where the filesystem has no hard links, a rename
 * after a last check.
 */
function publish(temp: string, dst: string): void {
  try {
    fs.linkSync(temp, dst);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new StoreError('VALIDATION', `${dst} appeared while the recovery was written: it is left as it is, and nothing was written`);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EMLINK') throw err;
    if (statOrNull(dst) !== null) throw new StoreError('VALIDATION', `${dst} appeared while the recovery was written: it is left as it is, and nothing was written`);
    fs.renameSync(temp, dst);
  }
  try {
    const dir = fs.openSync(path.dirname(dst), 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  } catch {
    // A folder that cannot be opened to sync (some network filesystems): the file itself is synced.
  }
}
