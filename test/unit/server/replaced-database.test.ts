// The app's database file replaced by rename under a running backend (mv, rsync, a restore tool): the
// backend's connection keeps the file it opened, while a worker opening the path would read the new
// one, and a write through the old connection's -wal at the path would corrupt the new file. On a
// real SQLite file and a real rename: reports and exports refuse (DB_REPLACED) rather than answer of
// another database than History's; writes are refused, and the restored file is left as it came;
// choosing the same path again in Settings opens the file now there.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Backend } from '../../../src-main/server/backend.ts';
import { ReportWorkers } from '../../../src-main/server/report-thread.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { openStore, openStoreToRead } from '../../../src-main/store/open-store.ts';
import { fileIdentityOf } from '../../../src-main/store/file-identity.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { seedVariedHistory } from '../store/seed-store.ts';
import { withBackend } from './served-backend.ts';

afterEach(removeTempDirs);

/** A database of `trials` trials at `file`. */
function seed(file: string, trials: number): void {
  const s = openStore(file);
  try {
    seedVariedHistory(s, trials);
  } finally {
    s.close();
  }
}

/** A file's trial count and integrity, read through a connection of its own. */
function inspect(file: string): { trials: number; integrity: string } {
  const db = openDatabase(file, { readonly: true, fileMustExist: true });
  try {
    return { trials: (db.prepare('SELECT count(*) AS n FROM trials').get() as { n: number }).n, integrity: String(db.pragma('integrity_check', { simple: true })) };
  } finally {
    db.close();
  }
}


const total = async (b: Backend): Promise<unknown> => ((await b.invoke('history.list', { selection: {} })) as { ok: true; value: { total: number } }).value.total;

describe('the database file replaced under a running backend', () => {
  it('refuses reports, exports and writes (DB_REPLACED) instead of reading another file than History or corrupting the new one; choosing it again opens the new file', async () => {
    const dir = tempDir('kvb-replaced-');
    const db = path.join(dir, 'kvbench.db');
    seed(db, 40);
    const restored = path.join(dir, 'restored.db');
    seed(restored, 20);
    const restoredTrials = inspect(restored).trials;
    await withBackend(db, dir, async (backend) => {
      const before = (await backend.invoke('report.build', { selection: {} })) as { ok: true; value: { trialCount: number } };
      expect(before.ok).toBe(true);
      const listed = await total(backend);
      expect(before.value.trialCount).toBe(listed);
      // As mv, rsync or a restore tool replaces a file: a copy beside it, renamed over it.
      fs.copyFileSync(restored, `${db}.tmp`);
      fs.renameSync(`${db}.tmp`, db);

      const refused = { ok: false, error: { code: 'DB_REPLACED', message: expect.stringContaining(`the database file ${db} was replaced since kvbench opened it`) } };
      expect(await backend.invoke('report.build', { selection: {} })).toEqual(refused);
      expect(await backend.invoke('report.compare', { kind: 'label', a: 'revA', b: 'revB' })).toEqual(refused);
      expect(await backend.invoke('export.create', { selection: {}, format: 'json' })).toEqual(refused);
      const deleted = (await backend.invoke('trials.delete', { ids: [1] })) as { ok: false; error: { code: string; message: string } };
      expect(deleted).toEqual({ ok: false, error: { code: 'DB_REPLACED', message: expect.stringMatching(/^Deleting trials is refused: the database file .* was replaced since kvbench opened it/) } });
      expect(deleted.error.message).toContain('To use the file now at that path, choose it again in Settings.');
      // History still reads the file it opened, as before.
      expect(await total(backend)).toBe(listed);

      // The file now at the path, read by another program meanwhile (sqlite3, another kvbench): as it
      // came, the old connection's -wal beside it emptied into the old file, never read as the new one's.
      expect(inspect(db)).toEqual({ trials: restoredTrials, integrity: 'ok' });
      // Saving the same path in Settings opens the file now at it.
      expect((await backend.invoke('settings.update', { databasePath: db })).ok).toBe(true);
      const after = (await backend.invoke('report.build', { selection: {} })) as { ok: true; value: { trialCount: number } };
      expect(after.value.trialCount).toBeLessThan(before.value.trialCount);
      expect(await total(backend)).toBe(after.value.trialCount);
    });
    // Opened again, it was written only by its own connection (the open removes the seed's abandoned import): sound.
    expect(inspect(db).integrity).toBe('ok');
  });

  it('a second connection opened to read the same file as the first refuses one the path names now instead (openStoreToRead sameFileAs)', () => {
    const dir = tempDir('kvb-replaced-');
    const db = path.join(dir, 'kvbench.db');
    seed(db, 20);
    const first = fileIdentityOf(db);
    openStoreToRead(db, { sameFileAs: first }).close();
    fs.copyFileSync(db, `${db}.tmp`);
    fs.renameSync(`${db}.tmp`, db);
    expect(() => openStoreToRead(db, { sameFileAs: first, chooseDatabase: 'in Settings' })).toThrow(expect.objectContaining({ code: 'DB_REPLACED' }));
  });

  it('choosing it again where the file now at the path cannot be opened leaves no database open, and says so (rev18 L5)', async () => {
    const dir = tempDir('kvb-replaced-');
    const db = path.join(dir, 'kvbench.db');
    seed(db, 40);
    const sound = path.join(dir, 'sound.db');
    seed(sound, 20);
    await withBackend(db, dir, async (backend) => {
      const listedBefore = (await total(backend)) as number;
      // Replaced by a file that is no database: the connection to the old one must close before any
      // open at the path (its -wal and -shm lie there), and the old file is no longer at the path.
      fs.writeFileSync(`${db}.tmp`, 'not a database, but long enough to be taken for one by nothing'.repeat(100));
      fs.renameSync(`${db}.tmp`, db);
      const answer = (await backend.invoke('settings.update', { databasePath: db })) as { ok: false; error: { code: string; message: string } };
      expect(answer.ok).toBe(false);
      expect(answer.error.message).toContain(`the file now at ${db} cannot be opened: `);
      expect(answer.error.message).toMatch(/; the database kvbench had open there was closed \(its file was replaced\), so no database is open now\. Choose a database in Settings\.$/);
      // Every reader says the same, not that the old one is still there.
      const listed = (await backend.invoke('history.list', { selection: {} })) as { ok: false; error: { code: string; message: string } };
      expect(listed.ok).toBe(false);
      expect(listed.error.message).toMatch(/^no database is open: the file now at .* cannot be opened: /);
      const shown = (await backend.invoke('app.info', {})) as { ok: true; value: { databaseError: { message: string } | null } };
      expect(shown.value.databaseError?.message).toMatch(/cannot be opened: .*no database is open now/);
      // A sound file put there, chosen again, opens.
      fs.renameSync(sound, db);
      expect((await backend.invoke('settings.update', { databasePath: db })).ok).toBe(true);
      // The file now there (seeded with 20 trials, not 40): a sound database open again.
      expect(await total(backend)).toBeLessThan(listedBefore);
      expect(inspect(db).integrity).toBe('ok');
    });
  });

  it('a worker given the backend\'s file refuses another at the path (DB_REPLACED), even where the backend did not look first', async () => {
    const dir = tempDir('kvb-replaced-');
    const db = path.join(dir, 'kvbench.db');
    seed(db, 20);
    const first = fileIdentityOf(db);
    fs.copyFileSync(db, `${db}.tmp`);
    fs.renameSync(`${db}.tmp`, db);
    const pool = new ReportWorkers({ size: 1 });
    try {
      await expect(pool.answer(db, { channel: 'report.build', request: { selection: {} } }, { sameFileAs: first, chooseDatabase: 'in Settings' })).rejects.toMatchObject({ code: 'DB_REPLACED' });
    } finally {
      await pool.close();
    }
  });

  it('a suite runner\'s writes (a trial\'s start and end) and any transaction are refused on a replaced file', () => {
    const dir = tempDir('kvb-replaced-');
    const db = path.join(dir, 'kvbench.db');
    seed(db, 20);
    const s = openStore(db);
    try {
      fs.copyFileSync(db, `${db}.tmp`);
      fs.renameSync(`${db}.tmp`, db);
      expect(() => s.atomically(() => s.deleteTrials([1]))).toThrow(expect.objectContaining({ code: 'DB_REPLACED' }));
      expect(() => s.finishTrial(1, { status: 'failed', reason: 'x', wallMs: 0 })).toThrow(expect.objectContaining({ code: 'DB_REPLACED' }));
      expect(() => s.checkBeforeWriting()).toThrow(/run the command again/);
    } finally {
      s.close();
    }
    expect(inspect(db).integrity).toBe('ok');
  });
});
