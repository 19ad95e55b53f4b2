// The trial store's repositories over one open database: systems, drives, hardware snapshots,
// suites, runs (one planned configuration of a suite), trials (one execution, with its metrics,
// histograms and raw results). Synchronous (better-sqlite3): every call is one short transaction.
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import type { CacheDirInfo, HardwareProfile } from '../../src-shared/domain/hardware.ts';
import type { PlannedRun, SuitePlan } from '../../src-shared/domain/scenarios.ts';
import type {
  DriveRecord,
  ResultsFormat,
  RunRecord,
  SuiteRecord,
  SuiteLabelFacet,
  SuiteStatus,
  SystemRecord,
  TrialFilter,
  TrialHistogram,
  TrialMetrics,
  TrialRecord,
  TrialRowStatus,
} from '../../src-shared/domain/store-types.ts';
import { suiteLabelOf } from '../../src-shared/domain/store-types.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { slotsNotDone } from '../../src-shared/domain/trial-slots.ts';
import { facetValuesOf, type FacetColumns, type FacetGroup } from '../../src-shared/domain/facet-matches.ts';
import type { TrialStatus } from '../../src-shared/domain/results.ts';
import { configKey, extractMetrics, extractRamBacking, measuringVersion, resultsDigest } from './results-ingest.ts';
import { currentProcess, hostNameOf, processLiveness, type ProcessRef } from '../util/process-identity.ts';
import { hasTable, sqliteCode, type Database, type SqlValue } from './sqlite.ts';
import { StoreError } from './store-error.ts';
import { pathNow, replacedFileError, type FileIdentity } from './file-identity.ts';
import { compareSorted, HISTORY_SORT_COLUMNS, type HistorySort, type SortValue } from './history-order.ts';
import {
  derivedFactsFilledThrough,
  keepDerivedFactsFilled,
  QUEUE_FACTS,
  QUEUE_FACTS_PENDING,
  QUEUE_FACTS_WAITING,
  readRecoveryRecord,
  recordDerivedFactsFilled,
  recordIdsBeforeDelete,
  takeIds,
  type RecoveryRecord,
  type SchemaUpgrade,
} from './schema-meta.ts';

/** The digest of stored results that could not be read: no content hashes to it. */
const UNREADABLE_RESULTS_DIGEST = 'unreadable';

/** A stored row found damaged: why it cannot be read, the trials that cost so far, and how. */
interface DamagedRow {
  error: string;
  trialIds: number[];
  /** The trial is left out (its own row), or shown without its hardware (a snapshot's). */
  consequence: 'left-out' | 'without-hardware';
}

/** One line per damaged row, naming the trials it costs (Store.unreadable, readDamaged). */
function damageMessages(rows: ReadonlyMap<string, DamagedRow>): string[] {
  return [...rows.values()].map((d) => {
    const ids = [...d.trialIds].sort((a, b) => a - b);
    const consequence =
      d.consequence === 'left-out'
        ? `trial ${ids.join(', ')} is left out (the other trials are not affected)`
        : ids.length === 1
          ? `trial ${ids[0]} (and any other trial of that snapshot) is shown without its hardware`
          : `trials ${ids.join(', ')} are shown without their hardware`;
    return `${d.error}; ${consequence}`;
  });
}

/** A trial's stored results, unzipped and parsed; null when the bytes are damaged (no gzip, no JSON object). */
function readStoredResults(gzip: Buffer): Record<string, unknown> | null {
  try {
    const results: unknown = JSON.parse(zlib.gunzipSync(gzip).toString('utf8'));
    return typeof results === 'object' && results !== null && !Array.isArray(results) ? (results as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const nowIso = (): string => new Date().toISOString();

/**
 * The trials table's options_json, model and seed columns, from a trial's options: the model and seed
 * are kept apart so that history can filter by them in SQL; each trial insert (run, finish, import)
 * writes them by this one rule.
 */
export const optionColumns = (options: Record<string, unknown>): [optionsJson: string, model: string | null, seed: number | null] => [
  JSON.stringify(options),
  typeof options.model === 'string' ? options.model : null,
  typeof options.seed === 'number' ? options.seed : null,
];

/**
 * A suite an import has not finished. kvbench builds that wrote an import in batches, each its own
 * transaction, left one in the file while they wrote ('running', owned by their process) and when
 * they failed or were killed ('running' with the process gone, or 'interrupted'). An import now
 * enters the file in one transaction, finished (ImportStaging), so only those builds leave one; it
 * stays hidden here as they hid it: readers never see it or its trials, a duplicate check does not
 * count its results, and it is removed once its process is gone (removeAbandonedImports).
 */
export const unfinishedImport = (suite = 'suites'): string => `${suite}.source = 'import' AND ${suite}.status <> 'finished'`;

/** How many rows one transaction of a removal deletes: the write lock is held briefly, however big the import. */
const REMOVAL_BATCH_ROWS = 200;

/** A trial's results as stored: gzipped JSON and the content digest that finds them again (resultsDigest). */
export interface PackedResults {
  gzip: Buffer;
  digest: string;
}

/**
 * Compresses and digests results. CPU work (milliseconds for a large file): an import does it for
 * every file before it takes the write lock, so the lock is held for the inserts alone.
 */
export function packResults(results: Record<string, unknown>): PackedResults {
  return { gzip: zlib.gzipSync(Buffer.from(JSON.stringify(results))), digest: resultsDigest(results) };
}
const sha16 = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

export interface RecoveredTrial {
  trialId: number;
  suiteId: number;
  scenarioId: string;
  runnerPid: number | null;
  enginePid: number | null;
  cacheDir: string | null;
}

/** The metrics the fill of the queue's facts (Store.queueFactBatches) fills. */
const QUEUE_FACT_KEYS = ['queueing_bound', 'requests_queued_at_close', 'backlog_cap_reached'] as const;

/** How far the fill of imported trials' measuring versions is (Store.backfillMeasuringVersions). */
export interface BackfillProgress {
  /** Trials read so far. */
  trialsDone: number;
  /** Trials left without a version when the fill began. */
  trialsTotal: number;
  /** Of those read, the ones that now have their version (once: no later open reads them again). */
  trialsFilled: number;
  /** Of those read, the ones whose stored results cannot be read: still unknown, read again at the next open. */
  trialsUnreadable: number;
}

export interface StartTrialInput {
  runId: number;
  suiteId: number;
  systemId: string;
  driveId: string | null;
  hardwareSnapshotId: number | null;
  scenarioId: string;
  trialIndex: number;
  options: Record<string, unknown>;
  configKey: string;
  runner: ProcessRef;
  cacheDir: string | null;
  startedAt?: string;
}

export interface FinishTrialInput {
  status: TrialStatus;
  reason: string | null;
  wallMs: number | null;
  results?: Record<string, unknown> | null;
  resultsFormat?: ResultsFormat | null;
  summaryText?: string | null;
  metrics?: TrialMetrics;
  histograms?: TrialHistogram[];
}

interface TrialRow {
  id: number;
  run_id: number;
  suite_id: number;
  suite_label: string | null;
  system_id: string;
  system_label: string;
  drive_id: string | null;
  drive_label: string | null;
  drive_size_bytes: number | null;
  scenario_id: string;
  trial_index: number;
  attempt: number;
  status: TrialRowStatus;
  status_reason: string | null;
  config_key: string;
  options_json: string;
  seed: number | null;
  started_at: string;
  finished_at: string | null;
  wall_ms: number | null;
  results_format: ResultsFormat | null;
  source_file: string | null;
  kvbench_version: string;
  measured_by_version: string | null;
  storage_ram_backing: string | null;
}

/**
 * The size of a trial's drive, where its label states one (a drive known by its local device): from
 * the trial's hardware snapshot, so that the app can state it in the units chosen in Settings. The
 * label itself stays as stored (it names the drive, in the CLI too). Each snapshot is read once per
 * query (a database holds a few, shared by thousands of trials); a damaged one gives null here, and
 * reading the trial's hardware says so.
 */
const DRIVE_SIZES = `WITH drive_sizes AS MATERIALIZED (
    SELECT id, json_extract(profile_json, '$.cacheDir.blockDevice.sizeBytes') AS size_bytes FROM hardware_snapshots WHERE json_valid(profile_json))
  `;

/** The joins of trialSelect, without the drive sizes: the rows History lists, for its counts and orders (historyPage). */
const HISTORY_FROM = 'FROM trials t JOIN suites su ON su.id = t.suite_id JOIN systems s ON s.id = t.system_id LEFT JOIN drives d ON d.id = t.drive_id';

/**
 * The columns a TrialRecord is made of: never the results blob or the summary text, which a listing
 * of thousands of trials would otherwise read in full (trialResults reads one trial's).
 */
const trialSelect = (measuredBy: string, ramBacking: string): string => `${DRIVE_SIZES}SELECT t.id, t.run_id, t.suite_id, NULLIF(trim(su.label), '') AS suite_label, t.system_id, s.label AS system_label, t.drive_id, d.label AS drive_label, t.scenario_id, t.trial_index,
    t.attempt, t.status, t.status_reason, t.config_key, t.options_json, t.seed, t.started_at, t.finished_at, t.wall_ms, t.results_format, t.source_file, t.kvbench_version,
    ${measuredBy} AS measured_by_version, ${ramBacking} AS storage_ram_backing, CASE WHEN d.basis = 'local-device' THEN ds.size_bytes END AS drive_size_bytes
  FROM trials t JOIN suites su ON su.id = t.suite_id JOIN systems s ON s.id = t.system_id LEFT JOIN drives d ON d.id = t.drive_id
  LEFT JOIN drive_sizes ds ON ds.id = t.hardware_snapshot_id`;

interface SuiteRow {
  id: number;
  system_id: string;
  drive_id: string | null;
  profile: string;
  label: string | null;
  status: SuiteStatus;
  source: 'suite' | 'import';
  cache_dir: string | null;
  created_at: string;
  finished_at: string | null;
  kvbench_version: string;
  plan_json: string | null;
  runner_pid: number | null;
  runner_host: string | null;
  runner_start_ticks: string | null;
}

const EMPTY_COUNTS = (): Record<TrialRowStatus, number> => ({ running: 0, complete: 0, partial: 0, failed: 0, aborted: 0 });

export class Store {
  readonly db: Database;
  readonly path: string;
  readonly readonly: boolean;
  /** Trials this open found interrupted and marked aborted. */
  recovered: RecoveredTrial[] = [];
  /** The upgrade of its schema this open made (openStore), or null: the front ends say it (openNotes). */
  upgrade: SchemaUpgrade | null = null;
  /**
   * What the open did or found that the user must be told, one line each: an upgrade (from which
   * schema, which kvbench can no longer open it, where the file as it was is kept), or a file read
   * as it is (an older or a newer kvbench's). The CLI says them on stderr, the app in its log and a notice.
   */
  readonly openNotes: string[] = [];
  /**
   * Where the database came from when `kvbench recover` made it from a damaged one (kvbench_meta),
   * with what could not be read then; null for any other. The readers say it (recoveryNotice).
   */
  readonly recovery: RecoveryRecord | null;
  /**
   * Stored rows found damaged while reading (bytes overwritten that SQLite's checks do not see:
   * JSON that no longer parses), each said once: a trial left out of a listing, a trial shown
   * without its hardware. The rest is read as usual; the commands say these on stderr. A store
   * copied from a damaged database (openDamagedStore) says first what the copy could not read.
   * Read-only: a fresh list each time, so a push to it would be lost (noteLost records those).
   */
  get unreadable(): readonly string[] {
    return [...this.lost, ...damageMessages(this.damaged)];
  }
  /** What the copy of a damaged database could not read (salvageRows' notes), in the order said. */
  private readonly lost: string[] = [];
  /** Every damaged row met, by row ("hardware snapshot 1"), in the order met. */
  private readonly damaged = new Map<string, DamagedRow>();
  /** The damaged rows each read in progress (readDamaged) has met, also those an earlier read noted. */
  private readonly damageSeen: Map<string, DamagedRow>[] = [];

  /** Runs once the connection is closed (openStore: removing the -wal and -shm a read-only open made). */
  private readonly afterClose: (() => void) | null;
  /** PRAGMA quick_check, skipped by the open (the file was as a check found it sound): made before the first write. */
  private pendingCheck: (() => void) | null = null;

  /** The trial columns a TrialRecord is read from (trialSelect). */
  private readonly trialSelect: string;
  /** Whether the trials keep their measuring version (schema 4): an older schema read as it is does not. */
  private readonly keepsMeasuringVersion: boolean;
  /** Whether deleted trial slots are recorded (schema 7): an older schema read as it is has none. */
  private readonly keepsDeletedSlots: boolean;

  /** Whether the open skipped PRAGMA quick_check (openStore's skipCheckIfSound) and nothing has made it since. */
  get checkSkipped(): boolean {
    return this.pendingCheck !== null;
  }

  /** The open skipped PRAGMA quick_check: `check` makes it, before anything writes (checkBeforeWriting). */
  deferCheck(check: () => void): void {
    this.pendingCheck = check;
  }

  /**
   * Makes the check the open skipped, if it did (a DB_CORRUPT where it finds damage): kvbench writes
   * only to a file PRAGMA quick_check found sound. Called where an open's own upkeep is about to write
   * (dead runners' trials, abandoned imports, measuring versions), and by front ends before a write.
   */
  checkBeforeWriting(): void {
    this.requireSameFile();
    const check = this.pendingCheck;
    if (check === null) return;
    check();
    this.pendingCheck = null;
  }

  /** The file this connection opened (device and inode), and how to open the one at its path instead; null for a store in memory. */
  private opened: { identity: FileIdentity; reopen: string } | null = null;

  /** Remembers which file the connection opened (taken by the open, right after it): what requireSameFile compares the path with. */
  watchFile(identity: FileIdentity, reopen: string): void {
    this.opened = { identity, reopen };
  }

  /** The file this connection opened (file-identity.ts); null for a store in memory (a damaged database's copy). */
  get fileIdentity(): FileIdentity | null {
    return this.opened?.identity ?? null;
  }

  /** What is at `path` now: the file this connection opened, another one (replaced by a rename), or nothing; 'same' for a store in memory. */
  pathNow(): 'same' | 'replaced' | 'gone' {
    return this.opened === null ? 'same' : pathNow(this.path, this.opened.identity);
  }

  /**
   * DB_REPLACED where the path no longer names the file this connection opened (one stat): a write
   * then would go through the -wal at the path into whatever file is there now. Made before every
   * write (checkBeforeWriting, atomically, a trial's start and end).
   */
  requireSameFile(): void {
    const replaced = this.replacedError();
    if (replaced !== null) throw replaced;
  }

  /** requireSameFile's DB_REPLACED, or null where the path still names the file this connection opened. */
  replacedError(): StoreError | null {
    const now = this.pathNow();
    if (now === 'same') return null;
    this.emptyWalOfReplaced();
    return replacedFileError(this.path, now, this.opened!.reopen);
  }

  /** The WAL of a replaced file has been emptied into it (emptyWalOfReplaced). */
  private walEmptied = false;

  /**
   * The -wal and -shm this connection uses lie at the path, beside the file now there, which any
   * connection opening it (another kvbench, sqlite3) would read with this file's frames in it as its
   * own (SQLite's corruption by renaming a database in use). So once the path is seen to name another
   * file, the frames go into the file this connection has open (the replaced one), and the -wal is
   * truncated: the file at the path is then read as it came. Nothing is written to it.
   */
  private emptyWalOfReplaced(): void {
    if (this.walEmptied || this.readonly || !this.db.open || this.db.inTransaction) return;
    try {
      const [done] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
      this.walEmptied = done?.busy === 0;
    } catch {
      // Busy (a reader of the old file): tried again at the next look.
    }
  }

  constructor(db: Database, file: string, readonly: boolean, afterClose: (() => void) | null = null) {
    this.db = db;
    this.path = file;
    this.readonly = readonly;
    this.afterClose = afterClose;
    this.recovery = readRecoveryRecord(db);
    // A read-only open reads an older file as it is (migrations 4 and 5 are readableWithout): its
    // trials' measuring version and RAM backing are unknown.
    const columns = db.prepare('SELECT name FROM pragma_table_info(?)').all('trials') as { name: string }[];
    const has = (name: string): boolean => columns.some((c) => c.name === name);
    this.keepsMeasuringVersion = has('measured_by_version');
    this.keepsDeletedSlots = hasTable(db, 'deleted_trial_slots');
    this.trialSelect = trialSelect(this.keepsMeasuringVersion ? 't.measured_by_version' : this.measuringVersionsAsIs(), has('storage_ram_backing') ? 't.storage_ram_backing' : 'NULL');
  }

  /**
   * A file older than schema 4, read as it is (commands that only read never upgrade it), has no
   * measuring versions: worked out here as migration 4 and the fill after it would store them (a
   * trial run here: the version that stored it; an imported one: its stored results'), into a
   * temporary table of this connection only, so that the version-gated cautions judge the trials as
   * they will after an upgrade. Writes nothing to the file. Returns the SQL that reads them.
   */
  private measuringVersionsAsIs(): string {
    const fromSuite = 'CASE WHEN t.source_file IS NULL THEN t.kvbench_version END';
    try {
      this.db.exec('CREATE TEMP TABLE IF NOT EXISTS measured_as_is (trial_id INTEGER PRIMARY KEY, version TEXT NOT NULL)');
      const put = this.db.prepare('INSERT OR REPLACE INTO temp.measured_as_is (trial_id, version) VALUES (?, ?)');
      for (const rows of this.pendingResults("source_file IS NOT NULL AND results_format = 'kvbench' AND results_gzip IS NOT NULL", 64)) {
        for (const r of rows) {
          const results = readStoredResults(r.results_gzip);
          const version = results === null ? null : measuringVersion(results);
          if (version !== null) put.run(r.id, version);
        }
      }
      return `COALESCE(${fromSuite}, (SELECT version FROM temp.measured_as_is WHERE trial_id = t.id))`;
    } catch {
      // No temporary storage here: the imported trials' versions read as unknown, as they did before.
      return fromSuite;
    }
  }

  close(): void {
    if (!this.db.open) return;
    this.db.close();
    this.afterClose?.();
  }

  /** JSON stored in `what` (e.g. "trial 17's options"), parsed; damage is a DB_CORRUPT that names it and the database. */
  private parseStored<T>(text: string, what: string): T {
    try {
      return JSON.parse(text) as T;
    } catch (err) {
      throw new StoreError('DB_CORRUPT', `${what} in ${this.path} cannot be read: the stored JSON is damaged (${(err as Error).message})`);
    }
  }

  /** Records what the copy of a damaged database could not read (openDamagedStore), each note once. */
  noteLost(notes: readonly string[]): void {
    for (const n of notes) if (!this.lost.includes(n)) this.lost.push(n);
  }

  /**
   * Records a damaged row once, for the commands to say, with the trial it cost: a snapshot that
   * several trials share is one row, said once with all of them, not once per trial.
   */
  private noteUnreadable(err: unknown, row: string, trialId: number, consequence: DamagedRow['consequence']): void {
    for (const rows of [this.damaged, ...this.damageSeen]) {
      let d = rows.get(row);
      if (!d) rows.set(row, (d = { error: (err as Error).message, trialIds: [], consequence }));
      if (!d.trialIds.includes(trialId)) d.trialIds.push(trialId);
    }
  }

  /**
   * `read` in one read transaction (one snapshot): a report or an export reads a selection's trials,
   * then each one's histograms and hardware, as separate statements; another connection deleting or
   * storing trials meanwhile (the app, another kvbench, a suite) lands wholly in what it reads or
   * wholly not, never between the list and the histograms. Inside a transaction already, that one.
   */
  inOneSnapshot<T>(read: () => T): T {
    return this.db.inTransaction ? read() : this.db.transaction(read)();
  }

  /**
   * `read`'s value and the damaged rows it left out or read without (as `unreadable` says them),
   * every time: `unreadable` says each once for a log, while each answer built from a read must say
   * what it lacks. Synchronous only: across an await, another read's damage would be counted in.
   */
  readDamaged<T>(read: () => T): { value: T; unreadable: string[] } {
    const seen = new Map<string, DamagedRow>();
    this.damageSeen.push(seen);
    try {
      const value = read();
      return { value, unreadable: damageMessages(seen) };
    } finally {
      this.damageSeen.splice(this.damageSeen.indexOf(seen), 1);
    }
  }

  /**
   * readDamaged for a read that awaits (an export read as it is written): only on a connection that
   * nothing else reads meanwhile (a report worker's own, one job at a time), where no other read's
   * damage can be counted in.
   */
  async readDamagedAlone<T>(read: () => Promise<T>): Promise<{ value: T; unreadable: string[] }> {
    const seen = new Map<string, DamagedRow>();
    this.damageSeen.push(seen);
    try {
      const value = await read();
      return { value, unreadable: damageMessages(seen) };
    } finally {
      this.damageSeen.splice(this.damageSeen.indexOf(seen), 1);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Systems and drives

  /** Records (or refreshes) the detected system and the drive behind its cache directory. */
  upsertDetectedSystem(hw: HardwareProfile): SystemRecord {
    const now = nowIso();
    this.db
      .prepare(
        `INSERT INTO systems (id, label, hostname, source, first_seen_at, last_seen_at) VALUES (?, ?, ?, 'detected', ?, ?)
         ON CONFLICT(id) DO UPDATE SET hostname = excluded.hostname, last_seen_at = excluded.last_seen_at`,
      )
      .run(hw.system.id, hw.system.hostname, hw.system.hostname, now, now);
    if (hw.cacheDir) this.upsertDrive(hw.system.id, hw.cacheDir);
    return this.getSystem(hw.system.id)!;
  }

  /** A system known only through imported results, identified by its label; `now`: when it is first seen, if new. */
  upsertImportedSystem(label: string, now = nowIso()): SystemRecord {
    const existing = this.db.prepare('SELECT id FROM systems WHERE label = ? ORDER BY source = \'imported\' DESC LIMIT 1').get(label) as { id: string } | undefined;
    if (existing) return this.getSystem(existing.id)!;
    const id = `imp-${sha16(`imported-system:${label}`)}`;
    this.db
      .prepare(`INSERT INTO systems (id, label, hostname, source, first_seen_at, last_seen_at) VALUES (?, ?, ?, 'imported', ?, ?) ON CONFLICT(id) DO NOTHING`)
      .run(id, label, label, now, now);
    return this.getSystem(id)!;
  }

  upsertDrive(systemId: string, c: CacheDirInfo): DriveRecord {
    const now = nowIso();
    this.db
      .prepare(
        `INSERT INTO drives (id, system_id, label, basis, model, serial, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET system_id = excluded.system_id, label = excluded.label, last_seen_at = excluded.last_seen_at`,
      )
      .run(c.driveId, systemId, c.driveLabel, c.driveIdBasis, c.blockDevice?.model ?? null, c.blockDevice?.serial ?? null, now, now);
    return this.getDrive(c.driveId)!;
  }

  /** A drive named in an import (`--drive LABEL`); `now`: when it is first seen, if new. */
  upsertImportedDrive(systemId: string, label: string, now = nowIso()): DriveRecord {
    const id = `imp-drv-${sha16(`${systemId}|${label}`)}`;
    this.db
      .prepare(`INSERT INTO drives (id, system_id, label, basis, model, serial, first_seen_at, last_seen_at) VALUES (?, ?, ?, 'imported', NULL, NULL, ?, ?) ON CONFLICT(id) DO NOTHING`)
      .run(id, systemId, label, now, now);
    return this.getDrive(id)!;
  }

  setSystemLabel(id: string, label: string): void {
    const r = this.db.prepare('UPDATE systems SET label = ? WHERE id = ?').run(label, id);
    if (r.changes === 0) throw new StoreError('NOT_FOUND', `no system ${id}`);
  }

  getSystem(id: string): SystemRecord | null {
    const r = this.db.prepare('SELECT * FROM systems WHERE id = ?').get(id) as Record<string, string> | undefined;
    return r ? rowToSystem(r) : null;
  }

  listSystems(): (SystemRecord & { trialCount: number })[] {
    const rows = this.readVisible(
      (hide) =>
        this.db
          .prepare(`SELECT s.*, (SELECT COUNT(*) FROM trials t WHERE t.system_id = s.id ${hide.and}) AS trial_count FROM systems s ORDER BY s.last_seen_at DESC`)
          .all() as (Record<string, string> & { trial_count: number })[],
    );
    return rows.map((r) => ({ ...rowToSystem(r), trialCount: r.trial_count }));
  }

  getDrive(id: string): DriveRecord | null {
    const r = this.db.prepare('SELECT * FROM drives WHERE id = ?').get(id) as Record<string, string | null> | undefined;
    return r ? rowToDrive(r) : null;
  }

  listDrives(): (DriveRecord & { trialCount: number })[] {
    const rows = this.readVisible(
      (hide) =>
        this.db
          .prepare(
            `SELECT d.*, (SELECT COUNT(*) FROM trials t WHERE t.drive_id = d.id ${hide.and}) AS trial_count,
               CASE WHEN d.basis = 'local-device' THEN (SELECT CASE WHEN json_valid(h.profile_json) THEN json_extract(h.profile_json, '$.cacheDir.blockDevice.sizeBytes') END
                 FROM hardware_snapshots h WHERE h.id = (
                   -- The newest trial's snapshot found first, then read once: not every trial's parsed on the way.
                   SELECT t.hardware_snapshot_id FROM trials t JOIN hardware_snapshots hs ON hs.id = t.hardware_snapshot_id WHERE t.drive_id = d.id ORDER BY t.id DESC LIMIT 1)) END AS size_bytes
             FROM drives d ORDER BY d.last_seen_at DESC`,
          )
          .all() as (Record<string, string | null> & { trial_count: number; size_bytes: unknown })[],
    );
    return rows.map((r) => ({ ...rowToDrive(r), sizeBytes: typeof r.size_bytes === 'number' ? r.size_bytes : null, trialCount: r.trial_count }));
  }

  /** A system by id, unique id prefix or label. */
  resolveSystem(ref: string): SystemRecord {
    const exact = this.getSystem(ref);
    if (exact) return exact;
    const rows = this.db.prepare('SELECT * FROM systems WHERE label = ? OR hostname = ? OR id LIKE ?').all(ref, ref, `${ref}%`) as Record<string, string>[];
    const unique = [...new Map(rows.map((r) => [r.id, r])).values()];
    if (unique.length === 1) return rowToSystem(unique[0]);
    if (unique.length === 0) throw new StoreError('NOT_FOUND', `no system matches '${ref}' (see kvbench history --systems)`);
    throw new StoreError('VALIDATION', `'${ref}' matches ${unique.length} systems: ${unique.map((r) => `${r.id} (${r.label})`).join(', ')}; use the id`);
  }

  /**
   * A suite label some suite carries (suiteLabelOf: trimmed, then exactly): the label itself. Labels
   * are names the user typed, so no prefix stands for one; a label that differs only in case is
   * named in the refusal.
   */
  resolveSuiteLabel(ref: string): string {
    const label = suiteLabelOf(ref);
    if (label === null) throw new StoreError('VALIDATION', 'a suite label cannot be empty');
    if (this.db.prepare(`SELECT 1 FROM suites WHERE trim(label) = ? AND NOT (${unfinishedImport()}) LIMIT 1`).get(label)) return label;
    const near = (
      this.db.prepare(`SELECT DISTINCT trim(label) AS v FROM suites WHERE lower(trim(label)) = lower(?) AND NOT (${unfinishedImport()}) ORDER BY v`).all(label) as { v: string }[]
    ).map((r) => `'${r.v}'`);
    throw new StoreError('NOT_FOUND', `no suite is labelled '${label}'${near.length > 0 ? ` (labels differ in case: ${near.join(', ')})` : ''} (see kvbench history --suites)`);
  }

  /** A drive by id, unique id prefix or label. */
  resolveDrive(ref: string): DriveRecord {
    const exact = this.getDrive(ref);
    if (exact) return exact;
    const rows = this.db.prepare('SELECT * FROM drives WHERE label = ? OR id LIKE ?').all(ref, `${ref}%`) as Record<string, string | null>[];
    if (rows.length === 1) return rowToDrive(rows[0]);
    if (rows.length === 0) throw new StoreError('NOT_FOUND', `no drive matches '${ref}' (see kvbench history --systems)`);
    throw new StoreError('VALIDATION', `'${ref}' matches ${rows.length} drives: ${rows.map((r) => `${r.id} (${r.label})`).join(', ')}; use the id`);
  }

  /** Stores a hardware snapshot once per distinct content; returns its id. */
  saveHardwareSnapshot(hw: HardwareProfile): number {
    const json = JSON.stringify(hw);
    const { detectedAt: _ignored, ...stable } = hw;
    const digest = createHash('sha256').update(JSON.stringify(stable)).digest('hex');
    const existing = this.db.prepare('SELECT id FROM hardware_snapshots WHERE digest = ?').get(digest) as { id: number } | undefined;
    if (existing) return existing.id;
    return Number(
      this.db.prepare('INSERT INTO hardware_snapshots (system_id, digest, captured_at, profile_json) VALUES (?, ?, ?, ?)').run(hw.system.id, digest, hw.detectedAt, json).lastInsertRowid,
    );
  }

  getHardwareSnapshot(id: number): HardwareProfile | null {
    const r = this.db.prepare('SELECT profile_json FROM hardware_snapshots WHERE id = ?').get(id) as { profile_json: string } | undefined;
    return r ? this.parseStored<HardwareProfile>(r.profile_json, `hardware snapshot ${id}`) : null;
  }

  /** The snapshot stored with a trial; a damaged one is noted (unreadable) and the trial goes without. */
  trialHardware(trialId: number): HardwareProfile | null {
    const r = this.db.prepare('SELECT hardware_snapshot_id AS id FROM trials WHERE id = ?').get(trialId) as { id: number | null } | undefined;
    if (!r?.id) return null;
    try {
      return this.getHardwareSnapshot(r.id);
    } catch (err) {
      if (!(err instanceof StoreError)) throw err;
      this.noteUnreadable(err, `hardware snapshot ${r.id}`, trialId, 'without-hardware');
      return null;
    }
  }

  /**
   * trialHardware for many trials (an export's), each stored snapshot read and parsed once: the
   * trials that share one (a suite's, a system's) share its profile, where one parse per trial held
   * thousands of copies of a handful of snapshots. A damaged snapshot is noted for each of its trials.
   */
  trialHardwareOf(trialIds: readonly number[]): Map<number, HardwareProfile | null> {
    const out = new Map<number, HardwareProfile | null>();
    const profiles = new Map<number, HardwareProfile | null | StoreError>();
    const snapshotOf = this.db.prepare('SELECT hardware_snapshot_id AS id FROM trials WHERE id = ?');
    for (const trialId of trialIds) {
      const id = (snapshotOf.get(trialId) as { id: number | null } | undefined)?.id;
      if (!id) {
        out.set(trialId, null);
        continue;
      }
      let profile = profiles.get(id);
      if (profile === undefined) {
        try {
          profile = this.getHardwareSnapshot(id);
        } catch (err) {
          if (!(err instanceof StoreError)) throw err;
          profile = err;
        }
        profiles.set(id, profile);
      }
      if (profile instanceof StoreError) this.noteUnreadable(profile, `hardware snapshot ${id}`, trialId, 'without-hardware');
      out.set(trialId, profile instanceof StoreError ? null : profile);
    }
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // Suites and runs

  createSuite(args: {
    systemId: string;
    driveId: string | null;
    profile: string;
    label: string | null;
    source: 'suite' | 'import';
    plan: SuitePlan | null;
    cacheDir: string | null;
    runner: ProcessRef | null;
    status?: SuiteStatus;
    /** Default: now. */
    createdAt?: string;
  }): number {
    const now = args.createdAt ?? nowIso();
    const tx = this.db.transaction(() => {
      const id = takeIds(this.db, 'suites');
      this.db
        .prepare(
          `INSERT INTO suites (id, system_id, drive_id, profile, label, source, status, plan_json, cache_dir, kvbench_version, created_at, updated_at, runner_pid, runner_host, runner_start_ticks)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          args.systemId,
          args.driveId,
          args.profile,
          suiteLabelOf(args.label),
          args.source,
          args.status ?? 'running',
          args.plan ? JSON.stringify(args.plan) : null,
          args.cacheDir,
          KVBENCH_VERSION,
          now,
          now,
          args.runner?.pid ?? null,
          args.runner?.host ?? null,
          args.runner?.startTicks ?? null,
        );
      if (args.plan) for (const run of args.plan.runs) this.addRun(id, run, configKeyOf(run));
      return id;
    });
    return tx();
  }

  /** Adds a run at a position the caller knows is free (an import numbering the runs of the suite it just created). */
  addRun(suiteId: number, run: Pick<PlannedRun, 'position' | 'scenarioId' | 'label' | 'options' | 'trials'>, configKey: string): number {
    return Number(
      this.db
        .prepare('INSERT INTO runs (suite_id, position, scenario_id, label, config_key, options_json, trials_planned) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(suiteId, run.position, run.scenarioId, run.label, configKey, JSON.stringify(run.options), run.trials).lastInsertRowid,
    );
  }

  /** A run for imported trials: one per (suite, scenario, configuration). */
  ensureRun(suiteId: number, scenarioId: string, label: string, configKey: string, options: Record<string, unknown>): number {
    const existing = this.db.prepare('SELECT id FROM runs WHERE suite_id = ? AND scenario_id = ? AND config_key = ?').get(suiteId, scenarioId, configKey) as { id: number } | undefined;
    if (existing) return existing.id;
    const position = (this.db.prepare('SELECT COALESCE(MAX(position) + 1, 0) AS p FROM runs WHERE suite_id = ?').get(suiteId) as { p: number }).p;
    return this.addRun(suiteId, { position, scenarioId, label, options, trials: 0 }, configKey);
  }

  /** A suite by id; an import's is found once it finished (unfinishedImport). */
  getSuite(id: number): SuiteRecord | null {
    const r = this.db.prepare(`SELECT * FROM suites WHERE id = ? AND NOT (${unfinishedImport()})`).get(id) as SuiteRow | undefined;
    return r ? this.rowToSuite(r) : null;
  }

  getSuitePlan(id: number): SuitePlan | null {
    const r = this.db.prepare('SELECT plan_json FROM suites WHERE id = ?').get(id) as { plan_json: string | null } | undefined;
    return r?.plan_json ? this.parseStored<SuitePlan>(r.plan_json, `the plan of suite ${id}`) : null;
  }

  listSuites(filter: { systemIds?: string[]; labels?: string[]; limit?: number } = {}): SuiteRecord[] {
    const where: string[] = [`NOT (${unfinishedImport()})`];
    const params: SqlValue[] = [];
    if (filter.systemIds?.length) {
      where.push(`system_id IN (${filter.systemIds.map(() => '?').join(', ')})`);
      params.push(...filter.systemIds);
    }
    if (filter.labels?.length) {
      where.push(`trim(label) IN (${filter.labels.map(() => '?').join(', ')})`);
      params.push(...filter.labels);
    }
    const sql = `SELECT * FROM suites ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`;
    params.push(filter.limit ?? 100);
    return (this.db.prepare(sql).all(...params) as SuiteRow[]).map((r) => this.rowToSuite(r));
  }

  /**
   * The cache directory of the newest suite run on this host (by its detected hostname): what the
   * wizard offers again, so that a reload does not fall back to a directory on the system disk.
   */
  lastSuiteCacheDir(hostname: string): string | null {
    const r = this.db
      .prepare(
        `SELECT s.cache_dir FROM suites s JOIN systems y ON y.id = s.system_id
         WHERE s.source = 'suite' AND s.cache_dir IS NOT NULL AND y.hostname = ? ORDER BY s.created_at DESC, s.id DESC LIMIT 1`,
      )
      .get(hostname) as { cache_dir: string } | undefined;
    return r?.cache_dir ?? null;
  }

  /** The newest suite of a system, optionally only those that ran (not imports). */
  /** The newest suite (of a system, of a source) with at least one trial: an empty one has nothing to report. */
  latestSuite(systemId?: string, source?: 'suite' | 'import'): SuiteRecord | null {
    const where: string[] = ['EXISTS (SELECT 1 FROM trials t WHERE t.suite_id = suites.id)', `NOT (${unfinishedImport()})`];
    const params: SqlValue[] = [];
    if (systemId) {
      where.push('system_id = ?');
      params.push(systemId);
    }
    if (source) {
      where.push('source = ?');
      params.push(source);
    }
    const r = this.db.prepare(`SELECT * FROM suites ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT 1`).get(...params) as SuiteRow | undefined;
    return r ? this.rowToSuite(r) : null;
  }

  listRuns(suiteId: number): RunRecord[] {
    const rows = this.db.prepare('SELECT * FROM runs WHERE suite_id = ? ORDER BY position').all(suiteId) as Record<string, string | number>[];
    return rows.map((r) => ({
      id: Number(r.id),
      suiteId: Number(r.suite_id),
      position: Number(r.position),
      scenarioId: String(r.scenario_id),
      label: String(r.label),
      configKey: String(r.config_key),
      options: this.parseStored<Record<string, unknown>>(String(r.options_json), `the options of run ${Number(r.id)} (suite ${suiteId})`),
      trialsPlanned: Number(r.trials_planned),
    }));
  }

  setSuiteStatus(id: number, status: SuiteStatus): void {
    const now = nowIso();
    this.db
      .prepare('UPDATE suites SET status = ?, updated_at = ?, finished_at = CASE WHEN ? = \'running\' THEN NULL ELSE ? END WHERE id = ?')
      .run(status, now, status, now, id);
  }

  /**
   * Takes a suite for a (resumed) run by this process. Refused while another live process runs it.
   */
  claimSuite(id: number, runner: ProcessRef): void {
    const tx = this.db.transaction(() => {
      const r = this.db.prepare('SELECT * FROM suites WHERE id = ?').get(id) as SuiteRow | undefined;
      if (!r) throw new StoreError('NOT_FOUND', `no suite ${id}`);
      if (r.source !== 'suite') throw new StoreError('VALIDATION', `suite ${id} holds imported results; there is nothing to resume`);
      if (r.status === 'running' && r.runner_pid !== runner.pid) {
        const alive = processLiveness({ pid: r.runner_pid, host: r.runner_host, startTicks: r.runner_start_ticks });
        if (alive !== 'dead') throw new StoreError('VALIDATION', `suite ${id} is being run by process ${r.runner_pid} on ${r.runner_host === null ? '?' : hostNameOf(r.runner_host)}`);
      }
      this.db
        .prepare("UPDATE suites SET status = 'running', updated_at = ?, finished_at = NULL, runner_pid = ?, runner_host = ?, runner_start_ticks = ? WHERE id = ?")
        .run(nowIso(), runner.pid, runner.host, runner.startTicks, id);
    });
    tx.immediate();
  }

  /** Deletes a suite with its runs and trials, and the hardware snapshots only they referred to. */
  deleteSuite(id: number): void {
    this.atomically(() => {
      // The ids given so far, recorded before they go (those of a database from before the record): never given again.
      recordIdsBeforeDelete(this.db, 'suites', 'trials');
      const r = this.db.prepare('DELETE FROM suites WHERE id = ?').run(id);
      if (r.changes === 0) throw new StoreError('NOT_FOUND', `no suite ${id}`);
      this.pruneHardwareSnapshots();
    });
  }

  /**
   * Snapshots name hosts and disk serials: one no trial refers to any more goes with the last trial
   * that did. A system with a running suite keeps its snapshots, since the runner saved its snapshot
   * before its trials and the next one it starts refers to it.
   */
  private pruneHardwareSnapshots(): void {
    this.db
      .prepare(
        `DELETE FROM hardware_snapshots
          WHERE id NOT IN (SELECT hardware_snapshot_id FROM trials WHERE hardware_snapshot_id IS NOT NULL)
            AND system_id NOT IN (SELECT system_id FROM suites WHERE status = 'running')`,
      )
      .run();
  }

  // -------------------------------------------------------------------------------------------
  // Trials

  /** Inserts a trial as `running`, owned by `runner`; returns its id. */
  startTrial(t: StartTrialInput): number {
    this.requireSameFile();
    const tx = this.db.transaction(() => {
      const attempt = (
        this.db.prepare('SELECT COALESCE(MAX(attempt), 0) + 1 AS a FROM trials WHERE run_id = ? AND trial_index = ?').get(t.runId, t.trialIndex) as { a: number }
      ).a;
      const id = takeIds(this.db, 'trials');
      this.db
        .prepare(
          `INSERT INTO trials (id, run_id, suite_id, system_id, drive_id, hardware_snapshot_id, scenario_id, trial_index, attempt, status, config_key, options_json, model, seed,
             started_at, runner_pid, runner_host, runner_start_ticks, cache_dir, kvbench_version, measured_by_version)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          id,
          t.runId,
          t.suiteId,
          t.systemId,
          t.driveId,
          t.hardwareSnapshotId,
          t.scenarioId,
          t.trialIndex,
          attempt,
          t.configKey,
          ...optionColumns(t.options),
          t.startedAt ?? nowIso(),
          t.runner.pid,
          t.runner.host,
          t.runner.startTicks,
          t.cacheDir,
          KVBENCH_VERSION,
          // Run here: the kvbench that stores it measures it.
          KVBENCH_VERSION,
        );
      keepDerivedFactsFilled(this.db, QUEUE_FACTS, QUEUE_FACTS_WAITING, id, id);
      return id;
    });
    return tx.immediate();
  }

  setTrialEnginePid(trialId: number, pid: number | null): void {
    this.db.prepare('UPDATE trials SET engine_pid = ? WHERE id = ?').run(pid, trialId);
  }

  /**
   * `read` in one read transaction (one snapshot), given the condition that leaves the trials of
   * unfinished imports out (`t.suite_id NOT IN (…)`, also as `and` and `where`): null, and empty
   * strings, when there is none, so that every other time the usual plans and covering indexes serve.
   */
  private readVisible<T>(read: (hide: { visible: string | null; and: string; where: string }) => T): T {
    return this.db.transaction(() => {
      const ids = (this.db.prepare(`SELECT id FROM suites WHERE ${unfinishedImport()}`).all() as { id: number }[]).map((r) => r.id);
      const visible = ids.length === 0 ? null : `t.suite_id NOT IN (${ids.join(', ')})`;
      return read({ visible, and: visible === null ? '' : `AND ${visible}`, where: visible === null ? '' : `WHERE ${visible}` });
    })();
  }

  /** Runs `fn` as one IMMEDIATE transaction: every write in it lands, or none does (the calls inside become savepoints). */
  atomically<T>(fn: () => T): T {
    if (!this.db.inTransaction) this.requireSameFile();
    return this.db.transaction(fn).immediate();
  }

  /** Records a trial's end: status, results (gzip), metrics and histograms, in one transaction. */
  finishTrial(trialId: number, f: FinishTrialInput): void {
    this.requireSameFile();
    const packed = f.results ? packResults(f.results) : null;
    const tx = this.db.transaction(() => {
      this.db
        .prepare(
          `UPDATE trials SET status = ?, status_reason = ?, finished_at = ?, wall_ms = ?, results_format = ?, results_gzip = ?, results_digest = ?, summary_text = ?,
             storage_ram_backing = ?
           WHERE id = ?`,
        )
        .run(
          f.status,
          f.reason,
          nowIso(),
          f.wallMs,
          f.results ? (f.resultsFormat ?? 'kvbench') : null,
          packed?.gzip ?? null,
          packed?.digest ?? null,
          f.summaryText ?? null,
          f.results ? extractRamBacking(f.results) : null,
          trialId,
        );
      this.writeMetrics(trialId, f.metrics ?? {}, f.histograms ?? []);
      // A deleted slot run again (--rerun-deleted) is measured once more: its record goes with the
      // complete trial that replaces it, in this transaction. An attempt that does not complete
      // leaves the slot deleted, as it was: only asked for again does it run.
      if (f.status === 'complete' && this.keepsDeletedSlots) {
        this.db
          .prepare('DELETE FROM deleted_trial_slots WHERE (run_id, trial_index) IN (SELECT run_id, trial_index FROM trials WHERE id = ? AND run_id IS NOT NULL)')
          .run(trialId);
      }
    });
    tx.immediate();
  }

  private writeMetrics(trialId: number, metrics: TrialMetrics, histograms: TrialHistogram[]): void {
    const m = this.db.prepare('INSERT OR REPLACE INTO trial_metrics (trial_id, key, value) VALUES (?, ?, ?)');
    for (const [key, value] of Object.entries(metrics)) if (Number.isFinite(value)) m.run(trialId, key, value);
    const h = this.db.prepare('INSERT OR REPLACE INTO trial_histograms (trial_id, name, unit, count, sum_ns, hdr) VALUES (?, ?, ?, ?, ?, ?)');
    for (const x of histograms) h.run(trialId, x.name, x.unit, x.count, x.sumNs, x.hdr);
  }

  /** What the history can be filtered by, straight from SQL: no trial (or its options) is loaded. */
  trialFacets(): { scenarioIds: string[]; models: string[]; suiteLabels: SuiteLabelFacet[]; trialCount: number } {
    const column = (sql: string): string[] => (this.db.prepare(sql).all() as { v: string }[]).map((r) => r.v);
    return this.readVisible((hide) => ({
      scenarioIds: column(`SELECT DISTINCT scenario_id AS v FROM trials t ${hide.where} ORDER BY v`),
      models: column(`SELECT DISTINCT model AS v FROM trials t WHERE model IS NOT NULL ${hide.and} ORDER BY v`),
      suiteLabels: this.suiteLabels(),
      trialCount: (this.db.prepare(`SELECT COUNT(*) AS n FROM trials t ${hide.where}`).get() as { n: number }).n,
    }));
  }

  /** The labels of suites with trials, the most recently used first, each with its suites and their trials. */
  suiteLabels(): SuiteLabelFacet[] {
    return this.db
      .prepare(
        `SELECT trim(su.label) AS label, COUNT(DISTINCT su.id) AS suites, COUNT(t.id) AS trialCount
           FROM suites su JOIN trials t ON t.suite_id = su.id
          WHERE trim(su.label) <> '' AND NOT (${unfinishedImport('su')})
          GROUP BY trim(su.label)
          ORDER BY MAX(su.created_at) DESC, label`,
      )
      .all() as SuiteLabelFacet[];
  }

  /** The conditions `filter` puts on `trials t JOIN suites su` (listTrials, facetGroups), with their parameters in order. */
  private trialConditions(filter: TrialFilter): { where: string[]; params: SqlValue[] } {
    const where: string[] = [];
    const params: SqlValue[] = [];
    const inList = (col: string, values: readonly (string | number)[] | undefined): void => {
      if (!values || values.length === 0) return;
      where.push(`${col} IN (${values.map(() => '?').join(', ')})`);
      params.push(...values);
    };
    inList('t.system_id', filter.systemIds);
    inList('t.drive_id', filter.driveIds);
    inList('t.scenario_id', filter.scenarioIds);
    inList('t.status', filter.statuses);
    inList('t.suite_id', filter.suiteIds);
    // Labels stored before they were trimmed (suiteLabelOf) match as they are shown.
    inList('trim(su.label)', filter.suiteLabels);
    inList('t.config_key', filter.configKeys);
    if (filter.model) {
      where.push('t.model = ?');
      params.push(filter.model);
    }
    if (filter.since) {
      where.push('t.started_at >= ?');
      params.push(filter.since);
    }
    if (filter.until) {
      where.push('t.started_at <= ?');
      params.push(filter.until);
    }
    return { where, params };
  }

  /**
   * The trials `filter` keeps (History's dates and suites: its other filters are what
   * countFacetGroups counts under), grouped by their value of each of History's filters, with how
   * many share them: counted in SQL, so that History's counts do not load every trial in range with
   * its metrics. A trial listTrials leaves out (options that no longer parse) is left out here too:
   * the counts stay those of the list.
   */
  facetGroups(filter: Pick<TrialFilter, 'suiteIds' | 'since' | 'until'>): FacetGroup[] {
    const { where, params } = this.trialConditions({ suiteIds: filter.suiteIds, since: filter.since, until: filter.until });
    where.push('json_valid(t.options_json)');
    const rows = this.readVisible((hide) => {
      const all = hide.visible === null ? where : [...where, hide.visible];
      // The joins of trialSelect: a trial counts exactly where listTrials would list it.
      return this.db
        .prepare(
          `SELECT t.system_id AS systemId, t.drive_id AS driveId, NULLIF(trim(su.label), '') AS suiteLabel, t.model, t.scenario_id AS scenarioId, t.status, COUNT(*) AS trials
             FROM trials t JOIN suites su ON su.id = t.suite_id JOIN systems s ON s.id = t.system_id
            WHERE ${all.join(' AND ')}
            GROUP BY t.system_id, t.drive_id, suiteLabel, t.model, t.scenario_id, t.status`,
        )
        .all(...params) as (FacetColumns & { trials: number })[];
    });
    return rows.map((r) => ({ values: facetValuesOf(r), trials: r.trials }));
  }

  listTrials(filter: TrialFilter = {}): TrialRecord[] {
    return this.trialsOfRows(this.trialRows(filter));
  }

  /**
   * listTrials `pageTrials` at a time, for a reader that writes each page out before it takes the
   * next (a trials CSV of a year's database): the trials are never all held. The pages are read in
   * one read transaction (unless the caller's is open), so that a suite storing a trial or a delete
   * in another process meanwhile neither skips nor repeats one: the pages are one listing.
   */
  *trialPages(filter: TrialFilter, pageTrials = 500): Generator<TrialRecord[]> {
    const own = !this.db.inTransaction;
    if (own) this.db.exec('BEGIN');
    try {
      for (let offset = 0; ; offset += pageTrials) {
        const rows = this.trialRows({ ...filter, limit: pageTrials, offset });
        if (rows.length > 0) yield this.trialsOfRows(rows);
        if (rows.length < pageTrials) return;
      }
    } finally {
      if (own && this.db.inTransaction) this.db.exec('COMMIT');
    }
  }

  private trialRows(filter: TrialFilter): TrialRow[] {
    const { where, params } = this.trialConditions(filter);
    const order = filter.order === 'asc' ? 'ASC' : 'DESC';
    params.push(filter.limit ?? -1, filter.offset ?? 0);
    return this.readVisible((hide) => {
      const all = hide.visible === null ? where : [...where, hide.visible];
      const sql = `${this.trialSelect}
        ${all.length ? `WHERE ${all.join(' AND ')}` : ''}
        ORDER BY t.started_at ${order}, t.id ${order} LIMIT ? OFFSET ?`;
      return this.db.prepare(sql).all(...params) as TrialRow[];
    });
  }

  private trialsOfRows(rows: readonly TrialRow[]): TrialRecord[] {
    const metrics = this.metricsFor(rows.map((r) => r.id));
    // One damaged row must not hide every other trial from history, reports and exports.
    const trials: TrialRecord[] = [];
    for (const r of rows) {
      try {
        trials.push(this.rowToTrial(r, metrics.get(r.id) ?? {}));
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        this.noteUnreadable(err, `trial ${r.id}`, r.id, 'left-out');
      }
    }
    return trials;
  }

  /**
   * A page of History: the trials `filter` keeps in History's order (history-order.ts), from `offset`,
   * at most `limit`, and how many it keeps in all, read in SQL: only the page's trials are read, with
   * their metrics. Numbers (the start, metrics, ids, wall time) are ordered by SQL; text keys, which
   * History orders as localeCompare does, by their values alone in JS. A trial listTrials leaves out
   * (options that no longer parse) is left out and noted as listTrials notes it: every one of the
   * selection, not only the page's. Null where SQLite's json_valid and JSON.parse disagree about a
   * row: the caller then reads the selection as listTrials does (historyPageInMemory).
   */
  historyPage(filter: TrialFilter, sort: HistorySort | undefined, offset: number, limit: number): { trials: TrialRecord[]; total: number } | null {
    const { where, params } = this.trialConditions(filter);
    const key = sort?.key ?? 'startedAt';
    const dir = sort?.dir === 'asc' ? 'ASC' : 'DESC';
    return this.readVisible((hide) => {
      const conds = hide.visible === null ? where : [...where, hide.visible];
      const whereOf = (...more: string[]): string => (conds.length + more.length > 0 ? `WHERE ${[...conds, ...more].join(' AND ')}` : '');
      // One pass counts them, and whether any row's options are damaged: json_valid in the result, not
      // in WHERE, so that SQLite reads only the selection's options (in WHERE it would read every trial's
      // before the other filters' joins).
      const counted = this.db.prepare(`SELECT COUNT(*) AS listed, SUM(json_valid(t.options_json)) AS valid ${HISTORY_FROM} ${whereOf()}`).get(...params) as { listed: number; valid: number | null };
      const total = counted.valid ?? 0;
      let valid: string[] = [];
      if (total < counted.listed) {
        // The damaged rows in listTrials' order, so that they are said as it says them.
        const damaged = this.db.prepare(`SELECT t.id, t.options_json ${HISTORY_FROM} ${whereOf('NOT json_valid(t.options_json)')} ORDER BY t.started_at DESC, t.id DESC`).all(...params) as { id: number; options_json: string }[];
        for (const r of damaged) {
          try {
            this.parseStored(r.options_json, `trial ${r.id}'s options`);
            return null; // SQLite calls it damaged, JSON.parse reads it
          } catch (err) {
            if (!(err instanceof StoreError)) throw err;
            this.noteUnreadable(err, `trial ${r.id}`, r.id, 'left-out');
          }
        }
        valid = ['json_valid(t.options_json)'];
      }
      const column = Object.hasOwn(HISTORY_SORT_COLUMNS, key) ? HISTORY_SORT_COLUMNS[key as keyof typeof HISTORY_SORT_COLUMNS] : null;
      let rows: TrialRow[];
      if (key === 'startedAt') {
        rows = this.db.prepare(`${this.trialSelect} ${whereOf(...valid)} ORDER BY t.started_at ${dir}, t.id ${dir} LIMIT ? OFFSET ?`).all(...params, limit, offset) as TrialRow[];
      } else if (key.startsWith('metric:') || column?.numeric) {
        // Missing values last in either direction, newest start first among them; equal values newest id first.
        const v = column ? column.sql : 'm.value';
        const join = column ? '' : 'LEFT JOIN trial_metrics m ON m.trial_id = t.id AND m.key = ?';
        const sql = `${this.trialSelect} ${join} ${whereOf(...valid)}
          ORDER BY (${v}) IS NULL, ${v} ${dir}, CASE WHEN (${v}) IS NULL THEN t.started_at END DESC, t.id DESC LIMIT ? OFFSET ?`;
        rows = this.db.prepare(sql).all(...(column ? [] : [key.slice(7)]), ...params, limit, offset) as TrialRow[];
      } else {
        // Text (or an unknown key: the start, as text): each trial's value alone, ordered as History orders text.
        const v = column?.sql ?? 't.started_at';
        const values = this.db.prepare(`SELECT t.id, ${v} AS v ${HISTORY_FROM} ${whereOf(...valid)} ORDER BY t.started_at DESC, t.id DESC`).all(...params) as { id: number; v: SortValue }[];
        const ids = values
          .sort((a, b) => compareSorted(a, b, sort?.dir ?? 'desc'))
          .slice(offset, offset + limit)
          .map((r) => r.id);
        const byId = new Map<number, TrialRow>();
        for (let i = 0; i < ids.length; i += 500) {
          const chunk = ids.slice(i, i + 500);
          for (const r of this.db.prepare(`${this.trialSelect} WHERE t.id IN (${chunk.map(() => '?').join(', ')})`).all(...chunk) as TrialRow[]) byId.set(r.id, r);
        }
        rows = ids.map((id) => byId.get(id)!);
      }
      const metrics = this.metricsFor(rows.map((r) => r.id));
      const trials: TrialRecord[] = [];
      for (const r of rows) {
        try {
          trials.push(this.rowToTrial(r, metrics.get(r.id) ?? {}));
        } catch (err) {
          if (!(err instanceof StoreError)) throw err;
          return null; // SQLite reads it as JSON, JSON.parse does not
        }
      }
      return { trials, total };
    });
  }

  /**
   * Every trial History lists under `filter` (historyPage's, newest start first), with its suite: what
   * "select all matching" acts on. Only ids are read.
   */
  historyIds(filter: TrialFilter): { id: number; suiteId: number }[] {
    const { where, params } = this.trialConditions(filter);
    const rows = this.readVisible((hide) => {
      const conds = hide.visible === null ? where : [...where, hide.visible];
      // json_valid in the result: read for the selection's trials only (historyPage).
      return this.db
        .prepare(`SELECT t.id, t.suite_id AS suiteId, json_valid(t.options_json) AS valid ${HISTORY_FROM} ${conds.length > 0 ? `WHERE ${conds.join(' AND ')}` : ''} ORDER BY t.started_at DESC, t.id DESC`)
        .all(...params) as { id: number; suiteId: number; valid: number }[];
    });
    return rows.filter((r) => r.valid === 1).map(({ id, suiteId }) => ({ id, suiteId }));
  }

  /** A trial by id; one of an import is found once the import finished (unfinishedImport). */
  getTrial(id: number): TrialRecord | null {
    const r = this.db.prepare(`${this.trialSelect} WHERE t.id = ? AND NOT (${unfinishedImport('su')})`).get(id) as TrialRow | undefined;
    return r ? this.rowToTrial(r, this.metricsFor([id]).get(id) ?? {}) : null;
  }

  private metricsFor(ids: number[]): Map<number, TrialMetrics> {
    const out = new Map<number, TrialMetrics>();
    // Chunks well under SQLite's parameter limit.
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = this.db.prepare(`SELECT trial_id, key, value FROM trial_metrics WHERE trial_id IN (${chunk.map(() => '?').join(', ')})`).all(...chunk) as {
        trial_id: number;
        key: string;
        value: number;
      }[];
      for (const r of rows) {
        let m = out.get(r.trial_id);
        if (!m) out.set(r.trial_id, (m = {}));
        m[r.key] = r.value;
      }
    }
    return out;
  }

  /** The raw results JSON a trial produced (or was imported from); null when it has none. */
  trialResults(id: number): Record<string, unknown> | null {
    const r = this.db.prepare('SELECT results_gzip FROM trials WHERE id = ?').get(id) as { results_gzip: Buffer | null } | undefined;
    if (!r?.results_gzip) return null;
    let text: string;
    try {
      text = zlib.gunzipSync(r.results_gzip).toString('utf8');
    } catch (err) {
      throw new StoreError('DB_CORRUPT', `the results of trial ${id} in ${this.path} cannot be read: the stored gzip is damaged (${(err as Error).message})`);
    }
    return this.parseStored<Record<string, unknown>>(text, `the results of trial ${id}`);
  }

  /**
   * The stored results of the trials `pending` selects, a few at a time in id order, for the backfills
   * below (SQL cannot read the gzip): each unzips a batch outside the write lock and writes it in one
   * short transaction, so a suite storing its trial in another process waits for one batch at most.
   * A trial the caller leaves pending is not read again by this pass.
   */
  private *pendingResults(pending: string, batch: number): Generator<{ id: number; results_gzip: Buffer }[]> {
    const next = this.db.prepare(`SELECT id, results_gzip FROM trials WHERE ${pending} AND id > ? ORDER BY id LIMIT ?`);
    const batchAfter = (id: number) => next.all(id, batch) as { id: number; results_gzip: Buffer }[];
    for (let rows = batchAfter(0); rows.length > 0; rows = batchAfter(rows[rows.length - 1].id)) yield rows;
  }

  /**
   * Gives the trials stored before the digest was kept theirs (resultsDigest), once, before an import
   * takes its lock (pendingResults): unzipping and hashing every old trial inside that lock would hold
   * up a suite storing its trial in another process. Results that cannot be read are marked so (no
   * digest equals it) and never block an import again.
   */
  backfillResultsDigests(batch = 16): void {
    const fill = this.db.prepare('UPDATE trials SET results_digest = ? WHERE id = ? AND results_digest IS NULL');
    for (const rows of this.pendingResults('results_digest IS NULL AND results_gzip IS NOT NULL', batch)) {
      const digests = rows.map((r) => {
        const results = readStoredResults(r.results_gzip);
        return results === null ? UNREADABLE_RESULTS_DIGEST : resultsDigest(results);
      });
      this.atomically(() => rows.forEach((r, i) => fill.run(digests[i], r.id)));
    }
  }

  /**
   * Gives the trials imported before schema 4 kept the version that measured them theirs, read from
   * their stored results as an import reads a file's (measuringVersion): migration 4 could not, as
   * SQL cannot read the gzip. Only kvbench's results carry a version; the reference's stay null, as
   * an import stores them, and trials run here had theirs from migration 4. A few at a time
   * (pendingResults). Results that cannot be read (a damaged blob) leave their trial unknown and are
   * passed over; the next call tries them again. Returns how many trials it filled.
   * Thousands of them take seconds: `onProgress` hears how many there are to read before the first
   * batch (only when there are any), and after each how many were read, filled and found unreadable.
   */
  backfillMeasuringVersions(onProgress?: (p: BackfillProgress) => void, batch = 16): number {
    const batches = this.measuringVersionBatches(onProgress, batch);
    for (let step = batches.next(); ; step = batches.next()) if (step.done) return step.value;
  }

  /**
   * backfillMeasuringVersions one batch at a time: each `next()` fills one batch, and the generator
   * returns how many trials it filled. A caller that must go on answering meanwhile (a server
   * opening another database: openStoreYielding) lets its event loop turn between them.
   */
  *measuringVersionBatches(onProgress?: (p: BackfillProgress) => void, batch = 16): Generator<void, number, void> {
    if (!this.keepsMeasuringVersion) return 0;
    const pending = `measured_by_version IS NULL AND results_format = 'kvbench' AND results_gzip IS NOT NULL`;
    const fill = this.db.prepare('UPDATE trials SET measured_by_version = ? WHERE id = ? AND measured_by_version IS NULL');
    let trialsTotal = -1;
    let filled = 0;
    let unreadable = 0;
    let trialsDone = 0;
    // A trial imported meanwhile (by another process) may take the counts past the total it was told.
    const upTo = (n: number): number => Math.min(n, trialsTotal);
    for (const rows of this.pendingResults(pending, batch)) {
      // Counted at the first batch, only where there is something to fill: every read-write open comes here.
      if (onProgress && trialsTotal < 0) {
        trialsTotal = (this.db.prepare(`SELECT count(*) AS n FROM trials WHERE ${pending}`).get() as { n: number }).n;
        if (trialsTotal > 0) onProgress({ trialsDone: 0, trialsTotal, trialsFilled: 0, trialsUnreadable: 0 });
      }
      const found = rows.flatMap((r) => {
        const results = readStoredResults(r.results_gzip);
        if (results === null) unreadable++;
        const version = results === null ? null : measuringVersion(results);
        return version === null ? [] : [{ id: r.id, version }];
      });
      if (found.length > 0) {
        this.checkBeforeWriting();
        filled += this.atomically(() => found.reduce((n, f) => n + fill.run(f.version, f.id).changes, 0));
      }
      trialsDone += rows.length;
      onProgress?.({ trialsDone: upTo(trialsDone), trialsTotal, trialsFilled: upTo(filled), trialsUnreadable: upTo(unreadable) });
      yield;
    }
    return filled;
  }

  /**
   * Gives the kvbench trials stored before the queue's facts were kept (0.7.0 and earlier) their
   * trial_metrics rows of QUEUE_FACT_KEYS, derived from their stored results as an import derives them
   * (extractMetrics: queueing_bound by today's rule, src-shared/domain/queueing-bound.ts), so that a
   * queueing-bound trial carries its caution in every reader. Not a numbered migration (it would lock
   * out every 0.7.0): kvbench_meta keeps how far the fill has gone (queue_facts_filled_through), so each
   * trial's results are read once, a few at a time (pendingResults); trials stored with the facts are
   * passed over without reading. A 0.7.0 writing to the database later stores trials without them,
   * above that mark: the next open of this build fills them. Results that cannot be read, or that
   * carry no queue (the reference's files never do), get no row. Yields after each batch; returns how
   * many trials it filled.
   */
  *queueFactBatches(onProgress?: (p: BackfillProgress) => void, batch = 128): Generator<void, number, void> {
    const through = derivedFactsFilledThrough(this.db, QUEUE_FACTS);
    const pending = `${QUEUE_FACTS_PENDING} AND id > ${Math.trunc(through)}`;
    const put = this.db.prepare('INSERT OR REPLACE INTO trial_metrics (trial_id, key, value) VALUES (?, ?, ?)');
    let filled = 0;
    let trialsDone = 0;
    let trialsTotal = -1;
    let readSome = false;
    for (const rows of this.pendingResults(pending, batch)) {
      readSome = true;
      // Counted at the first batch only (every read-write open comes here); each trial read is done with, facts or none.
      if (onProgress && trialsTotal < 0) {
        trialsTotal = (this.db.prepare(`SELECT count(*) AS n FROM trials WHERE ${pending}`).get() as { n: number }).n;
        onProgress({ trialsDone: 0, trialsTotal, trialsFilled: 0, trialsUnreadable: 0 });
      }
      const found = rows.map((r) => {
        const results = readStoredResults(r.results_gzip);
        const metrics = results === null ? {} : extractMetrics(results);
        return { id: r.id, facts: QUEUE_FACT_KEYS.flatMap((k) => (metrics[k] === undefined ? [] : [[k, metrics[k]] as const])) };
      });
      this.checkBeforeWriting();
      this.atomically(() => {
        for (const f of found) for (const [k, v] of f.facts) put.run(f.id, k, v);
        recordDerivedFactsFilled(this.db, QUEUE_FACTS, Math.max(through, rows[rows.length - 1].id));
      });
      filled += found.filter((f) => f.facts.length > 0).length;
      trialsDone = Math.min(trialsDone + rows.length, Math.max(trialsTotal, 0));
      onProgress?.({ trialsDone, trialsTotal, trialsFilled: trialsDone, trialsUnreadable: 0 });
      yield;
    }
    // A pass that read something ends with the mark past every trial nothing waits before, not at the
    // last one it read: trials this build stored above it carry the facts, and a mark held at the last
    // pending trial would keep a later store from moving it (keepDerivedFactsFilled), so a read
    // command's open would write it again. A pass that read nothing writes nothing.
    if (readSome) this.recordQueueFactsFilledPast();
    return filled;
  }

  /** Moves the queue facts' mark to the last trial before the first one still waiting (QUEUE_FACTS_WAITING), or the last trial. */
  private recordQueueFactsFilledPast(): void {
    this.checkBeforeWriting();
    this.atomically(() => {
      const through = derivedFactsFilledThrough(this.db, QUEUE_FACTS);
      const { waits, last } = this.db
        .prepare(`SELECT (SELECT min(id) FROM trials WHERE id > ? AND (${QUEUE_FACTS_WAITING})) AS waits, (SELECT max(id) FROM trials) AS last`)
        .get(through) as { waits: number | null; last: number | null };
      const past = waits === null ? (last ?? 0) : waits - 1;
      if (past > through) recordDerivedFactsFilled(this.db, QUEUE_FACTS, past);
    });
  }

  /**
   * The stored trial whose results have this content digest (resultsDigest), if any: never one of an
   * unfinished import (unfinishedImport), which may yet be removed.
   */
  trialWithResultsDigest(digest: string): { trialId: number; suiteId: number; systemLabel: string } | null {
    const hit = this.db
      .prepare(
        `SELECT t.id, t.suite_id, s.label FROM trials t JOIN systems s ON s.id = t.system_id JOIN suites su ON su.id = t.suite_id
          WHERE t.results_digest = ? AND NOT (${unfinishedImport('su')}) ORDER BY t.id LIMIT 1`,
      )
      .get(digest) as { id: number; suite_id: number; label: string } | undefined;
    return hit ? { trialId: hit.id, suiteId: hit.suite_id, systemLabel: hit.label } : null;
  }

  trialHistograms(id: number): TrialHistogram[] {
    const rows = this.db.prepare('SELECT name, unit, count, sum_ns, hdr FROM trial_histograms WHERE trial_id = ? ORDER BY name').all(id) as {
      name: string;
      unit: 'ns' | 'ns/MiB';
      count: number;
      sum_ns: number;
      hdr: string;
    }[];
    return rows.map((r) => ({ name: r.name, unit: r.unit, count: r.count, sumNs: r.sum_ns, hdr: r.hdr }));
  }

  /**
   * Deletes trials, and the hardware snapshots only they referred to, all or (one missing: NOT_FOUND)
   * none. A finished suite whose last trial goes goes too, with its runs and plan (which names the
   * cache directory): left behind, it would list as a suite with nothing in it. A running suite
   * stays (its runner adds its next trial there), and so do interrupted and cancelled ones: their
   * plan is what a resume runs. Returns the suites deleted.
   */
  deleteTrials(ids: readonly number[]): number[] {
    return this.atomically(() => {
      // The ids given so far, recorded before they go (those of a database from before the record): never given again.
      recordIdsBeforeDelete(this.db, 'trials', 'suites');
      const del = this.db.prepare('DELETE FROM trials WHERE id = ? RETURNING suite_id, run_id, trial_index, status');
      const touched = new Set<number>();
      const completeSlots = new Map<string, { runId: number; trialIndex: number }>();
      for (const id of ids) {
        const r = del.get(id) as { suite_id: number; run_id: number | null; trial_index: number; status: TrialRowStatus } | undefined;
        if (!r) throw new StoreError('NOT_FOUND', `no trial ${id}`);
        touched.add(r.suite_id);
        if (r.status === 'complete' && r.run_id !== null) completeSlots.set(`${r.run_id}:${r.trial_index}`, { runId: r.run_id, trialIndex: r.trial_index });
      }
      // A slot whose last complete attempt the user deleted is not a trial left to run (resume, "not
      // complete"): it was measured, and the result was removed on purpose.
      if (this.keepsDeletedSlots) {
        const stillComplete = this.db.prepare("SELECT 1 FROM trials WHERE run_id = ? AND trial_index = ? AND status = 'complete'");
        // Planned slots only: an import's trials are not resumed.
        const mark = this.db.prepare(
          "INSERT OR IGNORE INTO deleted_trial_slots (run_id, trial_index, deleted_at) SELECT r.id, ?, ? FROM runs r JOIN suites su ON su.id = r.suite_id WHERE r.id = ? AND su.source = 'suite'",
        );
        const now = new Date().toISOString();
        for (const { runId, trialIndex } of completeSlots.values()) if (stillComplete.get(runId, trialIndex) === undefined) mark.run(trialIndex, now, runId);
      }
      const dropEmpty = this.db.prepare("DELETE FROM suites WHERE id = ? AND status = 'finished' AND NOT EXISTS (SELECT 1 FROM trials WHERE suite_id = ?)");
      const emptied = [...touched].filter((id) => dropEmpty.run(id, id).changes > 0);
      this.pruneHardwareSnapshots();
      return emptied;
    });
  }

  /** Counts of trials per status for one run and trial index (resume decides from these). */
  trialStatusesByRun(suiteId: number): { runId: number; trialIndex: number; statuses: TrialRowStatus[] }[] {
    const rows = this.db.prepare('SELECT run_id, trial_index, status FROM trials WHERE suite_id = ? ORDER BY run_id, trial_index, attempt').all(suiteId) as {
      run_id: number;
      trial_index: number;
      status: TrialRowStatus;
    }[];
    const map = new Map<string, { runId: number; trialIndex: number; statuses: TrialRowStatus[] }>();
    for (const r of rows) {
      const k = `${r.run_id}:${r.trial_index}`;
      let e = map.get(k);
      if (!e) map.set(k, (e = { runId: r.run_id, trialIndex: r.trial_index, statuses: [] }));
      e.statuses.push(r.status);
    }
    return [...map.values()];
  }

  /**
   * The planned trial slots without a complete attempt, in plan order: what a resume runs. A slot
   * whose complete trial the user deleted is left out, unless `deleted` asks for those too (kvbench
   * suite --resume --rerun-deleted, the app's "Run deleted trials again"); each slot says which it is.
   */
  trialSlotsLeft(suiteId: number, opts: { deleted?: boolean } = {}): { run: RunRecord; trialIndex: number; deleted: boolean }[] {
    return this.slotsLeft(suiteId, this.deletedTrialSlots(suiteId), opts);
  }

  /** trialSlotsLeft, given the suite's deletedTrialSlots (read once where both are wanted: rowToSuite). */
  private slotsLeft(suiteId: number, deletedSlots: readonly { runId: number; trialIndex: number }[], opts: { deleted?: boolean }): { run: RunRecord; trialIndex: number; deleted: boolean }[] {
    const statuses = new Map(this.trialStatusesByRun(suiteId).map((t) => [`${t.runId}:${t.trialIndex}`, t.statuses]));
    const deleted = new Set(deletedSlots.map((d) => `${d.runId}:${d.trialIndex}`));
    return this.listRuns(suiteId).flatMap((run) =>
      slotsNotDone(run.trialsPlanned, (i) => statuses.get(`${run.id}:${i}`) ?? [])
        .map((trialIndex) => ({ run, trialIndex, deleted: deleted.has(`${run.id}:${trialIndex}`) }))
        .filter((slot) => opts.deleted === true || !slot.deleted),
    );
  }

  /** The planned slots whose complete trial the user deleted (and that have none since): not left to run. */
  deletedTrialSlots(suiteId: number): { runId: number; trialIndex: number }[] {
    if (!this.keepsDeletedSlots) return [];
    const rows = this.db
      .prepare(
        `SELECT d.run_id, d.trial_index FROM deleted_trial_slots d JOIN runs r ON r.id = d.run_id
          WHERE r.suite_id = ? AND NOT EXISTS (SELECT 1 FROM trials t WHERE t.run_id = d.run_id AND t.trial_index = d.trial_index AND t.status = 'complete')
          ORDER BY d.run_id, d.trial_index`,
      )
      .all(suiteId) as { run_id: number; trial_index: number }[];
    return rows.map((r) => ({ runId: r.run_id, trialIndex: r.trial_index }));
  }

  // -------------------------------------------------------------------------------------------
  // Imports an older kvbench left unfinished (see unfinishedImport; importResultsFiles stores in one transaction)

  /**
   * Removes an unfinished import (a finished one is left alone): its trials a batch at a time, each
   * batch its own short transaction, then its runs, then the suite with the system and drive it made.
   * kvbench's readers never see any of it meanwhile: the suite stays unfinished until its last step.
   */
  removeImport(suiteId: number): void {
    const trials = this.db.prepare(
      `DELETE FROM trials WHERE id IN (SELECT t.id FROM trials t JOIN suites su ON su.id = t.suite_id WHERE t.suite_id = ? AND ${unfinishedImport('su')} LIMIT ?)`,
    );
    // Its ids were shown by the kvbench that wrote it (and may be in its notes): recorded before they go, never given again.
    const batch = (): number => {
      recordIdsBeforeDelete(this.db, 'trials');
      return trials.run(suiteId, REMOVAL_BATCH_ROWS).changes;
    };
    while (this.atomically(batch) > 0);
    const runs = this.db.prepare(`DELETE FROM runs WHERE id IN (SELECT r.id FROM runs r JOIN suites su ON su.id = r.suite_id WHERE r.suite_id = ? AND ${unfinishedImport('su')} LIMIT ?)`);
    while (this.atomically(() => runs.run(suiteId, REMOVAL_BATCH_ROWS).changes) > 0);
    this.atomically(() => {
      recordIdsBeforeDelete(this.db, 'suites', 'trials');
      this.dropImportSuite(suiteId);
    });
  }

  /**
   * Removes what imports of a kvbench that wrote them in batches left unfinished: a suite whose
   * import process is gone (killed, crashed, power lost) or that gave up (marked 'interrupted'). One
   * a live process is still writing, or one on another host, stays; one of this process is no import
   * in progress (this build writes none unfinished) and goes. Returns the suites removed.
   */
  removeAbandonedImports(): number[] {
    const rows = this.db.prepare(`SELECT id, status, runner_pid, runner_host, runner_start_ticks FROM suites WHERE ${unfinishedImport()}`).all() as {
      id: number;
      status: SuiteStatus;
      runner_pid: number | null;
      runner_host: string | null;
      runner_start_ticks: string | null;
    }[];
    const me = currentProcess();
    const gone = rows.filter((r) => {
      if (r.status !== 'running') return true;
      const mine = r.runner_pid === me.pid && r.runner_host === me.host && r.runner_start_ticks === me.startTicks;
      return mine || processLiveness({ pid: r.runner_pid, host: r.runner_host, startTicks: r.runner_start_ticks }) === 'dead';
    });
    if (gone.length > 0) this.checkBeforeWriting();
    for (const r of gone) this.removeImport(r.id);
    return gone.map((r) => r.id);
  }

  /** Deletes an unfinished import's suite (its trials and runs with it), and the system and drive first seen with it that nothing else refers to now. */
  private dropImportSuite(suiteId: number): void {
    const suite = this.db.prepare(`DELETE FROM suites WHERE id = ? AND ${unfinishedImport()} RETURNING system_id, drive_id, created_at`).get(suiteId) as
      | { system_id: string; drive_id: string | null; created_at: string }
      | undefined;
    if (!suite) return;
    if (suite.drive_id !== null) {
      this.db
        .prepare(
          `DELETE FROM drives WHERE id = ? AND basis = 'imported' AND first_seen_at >= ?
             AND NOT EXISTS (SELECT 1 FROM suites WHERE drive_id = drives.id) AND NOT EXISTS (SELECT 1 FROM trials WHERE drive_id = drives.id)`,
        )
        .run(suite.drive_id, suite.created_at);
    }
    this.db
      .prepare(
        `DELETE FROM systems WHERE id = ? AND source = 'imported' AND first_seen_at >= ?
           AND NOT EXISTS (SELECT 1 FROM suites WHERE system_id = systems.id) AND NOT EXISTS (SELECT 1 FROM trials WHERE system_id = systems.id)`,
      )
      .run(suite.system_id, suite.created_at);
  }

  // -------------------------------------------------------------------------------------------
  // Recovery

  /**
   * Trials left `running` by a runner that is gone become `aborted` (their results never came), and
   * their suites `interrupted`; a suite it left without any trial (it stopped before the first could
   * be stored: a full disk) is deleted, as it holds no result. Runners that are alive, or on another
   * host, are left alone. An aborted trial's time is unknown (NULL, shown as "—"): nothing records
   * when its runner was last alive, and the time until this open (minutes, or the next morning) is
   * not how long the trial ran.
   */
  recoverInterrupted(): RecoveredTrial[] {
    try {
      this.removeAbandonedImports();
    } catch (err) {
      // Not now (the lock taken, the disk full): hidden from every reader meanwhile, removed at a later open.
      if (sqliteCode(err) === null) throw err;
    }
    const rows = this.db
      .prepare("SELECT id, suite_id, scenario_id, runner_pid, runner_host, runner_start_ticks, engine_pid, cache_dir FROM trials WHERE status = 'running'")
      .all() as {
      id: number;
      suite_id: number;
      scenario_id: string;
      runner_pid: number | null;
      runner_host: string | null;
      runner_start_ticks: string | null;
      engine_pid: number | null;
      cache_dir: string | null;
    }[];
    const dead = rows.filter((r) => processLiveness({ pid: r.runner_pid, host: r.runner_host, startTicks: r.runner_start_ticks }) === 'dead');
    const suites = this.db
      .prepare("SELECT id, runner_pid, runner_host, runner_start_ticks FROM suites WHERE status = 'running' AND source = 'suite'")
      .all() as { id: number; runner_pid: number | null; runner_host: string | null; runner_start_ticks: string | null }[];
    const deadSuites = suites.filter((s) => processLiveness({ pid: s.runner_pid, host: s.runner_host, startTicks: s.runner_start_ticks }) === 'dead');
    if (dead.length === 0 && deadSuites.length === 0) return [];
    this.checkBeforeWriting();
    const now = nowIso();
    const tx = this.db.transaction(() => {
      const mark = this.db.prepare(
        "UPDATE trials SET status = 'aborted', status_reason = ?, finished_at = ?, wall_ms = NULL WHERE id = ? AND status = 'running'",
      );
      for (const r of dead) {
        mark.run(`interrupted: the runner process ${r.runner_pid ?? '?'} on ${r.runner_host === null ? '?' : hostNameOf(r.runner_host)} ended while this trial was running (killed or crashed); found at the next start`, now, r.id);
      }
      // Its id was shown while it ran (and a resume takes it): recorded before it goes, never given again.
      if (deadSuites.length > 0) recordIdsBeforeDelete(this.db, 'suites');
      const dropEmpty = this.db.prepare("DELETE FROM suites WHERE id = ? AND status = 'running' AND NOT EXISTS (SELECT 1 FROM trials WHERE suite_id = ?)");
      const dropped = deadSuites.filter((s) => dropEmpty.run(s.id, s.id).changes > 0).length;
      const sm = this.db.prepare("UPDATE suites SET status = 'interrupted', updated_at = ?, finished_at = ? WHERE id = ? AND status = 'running'");
      for (const s of deadSuites) sm.run(now, now, s.id);
      for (const r of dead) if (!deadSuites.some((s) => s.id === r.suite_id)) sm.run(now, now, r.suite_id);
      // After the marks: a snapshot goes only once no running suite of its system needs it.
      if (dropped > 0) this.pruneHardwareSnapshots();
    });
    tx.immediate();
    const recovered = dead.map((r) => ({
      trialId: r.id,
      suiteId: r.suite_id,
      scenarioId: r.scenario_id,
      runnerPid: r.runner_pid,
      enginePid: r.engine_pid,
      cacheDir: r.cache_dir,
    }));
    this.recovered.push(...recovered);
    return recovered;
  }

  private rowToTrial(r: TrialRow, metrics: TrialMetrics): TrialRecord {
    return rowToTrial(r, metrics, this.parseStored<Record<string, unknown>>(r.options_json, `trial ${r.id}'s options`));
  }

  private rowToSuite(r: SuiteRow): SuiteRecord {
    const counts = EMPTY_COUNTS();
    const rows = this.db.prepare('SELECT status, COUNT(*) AS n FROM trials WHERE suite_id = ? GROUP BY status').all(r.id) as { status: TrialRowStatus; n: number }[];
    for (const c of rows) counts[c.status] = c.n;
    const deleted = this.deletedTrialSlots(r.id);
    return {
      id: r.id,
      systemId: r.system_id,
      driveId: r.drive_id,
      profile: r.profile,
      label: r.label,
      status: r.status,
      source: r.source,
      cacheDir: r.cache_dir,
      createdAt: r.created_at,
      finishedAt: r.finished_at,
      kvbenchVersion: r.kvbench_version,
      trialCounts: counts,
      // Two counts of one read of the deleted slots: they differ while a deleted slot runs again (its
      // attempt running, not yet complete), which is deleted still and not left to run.
      trialsLeft: this.slotsLeft(r.id, deleted, {}).length,
      trialsDeleted: deleted.length,
    };
  }
}

function configKeyOf(run: PlannedRun): string {
  return configKey(run.options);
}

function rowToSystem(r: Record<string, string>): SystemRecord {
  return {
    id: r.id,
    label: r.label,
    hostname: r.hostname,
    source: r.source as 'detected' | 'imported',
    firstSeenAt: r.first_seen_at,
    lastSeenAt: r.last_seen_at,
  };
}

function rowToDrive(r: Record<string, string | null>): DriveRecord {
  return { id: r.id!, systemId: r.system_id!, label: r.label!, basis: r.basis!, model: r.model, serial: r.serial };
}

function rowToTrial(r: TrialRow, metrics: TrialMetrics, options: Record<string, unknown>): TrialRecord {
  return {
    id: r.id,
    runId: r.run_id,
    suiteId: r.suite_id,
    suiteLabel: r.suite_label,
    systemId: r.system_id,
    systemLabel: r.system_label,
    driveId: r.drive_id,
    driveLabel: r.drive_label,
    driveSizeBytes: typeof r.drive_size_bytes === 'number' ? r.drive_size_bytes : null,
    scenarioId: r.scenario_id,
    trialIndex: r.trial_index,
    attempt: r.attempt,
    status: r.status,
    statusReason: r.status_reason,
    configKey: r.config_key,
    options,
    seed: r.seed,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    wallMs: r.wall_ms,
    resultsFormat: r.results_format,
    sourceFile: r.source_file,
    kvbenchVersion: r.kvbench_version,
    measuredByVersion: r.measured_by_version,
    storageRamBacking: r.storage_ram_backing,
    metrics,
  };
}
