// Damaged database files as a crash, a bad sector or a scribble leaves them: a real kvbench database,
// then a copy of it with chosen pages overwritten. Shared by the CLI's, the backend's and the app's tests.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LATEST_SCHEMA_VERSION, openStore } from '../../src-main/store/open-store.ts';
import { soundnessKey, soundRecordFile } from '../../src-main/store/sound-file-record.ts';
import { openDatabase } from '../../src-main/store/sqlite.ts';
import { fakeHardware, kvbenchResults } from '../unit/store/fixtures.ts';
import { addSuiteTrials } from '../unit/store/seed-store.ts';

const PAGE_BYTES = 4096;

/** The file's SHA-256: what a test compares to show a damaged file was only read. */
export const sha = (file: string): string => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/**
 * Four suites of eight complete trials each, checkpointed into the file (no -wal); with `secondSystem`,
 * the last suite was run on another system (lab2), so that two systems can be compared.
 */
export function intactDatabase(dir: string, o: { secondSystem?: boolean } = {}): string {
  const db = path.join(dir, 'intact.db');
  const s = openStore(db);
  const hw = fakeHardware({ probe: true });
  const other = fakeHardware({ probe: true, systemId: 'sys-fedcba9876543210', hostname: 'lab2' });
  for (let k = 0; k < 4; k++) {
    addSuiteTrials(s, k === 3 && o.secondSystem ? other : hw, 8, (i) => ({ results: kvbenchResults({ tokPerS: 100 + 10 * k + i }) as unknown as Record<string, unknown> }));
  }
  s.close();
  return db;
}

/** intactDatabase as kvbench 9.1.0 would leave it (schema LATEST + 2), recording the oldest schema that reads it (kvbench_meta). */
export function newerDatabase(dir: string, readableBy: number): string {
  const db = intactDatabase(dir);
  const raw = openDatabase(db);
  raw.exec(`PRAGMA user_version = ${LATEST_SCHEMA_VERSION + 2}; DELETE FROM kvbench_meta;`);
  raw.prepare("INSERT INTO kvbench_meta (key, value) VALUES ('schema_written_by', '9.1.0'), ('readable_by_schema', ?)").run(String(readableBy));
  raw.close();
  return db;
}

/** Pages of the file by what they hold (SQLite's dbstat): `name/pagetype` → page numbers, ascending. */
export function pagesOf(db: string): Map<string, number[]> {
  const raw = openDatabase(db, { readonly: true });
  try {
    const out = new Map<string, number[]>();
    for (const r of raw.prepare('SELECT name, pagetype, pageno FROM dbstat ORDER BY pageno').all() as { name: string; pagetype: string; pageno: number }[]) {
      const key = `${r.name}/${r.pagetype}`;
      out.set(key, [...(out.get(key) ?? []), r.pageno]);
    }
    return out;
  } finally {
    raw.close();
  }
}

/** The last page of the overflow chain of the row at dbstat path `cell` of trials ('/002/000': the third leaf's first cell). */
export function lastOverflowPage(db: string, cell: string): number {
  const raw = openDatabase(db, { readonly: true });
  try {
    const r = raw.prepare("SELECT pageno FROM dbstat WHERE name = 'trials' AND pagetype = 'overflow' AND path LIKE ? ORDER BY path DESC LIMIT 1").get(`${cell}+%`) as { pageno: number } | undefined;
    if (!r) throw new Error(`no overflow page at ${cell}`);
    return r.pageno;
  } finally {
    raw.close();
  }
}

/** A copy of `db` with `pages` overwritten by fixed pseudo-random bytes (as `dd if=/dev/urandom … conv=notrunc` would, reproducibly). */
export function scribbled(db: string, name: string, pages: readonly number[]): string {
  const copy = path.join(path.dirname(db), name);
  fs.copyFileSync(db, copy);
  const fd = fs.openSync(copy, 'r+');
  try {
    let x = 0x2545f491;
    for (const p of pages) {
      const bytes = Buffer.alloc(PAGE_BYTES);
      for (let i = 0; i < PAGE_BYTES; i++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0;
        bytes[i] = x >>> 24;
      }
      fs.writeSync(fd, bytes, 0, PAGE_BYTES, (p - 1) * PAGE_BYTES);
    }
  } finally {
    fs.closeSync(fd);
  }
  return copy;
}

/**
 * A copy of intactDatabase (two systems) named `name` in `dir`, its second page of trials overwritten
 * (as a bad sector leaves it): PRAGMA quick_check fails, and the trials on that page cannot be read.
 */
export function damagedTrialsPage(dir: string, name = 'damaged.db'): { intact: string; damaged: string } {
  const intact = intactDatabase(dir, { secondSystem: true });
  return { intact, damaged: scribbled(intact, name, [pagesOf(intact).get('trials/leaf')![1]]) };
}

const HOUR_MS = 3_600_000;

/**
 * `db` as a database last written an hour ago: its mtime set back (a record is made only of a file
 * not modified in the last seconds before its check), and the ctime the utimes call gave it left behind.
 */
export async function aged(db: string): Promise<string> {
  const old = new Date(Date.now() - HOUR_MS);
  fs.utimesSync(db, old, old);
  await sleep(200);
  return db;
}

/**
 * Overwrites `pages` of `db` in place (the same file, size and SQLite header: the change counter at
 * offset 24 unchanged), and restores its mtime as it was, as `touch -r` would.
 */
export function damageInPlace(db: string, pages: readonly number[]): void {
  const st = fs.statSync(db);
  const bad = scribbled(db, `${path.basename(db)}.scribbled`, pages);
  const fd = fs.openSync(db, 'r+');
  try {
    fs.writeSync(fd, fs.readFileSync(bad), 0, st.size, 0);
  } finally {
    fs.closeSync(fd);
  }
  fs.rmSync(bad);
  fs.utimesSync(db, st.atime, st.mtime);
}

/** Damage that changes no metadata at all (bit rot, a bad sector): the record made to hold the damaged file as it is now, as a sound file's would. */
export function asIfBitRot(db: string): void {
  const key = soundnessKey(db);
  if (key === null) throw new Error(`no key for ${db}`);
  const file = soundRecordFile();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ version: 1, sound: [{ file: db, db: key.db, wal: key.wal, checkedAtMs: Date.now() }] }));
}
