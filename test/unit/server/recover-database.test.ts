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

/** A promise's state now, without waiting for it: whether it has settled. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([p.then(() => true), new Promise((r) => setImmediate(() => r(pending)))])) !== pending;
}

describe('database.recover', () => {
  it('runs off the backend thread: other requests answer while it copies, app.info and the events say how far it is, and it ends as before', async () => {
    const dir = tempDir('kvb-recover-app-');
    const { damaged } = damagedTrialsPage(dir);
    const backend = await backendOn(dir, damaged);
    const events: { outPath: string; message: string }[] = [];
    let firstEvent: () => void = () => {};
    const started = new Promise<void>((r) => (firstEvent = r));
    backend.subscribe((e) => {
      if (e.type !== 'database.recoveryProgressed') return;
      events.push({ outPath: e.outPath, message: e.message });
      firstEvent();
    });
    try {
      const d = (await value<ResponseOf<'app.info'>>(backend, 'app.info', {})).databaseDamaged!;
      const out = path.join(dir, 'recovered.db');
      const recovering = backend.invoke('database.recover', { outPath: out });
      await Promise.race([started, recovering]);
      // Answered while the recovery runs (on the old code the copy ran first, to its end, on this thread):
      // the recovery is not over, its new file is not there, and the damaged copy still reads.
      const info = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      const list = await value<ResponseOf<'history.list'>>(backend, 'history.list', { selection: {}, limit: 5000 });
      expect(await settled(recovering)).toBe(false);
      expect(fs.existsSync(out)).toBe(false);
      expect(info.databaseDamaged).not.toBeNull();
      expect(info.databaseRecovering).toEqual({ outPath: out, message: expect.any(String) });
      expect(info.databaseDamaged).toEqual(d);
      expect(list.total).toBe(d.trialsRead);
      // A write is still refused meanwhile (the damaged copy is open).
      expect((await backend.invoke('trials.delete', { ids: [list.trials[0].id] })) as unknown).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT' } });

      const r = await recovering;
      expect(r.ok, JSON.stringify(r)).toBe(true);
      expect((r as { value: ResponseOf<'database.recover'> }).value.recovery).toMatchObject({ file: out, trials: d.trialsRead, lost: d.unreadable });
      expect(events[0]).toEqual({ outPath: out, message: 'starting' });
      expect(events.map((e) => e.message)).toContain(`writing ${out}`);
      expect(events.at(-1)).toEqual({ outPath: out, message: 'done' });
      const after = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(after).toMatchObject({ databasePath: out, databaseDamaged: null, databaseRecovering: null });
    } finally {
      await backend.close();
    }
  });

  it('a switch in Settings to a damaged database reads its copy off the backend thread: other requests answer meanwhile', async () => {
    const dir = tempDir('kvb-recover-app-');
    const { damaged } = damagedTrialsPage(dir);
    const healthy = path.join(dir, 'healthy.db');
    const logs: string[] = [];
    const backend = await backendOn(dir, healthy, logs);
    const progress: string[] = [];
    let firstLine: () => void = () => {};
    const reading = new Promise<void>((r) => (firstLine = r));
    backend.subscribe((e) => {
      if (e.type !== 'database.upgradeProgressed') return;
      progress.push(e.message);
      firstLine();
    });
    const readCopy = `database ${damaged} is damaged (`;
    try {
      const switching = backend.invoke('settings.update', { databasePath: damaged });
      // The switch says it reads the damaged file; while it does, requests answer, on the database open before.
      await Promise.race([reading, switching]);
      const info = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(await settled(switching)).toBe(false);
      expect(logs.filter((l) => l.includes(readCopy))).toEqual([]);
      expect(info).toMatchObject({ databasePath: healthy, databaseDamaged: null });
      expect(progress[0]).toBe(`database ${damaged}: the file is damaged: reading what can still be read of it`);
      expect((await switching).ok).toBe(true);
      const after = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(after.databasePath).toBe(damaged);
      expect(after.databaseDamaged?.trialsRead).toBeGreaterThanOrEqual(20);
      expect(logs.filter((l) => l.includes(readCopy))).toHaveLength(1);
      for (const line of progress.slice(1)) expect(line).toMatch(new RegExp(`^database ${damaged.replace(/[.]/g, '\\.')}: the file is damaged: reading what can still be read of it \\(copying `));
    } finally {
      await backend.close();
    }
  });

  it('kvbench closing while it recovers: the recovery stops with a clear error, and nothing is left', async () => {
    const dir = tempDir('kvb-recover-app-');
    const { damaged } = damagedTrialsPage(dir);
    const before = sha(damaged);
    const backend = await backendOn(dir, damaged);
    const out = path.join(dir, 'recovered.db');
    let firstEvent: () => void = () => {};
    const started = new Promise<void>((r) => (firstEvent = r));
    backend.subscribe((e) => e.type === 'database.recoveryProgressed' && firstEvent());
    const recovering = backend.invoke('database.recover', { outPath: out });
    await Promise.race([started, recovering]);
    await backend.close();
    const r = (await recovering) as unknown as { ok: boolean; error: { code: string; message: string } };
    expect(r).toMatchObject({ ok: false, error: { code: 'DB_WRITE_FAILED', message: expect.stringContaining('it was stopped, as kvbench is closing') } });
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.includes('.recovering-'))).toEqual([]);
    expect(sha(damaged)).toBe(before);
  });

  it('kvbench closing while it writes the new file: close() returns only once the worker has stopped and its temporary file is gone (Electron quits right after)', async () => {
    const dir = tempDir('kvb-recover-app-');
    const { damaged } = damagedTrialsPage(dir);
    const backend = await backendOn(dir, damaged);
    let writing: () => void = () => {};
    const atWrite = new Promise<void>((r) => (writing = r));
    backend.subscribe((e) => e.type === 'database.recoveryProgressed' && e.message.startsWith('writing') && writing());
    const recovering = backend.invoke('database.recover', { outPath: path.join(dir, 'recovered.db') });
    await Promise.race([atWrite, recovering]);
    await backend.close();
    const left = fs.readdirSync(dir).filter((f) => f.includes('.recovering-'));
    expect(await settled(recovering)).toBe(true);
    expect(left).toEqual([]);
  });

  it('a recovery whose switch to the new database fails (the settings cannot be saved) ends with "stopped", not "done"', async () => {
    const dir = tempDir('kvb-recover-app-');
    const { damaged } = damagedTrialsPage(dir);
    const settingsFile = path.join(dir, 'config', 'settings.json');
    const backend = await createBackend({
      mode: 'browser',
      settingsFile,
      defaults: { databasePath: damaged, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
      detect: () => Promise.reject(new Error('no detection in this test')),
      log: () => {},
    });
    const ends: string[] = [];
    backend.subscribe((e) => e.type === 'database.recoveryProgressed' && e.ended && ends.push(e.message));
    fs.writeFileSync(path.join(dir, 'config'), 'a file where the settings folder would be');
    try {
      const error = await refusal(backend, 'database.recover', { outPath: path.join(dir, 'recovered.db') });
      expect(ends).toEqual([expect.stringMatching(/^stopped: /)]);
      expect(ends[0]).toContain(error.message);
    } finally {
      await backend.close();
    }
  });

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
