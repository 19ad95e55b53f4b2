// A trial the user deleted on purpose is not a trial left to run: a suite's count of trials not
// complete, and what `kvbench suite --resume` and the app's Resume run, leave its slot alone
// (rev12-gui L8). A failed attempt deleted from a slot that never completed is still left to run.
// Asked for by name (--rerun-deleted, "Run deleted trials again"), a deleted slot runs again into
// the same suite; it stays recorded as deleted until its new trial completes.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { resumeSuite } from '../../../src-main/suite/runner.ts';
import type { EngineHandle } from '../../../src-main/host/engine-host.ts';
import type { RunSuiteDeps } from '../../../src-main/suite/runner.ts';
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

  /** An engine that completes at once, noting each trial's slot by its seed. */
  const completing = (ran: unknown[]): RunSuiteDeps['startEngine'] => (options): EngineHandle => {
    ran.push((options as { seed?: number }).seed);
    return { pid: undefined, result: Promise.resolve({ status: 'complete', reason: null, results: results(), summaryText: 'ok' }), cancel: () => {}, kill: () => {} };
  };
  /** Rows in deleted_trial_slots, straight from SQLite. */
  const recorded = (store: ReturnType<typeof openStore>): number => (store.db.prepare('SELECT COUNT(*) AS n FROM deleted_trial_slots').get() as { n: number }).n;

  it('runs again only when asked; a stopped re-run leaves the slot deleted, a complete one clears it and the tallies add up', async () => {
    const file = path.join(tempDir(), 'kvbench.db');
    const hw = fakeHardware({ probe: true });
    const store = openStore(file);
    try {
      const suiteId = addSuiteTrials(store, hw, 3, () => ({ results: results() }));
      const trials = store.listTrials({ suiteIds: [suiteId], order: 'asc' });
      store.deleteTrials([trials[1].id]);
      expect(store.getSuite(suiteId)).toMatchObject({ trialsLeft: 0, trialsDeleted: 1 });
      expect(store.trialSlotsLeft(suiteId)).toEqual([]);
      expect(store.trialSlotsLeft(suiteId, { deleted: true }).map((s) => [s.trialIndex, s.deleted])).toEqual([[1, true]]);

      // A plain resume still runs nothing.
      const none: unknown[] = [];
      expect((await resumeSuite(suiteId, { store, hardware: hw, startEngine: completing(none) })).counts.complete).toBe(0);
      expect(none).toEqual([]);

      // A re-run stopped by the user: its attempt is kept (aborted), the slot stays deleted, not "not complete".
      const stop = new AbortController();
      const stopped = await resumeSuite(suiteId, {
        store,
        hardware: hw,
        rerunDeleted: true,
        signal: stop.signal,
        startEngine: (): EngineHandle => {
          let end!: (o: Awaited<EngineHandle['result']>) => void;
          setImmediate(() => stop.abort());
          return { pid: undefined, result: new Promise((r) => (end = r)), cancel: () => end({ status: 'partial', reason: 'cancelled', results: results(), summaryText: '' }), kill: () => {} };
        },
      });
      expect(stopped.status).toBe('cancelled');
      expect(stopped.trials.map((t) => [t.trialIndex, t.status])).toEqual([[1, 'aborted']]);
      expect(store.getSuite(suiteId)).toMatchObject({ trialsLeft: 0, trialsDeleted: 1, trialCounts: { complete: 2, aborted: 1 } });
      expect(recorded(store)).toBe(1);

      // Asked again, it completes: the record goes with it, and the suite has its three complete trials.
      const ran: unknown[] = [];
      const rerun = await resumeSuite(suiteId, { store, hardware: hw, rerunDeleted: true, startEngine: completing(ran) });
      expect(rerun).toMatchObject({ status: 'finished', outcome: 'finished', counts: { complete: 1 } });
      expect(ran).toHaveLength(1);
      expect(rerun.trials.map((t) => [t.trialIndex, t.status])).toEqual([[1, 'complete']]);
      expect(recorded(store)).toBe(0);
      expect(store.getSuite(suiteId)).toMatchObject({ status: 'finished', trialsLeft: 0, trialsDeleted: 0, trialCounts: { complete: 3, aborted: 1 } });
      const slot1 = store.listTrials({ suiteIds: [suiteId], order: 'asc' }).filter((t) => t.trialIndex === 1);
      expect(slot1.map((t) => [t.attempt, t.status])).toEqual([
        [1, 'aborted'], // the deleted attempt's number is free again: the store never holds two alike
        [2, 'complete'],
      ]);
      expect(store.trialSlotsLeft(suiteId, { deleted: true })).toEqual([]);

      // Deleted again, it is recorded again.
      store.deleteTrials([slot1[1].id]);
      expect(store.getSuite(suiteId)).toMatchObject({ trialsLeft: 0, trialsDeleted: 1 });
    } finally {
      store.close();
    }
  });
});
