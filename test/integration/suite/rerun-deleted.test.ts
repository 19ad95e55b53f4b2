// A complete trial the user deleted (a disturbed one: someone else used the machine) is not run by
// a plain --resume; `kvbench suite --resume ID --rerun-deleted` runs its slot again into the same
// suite, and --plan says so first. A re-run stopped before it completes keeps its attempt and leaves
// the slot deleted (run again only by --rerun-deleted, which the end line says); one that completes
// clears it, and the suite's tallies add up. The real CLI, real engine processes, a real SQLite file.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { dbPaths, eventsOf, explain, isAlive, killStarted, makeTempDir, rawTrials, removeTempDirs, runCli, startCli, waitFor, waitForEnginePid, type CliProcess } from './suite-harness.ts';

const started: CliProcess[] = [];
const stoppedEngines: number[] = [];
afterEach(async () => {
  for (const pid of stoppedEngines.splice(0)) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // gone already
    }
  }
  await killStarted(started);
  removeTempDirs();
});

interface SuiteJson {
  id: number;
  trialCounts: Record<string, number>;
  trialsLeft: number;
  trialsDeleted: number;
}

/** Rows in deleted_trial_slots, straight from SQLite (read-only). */
function deletedRows(db: string): number {
  const d = openDatabase(db, { readonly: true, fileMustExist: true });
  try {
    return (d.prepare('SELECT COUNT(*) AS n FROM deleted_trial_slots').get() as { n: number }).n;
  } finally {
    d.close();
  }
}

describe('kvbench suite --resume ID --rerun-deleted', () => {
  it('runs a deleted trial again into its suite only when asked; --plan shows it; a stopped re-run leaves it deleted, a complete one clears it', { timeout: 300_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const cli = (...args: string[]) => runCli([...args, '--db', db], { cwd: tmp });
    const suiteJson = async (): Promise<SuiteJson> => {
      const r = await cli('history', '--suites', '--json');
      expect(r.code, explain(r)).toBe(0);
      return (JSON.parse(r.stdout) as SuiteJson[])[0];
    };

    // Each trial ends after its first completed request (robust on a loaded machine); 30 s is only the cap.
    const first = await runCli(
      ['suite', '--profile', 'smoke', '--no-probe', '--trials', '2', '--scenarios', 'storage-only', '--max-requests', '1', '--duration', '30', '--cache-dir', cache, '--db', db],
      { cwd: tmp },
    );
    expect(first.code, explain(first)).toBe(0);
    const [, second] = rawTrials(db);
    expect(second).toMatchObject({ trial_index: 1, status: 'complete' });

    // The user deletes the second trial (the app's Delete: the store's deleteTrials).
    const store = openStore(db);
    store.deleteTrials([second.id]);
    store.close();
    expect(await suiteJson()).toMatchObject({ id: 1, trialsLeft: 0, trialsDeleted: 1, trialCounts: { complete: 1 } });
    const suites = await cli('history', '--suites');
    expect(suites.stdout).toMatch(/running\s+deleted\s+/);
    expect(suites.stdout).toMatch(/^1\s.*finished\s+1\s+0\s+0\s+0\s+0\s+1\s*$/m);
    expect(suites.stdout).toContain('kvbench suite --resume does not run them again, --resume ID --rerun-deleted does');

    // A plain resume runs nothing, and says what it leaves.
    const plain = await cli('suite', '--resume', '1');
    expect(plain.code, explain(plain)).toBe(0);
    expect(plain.stderr).toContain('note: suite 1 has 1 deleted trial(s), not run: storage-only #2/2 (--rerun-deleted runs them again).');
    expect(plain.stdout).toMatch(/^Suite 1 finished: 0 complete/m);
    expect(rawTrials(db)).toHaveLength(1);

    // --plan: what each would run, and nothing run or written.
    const planPlain = await cli('suite', '--resume', '1', '--plan');
    expect(planPlain.code, explain(planPlain)).toBe(0);
    expect(planPlain.stdout).toContain('No trial to run.');
    expect(planPlain.stdout).toContain('Not run: 1 deleted trial(s) (storage-only #2/2); --rerun-deleted runs them again.');
    const planRerun = await cli('suite', '--resume', '1', '--rerun-deleted', '--plan');
    expect(planRerun.code, explain(planRerun)).toBe(0);
    expect(planRerun.stdout).toContain('[1/1] storage-only #2/2: its complete trial was deleted: runs again');
    expect(planRerun.stdout).toMatch(/^1 trial\(s\), about \d+ s; the drive probe: not run \(suite 1 was planned without it\)\.$/m);
    expect(rawTrials(db)).toHaveLength(1);

    // A re-run stopped before it completes: the engine is held (SIGSTOP) so that it cannot finish
    // before the stop lands, and let go once the CLI has taken the signal.
    const stopping = startCli(['suite', '--resume', '1', '--rerun-deleted', '--db', db], { cwd: tmp });
    started.push(stopping);
    const enginePid = await waitForEnginePid(stopping.pid, 60_000);
    process.kill(enginePid, 'SIGSTOP');
    stoppedEngines.push(enginePid);
    expect(rawTrials(db).at(-1)).toMatchObject({ trial_index: 1, status: 'running' });
    stopping.child.kill('SIGTERM');
    await waitFor('the CLI to take SIGTERM', () => stopping.stderrSoFar().includes('SIGTERM: stopping the current trial'), 30_000);
    // Let go (unless the host already killed it: an engine stopped before it said it was ready is killed, not waited for).
    for (const pid of stoppedEngines.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGCONT');
    const stopped = await stopping.done;
    expect(stopped.code, explain(stopped)).toBe(143);
    expect(stopped.stderr).toContain('Running again 1 deleted trial(s) into suite 1: storage-only #2/2.');
    expect(stopped.stdout).toMatch(/storage-only #2\/2 ABORTED/);
    expect(stopped.stdout.trimEnd().split('\n').at(-1)).toBe(`resume with: kvbench suite --resume 1 --rerun-deleted --db ${db}`);
    expect(rawTrials(db).at(-1)).toMatchObject({ trial_index: 1, status: 'aborted' });
    expect(await suiteJson()).toMatchObject({ trialsLeft: 0, trialsDeleted: 1, trialCounts: { complete: 1, aborted: 1 } });
    expect(deletedRows(db)).toBe(1);

    // Run again to completion: the slot's record goes, and the suite has its two complete trials.
    const rerun = await cli('suite', '--resume', '1', '--rerun-deleted', '--events');
    expect(rerun.code, explain(rerun)).toBe(0);
    const finished = eventsOf(rerun.stdout).filter((e) => e.type === 'suite.trialFinished');
    expect(finished.map((e) => [e.scenarioId, e.trialIndex, e.status])).toEqual([['storage-only', 1, 'complete']]);
    expect(rerun.stderr).not.toContain('resume with');
    expect(deletedRows(db)).toBe(0);
    expect(await suiteJson()).toMatchObject({ trialsLeft: 0, trialsDeleted: 0, trialCounts: { complete: 2, aborted: 1 } });
    const report = await cli('report', '--suite', '1');
    expect(report.code, explain(report)).toBe(0);
    expect(report.stdout).toMatch(/trials: 2 aggregated of 2/);
    const again = await cli('suite', '--resume', '1', '--rerun-deleted', '--plan');
    expect(again.stdout).toContain('No trial to run.');
    expect(again.stdout).not.toContain('Not run');
  });

  it('is refused without --resume, and --resume --plan creates no database', async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const alone = await runCli(['suite', '--rerun-deleted', '--cache-dir', cache, '--db', db], { cwd: tmp });
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain("--rerun-deleted runs a stored suite's deleted trials again: give it with --resume ID");
    const plan = await runCli(['suite', '--resume', '1', '--rerun-deleted', '--plan', '--db', db], { cwd: tmp });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toContain(`no database at ${db}`);
    expect(fs.existsSync(db)).toBe(false);
  });
});
