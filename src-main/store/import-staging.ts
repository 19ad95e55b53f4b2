// Where `kvbench import` puts its trials before they are stored: a private in-memory database
// attached to the importing connection. Nothing of it is in the database file, so no reader of the
// file sees a part of an import, whatever its version or its queries (a kvbench that predates the
// hiding of unfinished imports, the sqlite3 shell): the import's system, drive, suite, runs, trials,
// metrics and histograms enter the file in one transaction (commit), and until then the write lock is
// never taken. A failed import, or one whose process dies, leaves nothing in the file to clean up:
// the staging database goes with its connection.
import type { ResultsFormat, TrialHistogram, TrialMetrics } from '../../src-shared/domain/store-types.ts';
import type { TrialStatus } from '../../src-shared/domain/results.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { extractRamBacking } from './results-ingest.ts';
import { keepDerivedFactsFilled, QUEUE_FACTS, QUEUE_FACTS_WAITING, takeIds } from './schema-meta.ts';
import { optionColumns, unfinishedImport, type PackedResults, type Store } from './store.ts';

/** One trial of an import, as staged: what an imported file gives its trial row, its run by position. */
export interface StagedTrial {
  /** The position of its run (addRun) in the import's suite. */
  runPosition: number;
  scenarioId: string;
  trialIndex: number;
  options: Record<string, unknown>;
  configKey: string;
  /** Also its finish: an imported file says when it ran, not for how long. */
  startedAt: string;
  status: TrialStatus;
  reason: string | null;
  results: Record<string, unknown>;
  resultsFormat: ResultsFormat;
  packed: PackedResults;
  metrics: TrialMetrics;
  histograms: TrialHistogram[];
  sourceFile: string;
  measuredByVersion: string | null;
}

/** A stored trial holding the same results: where a skipped file's results are. */
export interface HeldBy {
  trialId: number;
  suiteId: number;
  systemLabel: string;
}

/** What commit stored. */
export interface CommittedImport {
  /** The suite made, with its system and drive; null when no staged trial was left to store (nothing was written). */
  suite: { suiteId: number; systemId: string; driveId: string | null } | null;
  /** Each stored trial's id, by the number addTrial gave it. */
  trialIds: Map<number, number>;
  /** Staged trials not stored: their results were stored already by the time of the commit (an import of the same files that committed first). */
  duplicates: { staged: number; heldBy: HeldBy }[];
}

/** Numbers the staging databases of this process: two imports on one connection at once each have their own. */
let stagingCount = 0;

export class ImportStaging {
  readonly #store: Store;
  /** The schema name the staging database is attached under. */
  readonly #schema: string;
  #trials = 0;
  #discarded = false;

  /** Attaches an empty staging database to the store's connection (outside any transaction). */
  constructor(store: Store) {
    this.#store = store;
    this.#schema = `kvbench_import_${++stagingCount}`;
    const s = this.#schema;
    store.db.prepare('ATTACH DATABASE ? AS ' + s).run(':memory:');
    try {
      store.db.exec(`
CREATE TABLE ${s}.runs (
  position     INTEGER PRIMARY KEY,
  scenario_id  TEXT NOT NULL,
  label        TEXT NOT NULL,
  config_key   TEXT NOT NULL,
  options_json TEXT NOT NULL
);
CREATE TABLE ${s}.trials (
  staged              INTEGER PRIMARY KEY,
  run_position        INTEGER NOT NULL,
  scenario_id         TEXT NOT NULL,
  trial_index         INTEGER NOT NULL,
  status              TEXT NOT NULL,
  status_reason       TEXT,
  config_key          TEXT NOT NULL,
  options_json        TEXT NOT NULL,
  model               TEXT,
  seed                INTEGER,
  started_at          TEXT NOT NULL,
  results_format      TEXT NOT NULL,
  results_gzip        BLOB NOT NULL,
  results_digest      TEXT NOT NULL,
  source_file         TEXT,
  measured_by_version TEXT,
  storage_ram_backing TEXT
);
CREATE TABLE ${s}.metrics (staged INTEGER NOT NULL, key TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY (staged, key)) WITHOUT ROWID;
CREATE TABLE ${s}.histograms (
  staged INTEGER NOT NULL, name TEXT NOT NULL, unit TEXT NOT NULL, count INTEGER NOT NULL, sum_ns REAL NOT NULL, hdr TEXT NOT NULL,
  PRIMARY KEY (staged, name)
) WITHOUT ROWID;
`);
    } catch (err) {
      this.discard();
      throw err;
    }
  }

  /**
   * Runs `fn` (its addRun and addTrial calls, and reads of the database) as one transaction that
   * writes the staging database alone: the database file's write lock is not taken.
   */
  batch<T>(fn: () => T): T {
    return this.#store.db.transaction(fn)();
  }

  /** A run of the import's suite, at a position no other run of it has. */
  addRun(position: number, run: { scenarioId: string; label: string; configKey: string; options: Record<string, unknown> }): void {
    this.#store.db
      .prepare(`INSERT INTO ${this.#schema}.runs (position, scenario_id, label, config_key, options_json) VALUES (?, ?, ?, ?, ?)`)
      .run(position, run.scenarioId, run.label, run.configKey, JSON.stringify(run.options));
  }

  /** Stages a trial; returns its number here (1, 2, …), by which commit says its id. */
  addTrial(t: StagedTrial): number {
    const db = this.#store.db;
    const staged = ++this.#trials;
    db.prepare(
      `INSERT INTO ${this.#schema}.trials (staged, run_position, scenario_id, trial_index, status, status_reason, config_key, options_json, model, seed, started_at,
         results_format, results_gzip, results_digest, source_file, measured_by_version, storage_ram_backing)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      staged,
      t.runPosition,
      t.scenarioId,
      t.trialIndex,
      t.status,
      t.reason,
      t.configKey,
      ...optionColumns(t.options),
      t.startedAt,
      t.resultsFormat,
      t.packed.gzip,
      t.packed.digest,
      t.sourceFile,
      t.measuredByVersion,
      extractRamBacking(t.results),
    );
    // As Store.writeMetrics keeps them: finite values only, one per key and name.
    const metric = db.prepare(`INSERT OR REPLACE INTO ${this.#schema}.metrics (staged, key, value) VALUES (?, ?, ?)`);
    for (const [key, value] of Object.entries(t.metrics)) if (Number.isFinite(value)) metric.run(staged, key, value);
    const histogram = db.prepare(`INSERT OR REPLACE INTO ${this.#schema}.histograms (staged, name, unit, count, sum_ns, hdr) VALUES (?, ?, ?, ?, ?, ?)`);
    for (const h of t.histograms) histogram.run(staged, h.name, h.unit, h.count, h.sumNs, h.hdr);
    return staged;
  }

  /**
   * Stores what is staged, in one IMMEDIATE transaction: the moment every reader of the file sees the
   * import, whole. Staged trials whose results a finished suite holds by now (an import of the same
   * files that committed first) are left out, as duplicates; the system, drive, suite and runs are
   * made only for the trials left, so with none left nothing is written. Each statement copies all
   * the import's rows of one table, so the lock is held for a few indexed inserts per row.
   */
  commit(args: { systemLabel: string; driveLabel: string | null; label: string | null }): CommittedImport {
    const store = this.#store;
    const db = store.db;
    const s = this.#schema;
    return store.atomically(() => {
      const twins = db
        .prepare(
          `SELECT st.staged, st.results_digest AS digest FROM ${s}.trials st WHERE EXISTS (
             SELECT 1 FROM main.trials o JOIN main.suites su ON su.id = o.suite_id WHERE o.results_digest = st.results_digest AND NOT (${unfinishedImport('su')}))`,
        )
        .all() as { staged: number; digest: string }[];
      const duplicates = twins.map((t) => ({ staged: t.staged, heldBy: store.trialWithResultsDigest(t.digest)! }));
      for (const table of ['trials', 'metrics', 'histograms']) {
        const drop = db.prepare(`DELETE FROM ${s}.${table} WHERE staged = ?`);
        for (const t of twins) drop.run(t.staged);
      }
      const left = (db.prepare(`SELECT staged FROM ${s}.trials ORDER BY staged`).all() as { staged: number }[]).map((r) => r.staged);
      if (left.length === 0) return { suite: null, trialIds: new Map(), duplicates };
      // System, drive and suite share one timestamp, as they always have for an import.
      const now = new Date().toISOString();
      const system = store.upsertImportedSystem(args.systemLabel, now);
      const drive = args.driveLabel ? store.upsertImportedDrive(system.id, args.driveLabel, now) : null;
      const suiteId = store.createSuite({
        systemId: system.id,
        driveId: drive?.id ?? null,
        profile: 'import',
        label: args.label,
        source: 'import',
        plan: null,
        cacheDir: null,
        runner: null,
        status: 'finished',
        createdAt: now,
      });
      store.setSuiteStatus(suiteId, 'finished'); // its finished_at
      db.prepare(
        `INSERT INTO main.runs (suite_id, position, scenario_id, label, config_key, options_json, trials_planned)
         SELECT ?, r.position, r.scenario_id, r.label, r.config_key, r.options_json, 0 FROM ${s}.runs r
          WHERE EXISTS (SELECT 1 FROM ${s}.trials st WHERE st.run_position = r.position) ORDER BY r.position`,
      ).run(suiteId);
      // Ids above every trial's and every id the database has given (takeIds), chosen here so that
      // metrics and histograms follow their trial in one statement each. Staged numbers left out as
      // duplicates leave their ids unused, and given: no later trial takes them.
      const base = takeIds(db, 'trials', left[left.length - 1]) - 1;
      db.prepare(
        `INSERT INTO main.trials (id, run_id, suite_id, system_id, drive_id, hardware_snapshot_id, scenario_id, trial_index, attempt, status, status_reason, config_key,
           options_json, model, seed, started_at, finished_at, wall_ms, cache_dir, results_format, results_gzip, results_digest, summary_text, source_file, kvbench_version,
           measured_by_version, storage_ram_backing)
         SELECT ? + st.staged, r.id, ?, ?, ?, NULL, st.scenario_id, st.trial_index, 1, st.status, st.status_reason, st.config_key,
           st.options_json, st.model, st.seed, st.started_at, st.started_at, NULL, NULL, st.results_format, st.results_gzip, st.results_digest, NULL, st.source_file, ?,
           st.measured_by_version, st.storage_ram_backing
           FROM ${s}.trials st JOIN main.runs r ON r.suite_id = ? AND r.position = st.run_position
          ORDER BY st.staged`,
      ).run(base, suiteId, system.id, drive?.id ?? null, KVBENCH_VERSION, suiteId);
      db.prepare(`INSERT INTO main.trial_metrics (trial_id, key, value) SELECT ? + staged, key, value FROM ${s}.metrics ORDER BY staged, key`).run(base);
      db.prepare(`INSERT INTO main.trial_histograms (trial_id, name, unit, count, sum_ns, hdr) SELECT ? + staged, name, unit, count, sum_ns, hdr FROM ${s}.histograms ORDER BY staged, name`).run(
        base,
      );
      // Their queue facts came with them (extractMetrics), whatever kvbench measured them.
      keepDerivedFactsFilled(db, QUEUE_FACTS, QUEUE_FACTS_WAITING, base + left[0], base + left[left.length - 1]);
      return { suite: { suiteId, systemId: system.id, driveId: drive?.id ?? null }, trialIds: new Map(left.map((n) => [n, base + n])), duplicates };
    });
  }

  /** Detaches the staging database, freeing its memory; again, or with the connection closed, it does nothing. */
  discard(): void {
    if (this.#discarded) return;
    this.#discarded = true;
    if (!this.#store.db.open) return; // the staging database went with the connection
    try {
      this.#store.db.exec(`DETACH DATABASE ${this.#schema}`);
    } catch {
      // Not now (another statement of the connection still runs): it stays attached, holding memory
      // alone, until the connection closes. Never an error of the import, which has its answer.
    }
  }
}
