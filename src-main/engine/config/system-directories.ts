/**
 * The directories a benchmark must never write into, and the one test every front end (`kvbench run`,
 * the suite planner, the engine's own storage target) applies to a cache directory. The test follows
 * symbolic links: a link to /dev/shm names /dev/shm, whatever the link's own path says.
 */
import { printable } from '../../../src-shared/domain/label-text.ts';
import os from 'node:os';
import { sep } from 'node:path';
import { resolveRealPath } from '../../util/real-path.ts';
import { statOrNull } from '../../util/stat-or-null.ts';

export { resolveRealPath };

/** The reference refuses these and everything below them as `--cache-dir` (`workload.py`). */
const REFERENCE_SYSTEM_DIRECTORIES = ['/etc', '/bin', '/sbin', '/usr/bin', '/usr/sbin', '/boot', '/sys', '/proc', '/dev', '/root'];

/**
 * kvbench also refuses these and everything below them: the rest of the operating system's own files
 * (all of /usr, the libraries, also where /lib is not a link into /usr), the services' state and logs,
 * and /run, a small RAM-backed file system that services need room in. Not the places scratch drives
 * are mounted or scratch space is kept (/mnt, /media, /data, /scratch, /srv, /opt, /home, /tmp,
 * /var/tmp, /var/cache …), and not the user's own home when it lies in one of these (a CI account's
 * /var/lib/jenkins): see {@link systemDirectoryOf}.
 */
const MORE_SYSTEM_DIRECTORIES = ['/usr', '/lib', '/lib32', '/lib64', '/libx32', '/run', '/var/lib', '/var/log'];

/** Every directory refused with everything below it: the reference's, then kvbench's own. */
export const SYSTEM_DIRECTORIES: readonly string[] = Object.freeze([...REFERENCE_SYSTEM_DIRECTORIES, ...MORE_SYSTEM_DIRECTORIES]);

/** Refused themselves, where a run would scatter its directories among the system's, but not below. */
export const SYSTEM_DIRECTORY_ROOTS: readonly string[] = Object.freeze(['/', '/var']);

/** The refused set in words, for --help and the docs (each entry covered by another left out: /usr/bin). */
export const SYSTEM_DIRECTORIES_TEXT = `${SYSTEM_DIRECTORY_ROOTS.join(' and ')} themselves, and ${SYSTEM_DIRECTORIES.filter(
  (d) => !SYSTEM_DIRECTORIES.some((other) => d.startsWith(other + sep)),
).join(', ')} with everything below them`;

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
 * reference's plain string prefix test also refused e.g. `/devices` and `/rootfs`). Inside `home` (the
 * user's home directory, links resolved) only the reference's directories count: an account whose home
 * is /var/lib/jenkins works there, and root's /root stays refused as in the reference.
 */
export function systemDirectoryOf(realPath: string, home: string = resolveRealPath(os.homedir())): string | undefined {
  if (SYSTEM_DIRECTORY_ROOTS.includes(realPath)) return realPath;
  const inHome = home !== sep && (realPath === home || realPath.startsWith(home + sep));
  return (inHome ? REFERENCE_SYSTEM_DIRECTORIES : SYSTEM_DIRECTORIES).find((d) => realPath === d || realPath.startsWith(d + sep));
}

/**
 * The system directory a database path is in, if any: as for a cache directory, except /var/lib,
 * where services keep their state and a server's kvbench database belongs (`kvbench serve` run as a
 * service), and the user's own home, root's /root included, where the default database lives.
 */
export function databaseSystemDirectoryOf(realPath: string, home: string = resolveRealPath(os.homedir())): string | undefined {
  const dir = systemDirectoryOf(realPath, home);
  if (dir === '/var/lib') return undefined;
  if (dir === '/root' && realPath.startsWith(home + sep)) return undefined;
  return dir;
}

/** `${name} cannot be a system directory: <real path>` when `dir` leads into one (links followed), else null. */
export function systemDirectoryError(dir: string, name: string): string | null {
  const real = resolveRealPath(dir);
  return systemDirectoryOf(real) ? `${name} cannot be a system directory: ${printable(real)}` : null;
}
