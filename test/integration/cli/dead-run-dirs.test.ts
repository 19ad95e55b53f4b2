// Run directories of engines that ended without cleaning up (SIGKILLed by their orphan watchdog
// after their host died too) are removed by the next run, suite trial or probe on that directory,
// by their owner markers: a process of this host, boot and PID namespace that has ended. Never a
// live process's, another host's, boot's or PID namespace's (a container sharing the hostname), or
// a directory kvbench cannot attribute.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { markRunDirOwner, OWNER_MARKER, removeDeadOwnersRunDirs, removeOrphanRunDirs, runDirPrefix } from '../../../src-main/engine/tiers/run-dir-ownership.ts';
import { currentPidSpace, currentProcess } from '../../../src-main/util/process-identity.ts';
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

/** A run directory of `pid` with a hand-written marker (another host, boot or PID namespace, another start time, an old marker). */
function dirWithMarker(cacheDir: string, pid: number, marker: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(cacheDir, runDirPrefix(pid)));
  fs.writeFileSync(path.join(dir, OWNER_MARKER), JSON.stringify(marker));
  fs.writeFileSync(path.join(dir, 'entry-0.kv'), 'kv');
  return dir;
}

describe('run directories of ended processes', () => {
  it('are removed; those of live processes, other hosts, boots and PID namespaces and unattributable ones stay', async () => {
    const cacheDir = makeTempDir();
    const foreign = path.join(cacheDir, 'keep.npy');
    fs.writeFileSync(foreign, 'not kvbench');
    const ended = await dirOfEndedProcess(cacheDir);
    const me = currentProcess();
    const space = currentPidSpace();
    expect(space.bootId, 'this test needs Linux /proc').not.toBeNull();
    expect(space.pidNamespace, 'this test needs Linux /proc').not.toBeNull();
    const live = fs.mkdtempSync(path.join(cacheDir, runDirPrefix(me.pid)));
    await markRunDirOwner(live);
    // This pid, but a process that started at another time: its owner ended and the pid was reused.
    const reused = dirWithMarker(cacheDir, me.pid, { pid: me.pid, host: os.hostname(), startTicks: '1', ...space });
    // Markers from before boot and PID namespace were recorded (the older without a start time too):
    // whose pid they name is unknown, so even one that is dead here stays.
    const oldLive = dirWithMarker(cacheDir, me.pid, { pid: me.pid, host: os.hostname() });
    const oldEnded = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname() });
    const olderEnded = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname(), startTicks: null });
    const otherHost = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: `not-${os.hostname()}`, startTicks: null, ...space });
    // Same hostname, but another boot (a cloned VM on a shared filesystem) or PID namespace (a container
    // sharing the hostname): that pid is dead here but names a process that may be running there.
    const otherBoot = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname(), startTicks: null, ...space, bootId: 'another-boot' });
    const otherNamespace = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname(), startTicks: null, ...space, pidNamespace: 'pid:[1]' });
    const spaceUnread = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname(), startTicks: null, bootId: null, pidNamespace: null });
    const nameDisagrees = dirWithMarker(cacheDir, me.pid, { pid: ended.pid, host: os.hostname(), startTicks: null, ...space });
    const unmarked = fs.mkdtempSync(path.join(cacheDir, runDirPrefix(ended.pid)));

    const removed = await removeDeadOwnersRunDirs(cacheDir);

    expect(removed.sort()).toEqual([ended.dir, reused].sort());
    for (const dir of [ended.dir, reused]) expect(fs.existsSync(dir), dir).toBe(false);
    const kept = [live, oldLive, oldEnded, olderEnded, otherHost, otherBoot, otherNamespace, spaceUnread, nameDisagrees, unmarked];
    for (const dir of kept) expect(fs.existsSync(dir), dir).toBe(true);
    expect(fs.readFileSync(foreign, 'utf8')).toBe('not kvbench');
  });

  // A live engine in a container that shares the hostname but not the PID namespace (docker
  // --uts=host, Kubernetes hostNetwork) with one cache directory: its pid means nothing here (its
  // pid 1 is some other process of this namespace, with another start time). Needs unprivileged
  // user namespaces, as rootless containers do.
  const unshare = ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child'];
  const canUnshare = process.platform === 'linux' && spawnSync('unshare', [...unshare, 'true']).status === 0;
  it.skipIf(!canUnshare)('of a live process in another PID namespace stays', async () => {
    const cacheDir = makeTempDir();
    const script = `
      import fs from 'node:fs';
      import path from 'node:path';
      const { markRunDirOwner, runDirPrefix } = await import(${JSON.stringify(OWNERSHIP_MODULE)});
      const dir = fs.mkdtempSync(path.join(${JSON.stringify(cacheDir)}, runDirPrefix(process.pid)));
      await markRunDirOwner(dir);
      fs.writeFileSync(path.join(dir, 'entry-0.kv'), 'kv');
      process.stdout.write(dir + '\\n');
      process.stdin.resume().on('end', () => process.exit(0));
    `;
    const child = spawn('unshare', [...unshare, process.execPath, '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', () => out.includes('\n') && resolve());
        child.once('close', () => reject(new Error(`the namespaced process ended before marking its directory: ${out}`)));
      });
      const dir = out.trim();
      const marker = JSON.parse(fs.readFileSync(path.join(dir, OWNER_MARKER), 'utf8')) as { pidNamespace: string };
      expect(marker.pidNamespace).not.toBe(currentPidSpace().pidNamespace);

      expect(await removeDeadOwnersRunDirs(cacheDir)).toEqual([]);
      expect(fs.existsSync(path.join(dir, 'entry-0.kv'))).toBe(true);
    } finally {
      child.stdin.end();
      expect(await exited).toBe(0);
    }
  }, 30_000);

  it("of an engine that just ended are removed by its pid, never another boot's or PID namespace's with that pid", async () => {
    // What the host does after its engine crashed, and at open for the engines of interrupted runners.
    const cacheDir = makeTempDir();
    const ended = await dirOfEndedProcess(cacheDir);
    const me = currentProcess();
    const space = currentPidSpace();
    const otherBoot = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname(), startTicks: null, ...space, bootId: 'another-boot' });
    const otherNamespace = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname(), startTicks: null, ...space, pidNamespace: 'pid:[1]' });
    const old = dirWithMarker(cacheDir, ended.pid, { pid: ended.pid, host: os.hostname(), startTicks: null });

    expect(await removeOrphanRunDirs(cacheDir, ended.pid)).toEqual([ended.dir]);
    for (const dir of [otherBoot, otherNamespace, old]) expect(fs.existsSync(dir), dir).toBe(true);
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
