// Stopping a suite by signal: the running trial stops gracefully (kept, marked aborted) and the exit
// code names the signal, as `kvbench run`'s does: 143 for SIGTERM (130 is Ctrl-C's).
import { afterEach, describe, expect, it } from 'vitest';
import { dbPaths, eventsOf, explain, makeTempDir, rawTrials, removeTempDirs, runDirsIn, startCli, waitFor, killStarted, type CliProcess } from './suite-harness.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  removeTempDirs();
});

describe('kvbench suite and SIGTERM', () => {
  it('stops the current trial, keeps it as aborted and exits 143', { timeout: 90_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const cli = startCli(['suite', '--profile', 'smoke', '--no-probe', '--events', '--trials', '2', '--scenarios', 'storage-only', '--duration', '20', '--cache-dir', cache, '--db', db], { cwd: tmp });
    started.push(cli);
    let out = '';
    cli.child.stdout!.on('data', (s: string | Buffer) => (out += String(s)));
    await waitFor('the first trial to be running', () => eventsOf(out).some((e) => e.type === 'suite.trialProgressed' && (e.progress as { phase: string }).phase === 'running'), 60_000);
    process.kill(cli.pid, 'SIGTERM');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(143);
    expect(r.stderr).toMatch(/SIGTERM: stopping the current trial/);
    // SIGTERM is whatever sent it (a shutdown, a scheduler): the trial says so, not that the user cancelled.
    expect(rawTrials(db).map((t) => [t.status, t.status_reason])).toEqual([['aborted', 'stopped: kvbench received SIGTERM; partial results kept']]);
    expect(runDirsIn(cache)).toEqual([]);
  });
});
