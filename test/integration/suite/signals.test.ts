// Stopping a suite by signal: the running trial stops gracefully (kept, marked aborted) and the exit
// code names the signal, as `kvbench run`'s does: 143 for SIGTERM (130 is Ctrl-C's), 129 for SIGHUP
// (the SSH session a headless suite ran in dropped).
import { afterEach, describe, expect, it } from 'vitest';
import { dbPaths, eventsOf, explain, hangUp, makeTempDir, olderNode, rawTrials, removeTempDirs, runDirsIn, startCli, waitFor, killStarted, type CliProcess } from './suite-harness.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  removeTempDirs();
});

/** A one-trial storage-only suite of 20 s, once its trial measures. */
async function suiteWithRunningTrial(o: { node?: string } = {}): Promise<{ cli: CliProcess; db: string; cache: string }> {
  const tmp = makeTempDir();
  const { db, cache } = dbPaths(tmp);
  const cli = startCli(['suite', '--profile', 'smoke', '--no-probe', '--events', '--trials', '2', '--scenarios', 'storage-only', '--duration', '20', '--cache-dir', cache, '--db', db], {
    cwd: tmp,
    ownProcessGroup: true,
    ...(o.node ? { node: o.node } : {}),
  });
  started.push(cli);
  let out = '';
  cli.child.stdout!.on('data', (s: string | Buffer) => (out += String(s)));
  await waitFor('the first trial to be running', () => eventsOf(out).some((e) => e.type === 'suite.trialProgressed' && (e.progress as { phase: string }).phase === 'running'), 60_000);
  return { cli, db, cache };
}

describe('kvbench suite and signals', () => {
  it('SIGTERM stops the current trial, keeps it as aborted and exits 143', { timeout: 90_000 }, async () => {
    const { cli, db, cache } = await suiteWithRunningTrial();
    process.kill(cli.pid, 'SIGTERM');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(143);
    expect(r.stderr).toMatch(/SIGTERM: stopping the current trial/);
    // SIGTERM is whatever sent it (a shutdown, a scheduler): the trial says so, not that the user cancelled.
    expect(rawTrials(db).map((t) => [t.status, t.status_reason])).toEqual([['aborted', 'stopped: kvbench received SIGTERM; partial results kept']]);
    // Its second trial never ran: the last line says how to run both (the results text is on stderr with --events).
    expect(r.stderr).toMatch(/Suite 1 cancelled: 0 complete, 0 partial, 0 failed, 1 aborted, in \d+ s\.\n/);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`resume with: kvbench suite --resume 1 --db ${db}`);
    expect(runDirsIn(cache)).toEqual([]);
  });

  it('a hang-up (SIGHUP to the whole process group, engine included) stops it as gracefully and exits 129', { timeout: 90_000 }, async () => {
    const { cli, db, cache } = await suiteWithRunningTrial();
    hangUp(cli);
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(129);
    expect(r.stderr).toMatch(/SIGHUP: stopping the current trial \(partial results are kept\)\n/);
    const trials = rawTrials(db);
    expect(trials.map((t) => t.status)).toEqual(['aborted']);
    expect(trials[0].status_reason).toMatch(/partial results kept/);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`resume with: kvbench suite --resume 1 --db ${db}`);
    expect(runDirsIn(cache)).toEqual([]);
  });

  const node20 = olderNode();
  it.skipIf(node20 === null)('through bin/kvbench.js\'s re-exec on an older Node: the SIGHUP the wrapper passes on, on top of the group\'s, is no second signal', { timeout: 90_000 }, async () => {
    const { cli, db, cache } = await suiteWithRunningTrial({ node: node20! });
    hangUp(cli);
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(129);
    expect(rawTrials(db).map((t) => t.status)).toEqual(['aborted']);
    expect(runDirsIn(cache)).toEqual([]);
  });
});
