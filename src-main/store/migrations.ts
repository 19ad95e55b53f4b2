// Numbered schema migrations. Each runs once, in order, inside the one transaction that also sets
// PRAGMA user_version; a migration is never edited after release — add the next number instead.
// The table kvbench_meta is no migration's: it records who changed the schema (schema-meta.ts).

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * A database without this migration can still be read as it is: it adds only what writing uses.
   * Read-only opens (read-only media, or beside a writer holding the lock) then need no upgrade.
   */
  readableWithout?: boolean;
  /**
   * The newest kvbench release without this migration: it, and every older one, refuses a database
   * that has it (a newer user_version), which the upgrade's notice says (schema-meta.ts upgradeNotice).
   */
  newestReleaseWithout?: string;
}

/** The oldest schema a read-only open reads as it is: below it, a migration a read path needs is missing. */
export function oldestReadableSchema(migrations: readonly Migration[]): number {
  let oldest = migrations.length > 0 ? migrations[migrations.length - 1].version : 0;
  for (let i = migrations.length - 1; i >= 0 && migrations[i].readableWithout; i--) oldest = migrations[i].version - 1;
  return oldest;
}

/** 'KVB1': marks a SQLite file as kvbench's (PRAGMA application_id), so a foreign file is never touched. */
export const APPLICATION_ID = 0x4b564231;

export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'systems, drives, hardware snapshots, suites, runs, trials, metrics, histograms',
    sql: `
CREATE TABLE systems (
  id             TEXT PRIMARY KEY,
  label          TEXT NOT NULL,
  hostname       TEXT NOT NULL,
  source         TEXT NOT NULL CHECK (source IN ('detected', 'imported')),
  first_seen_at  TEXT NOT NULL,
  last_seen_at   TEXT NOT NULL
);

CREATE TABLE drives (
  id         TEXT PRIMARY KEY,
  system_id  TEXT NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
  label      TEXT NOT NULL,
  basis      TEXT NOT NULL,
  model      TEXT,
  serial     TEXT,
  first_seen_at TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL
);
CREATE INDEX drives_system ON drives(system_id);

CREATE TABLE hardware_snapshots (
  id           INTEGER PRIMARY KEY,
  system_id    TEXT NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
  digest       TEXT NOT NULL UNIQUE,
  captured_at  TEXT NOT NULL,
  profile_json TEXT NOT NULL
);
CREATE INDEX hardware_snapshots_system ON hardware_snapshots(system_id, captured_at);

CREATE TABLE suites (
  id                  INTEGER PRIMARY KEY,
  system_id           TEXT NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
  drive_id            TEXT REFERENCES drives(id) ON DELETE SET NULL,
  profile             TEXT NOT NULL,
  label               TEXT,
  source              TEXT NOT NULL CHECK (source IN ('suite', 'import')),
  status              TEXT NOT NULL CHECK (status IN ('running', 'finished', 'cancelled', 'interrupted')),
  plan_json           TEXT,
  cache_dir           TEXT,
  kvbench_version     TEXT NOT NULL,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  finished_at         TEXT,
  runner_pid          INTEGER,
  runner_host         TEXT,
  runner_start_ticks  TEXT
);
CREATE INDEX suites_system_created ON suites(system_id, created_at);
CREATE INDEX suites_running ON suites(status) WHERE status = 'running';

CREATE TABLE runs (
  id             INTEGER PRIMARY KEY,
  suite_id       INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
  position       INTEGER NOT NULL,
  scenario_id    TEXT NOT NULL,
  label          TEXT NOT NULL,
  config_key     TEXT NOT NULL,
  options_json   TEXT NOT NULL,
  trials_planned INTEGER NOT NULL,
  UNIQUE (suite_id, position)
);
CREATE INDEX runs_scenario ON runs(scenario_id);

CREATE TABLE trials (
  id                   INTEGER PRIMARY KEY,
  run_id               INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  suite_id             INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
  system_id            TEXT NOT NULL REFERENCES systems(id) ON DELETE CASCADE,
  drive_id             TEXT REFERENCES drives(id) ON DELETE SET NULL,
  hardware_snapshot_id INTEGER REFERENCES hardware_snapshots(id) ON DELETE SET NULL,
  scenario_id          TEXT NOT NULL,
  trial_index          INTEGER NOT NULL,
  attempt              INTEGER NOT NULL DEFAULT 1,
  status               TEXT NOT NULL CHECK (status IN ('running', 'complete', 'partial', 'failed', 'aborted')),
  status_reason        TEXT,
  config_key           TEXT NOT NULL,
  options_json         TEXT NOT NULL,
  model                TEXT,
  seed                 INTEGER,
  started_at           TEXT NOT NULL,
  finished_at          TEXT,
  wall_ms              REAL,
  runner_pid           INTEGER,
  runner_host          TEXT,
  runner_start_ticks   TEXT,
  engine_pid           INTEGER,
  cache_dir            TEXT,
  results_format       TEXT CHECK (results_format IN ('kvbench', 'reference-new', 'reference-mid', 'reference-old')),
  results_gzip         BLOB,
  summary_text         TEXT,
  source_file          TEXT,
  kvbench_version      TEXT NOT NULL,
  UNIQUE (run_id, trial_index, attempt)
);
CREATE INDEX trials_system_started ON trials(system_id, started_at);
CREATE INDEX trials_scenario_status ON trials(scenario_id, status);
CREATE INDEX trials_suite ON trials(suite_id, run_id, trial_index);
CREATE INDEX trials_config_system ON trials(config_key, system_id, status);
CREATE INDEX trials_drive ON trials(drive_id, config_key);
CREATE INDEX trials_started ON trials(started_at);
CREATE INDEX trials_running ON trials(status) WHERE status = 'running';

CREATE TABLE trial_metrics (
  trial_id  INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  key       TEXT NOT NULL,
  value     REAL NOT NULL,
  PRIMARY KEY (trial_id, key)
) WITHOUT ROWID;
CREATE INDEX trial_metrics_key ON trial_metrics(key, value);

CREATE TABLE trial_histograms (
  trial_id  INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  name      TEXT NOT NULL,
  unit      TEXT NOT NULL,
  count     INTEGER NOT NULL,
  sum_ns    REAL NOT NULL,
  hdr       TEXT NOT NULL,
  PRIMARY KEY (trial_id, name)
) WITHOUT ROWID;
`,
  },
  {
    version: 2,
    newestReleaseWithout: '0.1.0',
    name: 'endpoint runs: real-engine benchmark runs, their metrics and per-request samples',
    sql: `
CREATE TABLE endpoint_runs (
  id                   INTEGER PRIMARY KEY,
  system_label         TEXT NOT NULL,
  status               TEXT NOT NULL CHECK (status IN ('complete', 'partial', 'failed')),
  status_reason        TEXT,
  base_url             TEXT NOT NULL,
  model                TEXT NOT NULL,
  api                  TEXT NOT NULL,
  workload_file        TEXT,
  workload_digest      TEXT NOT NULL,
  notes                TEXT,
  config_json          TEXT NOT NULL,
  started_at           TEXT NOT NULL,
  finished_at          TEXT NOT NULL,
  wall_ms              REAL NOT NULL,
  requests_total       INTEGER NOT NULL,
  requests_ok          INTEGER NOT NULL,
  aggregates_json      TEXT NOT NULL,
  server_metrics_json  TEXT NOT NULL,
  client_host          TEXT NOT NULL,
  kvbench_version      TEXT NOT NULL
);
CREATE INDEX endpoint_runs_label_started ON endpoint_runs(system_label, started_at);

CREATE TABLE endpoint_run_metrics (
  run_id  INTEGER NOT NULL REFERENCES endpoint_runs(id) ON DELETE CASCADE,
  key     TEXT NOT NULL,
  value   REAL NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE INDEX endpoint_run_metrics_key ON endpoint_run_metrics(key, value);

CREATE TABLE endpoint_requests (
  run_id               INTEGER NOT NULL REFERENCES endpoint_runs(id) ON DELETE CASCADE,
  seq                  INTEGER NOT NULL,
  request_id           TEXT NOT NULL,
  batch_index          INTEGER NOT NULL,
  prompt_id            TEXT NOT NULL,
  reused               INTEGER NOT NULL CHECK (reused IN (0, 1)),
  context_tokens       INTEGER NOT NULL,
  prompt_chars         INTEGER NOT NULL,
  max_tokens           INTEGER NOT NULL,
  status               TEXT NOT NULL,
  http_status          INTEGER,
  error                TEXT,
  sent_offset_ms       REAL,
  ttft_ms              REAL,
  e2e_ms               REAL,
  tpot_ms              REAL,
  output_tokens        INTEGER,
  output_chunks        INTEGER NOT NULL,
  token_count_source   TEXT,
  prompt_tokens        INTEGER,
  cached_prompt_tokens INTEGER,
  finish_reason        TEXT,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
`,
  },
  {
    version: 3,
    newestReleaseWithout: '0.2.0',
    name: 'trials: a digest of the results content, so the same results are never stored twice',
    // Filled for new trials; those stored before get theirs the first time an import looks
    // (Store.backfillResultsDigests), since SQL cannot read the gzipped results.
    // Only imports and new trials use the digest: history, report and export read a schema-2 file as it is.
    readableWithout: true,
    sql: `
ALTER TABLE trials ADD COLUMN results_digest TEXT;
CREATE INDEX trials_results_digest ON trials(results_digest);
`,
  },
  {
    version: 4,
    newestReleaseWithout: '0.6.0',
    name: 'trials: the kvbench version that measured the trial, beside the one that stored it',
    // kvbench_version is the kvbench that stored the row: for an import, the importer. Version-gated
    // rules (a stall judged by 0.1.0's draining window, a metric whose definition changed) need the
    // one that measured: a file's kvbench.version, null for the reference's files. A trial run here
    // was measured by the version that stored it; one imported before this migration gets its own
    // after it, at the next read-write open (Store.backfillMeasuringVersions), since SQL cannot read
    // its gzipped results. A read-only open of an older file works them out the same way without
    // writing them (Store's measuringVersionsAsIs).
    readableWithout: true,
    sql: `
ALTER TABLE trials ADD COLUMN measured_by_version TEXT;
UPDATE trials SET measured_by_version = kvbench_version WHERE source_file IS NULL;
`,
  },
  {
    version: 5,
    newestReleaseWithout: '0.6.0',
    name: 'trials: what held a RAM-backed cache directory in memory, beside the storage_ram_backed flag',
    // The results' kvbench.tiers.storage.ram_backing_chain ('loop0 → /dev/shm/d.img on tmpfs'), or
    // an older file's ram_filesystem, for trials whose storage_ram_backed metric is 1; null otherwise.
    // Trials stored before stay null: their caution says the backing was not recorded, rather than
    // one guessed. A read-only open of an older file reads every backing as unrecorded (Store's trialSelect).
    readableWithout: true,
    sql: `
ALTER TABLE trials ADD COLUMN storage_ram_backing TEXT;
`,
  },
  {
    version: 6,
    newestReleaseWithout: '0.6.0',
    name: 'suites: imports stored without a label lose the one kvbench made up for them',
    // Up to kvbench 0.6.0 (0.6.0 included), an import without --label was labelled "import of N file(s)".
    // Labels are now what the user named a series by (History's filter, compare by label), and those
    // made-up ones would pool unrelated imports that merely had as many files. Imports store no
    // made-up label from 0.7.0 on; this clears the old ones. Like every upgrade it runs only when a
    // command that writes opens the file (a read opens an older file read-only and shows them as they
    // are), after the copy of the file as it was is taken and kept.
    readableWithout: true,
    sql: `
UPDATE suites SET label = NULL
 WHERE source = 'import' AND label GLOB 'import of [1-9]* file(s)'
   AND substr(label, 11, length(label) - 18) NOT GLOB '*[^0-9]*';
`,
  },
  {
    version: 7,
    // 0.7.0 as it landed has this migration (added after the version was bumped): 0.6.0 is the newest without.
    newestReleaseWithout: '0.6.0',
    name: 'deleted_trial_slots: the planned trial slots whose complete trial the user deleted',
    // A complete trial deleted on purpose leaves its slot without a complete attempt, which a resume
    // (and the Suites tab's "not complete") took for a trial that never ran, and ran again. The slot
    // is recorded here when its last complete attempt is deleted; resume and the counts leave it alone.
    // A read-only open of an older file reads no slot as deleted (Store's keepsDeletedSlots).
    readableWithout: true,
    sql: `
CREATE TABLE IF NOT EXISTS deleted_trial_slots (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trial_index INTEGER NOT NULL,
  deleted_at TEXT NOT NULL,
  PRIMARY KEY (run_id, trial_index)
) WITHOUT ROWID;
`,
  },
]);

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;
