// The cache directory's disk fills up during a suite trial before any request of its window has
// completed (another writer on a shared drive): the trial is stored with the reason and its results
// (its configuration, what it did), as `kvbench run` keeps them, not `failed` with nothing. Filled
// during the warm-up here (which no machine's speed can outrun): `aborted`, as a cancel then, since
// the window never opened; with the window open the engine makes it `partial` (test/integration/
// cli/disk-full.test.ts). Reports leave it out, and a resume runs its slot again.
//
// Needs root (mount); skipped with a message otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { explain, killStarted, makeTempDir, removeTempDirs, runCli, runDirsIn, startCli, waitFor, type CliProcess } from './suite-harness.ts';
import { rawTrials } from './suite-harness.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  unmountTmpfsMounts();
  removeTempDirs();
});

/** The stored results JSON of trial `id`. */
function storedResults(db: string, id: number): RunResults | null {
  const store = openStore(db);
  try {
    return store.trialResults(id) as unknown as RunResults | null;
  } finally {
    store.close();
  }
}

describe('kvbench suite whose cache disk fills before a trial completed any request', () => {
  it('stores the trial with the disk-full reason and its results, exits 3, ends with the resume command, and leaves it out of the report (tmpfs, root only)', { timeout: 120_000 }, async (ctx) => {
    const tmp = makeTempDir();
    const cache = path.join(tmp, 'cache');
    fs.mkdirSync(cache);
    mountTmpfsOrSkip(ctx, cache, '2g');
    const db = path.join(tmp, 'kvbench.db');
    // A 60 s warm-up: the disk fills long before the window opens, whatever the machine's load.
    const cli = startCli(['suite', '--profile', 'smoke', '--no-probe', '--trials', '1', '--scenarios', 'storage-only', '--warm-up', '60', '--cache-dir', cache, '--db', db], { cwd: tmp });
    started.push(cli);
    let exited = false;
    void cli.done.then(() => (exited = true));
    const entries = (): number => runDirsIn(cache).reduce((n, d) => n + fs.readdirSync(path.join(cache, d)).filter((f) => !f.startsWith('.')).length, 0);
    await waitFor("the trial's engine to write its first entry", () => exited || entries() > 0, 60_000);
    const fillerBytes = exited ? 0 : fillUntilFull(path.join(cache, 'filler'));
    const r = await cli.done;

    expect(fillerBytes, `the disk was filled while the trial ran\n${explain(r)}`).toBeGreaterThan(0);
    expect(r.code, explain(r)).toBe(3);
    const reason = `disk full (ENOSPC) on ${cache} during the warm-up, before the measured window opened: nothing was measured`;
    expect(r.stdout).toContain(`storage-only #1/1 ABORTED in `);
    expect(r.stdout).toContain(` — ${reason}`);
    expect(r.stdout).toMatch(/Suite 1 failed \(none of its trials completed: nothing to report\): 0 complete, 0 partial, 0 failed, 1 aborted, in \d+ s\./);
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(`resume with: kvbench suite --resume 1 --db ${db}`);
    const trials = rawTrials(db);
    expect(trials.map((t) => [t.status, t.status_reason])).toEqual([['aborted', reason]]);
    // What the trial was: its configuration and counters are kept with it.
    const results = storedResults(db, trials[0].id);
    expect(results?.kvbench.status).toBe('aborted');
    expect(results?.kvbench.model.key).toBe('tiny-1b');
    expect(results?.requests_completed).toBe(0);
    expect(fs.readdirSync(cache), 'only the filler is left on the full disk').toEqual(['filler']);

    const rep = await runCli(['report', '--db', db], { cwd: tmp });
    expect(rep.stdout, explain(rep)).toContain(reason);
    expect(rep.stdout).toMatch(/trials: 0 aggregated of 1/);
  });
});
