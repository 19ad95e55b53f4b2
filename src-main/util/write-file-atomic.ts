import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { statOrNull } from './stat-or-null.ts';

/** Why a file cannot be written, by errno, in words naming the user's file or its folder. */
const CAUSES: Readonly<Record<string, (file: string, dir: string) => string>> = {
  ENOENT: (_file, dir) => `its folder ${dir} does not exist`,
  ENOTDIR: (_file, dir) => `${dir} is not a folder`,
  EISDIR: (file) => `${file} is a directory`,
  ENOSPC: (_file, dir) => `the disk holding ${dir} is full`,
  EDQUOT: (_file, dir) => `the disk quota for ${dir} is used up`,
  EROFS: (_file, dir) => `${dir} is on a read-only filesystem`,
  EACCES: (_file, dir) => `permission denied: ${dir} is not writable`,
  EPERM: (_file, dir) => `permission denied: ${dir} is not writable`,
};

/**
 * A write of `path` that failed. The message is the cause, with the folder or file it concerns and
 * the errno code, never the temporary file written first; callers say `could not write PATH: …`.
 */
export class FileWriteError extends Error {
  readonly code: string | undefined;
  readonly path: string;

  constructor(file: string, cause: unknown, tmp: string) {
    const e = cause as NodeJS.ErrnoException;
    const describe = e.code === undefined ? undefined : CAUSES[e.code];
    const message = describe ? `${describe(file, path.dirname(path.resolve(file)))} (${e.code})` : String(e.message ?? cause).replaceAll(tmp, file);
    super(message, { cause });
    this.name = 'FileWriteError';
    this.code = e.code;
    this.path = file;
  }
}

/**
 * Why `file` cannot be written, checked before long work that ends in writing it (a missing folder,
 * a directory in its place, a read-only or forbidden folder), or null. A full disk shows only when
 * the write fails.
 */
export function outputFileProblem(file: string): string | null {
  const abs = path.resolve(file);
  const dir = path.dirname(abs);
  const existing = statOrNull(abs);
  const cause = (code: string): string => CAUSES[code](file, dir);
  if (existing?.isDirectory()) return cause('EISDIR');
  const folder = statOrNull(dir);
  if (folder === null) return cause('ENOENT');
  if (!folder.isDirectory()) return cause('ENOTDIR');
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EACCES';
    return (CAUSES[code] ?? CAUSES.EACCES)(file, dir);
  }
  return null;
}

/**
 * Writes `data` to `file` through a temporary file beside it, synced, then renamed over: a reader never
 * sees half a file, and a failed write never replaces a good one. The temporary name is unique per
 * process and call, so concurrent writes of one file cannot trample each other's temporaries.
 * (A file that must never replace another's claims its name first: util/keep-file.ts.)
 * Failures are FileWriteErrors, which name `file` (or its folder), not the temporary.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, opts: { mode?: number } = {}): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fh = await fsp.open(tmp, 'wx', opts.mode ?? 0o644);
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw new FileWriteError(file, err, tmp);
  }
}
