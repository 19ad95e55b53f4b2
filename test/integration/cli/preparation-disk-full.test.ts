// The disk filling up while the run prepares its storage (--precondition), before anything is
// measured: a failed run (no workload ran; a full disk in the workload ends it partial instead),
// DISK_FULL naming the cache directory as the measured phase's reason does, not an INTERNAL error
// with a bare ENOSPC, and no file of the run left on the full disk.
//
// Needs root (mount); skipped with a message otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { explain, makeTempDir, oneLayerRunFlags, removeTempDirs, runDirsIn, startCli, waitFor } from './cli-harness.ts';

afterEach(() => {
  unmountTmpfsMounts();
  removeTempDirs();
});

describe('kvbench run --precondition on a disk that fills up', () => {
  it('fails with DISK_FULL naming the cache directory, and removes its files', async (ctx) => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'cache');
    fs.mkdirSync(cacheDir);
    mountTmpfsOrSkip(ctx, cacheDir, '640m');
    const output = path.join(tmp, 'results.json');
    // 0.5 GiB of 512 KiB entries by one writer: a few seconds, all within the budget (no eviction
    // frees space that a later write could land in).
    const cli = startCli(
      [
        'run', ...oneLayerRunFlags(tmp), '--num-users', '2', '--duration', '2', '--cpu-mem-gb', '0', '--cache-dir', cacheDir,
        '--storage-capacity-gb', '0.58', '--precondition', '--precondition-size-gb', '0.5', '--precondition-threads', '1', '--output', output,
      ],
      { cwd: tmp },
    );
    let exited = false;
    void cli.done.then(() => (exited = true));
    const entries = (): number => runDirsIn(cacheDir).reduce((n, d) => n + fs.readdirSync(path.join(cacheDir, d)).filter((f) => f.startsWith('precond_')).length, 0);
    await waitFor('the first preconditioning entry', () => exited || entries() > 0, 30_000);
    const fillerBytes = exited ? 0 : fillUntilFull(path.join(cacheDir, 'filler'));

    const r = await cli.done;
    expect(fillerBytes, `the disk was filled while preconditioning\n${explain(r)}`).toBeGreaterThan(0);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(`kvbench run failed (DISK_FULL): disk full (ENOSPC) on ${cacheDir} while preconditioning, after `);
    expect(r.stderr).not.toContain('INTERNAL');
    expect(fs.existsSync(output)).toBe(false);
    expect(fs.readdirSync(cacheDir), 'only the filler is left on the full disk').toEqual(['filler']);
  });
});
