// What a database records about the kvbench that last changed its schema, in a key/value table of its
// own (kvbench_meta), and the words kvbench uses when it upgrades a database or reads a newer one.
//
// user_version alone says only "schema N": a kvbench that knows less refused such a file outright,
// even where every newer migration only adds (readableWithout), and could not say which kvbench
// wrote it. The table records, at every change of schema (creation and upgrade, in the migration's
// transaction): which kvbench made it, the oldest schema that still reads the file as it is
// (oldestReadableSchema), and what it was upgraded from, when, and where the file as it was is kept.
//
// The table is not a numbered migration on purpose: a migration 8 would make every file this build
// writes unreadable to the kvbench releases that know schema 7 (they refuse a newer user_version),
// the very lock-out this record is meant to soften. Builds that do not know the table ignore it.
import { hasTable, type Database } from './sqlite.ts';
import { MIGRATIONS, type Migration } from './migrations.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';

const META_TABLE = 'kvbench_meta';

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
  db.exec(`CREATE TABLE IF NOT EXISTS ${META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`);
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
export interface RecoveryRecord {
  recoveredFrom: string;
  recoveredAt: string;
  recoveredBy: string;
  /** What SQLite found in the damaged file ("SQLite quick_check: …"). */
  damage: string;
  /** Each part of the damaged file that could not be read (salvageRows' notes), or [] where everything was. */
  lost: string[];
}

/** Records where a recovered database came from (recoverDatabase), in its own transaction. */
export function recordRecovery(db: Database, r: RecoveryRecord): void {
  const set = metaWriter(db);
  set('recovered_from', r.recoveredFrom);
  set('recovered_at', r.recoveredAt);
  set('recovered_by', r.recoveredBy);
  set('recovery_damage', r.damage);
  set('recovery_lost', JSON.stringify(r.lost));
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
    return {
      recoveredFrom: from,
      recoveredAt: value('recovered_at') ?? '',
      recoveredBy: value('recovered_by') ?? '',
      damage: value('recovery_damage') ?? '',
      lost: Array.isArray(lost) ? lost.map(String) : [],
    };
  } catch {
    return null; // a record that cannot be read takes nothing from the database it describes
  }
}

/** One line saying that a database holds what a recovery could read, and what it could not. */
export function recoveryNotice(file: string, r: RecoveryRecord): string {
  const when = r.recoveredAt ? ` on ${r.recoveredAt.slice(0, 16).replace('T', ' ')} UTC` : '';
  const by = r.recoveredBy ? ` by kvbench ${r.recoveredBy}` : '';
  const lost =
    r.lost.length === 0
      ? 'every stored row of it could be read'
      : `what could not be read then: ${r.lost.map((n) => n.replace(/\.$/, '')).join('; ')}`;
  return `${file} holds what was recovered from the damaged ${r.recoveredFrom}${when}${by} (${r.damage}): ${lost}.`;
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
