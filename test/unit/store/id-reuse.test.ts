// Trial and suite ids are never given twice in one database: an export, a note or a report that says
// "trial 12" keeps pointing at that measurement after trial 12 is deleted. SQLite gives a table
// without AUTOINCREMENT the largest id + 1, so deleting the newest trial handed its id to the next
// one; a numbered migration to AUTOINCREMENT would lock out every 0.7.0, so the largest id each table
// has given is kept in kvbench_meta and advanced with every insert (suite runs, imports, endpoint runs).
// Deletes here are hard (DELETE: the row is gone, only a deleted slot is recorded), so there is no
// soft delete to keep an id alive. Real SQLite files throughout.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { recoverDatabase } from '../../../src-main/store/recover.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { damagedTrialsPage, intactDatabase, pagesOf, scribbled } from '../../support/damaged-file.ts';
import { closeOpenedStores, open } from '../../support/store.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir, writeResults } from './fixtures.ts';
import { addSuiteTrials } from './seed-store.ts';

afterEach(() => {
  closeOpenedStores();
  removeTempDirs();
});

const hw = fakeHardware({ probe: true });
const results = (tokPerS: number): Record<string, unknown> => kvbenchResults({ tokPerS }) as unknown as Record<string, unknown>;
const trialIds = (s: Store): number[] => s.listTrials({}).map((t) => t.id).sort((x, y) => x - y);
const maxId = (s: Store, table: string): number => (s.db.prepare(`SELECT COALESCE(MAX(id), 0) AS n FROM ${table}`).get() as { n: number }).n;

/** One more trial of a new suite run here, as a suite stores it; returns [suite id, trial id]. */
function runOne(s: Store, tokPerS = 500): [number, number] {
  const suiteId = addSuiteTrials(s, hw, 1, () => ({ results: results(tokPerS) }));
  return [suiteId, s.listTrials({ suiteIds: [suiteId] })[0].id];
}

describe('trial ids', () => {
  it('are not given again after the newest trial is deleted, also after closing and reopening', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = open(file);
    addSuiteTrials(s, hw, 3, (i) => ({ results: results(100 + i) }));
    const [a, b, c] = trialIds(s);
    s.deleteTrials([c]);
    const [, next] = runOne(s);
    expect(next).toBeGreaterThan(c);
    expect(trialIds(s)).toEqual([a, b, next]);

    // The mark is in the file: a reopened database (another process, a later day) goes on above it.
    s.deleteTrials([next]);
    s.close();
    const again = open(file);
    const [, after] = runOne(again);
    expect(after).toBeGreaterThan(next);
  });

  it('are not given again after a whole suite is deleted (its trials go with it)', () => {
    const s = open(path.join(tempDir(), 'kvbench.db'));
    addSuiteTrials(s, hw, 1, () => ({ results: results(1) }));
    const suiteId = addSuiteTrials(s, hw, 2, (i) => ({ results: results(10 + i) }));
    const highest = Math.max(...trialIds(s));
    s.deleteSuite(suiteId);
    const [nextSuite, next] = runOne(s);
    expect(next).toBeGreaterThan(highest);
    expect(nextSuite).toBeGreaterThan(suiteId);
  });

  it('an import goes on above every id given, and a suite run after the import above its trials', async () => {
    const dir = tempDir();
    const s = open(path.join(dir, 'kvbench.db'));
    addSuiteTrials(s, hw, 2, (i) => ({ results: results(100 + i) }));
    const [, newest] = trialIds(s);
    s.deleteTrials([newest]);
    const files = [writeResults(dir, 'a.json', results(300)), writeResults(dir, 'b.json', results(301))];
    const r = await importResultsFiles(s, files, { systemLabel: 'lab' });
    const imported = r.imported.map((f) => f.trialId).sort((x, y) => x - y);
    expect(imported).toHaveLength(2);
    expect(imported[0]).toBeGreaterThan(newest);
    // The imported ids are those stored.
    expect(trialIds(s).slice(-2)).toEqual(imported);

    s.deleteTrials([imported[1]]);
    const [, next] = runOne(s);
    expect(next).toBeGreaterThan(imported[1]);
  });

  it('a write by a kvbench that knows no mark (0.7.0: the largest id + 1) does not bring back an id the mark has seen', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = open(file);
    addSuiteTrials(s, hw, 3, (i) => ({ results: results(100 + i) }));
    const [first, second, third] = trialIds(s);
    s.deleteTrials([second, third]);
    s.close();
    // What 0.7.0 does: an INSERT without an id, which SQLite numbers the largest + 1. It reuses a
    // deleted id (nothing this build writes can stop an older one), but the mark is left as it was.
    const raw = openDatabase(file);
    const byOlder = Number(
      raw
        .prepare(
          `INSERT INTO trials (run_id, suite_id, system_id, drive_id, scenario_id, trial_index, attempt, status, config_key, options_json, started_at, kvbench_version)
           SELECT run_id, suite_id, system_id, drive_id, scenario_id, trial_index, attempt + 100, status, config_key, options_json, started_at, '0.7.0' FROM trials WHERE id = ?`,
        )
        .run(first).lastInsertRowid,
    );
    raw.close();
    expect(byOlder).toBe(second);
    const again = open(file);
    const [, next] = runOne(again);
    expect(next).toBeGreaterThan(third);
  });

  it('a damaged mark (not a number) is read as none: ids go on above the largest stored', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = open(file);
    addSuiteTrials(s, hw, 2, (i) => ({ results: results(100 + i) }));
    s.db.prepare("UPDATE kvbench_meta SET value = 'x' WHERE key = 'trials_id_given'").run();
    const highest = maxId(s, 'trials');
    const [, next] = runOne(s);
    expect(next).toBe(highest + 1);
  });
});

describe('suite ids', () => {
  it('are not given again after the newest suite is deleted', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = open(file);
    const [suiteId] = runOne(s);
    s.deleteSuite(suiteId);
    s.close();
    const again = open(file);
    const next = again.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan: null, cacheDir: null, runner: currentProcess() });
    expect(next).toBeGreaterThan(suiteId);
  });
});

describe('a recovered database', () => {
  it('keeps the ids it was given, and goes on above the damaged file’s mark: a trial deleted there is not reused', () => {
    const dir = tempDir();
    const { intact } = damagedTrialsPage(dir, 'unused.db');
    const s = open(intact);
    const ids = trialIds(s);
    const highest = ids[ids.length - 1];
    s.deleteTrials([highest]); // the newest: its id must never come back, in this file or a copy of it
    s.close();
    const damaged = scribbled(intact, 'damaged2.db', [pagesOf(intact).get('trials/leaf')![1]]);
    const out = path.join(dir, 'recovered.db');
    recoverDatabase(damaged, out);
    const recovered = open(out);
    const kept = trialIds(recovered);
    expect(kept.every((id) => ids.includes(id))).toBe(true);
    const [, next] = runOne(recovered);
    expect(next).toBeGreaterThan(highest);
    expect(fs.existsSync(out)).toBe(true);
  });
  it('of a database from before the mark (0.7.0) whose newest trials are lost does not give their ids again', () => {
    const dir = tempDir();
    const intact = intactDatabase(dir);
    const raw = openDatabase(intact);
    raw.prepare("DELETE FROM kvbench_meta WHERE key LIKE '%_id_given'").run(); // as 0.7.0 left it
    const highest = (raw.prepare('SELECT MAX(id) AS n FROM trials').get() as { n: number }).n;
    raw.close();
    const leaves = pagesOf(intact).get('trials/leaf')!;
    const damaged = scribbled(intact, 'damaged.db', [leaves[leaves.length - 1]]);
    const out = path.join(dir, 'recovered.db');
    const r = recoverDatabase(damaged, out);
    expect(r.lost.join('\n')).toMatch(/trials \d+ and above/);
    const recovered = open(out);
    expect(maxId(recovered, 'trials')).toBeLessThan(highest);
    const [, next] = runOne(recovered);
    expect(next).toBeGreaterThan(highest);
    expect(recovered.db.prepare("SELECT value FROM kvbench_meta WHERE key = 'trials_id_given'").get()).toEqual({ value: String(next) });
  });

  it('says so where neither the record, nor the table’s last page, nor any index of it says the largest id given', () => {
    const dir = tempDir();
    const intact = intactDatabase(dir);
    const raw = openDatabase(intact);
    raw.prepare("DELETE FROM kvbench_meta WHERE key LIKE '%_id_given'").run();
    raw.close();
    const pages = pagesOf(intact);
    const last = (k: string): number => pages.get(k)!.slice(-1)[0];
    // The trials' last leaf, every index over trials, and the metrics' last leaf (whose trial ids would say it).
    const indexes = [...pages.keys()].filter((k) => /^(trials_|sqlite_autoindex_trials_).*\/leaf$/.test(k));
    const damaged = scribbled(intact, 'damaged.db', [last('trials/leaf'), last('trial_metrics/leaf'), ...indexes.map(last)]);
    const r = recoverDatabase(damaged, path.join(dir, 'recovered.db'));
    expect(r.lost.join('\n')).toMatch(/holds no record of the ids it gave, and its largest trial id could not be read \(damaged pages\): trial ids above \d+ may be given again/);
  });
});

describe('the deletes an open makes', () => {
  const dead = { pid: 0, host: 'gone', startTicks: null }; // pid 0: no process (processLiveness)
  const newSuite = (s: Store, runner = currentProcess()): number =>
    s.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan: null, cacheDir: null, runner });
  const asOlderLeftIt = (s: Store): void => void s.db.prepare("DELETE FROM kvbench_meta WHERE key LIKE '%_id_given'").run();

  it('a suite a dead runner left without a trial is dropped, and its id (shown while it ran, usable with --resume) is not given again', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = open(file);
    runOne(s);
    const empty = newSuite(s, dead);
    asOlderLeftIt(s);
    s.close();
    const again = open(file);
    expect(again.getSuite(empty)).toBeNull();
    expect(newSuite(again)).toBeGreaterThan(empty);
  });

  it('an unfinished import an older kvbench left is removed, and the ids of its suite and trials are not given again', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = open(file);
    runOne(s);
    const [suiteId, trialId] = s.atomically(() => {
      const now = new Date().toISOString();
      const systemId = s.upsertImportedSystem('lab', now).id;
      const id = s.createSuite({ systemId, driveId: null, profile: 'import', label: null, source: 'import', plan: null, cacheDir: null, runner: dead, status: 'running', createdAt: now });
      const run = s.addRun(id, { position: 0, scenarioId: 'imported', label: 'x', options: {}, trials: 0 }, 'k');
      const trial = s.startTrial({ runId: run, suiteId: id, systemId, driveId: null, hardwareSnapshotId: null, scenarioId: 'imported', trialIndex: 0, options: {}, configKey: 'k', runner: dead, cacheDir: null });
      s.finishTrial(trial, { status: 'complete', reason: null, wallMs: null, results: results(7), metrics: { x: 1 } });
      return [id, trial];
    });
    asOlderLeftIt(s);
    s.close();
    const again = open(file);
    expect(again.getSuite(suiteId)).toBeNull();
    const [nextSuite, next] = runOne(again);
    expect(nextSuite).toBeGreaterThan(suiteId);
    expect(next).toBeGreaterThan(trialId);
  });
});

describe('every delete of a trial, a suite or an endpoint run', () => {
  it('is one of those known to record the ids first (recordIdsBeforeDelete): a new one must do so too, then be counted here', () => {
    const root = path.join(import.meta.dirname, '../../../src-main');
    const found: Record<string, number> = {};
    for (const f of fs.readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts')) continue;
      const n = fs.readFileSync(path.join(root, f), 'utf8').match(/DELETE FROM (main\.)?"?(trials|suites|endpoint_runs)\b(?!_)/g)?.length ?? 0;
      if (n > 0) found[f] = n;
    }
    // store.ts: deleteSuite, deleteTrials (the trials, then the emptied suites), removeImport and dropImportSuite, recoverInterrupted's empty suites.
    expect(found).toEqual({ 'store/store.ts': 6, 'store/recover.ts': 1, 'endpoint/endpoint-store.ts': 1 });
  });
});

describe('openStore', () => {
  it('a database made before the mark (none recorded) starts from its largest id', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = openStore(file);
    addSuiteTrials(s, hw, 2, (i) => ({ results: results(100 + i) }));
    s.db.prepare("DELETE FROM kvbench_meta WHERE key LIKE '%_id_given'").run();
    const highest = maxId(s, 'trials');
    const [, next] = runOne(s);
    expect(next).toBe(highest + 1);
    s.close();
  });
});
