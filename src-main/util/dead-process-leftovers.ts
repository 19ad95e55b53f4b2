// What kvbench processes leave behind when killed before their own clean-up (SIGKILL, a power loss):
// files and folders each names after its pid (`PREFIX<pid>…`), so that a later process can tell a dead
// one's leftovers from those of a process still running. Each caller decides what of them to remove
// (their kind, owner and age).
import fs from 'node:fs';
import path from 'node:path';
import { processLiveness } from './process-identity.ts';

/**
 * The entries of `folder` named `prefix` then a rest `rest` matches, its first group the pid, of a
 * process that no longer runs on this host (never this process's own): each its path. None where the
 * folder cannot be read.
 */
export function leftByDeadProcesses(folder: string, prefix: string, rest: RegExp): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return [];
  }
  const left: string[] = [];
  for (const name of names) {
    const m = name.startsWith(prefix) ? rest.exec(name.slice(prefix.length)) : null;
    const pid = m ? Number(m[1]) : NaN;
    if (!Number.isSafeInteger(pid) || pid === process.pid) continue;
    if (processLiveness({ pid, host: null, startTicks: null }) !== 'dead') continue;
    left.push(path.join(folder, name));
  }
  return left;
}
