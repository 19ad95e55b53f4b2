// A trial the user deleted on purpose is not a trial left to run: a suite's count of trials not
// complete, and what `kvbench suite --resume` and the app's Resume run, leave its slot alone
// (rev12-gui L8). A failed attempt deleted from a slot that never completed is still left to run.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { resumeSuite } from '../../../src-main/suite/runner.ts';
import type { EngineHandle } from '../../../src-main/host/engine-host.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from './fixtures.ts';
import { addSuiteTrials } from './seed-store.ts';

afterEach(removeTempDirs);

const results = (): Record<string, unknown> => kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown>;

describe('a deleted trial', () => {
  it('of a complete slot is not left to run: not counted as not complete, not run by a resume, also after reopening', async () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const hw = fakeHardware({ probe: true });
    const store = openStore(file);
    const suiteId = addSuiteTrials(store, hw, 3, (i) => (i === 2 ? { failed: 'ENGINE_CRASHED: gone' } : { results: results() }));
    const [first, second, third] = store.listTrials({ suiteIds: [suiteId], order: 'asc' });
    expect(store.getSuite(suiteId)!.trialsLeft).toBe(1); // the failed one
    store.deleteTrials([second.id]); // a complete trial, deleted on purpose
    expect(store.getSuite(suiteId)).toMatchObject({ trialsLeft: 1, trialsDeleted: 1 });
    store.deleteTrials([third.id]); // the failed attempt of a slot that never completed: still to run
    expect(store.getSuite(suiteId)).toMatchObject({ trialsLeft: 1, trialsDeleted: 1 });
    expect(store.trialSlotsLeft(suiteId).map((s) => s.trialIndex)).toEqual([2]);
    store.close();

    const reopened = openStore(file);
    try {
      expect(reopened.getSuite(suiteId)).toMatchObject({ trialsLeft: 1, trialsDeleted: 1 });
      const ran: number[] = [];
      const resumed = await resumeSuite(suiteId, {
        store: reopened,
        hardware: hw,
        startEngine: (options): EngineHandle => {
          ran.push(Number((options as { seed?: number }).seed ?? -1));
          return { pid: undefined, result: Promise.resolve({ status: 'complete', reason: null, results: results(), summaryText: 'ok' }), cancel: () => {}, kill: () => {} };
        },
      });
      expect(resumed.status).toBe('finished');
      expect(ran).toHaveLength(1); // the failed slot, not the deleted one
      expect(reopened.listTrials({ suiteIds: [suiteId], order: 'asc' }).map((t) => [t.trialIndex, t.status])).toEqual([
        [0, 'complete'],
        [2, 'complete'],
      ]);
      expect(reopened.getSuite(suiteId)).toMatchObject({ trialsLeft: 0, trialsDeleted: 1 });
      expect(first.trialIndex).toBe(0);
    } finally {
      reopened.close();
    }
  });
});
