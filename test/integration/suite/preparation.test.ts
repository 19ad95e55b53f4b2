// What `kvbench suite` does before its first trial: --plan creates nothing, nor does a refused plan; a signal during the
// hardware detection or the drive probe stops there and records nothing; --resume probes the drive
// only as the suite was planned, and not at all with nothing left to run, and says which. And at the
// end of a suite that ran, the cache directory levels it created are gone again.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { dbPaths, eventsOf, explain, fileBytes, hangUp, killStarted, makeTempDir, removeTempDirs, runCli, startCli, trialEndsAfter, waitFor, type CliProcess } from './suite-harness.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  removeTempDirs();
});

describe('kvbench suite --plan', () => {
  it('prints the plan and creates nothing: no database, no cache directory, no missing parent of either', async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'no-dir-yet', 'x.db');
    const cache = path.join(tmp, 'cache', 'kv');
    const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--plan', '--scenarios', 'storage-only', '--cache-dir', cache, '--db', db], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^storage-only /m);
    expect(fs.readdirSync(tmp)).toEqual([]);

    // An existing database is checked (opened as history opens it): byte for byte the same after, no -wal or -shm left.
    const existing = path.join(tmp, 'kvbench.db');
    openStore(existing).close();
    const before = fileBytes(existing);
    const again = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--plan', '--scenarios', 'storage-only', '--cache-dir', cache, '--db', existing], { cwd: tmp });
    expect(again.code, explain(again)).toBe(0);
    expect(fileBytes(existing)).toBe(before);
    expect(fs.readdirSync(tmp)).toEqual(['kvbench.db']);
  });
});

describe('kvbench suite refused (the plan does not fit)', () => {
  it('plans before it creates: no database, no cache directory, no missing parent of either is left', async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'no-dir-yet', 'x.db');
    const cache = path.join(tmp, 'newdir', 'a', 'b');
    const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--scenarios', 'storage-only', '--storage-capacity-gb', '1000000', '--cache-dir', cache, '--db', db], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/kvbench suite: refused:\n {2}.*needs 977 TiB free/);
    expect(fs.readdirSync(tmp)).toEqual([]);

    // An existing cache directory and database stay, unchanged in what they hold.
    fs.mkdirSync(path.join(tmp, 'cache'));
    const existing = path.join(tmp, 'kvbench.db');
    openStore(existing).close();
    const again = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--scenarios', 'storage-only', '--storage-capacity-gb', '1000000', '--cache-dir', path.join(tmp, 'cache'), '--db', existing], { cwd: tmp });
    expect(again.code, explain(again)).toBe(1);
    expect(fs.readdirSync(tmp).sort()).toEqual(['cache', 'kvbench.db']);
    expect(fs.readdirSync(path.join(tmp, 'cache'))).toEqual([]);
    expect(countRows(existing, 'suites')).toBe(0);
  });
});

/** Rows of `table`, read straight from SQLite (read-only). */
function countRows(db: string, table: 'suites' | 'trials'): number {
  const d = openDatabase(db, { readonly: true, fileMustExist: true });
  try {
    return (d.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    d.close();
  }
}

describe('kvbench suite stopped during the drive probe', () => {
  it('stops the probe, removes its files, plans nothing, records no suite, says so and exits 130', { timeout: 120_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const cli = startCli(['suite', '--profile', 'smoke', '--scenarios', 'storage-only', '--trials', '1', '--cache-dir', cache, '--db', db], { cwd: tmp });
    started.push(cli);
    await waitFor('the drive probe to start', () => fs.readdirSync(cache).some((n) => n.startsWith('kvbench-probe-')), 60_000);
    process.kill(cli.pid, 'SIGINT');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(130);
    expect(r.stderr).toMatch(/SIGINT: stopping before the suite starts/);
    expect(r.stderr).toMatch(/Stopped by SIGINT before the first trial: no suite was planned or recorded\.\n$/);
    expect(r.stderr).not.toMatch(/stopping the current trial|Suite \d+|Full tables|storage-only /);
    // A new suite creates its database only once its plan fits: there is none.
    expect(fs.existsSync(db)).toBe(false);
    expect(fs.readdirSync(cache)).toEqual([]);
  });

  it('a hang-up (SIGHUP to the process group, the probe process included) stops the probe as cleanly and exits 129', { timeout: 120_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const cli = startCli(['suite', '--profile', 'smoke', '--scenarios', 'storage-only', '--trials', '1', '--cache-dir', cache, '--db', db], { cwd: tmp, ownProcessGroup: true });
    started.push(cli);
    await waitFor('the drive probe to start', () => fs.readdirSync(cache).some((n) => n.startsWith('kvbench-probe-')), 60_000);
    hangUp(cli);
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(129);
    expect(r.stderr).toMatch(/Stopped by SIGHUP before the first trial: no suite was planned or recorded\.\n$/);
    expect(fs.existsSync(db)).toBe(false);
    expect(fs.readdirSync(cache)).toEqual([]);
  });
});

/**
 * A suite of one storage-only trial, stopped by Ctrl-C once that trial runs: cancelled, its trial
 * aborted, so a resume has one trial left to run. Returns the suite's id.
 */
async function cancelledSuite(args: string[], cwd: string, db: string, cache: string): Promise<number> {
  // The resumed trial must complete: it ends after 10 requests (a resume keeps the plan's options), not
  // at a 5 s window that a loaded machine can close before any request completes. 10 take about 2 s
  // idle, so the trial is still running when the Ctrl-C comes.
  const cli = startCli(['suite', '--profile', 'smoke', '--scenarios', 'storage-only', '--trials', '1', ...trialEndsAfter(10), '--events', ...args, '--cache-dir', cache, '--db', db], { cwd });
  started.push(cli);
  let out = '';
  cli.child.stdout!.on('data', (b: string | Buffer) => (out += String(b)));
  // Hardware detection and the drive probe come first: under load they took more than a minute.
  await waitFor('the trial to be running', () => eventsOf(out).some((e) => e.type === 'suite.trialProgressed' && (e.progress as { phase: string }).phase === 'running'), 180_000);
  process.kill(cli.pid, 'SIGINT');
  const r = await cli.done;
  expect(r.code, explain(r)).toBe(130);
  const id = eventsOf(out).find((e) => e.type === 'suite.started')!.suiteId as number;
  // With --events the results text, the resume command last, goes to stderr.
  expect(r.stderr).toMatch(new RegExp(`Suite ${id} cancelled: 0 complete, 0 partial, 0 failed, 1 aborted, in \\d+ s\\.\\n`));
  expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`resume with: kvbench suite --resume ${id} --db ${db}`);
  return id;
}

/** Whether the hardware stored with the suite's newest trial has the drive's probed limits. */
function newestTrialProbed(db: string): boolean {
  const store = openStore(db, { readonly: true });
  try {
    const newest = store.listTrials({ order: 'desc', limit: 1 })[0];
    return (store.trialHardware(newest.id)?.cacheDir?.bandwidth ?? null) !== null;
  } finally {
    store.close();
  }
}

describe('kvbench suite --resume and the drive probe', () => {
  it('planned with --no-probe: resumes without probing, and says so', { timeout: 360_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const id = await cancelledSuite(['--no-probe'], tmp, db, cache);
    const r = await runCli(['suite', '--resume', String(id), '--db', db], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toContain(`Detecting hardware, without the drive probe (suite ${id} was planned without it) …`);
    expect(r.stderr).toMatch(/Suite \d+ \(resumed\): 1 trial\(s\) to run/);
    expect(r.stdout + r.stderr, 'a suite with every trial complete has nothing to resume').not.toContain('resume with');
    expect(newestTrialProbed(db)).toBe(false);
  });

  it('planned with the probe: probes again to resume, and not at all once nothing is left to run', { timeout: 360_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const id = await cancelledSuite([], tmp, db, cache);
    const r = await runCli(['suite', '--resume', String(id), '--db', db], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stderr).toContain(`Detecting hardware and probing the drive (suite ${id} was planned with it) …`);
    expect(newestTrialProbed(db)).toBe(true);

    const done = await runCli(['suite', '--resume', String(id), '--db', db], { cwd: tmp });
    expect(done.code, explain(done)).toBe(0);
    expect(done.stderr).toContain(`Detecting hardware, without the drive probe (suite ${id} has no trial left to run) …`);
    expect(done.stderr).toMatch(/Suite \d+ \(resumed\): 0 trial\(s\) to run/);
    expect(done.stdout + done.stderr).not.toContain('resume with');
    expect(fs.readdirSync(cache)).toEqual([]);
  });
});

describe('kvbench suite that ran', () => {
  it('removes the cache directory levels it created when it ends; a resume creates and removes them again', { timeout: 120_000 }, async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    const cache = path.join(tmp, 'made', 'by', 'suite');
    // The fake engine refuses options without a behaviour: every trial fails fast, and the suite can be resumed.
    const env = { KVBENCH_ENGINE_MODULE: fileURLToPath(new URL('../../fixtures/fake-engine.ts', import.meta.url)) };
    const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--trials', '1', '--scenarios', 'storage-only', '--cache-dir', cache, '--db', db], { cwd: tmp, env });
    expect(r.code, explain(r)).toBe(3);
    expect(fs.readdirSync(tmp).sort(), 'no level of the cache directory is left').toEqual(['kvbench.db']);
    const resumed = await runCli(['suite', '--resume', '1', '--db', db], { cwd: tmp, env });
    expect(resumed.code, explain(resumed)).toBe(3);
    expect(resumed.stderr).toMatch(/Suite 1 \(resumed\): 1 trial\(s\) to run/);
    expect(fs.readdirSync(tmp).sort()).toEqual(['kvbench.db']);
  });
});
