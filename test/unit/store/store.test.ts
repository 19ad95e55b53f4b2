import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { APPLICATION_ID, LATEST_SCHEMA_VERSION, MIGRATIONS, oldestReadableSchema } from '../../../src-main/store/migrations.ts';
import { currentPidSpace, currentProcess, hostIdentity } from '../../../src-main/util/process-identity.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { extractHistograms, extractMetrics } from '../../../src-main/store/results-ingest.ts';
import { closeOpenedStores, expectStoreError, open } from '../../support/store.ts';
import { mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from './fixtures.ts';

afterEach(() => {
  closeOpenedStores();
  unmountTmpfsMounts();
  removeTempDirs();
});

/** Everything under `dir`, with contents, to prove a file was not touched. */
function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).map((n) => [n, fs.readFileSync(path.join(dir, n)).toString('base64')]));
}

/** A store with one system, one suite from a plan, and its runs. */
function seeded(file: string) {
  const store = open(file);
  const hw = fakeHardware();
  store.upsertDetectedSystem(hw);
  const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 2, scenarios: ['storage-only', 'cpu-only'] });
  const suiteId = store.createSuite({ systemId: hw.system.id, driveId: hw.cacheDir!.driveId, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess() });
  const runs = store.listRuns(suiteId);
  const snapshotId = store.saveHardwareSnapshot(hw);
  return { store, hw, plan, suiteId, runs, snapshotId };
}

function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('opening', () => {
  it('creates a fresh database: WAL, foreign keys, application_id, schema version', () => {
    const dir = tempDir();
    const file = path.join(dir, 'sub', 'kvbench.db');
    const s = open(file);
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(s.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(s.db.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
    expect(s.db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(Number(s.db.pragma('busy_timeout', { simple: true }))).toBeGreaterThanOrEqual(5000);
    s.close();
    // Reopening migrates nothing and keeps the data.
    const again = open(file);
    expect(again.listSystems()).toEqual([]);
  });

  it('refuses a file that is not SQLite, and never writes to it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    fs.writeFileSync(file, 'these are my notes, not a database\n'.repeat(50));
    const before = snapshot(dir);
    expectStoreError(() => openStore(file), 'DB_CORRUPT', /is not a SQLite database.*will not touch it/);
    expect(snapshot(dir)).toEqual(before);
  });

  it("refuses another application's SQLite database, and never writes to it", () => {
    const dir = tempDir();
    const file = path.join(dir, 'other.db');
    const db = openDatabase(file);
    db.exec('CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES (\'ada\')');
    db.close();
    const before = snapshot(dir);
    expectStoreError(() => openStore(file), 'DB_FOREIGN', /another application.*tables: contacts.*will not modify it/);
    expect(snapshot(dir)).toEqual(before);

    const tagged = path.join(dir, 'tagged.db');
    const db2 = openDatabase(tagged);
    db2.pragma('application_id = 1234');
    db2.exec('CREATE TABLE t (x)');
    db2.close();
    expectStoreError(() => openStore(tagged), 'DB_FOREIGN', /application_id 0x000004d2/);
  });

  it('refuses a damaged kvbench database, and never writes to it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    const { store } = seeded(file);
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    store.close();
    const bytes = fs.readFileSync(file);
    expect(bytes.length).toBeGreaterThan(4096 * 4);
    // Scribble over the b-tree pages after the first (the header page stays valid).
    for (let i = 4096 + 100; i < bytes.length; i += 7) bytes[i] = (i * 31) & 0xff;
    fs.writeFileSync(file, bytes);
    for (const ext of ['-wal', '-shm']) fs.rmSync(file + ext, { force: true });
    const before = snapshot(dir);
    expectStoreError(() => openStore(file), 'DB_CORRUPT', /damaged|not a database/);
    expect(snapshot(dir)).toEqual(before);
  });

  it('refuses a database from a newer kvbench', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    open(file).close();
    const db = openDatabase(file);
    db.exec('PRAGMA user_version = 99; DROP TABLE kvbench_meta'); // as a kvbench that records nothing left it (schema-upgrade.test.ts has those that do)
    db.close();
    expectStoreError(() => openStore(file), 'DB_TOO_NEW', new RegExp(`was written by a newer kvbench \\(schema 99\\); this build, kvbench [\\d.]+, knows schema ${LATEST_SCHEMA_VERSION} and older`));
  });

  it('a failed migration changes nothing, keeps a backup, and stops', () => {
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    const { store } = seeded(file);
    const systemsBefore = store.listSystems();
    store.close();
    const v = LATEST_SCHEMA_VERSION;
    const broken = [...MIGRATIONS, { version: v + 1, name: 'broken', sql: 'CREATE TABLE extra (x); CREATE TABLE systems (again)' }];
    expectStoreError(
      () => openStore(file, { migrations: broken }),
      'DB_MIGRATION_FAILED',
      new RegExp(`from schema ${v} to ${v + 1}: migration ${v + 1} \\(broken\\) failed.*Nothing was changed; a copy made before the attempt is at `),
    );
    const backups = fs.readdirSync(dir).filter((n) => n.includes(`.schema-${v}-before-upgrade-`));
    expect(backups).toHaveLength(1);
    const after = open(file);
    expect(after.db.pragma('user_version', { simple: true })).toBe(v);
    expect(after.db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'extra'").get()).toEqual({ n: 0 });
    expect(after.listSystems()).toEqual(systemsBefore);
    // The backup is a complete database with the same data.
    const copy = open(path.join(dir, backups[0]));
    expect(copy.listSystems().map((s) => s.id)).toEqual(systemsBefore.map((s) => s.id));
  });

  it('a disk too full for the copy before an upgrade: DB_MIGRATION_FAILED saying how much room it needs, no partial copy, nothing changed', (ctx) => {
    // A small tmpfs, filled from outside, as a full drive would be. Needs root (mount).
    const dir = tempDir();
    mountTmpfsOrSkip(ctx, dir, '4m');
    const file = path.join(dir, 'kvbench.db');
    const { store } = seeded(file);
    store.db.exec('CREATE TABLE pad (x); INSERT INTO pad VALUES (randomblob(1500000))');
    store.close();
    const before = fs.readFileSync(file);
    const st = fs.statfsSync(dir);
    fs.writeFileSync(path.join(dir, 'filler'), Buffer.alloc(Number(st.bavail) * Number(st.bsize) - 512 * 1024));
    const v = LATEST_SCHEMA_VERSION;
    const next = [...MIGRATIONS, { version: v + 1, name: 'add', sql: 'CREATE TABLE notes (x)' }];
    expectStoreError(
      () => openStore(file, { migrations: next }),
      'DB_MIGRATION_FAILED',
      new RegExp(`from schema ${v} to ${v + 1}: the copy made before upgrading could not be written \\(SQLITE_FULL.*needs about 1\\.\\d MiB \\(\\d+ bytes\\) in ${dir}, 0\\.\\d MiB free.*Nothing was changed\\.$`),
    );
    expect(fs.readdirSync(dir).filter((n) => n.includes('backup'))).toEqual([]);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    fs.rmSync(path.join(dir, 'filler'));
    const s = open(file, { migrations: next });
    expect(s.db.pragma('user_version', { simple: true })).toBe(v + 1);
    closeOpenedStores();
  });

  it('a read-only open reads a schema without the migrations that only writing needs (3, the results digest), and refuses one without a migration reads need', () => {
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    const two = MIGRATIONS.filter((m) => m.version <= 2);
    openStore(file, { migrations: two }).close();
    const before = fs.readFileSync(file);
    const ro = openStore(file, { readonly: true });
    expect(ro.db.pragma('user_version', { simple: true })).toBe(2);
    expect(ro.listTrials({})).toEqual([]);
    ro.close();
    expect(fs.readFileSync(file).equals(before)).toBe(true); // nothing written, nothing migrated
    const readsNeedIt = [...MIGRATIONS, { version: LATEST_SCHEMA_VERSION + 1, name: 'a column reads use', sql: 'ALTER TABLE trials ADD COLUMN x TEXT' }];
    expectStoreError(() => openStore(file, { readonly: true, migrations: readsNeedIt }), 'DB_MIGRATION_FAILED', new RegExp(`has schema 2, which this kvbench reads only once it is upgraded to schema ${LATEST_SCHEMA_VERSION + 1}: a command that writes to it \\(a suite, an import\\) upgrades it`));
    expect(oldestReadableSchema(MIGRATIONS)).toBe(2);
    expect(oldestReadableSchema(readsNeedIt)).toBe(LATEST_SCHEMA_VERSION + 1);
    expect(oldestReadableSchema([])).toBe(0);
  });

  it('a successful upgrade keeps the file as it was beside it, and says where (Store.upgrade, openNotes)', () => {
    // The kvbench that wrote it can open only that copy now: deleting it locked that one out.
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    seeded(file).store.close();
    const v = LATEST_SCHEMA_VERSION;
    const s = open(file, { migrations: [...MIGRATIONS, { version: v + 1, name: 'add', sql: 'CREATE TABLE notes (x)' }] });
    expect(s.db.pragma('user_version', { simple: true })).toBe(v + 1);
    const kept = fs.readdirSync(dir).filter((n) => n.includes(`.schema-${v}-before-upgrade-`));
    expect(kept).toHaveLength(1);
    expect(s.upgrade).toEqual({ file, fromSchema: v, toSchema: v + 1, previousFile: path.join(dir, kept[0]) });
    expect(s.openNotes).toEqual([expect.stringContaining(`upgraded ${file} from schema ${v} to ${v + 1}`)]);
    expect(fs.readFileSync(path.join(dir, kept[0])).readUInt32BE(60)).toBe(v);
    // Opened again: nothing to upgrade, nothing more kept or said.
    const again = open(file, { migrations: [...MIGRATIONS, { version: v + 1, name: 'add', sql: 'CREATE TABLE notes (x)' }] });
    expect([again.upgrade, again.openNotes]).toEqual([null, []]);
    expect(fs.readdirSync(dir).filter((n) => n.includes('before-upgrade'))).toHaveLength(1);
  });
});

describe('repositories', () => {
  it('stores a suite, its runs and trials with metrics, histograms and the raw results', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const { store, hw, suiteId, runs, snapshotId } = seeded(file);
    expect(runs.map((r) => [r.position, r.scenarioId, r.trialsPlanned])).toEqual([
      [0, 'cpu-only', 2],
      [1, 'storage-only', 2],
    ]);
    const results = kvbenchResults({ tokPerS: 1234 }) as unknown as Record<string, unknown>;
    const id = store.startTrial({
      runId: runs[0].id, suiteId, systemId: hw.system.id, driveId: hw.cacheDir!.driveId, hardwareSnapshotId: snapshotId,
      scenarioId: 'cpu-only', trialIndex: 0, options: runs[0].options, configKey: runs[0].configKey, runner: currentProcess(), cacheDir: '/mnt/kv',
    });
    expect(store.getTrial(id)!.status).toBe('running');
    store.finishTrial(id, { status: 'complete', reason: null, wallMs: 5000, results, resultsFormat: 'kvbench', metrics: extractMetrics(results), histograms: extractHistograms(results) });
    const t = store.getTrial(id)!;
    expect(t).toMatchObject({ status: 'complete', scenarioId: 'cpu-only', trialIndex: 0, attempt: 1, systemLabel: 'lab1', driveLabel: 'virtual disk vda (256 GiB)', seed: 42 });
    expect(t.options).toEqual(runs[0].options);
    expect(t.metrics.wall_clock_throughput_tok_per_s).toBe(1234);
    expect(store.trialResults(id)).toEqual(results);
    expect(store.trialHistograms(id).map((h) => h.name)).toContain('end_to_end');
    expect(store.trialHardware(id)).toEqual(hw);
    expect(store.getSuite(suiteId)!.trialCounts).toMatchObject({ complete: 1, running: 0 });
    // A second attempt of the same trial gets attempt 2.
    const again = store.startTrial({ runId: runs[0].id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'cpu-only', trialIndex: 0, options: {}, configKey: 'k', runner: currentProcess(), cacheDir: null });
    expect(store.getTrial(again)!.attempt).toBe(2);
    // The history's filter lists come from SQL (DISTINCT), not from loading every trial.
    expect(store.trialFacets()).toEqual({ scenarioIds: ['cpu-only'], models: [String(runs[0].options.model)], suiteLabels: [], trialCount: 2 });
    // Filters.
    expect(store.listTrials({ statuses: ['complete'] }).map((x) => x.id)).toEqual([id]);
    expect(store.listTrials({ scenarioIds: ['storage-only'] })).toEqual([]);
    expect(store.listTrials({ systemIds: [hw.system.id], limit: 1 })).toHaveLength(1);
    expect(store.resolveSystem('lab1').id).toBe(hw.system.id);
    expect(store.resolveSystem(hw.system.id.slice(0, 8)).id).toBe(hw.system.id);
    // Foreign keys: a trial cannot point at a run that does not exist; deleting a suite removes its trials.
    expect(() => store.startTrial({ runId: 9999, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'x', trialIndex: 0, options: {}, configKey: 'k', runner: currentProcess(), cacheDir: null })).toThrow(/FOREIGN KEY/);
    store.deleteSuite(suiteId);
    expect(store.listTrials()).toEqual([]);
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM trial_metrics').get()).toEqual({ n: 0 });
  });

  it("gives a trial the byte count of the drive its label sizes, from its snapshot, so the app can restate it; the label stays as stored", () => {
    const store = open(path.join(tempDir(), 'kvbench.db'));
    const vda = { name: 'vda', disks: ['vda'], model: null, serial: null, wwid: null, rotational: null, logicalBlockBytes: 512, physicalBlockBytes: 512, sizeBytes: 256 * 1024 ** 3, media: 'virtual' as const, backingFile: null };
    const hw = fakeHardware();
    hw.cacheDir = { ...hw.cacheDir!, blockDevice: vda };
    store.upsertDetectedSystem(hw);
    const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1, scenarios: ['storage-only'] });
    const suiteId = store.createSuite({ systemId: hw.system.id, driveId: hw.cacheDir.driveId, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess() });
    const run = store.listRuns(suiteId)[0];
    const start = (hardwareSnapshotId: number | null): number =>
      store.startTrial({ runId: run.id, suiteId, systemId: hw.system.id, driveId: hw.cacheDir!.driveId, hardwareSnapshotId, scenarioId: run.scenarioId, trialIndex: 0, options: run.options, configKey: run.configKey, runner: currentProcess(), cacheDir: '/mnt/kv' });
    const withSnapshot = start(store.saveHardwareSnapshot(hw));
    const without = start(null);
    expect(store.getTrial(withSnapshot)).toMatchObject({ driveLabel: 'virtual disk vda (256 GiB)', driveSizeBytes: 256 * 1024 ** 3 });
    expect(store.getTrial(without)).toMatchObject({ driveLabel: 'virtual disk vda (256 GiB)', driveSizeBytes: null });
    expect(store.listTrials().map((t) => t.driveSizeBytes).sort()).toEqual([256 * 1024 ** 3, null]);
    expect(store.listDrives().map((d) => [d.label, d.sizeBytes])).toEqual([['virtual disk vda (256 GiB)', 256 * 1024 ** 3]]);
    // A damaged snapshot costs the size only, never the listing.
    store.db.prepare("UPDATE hardware_snapshots SET profile_json = 'not json'").run();
    expect(store.listTrials().map((t) => t.driveSizeBytes)).toEqual([null, null]);
    expect(store.listDrives().map((d) => d.sizeBytes)).toEqual([null]);
  });

  it("keeps a suite trial's RAM backing as its results say it, beside the flag; a trial on a disk, or without results, has none", () => {
    const { store, hw, suiteId, runs, snapshotId } = seeded(path.join(tempDir(), 'kvbench.db'));
    const start = (trialIndex: number): number =>
      store.startTrial({
        runId: runs[1].id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: snapshotId,
        scenarioId: 'storage-only', trialIndex, options: runs[1].options, configKey: runs[1].configKey, runner: currentProcess(), cacheDir: '/mnt/kv',
      });
    const finish = (id: number, results: Record<string, unknown> | null): void =>
      store.finishTrial(id, { status: results ? 'complete' : 'failed', reason: null, wallMs: 1, results, metrics: results ? extractMetrics(results) : {} });
    const onRam = kvbenchResults({ tokPerS: 5000 });
    onRam.kvbench.tiers.storage.ram_backed = true;
    onRam.kvbench.tiers.storage.ram_filesystem = 'loop0 on tmpfs';
    onRam.kvbench.tiers.storage.ram_backing_chain = 'loop0 → /dev/shm/d.img on tmpfs';
    const [ram, disk, failed] = [start(0), start(1), start(2)];
    finish(ram, onRam as unknown as Record<string, unknown>);
    finish(disk, kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown>);
    finish(failed, null);
    expect([ram, disk, failed].map((id) => [store.getTrial(id)!.metrics.storage_ram_backed, store.getTrial(id)!.storageRamBacking])).toEqual([
      [1, 'loop0 → /dev/shm/d.img on tmpfs'],
      [0, null],
      [undefined, null],
    ]);
  });

  it('deletes leave no hardware snapshot no trial refers to (hostnames, serials), in the same transaction; a running suite keeps its own', () => {
    const { store, hw, suiteId, runs, snapshotId } = seeded(path.join(tempDir(), 'kvbench.db'));
    const snapshots = (): number => (store.db.prepare('SELECT COUNT(*) AS n FROM hardware_snapshots').get() as { n: number }).n;
    const start = (i: number, snap: number | null = snapshotId): number =>
      store.startTrial({ runId: runs[0].id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: snap, scenarioId: runs[0].scenarioId, trialIndex: i, options: {}, configKey: 'k', runner: currentProcess(), cacheDir: null });
    const [a, b] = [start(0), start(1)];
    for (const id of [a, b]) store.finishTrial(id, { status: 'failed', reason: 'x', wallMs: 1 });
    // While its suite runs, a snapshot without trials stays: the runner's next trial refers to it.
    store.deleteTrials([a, b]);
    expect(snapshots()).toBe(1);
    store.setSuiteStatus(suiteId, 'finished');
    const c = start(2);
    store.finishTrial(c, { status: 'complete', reason: null, wallMs: 1 });
    // One id that does not exist: nothing is deleted.
    expect(() => store.deleteTrials([c, 9999])).toThrow(/no trial 9999/);
    expect(store.getTrial(c)).not.toBeNull();
    expect(snapshots()).toBe(1);
    const keep = start(4, null);
    store.finishTrial(keep, { status: 'complete', reason: null, wallMs: 1 });
    store.deleteTrials([c]);
    expect(snapshots()).toBe(0);
    // Deleting a suite takes the snapshots only its trials referred to, and keeps another suite's.
    const other = fakeHardware({ hostname: 'lab9' });
    const kept = store.saveHardwareSnapshot(other);
    const s2 = store.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan: null, cacheDir: null, runner: currentProcess() });
    const d = store.startTrial({ runId: store.ensureRun(s2, 'cpu-only', 'CPU only', 'k2', {}), suiteId: s2, systemId: hw.system.id, driveId: null, hardwareSnapshotId: kept, scenarioId: 'cpu-only', trialIndex: 0, options: {}, configKey: 'k2', runner: currentProcess(), cacheDir: null });
    store.finishTrial(d, { status: 'complete', reason: null, wallMs: 1 });
    store.setSuiteStatus(s2, 'finished');
    const e = start(3, store.saveHardwareSnapshot(fakeHardware({ hostname: 'lab8' })));
    store.finishTrial(e, { status: 'complete', reason: null, wallMs: 1 });
    expect(snapshots()).toBe(2);
    store.deleteSuite(suiteId);
    expect(store.db.prepare('SELECT id FROM hardware_snapshots').all()).toEqual([{ id: kept }]);
    store.deleteSuite(s2);
    expect(snapshots()).toBe(0);
  });

  it('deleting the last trials of a finished suite deletes the suite with its runs and plan, in the same transaction; a running suite stays', () => {
    // review #11: the empty suite stayed (plan_json with its cache dir), and kvbench report chose it as "the newest".
    const { store, hw, suiteId, runs } = seeded(path.join(tempDir(), 'kvbench.db'));
    const trialIn = (suite: number, runId: number, i: number): number => {
      const id = store.startTrial({ runId, suiteId: suite, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'cpu-only', trialIndex: i, options: {}, configKey: 'k', runner: currentProcess(), cacheDir: null });
      store.finishTrial(id, { status: 'complete', reason: null, wallMs: 1 });
      return id;
    };
    const [a, b] = [trialIn(suiteId, runs[0].id, 0), trialIn(suiteId, runs[1].id, 0)];
    const older = store.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: 'older', source: 'suite', plan: null, cacheDir: null, runner: null, status: 'finished' });
    const kept = trialIn(older, store.ensureRun(older, 'cpu-only', 'CPU only', 'k', {}), 0);
    store.setSuiteStatus(suiteId, 'finished');
    expect(store.deleteTrials([a])).toEqual([]);
    expect(store.getSuite(suiteId)).not.toBeNull();
    // Its last trial: the suite, its runs and its plan go with it; the other suite stays.
    expect(store.deleteTrials([b])).toEqual([suiteId]);
    expect(store.getSuite(suiteId)).toBeNull();
    expect(store.getSuitePlan(suiteId)).toBeNull();
    expect(store.listRuns(suiteId)).toEqual([]);
    expect(store.latestSuite()!.id).toBe(older);
    expect(store.getTrial(kept)).not.toBeNull();
    // A running suite keeps its plan and runs without trials: its runner starts the next one there.
    const running = store.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan: null, cacheDir: null, runner: currentProcess() });
    const only = trialIn(running, store.ensureRun(running, 'cpu-only', 'CPU only', 'k', {}), 0);
    expect(store.deleteTrials([only])).toEqual([]);
    expect(store.getSuite(running)).not.toBeNull();
    // A trial that does not exist: nothing at all is deleted, the suite neither.
    expect(() => store.deleteTrials([kept, 9999])).toThrow(/no trial 9999/);
    expect(store.getSuite(older)).not.toBeNull();
    // An interrupted (or cancelled) suite keeps its plan without trials: a resume runs it; the newest
    // suite with something to report is still the older one.
    const interrupted = store.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan: null, cacheDir: null, runner: null, status: 'interrupted' });
    const aborted = trialIn(interrupted, store.ensureRun(interrupted, 'cpu-only', 'CPU only', 'k', {}), 0);
    expect(store.deleteTrials([aborted])).toEqual([]);
    expect(store.getSuite(interrupted)).not.toBeNull();
    expect(store.latestSuite()!.id).toBe(older);
  });

  it('uses the indexes for the history queries', () => {
    const { store } = seeded(path.join(tempDir(), 'kvbench.db'));
    const plan = (sql: string): string => (store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('; ');
    expect(plan("SELECT * FROM trials WHERE system_id = 'x' ORDER BY started_at")).toMatch(/USING INDEX trials_system_started/);
    expect(plan("SELECT * FROM trials WHERE scenario_id = 'x' AND status = 'complete'")).toMatch(/USING INDEX trials_scenario_status/);
    expect(plan("SELECT * FROM trials WHERE config_key = 'k' AND system_id = 's'")).toMatch(/USING INDEX trials_config_system/);
    expect(plan("SELECT id FROM trials WHERE status = 'running'")).toMatch(/trials_running|trials_scenario_status/);
  });
});

describe('recovery of interrupted trials', () => {
  it('marks trials of a dead runner aborted and their suite interrupted; a live runner keeps its trial', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const { store, hw, suiteId, runs } = seeded(file);
    const dead = { pid: deadPid(), host: currentProcess().host, startTicks: null };
    const base = { suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, options: {}, configKey: 'k', cacheDir: '/mnt/kv' };
    const done = store.startTrial({ ...base, runId: runs[0].id, scenarioId: 'cpu-only', trialIndex: 0, runner: dead });
    store.finishTrial(done, { status: 'complete', reason: null, wallMs: 1, metrics: { wall_clock_throughput_tok_per_s: 5 } });
    const interrupted = store.startTrial({ ...base, runId: runs[0].id, scenarioId: 'cpu-only', trialIndex: 1, runner: dead });
    store.setTrialEnginePid(interrupted, 424242);
    // Another suite, still being run by this (live) process.
    const live = store.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan: null, cacheDir: null, runner: currentProcess() });
    const liveRun = store.ensureRun(live, 'cpu-only', 'CPU only', 'k', {});
    const running = store.startTrial({ ...base, suiteId: live, runId: liveRun, scenarioId: 'cpu-only', trialIndex: 0, runner: currentProcess() });
    store.db.prepare('UPDATE suites SET runner_pid = ? WHERE id = ?').run(dead.pid, suiteId);
    // It started 14 h before this open (the server restarted the next morning): it did not run 14 h.
    store.db.prepare('UPDATE trials SET started_at = ? WHERE id = ?').run(new Date(Date.now() - 14 * 3600e3).toISOString(), interrupted);
    store.close();

    const again = open(file);
    expect(again.recovered).toEqual([{ trialId: interrupted, suiteId, scenarioId: 'cpu-only', runnerPid: dead.pid, enginePid: 424242, cacheDir: '/mnt/kv' }]);
    // review (ui) 6 #8: its time was the time until this open. How long it ran is not known: none.
    expect(again.getTrial(interrupted)).toMatchObject({ status: 'aborted', wallMs: null, statusReason: expect.stringMatching(/runner process \d+ .* ended while this trial was running/) });
    expect(again.getTrial(done)!.status).toBe('complete');
    expect(again.getTrial(done)!.metrics.wall_clock_throughput_tok_per_s).toBe(5);
    expect(again.getSuite(suiteId)!.status).toBe('interrupted');
    expect(again.getTrial(running)!.status).toBe('running');
    expect(again.getSuite(live)!.status).toBe('running');
  });

  it("deletes a dead runner's suite that has no trial (it stopped before its first could be stored: a full disk), with the snapshot only it saved", () => {
    // review (fault) #5c: a suite whose first trial could not be stored stayed in the history as an empty interrupted suite.
    const file = path.join(tempDir(), 'kvbench.db');
    const { store, hw, plan, suiteId: live } = seeded(file);
    const dead = { pid: deadPid(), host: currentProcess().host, startTicks: null };
    const lab2 = fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab2' });
    store.upsertDetectedSystem(lab2);
    const empty = store.createSuite({ systemId: lab2.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: dead });
    store.saveHardwareSnapshot(lab2);
    // A dead runner's suite with a trial is interrupted, and kept for a resume.
    const started = store.createSuite({ systemId: lab2.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: dead });
    const run = store.listRuns(started)[0];
    store.startTrial({ runId: run.id, suiteId: started, systemId: lab2.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: run.scenarioId, trialIndex: 0, options: {}, configKey: run.configKey, runner: dead, cacheDir: null });
    const emptyToo = store.createSuite({ systemId: lab2.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: dead });
    store.close();

    const again = open(file);
    expect(again.getSuite(empty)).toBeNull();
    expect(again.getSuite(emptyToo)).toBeNull();
    expect(again.db.prepare('SELECT COUNT(*) AS n FROM runs WHERE suite_id IN (?, ?)').get(empty, emptyToo)).toEqual({ n: 0 });
    expect(again.db.prepare('SELECT COUNT(*) AS n FROM hardware_snapshots WHERE system_id = ?').get(lab2.system.id)).toEqual({ n: 0 });
    expect(again.getSuite(started)).toMatchObject({ status: 'interrupted', trialCounts: { aborted: 1 } });
    // A live runner's suite without a trial yet is its runner's business.
    expect(again.getSuite(live)!.status).toBe('running');
    expect(again.db.prepare('SELECT COUNT(*) AS n FROM hardware_snapshots WHERE system_id = ?').get(hw.system.id)).toEqual({ n: 1 });
  });

  it("never takes a runner of another PID namespace or boot on this hostname (containers sharing it, a shared database) for a dead one", () => {
    // review (day 2) after #4: the recovery at open compared hostnames only, so a live suite in a
    // container next door, whose pid is dead here, had its running trial marked aborted.
    const file = path.join(tempDir(), 'kvbench.db');
    const { store, hw, suiteId, runs } = seeded(file);
    const me = currentPidSpace();
    expect(me.bootId, 'this test needs /proc').not.toBeNull();
    const pid = deadPid();
    const base = { runId: runs[0].id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'cpu-only', options: {}, configKey: 'k', cacheDir: null };
    const elsewhere = [
      hostIdentity({ bootId: me.bootId, pidNamespace: 'pid:[1]' }),
      hostIdentity({ bootId: 'another-boot', pidNamespace: me.pidNamespace }),
    ].map((host, i) => store.startTrial({ ...base, trialIndex: i, runner: { pid, host, startTicks: null } }));
    const here = store.startTrial({ ...base, trialIndex: 2, runner: { pid, host: hostIdentity(), startTicks: null } });
    const legacy = store.startTrial({ ...base, trialIndex: 3, runner: { pid, host: os.hostname(), startTicks: null } });
    store.close();

    const again = open(file);
    for (const id of elsewhere) expect(again.getTrial(id)!.status, `trial ${id}: its runner may be alive elsewhere`).toBe('running');
    expect(again.getTrial(here)).toMatchObject({ status: 'aborted', statusReason: expect.stringContaining(`on ${os.hostname()} ended`) });
    expect(again.getTrial(legacy)!.status, 'a row of the hostname alone: judged as before').toBe('aborted');
  });

  it('a pid that was reused by another process does not count as the runner', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const { store, hw, suiteId, runs } = seeded(file);
    const me = currentProcess();
    const t = store.startTrial({ runId: runs[0].id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'cpu-only', trialIndex: 0, options: {}, configKey: 'k', cacheDir: null, runner: { ...me, startTicks: '1' } });
    store.close();
    expect(open(file).getTrial(t)!.status).toBe('aborted');
  });
});

describe('two processes on one database', () => {
  it('both write concurrently without losing anything (WAL + busy timeout)', async () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const { store, hw, suiteId, runs } = seeded(file);
    const writer = fileURLToPath(new URL('./concurrent-writer.ts', import.meta.url));
    const child = spawn(process.execPath, [writer, file, '150', String(suiteId), String(runs[1].id), hw.system.id], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const me = currentProcess();
    for (let i = 0; i < 150; i++) {
      const id = store.startTrial({ runId: runs[0].id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'cpu-only', trialIndex: i, options: {}, configKey: 'k', runner: me, cacheDir: null });
      store.finishTrial(id, { status: 'complete', reason: null, wallMs: 1, metrics: { wall_clock_throughput_tok_per_s: i } });
      if (i % 10 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(await exited, err).toBe(0);
    expect(out).toBe('done\n');
    expect(store.listTrials({ suiteIds: [suiteId] })).toHaveLength(300);
    expect(store.db.prepare('SELECT COUNT(*) AS n FROM trial_metrics').get()).toEqual({ n: 300 });
  });
});
