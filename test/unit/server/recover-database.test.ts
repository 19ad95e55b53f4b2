// database.recover: the app over a damaged database could only show a read-only copy and point to a
// backup; nothing gave it a working database back. The channel writes what could be read to a new
// database (as `kvbench recover` does), switches to it as Settings does (writes allowed again, the
// settings file names it), and its notes say it was recovered and what was lost. Refused: a healthy
// database, a relative path, an existing file; the request is checked by the contract's schema.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackend, type Backend } from '../../../src-main/server/backend.ts';
import type { ResponseOf } from '../../../src-shared/ipc/contract.ts';
import { damagedTrialsPage, sha } from '../../support/damaged-file.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(removeTempDirs);


async function value<T = Record<string, unknown>>(backend: Backend, channel: string, request: unknown): Promise<T> {
  const r = await backend.invoke(channel, request);
  expect(r.ok, `${channel}: ${JSON.stringify(r)}`).toBe(true);
  return (r as { value: T }).value;
}

async function refusal(backend: Backend, channel: string, request: unknown): Promise<{ code: string; message: string }> {
  const r = await backend.invoke(channel, request);
  expect(r.ok, `${channel} was not refused`).toBe(false);
  return (r as unknown as { error: { code: string; message: string } }).error;
}

const backendOn = (dir: string, databasePath: string, logs: string[] = []): Promise<Backend> =>
  createBackend({
    mode: 'browser',
    settingsFile: path.join(dir, 'settings.json'),
    defaults: { databasePath, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    detect: () => Promise.reject(new Error('no detection in this test')),
    log: (level, message) => logs.push(`${level}: ${message}`),
  });

describe('database.recover', () => {
  it('writes what a damaged database holds to a new one and switches to it: writes work again, and it says it was recovered', async () => {
    const dir = tempDir('kvb-recover-app-');
    const { damaged } = damagedTrialsPage(dir);
    const before = sha(damaged);
    const logs: string[] = [];
    const backend = await backendOn(dir, damaged, logs);
    try {
      const info = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      const d = info.databaseDamaged!;
      expect(d).not.toBeNull();

      // Checked at the boundary: no path, a relative one, an unknown field.
      expect((await refusal(backend, 'database.recover', {})).code).toBe('VALIDATION');
      expect((await refusal(backend, 'database.recover', { outPath: '/x.db', extra: 1 })).code).toBe('VALIDATION');
      expect((await refusal(backend, 'database.recover', { outPath: 'new.db' })).message).toContain('the new database must be an absolute path');
      const taken = path.join(dir, 'taken.db');
      fs.writeFileSync(taken, 'mine');
      expect(await refusal(backend, 'database.recover', { outPath: taken })).toMatchObject({ code: 'VALIDATION', message: expect.stringContaining(`${taken} exists already`) });
      expect(fs.readFileSync(taken, 'utf8')).toBe('mine');

      const out = path.join(dir, 'recovered.db');
      const r = await value<ResponseOf<'database.recover'>>(backend, 'database.recover', { outPath: out });
      expect(r.recovery).toMatchObject({ file: out, from: damaged, trials: d.trialsRead, lost: d.unreadable });
      expect(r.settings.databasePath).toBe(out);
      expect(fs.statSync(out).mode & 0o777).toBe(0o600);
      expect(sha(damaged)).toBe(before);
      expect(logs.some((l) => l.startsWith(`warn: recovered the damaged ${damaged} into ${out}: ${d.trialsRead} trial(s); could not be read: `))).toBe(true);

      // Switched: not damaged, the same trials, a note saying where they came from and what was lost.
      const after = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(after.databasePath).toBe(out);
      expect(after.databaseDamaged).toBeNull();
      expect(after.databaseError).toBeNull();
      expect(after.databaseNotes).toEqual([expect.stringContaining(`${out} holds what was recovered from the damaged ${damaged}`)]);
      for (const line of d.unreadable) expect(after.databaseNotes[0]).toContain(line);
      const list = await value<ResponseOf<'history.list'>>(backend, 'history.list', { selection: {}, limit: 5000 });
      expect(list.total).toBe(d.trialsRead);
      expect(list.unreadable ?? []).toEqual([]);
      // A write that was refused on the damaged copy works now.
      expect(await value(backend, 'trials.delete', { ids: [list.trials[0].id] })).toEqual({ deleted: 1 });
      expect(JSON.parse(fs.readFileSync(path.join(dir, 'settings.json'), 'utf8'))).toMatchObject({ databasePath: out });

      // Now on a healthy database: nothing to recover.
      expect((await refusal(backend, 'database.recover', { outPath: path.join(dir, 'again.db') })).message).toContain('is not damaged');
      expect(fs.existsSync(path.join(dir, 'again.db'))).toBe(false);
    } finally {
      await backend.close();
    }
  });
});
