// Which process owns a `running` trial or a run directory, and whether it is still alive: the pid
// alone is not enough (pids are reused), so the process's start time (/proc/<pid>/stat, field 22) is
// kept beside it.
// A zombie — killed but not yet reaped by its parent — counts as dead.
import fs from 'node:fs';
import os from 'node:os';

export interface ProcessRef {
  pid: number;
  /** Where the pid means this process: the hostname, then (where known) the boot and PID namespace; see hostIdentity. */
  host: string;
  /** Start time in clock ticks since boot (Linux); null elsewhere. */
  startTicks: string | null;
}

/** A process's line of /proc/<pid>/stat (Linux); null where it cannot be read (gone, or no /proc). */
export function readStat(pid: number): { state: string; parentPid: number; sessionId: number; startTicks: string } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp session …": comm may hold spaces and parentheses, so split after the last ')'.
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: rest[0], parentPid: Number(rest[1]), sessionId: Number(rest[3]), startTicks: rest[19] };
  } catch {
    return null;
  }
}

export function currentProcess(): ProcessRef {
  return { pid: process.pid, host: hostIdentity(), startTicks: readStat(process.pid)?.startTicks ?? null };
}

/** Between a host identity's hostname and the PID space it adds (a hostname never holds it). */
const PID_SPACE_SEPARATOR = '|';

/**
 * This process's host as a stored runner names it: the hostname, and where both can be read the boot
 * and PID namespace ("lab1|boot=…|pid:[4026531836]"), so that a database shared by containers with
 * one hostname (or cloned VMs on one export) never takes another's live runner for a dead one here.
 * Rows written before carry the hostname alone.
 */
export function hostIdentity(space: PidSpace = currentPidSpace()): string {
  const { bootId, pidNamespace } = space;
  return bootId !== null && pidNamespace !== null ? [os.hostname(), `boot=${bootId}`, pidNamespace].join(PID_SPACE_SEPARATOR) : os.hostname();
}

/** The hostname a host identity starts with, for messages. */
export function hostNameOf(identity: string): string {
  return identity.split(PID_SPACE_SEPARATOR)[0];
}

/** Whether a stored host identity is this process's host: the hostname, and the PID space where it names one. */
function isThisHost(identity: string): boolean {
  if (hostNameOf(identity) !== os.hostname()) return false;
  // The hostname alone (written before the PID space was kept, or where it could not be read): as before.
  return !identity.includes(PID_SPACE_SEPARATOR) || identity === hostIdentity();
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
  if (ref.host !== null && !isThisHost(ref.host)) return 'unknown';
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
