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

/**
 * The outermost directory on the way to `dir` that does not exist yet (what `mkdir -p dir` would
 * create first), or null when `dir` exists: a host whose engine may create `dir` and be killed
 * before removing it knows from this what to remove.
 */
export async function outermostMissingDir(dir: string): Promise<string | null> {
  let missing: string | null = null;
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const exists = await fsp.stat(d).then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
    );
    if (exists) return missing;
    missing = d;
    if (path.dirname(d) === d) return missing;
  }
}
