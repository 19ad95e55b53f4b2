import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * Removes, innermost first, the directory levels a `mkdir -p` of `dir` created (`createdFrom`, what
 * `fsp.mkdir(dir, { recursive: true })` returned, is the outermost); `rmdir` stops at anything not
 * empty, so nothing anyone put there is ever removed. Nothing to do when nothing was created.
 */
export async function removeCreatedDirs(dir: string, createdFrom: string | null | undefined): Promise<void> {
  if (!createdFrom) return;
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    try {
      await fsp.rmdir(d);
    } catch {
      return;
    }
    if (d === createdFrom || path.dirname(d) === d) return;
  }
}
