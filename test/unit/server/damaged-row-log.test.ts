// The app over a database with one damaged row (stored JSON that SQLite's checks pass): its views
// leave that trial out, as the CLI does, and the log says which and why, once; the CLI says it on
// stderr (test/unit/store/damaged-row.test.ts).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackend } from '../../../src-main/server/backend.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { damagedDatabase } from '../store/damaged-database.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { addSuiteTrials } from '../store/seed-store.ts';

afterEach(removeTempDirs);

describe('the app over a damaged row', () => {
  it('lists the other trials and logs the one it left out, with the database, once', async () => {
    const { db, damaged, others } = await damagedDatabase();
    const logs: string[] = [];
    const backend = await createBackend({
      mode: 'browser',
      settingsFile: path.join(tempDir(), 'settings.json'),
      defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
      log: (level, message) => logs.push(`${level}: ${message}`),
    });
    try {
      for (let i = 0; i < 2; i++) {
        const r = await backend.invoke('history.list', { selection: {} });
        expect(r.ok, JSON.stringify(r)).toBe(true);
        const ids = ((r as { value: { trials: { id: number }[] } }).value.trials ?? []).map((t) => t.id).sort((a, b) => a - b);
        expect(ids).toEqual(others);
      }
      const said = logs.filter((l) => l.includes(`trial ${damaged}'s options`));
      expect(said).toHaveLength(1);
      expect(said[0]).toMatch(new RegExp(`^warn: trial ${damaged}'s options in ${db.replace(/[.]/g, '\\.')} cannot be read: the stored JSON is damaged`));
    } finally {
      await backend.close();
    }
  });

  it('logs a line again when it grows: a damaged snapshot found by a second trial is said naming both', async () => {
    // The log kept a count of the lines it had said, so a line that changed in place (a snapshot's,
    // naming each trial found without its hardware so far) was never said again.
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const store = openStore(db);
    addSuiteTrials(store, fakeHardware({ probe: true }), 2, (i) => ({ results: kvbenchResults({ tokPerS: 100 + i }) as unknown as Record<string, unknown> }));
    const [first, second] = store.listTrials({ order: 'asc' }).map((t) => t.id);
    store.close();
    const raw = openDatabase(db);
    raw.prepare('UPDATE hardware_snapshots SET profile_json = substr(profile_json, 1, 30) || ?').run('\u00ab\u00ab');
    raw.close();
    const logs: string[] = [];
    const backend = await createBackend({
      mode: 'browser',
      settingsFile: path.join(tempDir(), 'settings.json'),
      defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
      log: (level, message) => logs.push(`${level}: ${message}`),
    });
    try {
      for (const id of [first, second, first, second]) expect((await backend.invoke('trials.get', { id })).ok).toBe(true);
      const said = logs.filter((l) => l.includes('hardware snapshot'));
      expect(said).toEqual([
        expect.stringMatching(new RegExp(`^warn: hardware snapshot \\d+ in .* cannot be read: .*; trial ${first} \\(and any other trial of that snapshot\\) is shown without its hardware$`)),
        expect.stringMatching(new RegExp(`^warn: hardware snapshot \\d+ in .* cannot be read: .*; trials ${first}, ${second} are shown without their hardware$`)),
      ]);
    } finally {
      await backend.close();
    }
  });

  it('every answer that left a row out, or read one without its hardware, says so to the page, each time it is asked', async () => {
    // review (ui) 6 #4: only the server's log said it; the report read 1 trial where the suite holds 2.
    const { db, damaged, withHardware } = await damagedDatabase();
    const backend = await createBackend({
      mode: 'browser',
      settingsFile: path.join(tempDir(), 'settings.json'),
      defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    });
    const value = async (channel: string, request: unknown): Promise<Record<string, unknown> & { unreadable?: string[] }> => {
      const r = await backend.invoke(channel, request);
      expect(r.ok, JSON.stringify(r)).toBe(true);
      return (r as { value: Record<string, unknown> & { unreadable?: string[] } }).value;
    };
    const leftOut = new RegExp(`^trial ${damaged}'s options in ${db.replace(/[.]/g, '\\.')} cannot be read: the stored JSON is damaged \\(.*\\); trial ${damaged} is left out`);
    const noHardware = new RegExp(`^hardware snapshot \\d+ in .* cannot be read: the stored JSON is damaged .*; trial ${withHardware} .* is shown without its hardware`);
    try {
      // Not only the first time: the log says it once, every answer that lacks it says it.
      for (let i = 0; i < 2; i++) {
        const list = await value('history.list', { selection: {} });
        expect(list.unreadable).toHaveLength(1);
        expect(list.unreadable![0]).toMatch(leftOut);
      }
      const suites = (await value('suites.list', {})) as unknown as { id: number; trialCounts: { complete: number } }[];
      // The import's suite: its count includes the damaged trial …
      const imported = suites.find((x) => x.trialCounts.complete === 2)!;
      const report = await value('report.build', { selection: { suiteIds: [imported.id] } });
      expect(report.trialCount).toBe(1); // … the report cannot: it says why
      expect(report.unreadable).toHaveLength(1);
      expect(report.unreadable![0]).toMatch(leftOut);
      // The whole history: the damaged options and the damaged snapshot.
      const all = await value('report.build', { selection: {} });
      expect(all.unreadable).toEqual([expect.stringMatching(leftOut), expect.stringMatching(noHardware)]);
      for (const format of ['csv', 'xlsx', 'json']) {
        const exported = await value('export.create', { selection: {}, format });
        expect(exported.trialCount).toBe(2);
        expect(exported.unreadable).toEqual([expect.stringMatching(leftOut), expect.stringMatching(noHardware)]);
      }
      const facets = (await value('history.facets', {})) as unknown as { systems: { id: string }[] };
      const compared = await value('report.compare', { kind: 'system', a: facets.systems[0].id, b: facets.systems[1].id });
      expect(compared.unreadable).toEqual([expect.stringMatching(leftOut)]);
      // The seeded suite's one trial is there, without its hardware: that is said, the other suite's trial is not.
      const other = suites.find((x) => x.id !== imported.id)!;
      expect((await value('report.build', { selection: { suiteIds: [other.id] } })).unreadable).toEqual([expect.stringMatching(noHardware)]);
      // The trial's own dialog too, each time it is opened; a trial stored without a snapshot has nothing to say.
      for (let i = 0; i < 2; i++) {
        const detail = await value('trials.get', { id: withHardware });
        expect(detail.hardware).toBeNull();
        expect(detail.unreadable).toEqual([expect.stringMatching(noHardware)]);
      }
      const importedTrial = (await value('history.list', { selection: {} })) as unknown as { trials: { id: number; sourceFile: string | null }[] };
      expect((await value('trials.get', { id: importedTrial.trials.find((t) => t.sourceFile !== null)!.id })).unreadable).toEqual([]);
    } finally {
      await backend.close();
    }
  });
});
