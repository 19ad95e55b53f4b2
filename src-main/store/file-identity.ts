// Which file a connection opened, by device and inode, and whether the path still names it. SQLite
// keeps the file it opened (and its -wal) open by descriptor; a program that replaces the database by
// rename (mv, rsync, a restore tool) leaves the connection on the old file while the path names the
// new one. Another connection opened by path then reads another database than the first, and the
// first one's next write goes into the -wal at the path, whose frames the new file then takes as its
// own: SQLite's documented way to corrupt a database. One stat of the path (microseconds) before a
// write, or before a second connection is opened, sees it.
import fs from 'node:fs';
import { StoreError } from './store-error.ts';

/** A file by device and inode (strings: bigints do not pass through JSON, and a worker's data is cloned). */
export interface FileIdentity {
  dev: string;
  ino: string;
}

/** The identity of the file at `file` now; null where nothing is there (or it cannot be reached). */
export function fileIdentityOf(file: string): FileIdentity | null {
  try {
    const st = fs.statSync(file, { bigint: true, throwIfNoEntry: false });
    return st ? { dev: String(st.dev), ino: String(st.ino) } : null;
  } catch {
    return null;
  }
}

/** What is at the path of a file opened as `opened`: the same file, another one, or nothing. */
export function pathNow(file: string, opened: FileIdentity): 'same' | 'replaced' | 'gone' {
  const now = fileIdentityOf(file);
  if (now === null) return 'gone';
  return now.dev === opened.dev && now.ino === opened.ino ? 'same' : 'replaced';
}

/**
 * DB_REPLACED: the path `file` no longer names the file kvbench opened there (`how`). `reopen` says
 * how to open the file now at that path ("choose it again in Settings", "run the command again").
 */
export function replacedFileError(file: string, how: 'replaced' | 'gone', reopen: string): StoreError {
  const what =
    how === 'replaced'
      ? `the database file ${file} was replaced since kvbench opened it (another program moved, restored or copied a file onto that name)`
      : `the database file ${file} was moved away or deleted since kvbench opened it (nothing is at that name now)`;
  return new StoreError(
    'DB_REPLACED',
    `${what}: kvbench still has the file it opened, which is no longer at that path, and writes nothing to it (a write would damage the file that is there now, through the -wal beside it). ` +
      `To use the file now at that path, ${reopen}.`,
  );
}
