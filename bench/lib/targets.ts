// Where the benches run: a RAM-backed loop device with ext4 (stable, fast, O_DIRECT works), the
// machine's own disk (a directory on the root filesystem's device), and cgroup v1 blkio throttles
// for "the same device at two speeds". Everything created here is removed by the cleanup steps,
// also on Ctrl-C. Needs root for the loop device and the cgroups.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveBlockDevice, type BlockDeviceInfo } from '../../src-main/engine/metrics/device-stats.ts';
import { onCleanup } from './cleanup.ts';

export interface BenchTarget {
  /** `ram` or `disk`. */
  kind: 'ram' | 'disk';
  /** A directory of the bench's own on the device, removed at the end. */
  dir: string;
  device: BlockDeviceInfo | null;
  /** One line for the report: what the device is and how it was set up. */
  description: string;
}

function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function describe(dir: string, what: string): { device: BlockDeviceInfo | null; description: string } {
  const r = resolveBlockDevice(dir);
  if (!r.ok) return { device: null, description: `${what}; device counters unavailable: ${r.reason}` };
  const d = r.device;
  return {
    device: d,
    description: `${what}; block device ${d.name} (${d.majorMinor}${d.rotational === null ? '' : d.rotational ? ', rotational' : ', non-rotational'}, logical block ${d.logicalBlockBytes ?? '?'} B)`,
  };
}

/**
 * A RAM-backed block device with ext4 (tmpfs → a fully written image → losetup → mkfs.ext4 → mount;
 * docs/benchmarks.md), under names of this bench's own, so concurrent sessions' devices are never touched.
 */
export function setupRamTarget(opts: { imageGiB: number; tag: string }): BenchTarget {
  if (process.getuid?.() !== 0) throw new Error('the RAM-backed loop device needs root');
  const base = `/mnt/kvb-bench-${opts.tag}-${process.pid}`;
  const ram = `${base}-ram`;
  const mnt = `${base}-dev`;
  fs.mkdirSync(ram, { recursive: true });
  onCleanup(`rmdir ${ram}`, () => fs.rmdirSync(ram));
  // The tmpfs holds the image plus ext4's slack.
  sh('mount', ['-t', 'tmpfs', '-o', `size=${opts.imageGiB + 1}G`, 'tmpfs', ram]);
  onCleanup(`umount ${ram}`, () => sh('umount', [ram]));
  const image = path.join(ram, 'disk.img');
  // Written in full, not sparse: a sparse image makes the first run pay for tmpfs allocating (and
  // zeroing) every page it touches, in the loop driver, on the same 2 cores; that run wrote at
  // 0.85 GB/s here against 5.6–7.0 GB/s for the next ones (3.95 with a written image).
  sh('dd', ['if=/dev/zero', `of=${image}`, 'bs=16M', `count=${opts.imageGiB * 64}`]);
  const dev = sh('losetup', ['--find', '--show', image]);
  onCleanup(`losetup -d ${dev}`, () => sh('losetup', ['-d', dev]));
  // Initialise inode tables and journal now: by default ext4 zeroes them lazily in a kernel thread
  // after mount, which halved write throughput of the runs right after setup here (2.4 → 1.1 GB/s).
  sh('mkfs.ext4', ['-q', '-F', '-E', 'lazy_itable_init=0,lazy_journal_init=0', dev]);
  fs.mkdirSync(mnt, { recursive: true });
  onCleanup(`rmdir ${mnt}`, () => fs.rmdirSync(mnt));
  sh('mount', [dev, mnt]);
  onCleanup(`umount ${mnt}`, () => sh('umount', [mnt]));
  const dir = path.join(mnt, 'bench');
  fs.mkdirSync(dir);
  onCleanup(`rm -r ${dir}`, () => fs.rmSync(dir, { recursive: true, force: true }));
  const { device, description } = describe(dir, `RAM-backed loop device ${dev} (${opts.imageGiB} GiB ext4 image on tmpfs, filled once), mounted at ${mnt}`);
  const target: BenchTarget = { kind: 'ram', dir, device, description };
  fillOnce(target);
  return target;
}

/**
 * Brings a fresh RAM target closer to its steady state: fills 90 % of its free space with one
 * direct-I/O file and removes it (ext4 allocates every block group once). The first kvbench run
 * after setup wrote at 3.95 GB/s without this against 5.3–5.7 with it (5.7–7.6 for later runs),
 * so benches also make one unmeasured warm-up run before measuring. Not done on the machine's
 * disk: filling a shared disk would starve everything else on it.
 */
function fillOnce(target: BenchTarget): { bytes: number; seconds: number } {
  const st = fs.statfsSync(target.dir);
  const chunks = Math.floor((Number(st.bavail) * Number(st.bsize) * 0.9) / (16 * 2 ** 20));
  const file = path.join(target.dir, 'kvb-bench-fill');
  const t0 = performance.now();
  try {
    sh('dd', ['if=/dev/zero', `of=${file}`, 'bs=16M', 'oflag=direct', `count=${chunks}`]);
  } finally {
    fs.rmSync(file, { force: true });
  }
  return { bytes: chunks * 16 * 2 ** 20, seconds: (performance.now() - t0) / 1000 };
}

/** A directory of the bench's own on the machine's disk (default: under /var/tmp, the root filesystem). */
export function setupDiskTarget(opts: { parent: string; tag: string }): BenchTarget {
  const dir = fs.mkdtempSync(path.join(opts.parent, `kvb-bench-${opts.tag}-`));
  onCleanup(`rm -r ${dir}`, () => fs.rmSync(dir, { recursive: true, force: true }));
  const { device, description } = describe(dir, `machine's own disk: ${dir}`);
  return { kind: 'disk', dir, device, description };
}

export interface ThrottleCgroup {
  name: string;
  /** Write a pid here to move that process (and the threads and children it starts later) into the cgroup. */
  procsFile: string;
  bytesPerSec: number;
}

/** A cgroup v1 blkio group limiting reads and writes on `majorMinor` to `bytesPerSec` each. */
export function createThrottleCgroup(opts: { tag: string; majorMinor: string; bytesPerSec: number }): ThrottleCgroup {
  const root = '/sys/fs/cgroup/blkio';
  if (!fs.existsSync(path.join(root, 'blkio.throttle.read_bps_device'))) {
    throw new Error(`cgroup v1 blkio throttling is not available (${root})`);
  }
  const name = `kvb-bench-${opts.tag}-${process.pid}`;
  const dir = path.join(root, name);
  fs.mkdirSync(dir);
  onCleanup(`rmdir cgroup ${name}`, () => {
    // A cgroup can only be removed once empty: move any straggler back to the root first.
    for (const pid of fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        fs.writeFileSync(path.join(root, 'cgroup.procs'), pid);
      } catch {
        // the process may have exited meanwhile
      }
    }
    fs.rmdirSync(dir);
  });
  fs.writeFileSync(path.join(dir, 'blkio.throttle.read_bps_device'), `${opts.majorMinor} ${opts.bytesPerSec}`);
  fs.writeFileSync(path.join(dir, 'blkio.throttle.write_bps_device'), `${opts.majorMinor} ${opts.bytesPerSec}`);
  return { name, procsFile: path.join(dir, 'cgroup.procs'), bytesPerSec: opts.bytesPerSec };
}

/** One line about the machine, for every bench report. */
export function machineLine(): string {
  const cpus = os.cpus();
  return `${os.hostname()}: ${cpus.length} CPU(s) ${cpus[0]?.model ?? ''}, ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, Linux ${os.release()}, Node ${process.version}`;
}

export function requireFio(): string {
  try {
    return sh('fio', ['--version']);
  } catch {
    throw new Error('fio is not installed: apt-get install -y fio');
  }
}
