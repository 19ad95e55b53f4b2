// The file modes of the databases kvbench creates. A trial database names hosts, drive serials and
// paths, so a new one is its owner's only (as settings.json), whichever entry point makes it (the
// app, `kvbench serve`, every CLI command) and whatever the umask; an existing one keeps the mode
// it has, since a lab may share one with a group on purpose.
import fs from 'node:fs';

/** The mode of a database kvbench creates: read and write for its owner only. */
export const NEW_DATABASE_MODE = 0o600;

/**
 * Creates `file` empty with `mode` (exactly: the umask is overridden, as it would strip the owner's
 * write permission under an odd one) before SQLite opens it. SQLite gives the -wal and -shm it
 * makes the database's mode, so they follow. Returns false, changing nothing, where the file exists
 * already; other failures (a folder this user may not write) throw, for the caller to word.
 */
export function createDatabaseFile(file: string, mode: number = NEW_DATABASE_MODE): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    fs.fchmodSync(fd, mode);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}
