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
