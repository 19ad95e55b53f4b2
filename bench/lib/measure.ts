// Runs kvbench and fio as child processes and measures what they cost: CPU-seconds of the whole
// process tree (from this process's cutime + cstime in /proc/self/stat, which count every waited-for
// descendant: the kvbench CLI and its engine process, fio and its job processes), the block-layer
// bytes of that same process tree (bench/lib/process-io.ts: the tool's own I/O), and the bytes the
// device behind the target directory moved meanwhile (/proc/diskstats: every process's I/O).

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeviceStatsSampler, type DeviceStatsReport } from '../../src-main/engine/metrics/device-stats.ts';
import { whileRunning } from './cleanup.ts';
import { ioDelta, reapedChildrenIo, type ProcessIo } from './process-io.ts';
import type { ThrottleCgroup } from './targets.ts';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The kvbench to measure: this checkout's, or another build's (KVBENCH_BIN=/path/to/bin/kvbench.js, for A/B runs). */
export const KVBENCH_BIN = process.env.KVBENCH_BIN ?? path.join(REPO_ROOT, 'bin', 'kvbench.js');
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU-seconds of this process's reaped descendants so far (user, system). */
export function childrenCpuSeconds(): { user: number; system: number } {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ", field 3 (state) is index 0: cutime is field 16, cstime field 17.
  return { user: Number(f[13]) / CLK_TCK, system: Number(f[14]) / CLK_TCK };
}

/** Cumulative CPU jiffies of the whole machine: busy (everything but idle and iowait) and total. */
export function machineCpuJiffies(): { busy: number; total: number } {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total };
}

/**
 * Other sessions share this machine (2 cores): before a measured run, wait until the machine has
 * been mostly idle for `windowS` (busy share of all CPUs below `maxBusy`, and the target device
 * busy less than `maxDeviceBusy` of the time), for at most `maxWaitS`. Returns what it saw, so a
 * report can say when a measurement was taken on a busy machine.
 */
export async function waitForQuiet(opts: { deviceDir?: string; maxBusy?: number; maxDeviceBusy?: number; windowS?: number; maxWaitS?: number } = {}): Promise<{ waitedS: number; busy: number; deviceBusy: number | null; quiet: boolean }> {
  const maxBusy = opts.maxBusy ?? 0.2;
  const maxDeviceBusy = opts.maxDeviceBusy ?? 0.1;
  const windowS = opts.windowS ?? 2;
  const maxWaitS = opts.maxWaitS ?? 120;
  const started = performance.now();
  let last = { busy: 1, deviceBusy: null as number | null };
  while (true) {
    const sampler = opts.deviceDir ? DeviceStatsSampler.forDirectory(opts.deviceDir) : null;
    sampler?.start();
    const a = machineCpuJiffies();
    await new Promise((r) => setTimeout(r, windowS * 1000));
    const b = machineCpuJiffies();
    const dev = sampler?.stop();
    const busy = (b.busy - a.busy) / Math.max(1, b.total - a.total);
    const deviceBusy = dev?.io ? (dev.io.ioBusyMs * 1e6) / dev.io.elapsedNs : null;
    last = { busy, deviceBusy };
    const waitedS = (performance.now() - started) / 1000;
    if (busy <= maxBusy && (deviceBusy === null || deviceBusy <= maxDeviceBusy)) return { waitedS, busy, deviceBusy, quiet: true };
    if (waitedS >= maxWaitS) return { waitedS, busy: last.busy, deviceBusy: last.deviceBusy, quiet: false };
  }
}

export interface ChildRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  wallNs: number;
  cpuUserS: number;
  cpuSystemS: number;
  device: DeviceStatsReport;
  /**
   * Block-layer bytes of the run's own process tree (/proc/<pid>/io of every process it started,
   * summed by the kernel as they are reaped), over the same span as the CPU; io null with `reason`.
   */
  ownIo: { io: ProcessIo | null; reason: string | null };
  /** Share of all the machine's CPU time that was busy during the run (ours, the kernel's, other sessions'). */
  machineBusy: number;
  /** Machine CPU-seconds busy during the run beyond this run's own process tree: kernel threads (the loop device's), other sessions. */
  otherCpuS: number;
}

/**
 * Runs `cmd args` to completion, alone (CPU accounting takes deltas of all reaped children), in
 * `cgroup` when given: a shell writes its own pid into the cgroup, then execs the command, so the
 * command and everything it starts are throttled from their first I/O.
 */
export async function runMeasured(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; cgroup?: ThrottleCgroup | null; deviceDir: string; cwd?: string; watch?: (pid: number) => () => void },
): Promise<ChildRun> {
  const sampler = DeviceStatsSampler.forDirectory(opts.deviceDir);
  const [file, argv] = opts.cgroup
    ? ['bash', ['-c', 'echo $BASHPID > "$0" && exec "$@"', opts.cgroup.procsFile, cmd, ...args]]
    : [cmd, [...args]];
  const cpu0 = childrenCpuSeconds();
  const io0 = reapedChildrenIo();
  const m0 = machineCpuJiffies();
  sampler.start();
  const t0 = process.hrtime.bigint();
  // Its own process group, so an interrupted bench can stop it and everything it started (fio's
  // jobs, kvbench's engine) before unmounting the device they use.
  const child = spawn(file as string, argv as string[], { env: opts.env ?? process.env, cwd: opts.cwd ?? REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const forget = whileRunning(`stop ${cmd} (pid ${child.pid})`, () => stopGroupAndWait(child.pid));
  // Whatever else samples the run (bench/lib/device-window.ts) starts with the child and ends with it.
  const unwatch = opts.watch && child.pid !== undefined ? opts.watch(child.pid) : () => {};
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, s) => resolve({ code: c, signal: s }));
  }).finally(unwatch);
  forget();
  const wallNs = Number(process.hrtime.bigint() - t0);
  const device = sampler.stop();
  const cpu1 = childrenCpuSeconds();
  const io1 = reapedChildrenIo();
  const m1 = machineCpuJiffies();
  const cpuUserS = cpu1.user - cpu0.user;
  const cpuSystemS = cpu1.system - cpu0.system;
  const machineBusy = (m1.busy - m0.busy) / Math.max(1, m1.total - m0.total);
  const otherCpuS = Math.max(0, (m1.busy - m0.busy) / CLK_TCK - cpuUserS - cpuSystemS);
  const ownIo = io0.ok && io1.ok ? { io: ioDelta(io0.io, io1.io), reason: null } : { io: null, reason: io0.ok ? (io1.ok ? null : io1.reason) : io0.reason };
  return { code, signal, stdout, stderr, wallNs, cpuUserS, cpuSystemS, device, ownIo, machineBusy, otherCpuS };
}

/** SIGKILL to a process group, then wait (synchronously: cleanup may run in an exit handler) until its leader is gone. */
function stopGroupAndWait(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    return;
  }
  // A dead child stays a zombie until this process reaps it, which it cannot in an exit handler;
  // a zombie holds no files, so it counts as gone.
  const alive = (): boolean => {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  };
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 100 && alive(); i++) Atomics.wait(pause, 0, 0, 50);
}

/** The Node 24 that runs kvbench (this one: the benches run on it). */
export function nodeBin(): string {
  return process.execPath;
}
