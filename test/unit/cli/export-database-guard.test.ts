// `kvbench export --out` and `kvbench endpoint export --out` write their file atomically: an --out
// naming the database they read (or its -wal/-shm, by any spelling or link) would replace every stored
// trial with the export. Both refuse it before opening anything, and the database stays byte for byte.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => {
  vi.unstubAllEnvs();
  removeTempDirs();
});

describe('an export --out naming the database it reads', () => {
  it('is refused by kvbench export and kvbench endpoint export, and the database is untouched', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    openStore(db).close();
    const before = fs.readFileSync(db);
    const link = path.join(dir, 'looks-like-an-export.json');
    fs.symlinkSync(db, link);
    const cases: [string, string][] = [
      [db, 'json'],
      [path.join(dir, '.', 'kvbench.db'), 'csv'],
      [link, 'json'],
      [`${db}-wal`, 'csv'],
      [`${db}-shm`, 'csv'],
    ];
    for (const [out, format] of cases) {
      const e = await run(() => exportCommand(['--db', db, '--out', out, '--format', format]));
      expect(e.code, e.stderr).toBe(1);
      expect(e.stderr).toMatch(/^kvbench export: --out .* is the database( file .*-(wal|shm))? this command reads \(.*kvbench\.db\): writing it would destroy what is stored/);
      const ep = await run(() => endpointCommand(['export', '--db', db, '--out', out, '--format', format]));
      expect(ep.code, ep.stderr).toBe(1);
      expect(ep.stderr).toMatch(/^kvbench endpoint: export: --out .* is the database/);
    }
    // The default database ($KVBENCH_DB) is guarded the same way.
    vi.stubEnv('KVBENCH_DB', db);
    try {
      expect((await run(() => exportCommand(['--out', db, '--format', 'json']))).code).toBe(1);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.existsSync(`${db}-wal`)).toBe(false);

    // Any other file is written as before.
    const ok = await run(() => exportCommand(['--db', db, '--out', path.join(dir, 'trials.json')]));
    expect(ok.code, ok.stderr).toBe(0);
    const okEp = await run(() => endpointCommand(['export', '--db', db, '--out', path.join(dir, 'runs.csv')]));
    expect(okEp.code, okEp.stderr).toBe(0);
  });
});
