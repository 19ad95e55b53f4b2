// Trials imported before schema 4 kept the kvbench version that measured them (migration 4 could
// not read their gzipped results, so it left them null) get it from their stored results once the
// database is opened read-write: then the version-gated cautions (a stall, a metric whose
// definition changed) judge them as they judge trials imported since. A stored blob that no longer
// unzips keeps its trial unknown and stops nothing else.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { mergeRanks } from '../../../src-main/export/merge-ranks.ts';
import { mergedResultsFile } from '../../../src-main/export/merged-results-file.ts';
import type { ScenarioReport, SystemComparison } from '../../../src-main/export/report-model.ts';
import { createBackend } from '../../../src-main/server/backend.ts';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { LATEST_SCHEMA_VERSION, openDamagedStore, openStore } from '../../../src-main/store/open-store.ts';
import { recoverDatabase } from '../../../src-main/store/recover.ts';
import { pagesOf, scribbled } from '../../support/damaged-file.ts';
import type { BackfillProgress } from '../../../src-main/store/store.ts';
import { backfillNotice } from '../../../src-main/suite/services.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import type { TrialRecord } from '../../../src-shared/domain/store-types.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { runInProcess } from '../cli/in-process.ts';
import { kvbenchResults, referenceResultsNew, removeTempDirs, stalledResults, tempDir, writeResults } from './fixtures.ts';
import { seedStore } from './seed-store.ts';
import { databaseWithUnversionedImports } from './unversioned-imports.ts';
import { fillUp, smallFilesystem } from './small-filesystem.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  removeTempDirs();
});

interface Schema3Database {
  db: string;
  /** The suite's trial (run here: migration 4 takes the version that stored it). */
  suite: number;
  /** System A: a stalled window measured by 0.1.0, whose draining window is no stall. */
  drained: number;
  /** System B: the same configuration's stalled window measured by 0.5.0: a stall. */
  stalled: number;
  /** System C: a reference file (no kvbench version), a merged multi-host file of 0.4.0, and a 0.5.0 stall whose stored gzip is damaged. */
  reference: number;
  merged: number;
  damaged: number;
}

/** A multi-host run's merged file, as `kvbench merge` writes it, stated as merged by kvbench `version`. */
function mergedFile(version: string): Record<string, unknown> {
  const rank = (n: number) => {
    const r = kvbenchResults({ tokPerS: 10 });
    r.kvbench.rank = { rank: n, world_size: 2, host: `h${n}` };
    r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 60, cpuMemGb: 0, gpuMemGb: 0, seed: 42 + n, rank: n, worldSize: 2, cacheDir: `/shared/rank-${n}` };
    return { file: `r.rank${n}.json`, results: r };
  };
  const merged = mergedResultsFile(mergeRanks([rank(0), rank(1)]));
  (merged.kvbench_merge as { version: string }).version = version;
  return merged;
}

/**
 * Overwrites bytes inside `blob` where it lies in the database file, as a bad sector or a stray
 * write would: SQLite's quick_check does not look into a blob, so the file still opens.
 */
function damageOnDisk(file: string, blob: Buffer): void {
  const bytes = fs.readFileSync(file);
  for (let at = 64; at + 32 <= blob.length; at += 32) {
    const where = bytes.indexOf(blob.subarray(at, at + 32));
    if (where < 0 || bytes.indexOf(blob.subarray(at, at + 32), where + 1) >= 0) continue;
    bytes.fill(0x5a, where, where + 32);
    fs.writeFileSync(file, bytes);
    return;
  }
  throw new Error('the blob was not found in the database file');
}

/**
 * A database as a kvbench of schema 3 left it: imported trials with their results gzipped and no
 * measuring version. Made by this kvbench, then taken back to schema 3 (the columns of
 * migrations 4 and 5 dropped, as migration 4 found it), with one trial's stored gzip damaged on disk.
 */
async function schema3Database(): Promise<Schema3Database> {
  const dir = tempDir();
  const db = path.join(dir, 'kvbench.db');
  const store = seedStore(db);
  const suite = store.listTrials({})[0].id;
  const importOne = async (system: string, name: string, results: unknown): Promise<number> => {
    const r = await importResultsFiles(store, [writeResults(dir, name, results)], { systemLabel: system, scenarioId: 'storage-only' });
    expect(r.errors).toEqual([]);
    return r.imported[0].trialId;
  };
  const ids = {
    db,
    suite,
    drained: await importOne('A', 'drained-0.1.0.json', stalledResults('0.1.0')),
    stalled: await importOne('B', 'stalled-0.5.0.json', stalledResults('0.5.0')),
    reference: await importOne('C', 'reference.json', referenceResultsNew({ tokPerS: 50, storageTokPerS: 25 })),
    merged: await importOne('C', 'merged.json', mergedFile('0.4.0')),
    damaged: await importOne('C', 'damaged-0.5.0.json', stalledResults('0.5.0', 300)),
  };
  store.close();
  const raw = openDatabase(db);
  const blob = (raw.prepare('SELECT results_gzip FROM trials WHERE id = ?').get(ids.damaged) as { results_gzip: Buffer }).results_gzip;
  // Indexes on the column go first: SQLite drops no column an index uses.
  for (const { name } of raw.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'trials' AND sql LIKE '%measured_by_version%'").all() as { name: string }[]) {
    raw.exec(`DROP INDEX ${name}`);
  }
  raw.exec('ALTER TABLE trials DROP COLUMN storage_ram_backing; ALTER TABLE trials DROP COLUMN measured_by_version; PRAGMA user_version = 3;');
  raw.close(); // the last connection: checkpointed, no -wal left
  damageOnDisk(db, blob);
  return ids;
}

/**
 * A database whose `trials` imported trials (each a copy of one 0.5.0 stall) lack their measuring
 * version, as migration 4 left them, the last `damaged` of them with stored results that no longer
 * unzip. Returns a function that gives a fresh copy of it.
 */
async function manyImported(trials: number, damaged: number): Promise<() => string> {
  const made = path.join(tempDir(), 'many.db');
  await databaseWithUnversionedImports(made, trials);
  // Raw SQLite: a store's read-write open would fill them in.
  const raw = openDatabase(made);
  // A gzip header and then bytes no inflater takes, as a damaged sector leaves it.
  const damagedGzip = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0x03]), Buffer.alloc(64, 0xff)]);
  raw.prepare("UPDATE trials SET results_gzip = ? WHERE id IN (SELECT id FROM trials WHERE results_format = 'kvbench' AND measured_by_version IS NULL ORDER BY id DESC LIMIT ?)").run(damagedGzip, damaged);
  raw.close();
  return () => {
    const db = path.join(tempDir(), 'kvbench.db');
    fs.copyFileSync(made, db);
    return db;
  };
}

const stallMessage = /^the engine stalled \(the measured window closed 6\.0 s after its planned 3\.0 s\)/;

describe('the measuring version of trials imported before schema 4', () => {
  it('is read from their stored results when the database is opened; the reference\'s stay unknown, and a damaged blob keeps only its own trial unknown', async () => {
    const d = await schema3Database();
    // Damaged as a bad sector leaves it: zlib refuses it, SQLite's own check passes.
    const raw = openDatabase(d.db, { readonly: true });
    const blob = (raw.prepare('SELECT results_gzip FROM trials WHERE id = ?').get(d.damaged) as { results_gzip: Buffer }).results_gzip;
    expect(() => zlib.gunzipSync(blob)).toThrow();
    expect(raw.prepare('PRAGMA quick_check').all()).toEqual([{ quick_check: 'ok' }]);
    raw.close();

    const store = openStore(d.db);
    try {
      const measuredBy = (id: number): string | null => store.getTrial(id)!.measuredByVersion;
      expect({
        suite: measuredBy(d.suite),
        drained: measuredBy(d.drained),
        stalled: measuredBy(d.stalled),
        reference: measuredBy(d.reference),
        merged: measuredBy(d.merged),
        damaged: measuredBy(d.damaged),
      }).toEqual({ suite: KVBENCH_VERSION, drained: '0.1.0', stalled: '0.5.0', reference: null, merged: '0.4.0', damaged: null });
      // The fill says nothing of the damaged blob (that would make every command exit 3): reading its results does.
      expect(store.unreadable).toEqual([]);
      expect(() => store.trialResults(d.damaged)).toThrow(/the stored gzip is damaged/);
      // Tried again at the next call, and passed over again: nothing else is left to fill.
      expect(store.backfillMeasuringVersions()).toBe(0);
    } finally {
      store.close();
    }
  });

  it('a report, a comparison and the history see it: the stall of the 0.5.0 trial is cautioned, the definition change between 0.1.0 and 0.5.0 noted', async () => {
    const d = await schema3Database();
    const report = await runInProcess(() => reportCommand(['--db', d.db, '--json', '--all']));
    expect(report.code, report.stderr).toBe(0);
    const cautions = (JSON.parse(report.stdout) as { scenarios: ScenarioReport }).scenarios.scenarios.flatMap((s) => s.cautions);
    expect(cautions.filter((c) => c.trialId === d.stalled).map((c) => c.message)).toEqual([expect.stringMatching(stallMessage)]);
    for (const id of [d.drained, d.damaged, d.reference, d.merged]) expect(cautions.filter((c) => c.trialId === id)).toEqual([]);

    const compared = await runInProcess(() => reportCommand(['--db', d.db, '--compare', 'A', 'B', '--json']));
    expect(compared.code, compared.stderr).toBe(0);
    const c = JSON.parse(compared.stdout) as SystemComparison;
    expect(c.cautions.b.stalled).toBe(1);
    expect(c.cautions.a.stalled).toBe(0);
    expect(c.notes.filter((n) => n.startsWith('decode_bytes_read changed definition in kvbench 0.3.0'))).toHaveLength(1);

    const history = await runInProcess(() => historyCommand(['--db', d.db, '--json', '--limit', '0']));
    expect(history.code, history.stderr).toBe(0);
    const byId = new Map((JSON.parse(history.stdout) as TrialRecord[]).map((t) => [t.id, t.measuredByVersion]));
    expect([byId.get(d.drained), byId.get(d.stalled), byId.get(d.reference)]).toEqual(['0.1.0', '0.5.0', null]);
  });

  it("the app sees it: the trial's dialog names the version that measured it, and its report cautions the stall", async () => {
    const d = await schema3Database();
    const backend = await createBackend({
      mode: 'browser',
      settingsFile: path.join(tempDir(), 'settings.json'),
      defaults: { databasePath: d.db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    });
    const value = async (channel: string, request: unknown): Promise<Record<string, unknown>> => {
      const r = await backend.invoke(channel, request);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      return (r as { value: Record<string, unknown> }).value;
    };
    try {
      const dialog = (await value('trials.get', { id: d.stalled })) as { trial: TrialRecord };
      expect(dialog.trial).toMatchObject({ measuredByVersion: '0.5.0', kvbenchVersion: KVBENCH_VERSION });
      const built = (await value('report.build', { selection: {} })) as unknown as { report: ScenarioReport };
      const cautions = built.report.scenarios.flatMap((s) => s.cautions);
      expect(cautions.filter((c) => c.trialId === d.stalled).map((c) => c.message)).toEqual([expect.stringMatching(stallMessage)]);
      expect(cautions.filter((c) => c.trialId === d.drained)).toEqual([]);
    } finally {
      await backend.close();
    }
  });

  it('a damaged copy of it reads as the intact file is read as it is: the same measuring versions, its made-up import labels as stored', async () => {
    const d = await schema3Database();
    // As kvbench 0.6.0 labelled an import without --label (migration 6 clears it on an upgrade, never on a read).
    const raw = openDatabase(d.db);
    raw.prepare("UPDATE suites SET label = 'import of 1 file(s)' WHERE source = 'import'").run();
    raw.close();
    const seen = (trials: TrialRecord[]) => trials.map((t) => ({ id: t.id, measuredBy: t.measuredByVersion, label: t.suiteLabel }));
    const intact = openStore(d.db, { readonly: true, keepSchema: true });
    const asIs = seen(intact.listTrials({}));
    intact.close();
    expect(asIs.filter((t) => t.label === 'import of 1 file(s)')).toHaveLength(5);
    expect(asIs.find((t) => t.id === d.stalled)?.measuredBy).toBe('0.5.0');

    // An index page scribbled over: quick_check fails, every row can still be read.
    const index = [...pagesOf(d.db)].find(([key]) => key.startsWith('trials_') && key.endsWith('/leaf'))![1][0];
    const damaged = scribbled(d.db, 'damaged.db', [index]);
    const salvaged = openDamagedStore(damaged)!;
    try {
      expect(salvaged.damage).toMatch(/^SQLite quick_check: /);
      expect(seen(salvaged.store.listTrials({}))).toEqual(asIs);
    } finally {
      salvaged.store.close();
    }
    // Recovered into a new database: of the latest schema, as a writer's open leaves it, nothing else beside it.
    const out = path.join(path.dirname(d.db), 'recovered.db');
    recoverDatabase(damaged, out);
    expect(fs.readdirSync(path.dirname(d.db)).filter((f) => f.startsWith('recovered'))).toEqual(['recovered.db']);
    const recovered = openStore(out, { readonly: true });
    try {
      expect(seen(recovered.listTrials({})).map((t) => t.measuredBy)).toEqual(asIs.map((t) => t.measuredBy));
      expect(Number(recovered.db.pragma('user_version', { simple: true }))).toBe(LATEST_SCHEMA_VERSION);
    } finally {
      recovered.close();
    }
  });

  it('many of them: the open reports how far it is, and the CLI and the app say once what they do and for how many', async () => {
    // 300 trials imported before schema 4: the once-only fill takes seconds per thousand under load.
    const fresh = await manyImported(300, 0);

    const seen: BackfillProgress[] = [];
    const opened = openStore(fresh(), { onBackfill: (p) => seen.push(p) });
    try {
      expect(seen[0]).toEqual({ trialsDone: 0, trialsTotal: 300, trialsFilled: 0, trialsUnreadable: 0 });
      expect(seen.at(-1)).toEqual({ trialsDone: 300, trialsTotal: 300, trialsFilled: 300, trialsUnreadable: 0 });
      expect(seen).toHaveLength(1 + Math.ceil(300 / 16)); // before the first batch, then after each
      expect(opened.listTrials({}).filter((t) => t.measuredByVersion === '0.5.0')).toHaveLength(300);
    } finally {
      opened.close();
    }
    // Nothing left to fill: the next open says nothing.
    const quiet: unknown[] = [];
    const db = fresh();
    openStore(db).close();
    openStore(db, { onBackfill: (p) => quiet.push(p) }).close();
    expect(quiet).toEqual([]);

    const history = await runInProcess(() => historyCommand(['--db', fresh(), '--json', '--limit', '0']));
    expect(history.code, history.stderr).toBe(0);
    expect(history.stderr).toMatch(/^kvbench history: upgrading 300 imported trials' records \(once; this database was made by an older kvbench\) …\n/);
    expect(history.stderr).toMatch(/kvbench history: upgraded 300 imported trials' records\n$/);

    const logged: string[] = [];
    const appDb = fresh();
    const backend = await createBackend({
      mode: 'browser',
      settingsFile: path.join(tempDir(), 'settings.json'),
      defaults: { databasePath: appDb, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
      log: (level, message) => logged.push(`${level}: ${message}`),
    });
    await backend.close();
    expect(logged[0]).toBe(`info: database ${appDb}: upgrading 300 imported trials' records (once; this database was made by an older kvbench) …`);
    expect(logged.at(-1)).toBe(`info: database ${appDb}: upgraded 300 imported trials' records`);
  });

  it('many whose stored results cannot be read: each open says how many stay unknown, never that it upgrades them once', async () => {
    const fresh = await manyImported(300, 300);
    const db = fresh();
    for (const open of [1, 2]) {
      const said: string[] = [];
      const seen: BackfillProgress[] = [];
      const notice = backfillNotice((line) => said.push(line));
      openStore(db, { onBackfill: (p) => (seen.push(p), notice(p)) }).close();
      expect(seen.at(-1), `open ${open}`).toEqual({ trialsDone: 300, trialsTotal: 300, trialsFilled: 0, trialsUnreadable: 300 });
      expect(said, `open ${open}`).toEqual([
        "300 imported trials keep an unknown measuring version: their stored results cannot be read (each read-write open tries them again)",
      ]);
    }
  });

  it('many to fill and some unreadable: the first open says it upgrades them once and how many it could not; the next open, with few left, says nothing', async () => {
    const fresh = await manyImported(300, 20);
    const db = fresh();
    const said: string[] = [];
    openStore(db, { onBackfill: backfillNotice((line) => said.push(line)) }).close();
    expect(said).toEqual([
      "upgrading 300 imported trials' records (once; this database was made by an older kvbench) …",
      "upgraded 280 of 300 imported trials' records; 20 keep an unknown measuring version: their stored results cannot be read (each read-write open tries them again)",
    ]);
    const again: BackfillProgress[] = [];
    openStore(db, { onBackfill: (p) => again.push(p) }).close();
    expect(again).toEqual([
      { trialsDone: 0, trialsTotal: 20, trialsFilled: 0, trialsUnreadable: 0 },
      { trialsDone: 16, trialsTotal: 20, trialsFilled: 0, trialsUnreadable: 16 },
      { trialsDone: 20, trialsTotal: 20, trialsFilled: 0, trialsUnreadable: 20 },
    ]);
  });

  it('a full disk stops the filling, not the open: history reads the database, and an open once there is room fills it', async (ctx) => {
    const fsys = smallFilesystem(ctx, 4 * 1024 * 1024);
    if (!fsys) return;
    cleanups.push(fsys.unmount);
    const db = path.join(fsys.dir, 'kvbench.db');
    const store = openStore(db);
    const dir = tempDir();
    const files = [1, 2, 3, 4, 5, 6].map((i) => writeResults(dir, `r${i}.json`, stalledResults('0.5.0', 100 * i)));
    expect((await importResultsFiles(store, files, { systemLabel: 'B', scenarioId: 'storage-only' })).imported).toHaveLength(6);
    // As kvbench 0.6.0 left a database it upgraded: schema 4, its imports' measuring versions unknown.
    store.db.prepare('UPDATE trials SET measured_by_version = NULL').run();
    store.close();
    const unknown = (): number => {
      const raw = openDatabase(db, { readonly: true });
      try {
        return (raw.prepare('SELECT count(*) AS n FROM trials WHERE measured_by_version IS NULL').get() as { n: number }).n;
      } finally {
        raw.close();
      }
    };
    // Room for the -shm (32 KiB) and a little -wal, not for a batch of rewritten rows.
    const filler = fillUp(fsys.dir, 48 * 1024);
    const history = await runInProcess(() => historyCommand(['--db', db, '--json', '--limit', '0']));
    expect(history.code, history.stderr).toBe(0);
    expect(history.stderr).toBe('');
    expect((JSON.parse(history.stdout) as TrialRecord[]).map((t) => t.measuredByVersion)).toEqual(Array(6).fill(null));
    expect(unknown()).toBe(6);
    fs.rmSync(filler);
    openStore(db).close();
    expect(unknown()).toBe(0);
  });
});
