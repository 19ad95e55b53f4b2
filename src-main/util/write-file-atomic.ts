import { randomBytes } from 'node:crypto';
import fsp from 'node:fs/promises';
import path from 'node:path';

/**
 * Writes `data` to `file` through a temporary file beside it, synced, then renamed over: a reader never
 * sees half a file, and a failed write never replaces a good one. The temporary name is unique per
 * process and call, so concurrent writes of one file cannot trample each other's temporaries.
 * `exclusive`: an existing `file` is never replaced (the temporary is linked into place, which fails
 * with EEXIST), for files that must not cost another its contents.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, opts: { mode?: number; exclusive?: boolean } = {}): Promise<void> {
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
    if (opts.exclusive) {
      await fsp.link(tmp, file);
      await fsp.rm(tmp, { force: true });
    } else {
      await fsp.rename(tmp, file);
    }
  } catch (err) {
    await fsp.rm(tmp, { force: true });
    throw err;
  }
}
