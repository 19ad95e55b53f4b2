// `kvbench import` stages its files in batches into a private in-memory database, which takes no
// lock on the database file, then stores them in one transaction: all or nothing for every reader,
// whatever its version or queries, and nothing left in the file by an import that failed.
// Real SQLite files, real results files; batch boundaries are counted through afterBatch, never timed.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importResultsFiles, type ImportBatch } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { closeOpenedStores, open } from '../../support/store.ts';
import { kvbenchResults, referenceResultsNew, removeTempDirs, tempDir, writeResults } from './fixtures.ts';

afterEach(() => {
  closeOpenedStores();
  removeTempDirs();
});

/** `n` results files, each with its own content (so none is a duplicate of another), named from `from`. */
function resultsFiles(dir: string, n: number, from = 0): string[] {
  return Array.from({ length: n }, (_, i) => writeResults(dir, `r${String(from + i).padStart(3, '0')}.json`, referenceResultsNew({ tokPerS: 100 + from + i, storageTokPerS: 50 + from + i })));
}

/** What another process would see of the database: its trials, suites, systems and facets, through the store's readers. */
function seenBy(reader: Store): { trials: number; suites: string[]; systems: Record<string, number>; facetTrials: number; labels: string[]; latestImport: number | null } {
  return {
    trials: reader.listTrials({}).length,
    suites: reader.listSuites().map((s) => `${s.source} ${s.status}`),
    systems: Object.fromEntries(reader.listSystems().map((s) => [s.label, s.trialCount])),
    facetTrials: reader.trialFacets().trialCount,
    labels: reader.trialFacets().suiteLabels.map((l) => `${l.label}: ${l.trialCount}`),
    latestImport: reader.latestSuite(undefined, 'import')?.id ?? null,
  };
}

/** Rows as they are in the file, hidden or not: what a removal must leave empty. */
function rawCounts(file: string): { suites: number; runs: number; trials: number; metrics: number; systems: number; drives: number } {
  const db = openDatabase(file, { readonly: true });
  try {
    const n = (table: string): number => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { suites: n('suites'), runs: n('runs'), trials: n('trials'), metrics: n('trial_metrics'), systems: n('systems'), drives: n('drives') };
  } finally {
    db.close();
  }
}

/**
 * What an older kvbench reads from the file, on a connection of its own: its queries were plain
 * SELECTs over the tables (its listTrials, listSuites, listSystems), with no idea of an import that
 * has not finished. Counts of every table an import writes, and the trials its listing showed.
 */
function seenByOlderKvbench(file: string): { trials: number; listed: string[]; metrics: number; histograms: number; runs: number; suites: number; systems: number; drives: number } {
  const db = openDatabase(file, { readonly: true });
  try {
    const n = (table: string): number => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    // kvbench 0.6.0's Store.listTrials (its trialSelect, no filter).
    const listed = db
      .prepare(
        `SELECT t.id, s.label AS system_label, t.source_file FROM trials t JOIN systems s ON s.id = t.system_id LEFT JOIN drives d ON d.id = t.drive_id
          ORDER BY t.started_at DESC, t.id DESC`,
      )
      .all() as { system_label: string; source_file: string | null }[];
    return {
      trials: n('trials'),
      listed: listed.map((t) => `${t.system_label} ${path.basename(t.source_file ?? '')}`),
      metrics: n('trial_metrics'),
      histograms: n('trial_histograms'),
      runs: n('runs'),
      suites: n('suites'),
      systems: n('systems'),
      drives: n('drives'),
    };
  } finally {
    db.close();
  }
}

describe('import: staged in batches, stored in one commit', () => {
  it('stages at most batchFiles files per batch, another connection takes the write lock between them, and readers see nothing until the commit', async () => {
    const dir = tempDir();
    const dbFile = path.join(dir, 'kvbench.db');
    const store = open(dbFile);
    const files = resultsFiles(dir, 25);
    const batches: ImportBatch[] = [];
    const seenBetween: ReturnType<typeof seenBy>[] = [];
    const r = await importResultsFiles(store, files, {
      systemLabel: 'lab',
      driveLabel: 'nvme0',
      suiteLabel: 'fw 2.1',
      batchFiles: 10,
      afterBatch: (b) => {
        batches.push(b);
        // Another process, as a suite storing its trial would: it must get the lock now, at once.
        const other = openDatabase(dbFile, { timeout: 0 });
        try {
          other.exec('BEGIN IMMEDIATE');
          other.exec('ROLLBACK');
        } finally {
          other.close();
        }
        // And a reader opened now (its open's recovery included) sees no part of the import.
        const reader = openStore(dbFile);
        try {
          seenBetween.push(seenBy(reader));
          expect(rawCounts(dbFile), 'nothing of the import is in the file yet').toEqual({ suites: 0, runs: 0, trials: 0, metrics: 0, systems: 0, drives: 0 });
        } finally {
          reader.close();
        }
      },
    });
    expect(batches).toEqual([
      { files: 10, done: 10, total: 25 },
      { files: 10, done: 20, total: 25 },
      { files: 5, done: 25, total: 25 },
    ]);
    for (const seen of seenBetween) expect(seen).toEqual({ trials: 0, suites: [], systems: {}, facetTrials: 0, labels: [], latestImport: null });
    expect(r.imported).toHaveLength(25);
    expect(seenBy(store)).toEqual({ trials: 25, suites: ['import finished'], systems: { lab: 25 }, facetTrials: 25, labels: ['fw 2.1: 25'], latestImport: r.suiteId });
    expect(store.getSuite(r.suiteId)).toMatchObject({ label: 'fw 2.1', status: 'finished', source: 'import' });
    // One run per file (no run flags: each its own configuration), numbered across the batches.
    expect(store.listRuns(r.suiteId).map((x) => x.position)).toEqual([...Array(25).keys()]);
  });

  it('an older kvbench reading the file meanwhile (plain SELECTs) sees none of the import until all of it is there, in one commit', async () => {
    const dir = tempDir();
    const dbFile = path.join(dir, 'kvbench.db');
    const store = open(dbFile);
    // Something stored before, which the older reader sees throughout.
    const before = await importResultsFiles(store, [writeResults(dir, 'a-before.json', kvbenchResults({ tokPerS: 1 }))], { systemLabel: 'old' });
    expect(before.imported).toHaveLength(1);
    const atStart = seenByOlderKvbench(dbFile);
    expect(atStart).toMatchObject({ trials: 1, listed: ['old a-before.json'], suites: 1, systems: 1, drives: 0 });
    const files = [...resultsFiles(dir, 7), ...Array.from({ length: 5 }, (_, i) => writeResults(dir, `k${i}.json`, kvbenchResults({ tokPerS: 200 + i })))];
    const seenBetween: ReturnType<typeof seenByOlderKvbench>[] = [];
    const r = await importResultsFiles(store, files, {
      systemLabel: 'lab',
      driveLabel: 'nvme0',
      batchFiles: 4,
      afterBatch: () => {
        seenBetween.push(seenByOlderKvbench(dbFile));
      },
    });
    expect(seenBetween).toHaveLength(3);
    for (const seen of seenBetween) expect(seen).toEqual(atStart);
    expect(r.imported).toHaveLength(12);
    const after = seenByOlderKvbench(dbFile);
    expect(after).toMatchObject({ trials: 13, suites: 2, systems: 2, drives: 1 });
    expect(after.listed.filter((t) => t.startsWith('lab ')).map((t) => t.slice(4)).sort()).toEqual(files.map((f) => path.basename(f)).sort());
    expect(after.metrics).toBeGreaterThan(atStart.metrics);
    expect(after.histograms).toBeGreaterThan(atStart.histograms);
  });

  it('checks duplicates across batches: a file stored before and a copy of a file in an earlier batch are skipped', async () => {
    const dir = tempDir();
    const store = open(path.join(dir, 'kvbench.db'));
    const [first] = resultsFiles(dir, 1);
    const before = await importResultsFiles(store, [first], { systemLabel: 'lab' });
    const files = resultsFiles(dir, 5, 1);
    // Sorted by name: 'r001' … 'r005' in batches of 2, then the copy of r001 ('zz', last) in the third.
    const copy = writeResults(dir, 'zz-copy-of-r001.json', JSON.parse(JSON.stringify(referenceResultsNew({ tokPerS: 101, storageTokPerS: 51 }))));
    const again = writeResults(dir, 'r000-again.json', referenceResultsNew({ tokPerS: 100, storageTokPerS: 50 }));
    const r = await importResultsFiles(store, [...files, copy, again], { systemLabel: 'lab', batchFiles: 2 });
    expect(r.imported.map((f) => path.basename(f.file))).toEqual(['r001.json', 'r002.json', 'r003.json', 'r004.json', 'r005.json']);
    expect(r.skipped.map((s) => [path.basename(s.file), s.trialId])).toEqual([
      ['r000-again.json', before.imported[0].trialId],
      ['zz-copy-of-r001.json', null],
    ]);
    expect(store.listTrials({}).length).toBe(6);
  });

  it('staging takes no write lock; a commit that fails (the lock held past busy_timeout) leaves nothing, and the import runs again whole', async () => {
    const dir = tempDir();
    const dbFile = path.join(dir, 'kvbench.db');
    const store = open(dbFile, { busyTimeoutMs: 100 });
    open(dbFile).close(); // migrated
    const files = resultsFiles(dir, 12);
    // After the first batch another process takes the write lock, and keeps it: the other batches stage all the same.
    let blocker: ReturnType<typeof openDatabase> | null = null;
    const batches: number[] = [];
    const r = importResultsFiles(store, files, {
      systemLabel: 'lab',
      suiteLabel: 'fw 2.1',
      batchFiles: 5,
      afterBatch: (b) => {
        batches.push(b.done);
        if (b.done !== 5) return;
        blocker = openDatabase(dbFile);
        blocker.exec('BEGIN IMMEDIATE');
      },
    });
    // The commit cannot take the lock: the import rejects, with nothing of it in the file.
    await expect(r).rejects.toThrow(/locked|busy/i);
    expect(batches).toEqual([5, 10, 12]);
    blocker!.exec('ROLLBACK');
    blocker!.close();
    expect(rawCounts(dbFile)).toEqual({ suites: 0, runs: 0, trials: 0, metrics: 0, systems: 0, drives: 0 });
    const reader = open(dbFile, { readonly: true });
    expect(seenBy(reader)).toEqual({ trials: 0, suites: [], systems: {}, facetTrials: 0, labels: [], latestImport: null });
    // Run again: every file, once.
    const again = await importResultsFiles(store, files, { systemLabel: 'lab', batchFiles: 5 });
    expect(again.imported).toHaveLength(12);
    expect(again.skipped).toEqual([]);
    expect(rawCounts(dbFile)).toMatchObject({ suites: 1, trials: 12, systems: 1 });
  });

  it('an import that fails midway leaves nothing in the file, no system or drive either', async () => {
    const dir = tempDir();
    const dbFile = path.join(dir, 'kvbench.db');
    const store = open(dbFile);
    const files = resultsFiles(dir, 6);
    const r = importResultsFiles(store, files, {
      systemLabel: 'new-system',
      driveLabel: 'new-drive',
      batchFiles: 2,
      afterBatch: (b) => {
        if (b.done === 4) throw new Error('stopped after the second batch');
      },
    });
    await expect(r).rejects.toThrow('stopped after the second batch');
    expect(rawCounts(dbFile)).toEqual({ suites: 0, runs: 0, trials: 0, metrics: 0, systems: 0, drives: 0 });
  });

  it('two imports of one file at once store it once: the one that commits second drops its copy, also when the first then fails', async () => {
    const dir = tempDir();
    const dbFile = path.join(dir, 'kvbench.db');
    const a = open(dbFile, { busyTimeoutMs: 100 });
    const b = open(dbFile);
    const shared = resultsFiles(dir, 1)[0]; // r000, in a's first batch
    const aFiles = [shared, ...resultsFiles(dir, 5, 1)];
    const bOnly = resultsFiles(dir, 1, 50)[0];

    // 1. b runs whole while a is between its batches, with the shared file staged: b stores it (a may yet fail).
    let bResult: Awaited<ReturnType<typeof importResultsFiles>> | null = null;
    const aResult = await importResultsFiles(a, aFiles, {
      systemLabel: 'A',
      batchFiles: 2,
      afterBatch: async (batch) => {
        if (batch.done === 2) bResult = await importResultsFiles(b, [shared, bOnly], { systemLabel: 'B' });
      },
    });
    expect(bResult!.imported.map((f) => path.basename(f.file))).toEqual(['r000.json', 'r050.json']);
    const heldByB = bResult!.imported[0].trialId;
    // a committed second: its copy goes, and it says where the file is stored.
    expect(aResult.imported.map((f) => path.basename(f.file))).toEqual(['r001.json', 'r002.json', 'r003.json', 'r004.json', 'r005.json']);
    expect(aResult.skipped).toEqual([{ file: shared, trialId: heldByB, message: expect.stringMatching(/^already stored as trial \d+ \(system B, suite \d+\)/) }]);
    const digests = a.db.prepare('SELECT results_digest AS d, COUNT(*) AS n FROM trials GROUP BY results_digest HAVING n > 1').all();
    expect(digests).toEqual([]);
    expect(a.listTrials({}).length).toBe(7);

    // 2. Now a's import of a new file and b's of the same run at once, and a fails after b finished: b's copy stays, once.
    const next = resultsFiles(dir, 3, 60);
    let blocker: ReturnType<typeof openDatabase> | null = null;
    const failed = importResultsFiles(a, next, {
      systemLabel: 'A',
      batchFiles: 1,
      afterBatch: async (batch) => {
        if (batch.done !== 1) return;
        const r = await importResultsFiles(b, [next[0]], { systemLabel: 'B' });
        expect(r.imported).toHaveLength(1);
        blocker = openDatabase(dbFile);
        blocker.exec('BEGIN IMMEDIATE');
      },
    });
    await expect(failed).rejects.toThrow(/locked|busy/i);
    blocker!.exec('ROLLBACK');
    blocker!.close();
    const reader = open(dbFile, { readonly: true });
    expect(reader.listTrials({}).filter((t) => t.sourceFile === next[0]).map((t) => t.systemLabel)).toEqual(['B']);
    expect(reader.listTrials({}).length).toBe(8);
  });

  it('the next open removes an unfinished import an older kvbench left (its process gone, or marked interrupted); a live one stays', () => {
    const dir = tempDir();
    const dbFile = path.join(dir, 'kvbench.db');
    const store = open(dbFile);
    const dead = { pid: 0, host: 'gone', startTicks: null }; // pid 0: no process (processLiveness)
    // What a kvbench that wrote imports in batches left while it wrote one: a 'running' import suite owned by its process, with the batches it committed.
    const begin = (runner: typeof dead): number =>
      store.atomically(() => {
        const now = new Date().toISOString();
        const systemId = store.upsertImportedSystem('lab', now).id;
        const suiteId = store.createSuite({ systemId, driveId: null, profile: 'import', label: null, source: 'import', plan: null, cacheDir: null, runner, status: 'running', createdAt: now });
        const run = store.addRun(suiteId, { position: 0, scenarioId: 'imported', label: 'x', options: {}, trials: 0 }, 'k');
        const results = kvbenchResults({ tokPerS: suiteId }) as unknown as Record<string, unknown>;
        // A finished trial, stored as the runner stores one (its runner columns matter only while it runs).
        const trialId = store.startTrial({ runId: run, suiteId, systemId, driveId: null, hardwareSnapshotId: null, scenarioId: 'imported', trialIndex: 0, options: {}, configKey: 'k', runner, cacheDir: null });
        store.finishTrial(trialId, { status: 'complete', reason: null, wallMs: null, results, metrics: { x: 1 } });
        return suiteId;
      });
    const killed = begin(dead);
    const marked = begin(dead);
    store.db.prepare("UPDATE suites SET status = 'interrupted' WHERE id = ?").run(marked);
    // On another host: its process cannot be judged from here, so it stays (hidden).
    const elsewhere = begin({ pid: 1, host: 'another-host', startTicks: null });
    expect(rawCounts(dbFile).trials).toBe(3);
    const reopened = open(dbFile);
    const left = reopened.db.prepare('SELECT id FROM suites').all() as { id: number }[];
    expect(left.map((s) => s.id)).toEqual([elsewhere]);
    expect(rawCounts(dbFile)).toMatchObject({ trials: 1, runs: 1, systems: 1 });
    expect(seenBy(reopened).trials).toBe(0);
    expect([killed, marked]).not.toContain(elsewhere);
  });
});
