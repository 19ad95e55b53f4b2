// Run directories of engines that ended without cleaning up (SIGKILLed by their orphan watchdog
// after their host died too) are removed by the next run, suite trial or probe on that directory,
// by their owner markers: a process of this host that has ended. Never a live process's, another
// host's, or a directory kvbench cannot attribute.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { markRunDirOwner, OWNER_MARKER, removeDeadOwnersRunDirs, runDirPrefix } from '../../../src-main/engine/tiers/run-dir-ownership.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { TINY_RUN_FLAGS, explain, makeTempDir, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(() => removeTempDirs());

const OWNERSHIP_MODULE = new URL('../../../src-main/engine/tiers/run-dir-ownership.ts', import.meta.url).href;

/**
 * What an engine killed mid-run leaves: a real process marks its run directory, writes a KV file,
 * and ends without removing either. Resolves once it has been reaped (its pid is then dead).
 */
async function dirOfEndedProcess(cacheDir: string): Promise<{ dir: string; pid: number }> {
  const script = `
    import fs from 'node:fs';
    import path from 'node:path';
    const { markRunDirOwner, runDirPrefix } = await import(${JSON.stringify(OWNERSHIP_MODULE)});
    const dir = fs.mkdtempSync(path.join(${JSON.stringify(cacheDir)}, runDirPrefix(process.pid)));
    await markRunDirOwner(dir);
    fs.writeFileSync(path.join(dir, 'entry-0.kv'), Buffer.alloc(64 * 1024, 7));
    process.stdout.write(dir);
    process.kill(process.pid, 'SIGKILL');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let dir = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (dir += s));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, sig) => resolve(sig)));
  expect(signal).toBe('SIGKILL');
  expect(fs.existsSync(path.join(dir, 'entry-0.kv'))).toBe(true);
  return { dir, pid: child.pid! };
}

/** A run directory of `pid` with a hand-written marker (another host, another start time, an old marker). */
function dirWithMarker(cacheDir: string, pid: number, marker: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(cacheDir, runDirPrefix(pid)));
  fs.writeFileSync(path.join(dir, OWNER_MARKER), JSON.stringify(marker));
  fs.writeFileSync(path.join(dir, 'entry-0.kv'), 'kv');
  return dir;
}

describe('run directories of ended processes', () => {
  it('are removed; those of live processes, other hosts and unattributable ones stay', async () => {
    const cacheDir = makeTempDir();
    const foreign = path.join(cacheDir, 'keep.npy');
    fs.writeFileSync(foreign, 'not kvbench');
    const ended = await dirOfEndedProcess(cacheDir);
    const me = currentProcess();
    const live = fs.mkdtempSync(path.join(cacheDir, runDirPrefix(me.pid)));
    await markRunDirOwner(live);
    // This pid, but a process that started at another time: its owner ended and the pid was reused.
    const reused = dirWithMarker(cacheDir, me.pid, { pid: me.pid, host: me.host, startTicks: '1' });
    // A marker from before start times were recorded: a live pid keeps it, a dead one does not.
    const oldLive = dirWithMarker(cacheDir, me.pid, { pid: me.pid, host: me.host });
    const oldEnded = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: me.host });
    const otherHost = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: `not-${os.hostname()}`, startTicks: null });
    const nameDisagrees = dirWithMarker(cacheDir, me.pid, { pid: ended.pid, host: me.host, startTicks: null });
    const unmarked = fs.mkdtempSync(path.join(cacheDir, runDirPrefix(ended.pid)));

    const removed = await removeDeadOwnersRunDirs(cacheDir);

    expect(removed.sort()).toEqual([ended.dir, reused, oldEnded].sort());
    for (const dir of [ended.dir, reused, oldEnded]) expect(fs.existsSync(dir), dir).toBe(false);
    for (const dir of [live, oldLive, otherHost, nameDisagrees, unmarked]) expect(fs.existsSync(dir), dir).toBe(true);
    expect(fs.readFileSync(foreign, 'utf8')).toBe('not kvbench');
  });

  it('are removed by the next kvbench run on that cache directory, which says so', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'cache');
    fs.mkdirSync(cacheDir);
    const ended = await dirOfEndedProcess(cacheDir);
    const r = await runCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '1', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '1', '--output', path.join(tmp, 'r.json')],
      { cwd: tmp },
    );
    expect(r.code === 0 || r.code === 3, explain(r)).toBe(true);
    expect(r.stderr).toContain(`info: removed run directories left by ended kvbench processes: ${ended.dir}`);
    expect(fs.readdirSync(cacheDir)).toEqual([]);
  }, 60_000);

  it('are removed by kvbench probe on that directory', async () => {
    const tmp = makeTempDir();
    const ended = await dirOfEndedProcess(tmp);
    const r = await runCli(['probe', '--dir', tmp, '--duration', '1', '--size-gib', '0.0625', '--io-depth', '2', '--io-chunk-mib', '4', '--json'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect((JSON.parse(r.stdout) as { warnings: string[] }).warnings).toContain(`removed run directories left by ended kvbench processes: ${ended.dir}`);
    expect(fs.existsSync(ended.dir)).toBe(false);
  }, 60_000);
});
