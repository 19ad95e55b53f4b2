// The disk filling up during a run (ENOSPC mid-run), on a small tmpfs. kvbench checks the free
// space before it starts and never plans beyond it, so the disk is filled from outside, as another
// process on a shared drive would: the run must stop with partial results, say why, and leave no
// file of its own on the full filesystem.
//
// The run must write after the disk is full, into space it has not freed itself: if it evicted an
// entry first, the next write could land in the freed bytes and succeed. So its entries are small
// (a one-layer model, at most ~6 MiB each), the disk is filled after a handful of them (the
// completions below, plus at most the users' requests in flight), and the first write after that
// ends the run: their total stays far under the storage budget, nothing is ever evicted (checked).
//
// Which path the run takes is decided by the test, not by the machine's speed: the disk is filled
// once COMPLETED_BEFORE_FULL requests have completed in the measured window, before any request can
// complete (each generates for minutes), or during a long --warm-up, before the window opens. Each
// ends with its reason and its results written (partial; aborted in the warm-up, where nothing was
// measured): a disk that fills early is no failure of kvbench.
//
// Needs root (mount); skipped with a message otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi, type TestContext } from 'vitest';
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
import { ProgressLine } from '../../../src-main/cli/progress-line.ts';
import { runCommand } from '../../../src-main/cli/run-command.ts';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfs } from '../../support/tmpfs.ts';
import { runInProcess } from '../../unit/cli/in-process.ts';

const TMPFS_SIZE = '640m';
const STORAGE_CAPACITY_GIB = 0.58;
const FILLER = 'filler.bin';
/** Requests of ≤ 6.1 MiB each, at most 8 a second: a few dozen MiB before the disk fills, under the 594 MiB budget. */
const REQUEST_RATE = 8;
/** Long enough for the completions below on a loaded machine; the run ends at the ENOSPC, soon after them. */
const DURATION_S = 30;
/** The disk is filled once this many requests have completed in the measured window. */
const COMPLETED_BEFORE_FULL = 3;

/** Entry files in the engine's run directories on `fsDir`. */
function entryFiles(fsDir: string): number {
  return fs
    .readdirSync(fsDir)
    .filter((n) => n.startsWith('kvbench-run-'))
    .reduce((count, runDir) => count + fs.readdirSync(path.join(fsDir, runDir)).filter((n) => !n.startsWith('.')).length, 0);
}

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

  it('stops at ENOSPC after requests completed: partial results (exit 3), and removes its files', async (ctx) => {
    const fsDir = tmpfsOrSkip(ctx, TMPFS_SIZE);
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json'); // not on the full filesystem
    // The CLI's front runs here, so its progress line can be watched (a pass-through spy: every event
    // still reaches it); a pipe would show a progress line every 10 s only. The engine is the real
    // child process, as from bin/kvbench.js.
    const progress = vi.spyOn(ProgressLine.prototype, 'update');
    let exited = false;
    const run = runInProcess(() =>
      runCommand([
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
      ]),
    ).finally(() => (exited = true));
    let fillerBytes = 0;
    try {
      // Once COMPLETED_BEFORE_FULL requests have completed in the window, another writer takes every free byte.
      const completed = (): number => Math.max(0, ...progress.mock.calls.map(([p]) => (p.phase === 'running' ? p.requestsCompleted : 0)));
      await waitFor(`${COMPLETED_BEFORE_FULL} requests to complete`, () => exited || completed() >= COMPLETED_BEFORE_FULL, 60_000);
      if (!exited) fillerBytes = fillUntilFull(path.join(fsDir, FILLER));
    } finally {
      progress.mockRestore();
    }

    const r = await run;
    const said = `exit ${r.code}\n--- stderr ---\n${r.stderr.slice(-3000)}`;
    expect(fillerBytes, `the filesystem was filled while the run was still going\n${said}`).toBeGreaterThan(0);
    expect(r.code, said).toBe(3);
    expect(r.stderr).toContain('run is PARTIAL: disk full (ENOSPC)');
    const res = readResults(output);
    expect(res.kvbench.status).toBe('partial');
    expect(res.kvbench.status_reason).toMatch(/disk full \(ENOSPC\)/);
    expect(res.kvbench.status_reason).toContain(fsDir);
    expect(res.requests_completed).toBeGreaterThanOrEqual(COMPLETED_BEFORE_FULL);
    expect(res.kvbench.requests_failed).toBeGreaterThan(0);
    expect(res.end_to_end_latencies).toHaveLength(res.requests_completed);
    expect(res.kvbench.tiers.storage.budget_bytes).toBe(STORAGE_CAPACITY_GIB * GIB);
    expect(res.kvbench.model.bytes_per_token).toBe(ONE_LAYER_BYTES_PER_TOKEN);
    expect(res.kvbench.tier_bytes.storage.evicted_entries, 'the run freed space itself: the test no longer proves ENOSPC').toBe(0);

    // Nothing of kvbench's left on the full filesystem: only the filler remains.
    expect(fs.readdirSync(fsDir)).toEqual([FILLER]);
  });

  it('stops at ENOSPC before any request of the window completed: partial results (exit 3) with the reason and what it wrote, and removes its files', async (ctx) => {
    const fsDir = tmpfsOrSkip(ctx, TMPFS_SIZE);
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    // The engine checks the free space, then waits for --start-at; meanwhile another writer leaves it
    // LEFT_BYTES. The window opens as the workload starts, and every request generates for 10 s a
    // token after its writes (at least 50 tokens): none can complete before its 32 users' first
    // entries (several MiB each) have used up what was left.
    const LEFT_BYTES = 8 * 1024 * 1024;
    const flags = oneLayerRunFlags(tmp, 'generation_timing:\n  realistic: 10\n').map((f) => (f === 'none' ? 'realistic' : f));
    // Time enough for the engine to start and reach its wait on a loaded machine (checked below).
    const startAtS = Date.now() / 1000 + 12;
    const cli = startCli(
      [
        'run', ...flags, '--disable-multi-turn', '--num-users', '32', '--duration', String(DURATION_S), '--start-at', String(startAtS),
        '--cpu-mem-gb', '0', '--cache-dir', fsDir, '--storage-capacity-gb', String(STORAGE_CAPACITY_GIB), '--seed', '1', '--output', output,
      ],
      { cwd: tmp },
    );
    let exited = false;
    void cli.done.then(() => (exited = true));
    await waitFor('the engine to wait for --start-at', () => exited || cli.stderrSoFar().includes('for --start-at'), 30_000);
    const filler = path.join(fsDir, FILLER);
    const fillerBytes = exited ? 0 : fillUntilFull(filler);
    if (fillerBytes > 0) fs.truncateSync(filler, fillerBytes - LEFT_BYTES);
    expect(Date.now() / 1000, 'the disk was filled before the workload started').toBeLessThan(startAtS);

    const r = await cli.done;
    expect(fillerBytes, `the filesystem was filled while the run was still going\n${explain(r)}`).toBeGreaterThan(0);
    expect(r.code, explain(r)).toBe(3);
    expect(r.stderr).toContain(`run is PARTIAL: disk full (ENOSPC) on ${fsDir}: stopped after 0 completed requests`);
    const res = readResults(output);
    expect(res.kvbench.status).toBe('partial');
    expect(res.kvbench.status_reason).toBe(`disk full (ENOSPC) on ${fsDir}: stopped after 0 completed requests`);
    expect(res.requests_completed).toBe(0);
    expect(res.kvbench.requests_failed).toBeGreaterThan(0);
    // What the run did before the disk filled is kept: its configuration and the bytes it wrote.
    expect(res.kvbench.tier_bytes.storage.write_bytes, 'the entries written before the disk filled').toBeGreaterThan(0);
    expect(res.kvbench.tiers.storage.budget_bytes).toBe(STORAGE_CAPACITY_GIB * GIB);
    expect(res.kvbench.measured_window.closed_by).toBe('error');
    expect(fs.readdirSync(fsDir)).toEqual([FILLER]);
  });

  it('stops at ENOSPC during --warm-up, before the measured window opened: ABORTED results (exit 3) saying nothing was measured, and removes its files', async (ctx) => {
    const fsDir = tmpfsOrSkip(ctx, TMPFS_SIZE);
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    // The window opens after a 60 s warm-up: the disk fills long before, so no measured request can
    // have completed, whatever the machine's load.
    const cli = startCli(
      [
        'run', ...oneLayerRunFlags(tmp), '--disable-multi-turn', '--num-users', '4', '--request-rate', String(REQUEST_RATE), '--duration', String(DURATION_S),
        '--warm-up', '60', '--cpu-mem-gb', '0', '--cache-dir', fsDir, '--storage-capacity-gb', String(STORAGE_CAPACITY_GIB), '--seed', '1', '--output', output,
      ],
      { cwd: tmp },
    );
    let exited = false;
    void cli.done.then(() => (exited = true));
    await waitFor('the engine to write its first entry', () => exited || entryFiles(fsDir) > 0, 30_000);
    const fillerBytes = exited ? 0 : fillUntilFull(path.join(fsDir, FILLER));

    const r = await cli.done;
    expect(fillerBytes, `the filesystem was filled while the run was still going\n${explain(r)}`).toBeGreaterThan(0);
    expect(r.code, explain(r)).toBe(3);
    const reason = `disk full (ENOSPC) on ${fsDir} during the warm-up, before the measured window opened: nothing was measured`;
    // As a cancel in the warm-up: not a partial trial of nothing, which --include-incomplete would count.
    expect(r.stderr).toContain(`run is ABORTED: ${reason}`);
    const res = readResults(output);
    expect(res.kvbench.status).toBe('aborted');
    expect(res.kvbench.status_reason).toBe(reason);
    expect(res.requests_completed).toBe(0);
    expect(res.kvbench.tiers.storage.budget_bytes).toBe(STORAGE_CAPACITY_GIB * GIB);
    expect(fs.readdirSync(fsDir)).toEqual([FILLER]);
  });
});
