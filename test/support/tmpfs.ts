// A small tmpfs to fill up: a disk that runs out of space while kvbench works, as another writer on
// a shared drive would make it. Needs root on Linux; tests skip (and say why) elsewhere.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { TestContext } from 'vitest';

function tryMountTmpfs(dir: string, size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
  }
}

/** The mounts made by mountTmpfsOrSkip and not yet undone. */
const mounted: string[] = [];

/**
 * Mounts a tmpfs of `size` (mount's syntax: `24m`) on the existing `dir`, or skips the test with the
 * reason on the console. `unmountTmpfsMounts` (in afterEach) undoes every such mount.
 */
export function mountTmpfsOrSkip(ctx: TestContext, dir: string, size: string): void {
  const failure = process.platform !== 'linux' ? 'not Linux' : tryMountTmpfs(dir, size);
  if (failure !== null) {
    console.warn(`skipped: cannot mount a tmpfs (${failure}); this test needs root on Linux`);
    ctx.skip();
  }
  mounted.push(dir);
}

export function unmountTmpfsMounts(): void {
  for (const dir of mounted.splice(0)) unmountTmpfs(dir);
}

export function unmountTmpfs(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
  } catch {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' }); // still busy: detach now, freed when released
  }
}

/**
 * Writes 1 MiB blocks into `file` until the filesystem is full, then 4 KiB blocks, so that less
 * than a page is left. Returns the bytes written.
 */
export function fillUntilFull(file: string): number {
  const fd = fs.openSync(file, 'w');
  let written = 0;
  try {
    for (const blockSize of [1 << 20, 4096]) {
      const block = Buffer.alloc(blockSize, 0xa5);
      try {
        for (;;) written += fs.writeSync(fd, block);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return written;
}
