// A database on a full filesystem: commands that only read it still read it, and every write that
// fails says which file and that its filesystem is full, rather than SQLite's bare "disk I/O error"
// or "database or disk is full". The file itself is never changed.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { LATEST_SCHEMA_VERSION } from '../../../src-main/store/migrations.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { StoreError } from '../../../src-main/store/store-error.ts';
import { runInProcess } from '../cli/in-process.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from './fixtures.ts';
import { copyWithPendingWal, seedStore } from './seed-store.ts';
import { fillUp, smallFilesystem } from './small-filesystem.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  removeTempDirs();
});

/** A seeded database (closed: no -wal) alone on a 4 MiB tmpfs, unmounted after the test; null where none can be mounted. */
function seededOnSmallFilesystem(ctx: TestContext): { dir: string; db: string } | null {
  const fsys = smallFilesystem(ctx, 4 * 1024 * KIB);
  if (!fsys) return null;
  cleanups.push(fsys.unmount);
  const db = path.join(fsys.dir, 'kvbench.db');
  seedStore(db).close();
  return { dir: fsys.dir, db };
}

/** kvbench history lists the seeded trial and kvbench report reports it, without a word on stderr. */
async function expectHistoryAndReportRead(db: string, stderr = ''): Promise<void> {
  const history = await runInProcess(() => historyCommand(['--db', db]));
  expect(history.stderr).toBe(stderr);
  expect(history.code).toBe(0);
  expect(history.stdout).toMatch(/storage-only\s+1\s+complete/);
  const report = await runInProcess(() => reportCommand(['--db', db, '--all']));
  expect(report.code, report.stderr).toBe(0);
}

const md5 = (file: string): string => createHash('md5').update(fs.readFileSync(file)).digest('hex');
const KIB = 1024;

describe('a database on a full filesystem', () => {
  it('history, report and export still read it; import is refused naming the file and that its filesystem is full; what SQLite left goes once there is room', async (ctx) => {
    // review (fault) #5a: no room for the -shm file → SQLITE_IOERR_SHMSIZE, printed as a bare "disk I/O error" by all four.
    const place = seededOnSmallFilesystem(ctx);
    if (!place) return;
    const { dir, db } = place;
    const filler = fillUp(dir);
    const before = md5(db);
    const out = tempDir();

    await expectHistoryAndReportRead(db);
    const exported = await runInProcess(() => exportCommand(['--db', db, '--out', path.join(out, 'x.json')]));
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(out, 'x.json'), 'utf8')).trials).toHaveLength(1);

    const results = writeResults(out, 'r.json', kvbenchResults({ tokPerS: 5 }));
    const imported = await runInProcess(() => importCommand([results, '--system', 'lab', '--db', db]));
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(
      new RegExp(`^kvbench import: ${db.replace(/[.]/g, '\\.')}: the filesystem holding it is full \\(0\\.0 MiB free in .*\\), so SQLite could not write \\(SQLITE_\\w+: .*\\)\\. Nothing was changed\\.`),
    );
    expect(md5(db)).toBe(before);
    // The -wal and -shm SQLite made but could not size: only SQLite may remove them (see
    // read-only-companions.test.ts), and it does at the next read-write close once there is room.
    const beside = (): string[] => fs.readdirSync(dir).filter((n) => n.startsWith('kvbench')).sort();
    expect(beside()).toEqual(['kvbench.db', 'kvbench.db-shm', 'kvbench.db-wal']);
    expect(fs.statSync(`${db}-wal`).size).toBe(0);
    fs.rmSync(filler);
    openStore(db).close();
    expect(beside()).toEqual(['kvbench.db']);
  });

  it('a -wal holding changes that cannot be read without a -shm: the message names the file, says the filesystem is full and what to do', (ctx) => {
    const fsys = smallFilesystem(ctx, 4 * 1024 * KIB);
    if (!fsys) return;
    cleanups.push(fsys.unmount);
    const copy = path.join(fsys.dir, 'copy.db');
    copyWithPendingWal(path.join(tempDir(), 'live.db'), copy);
    fillUp(fsys.dir);
    let err: unknown = null;
    try {
      openStore(copy, { readonly: true }).close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).message).toMatch(
      /copy\.db: the filesystem holding it is full \(0\.0 MiB free in .*\), so SQLite could not write \(SQLITE_\w+: .*\)\. Its -wal file holds changes not yet in the database.*free some space there, or copy the database together with its -wal file/,
    );
  });

  it('a schema-2 database without room for the copy taken before its upgrade: history and report read it as it is', async (ctx) => {
    // review (fault) #5b: schema 3 only adds what imports use, yet the failed upgrade refused the read.
    const place = seededOnSmallFilesystem(ctx);
    if (!place) return;
    const { dir, db } = place;
    const v2 = openDatabase(db);
    v2.exec('DROP INDEX trials_results_digest; ALTER TABLE trials DROP COLUMN results_digest; PRAGMA user_version = 2;');
    v2.close();
    const dbBytes = fs.statSync(db).size;
    // Room for the -shm (32 KiB) and a little WAL, not for a copy of the database.
    expect(dbBytes).toBeGreaterThan(96 * KIB);
    fillUp(dir, 72 * KIB);

    // Read as it is: a command that only reads never upgrades (it no longer even tries).
    await expectHistoryAndReportRead(
      db,
      `kvbench history: ${db} has schema 2, an older kvbench's (this build's is ${LATEST_SCHEMA_VERSION}): read as it is, not upgraded. ` +
        'A command that writes to it (a suite, an import) upgrades it, keeping a copy of the file as it was.\n',
    );
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('kvbench'))).toEqual(['kvbench.db']);
    // Still schema 2: SQLite's header holds user_version at byte 60, big-endian.
    expect(fs.readFileSync(db).readUInt32BE(60)).toBe(2);
    // An import would upgrade it, which needs the copy first: refused, saying how much room, nothing lost.
    const before = md5(db);
    const file = writeResults(tempDir(), 'r.json', kvbenchResults({ tokPerS: 100 }));
    const imported = await runInProcess(() => importCommand([file, '--system', 'lab', '--db', db]));
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(/^kvbench import: could not upgrade .*kvbench\.db from schema 2 to \d+: the copy made before upgrading could not be written \(SQLITE_FULL: .*\): it needs about [\d.]+ MiB .*free some space and open it again\. Nothing was changed\.\n$/);
    expect(md5(db)).toBe(before);
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('kvbench'))).toEqual(['kvbench.db']);
  });

  it('an import that does not fit: refused naming the file and that its filesystem is full, and none of it stored', async (ctx) => {
    // review (fault) #5c: "kvbench import: database or disk is full", no file, no advice.
    const place = seededOnSmallFilesystem(ctx);
    if (!place) return;
    const { dir, db } = place;
    // Room to open it (a 32 KiB -shm, a few WAL frames), not for the import.
    fillUp(dir, 64 * KIB);
    const filesDir = tempDir();
    const files = Array.from({ length: 40 }, (_, i) => writeResults(filesDir, `r${i}.json`, kvbenchResults({ tokPerS: 100 + i })));
    const imported = await runInProcess(() => importCommand([...files, '--system', 'lab', '--db', db]));
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(
      new RegExp(`^kvbench import: ${db.replace(/[.]/g, '\\.')}: the filesystem holding it is full \\(.* MiB free in .*\\), so SQLite could not write \\(SQLITE_FULL: .*\\)\\. Nothing of this import was stored: free some space there and run it again\\.\\n$`),
    );
    const check = openStore(db, { readonly: true });
    expect(check.listTrials({})).toHaveLength(1);
    check.close();
  });

  it('an import whose disk fills up after its first batch: nothing of it is in the file, and it runs again whole once there is room', async (ctx) => {
    const place = seededOnSmallFilesystem(ctx);
    if (!place) return;
    const { dir, db } = place;
    const filesDir = tempDir();
    const files = Array.from({ length: 12 }, (_, i) => writeResults(filesDir, `r${String(i).padStart(2, '0')}.json`, kvbenchResults({ tokPerS: 100 + i })));
    const store = openStore(db);
    cleanups.push(() => store.close());
    let filler: string | null = null;
    const imported = importResultsFiles(store, files, {
      systemLabel: 'lab',
      batchFiles: 4,
      afterBatch: (b) => {
        if (b.done === 4) filler = fillUp(dir);
      },
    });
    await expect(imported).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_(FULL|IOERR)/) });
    const raw = (sql: string): number => {
      const d = openDatabase(db, { readonly: true });
      try {
        return (d.prepare(sql).get() as { n: number }).n;
      } finally {
        d.close();
      }
    };
    // The batches were staged beside the file, and the commit failed whole: nothing to remove.
    expect(raw("SELECT COUNT(*) AS n FROM suites WHERE source = 'import'")).toBe(0);
    expect(raw('SELECT COUNT(*) AS n FROM trials')).toBe(1);
    const reader = openStore(db, { readonly: true });
    expect(reader.listTrials({}).map((t) => t.systemLabel)).toEqual(['lab1']);
    expect(reader.listSuites().map((s) => s.source)).toEqual(['suite']);
    reader.close();
    fs.rmSync(filler!);
    // And the import, run again, stores every file once.
    const again = await importResultsFiles(store, files, { systemLabel: 'lab', batchFiles: 4 });
    expect(again.imported).toHaveLength(12);
    expect(raw('SELECT COUNT(DISTINCT results_digest) AS n FROM trials')).toBe(13);
  });
});
