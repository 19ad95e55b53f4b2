import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { currentPidSpace, currentProcess, inCurrentPidSpace, processLiveness } from '../../util/process-identity.ts';

/** Name of the marker file that says which process owns a run directory. */
export const OWNER_MARKER = '.kvbench-owner.json';
export const RUN_DIR_PREFIX = 'kvbench-run-';

/** Prefix of the run directories of process `pid` (the pid is in the name, so a directory is never ownerless). */
export function runDirPrefix(pid: number): string {
  return `${RUN_DIR_PREFIX}${pid}-`;
}

/**
 * What a marker says. `startTicks` (the process's start time) tells a reused pid apart; `bootId` and
 * `pidNamespace` say where the pid means that process (see PidSpace). Older markers lack them.
 */
const OwnerSchema = z.object({
  pid: z.number().int().positive(),
  host: z.string(),
  startTicks: z.string().nullable().optional(),
  bootId: z.string().nullable().optional(),
  pidNamespace: z.string().nullable().optional(),
});
type Owner = z.infer<typeof OwnerSchema>;

export async function markRunDirOwner(runDir: string): Promise<void> {
  const me = currentProcess();
  const { bootId, pidNamespace } = currentPidSpace();
  await fsp.writeFile(path.join(runDir, OWNER_MARKER), JSON.stringify({ pid: me.pid, host: os.hostname(), startTicks: me.startTicks, bootId, pidNamespace }));
}

/**
 * Whether the marker's pid means a process this one can see: same hostname, boot and PID namespace.
 * Anything else (a container sharing the hostname, a cloned VM on a shared filesystem, a marker from
 * before boot and namespace were kept, a system where they cannot be read) stays: its owner may be alive.
 */
function ownerVisibleHere(owner: Owner): boolean {
  return owner.host === os.hostname() && inCurrentPidSpace(owner);
}

/** The marker's owner; null without a marker (not written yet, or already removed). */
async function ownerOf(dir: string): Promise<Owner | null | 'unreadable'> {
  let text: string;
  try {
    text = await fsp.readFile(path.join(dir, OWNER_MARKER), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = OwnerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

export async function unmarkRunDir(runDir: string): Promise<void> {
  await fsp.rm(path.join(runDir, OWNER_MARKER), { force: true });
}

/**
 * Removes run directories left by an engine process that died without cleaning up: only
 * `kvbench-run-*` directories whose marker names exactly that pid on this host, boot and PID
 * namespace. Nothing else in the cache directory is touched.
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
    const owner = await ownerOf(dir);
    if (owner === null) {
      // Killed between creating the directory and marking it: it is still empty, and rmdir removes only that.
      if (await fsp.rmdir(dir).then(() => true, () => false)) removed.push(dir);
      continue;
    }
    if (owner === 'unreadable' || owner.pid !== pid || !ownerVisibleHere(owner)) continue;
    await fsp.rm(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/**
 * Removes the run directories in `baseDir` whose marker names a process of this host, boot and PID
 * namespace that has ended (an engine SIGKILLed by its orphan watchdog, or whose host died too,
 * leaves its directory and KV files behind, and nobody else knows its pid). Never one of a live
 * process, of another host, boot or PID namespace (a shared filesystem, a container sharing the
 * hostname), or without a readable marker that names all three; a pid since reused by another
 * process counts as ended when the marker's start time differs.
 */
export async function removeDeadOwnersRunDirs(baseDir: string): Promise<string[]> {
  const removed: string[] = [];
  const names = await fsp.readdir(baseDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(RUN_DIR_PREFIX)) continue;
    const dir = path.join(baseDir, name);
    const owner = await ownerOf(dir);
    if (owner === null || owner === 'unreadable' || !name.startsWith(runDirPrefix(owner.pid)) || !ownerVisibleHere(owner)) continue;
    if (processLiveness({ pid: owner.pid, host: owner.host, startTicks: owner.startTicks ?? null }) !== 'dead') continue;
    // One that cannot be removed (permissions) stays, as before; the run goes on.
    if (await fsp.rm(dir, { recursive: true, force: true }).then(() => true, () => false)) removed.push(dir);
  }
  return removed;
}
