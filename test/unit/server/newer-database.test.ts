// The app (and `kvbench serve`) over a database a newer kvbench wrote that records this build may read
// it (kvbench_meta readable_by_schema): the CLI's history, report and export read it read-only, but the
// app refused it outright (databaseError DB_TOO_NEW: "no database is open"). It now opens it as it is,
// read-only, says so in its notes, and refuses every write naming the kvbench it needs; one this build
// may not read is still refused. The file is never written.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackend, type Backend } from '../../../src-main/server/backend.ts';
import { LATEST_SCHEMA_VERSION } from '../../../src-main/store/open-store.ts';
import type { ResponseOf } from '../../../src-shared/ipc/contract.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { newerDatabase } from '../../support/damaged-file.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(removeTempDirs);

const backendOn = (dir: string, databasePath: string): Promise<Backend> =>
  createBackend({
    mode: 'browser',
    settingsFile: path.join(dir, 'settings.json'),
    defaults: { databasePath, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    detect: () => Promise.reject(new Error('no detection in this test')),
    log: () => undefined,
  });

async function value<T>(backend: Backend, channel: string, request: unknown): Promise<T> {
  const r = await backend.invoke(channel, request);
  expect(r.ok, `${channel}: ${JSON.stringify(r)}`).toBe(true);
  return (r as { value: T }).value;
}

describe('the app over a newer kvbench database', () => {
  it('marked readable by this build: read as it is, read-only, each write refused naming the kvbench it needs', async () => {
    const dir = tempDir('kvb-newer-app-');
    const db = newerDatabase(dir, LATEST_SCHEMA_VERSION);
    const before = fs.readFileSync(db);
    const backend = await backendOn(dir, db);
    try {
      const info = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(info.databaseError).toBeNull();
      expect(info.databaseDamaged).toBeNull();
      expect(info.databaseReadOnly).toContain(`${db} was written by kvbench 9.1.0 (schema ${LATEST_SCHEMA_VERSION + 2}); this build, kvbench ${KVBENCH_VERSION}`);
      expect(info.databaseReadOnly).toContain('writing to it needs kvbench 9.1.0 or newer. Upgrade kvbench, or choose another database in Settings.');
      expect(info.databaseReadOnly).toContain('it reads the file read-only (History, reports, Compare and exports)');
      // Said once, by the read-only notice: not also as the open's dismissible note.
      expect(info.databaseNotes).toEqual([]);
      const list = await value<ResponseOf<'history.list'>>(backend, 'history.list', { selection: {}, limit: 5000 });
      expect(list.total).toBe(32);
      expect((await value<ResponseOf<'report.build'>>(backend, 'report.build', { selection: {} })).trialCount).toBe(32);

      const r = await backend.invoke('trials.delete', { ids: [list.trials[0].id] });
      expect(r).toMatchObject({ ok: false, error: { code: 'DB_TOO_NEW', message: expect.stringMatching(/^Deleting trials is refused: .* needs kvbench 9\.1\.0 or newer\./) } });
      const suites = await value<ResponseOf<'suites.list'>>(backend, 'suites.list', {});
      expect(await backend.invoke('suites.delete', { id: suites[0].id })).toMatchObject({ ok: false, error: { code: 'DB_TOO_NEW' } });
      expect(await backend.invoke('suite.resume', { suiteId: suites[0].id })).toMatchObject({ ok: false, error: { code: 'DB_TOO_NEW' } });
      expect(fs.readFileSync(db).equals(before)).toBe(true);
    } finally {
      await backend.close();
    }
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('intact.db'))).toEqual(['intact.db']);
  });

  it('not readable by this build: still refused (no database open)', async () => {
    const dir = tempDir('kvb-newer-app-');
    const db = newerDatabase(dir, LATEST_SCHEMA_VERSION + 1);
    const backend = await backendOn(dir, db);
    try {
      const info = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(info.databaseError).toMatchObject({ code: 'DB_TOO_NEW' });
      expect(info.databaseReadOnly).toBeNull();
    } finally {
      await backend.close();
    }
  });
});
