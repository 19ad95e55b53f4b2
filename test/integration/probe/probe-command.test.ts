// `kvbench probe` end to end: the real CLI, the probe's own process, real files in a temp dir.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ProbeResult } from '../../../src-main/engine/probe/probe-protocol.ts';
import { runProbeProcess } from '../../../src-main/cli/probe-command.ts';
import { validateProbeOptions } from '../../../src-main/engine/probe/probe-options.ts';
import { explain, hangUp, makeTempDir, removeTempDirs, runCli, sleepMs, startCli, waitFor } from '../cli/cli-harness.ts';
import { skipBecause } from '../../support/skip.ts';

afterEach(removeTempDirs);

const SMALL = ['--duration', '1', '--size-gib', '0.125', '--io-depth', '4', '--io-chunk-mib', '4'];

function probeDirsIn(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.startsWith('kvbench-probe-'));
}

describe('kvbench probe', () => {
  it('measures sequential direct writes then reads, writes JSON, and leaves the directory as it was', async (ctx) => {
    const dir = makeTempDir();
    const target = path.join(dir, 'target');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'keep.txt'), 'not the probe’s');
    const out = path.join(dir, 'probe.json');
    const r = await runCli(['probe', '--dir', target, ...SMALL, '--output', out], { cwd: dir });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/write\s+[\d.]+ GB\/s/);
    expect(r.stdout).toMatch(/read\s+[\d.]+ GB\/s/);
    const p = JSON.parse(fs.readFileSync(out, 'utf8')) as ProbeResult;
    expect(p).toMatchObject({ kind: 'kvbench-probe', status: 'complete', io_depth: 4, lanes: 4, io_chunk_bytes: 4 * 1024 * 1024, uv_threadpool_size: 8 });
    expect(p.file_bytes_per_lane).toBe(32 * 1024 * 1024);
    for (const op of ['write', 'read'] as const) {
      const phase = p.phases[op]!;
      expect(phase.op).toBe(op);
      expect(phase.bytes).toBeGreaterThan(0);
      expect(phase.bytes % (4 * 1024 * 1024)).toBe(0);
      expect(phase.bytes_per_sec).toBeGreaterThan(0);
      expect(phase.io_latency.count).toBe(phase.ios);
      expect(phase.cpu_seconds_per_gb).toBeGreaterThanOrEqual(0);
    }
    expect(p.phases.write!.fdatasync_ns).toBeGreaterThanOrEqual(0);
    if (p.device === null) expect(p.device_reason).toBeTruthy();
    expect(fs.readdirSync(target)).toEqual(['keep.txt']);
    if (!p.direct_io || p.device === null) {
      skipBecause(ctx, `the temp dir ${!p.direct_io ? 'refuses direct I/O' : `has no device counters (${p.device_reason})`}: the device's coverage of the probe's direct reads cannot be checked here`);
    }
    // Direct reads all reach the device (other processes can only add to its counters).
    expect(p.phases.read!.device_coverage!).toBeGreaterThanOrEqual(0.95);
    if (p.phases.read!.process_read_coverage !== null) expect(p.phases.read!.process_read_coverage).toBeGreaterThanOrEqual(0.95);
    expect(p.phases.read!.page_cache_suspected).toBe(false);
  });

  it('flags buffered reads the page cache served', async (ctx) => {
    const dir = makeTempDir();
    const r = await runCli(['probe', '--dir', dir, ...SMALL, '--direct-io', 'off', '--only', 'read', '--json'], { cwd: dir });
    expect(r.code, explain(r)).toBe(0);
    const p = JSON.parse(r.stdout) as ProbeResult;
    expect(p.direct_io).toBe(false);
    expect(p.phases.write).toBeUndefined();
    expect(p.warnings.join('\n')).toMatch(/page cache/);
    expect(probeDirsIn(dir)).toEqual([]);
    if (p.device === null) skipBecause(ctx, `the temp dir has no device counters (${p.device_reason}): the probe's page-cache flag cannot be checked here`);
    // The files were just written through the page cache: the probe made the device read (almost)
    // none of them. The device's own counters may show more: they include every process's reads.
    expect(p.phases.read!.page_cache_suspected).toBe(true);
    if (p.phases.read!.process_read_coverage !== null) expect(p.phases.read!.process_read_coverage).toBeLessThan(0.95);
    expect(p.phases.read!.page_cache_reason).toMatch(/buffered I\/O/);
  });

  it('says a RAM-backed directory (tmpfs) is memory: its reads are flagged, direct I/O or not', async (ctx) => {
    const dir = makeTempDir();
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m', 'tmpfs', dir], { stdio: 'pipe' });
    } catch (err) {
      console.warn(`skipped: cannot mount a tmpfs (${(err as Error).message.split('\n')[0]}); this test needs root on Linux`);
      return ctx.skip();
    }
    try {
      const r = await runCli(['probe', '--dir', dir, ...SMALL, '--json'], { cwd: dir });
      expect(r.code, explain(r)).toBe(0);
      const p = JSON.parse(r.stdout) as ProbeResult;
      expect(p.phases.read!.page_cache_suspected).toBe(true);
      expect(p.phases.read!.page_cache_reason).toMatch(/^RAM-backed filesystem \(tmpfs\)/);
      expect(p.warnings.join('\n')).toMatch(/RAM-backed filesystem \(tmpfs\): the storage tier measures memory, not a drive/);
      expect(probeDirsIn(dir)).toEqual([]);
    } finally {
      execFileSync('umount', [dir], { stdio: 'pipe' });
    }
  });

  it('refuses bad arguments before touching anything', async () => {
    const dir = makeTempDir();
    const r = await runCli(['probe', '--dir', path.join(dir, 'missing'), '--io-depth', '0'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--io-depth must be between 1 and/);
    expect(r.stderr).toContain(`--dir does not exist: ${path.join(dir, 'missing')}`);
    const missing = await runCli(['probe', '--dir', path.join(dir, 'missing')], { cwd: dir });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`kvbench probe: invalid arguments:\n  --dir does not exist: ${path.join(dir, 'missing')}\n`);
  });

  it('refuses a system directory as --dir, also behind a symbolic link, with the other problems', async () => {
    const dir = makeTempDir();
    const link = path.join(dir, 'innocent-looking');
    fs.symlinkSync('/etc', link);
    const before = fs.readdirSync('/etc');
    for (const target of ['/etc', link, '/dev/shm']) {
      const r = await runCli(['probe', '--dir', target, ...SMALL, '--io-depth', '0'], { cwd: dir });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toMatch(/--dir cannot be a system directory: \/(etc|dev\/shm)\n/);
      expect(r.stderr).toMatch(/--io-depth must be between 1 and/);
    }
    expect(fs.readdirSync('/etc')).toEqual(before);
    expect(fs.readdirSync(dir)).toEqual(['innocent-looking']);
  });

  it('calls a directory on a read-only filesystem not writable, before starting, instead of a raw EROFS', async (ctx) => {
    const dir = makeTempDir();
    let cleanup: () => void;
    if (process.getuid?.() === 0) {
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256m,ro', 'tmpfs', dir], { stdio: 'pipe' });
      } catch (err) {
        console.warn(`skipped: root ignores file modes, and a read-only tmpfs cannot be mounted here (${(err as Error).message.split('\n')[0]})`);
        return ctx.skip();
      }
      cleanup = () => execFileSync('umount', [dir], { stdio: 'pipe' });
    } else {
      fs.chmodSync(dir, 0o555);
      cleanup = () => fs.chmodSync(dir, 0o755);
    }
    try {
      const r = await runCli(['probe', '--dir', dir, ...SMALL], { cwd: path.dirname(dir) });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toBe(`kvbench probe: invalid arguments:\n  --dir is not writable: ${dir} (${process.getuid?.() === 0 ? 'a read-only file system' : 'permission denied'})\n`);
    } finally {
      cleanup();
    }
  });

  it('does not start when it is cancelled already (a suite stopped during detection)', async () => {
    const dir = makeTempDir();
    const v = validateProbeOptions({ dir, durationS: 30 });
    if (!v.ok) throw new Error(v.errors.join('; '));
    const run = await runProbeProcess(v.options, { cancelSignal: AbortSignal.abort() });
    expect(run).toEqual({ ok: false, code: 'CANCELLED', message: 'cancelled before the probe started' });
    expect(probeDirsIn(dir)).toEqual([]);
  });

  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('stops on %s, removes its files and exits %i', async (signal, code) => {
    const dir = makeTempDir();
    const p = startCli(['probe', '--dir', dir, '--duration', '30', '--size-gib', '0.125', '--io-depth', '4', '--io-chunk-mib', '4'], { cwd: dir });
    await waitFor('the probe to create its directory', () => probeDirsIn(dir).length > 0);
    await sleepMs(300);
    p.child.kill(signal);
    const r = await p.done;
    expect(r.code, explain(r)).toBe(code);
    expect(r.stderr).toContain(`${signal}: stopping the probe and removing its files`);
    expect(probeDirsIn(dir)).toEqual([]);
  });
  it('stops on a hang-up of its whole process group (a dropped SSH session), removes its files and exits 129', async () => {
    const dir = makeTempDir();
    const p = startCli(['probe', '--dir', dir, '--duration', '30', '--size-gib', '0.125', '--io-depth', '4', '--io-chunk-mib', '4'], { cwd: dir, ownProcessGroup: true });
    await waitFor('the probe to create its directory', () => probeDirsIn(dir).length > 0);
    await sleepMs(300);
    hangUp(p);
    const r = await p.done;
    expect(r.code, explain(r)).toBe(129);
    expect(r.signal).toBeNull();
    expect(probeDirsIn(dir)).toEqual([]);
  });
});
