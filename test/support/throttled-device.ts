import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A small RAM-backed ext4 on a loop device, throttled with a cgroup v1 blkio limit: a slow device with
 * a known bandwidth, as in environment.md. Needs root, losetup, mkfs.ext4 and cgroup v1 blkio; callers
 * skip (and say why) when `setUpThrottledDevice` returns a reason instead of a device.
 */
export interface ThrottledDevice {
  mountDir: string;
  cgroupDir: string;
  bytesPerSec: number;
  tearDown(): void;
}

const sh = (cmd: string, args: string[]): string => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

export function setUpThrottledDevice(opts: { imageMiB: number; bytesPerSec: number; tag: string }): ThrottledDevice | string {
  if (process.getuid?.() !== 0) return 'needs root (loop device, mount, cgroup)';
  if (!fs.existsSync('/sys/fs/cgroup/blkio/cgroup.procs')) return 'no cgroup v1 blkio controller';
  const root = fs.mkdtempSync(path.join(os.tmpdir(), `kvb-${opts.tag}-`));
  const ram = path.join(root, 'ram');
  const mountDir = path.join(root, 'dev');
  const cgroupDir = `/sys/fs/cgroup/blkio/kvb-${opts.tag}-${process.pid}`;
  const undo: (() => void)[] = [];
  const tearDown = (): void => {
    for (const u of undo.reverse()) {
      try {
        u();
      } catch {
        // keep tearing down the rest
      }
    }
    fs.rmSync(root, { recursive: true, force: true });
  };
  try {
    fs.mkdirSync(ram);
    fs.mkdirSync(mountDir);
    sh('mount', ['-t', 'tmpfs', '-o', `size=${opts.imageMiB + 64}m`, 'tmpfs', ram]);
    undo.push(() => sh('umount', [ram]));
    const image = path.join(ram, 'disk.img');
    sh('truncate', ['-s', `${opts.imageMiB}M`, image]);
    const dev = sh('losetup', ['--find', '--show', image]);
    undo.push(() => sh('losetup', ['-d', dev]));
    // Eager ext4 initialisation: no lazy-init kernel thread writing behind the throttled runs.
    sh('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', dev]);
    sh('mount', [dev, mountDir]);
    undo.push(() => sh('umount', [mountDir]));
    const majorMinor = sh('lsblk', ['-dno', 'MAJ:MIN', dev]).replace(/\s/g, '');
    fs.mkdirSync(cgroupDir);
    undo.push(() => fs.rmdirSync(cgroupDir));
    fs.writeFileSync(path.join(cgroupDir, 'blkio.throttle.read_bps_device'), `${majorMinor} ${opts.bytesPerSec}`);
    fs.writeFileSync(path.join(cgroupDir, 'blkio.throttle.write_bps_device'), `${majorMinor} ${opts.bytesPerSec}`);
    return { mountDir, cgroupDir, bytesPerSec: opts.bytesPerSec, tearDown };
  } catch (err) {
    tearDown();
    return `could not set up a throttled loop device: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** Runs a command inside the device's cgroup (and so throttled); resolves with its exit code and output. */
export function runInCgroup(cgroupDir: string, argv: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const script = `echo $$ > ${cgroupDir}/cgroup.procs && exec "$@"`;
    const child = spawn('bash', ['-c', script, 'bash', ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
