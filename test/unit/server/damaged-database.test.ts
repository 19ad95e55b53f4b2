// The app (and `kvbench serve`) over a damaged database file (pages overwritten: PRAGMA quick_check
// fails). It refused it outright ("no database is open"), so nothing of what remained could be seen
// or exported from the app, though the CLI's history, report and export read it. Now the backend reads
// a copy in memory of what can be read (openDamagedStore, as the CLI does), says so in app.info
// (databaseDamaged: what SQLite found, what could not be read, how many trials the copy holds), lets
// History, the report, Compare and the exports work on it, refuses every write (a suite, a resume, an
// import, a delete) as DB_CORRUPT with what to do, never writes the file, and lets Settings switch to
// another database, and back.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackend, type Backend } from '../../../src-main/server/backend.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { ResponseOf } from '../../../src-shared/ipc/contract.ts';
import { damagedTrialsPage, sha } from '../../support/damaged-file.ts';
import { kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(removeTempDirs);


async function value<T = Record<string, unknown>>(backend: Backend, channel: string, request: unknown): Promise<T> {
  const r = await backend.invoke(channel, request);
  expect(r.ok, `${channel}: ${JSON.stringify(r)}`).toBe(true);
  return (r as { value: T }).value;
}

describe('the app over a damaged database file', () => {
  it('shows a read-only copy of what could be read, refuses every write, never writes the file, and switches away and back', async () => {
    const dir = tempDir('kvb-damaged-app-');
    const { intact, damaged } = damagedTrialsPage(dir);
    const before = sha(damaged);
    const intactStore = openStore(intact, { readonly: true });
    const intactIds = intactStore.listTrials({}).map((t) => t.id);
    intactStore.close();
    expect(intactIds).toHaveLength(32);

    const logs: string[] = [];
    const backend = await createBackend({
      mode: 'browser',
      settingsFile: path.join(dir, 'settings.json'),
      defaults: { databasePath: damaged, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
      detect: () => Promise.reject(new Error('no detection in this test')),
      log: (level, message) => logs.push(`${level}: ${message}`),
    });
    try {
      // Open, and said to be damaged, with what could not be read.
      const info = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(info.databaseError).toBeNull();
      expect(info.databasePath).toBe(damaged);
      const d = info.databaseDamaged!;
      expect(d).not.toBeNull();
      expect(d.damage).toMatch(/^SQLite/);
      expect(d.unreadable.length).toBeGreaterThan(0);
      for (const line of d.unreadable) expect(line).toMatch(new RegExp(`^trials? [0-9–, ]+ in ${damaged.replace(/[.]/g, '\\.')} could not be read`));
      expect(d.trialsRead).toBeGreaterThanOrEqual(20);
      expect(d.trialsRead).toBeLessThan(32);
      // The log says it once, with each part that could not be read.
      expect(logs.filter((l) => l.includes(`database ${damaged} is damaged`))).toEqual([expect.stringMatching(/^warn: .*showing a read-only copy of what could be read \(\d+ trial\(s\); \d+ part\(s\) could not be read/)]);
      for (const line of d.unreadable) expect(logs).toContain(`warn: ${line}`);

      // History lists what was read: trials of the intact database, none invented.
      const list = await value<ResponseOf<'history.list'>>(backend, 'history.list', { selection: {}, limit: 5000 });
      expect(list.total).toBe(d.trialsRead);
      const listed = list.trials.map((t) => t.id);
      expect(listed.every((id) => intactIds.includes(id))).toBe(true);
      // The report, Compare (two systems) and the exports work on it.
      const suites = await value<ResponseOf<'suites.list'>>(backend, 'suites.list', {});
      expect(suites.length).toBeGreaterThanOrEqual(3);
      const report = await value<ResponseOf<'report.build'>>(backend, 'report.build', { selection: {} });
      expect(report.trialCount).toBe(d.trialsRead);
      const facets = await value<ResponseOf<'history.facets'>>(backend, 'history.facets', {});
      expect(facets.systems.map((s) => s.hostname).sort()).toEqual(['lab1', 'lab2']);
      const compared = await value<ResponseOf<'report.compare'>>(backend, 'report.compare', { kind: 'system', a: facets.systems[0].id, b: facets.systems[1].id });
      expect(compared.matched).toBeGreaterThan(0);
      for (const format of ['csv', 'xlsx', 'json']) {
        const exported = await value<ResponseOf<'export.create'>>(backend, 'export.create', { selection: {}, format });
        expect(exported).toMatchObject({ trialCount: d.trialsRead, delivery: { kind: 'download' } });
      }
      const detail = await value<ResponseOf<'trials.get'>>(backend, 'trials.get', { id: listed[0] });
      expect(detail.trial.id).toBe(listed[0]);

      // Every write is refused, saying why and what to do; nothing reaches the file.
      const refusal = (what: string): RegExp =>
        new RegExp(`^${what} is refused: the database ${damaged.replace(/[.]/g, '\\.')} is damaged, and kvbench shows a read-only copy of what could be read, writing nothing to the file\\. To run suites, import or delete again, choose a new \\(or a healthy\\) database in Settings\\.$`);
      const cacheDir = path.join(dir, 'cache');
      const writes: [string, unknown, string][] = [
        ['suite.start', { cacheDir, profile: 'smoke', trials: 1, scenarios: ['storage-only'] }, 'A new suite'],
        ['suite.resume', { suiteId: suites[0].id }, `Resuming suite ${suites[0].id}`],
        ['trials.delete', { ids: [listed[0]] }, 'Deleting trials'],
        ['suites.delete', { id: suites[0].id }, 'Deleting a suite'],
        ['import.results', { files: [{ name: 'r.json', text: JSON.stringify(kvbenchResults({ tokPerS: 100 })) }], systemLabel: 'lab' }, 'An import'],
      ];
      for (const [channel, request, what] of writes) {
        const r = await backend.invoke(channel, request);
        expect(r, channel).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT', message: expect.stringMatching(refusal(what)) } });
      }
      expect(fs.existsSync(cacheDir)).toBe(false);
      expect((await value<ResponseOf<'history.list'>>(backend, 'history.list', { selection: {}, limit: 5000 })).total).toBe(d.trialsRead);
      // A settings change that is not the database's is saved (the settings file, not the database).
      expect(await value(backend, 'settings.update', { byteUnits: 'binary' })).toMatchObject({ byteUnits: 'binary', databasePath: damaged });
      expect(sha(damaged)).toBe(before);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('damaged.db'))).toEqual(['damaged.db']);

      // Settings switches to a new database, which is written again …
      const fresh = path.join(dir, 'fresh.db');
      await value(backend, 'settings.update', { databasePath: fresh, createDatabase: true });
      const freshInfo = await value<ResponseOf<'app.info'>>(backend, 'app.info', {});
      expect(freshInfo).toMatchObject({ databasePath: fresh, databaseError: null, databaseDamaged: null });
      const imported = await value<ResponseOf<'import.results'>>(backend, 'import.results', { files: [{ name: 'r.json', text: JSON.stringify(kvbenchResults({ tokPerS: 100 })) }], systemLabel: 'lab' });
      expect(imported.imported).toHaveLength(1);
      // … and back to the damaged one, shown read-only again.
      await value(backend, 'settings.update', { databasePath: damaged });
      expect((await value<ResponseOf<'app.info'>>(backend, 'app.info', {})).databaseDamaged).toEqual(d);
      expect(await backend.invoke('trials.delete', { ids: [listed[0]] })).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT' } });
    } finally {
      await backend.close();
    }
    expect(sha(damaged)).toBe(before);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('damaged.db'))).toEqual(['damaged.db']);
  });

  it('still refuses a file it cannot read as a kvbench database (not SQLite), as before', async () => {
    const dir = tempDir('kvb-damaged-app-');
    const garbage = path.join(dir, 'garbage.db');
    fs.writeFileSync(garbage, 'garbage');
    const backend = await createBackend({ mode: 'browser', settingsFile: path.join(dir, 'settings.json'), defaults: { databasePath: garbage, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      expect(await value(backend, 'app.info', {})).toMatchObject({ databaseError: { code: 'DB_CORRUPT' }, databaseDamaged: null });
    } finally {
      await backend.close();
    }
    expect(fs.readFileSync(garbage, 'utf8')).toBe('garbage');
  });
});
