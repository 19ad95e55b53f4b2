// `kvbench export` and the app's export.create build one model (export-model.ts): a selection that
// names a missing suite, or a system not stored, is refused the same way by both (no file, no
// EXPORT_FAILED), and one that exists covers the same trials in both.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { createBackend } from '../../../src-main/server/backend.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';
import { downloaded } from '../../support/downloaded.ts';

afterEach(() => removeTempDirs());

describe('kvbench export and the app over the same database', () => {
  it('refuse a suite that is not stored, and a system that is not, alike; export the same trials of one that is', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const files = [1, 2].map((n) => writeResults(dir, `r${n}.json`, kvbenchResults({ tokPerS: 100 * n })));
    const imported = await run(() => importCommand([...files, '--system', 'lab', '--db', db]));
    expect(imported.code, imported.stderr).toBe(0);
    const app = await createBackend({ mode: 'browser', settingsFile: path.join(dir, 'settings.json'), databasePath: db, defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      const suites = await app.invoke('suites.list', {});
      if (!suites.ok) throw new Error(suites.error.message);
      const stored = (suites.value as { id: number }[]).map((s) => s.id);
      expect(stored).toHaveLength(1);
      const missing = stored[0] + 41;

      const out = path.join(dir, 'x.csv');
      const cli = await run(() => exportCommand(['--db', db, '--format', 'csv', '--suite', String(missing), '--out', out]));
      expect(cli).toEqual({ code: 1, stdout: '', stderr: `kvbench export: Suite ${missing} not found: deleted, or in another database than the one open (see kvbench history --suites)\n` });
      expect(fs.existsSync(out)).toBe(false);
      expect(await app.invoke('export.create', { selection: { suiteIds: [missing] }, format: 'csv' })).toEqual({
        ok: false,
        error: { code: 'NOT_FOUND', message: `Suite ${missing} not found: deleted, or in another database than the one open (see Settings)` },
      });

      const noSystem = await run(() => exportCommand(['--db', db, '--format', 'csv', '--system', 'no-such-system', '--out', out]));
      expect(noSystem.code).toBe(1);
      expect(noSystem.stderr).toMatch(/^kvbench export: .*no-such-system/);
      expect(noSystem.stderr).not.toContain('EXPORT_FAILED');
      expect(fs.existsSync(out)).toBe(false);

      const ok = await run(() => exportCommand(['--db', db, '--format', 'csv', '--suite', String(stored[0]), '--out', out]));
      expect(ok.stderr).toBe(`exported 2 trial(s) to ${out} (csv)\n`);
      const fromApp = await app.invoke('export.create', { selection: { suiteIds: [stored[0]] }, format: 'csv' });
      if (!fromApp.ok) throw new Error(fromApp.error.message);
      const file = fromApp.value as { trialCount: number };
      expect(file.trialCount).toBe(2);
      expect(downloaded(app, file).toString('utf8')).toBe(fs.readFileSync(out, 'utf8'));
    } finally {
      await app.close();
    }
  });
});
