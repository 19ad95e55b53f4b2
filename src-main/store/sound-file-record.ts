// A record of database files PRAGMA quick_check found sound, so that a command that only reads
// (history, report, export) skips the check — a read of the whole file: 1.7 s of a 2.6 s `history`
// on a 760 MB database — where the file is exactly as it was when checked. Kept in the user's cache
// directory ($XDG_CACHE_HOME/kvbench/sound-databases.json), never in the database, which reads never
// write (and which may lie on read-only media).
//
// "Exactly as it was": the same device and inode, size, mtime and ctime (in ns), SQLite's 100-byte
// header (its file change counter at offset 24, page count, schema cookie …), and the same -wal file
// (none or empty, or the same inode, size, times and 32-byte header). Any write through the file
// system changes the mtime and ctime; restoring the mtime (touch -d, utimes) changes the ctime, which
// no user can set. A file modified in the last seconds before its check is not recorded ("racily
// sound", as git says of its index): a write in the same tick of the file system's clock would leave
// its times as they were. Damage that changes no metadata at all (bit rot, a bad sector) is what a
// read finds (SQLITE_CORRUPT), and the front ends handle it as the damage an open finds.
//
// Only a record: any failure to read or write it (no home, a read-only cache directory, a record
// damaged or from another build) costs the check, never the command. Two processes at once may
// each write it; the rename makes one of them win whole, and the loser's file is checked again later.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';

/** SQLite's database header: the file change counter, page count, schema cookie, user_version, application_id … */
const HEADER_BYTES = 100;
/** The -wal file's header: its checkpoint sequence and salts change when it starts again from its beginning. */
const WAL_HEADER_BYTES = 32;
/** How many files are remembered (the most recently checked): a user's databases, their copies and a few test files. */
const MAX_FILES = 64;
/**
 * A file modified this recently before its check started is not recorded: coarse file-system clocks
 * (FAT 2 s, HFS+ 1 s) would give a write just after the check the times the record holds.
 */
export const RACY_MTIME_MS = 2_000;
/** The ctime is set by the kernel's clock alone (ns on Linux file systems, in ticks of at most 10 ms). */
const RACY_CTIME_MS = 100;

const FileStateSchema = z.object({
  dev: z.string(),
  ino: z.string(),
  sizeBytes: z.string(),
  mtimeNs: z.string(),
  ctimeNs: z.string(),
  headerHex: z.string(),
});

const WalStateSchema = FileStateSchema.nullable();

const EntrySchema = z.object({
  file: z.string(),
  db: FileStateSchema,
  wal: WalStateSchema,
  checkedAtMs: z.number(),
});

const RecordSchema = z.object({ version: z.literal(1), sound: z.array(EntrySchema) });

type FileState = z.infer<typeof FileStateSchema>;
type Entry = z.infer<typeof EntrySchema>;

/** The database and its -wal as they are now, in the record's terms. */
export interface SoundnessKey {
  file: string;
  db: FileState;
  wal: FileState | null;
  /** When the file (or its -wal) was last modified, in ms: what raciness is judged by. */
  mtimeMs: number;
  ctimeMs: number;
}

/** `$XDG_CACHE_HOME/kvbench/sound-databases.json` (`~/.cache` without it; a relative XDG_CACHE_HOME is ignored, as XDG says). */
export function soundRecordFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(homedir(), '.cache'), 'kvbench', 'sound-databases.json');
}

function stateOf(file: string, headerBytes: number): { state: FileState; mtimeMs: number; ctimeMs: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const st = fs.fstatSync(fd, { bigint: true });
    const header = Buffer.alloc(headerBytes);
    const got = fs.readSync(fd, header, 0, headerBytes, 0);
    return {
      state: {
        dev: String(st.dev),
        ino: String(st.ino),
        sizeBytes: String(st.size),
        mtimeNs: String(st.mtimeNs),
        ctimeNs: String(st.ctimeNs),
        headerHex: header.subarray(0, got).toString('hex'),
      },
      mtimeMs: Number(st.mtimeNs / 1_000_000n),
      ctimeMs: Number(st.ctimeNs / 1_000_000n),
    };
  } finally {
    fs.closeSync(fd);
  }
}

/** The key of `file` (absolute) as it is now; null where it cannot be read (the check says why). */
export function soundnessKey(file: string): SoundnessKey | null {
  const db = stateOf(file, HEADER_BYTES);
  if (db === null) return null;
  const walSize = fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0;
  // An empty -wal holds nothing; one with frames is part of what quick_check reads.
  const wal = walSize > 0 ? stateOf(`${file}-wal`, WAL_HEADER_BYTES) : null;
  if (walSize > 0 && wal === null) return null;
  return {
    file,
    db: db.state,
    wal: wal?.state ?? null,
    mtimeMs: Math.max(db.mtimeMs, wal?.mtimeMs ?? 0),
    ctimeMs: Math.max(db.ctimeMs, wal?.ctimeMs ?? 0),
  };
}

const sameState = (a: FileState | null, b: FileState | null): boolean =>
  a === b || (a !== null && b !== null && (Object.keys(a) as (keyof FileState)[]).every((k) => a[k] === b[k]));

const sameKey = (a: Pick<SoundnessKey, 'db' | 'wal'>, b: Pick<SoundnessKey, 'db' | 'wal'>): boolean => sameState(a.db, b.db) && sameState(a.wal, b.wal);

/** The most a record is read (64 entries take about 30 KiB): anything larger is no record. */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/**
 * The record's entries; none where it cannot be read as one. Opened without blocking and read only
 * where it is a regular file of at most MAX_RECORD_BYTES: a FIFO nobody writes to, or a link to
 * /dev/zero, at its path would otherwise hang every command that opens a database.
 */
function readRecord(recordFile: string): Entry[] {
  let fd: number;
  try {
    fd = fs.openSync(recordFile, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch {
    return [];
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > MAX_RECORD_BYTES) return [];
    const bytes = Buffer.alloc(st.size);
    let got = 0;
    for (let n = -1; n !== 0 && got < bytes.length; got += n) n = fs.readSync(fd, bytes, got, bytes.length - got, null);
    const parsed = RecordSchema.safeParse(JSON.parse(bytes.subarray(0, got).toString('utf8')));
    return parsed.success ? parsed.data.sound : [];
  } catch {
    return [];
  } finally {
    fs.closeSync(fd);
  }
}

function writeRecord(recordFile: string, sound: Entry[]): void {
  const tmp = `${recordFile}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    fs.mkdirSync(path.dirname(recordFile), { recursive: true, mode: 0o700 });
    fs.writeFileSync(tmp, JSON.stringify({ version: 1, sound }), { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, recordFile);
  } catch {
    // A cache that cannot be written: the next open checks again.
    try {
      fs.rmSync(tmp, { force: true });
    } catch {
      // its folder cannot be reached either: nothing was written
    }
  }
}

const sameFile = (e: Entry, key: SoundnessKey): boolean => e.db.dev === key.db.dev && e.db.ino === key.db.ino;

/** Whether `key` (the file as it is now) is recorded sound: unchanged since a check found nothing wrong. */
export function recordedSound(key: SoundnessKey): boolean {
  return readRecord(soundRecordFile()).some((e) => sameFile(e, key) && sameKey(e, key));
}

/**
 * Records that a quick_check that started at `checkStartMs` found `before` sound, where the file is
 * still as it was before the check (`after`) and had not been modified racily close to it.
 */
export function recordSound(before: SoundnessKey, after: SoundnessKey | null, checkStartMs: number): void {
  if (after === null || !sameKey(before, after)) return;
  if (before.mtimeMs > checkStartMs - RACY_MTIME_MS || before.ctimeMs > checkStartMs - RACY_CTIME_MS) return;
  const recordFile = soundRecordFile();
  const others = readRecord(recordFile).filter((e) => !sameFile(e, before));
  const entry: Entry = { file: before.file, db: before.db, wal: before.wal, checkedAtMs: Date.now() };
  writeRecord(recordFile, [entry, ...others].slice(0, MAX_FILES));
}

/** Forgets `file` (damage found in it, by a check or a read): its next open checks it whole. */
export function forgetSound(file: string): void {
  const recordFile = soundRecordFile();
  let st: fs.BigIntStats | undefined;
  try {
    st = fs.statSync(file, { throwIfNoEntry: false, bigint: true });
  } catch {
    st = undefined; // forgotten by its name alone
  }
  const sound = readRecord(recordFile);
  const kept = sound.filter((e) => e.file !== file && (st === undefined || e.db.dev !== String(st.dev) || e.db.ino !== String(st.ino)));
  if (kept.length !== sound.length) writeRecord(recordFile, kept);
}
