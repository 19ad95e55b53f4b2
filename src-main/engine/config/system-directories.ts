/**
 * The directories a benchmark must never write into, and the one test every front end (`kvbench run`,
 * the suite planner, the engine's own storage target) applies to a cache directory. The test follows
 * symbolic links: a link to /dev/shm names /dev/shm, whatever the link's own path says.
 */
import { sep } from 'node:path';
import { resolveRealPath } from '../../util/real-path.ts';
import { statOrNull } from '../../util/stat-or-null.ts';

export { resolveRealPath };

/** The reference refuses these and everything below them as `--cache-dir` (`workload.py`). */
export const SYSTEM_DIRECTORIES: readonly string[] = Object.freeze(['/etc', '/bin', '/sbin', '/usr/bin', '/usr/sbin', '/boot', '/sys', '/proc', '/dev', '/root']);

/**
 * Whether two paths name one file: the same real path (a symbolic link, a `dir/..` spelling), or, for
 * files that exist, the same inode (a hard link). Guards outputs that would overwrite an input.
 */
export function isSameFile(a: string, b: string): boolean {
  const realA = resolveRealPath(a);
  const realB = resolveRealPath(b);
  if (realA === realB) return true;
  const statA = statOrNull(realA);
  const statB = statA ? statOrNull(realB) : null;
  return statA !== null && statB !== null && statA.dev === statB.dev && statA.ino === statB.ino;
}

/**
 * The system directory `realPath` is, or is inside, if any. Compares whole path components (a fix: the
 * reference's plain string prefix test also refused e.g. `/devices` and `/rootfs`).
 */
export function systemDirectoryOf(realPath: string): string | undefined {
  return SYSTEM_DIRECTORIES.find((d) => realPath === d || realPath.startsWith(d + sep));
}

/** `${name} cannot be a system directory: <real path>` when `dir` leads into one (links followed), else null. */
export function systemDirectoryError(dir: string, name: string): string | null {
  const real = resolveRealPath(dir);
  return systemDirectoryOf(real) ? `${name} cannot be a system directory: ${real}` : null;
}
