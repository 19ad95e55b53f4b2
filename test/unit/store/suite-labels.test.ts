// A suite's label ("drive A, firmware 2.1") names what the suite measured: every trial carries it,
// History and exports filter by it, and suites of one label pool as one side of a comparison, as the
// suites of one system do. On a real SQLite file, with suites that ran and imported ones.
import { afterEach, describe, expect, it } from 'vitest';
import { comparisonSide, resolveSelection, selectionFromFlags } from '../../../src-main/export/selection.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { closeOpenedStores, expectStoreError, open } from '../../support/store.ts';
import { dbIn, importDrive } from '../export/drive-imports.ts';
import { fakeHardware, removeTempDirs, tempDir } from './fixtures.ts';

afterEach(() => {
  closeOpenedStores();
  removeTempDirs();
});

/** A suite that ran (one storage-only trial, complete) with this label, created at `createdAt`. */
function ranSuite(store: Store, label: string | null, createdAt: string): { suiteId: number; trialId: number } {
  const hw = fakeHardware();
  store.upsertDetectedSystem(hw);
  const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1, scenarios: ['storage-only'] });
  const suiteId = store.createSuite({ systemId: hw.system.id, driveId: hw.cacheDir!.driveId, profile: 'smoke', label, source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess() });
  store.db.prepare('UPDATE suites SET created_at = ? WHERE id = ?').run(createdAt, suiteId);
  const run = store.listRuns(suiteId)[0];
  const trialId = store.startTrial({ runId: run.id, suiteId, systemId: hw.system.id, driveId: hw.cacheDir!.driveId, hardwareSnapshotId: null, scenarioId: run.scenarioId, trialIndex: 0, options: run.options, configKey: run.configKey, runner: currentProcess(), cacheDir: '/mnt/kv', startedAt: createdAt });
  store.finishTrial(trialId, { status: 'complete', reason: null, wallMs: 1000, metrics: { wall_clock_throughput_tok_per_s: 100 } });
  store.setSuiteStatus(suiteId, 'finished');
  return { suiteId, trialId };
}

describe('suite labels in the store', () => {
  it('carries each trial\'s suite label, stores a label trimmed (an empty one as none), and filters by it across dates', () => {
    const store = open(dbIn(tempDir()));
    const first = ranSuite(store, 'drive A, firmware 2.1', '2026-11-01T10:00:00.000Z');
    const second = ranSuite(store, '  drive A, firmware 2.1 ', '2026-11-20T10:00:00.000Z');
    const other = ranSuite(store, 'drive A, firmware 2.2', '2026-11-21T10:00:00.000Z');
    const none = ranSuite(store, '   ', '2026-11-22T10:00:00.000Z');
    // A label stored before labels were trimmed reads, filters and pools as the trimmed one.
    const legacy = ranSuite(store, null, '2026-11-23T10:00:00.000Z');
    store.db.prepare('UPDATE suites SET label = ? WHERE id = ?').run('drive A, firmware 2.2  ', legacy.suiteId);

    expect(store.getSuite(second.suiteId)!.label).toBe('drive A, firmware 2.1');
    expect(store.getSuite(none.suiteId)!.label).toBeNull();
    expect(store.getTrial(first.trialId)!.suiteLabel).toBe('drive A, firmware 2.1');
    expect(store.getTrial(legacy.trialId)!.suiteLabel).toBe('drive A, firmware 2.2');
    expect(store.getTrial(none.trialId)!.suiteLabel).toBeNull();

    const ids = (labels: string[]): number[] => store.listTrials({ suiteLabels: labels, order: 'asc' }).map((t) => t.id);
    expect(ids(['drive A, firmware 2.1'])).toEqual([first.trialId, second.trialId]);
    expect(ids(['drive A, firmware 2.2'])).toEqual([other.trialId, legacy.trialId]);
    expect(ids(['drive A, firmware 2.1', 'drive A, firmware 2.2'])).toHaveLength(4);
    expect(store.listSuites({ labels: ['drive A, firmware 2.2'] }).map((s) => s.id)).toEqual([legacy.suiteId, other.suiteId]);

    // What History and Compare offer: each label once, the most recently used first, with its suites and trials.
    expect(store.trialFacets().suiteLabels).toEqual([
      { label: 'drive A, firmware 2.2', suites: 2, trialCount: 2 },
      { label: 'drive A, firmware 2.1', suites: 2, trialCount: 2 },
    ]);
  });

  it('resolves a label only as a whole label: none is NOT_FOUND (naming one that differs in case), an empty one VALIDATION', () => {
    const store = open(dbIn(tempDir()));
    ranSuite(store, 'FW 2.1', '2026-11-01T10:00:00.000Z');
    expect(store.resolveSuiteLabel(' FW 2.1 ')).toBe('FW 2.1');
    expectStoreError(() => store.resolveSuiteLabel('FW 2'), 'NOT_FOUND', "no suite is labelled 'FW 2' (see kvbench history --suites)");
    expectStoreError(() => store.resolveSuiteLabel('fw 2.1'), 'NOT_FOUND', "no suite is labelled 'fw 2.1' (labels differ in case: 'FW 2.1') (see kvbench history --suites)");
    expectStoreError(() => store.resolveSuiteLabel(' '), 'VALIDATION', 'a suite label cannot be empty');
    // The flags: repeatable, and a label's commas are its own (no list is split at them).
    expect(selectionFromFlags({ label: ['drive A, firmware 2.1', 'x'] }, undefined)).toEqual({ suiteLabels: ['drive A, firmware 2.1', 'x'] });
    expectStoreError(() => resolveSelection(store, { suiteLabels: ['nope'] }), 'NOT_FOUND', "no suite is labelled 'nope' (see kvbench history --suites)");
  });

  it('files imports under their label, pooled with the suites that ran under it; an import without one gets none made up', async () => {
    const dir = tempDir();
    const store = open(dbIn(dir));
    const ran = ranSuite(store, 'fw 2.1', '2026-11-01T10:00:00.000Z');
    const labelled = await importDrive(store, dir, 'nvme0', [{ tokPerS: 100 }, { tokPerS: 102 }], 'storage-only', 'fw 2.1');
    const unlabelled = await importDrive(store, dir, 'nvme0', [{ tokPerS: 90 }]);
    expect(store.getTrial(unlabelled[0])!.suiteLabel).toBeNull();
    expect(store.getSuite(store.getTrial(unlabelled[0])!.suiteId)!.label).toBeNull();

    const side = comparisonSide(store, 'label', 'fw 2.1');
    expect(side.label).toBe('fw 2.1');
    expect(side.id).toBe('fw 2.1');
    expect(side.trials.map((t) => t.id).sort((a, b) => a - b)).toEqual([ran.trialId, ...labelled]);
    expect(comparisonSide(store, 'label', 'fw 2.1', { scenarioIds: ['cpu-only'] }).trials).toEqual([]);
  });
});
