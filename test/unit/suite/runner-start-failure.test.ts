// A suite whose store fails before its first trial is recorded (a full disk, in the field) leaves no
// empty suite behind: it holds no result, and listed as `interrupted` with 0 trials it would only
// puzzle. Here SQLite itself refuses the trial's insert (a temporary trigger of this connection: the
// database file is not changed by it), as it would refuse it with SQLITE_FULL.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { runSuite } from '../../../src-main/suite/runner.ts';
import { fakeHardware, removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(removeTempDirs);

describe('a suite that cannot record its first trial', () => {
  it('fails with the store\'s error and is deleted, not left as an empty suite', async () => {
    // review (fault) #5c
    const store = openStore(path.join(tempDir(), 'kvbench.db'));
    try {
      const hw = fakeHardware();
      const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1, scenarios: ['storage-only'] });
      store.db.exec("CREATE TEMP TRIGGER no_room BEFORE INSERT ON main.trials BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
      const startEngine = (): never => {
        throw new Error('no engine starts for a trial that was not recorded');
      };
      await expect(runSuite(plan, { store, hardware: hw, startEngine })).rejects.toThrow('database or disk is full');
      expect(store.listSuites()).toEqual([]);
      expect(store.db.prepare('SELECT COUNT(*) AS n FROM runs').get()).toEqual({ n: 0 });
    } finally {
      store.close();
    }
  });
});
