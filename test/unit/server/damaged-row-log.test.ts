// The app over a database with one damaged row (stored JSON that SQLite's checks pass): its views
// leave that trial out, as the CLI does, and the log says which and why, once; the CLI says it on
// stderr (test/unit/store/damaged-row.test.ts).
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackend } from '../../../src-main/server/backend.ts';
import { damagedDatabase } from '../store/damaged-database.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

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
});
