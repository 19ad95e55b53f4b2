// The disk filling up during a run (ENOSPC mid-run), on a small tmpfs. kvbench checks the free
// space before it starts and never plans beyond it, so the disk is filled from outside, as another
// process on a shared drive would: the run must stop with partial results, say why, and leave no
// file of its own on the full filesystem.
//
// The run must write after the disk is full, into space it has not freed itself: if it evicted an
// entry first, the next write could land in the freed bytes and succeed. So its entries are small
// (a one-layer model, at most ~6 MiB each), their number is bounded (--request-rate × --duration),
// and their total stays well under the storage budget: nothing is ever evicted.
//
// Needs root (mount); skipped with a message otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, type TestContext } from 'vitest';
import {
  GIB,
  ONE_LAYER_BYTES_PER_TOKEN,
  TINY_RUN_FLAGS,
  explain,
  makeTempDir,
  oneLayerRunFlags,
  readResults,
  removeTempDirs,
  runCli,
  startCli,
  waitFor,
} from './cli-harness.ts';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfs } from '../../support/tmpfs.ts';

const TMPFS_SIZE = '640m';
const STORAGE_CAPACITY_GIB = 0.58;
const FILLER = 'filler.bin';
/** At most 8 × 5 = 40 requests of ≤ 6.1 MiB each: 244 MiB, well under the 594 MiB budget. */
const REQUEST_RATE = 8;
const DURATION_S = 5;

let mountPoint: string | null = null;

/** Mounts a fresh tmpfs for this test, or skips it (with the reason on the console) where that is impossible. */
function tmpfsOrSkip(ctx: TestContext, size: string): string {
  const dir = makeTempDir();
  mountTmpfsOrSkip(ctx, dir, size);
  mountPoint = dir;
  return dir;
}

beforeEach(() => {
  mountPoint = null;
});

afterEach(() => {
  if (mountPoint) {
    fs.rmSync(path.join(mountPoint, FILLER), { force: true });
    unmountTmpfs(mountPoint);
    mountPoint = null;
  }
  removeTempDirs();
});

describe('kvbench run on a filesystem that fills up', () => {
  it('refuses up front a --storage-capacity-gb larger than the free space', async (ctx) => {
    const fsDir = tmpfsOrSkip(ctx, '24m');
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const r = await runCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '2', '--cpu-mem-gb', '0', '--cache-dir', fsDir, '--storage-capacity-gb', '0.2', '--output', output],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('INSUFFICIENT_SPACE');
    expect(r.stderr).toContain(`--storage-capacity-gb 0.2 (0.20 GiB) exceeds the free space on ${fsDir}`);
    expect(fs.existsSync(output)).toBe(false);
    expect(fs.readdirSync(fsDir)).toEqual([]);
  });

  it('stops at ENOSPC mid-run with partial results (exit 3) and removes its files', async (ctx) => {
    const fsDir = tmpfsOrSkip(ctx, TMPFS_SIZE);
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json'); // not on the full filesystem
    const cli = startCli(
      [
        'run',
        ...oneLayerRunFlags(tmp),
        '--disable-multi-turn',
        '--num-users', '4',
        '--request-rate', String(REQUEST_RATE),
        '--duration', String(DURATION_S),
        '--cpu-mem-gb', '0',
        '--cache-dir', fsDir,
        '--storage-capacity-gb', String(STORAGE_CAPACITY_GIB),
        '--seed', '1',
        '--output', output,
      ],
      { cwd: tmp },
    );

    // Once the engine has written its first entries, another writer takes every free byte.
    const entryFiles = (): number =>
      fs
        .readdirSync(fsDir)
        .filter((n) => n.startsWith('kvbench-run-'))
        .reduce((count, runDir) => count + fs.readdirSync(path.join(fsDir, runDir)).filter((n) => !n.startsWith('.')).length, 0);
    let exited = false;
    void cli.done.then(() => (exited = true));
    await waitFor('the engine to write its first entry', () => exited || entryFiles() > 0);
    await new Promise((r) => setTimeout(r, 1000)); // let a few requests complete first
    const fillerBytes = exited ? 0 : fillUntilFull(path.join(fsDir, FILLER));

    const r = await cli.done;
    expect(fillerBytes, `the filesystem was filled while the run was still going\n${explain(r)}`).toBeGreaterThan(0);
    expect([1, 3], explain(r)).toContain(r.code);
    expect(r.stderr).toMatch(/disk full|ENOSPC/i);

    if (r.code === 3) {
      // Some requests completed: partial results, saved.
      expect(r.stderr).toContain('run is PARTIAL: disk full (ENOSPC)');
      const res = readResults(output);
      expect(res.kvbench.status).toBe('partial');
      expect(res.kvbench.status_reason).toMatch(/disk full \(ENOSPC\)/);
      expect(res.kvbench.status_reason).toContain(fsDir);
      expect(res.requests_completed).toBeGreaterThan(0);
      expect(res.kvbench.requests_failed).toBeGreaterThan(0);
      expect(res.end_to_end_latencies).toHaveLength(res.requests_completed);
      expect(res.kvbench.tiers.storage.budget_bytes).toBe(STORAGE_CAPACITY_GIB * GIB);
      expect(res.kvbench.model.bytes_per_token).toBe(ONE_LAYER_BYTES_PER_TOKEN);
      expect(res.kvbench.tier_bytes.storage.evicted_entries, 'the run freed space itself: the test no longer proves ENOSPC').toBe(0);
    } else {
      // ENOSPC before the first request completed: a clear DISK_FULL error, no results.
      expect(r.stderr).toContain('DISK_FULL');
      expect(fs.existsSync(output)).toBe(false);
    }

    // Nothing of kvbench's left on the full filesystem: only the filler remains.
    expect(fs.readdirSync(fsDir)).toEqual([FILLER]);
  });
});
