// A --cache-dir that does not exist yet: kvbench creates it for the run and, having created it,
// removes it again, so the file system looks as it did before: also when the run is refused at its
// start, or its engine is killed.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareStorageTarget } from '../../../src-main/engine/tiers/storage-target.ts';
import { TINY_RUN_FLAGS, explain, makeTempDir, readResults, removeTempDirs, runCli, sleepMs, startCli, waitFor, waitForEnginePid } from './cli-harness.ts';

afterEach(removeTempDirs);

/**
 * The run ends after its 3rd completed request; 120 s is only the cap. A 5 s cap let a loaded 2-core
 * machine end it short of 3 (tiny-1b's first requests write tens of MiB each): partial, exit 3.
 */
const ENDS_AFTER_3_REQUESTS = ['--max-requests', '3', '--duration', '120'];

async function shortRun(cacheDir: string, tmp: string): Promise<void> {
  const output = path.join(tmp, 'results.json');
  const r = await runCli(
    ['run', ...TINY_RUN_FLAGS, '--num-users', '2', ...ENDS_AFTER_3_REQUESTS, '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '5', '--output', output],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  const res = readResults(output);
  expect(res.kvbench.tiers.storage.dir).toBe(cacheDir);
  expect(res.kvbench.tier_bytes.storage.write_bytes, 'the run did use the directory').toBeGreaterThan(0);
}

describe('kvbench run --cache-dir <new directory>', () => {
  it('removes a cache directory it had to create', async () => {
    const tmp = makeTempDir();
    await shortRun(path.join(tmp, 'new-cache'), tmp);
    expect(fs.readdirSync(tmp)).toEqual(['results.json']);
  });

  it('removes every level of a nested cache directory it had to create', async () => {
    const tmp = makeTempDir();
    await shortRun(path.join(tmp, 'a', 'b', 'c'), tmp);
    expect(fs.readdirSync(tmp), 'a/b/ left behind').toEqual(['results.json']);
  });

  // The ranks of a multi-host run race to create a shared --cache-dir DIR: each removes its own
  // DIR/rank-N only, and DIR (with any level made on the way) stays, whichever rank finishes last.
  it('of a rank (DIR/rank-N): removes rank-N only, and leaves the shared DIR it created, empty', async () => {
    const tmp = makeTempDir();
    const shared = path.join(tmp, 'new', 'shared');
    const output = path.join(tmp, 'r.json');
    const r = await runCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '2', ...ENDS_AFTER_3_REQUESTS, '--cpu-mem-gb', '0', '--cache-dir', shared, '--rank', '1', '--world-size', '2', '--output', output],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(0);
    expect(readResults(path.join(tmp, 'r.rank1.json')).kvbench.tiers.storage.dir).toBe(path.join(shared, 'rank-1'));
    expect(fs.readdirSync(shared), 'rank-1/ removed, the shared directory kept').toEqual([]);
  });

  it('of a rank whose engine is killed: removes rank-N only, as the engine would have', async () => {
    const tmp = makeTempDir();
    const shared = path.join(tmp, 'new', 'shared');
    const cli = startCli(['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '30', '--cpu-mem-gb', '0', '--cache-dir', shared, '--rank', '0', '--world-size', '2', '--output', path.join(tmp, 'r.json')], { cwd: tmp });
    const enginePid = await waitForEnginePid(cli.pid);
    const own = path.join(shared, 'rank-0');
    await waitFor('the engine to create its run directory', () => fs.existsSync(own) && fs.readdirSync(own).length > 0);
    await sleepMs(500);
    process.kill(enginePid, 'SIGKILL');
    const r = await cli.done;
    expect(r.stderr, explain(r)).toMatch(/ENGINE_CRASHED/);
    expect(fs.readdirSync(shared), 'rank-0/ removed, the shared directory kept').toEqual([]);
  }, 60_000);

  it('removes the levels it created when the run is refused at its start', async () => {
    const tmp = makeTempDir();
    const r = await runCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '1', '--cpu-mem-gb', '0', '--cache-dir', path.join(tmp, 'newdir', 'sub'), '--storage-capacity-gb', '100000', '--output', path.join(tmp, 'r.json')],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/INSUFFICIENT_SPACE/);
    expect(fs.readdirSync(tmp), 'newdir/sub/ left behind').toEqual([]);
    // The workload's largest entry does not fit either; a directory that was there stays.
    fs.mkdirSync(path.join(tmp, 'there'));
    await expect(prepareStorageTarget({ cacheDir: path.join(tmp, 'there', 'a', 'b'), storageCapacityGb: 0, largestEntryBytes: Number.MAX_SAFE_INTEGER })).rejects.toMatchObject({ code: 'INSUFFICIENT_SPACE' });
    expect(fs.readdirSync(tmp)).toEqual(['there']);
    expect(fs.readdirSync(path.join(tmp, 'there'))).toEqual([]);
  });

  it('removes the levels it created when its engine is killed', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'r6', 'sub');
    const cli = startCli(['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '30', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--output', path.join(tmp, 'r.json')], { cwd: tmp });
    const enginePid = await waitForEnginePid(cli.pid);
    await waitFor('the engine to create its run directory', () => fs.existsSync(cacheDir) && fs.readdirSync(cacheDir).length > 0);
    await sleepMs(500);
    process.kill(enginePid, 'SIGKILL');
    const r = await cli.done;
    expect(r.stderr, explain(r)).toMatch(/ENGINE_CRASHED/);
    expect(fs.readdirSync(tmp), 'r6/sub/ left behind').toEqual([]);
  }, 60_000);
});
