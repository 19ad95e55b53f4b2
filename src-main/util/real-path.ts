import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * `p` with symlinks resolved as far as it exists (like Python's `Path.resolve()`), the rest appended:
 * a cache directory or output file that does not exist yet still resolves through its existing ancestors.
 */
export function resolveRealPath(p: string): string {
  let existing = resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync.native(existing), ...rest);
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return resolve(p);
      rest.unshift(basename(existing));
      existing = parent;
    }
  }
}
