// The composition helpers every front end uses (the CLI now; the Electron main process and
// `kvbench serve` next): open the store and clean up after interrupted runners, detect the hardware
// for a suite, plan, run.
import path from 'node:path';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { detectHardware, type DetectOptions } from '../hardware/detect-hardware.ts';
import { openStore, type OpenStoreOptions } from '../store/open-store.ts';
import type { BackfillProgress, RecoveredTrial, Store } from '../store/store.ts';
import type { SuitePlan } from '../../src-shared/domain/scenarios.ts';
import { cleanUpRecovered, explainUnstored, pendingTrials, type UnstoredTrial } from './runner.ts';

export interface OpenedStore {
  store: Store;
  /** Trials found interrupted (runner killed) and marked aborted by this open. */
  recovered: RecoveredTrial[];
  /**
   * Trials found left running by a runner that could not store them (a full disk under the
   * database), not killed: marked failed with the file that holds their results.
   */
  unstored: UnstoredTrial[];
  /** Run directories of their engines that were removed. */
  removedRunDirs: string[];
}

/**
 * Opens the store; trials of dead runners become aborted (failed, with their results file, where the
 * runner left one because it could not store them) and their engines' run directories are removed.
 */
export async function openStoreAndRecover(dbPath: string, opts: OpenStoreOptions = {}): Promise<OpenedStore> {
  const store = openStore(dbPath, opts);
  const found = [...store.recovered];
  const unstored = found.length > 0 ? await explainUnstored(store, found) : [];
  const recovered = found.filter((r) => !unstored.some((u) => u.trialId === r.trialId));
  const removedRunDirs = found.length > 0 ? await cleanUpRecovered(found) : [];
  return { store, recovered, unstored, removedRunDirs };
}

/** Fewer trials than this fill in well under a second: nothing is said of them. */
export const BACKFILL_NOTICE_MIN_TRIALS = 256;
const BACKFILL_PROGRESS_INTERVAL_MS = 2000;

/**
 * What a front end passes as openStore's onBackfill: the once-only fill of thousands of imported
 * trials' measuring versions takes seconds, in which the open would otherwise seem to hang. Says
 * once what it does and for how many, then how far at most every 2 s, and when it is done; a few
 * trials (and the damaged ones each open passes over again) go unsaid.
 */
export function backfillNotice(say: (line: string) => void, minTrials = BACKFILL_NOTICE_MIN_TRIALS): (p: BackfillProgress) => void {
  let saidAtMs = 0;
  return ({ trialsDone, trialsTotal }) => {
    if (trialsTotal < minTrials) return;
    const nowMs = performance.now();
    if (trialsDone === 0) {
      say(`upgrading ${trialsTotal} imported trials' records (once; this database was made by an older kvbench) …`);
    } else if (trialsDone >= trialsTotal) {
      say(`upgraded ${trialsTotal} imported trials' records`);
    } else if (nowMs - saidAtMs >= BACKFILL_PROGRESS_INTERVAL_MS) {
      say(`upgrading imported trials' records: ${trialsDone} of ${trialsTotal} …`);
    } else {
      return;
    }
    saidAtMs = nowMs;
  };
}

/** The drive probe before a suite: brief for smoke (1 s per phase, 256 MiB), 5 s per phase otherwise. */
export function probeSettingsFor(profile: string): { durationS: number; sizeBytes: number | null } {
  return profile === 'smoke' ? { durationS: 1, sizeBytes: 256 * 1024 * 1024 } : { durationS: 5, sizeBytes: null };
}

/** Hardware for a suite: the machine, the cache directory, and (optionally) the drive and memory probes. */
export async function detectForSuite(
  cacheDir: string,
  opts: { probe: boolean; profile: string; signal?: AbortSignal } & Pick<DetectOptions, 'source'>,
): Promise<HardwareProfile> {
  return detectHardware(path.resolve(cacheDir), {
    ...(opts.source ? { source: opts.source } : {}),
    probeDirectIo: true,
    probeBandwidth: opts.probe ? { ...probeSettingsFor(opts.profile), ...(opts.signal ? { signal: opts.signal } : {}) } : false,
    probeMemory: opts.probe,
  });
}

/**
 * Whether resuming a suite probes the drive: as it was planned (plans stored before they recorded
 * the choice: whether its first trial ran with the drive's limits measured, the probe for a suite
 * without trials), and never with nothing left to run, where no limit would describe anything.
 */
export function resumeProbe(store: Store, suiteId: number, plan: SuitePlan): { probe: boolean; planned: boolean; trialsLeft: number } {
  const trialsLeft = pendingTrials(store, suiteId, plan).length;
  const planned = plan.probe ?? probedBefore(store, suiteId);
  return { probe: trialsLeft > 0 && planned, planned, trialsLeft };
}

function probedBefore(store: Store, suiteId: number): boolean {
  const first = store.listTrials({ suiteIds: [suiteId], order: 'asc', limit: 1 })[0];
  const hardware = first ? store.trialHardware(first.id) : null;
  return hardware === null || (hardware.cacheDir?.bandwidth ?? null) !== null;
}
