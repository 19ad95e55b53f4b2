// Another process reading the same drive while kvbench runs, as on a shared lab machine: a loop of
// direct sequential reads of its own file, so every byte it reads reaches the device and lifts the
// device's counters (/proc/diskstats) without touching kvbench's files or the page cache.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { onCleanup } from './cleanup.ts';

export interface SharedReader {
  file: string;
  /** Stops the reader and removes its file. */
  stop: () => void;
}

/**
 * Writes `fileMiB` of random bytes to `dir` (direct, so none stays cached), then reads it with
 * `jobs` loops at once until stopped (one loop cannot keep up with page-cache-speed reads).
 */
export function startSharedReader(dir: string, fileMiB: number, jobs: number): SharedReader {
  const file = path.join(dir, `shared-reader-${process.pid}.bin`);
  execFileSync('dd', ['if=/dev/urandom', `of=${file}`, 'bs=1M', `count=${fileMiB}`, 'oflag=direct', 'status=none']);
  const loop = 'while :; do dd if="$1" of=/dev/null bs=16M iflag=direct status=none || exit 1; done';
  const script = `for i in $(seq ${jobs}); do (${loop}) & done; wait`;
  // Its own process group, so one kill stops every loop.
  const child = spawn('bash', ['-c', script, 'reader', file], { detached: true, stdio: 'ignore' });
  const stop = onCleanup(`stop the shared reader (pid ${child.pid}) and remove ${file}`, () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    fs.rmSync(file, { force: true });
  });
  return { file, stop };
}
