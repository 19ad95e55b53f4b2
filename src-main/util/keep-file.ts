import fsp from 'node:fs/promises';
import path from 'node:path';

/** Where a file that must not be lost went (null: nowhere), and why each place before it refused. */
export interface KeptFile {
  path: string | null;
  /** `DIR: why`, one per directory that could not take the file, in the order tried. */
  failures: string[];
}

/** Names tried per directory (`name`, `name-2`, …) before it counts as unusable. */
const MAX_NAMES_PER_DIR = 100;

/**
 * Saves a file whose contents exist nowhere else (a finished run's results that their own place
 * refused) into the first of `dirs` that takes it. A place that is full, missing or read-only is
 * skipped, so the caller lists several on different filesystems. The file is `name`, or `stem-2.ext`,
 * `stem-3.ext`… when that exists: the name is claimed with O_EXCL before `write` runs, so the file
 * never replaces anything, not even one created meanwhile. `write` writes the whole file at the path
 * it is given (through `writeFileAtomic`, which may replace the empty claimed file); when it throws,
 * the claimed name is removed again and the next directory is tried.
 */
export async function keepInFirstWritable(dirs: readonly string[], name: string, write: (file: string) => Promise<void>): Promise<KeptFile> {
  const failures: string[] = [];
  for (const dir of [...new Set(dirs.map((d) => path.resolve(d)))]) {
    let claimed: string | null = null;
    try {
      claimed = await claimName(dir, name);
      await write(claimed);
      return { path: claimed, failures };
    } catch (err) {
      if (claimed !== null) await fsp.rm(claimed, { force: true }).catch(() => undefined);
      failures.push(`${dir}: ${(err as Error).message}`);
    }
  }
  return { path: null, failures };
}

/** Creates an empty file named `name` (or the first free `stem-N.ext`) in `dir`; returns its path. */
async function claimName(dir: string, name: string): Promise<string> {
  const ext = path.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 1; n <= MAX_NAMES_PER_DIR; n++) {
    const file = path.join(dir, n === 1 ? name : `${stem}-${n}${ext}`);
    try {
      await (await fsp.open(file, 'wx', 0o644)).close();
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new Error(`${name} and ${MAX_NAMES_PER_DIR - 1} numbered variants of it exist already`);
}
