// Why a cache directory cannot be used, in words: a file given as the directory (or as the
// ancestor it would be created in), a read-only file system, a directory this user may not write.
// The kernel's own answers mislead here: access(2) on a file fails X_OK ("not writable"), and a
// recursive mkdir under a read-only mount reports ENOENT, not EROFS.
import fs from 'node:fs';
import { statOrNull } from '../util/stat-or-null.ts';
import { nearestExisting } from './linux-storage.ts';

export interface CacheDirRefusal {
  /** 'not-a-directory' is bad input (VALIDATION); the others are the target's state. */
  kind: 'not-a-directory' | 'read-only' | 'denied' | 'other';
  message: string;
}

/**
 * Why `cacheDir` (or, when it does not exist yet, the nearest existing ancestor it would be created
 * in) cannot hold the storage tier's files; null when it can, or when nothing exists to ask (the
 * caller's own error then says it).
 */
export function cacheDirRefusal(cacheDir: string): CacheDirRefusal | null {
  const { resolved, exists } = nearestExisting(cacheDir);
  const st = statOrNull(resolved);
  if (st === null) return null;
  const inIt = exists ? '' : `, so the cache directory ${cacheDir} cannot be created in it`;
  if (!st.isDirectory()) {
    const what = st.isFile() ? 'is a file' : 'is not a directory';
    return {
      kind: 'not-a-directory',
      message: exists ? `${resolved} ${what}: the cache directory must be a directory (one that does not exist yet is created)` : `${resolved} ${what}${inIt}`,
    };
  }
  try {
    fs.accessSync(resolved, fs.constants.W_OK | fs.constants.X_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return { kind: 'read-only', message: `${resolved} is on a read-only file system${inIt}` };
    if (code === 'EACCES' || code === 'EPERM') return { kind: 'denied', message: `${resolved} is not writable by this user${inIt}` };
    return { kind: 'other', message: `${resolved} is not writable (${code ?? (err as Error).message})${inIt}` };
  }
}
