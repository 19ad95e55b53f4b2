// Every open ran PRAGMA quick_check over the whole file, the commands that only read too: 1.7 s of a
// 2.6 s `kvbench history` on a 760 MB database, paid on every call and every app database switch.
// An open that only reads (skipCheckIfSound) now skips it where the file is exactly as a check found it
// sound (a record in the user's cache directory: device, inode, size, mtime and ctime in ns, SQLite's
// header with its change counter, the -wal). Nothing damaged that was found before goes unfound:
// damage written through the file system changes the record's key (also with its mtime restored);
// damage that changes no metadata (bit rot: here, a record made to match the damaged file) is found
// by the first read, and read as a damaged database is read; before anything writes, the check is made.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { recordedSound, soundnessKey, soundRecordFile } from '../../../src-main/store/sound-file-record.ts';
import { StoreError } from '../../../src-main/store/store-error.ts';
import { aged, asIfBitRot, damageInPlace, intactDatabase, pagesOf, sha } from '../../support/damaged-file.ts';
import { ownSoundRecord } from '../../support/own-sound-record.ts';
import { KVBENCH_BIN } from '../../integration/cli/cli-harness.ts';
import { runInProcess as run } from '../cli/in-process.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from './fixtures.ts';

ownSoundRecord();
afterEach(removeTempDirs);

/** Pages of the trials table's rows (leaf pages), where `history` reads. */
const trialPages = (db: string): number[] => (pagesOf(db).get('trials/leaf') ?? []).slice(0, 2);

const reader = (db: string) => openStore(db, { keepSchema: true, skipCheckIfSound: true });

function refusal(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('PRAGMA quick_check at open, skipped on a file exactly as a check found it sound', () => {
  it('the second reader of an unchanged file skips the check; a writer never does; a file just modified is not recorded', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    // Modified a moment ago: a write in the same tick of the file system's clock would keep its times.
    let s = reader(db);
    expect(s.checkSkipped).toBe(false);
    s.close();
    expect(fs.existsSync(soundRecordFile())).toBe(false);

    await aged(db);
    s = reader(db);
    expect(s.checkSkipped).toBe(false);
    s.close();
    expect(fs.statSync(soundRecordFile()).mode & 0o777).toBe(0o600);
    s = reader(db);
    expect(s.checkSkipped).toBe(true);
    expect(s.listTrials({})).toHaveLength(32);
    s.close();
    // Reading wrote nothing to the file: it stays recorded.
    s = reader(db);
    expect(s.checkSkipped).toBe(true);
    s.close();
    // A command that writes checks every time.
    s = openStore(db);
    expect(s.checkSkipped).toBe(false);
    s.close();
  });

  it('damage written in place with the mtime restored and the change counter unchanged: found at the open, as before', async () => {
    const dir = tempDir();
    const db = await aged(intactDatabase(dir));
    reader(db).close();
    reader(db).close();
    const header = fs.readFileSync(db).subarray(0, 100);
    const mtimeNs = fs.statSync(db, { bigint: true }).mtimeNs;
    damageInPlace(db, trialPages(db));
    expect(fs.readFileSync(db).subarray(0, 100).equals(header)).toBe(true);
    expect(fs.statSync(db, { bigint: true }).mtimeNs).toBe(mtimeNs);
    const e = refusal(() => reader(db));
    expect(e.code).toBe('DB_CORRUPT');
    expect(e.message).toMatch(/is damaged \(SQLite quick_check: .*\)\. kvbench will not write to it/);
  });

  it('damage no metadata shows (bit rot): the open skips the check; a read or a write meets it as DB_CORRUPT, and the file is checked whole again', async () => {
    const dir = tempDir();
    const db = await aged(intactDatabase(dir));
    reader(db).close();
    damageInPlace(db, trialPages(db));
    asIfBitRot(db);

    // A read-write open's upkeep reads the trials: the damage it meets is the open's DB_CORRUPT.
    const met = refusal(() => reader(db));
    expect(met.code).toBe('DB_CORRUPT');
    expect(met.message).toBe(`${db} is damaged (SQLITE_CORRUPT: database disk image is malformed). kvbench will not write to it: restore a backup or move it away.`);
    expect(refusal(() => reader(db)).message).toMatch(/is damaged \(SQLite quick_check: .*\)\. kvbench will not write to it/);

    asIfBitRot(db);
    const s = openStore(db, { readonly: true, skipCheckIfSound: true });
    try {
      expect(s.checkSkipped).toBe(true);
      // What the open's own upkeep or a front end would write waits for the check, which refuses the file.
      const e = refusal(() => s.checkBeforeWriting());
      expect(e.code).toBe('DB_CORRUPT');
      expect(e.message).toMatch(/is damaged \(SQLite quick_check: .*\)\. kvbench will not write to it/);
    } finally {
      s.close();
    }
    // The damage found forgets the record: the next open checks the whole file, and refuses it.
    expect(refusal(() => reader(db)).code).toBe('DB_CORRUPT');
  });

  it('a command that writes (an import) checks the file recorded sound, and refuses it damaged', async () => {
    const dir = tempDir();
    const db = await aged(intactDatabase(dir));
    reader(db).close();
    damageInPlace(db, trialPages(db));
    asIfBitRot(db);
    const before = sha(db);
    const results = writeResults(dir, 'r.json', kvbenchResults({ tokPerS: 100 }));
    const r = await run(() => importCommand([results, '--system', 'lab1', '--db', db]));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/is damaged \(SQLite quick_check: .*\)\. kvbench will not write to it/);
    expect(sha(db)).toBe(before);
  });

  it('kvbench history on a file with bit rot: the read meets it, and reads it as a damaged database is read (exit 3), the file only read', async () => {
    const dir = tempDir();
    const intact = await aged(intactDatabase(dir));
    const db = path.join(dir, 'rotten.db');
    fs.copyFileSync(intact, db);
    await aged(db);
    const want = await run(() => historyCommand(['--db', db, '--limit', '0', '--json']));
    expect(want.code).toBe(0);
    // The metrics, which history reads and the open's upkeep does not: the open goes through, and the command's read meets the damage.
    damageInPlace(db, (pagesOf(db).get('trial_metrics/leaf') ?? []).slice(0, 2));
    asIfBitRot(db);
    const s = reader(db);
    expect(s.checkSkipped).toBe(true);
    s.close();
    const before = sha(db);

    const h = await run(() => historyCommand(['--db', db, '--limit', '0', '--json']));
    expect(h.code, h.stderr).toBe(3);
    expect(h.stderr).toMatch(/^kvbench history: \S+ is damaged \(SQLite.*\)\. Reading it read-only, as far as it can be read: /);
    // Only the salvaged copy's listing is printed (the failed read printed nothing): rows on intact pages, as the intact file holds them.
    const got = JSON.parse(h.stdout) as { id: number }[];
    const all = JSON.parse(want.stdout) as { id: number }[];
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(all.length);
    for (const t of got) expect(t).toEqual(all.find((x) => x.id === t.id));
    expect(sha(db)).toBe(before);
  });

  it('a cache directory that cannot be written: checked every time, no error', async () => {
    const dir = tempDir();
    const db = await aged(intactDatabase(dir));
    const notADir = path.join(dir, 'a-file');
    fs.writeFileSync(notADir, '');
    process.env.XDG_CACHE_HOME = notADir;
    for (let i = 0; i < 2; i++) {
      const s = reader(db);
      expect(s.checkSkipped).toBe(false);
      s.close();
    }
    // A record that is not one (damaged, another build's): checked, and written again whole.
    process.env.XDG_CACHE_HOME = tempDir('kvb-cache-');
    fs.mkdirSync(path.dirname(soundRecordFile()), { recursive: true });
    fs.writeFileSync(soundRecordFile(), '{"version": 1, "sound": [{"file": 3}]');
    reader(db).close();
    const s = reader(db);
    expect(s.checkSkipped).toBe(true);
    s.close();
  });

  it('a FIFO or a link to /dev/zero at the record\'s path: no record, and the command goes on (it hung there, reading forever)', async () => {
    const dir = tempDir();
    const db = await aged(intactDatabase(dir));
    for (const make of [(file: string) => execFileSync('mkfifo', [file]), (file: string) => fs.symlinkSync('/dev/zero', file)]) {
      const cache = tempDir('kvb-cache-');
      fs.mkdirSync(path.join(cache, 'kvbench'));
      make(path.join(cache, 'kvbench', 'sound-databases.json'));
      // In a process of its own, with a time limit: the old read blocked the whole process, test runner included.
      const r = spawnSync(process.execPath, [KVBENCH_BIN, 'history', '--db', db, '--limit', '1'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, XDG_CACHE_HOME: cache } });
      expect(r.error, r.stderr).toBeUndefined();
      expect(r.status, r.stderr).toBe(0);
    }
  });

  it('two processes recording at once: the record stays whole, and each file is recorded or checked again', async () => {
    const dir = tempDir();
    const dbs = await Promise.all(['a.db', 'b.db'].map(async (name) => {
      const db = path.join(dir, name);
      fs.copyFileSync(intactDatabase(fs.mkdtempSync(path.join(dir, 'src-'))), db);
      return aged(db);
    }));
    const module = new URL('../../../src-main/store/sound-file-record.ts', import.meta.url).href;
    const script = (db: string): string =>
      `const m = await import(${JSON.stringify(module)}); const k = m.soundnessKey(${JSON.stringify(db)}); for (let i = 0; i < 200; i++) m.recordSound(k, k, Date.now());`;
    const codes = await Promise.all(
      dbs.map((db) => new Promise<number | null>((resolve) => spawn(process.execPath, ['--input-type=module', '-e', script(db)], { stdio: 'inherit' }).on('exit', resolve))),
    );
    expect(codes).toEqual([0, 0]);
    const record = JSON.parse(fs.readFileSync(soundRecordFile(), 'utf8')) as { sound: { file: string }[] };
    expect(record.sound.length).toBeGreaterThanOrEqual(1);
    for (const e of record.sound) expect(dbs).toContain(e.file);
    expect(dbs.some((db) => recordedSound(soundnessKey(db)!))).toBe(true);
    expect(fs.readdirSync(path.dirname(soundRecordFile()))).toEqual(['sound-databases.json']);
  });
});

