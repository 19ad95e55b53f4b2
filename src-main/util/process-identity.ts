// Which process owns a `running` trial or a run directory, and whether it is still alive: the pid
// alone is not enough (pids are reused), so the process's start time (/proc/<pid>/stat, field 22) is
// kept beside it.
// A zombie — killed but not yet reaped by its parent — counts as dead.
import fs from 'node:fs';
import os from 'node:os';

export interface ProcessRef {
  pid: number;
  host: string;
  /** Start time in clock ticks since boot (Linux); null elsewhere. */
  startTicks: string | null;
}

function readStat(pid: number): { state: string; startTicks: string } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], startTicks: rest[19] };
  } catch {
    return null;
  }
}

export function currentProcess(): ProcessRef {
  return { pid: process.pid, host: os.hostname(), startTicks: readStat(process.pid)?.startTicks ?? null };
}

/**
 * The kernel boot and the PID namespace this process runs in (Linux; null where either cannot be
 * read). A pid names a process only within both: containers that share a hostname but not a PID
 * namespace (docker --uts=host or --network host, Kubernetes hostNetwork), or cloned VMs with the
 * same hostname on one NFS export, each have their own pid 57, so the hostname alone is no host identity.
 */
export interface PidSpace {
  bootId: string | null;
  pidNamespace: string | null;
}

function readPidSpace(): PidSpace {
  const read = (f: () => string): string | null => {
    try {
      return f().trim() || null;
    } catch {
      return null;
    }
  };
  return {
    bootId: read(() => fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')),
    // "pid:[4026531836]": the namespace's inode, unique within one boot.
    pidNamespace: read(() => fs.readlinkSync('/proc/self/ns/pid')),
  };
}

let pidSpace: PidSpace | null = null;

/** Neither changes while the process lives (setns moves only its children to another PID namespace). */
export function currentPidSpace(): PidSpace {
  pidSpace ??= readPidSpace();
  return pidSpace;
}

/**
 * Whether a pid recorded with `space` names a process this one can see: the same boot and PID
 * namespace, both known on each side. A record without them (written before they were kept) or
 * where either could not be read is no evidence either way.
 */
export function inCurrentPidSpace(space: { bootId?: string | null; pidNamespace?: string | null }): boolean {
  const me = currentPidSpace();
  return me.bootId !== null && me.pidNamespace !== null && space.bootId === me.bootId && space.pidNamespace === me.pidNamespace;
}

export type Liveness = 'alive' | 'dead' | 'unknown';

/** Whether the process is still running. 'unknown' for another host (a database on a shared filesystem). */
export function processLiveness(ref: { pid: number | null; host: string | null; startTicks: string | null }): Liveness {
  if (ref.pid === null || ref.pid <= 0) return 'dead';
  if (ref.host !== null && ref.host !== os.hostname()) return 'unknown';
  try {
    process.kill(ref.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'dead';
  }
  const stat = readStat(ref.pid);
  if (stat === null) return process.platform === 'linux' ? 'dead' : 'alive';
  if (stat.state === 'Z' || stat.state === 'X') return 'dead';
  if (ref.startTicks !== null && stat.startTicks !== ref.startTicks) return 'dead'; // the pid was reused
  return 'alive';
}
