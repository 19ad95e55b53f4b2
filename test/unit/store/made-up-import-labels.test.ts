// Migration 6: imports stored without --label before suite labels carried "import of N file(s)", a
// label kvbench made up. Labels now name a series (History's filter, compare by label), and those
// would pool unrelated imports of as many files, so the migration clears them, and only them.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../../src-main/store/migrations.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { removeTempDirs, tempDir } from './fixtures.ts';

afterEach(removeTempDirs);

describe('migration 6', () => {
  it('clears the made-up labels of imports and keeps every label a user gave', () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const s = openStore(file);
    const systemId = s.upsertImportedSystem('lab').id;
    const suite = (label: string | null, source: 'suite' | 'import'): number =>
      s.createSuite({ systemId, driveId: null, profile: source === 'import' ? 'import' : 'smoke', label, source, plan: null, cacheDir: null, runner: null, status: 'finished' });
    const ids = {
      madeUp: suite('import of 3 file(s)', 'import'),
      madeUpLarge: suite('import of 2000 file(s)', 'import'),
      named: suite('fw 2.1', 'import'),
      lookalike: suite('import of 3 extra file(s)', 'import'),
      ranSuite: suite('import of 2 file(s)', 'suite'),
      none: suite(null, 'import'),
    };
    // Back to schema 5, as a 0.6.0 kvbench left the file (the migration only changes data).
    s.db.pragma('user_version = 5');
    s.close();

    const reopened = openStore(file);
    expect(reopened.db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    const labels = Object.fromEntries(
      Object.entries(ids).map(([k, id]) => [k, (reopened.db.prepare('SELECT label FROM suites WHERE id = ?').get(id) as { label: string | null }).label]),
    );
    reopened.close();
    expect(labels).toEqual({ madeUp: null, madeUpLarge: null, named: 'fw 2.1', lookalike: 'import of 3 extra file(s)', ranSuite: 'import of 2 file(s)', none: null });
  });
});
