import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** Name of the marker file that says which process owns a run directory. */
export const OWNER_MARKER = '.kvbench-owner.json';
export const RUN_DIR_PREFIX = 'kvbench-run-';

/** Prefix of the run directories of process `pid` (the pid is in the name, so a directory is never ownerless). */
export function runDirPrefix(pid: number): string {
  return `${RUN_DIR_PREFIX}${pid}-`;
}

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
    if (!name.startsWith(runDirPrefix(pid))) continue;
    const dir = path.join(base, name);
    let owner: { pid?: unknown; host?: unknown } | null = null;
    try {
      owner = JSON.parse(await fsp.readFile(path.join(dir, OWNER_MARKER), 'utf8')) as { pid?: unknown; host?: unknown };
    } catch {
      // Killed between creating the directory and marking it: it is still empty, and rmdir removes only that.
      if (await fsp.rmdir(dir).then(() => true, () => false)) removed.push(dir);
      continue;
    }
    if (owner.pid !== pid || owner.host !== os.hostname()) continue;
    await fsp.rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}
