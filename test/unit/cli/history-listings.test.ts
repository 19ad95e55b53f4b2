// `kvbench history --suites` and `--systems` list something other than trials: a trial filter beside
// them was silently ignored (every suite listed for `--suites --status failed --since 2030-01-01`), and
// --systems silently won over --suites. Such combinations are refused, naming the flags.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { runInProcess } from './in-process.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { addSuiteTrials } from '../store/seed-store.ts';

afterEach(removeTempDirs);

describe('kvbench history listings and filters', () => {
  it('refuses filters a listing would ignore, and two listings at once', async () => {
    const db = path.join(tempDir(), 'kvbench.db');
    openStore(db).close();
    const history = (...args: string[]) => runInProcess(() => historyCommand([...args, '--db', db]));

    const suites = await history('--suites', '--status', 'failed', '--since', '2030-01-01', '--model', 'nope');
    expect(suites.code).toBe(1);
    expect(suites.stdout).toBe('');
    expect(suites.stderr).toBe(
      'kvbench history: --suites lists suites, filtered by --system and --label only: --status, --model, --since filter trials (list them without --suites, e.g. kvbench history --status …)\n',
    );
    const both = await history('--suites', '--systems');
    expect(both.code).toBe(1);
    expect(both.stderr).toBe('kvbench history: --suites and --systems are two listings: give one\n');
    const systems = await history('--systems', '--system', 'lab1', '--scenario', 'cpu-only');
    expect(systems.code).toBe(1);
    expect(systems.stderr).toBe('kvbench history: --systems lists every system and drive: --scenario, --system cannot be given with it\n');

    // What each listing does take still works.
    for (const args of [['--suites'], ['--suites', '--limit', '3'], ['--systems'], ['--status', 'failed', '--since', '2030-01-01']]) {
      const r = await history(...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
  });

  it('shows a reason longer than the column cut with an ellipsis, and a short one whole', async () => {
    const db = path.join(tempDir(), 'kvbench.db');
    const long = 'timed out after its 126 s wall-clock limit, no results kept: engine did not stop within 30000 ms of cancel';
    const short = 'stopped: kvbench received SIGTERM';
    const store = openStore(db);
    try {
      const hw = fakeHardware();
      store.upsertDetectedSystem(hw);
      const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 2, scenarios: ['storage-only'] });
      const suiteId = store.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess() });
      const run = store.listRuns(suiteId)[0];
      const snapshotId = store.saveHardwareSnapshot(hw);
      for (const [i, reason] of [long, short].entries()) {
        const id = store.startTrial({ runId: run.id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: snapshotId, scenarioId: run.scenarioId, trialIndex: i, options: run.options, configKey: run.configKey, runner: currentProcess(), cacheDir: '/mnt/kv' });
        store.finishTrial(id, { status: 'aborted', reason, wallMs: 10 });
      }
    } finally {
      store.close();
    }
    const r = await runInProcess(() => historyCommand(['--db', db]));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(` ${long.slice(0, 59)}…\n`);
    expect(r.stdout).not.toContain(long.slice(0, 61));
    expect(r.stdout).toMatch(new RegExp(` ${short}\\s*\\n`));
    expect(r.stdout).not.toContain(`${short}…`);
  });

  it('lists a finished suite in which no trial completed as failed, and its report says so; the JSON keeps the stored status beside the outcome', async () => {
    const db = path.join(tempDir(), 'kvbench.db');
    const store = openStore(db);
    let failedId = 0;
    let okId = 0;
    try {
      const hw = fakeHardware();
      store.upsertDetectedSystem(hw);
      const snapshotId = store.saveHardwareSnapshot(hw);
      const suiteOf = (status: 'failed' | 'complete'): number => {
        const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1, scenarios: ['storage-only'] });
        const suiteId = store.createSuite({ systemId: hw.system.id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess() });
        const run = store.listRuns(suiteId)[0];
        const id = store.startTrial({ runId: run.id, suiteId, systemId: hw.system.id, driveId: null, hardwareSnapshotId: snapshotId, scenarioId: run.scenarioId, trialIndex: 0, options: run.options, configKey: run.configKey, runner: currentProcess(), cacheDir: '/mnt/kv' });
        if (status === 'failed') store.finishTrial(id, { status: 'failed', reason: 'ENGINE_CRASHED: the engine could not be started: spawn ELOOP', wallMs: 10 });
        else store.finishTrial(id, { status: 'complete', reason: null, wallMs: 10, results: kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown> });
        store.setSuiteStatus(suiteId, 'finished');
        return suiteId;
      };
      failedId = suiteOf('failed');
      okId = suiteOf('complete');
    } finally {
      store.close();
    }
    const suites = await runInProcess(() => historyCommand(['--suites', '--db', db]));
    expect(suites.code, suites.stderr).toBe(0);
    const row = (id: number) => suites.stdout.split('\n').find((l) => new RegExp(`^\\s*${id}\\s`).test(l));
    expect(row(failedId)).toMatch(/ smoke\s+failed\s+0\s+0\s+1\s+0\s+0/);
    expect(row(okId)).toMatch(/ smoke\s+finished\s+1\s+0\s+0\s+0\s+0/);
    const json = JSON.parse((await runInProcess(() => historyCommand(['--suites', '--json', '--db', db]))).stdout) as { id: number; status: string; outcome: string }[];
    expect(json.map((s) => [s.id, s.status, s.outcome]).sort()).toEqual([
      [failedId, 'finished', 'failed'],
      [okId, 'finished', 'finished'],
    ]);
    const rep = await runInProcess(() => reportCommand(['--suite', String(failedId), '--db', db]));
    expect(rep.stdout).toMatch(new RegExp(`^Suite ${failedId} \\(smoke\\), failed, started `, 'm'));
  });

  it('names each trial\'s and suite\'s drive, and marks the trials the report flags', async () => {
    // rev7 #11: a RAM loop device's trials and a disk's read alike ("vm", "stor rd 2.12 GB/s", unmarked).
    const dir = tempDir();
    const store = openStore(dbIn(dir));
    try {
      await importDrive(store, dir, 'ram disk loop0 on tmpfs of a long name', [{ tokPerS: 300, ramBacked: true }]);
      await importDrive(store, dir, 'B-disk', [{ tokPerS: 100 }]);
    } finally {
      store.close();
    }
    const history = (...args: string[]) => runInProcess(() => historyCommand([...args, '--db', dbIn(dir)]));
    const trials = await history();
    expect(trials.code, trials.stderr).toBe(0);
    const lines = trials.stdout.split('\n');
    expect(lines[0]).toMatch(/^trial\s+started\s+suite\s+label\s+system\s+drive\s+scenario\s+#\s+status\s+!\s+tok\/s/);
    expect(lines.find((l) => l.includes('B-disk'))).toMatch(/ B-disk\s+storage-only\s+1\s+complete\s+100 /);
    expect(lines.find((l) => l.includes('ram disk'))).toMatch(/ ram disk loop0 on tmpfs of …\s+storage-only\s+1\s+complete\s+!\s+300 /);
    expect(trials.stdout).toContain('!: a trial the report flags (a RAM-backed cache directory');
    const json = JSON.parse((await history('--json')).stdout) as { driveLabel: string; cautions: string[] }[];
    expect(json.map((t) => [t.driveLabel, t.cautions.length])).toEqual([
      ['B-disk', 0],
      ['ram disk loop0 on tmpfs of a long name', 1],
    ]);
    const suites = await history('--suites');
    const suiteLines = suites.stdout.split('\n');
    expect(suiteLines[0]).toMatch(/^suite\s+created\s+system\s+drive\s+profile/);
    expect(suiteLines[0]).toMatch(/running\s+deleted\s+!$/);
    expect(suiteLines.find((l) => l.includes('B-disk'))).toMatch(/ 0$/);
    expect(suiteLines.find((l) => l.includes('ram disk'))).toMatch(/ 1$/);
    expect(suites.stdout).toContain('!: how many of its trials the report flags');
  });
});

describe('kvbench history --suites: deleted trials', () => {
  it('counts in a deleted column the complete trials deleted from each suite, as --json does in trialsDeleted, and says what it means', async () => {
    const db = path.join(tempDir(), 'kvbench.db');
    const store = openStore(db);
    let deletedFrom = 0;
    let intact = 0;
    try {
      const results = (): Record<string, unknown> => kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown>;
      deletedFrom = addSuiteTrials(store, fakeHardware(), 3, () => ({ results: results() }));
      intact = addSuiteTrials(store, fakeHardware(), 2, () => ({ results: results() }));
      const [, second, third] = store.listTrials({ suiteIds: [deletedFrom], order: 'asc' });
      store.deleteTrials([second.id, third.id]);
      for (const id of [deletedFrom, intact]) store.setSuiteStatus(id, 'finished');
    } finally {
      store.close();
    }
    const suites = await runInProcess(() => historyCommand(['--suites', '--db', db]));
    expect(suites.code, suites.stderr).toBe(0);
    const lines = suites.stdout.split('\n');
    expect(lines[0]).toMatch(/\scomplete\s+partial\s+failed\s+aborted\s+running\s+deleted\s+!$/);
    const row = (id: number) => lines.find((l) => new RegExp(`^\\s*${id}\\s`).test(l));
    // complete, partial, failed, aborted, running, deleted (then the flagged count, if any)
    expect(row(deletedFrom)).toMatch(/ finished\s+1\s+0\s+0\s+0\s+0\s+2(\s+\d+)?$/);
    expect(row(intact)).toMatch(/ finished\s+2\s+0\s+0\s+0\s+0\s+0(\s+\d+)?$/);
    expect(suites.stdout).toContain('deleted: complete trials deleted from the suite (in the app); kvbench suite --resume does not run them again, --resume ID --rerun-deleted does\n');
    const json = JSON.parse((await runInProcess(() => historyCommand(['--suites', '--json', '--db', db]))).stdout) as { id: number; trialsDeleted: number }[];
    expect(json.map((s) => [s.id, s.trialsDeleted]).sort()).toEqual([
      [deletedFrom, 2],
      [intact, 0],
    ]);

    // No legend where nothing was deleted.
    const store2 = openStore(db);
    try {
      store2.deleteSuite(deletedFrom);
    } finally {
      store2.close();
    }
    const clean = await runInProcess(() => historyCommand(['--suites', '--db', db]));
    expect(clean.stdout).not.toContain('deleted:');
  });
});
