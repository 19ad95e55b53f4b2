// A small real database for the store's tests: one system, a smoke suite's plan, a hardware snapshot
// and one complete storage-only trial with kvbench results.
import fs from 'node:fs';
import { openStore } from '../../../src-main/store/open-store.ts';
import { currentProcess } from '../../../src-main/util/process-identity.ts';
import { extractHistograms, extractMetrics } from '../../../src-main/store/results-ingest.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { fakeHardware, kvbenchResults } from './fixtures.ts';

/** Creates `file` with one complete trial; returns the open store (close it for a checkpointed file with no -wal). */
export function seedStore(file: string): Store {
  const store = openStore(file);
  const hw = fakeHardware({ probe: true });
  store.upsertDetectedSystem(hw);
  const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 1, scenarios: ['storage-only'] });
  const suiteId = store.createSuite({ systemId: hw.system.id, driveId: hw.cacheDir!.driveId, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess() });
  const run = store.listRuns(suiteId)[0];
  const snapshotId = store.saveHardwareSnapshot(hw);
  const id = store.startTrial({ runId: run.id, suiteId, systemId: hw.system.id, driveId: hw.cacheDir!.driveId, hardwareSnapshotId: snapshotId, scenarioId: run.scenarioId, trialIndex: 0, options: run.options, configKey: run.configKey, runner: currentProcess(), cacheDir: '/mnt/kv' });
  const r = kvbenchResults({ tokPerS: 1000 }) as unknown as Record<string, unknown>;
  store.finishTrial(id, { status: 'complete', reason: null, wallMs: 4000, results: r, metrics: extractMetrics(r), histograms: extractHistograms(r) });
  return store;
}

/**
 * A copy of a seeded database taken while a writer had changes only in its WAL (as a backup of a
 * running app would be): `copy` and a `-wal` beside it that holds them. The original is made at `source`.
 */
export function copyWithPendingWal(source: string, copy: string): void {
  seedStore(source).close();
  const store = openStore(source);
  store.db.pragma('wal_autocheckpoint = 0');
  store.upsertDetectedSystem(fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab2' }));
  fs.copyFileSync(source, copy);
  fs.copyFileSync(`${source}-wal`, `${copy}-wal`);
  store.close();
}

/** How a trial of addSuiteTrials ends: with these results (complete), or failed for this reason. */
export type TrialOutcome = { results: Record<string, unknown> } | { failed: string };

/**
 * A smoke suite's storage-only run of `n` trials on `hw`, its hardware snapshot stored with them,
 * each trial finished as `outcome` says (given its index and the run's options); returns the suite id.
 */
export function addSuiteTrials(s: Store, hw: HardwareProfile, n: number, outcome: (i: number, options: Record<string, unknown>) => TrialOutcome): number {
  s.upsertDetectedSystem(hw);
  const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: n, scenarios: ['storage-only'] });
  const suiteId = s.createSuite({ systemId: hw.system.id, driveId: hw.cacheDir!.driveId, profile: 'smoke', label: null, source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess() });
  const run = s.listRuns(suiteId)[0];
  const snapshotId = s.saveHardwareSnapshot(hw);
  for (let i = 0; i < n; i++) {
    const id = s.startTrial({ runId: run.id, suiteId, systemId: hw.system.id, driveId: hw.cacheDir!.driveId, hardwareSnapshotId: snapshotId, scenarioId: run.scenarioId, trialIndex: i, options: run.options, configKey: run.configKey, runner: currentProcess(), cacheDir: '/mnt/kv' });
    const o = outcome(i, run.options);
    if ('failed' in o) s.finishTrial(id, { status: 'failed', reason: o.failed, wallMs: 10 });
    else s.finishTrial(id, { status: 'complete', reason: null, wallMs: 4000, results: o.results, metrics: extractMetrics(o.results), histograms: extractHistograms(o.results) });
  }
  return suiteId;
}
