// What a database records about the kvbench that last changed its schema, in a key/value table of its
// own (kvbench_meta), and the words kvbench uses when it upgrades a database or reads a newer one.
//
// user_version alone says only "schema N": a kvbench that knows less refused such a file outright,
// even where every newer migration only adds (readableWithout), and could not say which kvbench
// wrote it. The table records, at every change of schema (creation and upgrade, in the migration's
// transaction): which kvbench made it, the oldest schema that still reads the file as it is
// (oldestReadableSchema), and what it was upgraded from, when, and where the file as it was is kept.
//
// It also keeps the largest id each shown table has given (takeIds), so that no id is given twice.
//
// The table is not a numbered migration on purpose: a migration 8 would make every file this build
// writes unreadable to the kvbench releases that know schema 7 (they refuse a newer user_version),
// the very lock-out this record is meant to soften. Builds that do not know the table ignore it.
import { hasTable, type Database } from './sqlite.ts';
import { MIGRATIONS, type Migration } from './migrations.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';

const META_TABLE = 'kvbench_meta';

/** Creates kvbench_meta where a database has none yet (one made before it, or in memory); one place for its shape. */
function ensureMetaTable(db: Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS ${META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
}

/**
 * The tables whose ids kvbench shows (trial 12, suite 3, endpoint run 5: in listings, exports, a
 * resume's ID, notes users keep). An id is never given twice in one database, even after its row is
 * deleted: SQLite gives a table without AUTOINCREMENT its largest id + 1, so deleting the newest row
 * handed its id to the next one. AUTOINCREMENT would be a numbered migration (a rebuilt table) and lock
 * out every 0.7.0, so the largest id each table has given is kept here instead (key `<table>_id_given`).
 */
export type ShownIdTable = 'trials' | 'suites' | 'endpoint_runs';

const idGivenKey = (table: ShownIdTable): string => `${table}_id_given`;

/**
 * Takes `count` new ids of `table` and returns the first (the others follow it): above every id the
 * table holds and every id the database has given, and recorded as given, in one statement that
 * writes first (so it takes the write lock before it reads). Call it inside the transaction of the
 * insert, so that the record lands exactly when the rows do. `count` 0 takes none and only records the
 * ids given so far: before a delete, where the database holds ids a kvbench without the record gave.
 *
 * A kvbench that does not know the record (0.7.0) numbers a new row its table's largest id + 1, which
 * may be an id given and deleted before (nothing written here can stop it); the next id taken here is
 * still above every id the record has seen, and above that row. A record that is not a number reads as none.
 */
export function takeIds(db: Database, table: ShownIdTable, count = 1): number {
  return advanceIds(db, table, count, 0) - count + 1;
}

/**
 * Records the ids `tables` have given so far (takeIds(…, 0) for each), in the transaction of a
 * delete, before it: every path that deletes a trial, a suite or an endpoint run goes through it, so
 * that a database from before the record (0.7.0) never gives the deleted row's id again.
 */
export function recordIdsBeforeDelete(db: Database, ...tables: ShownIdTable[]): void {
  for (const t of tables) advanceIds(db, t, 0, 0);
}

/**
 * Raises `table`'s record to at least `atLeast` (and every id it holds): the largest id a damaged file
 * is known to have given, in the copy of it (salvage's IdsSeen). Returns the record as it was
 * (null: none, or not a number).
 */
export function raiseIdsGiven(db: Database, table: ShownIdTable, atLeast: number): number | null {
  const before = metaReader(db, idGivenKey(table))?.(idGivenKey(table)) ?? null;
  advanceIds(db, table, 0, atLeast);
  const n = before === null ? NaN : Number.parseInt(before, 10);
  return n > 0 ? n : null;
}

/** takeIds' one statement: the record becomes the largest of itself + count, the table's largest id + count, and `atLeast`; returns it. */
function advanceIds(db: Database, table: ShownIdTable, count: number, atLeast: number): number {
  ensureMetaTable(db);
  const largest = `(SELECT COALESCE(MAX(id), 0) FROM ${table})`;
  const row = db
    .prepare(
      `INSERT INTO ${META_TABLE} (key, value) VALUES (:key, MAX(${largest} + :count, :atLeast))
       ON CONFLICT (key) DO UPDATE SET value = MAX(CASE WHEN CAST(value AS INTEGER) > 0 THEN CAST(value AS INTEGER) ELSE 0 END + :count, ${largest} + :count, :atLeast)
       RETURNING CAST(value AS INTEGER) AS given`,
    )
    // As integers (a JS number binds as a REAL, which the record would keep as "33.0").
    .get({ key: idGivenKey(table), count: BigInt(count), atLeast: BigInt(atLeast) }) as { given: number | bigint };
  return Number(row.given);
}

/**
 * Copies into a copy of a database (the read of a damaged one, which `kvbench recover` writes out)
 * what kvbench_meta says that the copy must go on saying: the ids each table has given (so that the
 * copy never gives one again) and the record of every recovery the database came through, not what
 * describes the file itself (who created or upgraded it, the copy kept before an upgrade). Throws
 * where the table cannot be read (a damaged page): the caller says what that costs.
 */
export function copyLastingMeta(src: Database, dst: Database): void {
  if (!hasTable(src, META_TABLE)) return;
  const rows = src.prepare(`SELECT key, value FROM ${META_TABLE} WHERE key LIKE '%\\_id\\_given' ESCAPE '\\' OR key LIKE 'recover%'`).all() as { key: string; value: string }[];
  if (rows.length === 0) return;
  const set = metaWriter(dst);
  for (const r of rows) set(String(r.key), String(r.value));
}

/**
 * Facts kvbench derives from every stored trial's results (its trial_metrics rows) that a database
 * stored before a build derived them lacks: how far a fill of them has gone, by trial id (key
 * `<fact>_filled_through`), so that a trial whose results do not carry the fact is read once, not at
 * every open. A value that is not a number reads as 0 (nothing filled).
 */
export function derivedFactsFilledThrough(db: Database, fact: string): number {
  const value = metaReader(db, `${fact}_filled_through`)?.(`${fact}_filled_through`) ?? null;
  const n = value === null ? NaN : Number.parseInt(value, 10);
  return n > 0 ? n : 0;
}

/** Records that the fill of `fact` has read every trial up to `trialId` (in the fill's transaction). */
export function recordDerivedFactsFilled(db: Database, fact: string, trialId: number): void {
  metaWriter(db)(`${fact}_filled_through`, String(trialId));
}

/**
 * Moves the fill of `fact` past trials this kvbench stores itself (ids `firstId`..`lastId`, in the
 * storing transaction), which carry the facts from the start, where no trial before them still waits
 * for the fill (`waiting`: an SQL condition on trials, the fill's own pending rule and a trial still
 * running, whose results another kvbench may yet store without the facts). Without it, the first
 * read-write open after a stored trial whose results hold none of the facts (an older kvbench's
 * results file, imported) would write the mark: a read changing the file.
 */
export function keepDerivedFactsFilled(db: Database, fact: string, waiting: string, firstId: number, lastId: number): void {
  const through = derivedFactsFilledThrough(db, fact);
  if (through >= lastId) return;
  const waits = db.prepare(`SELECT 1 FROM trials WHERE id > ? AND id < ? AND (${waiting}) LIMIT 1`).get(through, firstId);
  if (waits === undefined) recordDerivedFactsFilled(db, fact, lastId);
}

/** The fill of the queue's facts (Store.queueFactBatches), by its kvbench_meta name. */
export const QUEUE_FACTS = 'queue_facts';

/** The trials the fill of the queue's facts reads: kvbench results stored without them (an SQL condition on trials). */
export const QUEUE_FACTS_PENDING =
  "results_format = 'kvbench' AND results_gzip IS NOT NULL " +
  "AND NOT EXISTS (SELECT 1 FROM trial_metrics m WHERE m.trial_id = trials.id AND m.key = 'queueing_bound')";

/** The trials the fill's mark must not pass: pending ones, and those still running (their results may yet come without the facts). */
export const QUEUE_FACTS_WAITING = `status = 'running' OR (${QUEUE_FACTS_PENDING})`;

/** What kvbench_meta says of a database's schema; null fields were not recorded (a file from before the table). */
export interface SchemaMeta {
  /** The kvbench version that brought the file to its present schema (created or upgraded it). */
  schemaWrittenBy: string | null;
  /** The oldest schema that reads the file as it is: a kvbench that knows at least this one may read it read-only. */
  readableBySchema: number | null;
}

/** An upgrade openStore made: from which schema to which, and where the file as it was is kept. */
export interface SchemaUpgrade {
  file: string;
  fromSchema: number;
  toSchema: number;
  /** The copy taken before the upgrade, kept (null for a database without one: an empty file). */
  previousFile: string | null;
}

/** Sets a key of kvbench_meta (made where the file has none yet), replacing its value. */
function metaWriter(db: Database): (key: string, value: string) => void {
  ensureMetaTable(db);
  const put = db.prepare(`INSERT INTO ${META_TABLE} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
  return (key, value) => void put.run(key, value);
}

/** A reader of kvbench_meta's values by key (read once: the keys starting with `prefix`), or null where the file has no such table (made before it existed). */
function metaReader(db: Database, prefix = ''): ((key: string) => string | null) | null {
  if (!hasTable(db, META_TABLE)) return null;
  const rows = db.prepare(`SELECT key, value FROM ${META_TABLE} WHERE key LIKE ?`).all(`${prefix}%`) as { key: string; value: string }[];
  const values = new Map(rows.map((r) => [r.key, r.value]));
  return (key) => values.get(key) ?? null;
}

/** kvbench_meta's record, or null where the file has no such table (made before it existed). */
export function readSchemaMeta(db: Database): SchemaMeta | null {
  const value = metaReader(db);
  if (value === null) return null;
  const readable = Number(value('readable_by_schema'));
  return { schemaWrittenBy: value('schema_written_by'), readableBySchema: Number.isInteger(readable) && readable > 0 ? readable : null };
}

/**
 * What a database made by `kvbench recover` records of where it came from (kvbench_meta, kept by
 * every later change of schema): the damaged file, when and by which kvbench, what SQLite found, and
 * each part that could not be read, in the words the read-only path says them. The readers say it
 * (history, report and export on stderr; the app as a notice), so a result from it is known to come
 * from a recovery, with what was lost.
 */
export interface RecoveryStep {
  recoveredFrom: string;
  recoveredAt: string;
  recoveredBy: string;
  /** What SQLite found in the damaged file ("SQLite quick_check: …"). */
  damage: string;
  /** Each part of the damaged file that could not be read (salvageRows' notes), or [] where everything was. */
  lost: string[];
}

/**
 * The recovery that made a database, and the recoveries before it where the damaged file was itself
 * one a recovery made (newest first): what each lost is lost to this database too.
 */
export interface RecoveryRecord extends RecoveryStep {
  earlier: RecoveryStep[];
}

/**
 * Records where a recovered database came from (recoverDatabase), with the recoveries the damaged
 * file records (`earlier`, newest first; kvbench_meta's recovery_earlier), in its own transaction.
 */
export function recordRecovery(db: Database, r: RecoveryRecord): void {
  const set = metaWriter(db);
  set('recovered_from', r.recoveredFrom);
  set('recovered_at', r.recoveredAt);
  set('recovered_by', r.recoveredBy);
  set('recovery_damage', r.damage);
  set('recovery_lost', JSON.stringify(r.lost));
  set('recovery_earlier', JSON.stringify(r.earlier));
}

/** The recoveries a database came through, as the next recovery records them before its own (newest first). */
export const recoveryChain = (r: RecoveryRecord | null): RecoveryStep[] =>
  r === null ? [] : [{ recoveredFrom: r.recoveredFrom, recoveredAt: r.recoveredAt, recoveredBy: r.recoveredBy, damage: r.damage, lost: r.lost }, ...r.earlier];

/** A step of recovery_earlier as stored, or null where it is not one. */
function recoveryStepOf(v: unknown): RecoveryStep | null {
  if (typeof v !== 'object' || v === null) return null;
  const o = v as Record<string, unknown>;
  if (typeof o.recoveredFrom !== 'string') return null;
  const text = (x: unknown): string => (typeof x === 'string' ? x : '');
  return { recoveredFrom: o.recoveredFrom, recoveredAt: text(o.recoveredAt), recoveredBy: text(o.recoveredBy), damage: text(o.damage), lost: Array.isArray(o.lost) ? o.lost.map(String) : [] };
}

/** The recovery a database records (recordRecovery), or null for one never recovered (or whose record cannot be read). */
export function readRecoveryRecord(db: Database): RecoveryRecord | null {
  try {
    const value = metaReader(db, 'recover');
    const from = value?.('recovered_from') ?? null;
    if (value === null || from === null) return null;
    let lost: unknown = [];
    try {
      lost = JSON.parse(value('recovery_lost') ?? '[]');
    } catch {
      lost = ['(the record of what could not be read is damaged)'];
    }
    let earlier: unknown = [];
    try {
      earlier = JSON.parse(value('recovery_earlier') ?? '[]');
    } catch {
      earlier = [];
    }
    const steps = Array.isArray(earlier) ? earlier.map(recoveryStepOf) : [];
    return {
      recoveredFrom: from,
      recoveredAt: value('recovered_at') ?? '',
      recoveredBy: value('recovered_by') ?? '',
      damage: value('recovery_damage') ?? '',
      lost: Array.isArray(lost) ? lost.map(String) : [],
      earlier: steps.filter((x): x is RecoveryStep => x !== null),
    };
  } catch {
    return null; // a record that cannot be read takes nothing from the database it describes
  }
}

/**
 * One line saying that a database holds what a recovery could read, and what it could not; where the
 * damaged file was itself recovered, each recovery before, newest first, with what it lost.
 */
export function recoveryNotice(file: string, r: RecoveryRecord): string {
  const step = (made: string, s: RecoveryStep, verb: string): string => {
    const when = s.recoveredAt ? ` on ${s.recoveredAt.slice(0, 16).replace('T', ' ')} UTC` : '';
    const by = s.recoveredBy ? ` by kvbench ${s.recoveredBy}` : '';
    const lost =
      s.lost.length === 0
        ? 'every stored row of it could be read'
        : `what could not be read then: ${s.lost.map((n) => n.replace(/\.$/, '')).join('; ')}`;
    return `${made} ${verb} from the damaged ${s.recoveredFrom}${when}${by} (${s.damage}): ${lost}.`;
  };
  const lines = [step(file, r, 'holds what was recovered')];
  let made = r.recoveredFrom;
  for (const e of r.earlier) {
    lines.push(step(`Before that, ${made}`, e, 'had itself been recovered'));
    made = e.recoveredFrom;
  }
  return lines.join(' ');
}

/** Records a change of schema (inside the migration's transaction, so that it is there exactly when the change is). */
export function recordSchemaChange(db: Database, change: { fromSchema: number; readableBySchema: number; previousFile: string | null }): void {
  const set = metaWriter(db);
  const at = new Date().toISOString();
  set('schema_written_by', KVBENCH_VERSION);
  set('schema_written_at', at);
  set('readable_by_schema', String(change.readableBySchema));
  if (change.fromSchema === 0) {
    set('created_by', KVBENCH_VERSION);
    return;
  }
  set('upgraded_from_schema', String(change.fromSchema));
  set('previous_file', change.previousFile ?? '');
}

/** The kvbench releases that cannot open a database of `schema` (they know only older ones), in words. */
export function releasesRefusing(schema: number, migrations: readonly Migration[] = MIGRATIONS): string {
  const newest = migrations.find((m) => m.version === schema)?.newestReleaseWithout;
  return newest ? `kvbench ${newest} and older` : `a kvbench that knows only schema ${schema - 1} or older`;
}

/** What a front end says after openStore upgraded a database (CLI: stderr; the app: its log and a notice). */
export function upgradeNotice(u: SchemaUpgrade, migrations: readonly Migration[] = MIGRATIONS): string {
  const kept = u.previousFile ? `the file as it was (schema ${u.fromSchema}) is kept at ${u.previousFile}` : 'no copy was needed';
  return `upgraded ${u.file} from schema ${u.fromSchema} to ${u.toSchema} (kvbench ${KVBENCH_VERSION}): ${releasesRefusing(u.toSchema, migrations)} can no longer open it; ${kept}.`;
}
