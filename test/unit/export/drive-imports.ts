// Drives compared as a reviewer compares them: kvbench results files imported into a real database
// under one system with a --drive label each (the import path `kvbench import` takes), then read back
// through the store for `kvbench report --compare … --drives`.
import path from 'node:path';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { kvbenchResults, writeResults } from '../store/fixtures.ts';

/** The reviewer's runs: tiny-1b, 4 users, 4 s, no CPU or GPU tier, no generation, 1 s warm-up, a 1 GiB storage cap. */
export const DRIVE_RUN_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({
  model: 'tiny-1b',
  numUsers: 4,
  duration: 4,
  cpuMemGb: 0,
  gpuMemGb: 0,
  generationMode: 'none',
  warmUp: 1,
  storageCapacityGb: 1,
  seed: 42,
});

export interface DriveRun {
  tokPerS: number;
  /** Added to (or replacing) DRIVE_RUN_OPTIONS. */
  options?: Record<string, unknown>;
  /** The cache directory was RAM-backed (tmpfs, or a loop device on it). */
  ramBacked?: boolean;
  /** What held it in RAM, as a results file of this kvbench says it (`ram_backing_chain`); without it, the file is one written before that was kept. */
  ramBacking?: string;
  /** The device's and the engine's read coverage (below 0.95: the page cache served reads). */
  readCoverage?: number;
  status?: 'complete' | 'partial';
  readBytesPerS?: number;
  /** The measured window closed this many seconds past its plan (a stall, stored complete as before the engine marked them). */
  stalledS?: number;
  e2eP95Ms?: number;
}

let files = 0;

/** Imports `runs` as trials of system `rig` on drive `drive`, filed under `scenarioId` in a suite labelled `suiteLabel`; returns their trial ids. */
export async function importDrive(store: Store, dir: string, drive: string, runs: readonly DriveRun[], scenarioId = 'storage-only', suiteLabel: string | null = null): Promise<number[]> {
  const written = runs.map((run) => {
    const r = kvbenchResults({ tokPerS: run.tokPerS, status: run.status, readBytesPerS: run.readBytesPerS, e2eP95Ms: run.e2eP95Ms, durationS: 4 });
    r.kvbench.run_options = { ...DRIVE_RUN_OPTIONS, ...run.options };
    if (run.ramBacked) {
      r.kvbench.tiers.storage.ram_backed = true;
      r.kvbench.tiers.storage.ram_filesystem = 'loop0 on tmpfs';
      if (run.ramBacking !== undefined) r.kvbench.tiers.storage.ram_backing_chain = run.ramBacking;
    }
    if (run.stalledS !== undefined) {
      r.kvbench.measured_window.elapsed_ns += run.stalledS * 1e9;
      r.summary!.elapsed_time = r.kvbench.measured_window.elapsed_ns / 1e9;
      // Only kvbench 0.2.0 on closes its window at the plan: an older file's late window is no stall.
      r.kvbench.version = '0.5.0';
    }
    if (run.readCoverage !== undefined) {
      r.kvbench.device_io.read_coverage = run.readCoverage;
      r.kvbench.device_io.process_read_coverage = run.readCoverage;
      // The engine's verdict goes with its coverages: a report reads the verdict, not the ratios.
      r.kvbench.device_io.flagged = run.readCoverage < 0.95;
      r.kvbench.device_io.flag_reason = run.readCoverage < 0.95 ? `the device read ${(run.readCoverage * 100).toFixed(1)} %: the page cache served the rest` : null;
    }
    return writeResults(dir, `run-${++files}.json`, r);
  });
  const result = await importResultsFiles(store, written, { systemLabel: 'rig', driveLabel: drive, scenarioId, suiteLabel });
  if (result.errors.length > 0 || result.skipped.length > 0) throw new Error(`import failed: ${JSON.stringify([...result.errors, ...result.skipped])}`);
  return result.imported.map((f) => f.trialId);
}

export const dbIn = (dir: string): string => path.join(dir, 'kvbench.db');
