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
 * A smoke suite's run of `n` trials of `scenario` (default storage-only) on `hw`, its hardware snapshot
 * stored with them, each trial finished as `outcome` says (given its index and the run's options);
 * returns the suite id.
 */
export function addSuiteTrials(s: Store, hw: HardwareProfile, n: number, outcome: (i: number, options: Record<string, unknown>) => TrialOutcome, scenario = 'storage-only'): number {
  s.upsertDetectedSystem(hw);
  const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: n, scenarios: [scenario] });
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

/** What seedVariedHistory made: its suites, and the trials it deleted again. */
export interface VariedHistory {
  suiteIds: number[];
  deletedTrialIds: number[];
}

/**
 * A history as a lab's grows one, of about `trials` trials (each trial stored as a suite stores it:
 * results, metrics and histograms), for History's readers and their measurement: three systems, one
 * with two drives; suites with and without labels (one stored untrimmed, as an older kvbench did);
 * two models; three scenarios; complete, partial, failed and aborted trials, a suite every 8 hours;
 * every 17th trial deleted again; and an import left unfinished, whose trials no reader may see.
 */
export function seedVariedHistory(s: Store, trials: number): VariedHistory {
  const systems = ['a', 'b', 'c'].map((x, i) => fakeHardware({ systemId: `sys-${x.repeat(16)}`, hostname: `lab${i + 1}`, probe: true }));
  const labels = ['revA', 'revB', null, 'firmware 2.1'];
  const models = ['tiny-1b', 'llama3.1-8b'];
  const scenarios = ['storage-only', 'cpu-only', 'production'];
  const results = new Map<string, Record<string, unknown>>();
  const resultsOf = (status: 'complete' | 'partial', tokPerS: number): Record<string, unknown> => {
    const key = `${status}:${tokPerS}`;
    let r = results.get(key);
    if (!r) results.set(key, (r = kvbenchResults({ tokPerS, status }) as unknown as Record<string, unknown>));
    return r;
  };
  const day0 = Date.parse('2026-07-01T08:00:00.000Z');
  const suiteIds: number[] = [];
  const stored: number[] = [];
  const setStart = s.db.prepare('UPDATE trials SET started_at = ?, finished_at = ? WHERE id = ?');
  for (let n = 0; stored.length < trials; n++) {
    const hw = structuredClone(systems[n % 3]);
    // The first system's cache directory is on one of two drives.
    if (n % 3 === 0 && n % 2 === 1) hw.cacheDir = { ...hw.cacheDir!, driveId: `${hw.cacheDir!.driveId}-2`, driveLabel: 'virtual disk vdb (256 GiB)' };
    s.upsertDetectedSystem(hw);
    // A suite every 8 hours: 5,000 trials span about four months.
    const at = (minutes: number): string => new Date(day0 + (n * 480 + minutes) * 60_000).toISOString();
    const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 5, scenarios, model: models[n % 2] });
    const suiteId = s.createSuite({ systemId: hw.system.id, driveId: hw.cacheDir!.driveId, profile: 'smoke', label: labels[n % 4], source: 'suite', plan, cacheDir: '/mnt/kv', runner: currentProcess(), createdAt: at(0) });
    suiteIds.push(suiteId);
    const snapshotId = s.saveHardwareSnapshot(hw);
    s.atomically(() => {
      for (const run of s.listRuns(suiteId)) {
        for (let i = 0; i < run.trialsPlanned && stored.length < trials; i++) {
          const k = stored.length;
          const id = s.startTrial({ runId: run.id, suiteId, systemId: hw.system.id, driveId: hw.cacheDir!.driveId, hardwareSnapshotId: snapshotId, scenarioId: run.scenarioId, trialIndex: i, options: run.options, configKey: run.configKey, runner: currentProcess(), cacheDir: '/mnt/kv' });
          if (k % 7 === 3) s.finishTrial(id, { status: 'failed', reason: 'ENGINE_CRASHED: gone', wallMs: 10 });
          else if (k % 13 === 6) s.finishTrial(id, { status: 'aborted', reason: 'the runner stopped', wallMs: null });
          else {
            const r = resultsOf(k % 11 === 5 ? 'partial' : 'complete', 100 + (k % 50));
            s.finishTrial(id, { status: k % 11 === 5 ? 'partial' : 'complete', reason: null, wallMs: 4000, results: r, metrics: extractMetrics(r), histograms: extractHistograms(r) });
          }
          setStart.run(at(1 + k % 90), at(2 + k % 90), id);
          stored.push(id);
        }
      }
    });
    s.setSuiteStatus(suiteId, 'finished');
  }
  // An older kvbench stored labels as typed: History shows and filters them trimmed.
  s.db.prepare("UPDATE suites SET label = '  revB ' WHERE id = ?").run(suiteIds[1]);
  const deletedTrialIds = stored.filter((_, k) => k % 17 === 16);
  s.deleteTrials(deletedTrialIds);
  // An import still at work (or one an older kvbench left unfinished): its trials are no reader's yet.
  const hw = systems[1];
  const imp = s.createSuite({ systemId: hw.system.id, driveId: hw.cacheDir!.driveId, profile: 'import', label: 'revC', source: 'import', plan: null, cacheDir: null, runner: null, status: 'running' });
  const runOptions = s.listRuns(suiteIds[1])[0].options;
  const runId = s.ensureRun(imp, 'storage-only', 'imported', 'imported-key', runOptions);
  for (let i = 0; i < 3; i++) {
    const id = s.startTrial({ runId, suiteId: imp, systemId: hw.system.id, driveId: hw.cacheDir!.driveId, hardwareSnapshotId: null, scenarioId: 'storage-only', trialIndex: i, options: runOptions, configKey: 'imported-key', runner: currentProcess(), cacheDir: null });
    const r = resultsOf('complete', 999);
    s.finishTrial(id, { status: 'complete', reason: null, wallMs: 4000, results: r, metrics: extractMetrics(r), histograms: extractHistograms(r) });
  }
  return { suiteIds, deletedTrialIds };
}
