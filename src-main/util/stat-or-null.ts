import fs from 'node:fs';

/**
 * The file's stats, or null where there is nothing to stat: missing, and also a loop of links, a
 * directory on the way this user may not search, a name too long (ELOOP, EACCES, ENAMETOOLONG),
 * which `throwIfNoEntry: false` leaves to throw. For checks that report their own clear message.
 */
export function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
