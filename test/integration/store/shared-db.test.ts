// The CLI and the app on one database at the same time: WAL lets readers run beside a writer, and
// busy_timeout makes a second writer wait for the lock instead of failing.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { fakeHardware, referenceResultsNew } from '../../unit/store/fixtures.ts';
import { explain, makeTempDir, removeTempDirs, runCli, sleepMs } from '../cli/cli-harness.ts';

let app: Store | null = null;
afterEach(() => {
  app?.close();
  app = null;
  removeTempDirs();
});

describe('one database, two processes', () => {
  it('the CLI imports and lists while the app holds a write lock and keeps writing', { timeout: 90_000 }, async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    app = openStore(db); // "the app"
    const hw = fakeHardware();
    app.upsertDetectedSystem(hw);
    const suiteId = app.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: 'app', source: 'suite', plan: null, cacheDir: null, runner: currentProcess() });
    const runId = app.ensureRun(suiteId, 'storage-only', 'Storage only', 'k', {});
    const files = [1, 2, 3].map((i) => {
      const f = path.join(tmp, `r${i}.json`);
      fs.writeFileSync(f, JSON.stringify(referenceResultsNew({ tokPerS: i, storageTokPerS: i })));
      return f;
    });

    // The app takes the write lock and holds it for 1.5 s while the CLI starts writing.
    app.db.exec('BEGIN IMMEDIATE');
    const imported = runCli(['import', ...files, '--system', 'cli-side', '--db', db], { cwd: tmp });
    await sleepMs(1500);
    app.db.exec('COMMIT');
    // Then both write at once: the app a trial every few ms, the CLI its import; and a reader lists.
    let appWrites = 0;
    const writer = setInterval(() => {
      const id = app!.startTrial({ runId, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: null, scenarioId: 'storage-only', trialIndex: appWrites, options: {}, configKey: 'k', runner: currentProcess(), cacheDir: null });
      app!.finishTrial(id, { status: 'complete', reason: null, wallMs: 1, metrics: { wall_clock_throughput_tok_per_s: appWrites } });
      appWrites += 1;
    }, 5);
    const [imp, hist] = await Promise.all([imported, runCli(['history', '--db', db, '--json', '--limit', '0'], { cwd: tmp })]);
    clearInterval(writer);
    expect(imp.code, explain(imp)).toBe(0);
    expect(imp.stdout.match(/^imported /gm)).toHaveLength(3);
    expect(hist.code, explain(hist)).toBe(0);
    expect(Array.isArray(JSON.parse(hist.stdout))).toBe(true);
    expect(appWrites).toBeGreaterThan(0);
    expect(app.listTrials({ suiteIds: [suiteId] })).toHaveLength(appWrites);
    expect(app.listTrials({ systemIds: [app.resolveSystem('cli-side').id] })).toHaveLength(3);
    expect(app.db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
  });

  it('history, report and export read while another process holds a write transaction, without waiting for it', { timeout: 90_000 }, async () => {
    // review #7: they opened read-write and waited the whole busy timeout (10 s) for the write lock, then failed.
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    const f = path.join(tmp, 'r.json');
    fs.writeFileSync(f, JSON.stringify(referenceResultsNew({ tokPerS: 5, storageTokPerS: 5 })));
    const imp = await runCli(['import', f, '--system', 'lab', '--db', db], { cwd: tmp });
    expect(imp.code, explain(imp)).toBe(0);
    app = openStore(db);
    app.db.exec('BEGIN IMMEDIATE'); // "a long import in another process"
    app.db.prepare('UPDATE systems SET label = label').run();
    try {
      const runs = await Promise.all([
        runCli(['history', '--db', db, '--limit', '2'], { cwd: tmp }),
        runCli(['report', '--all', '--db', db], { cwd: tmp }),
        runCli(['export', '--db', db, '--out', path.join(tmp, 'x.csv')], { cwd: tmp }),
      ]);
      for (const r of runs) {
        expect(r.code, explain(r)).toBe(0);
      }
      expect(runs[0].stdout).toMatch(/lab/);
      expect(fs.readFileSync(path.join(tmp, 'x.csv'), 'utf8').trimEnd().split('\r\n')).toHaveLength(2);
    } finally {
      app.db.exec('COMMIT');
    }
  });
});
