// Runs that end early: Ctrl-C (SIGINT to the CLI) stops the engine gracefully and still writes
// partial results; an engine killed outright is reported as a crash, and its run directory removed.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TINY_RUN_FLAGS,
  cacheDirWithForeignFile,
  explain,
  hangUp,
  isAlive,
  killStarted,
  makeTempDir,
  olderNode,
  readResults,
  removeTempDirs,
  runDirsIn,
  sleepMs,
  snapshotDir,
  startCli,
  waitFor,
  waitForEnginePid,
  type CliProcess,
} from './cli-harness.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  removeTempDirs();
});

function startThirtySecondRun(cacheDir: string, output: string, cwd: string): CliProcess {
  const cli = startCli(
    ['run', ...TINY_RUN_FLAGS, '--num-users', '4', '--duration', '30', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '3', '--output', output],
    { cwd },
  );
  started.push(cli);
  return cli;
}

/** Waits until the engine has created its run directory in `cacheDir` (the measured phase is under way). */
async function waitForRunDir(cli: CliProcess, cacheDir: string): Promise<void> {
  let exited = false;
  void cli.done.then(() => (exited = true));
  await waitFor('the engine to create its run directory', () => exited || runDirsIn(cacheDir).length > 0);
  expect(exited, `the CLI exited before the run began:\n${cli.stderrSoFar()}`).toBe(false);
}

describe('kvbench run, interrupted', () => {
  it('on SIGINT stops, writes partial results, exits 130 and cleans the cache dir', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const before = snapshotDir(cacheDir);
    const output = path.join(tmp, 'results.json');
    const cli = startThirtySecondRun(cacheDir, output, tmp);
    await waitForRunDir(cli, cacheDir);
    await sleepMs(2000);

    process.kill(cli.pid, 'SIGINT'); // the CLI only, as a terminal's Ctrl-C would reach it first
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(130);
    expect(r.signal).toBeNull();
    expect(r.stderr).toMatch(/SIGINT: stopping; partial results will be written/);
    expect(r.stderr.match(/run is PARTIAL: .+/g), 'said once').toHaveLength(1);

    const res = readResults(output);
    expect(res.kvbench.status).toBe('partial');
    // The signal closed the window, not the planned 30 s (said by the engine, not by a stopwatch).
    expect(res.kvbench.measured_window.closed_by).toBe('cancel');
    expect(res.kvbench.status_reason).toEqual(expect.stringMatching(/\S/));
    expect(res.kvbench.status_reason).toMatch(/cancel|interrupt|SIGINT/i);
    expect(res.kvbench.elapsed_ns).toBeLessThan(30e9);
    expect(res.end_to_end_latencies).toHaveLength(res.requests_completed);
    if (res.requests_completed > 0) expect(res.summary?.total_requests).toBe(res.requests_completed);

    expect(snapshotDir(cacheDir), 'cache dir as before: foreign file intact, no run directory').toEqual(before);
  });

  it('on a hang-up (SIGHUP to its process group, engine included: a dropped SSH session) stops, writes partial results and exits 129', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const before = snapshotDir(cacheDir);
    const cli = startCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '4', '--duration', '30', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '3', '--output', output],
      { cwd: tmp, ownProcessGroup: true },
    );
    started.push(cli);
    await waitForRunDir(cli, cacheDir);
    await sleepMs(2000);

    hangUp(cli);
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(129);
    expect(r.stderr).toMatch(/SIGHUP: stopping; partial results will be written\n/);
    // Partial, or aborted if the (loaded) machine had not opened the measured window yet: either way
    // the engine was cancelled and wrote its results, where the hang-up used to end both at once.
    const res = readResults(output);
    expect(res.kvbench.status).toMatch(/^(partial|aborted)$/);
    expect(res.kvbench.status_reason).toMatch(/cancel/i);
    expect(snapshotDir(cacheDir), 'cache dir as before: no run directory').toEqual(before);
  });

  it('takes a SIGTERM repeated at once (a stop sent to the whole process group reaches it twice) as one: stops gracefully, exits 143', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const output = path.join(tmp, 'results.json');
    const cli = startThirtySecondRun(cacheDir, output, tmp);
    await waitForRunDir(cli, cacheDir);
    await sleepMs(2000);

    // What systemd's stop does under the Node 20 wrapper: the group's SIGTERM, then the wrapper's copy.
    process.kill(cli.pid, 'SIGTERM');
    await sleepMs(50);
    process.kill(cli.pid, 'SIGTERM');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(143);
    expect(r.stderr).not.toMatch(/ENGINE_CRASHED|killed/);
    const res = readResults(output);
    expect(res.kvbench.status).toMatch(/^(partial|aborted)$/);
    expect(res.kvbench.status_reason).toMatch(/SIGTERM/);
  });

  const node20 = olderNode();
  for (const [to, whom] of [
    ['the wrapper alone (kill -INT, timeout -s INT)', 'pid'],
    ['the process group (a terminal\'s Ctrl-C reaches the real kvbench directly and through the wrapper: one stop)', 'group'],
  ] as const) {
    it.skipIf(node20 === null)(`through bin/kvbench.js's re-exec on an older Node, a SIGINT to ${to} stops gracefully and exits 130`, async () => {
      const tmp = makeTempDir();
      const { cacheDir } = cacheDirWithForeignFile(tmp);
      const output = path.join(tmp, 'results.json');
      const cli = startCli(
        ['run', ...TINY_RUN_FLAGS, '--num-users', '4', '--duration', '30', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '3', '--output', output],
        { cwd: tmp, node: node20!, ownProcessGroup: true },
      );
      started.push(cli);
      await waitForRunDir(cli, cacheDir);
      await sleepMs(2000);

      process.kill(whom === 'pid' ? cli.pid : -cli.pid, 'SIGINT');
      const r = await cli.done;
      expect(r.code, explain(r)).toBe(130);
      expect(r.stderr.match(/SIGINT: stopping; partial results will be written/g), 'one stop').toHaveLength(1);
      expect(r.stderr).not.toMatch(/ENGINE_CRASHED|killed/);
      const res = readResults(output);
      expect(res.kvbench.status).toMatch(/^(partial|aborted)$/);
      expect(res.kvbench.status_reason).toMatch(/SIGINT/);
    });
  }

  it('on SIGINT while waiting for --start-at stops at once: ABORTED, nothing measured, cache dir clean', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const before = snapshotDir(cacheDir);
    const output = path.join(tmp, 'results.json');
    const startAt = Math.ceil(Date.now() / 1000) + 300;
    const cli = startCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '5', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--start-at', String(startAt), '--output', output],
      { cwd: tmp },
    );
    started.push(cli);
    await waitFor('the engine to wait for --start-at', () => cli.stderrSoFar().includes('for --start-at'));
    // The wait is cut short: otherwise it would outlast the test's timeout (--start-at is 300 s away).
    process.kill(cli.pid, 'SIGINT');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(130);
    const res = readResults(output);
    expect(res.kvbench.status).toBe('aborted');
    expect(res.kvbench.status_reason).toBe('cancelled before the measured window opened: interrupted by SIGINT');
    expect(res.requests_completed).toBe(0);
    expect(snapshotDir(cacheDir)).toEqual(before);
  });

  it('on SIGINT during --warm-up: ABORTED too (the window never opened), not a PARTIAL trial of nothing', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const cli = startCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '5', '--warm-up', '60', '--cpu-mem-gb', '0', '--cache-dir', path.join(tmp, 'cache'), '--output', output],
      { cwd: tmp },
    );
    started.push(cli);
    await waitFor('the warm-up to start', () => cli.stderrSoFar().includes('warming up for 60 s'));
    process.kill(cli.pid, 'SIGINT');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(130);
    const res = readResults(output);
    expect(res.kvbench.status).toBe('aborted');
    expect(res.kvbench.status_reason).toBe('cancelled before the measured window opened: interrupted by SIGINT');
  });

  it('on a SIGTERM to the engine alone (a service manager, an admin), records that reason, not a user cancel', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const output = path.join(tmp, 'results.json');
    const cli = startThirtySecondRun(cacheDir, output, tmp);
    const enginePid = await waitForEnginePid(cli.pid);
    await waitForRunDir(cli, cacheDir);
    await sleepMs(1500);

    process.kill(enginePid, 'SIGTERM');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(3);
    const res = readResults(output);
    expect(res.kvbench.status).toBe('partial');
    expect(res.kvbench.status_reason).toBe('cancelled before the planned end: the engine received SIGTERM');
    expect(r.stderr).toContain('run is PARTIAL: cancelled before the planned end: the engine received SIGTERM');
  });

  it('reports a killed engine as a crash and removes its run directory', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const before = snapshotDir(cacheDir);
    const output = path.join(tmp, 'results.json');
    const cli = startThirtySecondRun(cacheDir, output, tmp);
    const enginePid = await waitForEnginePid(cli.pid);
    await waitForRunDir(cli, cacheDir);
    await sleepMs(1500); // entry files exist now

    process.kill(enginePid, 'SIGKILL');
    const r = await cli.done;
    expect(r.code, explain(r)).not.toBe(0);
    expect(r.code).not.toBeNull();
    expect(r.stderr).toContain('ENGINE_CRASHED');
    expect(r.stderr).toMatch(/engine process was killed by signal SIGKILL/);
    expect(fs.existsSync(output), 'no results from a crashed run').toBe(false);
    expect(isAlive(enginePid)).toBe(false);

    expect(runDirsIn(cacheDir)).toEqual([]);
    expect(snapshotDir(cacheDir)).toEqual(before);
  });
});
