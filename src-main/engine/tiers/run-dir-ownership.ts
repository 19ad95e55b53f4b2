import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Name of the marker file that says which process owns a run directory. */
export const OWNER_MARKER = '.kvbench-owner.json';
export const RUN_DIR_PREFIX = 'kvbench-run-';

export async function markRunDirOwner(runDir: string): Promise<void> {
  await fsp.writeFile(path.join(runDir, OWNER_MARKER), JSON.stringify({ pid: process.pid, host: os.hostname() }));
}

export async function unmarkRunDir(runDir: string): Promise<void> {
  await fsp.rm(path.join(runDir, OWNER_MARKER), { force: true });
}

/**
 * Removes run directories left by an engine process that died without cleaning up: only
 * `kvbench-run-*` directories whose marker names exactly that pid on this host. Nothing else in the
 * cache directory is touched.
 */
export async function removeOrphanRunDirs(cacheDir: string | null, pid: number): Promise<string[]> {
  const base = path.resolve(cacheDir ?? os.tmpdir());
  const removed: string[] = [];
  let names: string[];
  try {
    names = await fsp.readdir(base);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(RUN_DIR_PREFIX)) continue;
    const dir = path.join(base, name);
    try {
      const owner = JSON.parse(await fsp.readFile(path.join(dir, OWNER_MARKER), 'utf8')) as { pid?: unknown; host?: unknown };
      if (owner.pid !== pid || owner.host !== os.hostname()) continue;
    } catch {
      continue;
    }
    await fsp.rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
