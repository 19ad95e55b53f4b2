// A write that fails while several writers prepare the storage tier (--precondition), before the
// measured window: the run fails with the reason, writes no results, removes every entry file of its
// own and leaves other people's files alone. The failure is provoked by a file of someone else's in
// the run directory under the name of an entry still to come: kvbench opens new entry files with
// O_EXCL, so that write fails with EEXIST. (That every writer has stopped before the cleanup, which
// here depends on timing, is proven deterministically in test/unit/workload/run-loops.test.ts.)
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, makeTempDir, oneLayerRunFlags, removeTempDirs, startCli, waitFor } from './cli-harness.ts';

afterEach(removeTempDirs);

/** Entry indices the foreign files take: far enough ahead, and spread out, that the writers meet one however far they got. */
const FOREIGN_AT = [600, 1000, 1500, 2000, 2500, 3000, 3500, 4000];

describe('kvbench run --precondition when a preparation write fails', () => {
  it('stops every writer, removes all its entry files, keeps the foreign ones, and says why', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'cache');
    fs.mkdirSync(cacheDir);
    const output = path.join(tmp, 'results.json');
    const cli = startCli(
      [
        'run', ...oneLayerRunFlags(tmp), '--num-users', '2', '--duration', '2', '--cpu-mem-gb', '0', '--cache-dir', cacheDir,
        // Up to 4,096 entries of 512 KiB, written by 8 writers at once.
        '--precondition', '--precondition-size-gb', '2', '--precondition-threads', '8', '--storage-capacity-gb', '2.5',
        '--output', output,
      ],
      { cwd: tmp },
    );
    let runDir: string | null = null;
    await waitFor('the run directory', () => {
      const d = fs.readdirSync(cacheDir).find((n) => n.startsWith('kvbench-run-'));
      runDir = d === undefined ? null : path.join(cacheDir, d);
      return runDir !== null;
    });
    const foreign = FOREIGN_AT.map((i) => path.join(runDir!, `precond_${i}.kv`));
    for (const f of foreign) fs.writeFileSync(f, 'not kvbench\'s\n');

    const r = await cli.done;
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/EEXIST/);
    expect(fs.existsSync(output)).toBe(false);
    // Wait a moment: a writer still running would create files after the engine exited its cleanup.
    await new Promise((res) => setTimeout(res, 300));
    const left = fs.readdirSync(runDir!).sort();
    expect(left, 'only the foreign files are left').toEqual(foreign.map((f) => path.basename(f)).sort());
    for (const f of foreign) expect(fs.readFileSync(f, 'utf8')).toBe('not kvbench\'s\n');
  });
});
