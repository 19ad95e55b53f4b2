// An older kvbench's database (here schema 3, as 0.3.0–0.6.0 left it, rolled back from a real file) is
// read as it is by the commands that only read, and upgraded only by one that writes, which keeps the
// file as it was beside it and says so. A newer kvbench's database is read read-only where it records
// that this build's schema still reads it. A file nobody may write, and one this user may not read,
// are refused in words that say what to do.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { suiteCommand } from '../../../src-main/cli/suite-command.ts';
import { createBackend } from '../../../src-main/server/backend.ts';
import { LATEST_SCHEMA_VERSION, oldestReadableSchema, MIGRATIONS } from '../../../src-main/store/migrations.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { runInProcess } from '../cli/in-process.ts';
import { giveTo, runModuleAs, sourceUrl, unprivilegedOrSkip } from '../../support/unprivileged.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from './fixtures.ts';
import { seedStore } from './seed-store.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  removeTempDirs();
});

const MADE_UP = 'import of 1 file(s)';

/** A database as kvbench 0.3.0–0.6.0 left it (schema 3): one suite trial, and an import carrying the label kvbench made up then. */
function schema3Database(dir: string): string {
  const db = path.join(dir, 'kvbench.db');
  const store = seedStore(db);
  const systemId = store.upsertImportedSystem('lab').id;
  store.createSuite({ systemId, driveId: null, profile: 'import', label: MADE_UP, source: 'import', plan: null, cacheDir: null, runner: null, status: 'finished' });
  store.close();
  const raw = openDatabase(db);
  for (const { name } of raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'trials' AND sql LIKE '%measured_by_version%'").all() as { name: string }[]) {
    raw.exec(`DROP INDEX ${name}`);
  }
  raw.exec('DROP TABLE deleted_trial_slots; ALTER TABLE trials DROP COLUMN storage_ram_backing; ALTER TABLE trials DROP COLUMN measured_by_version; PRAGMA user_version = 3;');
  raw.close(); // the last connection: checkpointed, no -wal left
  return db;
}

/** The schema in SQLite's header (user_version, byte 60, big-endian), read without opening the file with SQLite. */
const schemaOf = (file: string): number => fs.readFileSync(file).readUInt32BE(60);

const cli = (command: (argv: string[]) => Promise<number>, ...argv: string[]) => runInProcess(() => command(argv));

describe('an older kvbench database', () => {
  it('history, report and export read it as it is: no upgrade, not a byte changed, no file left, and they say so', async () => {
    const dir = tempDir();
    const db = schema3Database(dir);
    const before = fs.readFileSync(db);
    const out = path.join(tempDir(), 'trials.csv');
    for (const [command, argv] of [
      [historyCommand, ['--db', db]],
      [reportCommand, ['--db', db]],
      [exportCommand, ['--db', db, '--out', out]],
    ] as const) {
      const r = await cli(command, ...argv);
      expect(r.code).toBe(0);
      expect(schemaOf(db)).toBe(3);
      expect(fs.readFileSync(db).equals(before)).toBe(true);
      expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);
      expect(r.stderr).toContain(`${db} has schema 3, an older kvbench's (this build's is ${LATEST_SCHEMA_VERSION}): read as it is, not upgraded.`);
    }
    expect(fs.readFileSync(out, 'utf8').split('\n').filter((l) => l.trim() !== '')).toHaveLength(2); // header and the one trial
    // Migration 6's clearing of the made-up label is an upgrade's too: a read leaves the label as it is.
    const ro = openStore(db, { readonly: true });
    expect(ro.db.prepare('SELECT label FROM suites WHERE source = ?').get('import')).toEqual({ label: MADE_UP });
    ro.close();
  });

  it('suite --resume ID --plan reads it as it is: no upgrade, not a byte changed, no copy left, and says so (rev14 #1)', async () => {
    const dir = tempDir();
    const db = schema3Database(dir);
    const before = fs.readFileSync(db);
    const r = await cli(suiteCommand, '--resume', '1', '--plan', '--db', db);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Suite 1 (profile smoke');
    expect(r.stderr).toContain(`${db} has schema 3, an older kvbench's (this build's is ${LATEST_SCHEMA_VERSION}): read as it is, not upgraded.`);
    expect(r.stderr).not.toContain('note: upgraded');
    expect(schemaOf(db)).toBe(3);
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);
  });

  it('suite --resume ID --plan on this build\'s schema writes nothing: a dead runner\'s trial is left for the resume to recover (rev14 #1)', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const store = seedStore(db);
    const run = store.listRuns(1)[0];
    const deadPid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    const runner = { pid: deadPid, host: currentProcess().host, startTicks: null };
    const running = store.startTrial({ runId: run.id, suiteId: 1, systemId: store.getSuite(1)!.systemId, driveId: null, hardwareSnapshotId: null, scenarioId: run.scenarioId, trialIndex: 1, options: run.options, configKey: run.configKey, runner, cacheDir: '/mnt/kv' });
    store.close();
    const before = fs.readFileSync(db);
    const r = await cli(suiteCommand, '--resume', '1', '--plan', '--db', db);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('marked aborted');
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);
    const ro = openStore(db, { readonly: true });
    expect(ro.getTrial(running)!.status).toBe('running');
    ro.close();
  });

  it('an import upgrades it, keeps the file as it was beside it, records who upgraded it, and says so', async () => {
    const dir = tempDir();
    const db = schema3Database(dir);
    const before = fs.readFileSync(db);
    const file = writeResults(tempDir(), 'run.json', kvbenchResults({ tokPerS: 500 }));
    const r = await cli(importCommand, file, '--system', 'lab2', '--db', db);
    expect(r.code).toBe(0);
    const kept = fs.readdirSync(dir).filter((n) => n !== 'kvbench.db');
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(/^kvbench\.db\.schema-3-before-upgrade-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    const copy = path.join(dir, kept[0]);
    expect(r.stderr).toContain(
      `kvbench import: upgraded ${db} from schema 3 to ${LATEST_SCHEMA_VERSION} (kvbench ${KVBENCH_VERSION}): kvbench 0.6.0 and older can no longer open it; ` +
        `the file as it was (schema 3) is kept at ${copy}.`,
    );
    // The copy is the file as it was: schema 3, its trial, its label.
    expect(schemaOf(copy)).toBe(3);
    const old = openStore(copy, { readonly: true });
    expect(old.listTrials({})).toHaveLength(1);
    expect(old.db.prepare('SELECT label FROM suites WHERE source = ?').get('import')).toEqual({ label: MADE_UP });
    old.close();
    expect(fs.readFileSync(copy).length).toBeLessThanOrEqual(before.length);

    expect(schemaOf(db)).toBe(LATEST_SCHEMA_VERSION);
    const s = openStore(db, { readonly: true });
    expect(s.listTrials({})).toHaveLength(2);
    expect(Object.fromEntries((s.db.prepare('SELECT key, value FROM kvbench_meta').all() as { key: string; value: string }[]).map((m) => [m.key, m.value]))).toMatchObject({
      schema_written_by: KVBENCH_VERSION,
      readable_by_schema: String(oldestReadableSchema(MIGRATIONS)),
      upgraded_from_schema: '3',
      previous_file: copy,
    });
    expect(s.db.prepare("SELECT COUNT(*) AS n FROM suites WHERE label = 'import of 1 file(s)'").get()).toEqual({ n: 0 });
    s.close();
  });

  it('the app (and kvbench serve), which writes, upgrades it when it opens it and says so: in its log and in app.info for the page to show', async () => {
    const dir = tempDir();
    const db = schema3Database(dir);
    const logged: string[] = [];
    const backend = await createBackend({
      mode: 'browser',
      settingsFile: path.join(tempDir(), 'settings.json'),
      defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
      log: (level, message) => logged.push(`${level}: ${message}`),
    });
    try {
      const kept = fs.readdirSync(dir).filter((n) => n.includes('.schema-3-before-upgrade-'));
      expect(kept).toHaveLength(1);
      const note = `upgraded ${db} from schema 3 to ${LATEST_SCHEMA_VERSION} (kvbench ${KVBENCH_VERSION}): kvbench 0.6.0 and older can no longer open it; the file as it was (schema 3) is kept at ${path.join(dir, kept[0])}.`;
      expect(logged).toContain(`warn: ${note}`);
      const info = await backend.invoke('app.info', {});
      expect(info).toMatchObject({ ok: true, value: { databaseError: null, databaseNotes: [note] } });
    } finally {
      await backend.close();
    }
  });

  it('a file without write permission is never written, even by root: reads work, an import is refused saying how to allow it, no file left', async () => {
    const dir = tempDir();
    const db = schema3Database(dir);
    fs.chmodSync(db, 0o444);
    cleanups.push(() => fs.chmodSync(db, 0o644));
    const before = fs.readFileSync(db);
    const file = writeResults(tempDir(), 'run.json', kvbenchResults({ tokPerS: 500 }));
    const r = await cli(importCommand, file, '--system', 'lab2', '--db', db);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `kvbench import: ${db} has no write permission (mode 0444): kvbench treats it as read-only, even for root, and does not write to or upgrade a file its owner protected. ` +
        'kvbench history, report and export still read it; to write to it, make it writable first (chmod u+w), or choose another database with --db.\n',
    );
    expect((await cli(historyCommand, '--db', db)).code).toBe(0);
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);
  });

  it('one of this build\'s schema, protected from writing: history reads it without writing (as root too)', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    seedStore(db).close();
    fs.chmodSync(db, 0o444);
    cleanups.push(() => fs.chmodSync(db, 0o644));
    const before = fs.readFileSync(db);
    const r = await cli(historyCommand, '--db', db);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);
  });
});

describe('a newer kvbench database', () => {
  /** This build's database made to look as kvbench `by` would leave it at `schema`, recording `readableBy` (null: no record). */
  function newerDatabase(schema: number, by: string, readableBy: number | null): string {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    seedStore(db).close();
    const raw = openDatabase(db);
    raw.exec(`PRAGMA user_version = ${schema}; DELETE FROM kvbench_meta;`);
    if (readableBy !== null) {
      const set = raw.prepare('INSERT INTO kvbench_meta (key, value) VALUES (?, ?)');
      set.run('schema_written_by', by);
      set.run('readable_by_schema', String(readableBy));
    }
    raw.close();
    return db;
  }

  it('marked readable by this build\'s schema: read read-only with a note; a write is refused naming the kvbench it needs', async () => {
    const newer = LATEST_SCHEMA_VERSION + 2;
    const db = newerDatabase(newer, '9.1.0', LATEST_SCHEMA_VERSION);
    const before = fs.readFileSync(db);
    const h = await cli(historyCommand, '--db', db);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/storage-only/);
    expect(h.stderr).toBe(
      `kvbench history: ${db} was written by kvbench 9.1.0 (schema ${newer}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${LATEST_SCHEMA_VERSION} and older, and reads it read-only, as it is.\n`,
    );
    const file = writeResults(tempDir(), 'run.json', kvbenchResults({ tokPerS: 500 }));
    const i = await cli(importCommand, file, '--system', 'lab2', '--db', db);
    expect(i.code).toBe(1);
    expect(i.stderr).toBe(
      `kvbench import: ${db} was written by kvbench 9.1.0 (schema ${newer}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${LATEST_SCHEMA_VERSION} and older: ` +
        'it reads the file read-only (kvbench history, report and export), but writing to it needs kvbench 9.1.0 or newer. Upgrade kvbench, or choose another database with --db.\n',
    );
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.readdirSync(path.dirname(db))).toEqual(['kvbench.db']);
  });

  it('not readable by this build (or recording nothing): DB_TOO_NEW names the versions, and nothing is written', async () => {
    const newer = LATEST_SCHEMA_VERSION + 2;
    const db = newerDatabase(newer, '9.1.0', LATEST_SCHEMA_VERSION + 1);
    const h = await cli(historyCommand, '--db', db);
    expect(h.code).toBe(1);
    expect(h.stderr).toBe(
      `kvbench history: ${db} was written by kvbench 9.1.0 (schema ${newer}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${LATEST_SCHEMA_VERSION} and older, ` +
        `and the file can be read only by a kvbench that knows schema ${LATEST_SCHEMA_VERSION + 1}. Upgrade kvbench to 9.1.0 or newer, or choose another database with --db.\n`,
    );
    const unrecorded = newerDatabase(newer, '', null);
    const u = await cli(reportCommand, '--db', unrecorded);
    expect(u.code).toBe(1);
    expect(u.stderr).toBe(
      `kvbench report: ${unrecorded} was written by a newer kvbench (schema ${newer}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${LATEST_SCHEMA_VERSION} and older. ` +
        'Upgrade kvbench, or choose another database with --db.\n',
    );
  });
});

describe('a database this user may not read', () => {
  it('is refused with DB_READ_ONLY and advice, not a raw EACCES (as nobody when the tests run as root)', (ctx) => {
    const user = unprivilegedOrSkip(ctx);
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    seedStore(db).close();
    giveTo(user, dir);
    fs.chmodSync(db, 0o000); // root's when the check runs as nobody; its owner's own otherwise, who may not read it either
    cleanups.push(() => fs.chmodSync(db, 0o600));
    const e = runModuleAs(
      user,
      `import { openStore } from '${sourceUrl('src-main/store/open-store.ts')}';
      try { openStore(process.argv[1], { keepSchema: true }).close(); console.log(JSON.stringify({ opened: true })); }
      catch (err) { console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message })); }`,
      [db],
    );
    expect(e).toEqual({
      name: 'StoreError',
      code: 'DB_READ_ONLY',
      message:
        `${db} cannot be read by this user (it belongs to user id ${fs.statSync(db).uid}, mode 0000): EACCES, permission denied. ` +
        'Ask its owner to let you read it (for example, a group you share and chmod g+r) or to copy it for you, then open the copy with --db.',
    });
  });
});
