// The app's open (and every switch in Settings) ran PRAGMA quick_check over the whole file. It now skips
// it where the file is exactly as a check found it sound (sound-file-record.ts), and makes it before
// the first write instead: a suite, a resume, an import or a delete on a file that bit rot damaged
// (no metadata changed: here, a record made to match the damaged file) is refused as a damaged
// file's write is, and a read that meets the damage is a DB_CORRUPT that says what to do, never a raw
// SQLite error; the next open checks the whole file and shows the read-only copy of what can be read.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackend, type Backend } from '../../../src-main/server/backend.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { recordedSound, soundnessKey } from '../../../src-main/store/sound-file-record.ts';
import type { ResponseOf } from '../../../src-shared/ipc/contract.ts';
import { aged, asIfBitRot, damageInPlace, intactDatabase, pagesOf, sha } from '../../support/damaged-file.ts';
import { ownSoundRecord } from '../../support/own-sound-record.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

ownSoundRecord();
afterEach(removeTempDirs);

const backendOn = (dir: string, db: string, logs: string[]): Promise<Backend> =>
  createBackend({
    mode: 'browser',
    settingsFile: path.join(dir, 'settings.json'),
    defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    detect: () => Promise.reject(new Error('no detection in this test')),
    log: (level, message) => logs.push(`${level}: ${message}`),
  });

describe('the app over a file recorded sound', () => {
  it('bit rot after the check: a write checks first and is refused, a read that meets it is DB_CORRUPT, the next open shows the damaged copy', async () => {
    const dir = tempDir('kvb-sound-app-');
    const db = await aged(intactDatabase(dir));
    const s = openStore(db, { keepSchema: true, skipCheckIfSound: true });
    const ids = s.listTrials({}).map((t) => t.id);
    s.close();
    damageInPlace(db, (pagesOf(db).get('trial_metrics/leaf') ?? []).slice(0, 2));
    asIfBitRot(db);
    const before = sha(db);

    const logs: string[] = [];
    let backend = await backendOn(dir, db, logs);
    try {
      const info = await backend.invoke('app.info', {});
      expect(info.ok).toBe(true);
      expect((info as { value: ResponseOf<'app.info'> }).value.databaseDamaged).toBeNull();

      const del = await backend.invoke('trials.delete', { ids: [ids[0]] });
      expect(del).toEqual({ ok: false, error: { code: 'DB_CORRUPT', message: expect.stringMatching(/^Deleting trials is refused: \S+ is damaged (or not a database )?\((SQLite quick_check|SQLITE_CORRUPT): .*\)\. kvbench will not write to it(: restore a backup or move it away)?\. The next time kvbench opens it/) } });

      const list = await backend.invoke('history.list', { selection: {}, limit: 5000 });
      expect(list).toEqual({ ok: false, error: { code: 'DB_CORRUPT', message: expect.stringMatching(/^the database \S+ is damaged \(SQLITE_CORRUPT: database disk image is malformed\), found while reading it; nothing was written to it\. The next time kvbench opens it/) } });
    } finally {
      await backend.close();
    }
    expect(sha(db)).toBe(before);

    // Found damaged: the next open checks the whole file, and shows what can be read.
    backend = await backendOn(dir, db, logs);
    try {
      const info = await backend.invoke('app.info', {});
      expect((info as { value: ResponseOf<'app.info'> }).value.databaseDamaged).not.toBeNull();
    } finally {
      await backend.close();
    }
    expect(sha(db)).toBe(before);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(db)))).toEqual([path.basename(db)]);
  });

  it('bit rot in the histograms, met by a report or an export on a worker thread: DB_CORRUPT with what to do, as on the backend\'s thread, and the file forgotten as sound', async () => {
    const dir = tempDir('kvb-sound-app-');
    const db = await aged(intactDatabase(dir));
    openStore(db, { keepSchema: true, skipCheckIfSound: true }).close();
    const pages = pagesOf(db);
    damageInPlace(db, [...(pages.get('trial_histograms/leaf') ?? []), ...(pages.get('trial_histograms/overflow') ?? [])].slice(0, 4));
    asIfBitRot(db);
    expect(recordedSound(soundnessKey(db)!)).toBe(true);

    const logs: string[] = [];
    const backend = await backendOn(dir, db, logs);
    try {
      // History reads no histogram: it lists as before.
      expect((await backend.invoke('history.list', { selection: {} })).ok).toBe(true);
      const damage = { ok: false, error: { code: 'DB_CORRUPT', message: expect.stringMatching(/^the database \S+ is damaged \(SQLITE_CORRUPT\w*: database disk image is malformed\), found while reading it; nothing was written to it\. The next time kvbench opens it/) } };
      expect(await backend.invoke('report.build', { selection: {} })).toEqual(damage);
      expect(recordedSound(soundnessKey(db)!)).toBe(false);
      asIfBitRot(db);
      expect(await backend.invoke('export.create', { selection: {}, format: 'json' })).toEqual(damage);
      expect(recordedSound(soundnessKey(db)!)).toBe(false);
    } finally {
      await backend.close();
    }
  });
});
