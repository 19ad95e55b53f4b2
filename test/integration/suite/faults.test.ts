// Faults: kill -9 of the runner or of the engine mid-trial, and database files kvbench must not touch.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { dbPaths, eventsOf, explain, fileBytes, isAlive, makeTempDir, rawTrials, removeTempDirs, runCli, runDirsIn, startCli, trialEndsAfter, waitFor, killStarted, type CliProcess } from './suite-harness.ts';

const FAKE_ENGINE = fileURLToPath(new URL('../../fixtures/fake-engine.ts', import.meta.url));
const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  removeTempDirs();
});

/**
 * How each trial of the two kill tests ends: after its 10th completed request (a fixed 3 or 4 s window
 * starved on a loaded machine, and the trials these tests need complete came out partial). 10 requests
 * take about 2 s on an idle 2-core machine, so a trial still runs well past the moment a test kills it
 * (within 25 ms of seeing it run, or of its run directory appearing, before its preparation).
 */
const TRIAL_END = trialEndsAfter(10);

/** Starts a suite with --events and collects its stdout as it comes. */
function startSuite(args: string[], cwd: string): { cli: CliProcess; stdout: () => string } {
  const cli = startCli(['suite', '--profile', 'smoke', '--no-probe', '--events', ...args], { cwd });
  started.push(cli);
  let out = '';
  cli.child.stdout!.on('data', (s: string | Buffer) => (out += String(s)));
  return { cli, stdout: () => out };
}

describe('kill -9 of the runner mid-trial', () => {
  it('keeps the database and the finished trials; the interrupted one is aborted at the next start; resume completes the suite', { timeout: 300_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const { cli, stdout } = startSuite(['--trials', '3', '--scenarios', 'storage-only', ...TRIAL_END, '--cache-dir', cache, '--db', db], tmp);
    let enginePid = 0;
    await waitFor(
      'the second trial to start',
      () => {
        const second = eventsOf(stdout()).find((e) => e.type === 'suite.trialStarted' && e.ordinal === 2);
        if (second) enginePid = second.enginePid as number;
        return second !== undefined;
      },
      120_000,
    );
    await waitFor('the second trial to write its run directory', () => runDirsIn(cache).length > 0, 60_000);
    process.kill(cli.pid, 'SIGKILL');
    const r = await cli.done;
    expect(r.signal).toBe('SIGKILL');
    // The orphaned engine notices its parent is gone, stops and cleans up on its own.
    await waitFor('the orphaned engine to exit', () => !isAlive(enginePid), 60_000);

    // Straight after the kill, before any kvbench opens it again: intact, one complete, one still "running".
    const check = openDatabase(db, { readonly: true, fileMustExist: true });
    expect(check.prepare('PRAGMA quick_check').get()).toEqual({ quick_check: 'ok' });
    check.close();
    expect(rawTrials(db).map((t) => [t.trial_index, t.status])).toEqual([
      [0, 'complete'],
      [1, 'running'],
    ]);

    const h = await runCli(['history', '--db', db, '--json'], { cwd: tmp });
    expect(h.code, explain(h)).toBe(0);
    const trials = (JSON.parse(h.stdout) as { trialIndex: number; status: string; statusReason: string | null; metrics: Record<string, number> }[]).reverse();
    expect(trials.map((t) => [t.trialIndex, t.status])).toEqual([
      [0, 'complete'],
      [1, 'aborted'],
    ]);
    expect(trials[0].metrics.wall_clock_throughput_tok_per_s).toBeGreaterThan(0);
    expect(trials[1].statusReason).toMatch(new RegExp(`runner process ${cli.pid} .* ended while this trial was running`));
    const suites = JSON.parse((await runCli(['history', '--db', db, '--suites', '--json'], { cwd: tmp })).stdout) as { id: number; status: string }[];
    expect(suites).toMatchObject([{ status: 'interrupted' }]);
    expect(runDirsIn(cache)).toEqual([]);

    const resumed = await runCli(['suite', '--resume', String(suites[0].id), '--no-probe', '--db', db], { cwd: tmp });
    expect(resumed.code, explain(resumed)).toBe(0);
    expect(resumed.stderr).toMatch(/Suite \d+ \(resumed\): 2 trial\(s\) to run/);
    expect(rawTrials(db).map((t) => [t.trial_index, t.attempt, t.status])).toEqual([
      [0, 1, 'complete'],
      [1, 1, 'aborted'],
      [1, 2, 'complete'],
      [2, 1, 'complete'],
    ]);
    const rep = await runCli(['report', '--db', db], { cwd: tmp });
    // Trial #2's interrupted attempt is superseded by its retry: no trial is missing.
    expect(rep.stdout).toMatch(/trials: 3 aggregated of 3 \(and 1 superseded attempt\)/);
    expect(rep.stdout).toMatch(/~ trial #2 attempt 1 \(id \d+\) aborted, superseded — retried: attempt 2 \(id \d+\) complete; it was: interrupted/);
  });
});

describe('kill -9 of the engine mid-trial', () => {
  it('records the trial as failed with the reason and goes on with the suite', { timeout: 240_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const { cli, stdout } = startSuite(['--trials', '2', '--scenarios', 'storage-only', ...TRIAL_END, '--cache-dir', cache, '--db', db], tmp);
    let enginePid = 0;
    await waitFor('the first trial to start', () => {
      const first = eventsOf(stdout()).find((e) => e.type === 'suite.trialStarted');
      if (first) enginePid = first.enginePid as number;
      return first !== undefined;
    }, 60_000);
    // Kill it once the measured phase runs (its run directory then carries its owner marker).
    await waitFor('the first trial to be running', () => eventsOf(stdout()).some((e) => e.type === 'suite.trialProgressed' && e.ordinal === 1 && (e.progress as { phase: string }).phase === 'running'), 60_000);
    await waitFor('the engine to write its run directory', () => runDirsIn(cache).length > 0, 60_000);
    process.kill(enginePid, 'SIGKILL');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(3);
    expect(r.stderr).toMatch(/storage-only #1\/2 FAILED .* — ENGINE_CRASHED: engine process was killed by signal SIGKILL/);
    expect(rawTrials(db).map((t) => [t.trial_index, t.status])).toEqual([
      [0, 'failed'],
      [1, 'complete'],
    ]);
    expect(rawTrials(db)[0].status_reason).toMatch(/^ENGINE_CRASHED: engine process was killed by signal SIGKILL before sending a result/);
    expect(runDirsIn(cache)).toEqual([]); // the host removed the killed engine's run directory
  });
});

describe('a suite in which no trial completes', () => {
  it('ends "failed", not "finished", and history lists it so', { timeout: 120_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    // The fake engine refuses options without a behaviour, as an engine that cannot run would: every trial fails.
    const env = { KVBENCH_ENGINE_MODULE: FAKE_ENGINE };
    const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--trials', '1', '--scenarios', 'storage-only,cpu-only', '--cache-dir', cache, '--db', db], { cwd: tmp, env });
    expect(r.code, explain(r)).toBe(3);
    expect(r.stdout).toMatch(/^Suite 1 failed \(none of its trials completed: nothing to report\): 0 complete, 0 partial, 2 failed, 0 aborted, in \d+ s\.$/m);
    // Its trials can be run again: the last line says how.
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`resume with: kvbench suite --resume 1 --db ${db}`);
    const suites = await runCli(['history', '--suites', '--db', db], { cwd: tmp });
    expect(suites.stdout).toMatch(/^\s*1 .* smoke\s+failed\s+0\s+0\s+2\s/m);
  });
});

describe('database files kvbench must not touch', () => {
  it('garbage and foreign SQLite files give a clear error and stay byte-for-byte the same', { timeout: 60_000 }, async () => {
    const tmp = makeTempDir();
    const garbage = path.join(tmp, 'garbage.db');
    fs.writeFileSync(garbage, 'PK\u0003\u0004 not a database at all '.repeat(200));
    const foreign = path.join(tmp, 'foreign.db');
    const d = openDatabase(foreign);
    d.exec("CREATE TABLE invoices (n INTEGER); INSERT INTO invoices VALUES (1)");
    d.close();
    for (const [file, message] of [
      [garbage, /is not a SQLite database .* kvbench will not touch it/],
      [foreign, /is a SQLite database of another application .*tables: invoices.* will not modify it/],
    ] as const) {
      const before = fs.readdirSync(tmp).map((n) => [n, fileBytes(path.join(tmp, n))]);
      for (const args of [['history'], ['report'], ['suite', '--profile', 'smoke', '--cache-dir', path.join(tmp, 'c'), '--plan'], ['import', garbage, '--system', 'x']]) {
        const r = await runCli([...args, '--db', file], { cwd: tmp });
        expect(r.code, explain(r)).toBe(1);
        expect(r.stderr).toMatch(message);
        expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack
      }
      expect(fs.readdirSync(tmp).filter((n) => n !== 'c').map((n) => [n, fileBytes(path.join(tmp, n))])).toEqual(before.filter(([n]) => n !== 'c'));
    }
  });
});
