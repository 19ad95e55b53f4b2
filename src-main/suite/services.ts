// The composition helpers every front end uses (the CLI now; the Electron main process and
// `kvbench serve` next): open the store and clean up after interrupted runners, detect the hardware
// for a suite, plan, run.
import path from 'node:path';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { detectHardware, type DetectOptions } from '../hardware/detect-hardware.ts';
import { openStoreYielding, type OpenStoreOptions } from '../store/open-store.ts';
import type { BackfillProgress, RecoveredTrial, Store } from '../store/store.ts';
import { SCENARIOS, isScenarioId, type SuitePlan } from '../../src-shared/domain/scenarios.ts';
import { cleanUpRecovered, explainUnstored, pendingTrials, type ResumeOptions, type UnstoredTrial } from './runner.ts';

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
 * The once-only fill of imported trials lets the event loop turn between its batches
 * (openStoreYielding): the app's window and a served page go on hearing its progress (onBackfill).
 */
export async function openStoreAndRecover(dbPath: string, opts: OpenStoreOptions = {}): Promise<OpenedStore> {
  const store = await openStoreYielding(dbPath, opts);
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
 * trials' measuring versions takes seconds, in which the open would otherwise seem to hang. Once the
 * first batch has filled a trial, says what it does and for how many; then how far at most every
 * 2 s, and at the end how many it filled and how many stay unknown. Trials whose stored results
 * cannot be read are read again at every open and fill nothing: the "once" is never said of them
 * alone (a previous open found them so), only how many stay unknown. A few trials go unsaid.
 */
export function backfillNotice(say: (line: string) => void, minTrials = BACKFILL_NOTICE_MIN_TRIALS): (p: BackfillProgress) => void {
  let saidAtMs = 0;
  let announced = false;
  return ({ trialsDone, trialsTotal, trialsFilled, trialsUnreadable }) => {
    if (trialsTotal < minTrials) return;
    const nowMs = performance.now();
    if (trialsDone === 0) {
      saidAtMs = nowMs; // the first progress line 2 s from here
      return;
    }
    if (!announced && trialsFilled > 0) {
      announced = true;
      say(`upgrading ${trialsTotal} imported trials' records (once; this database was made by an older kvbench) …`);
      saidAtMs = nowMs;
    }
    if (trialsDone >= trialsTotal) {
      const left = trialsDone - trialsFilled;
      const unknown = `keep an unknown measuring version: ${unreadableWords(left, trialsUnreadable)} (each read-write open tries them again)`;
      if (!announced) say(`${left} imported trials ${unknown}`);
      else if (left === 0) say(`upgraded ${trialsFilled} imported trials' records`);
      else say(`upgraded ${trialsFilled} of ${trialsTotal} imported trials' records; ${left} ${unknown}`);
    } else if (nowMs - saidAtMs >= BACKFILL_PROGRESS_INTERVAL_MS) {
      say(`${announced ? 'upgrading' : 'reading'} imported trials' records: ${trialsDone} of ${trialsTotal} …`);
      saidAtMs = nowMs;
    }
  };
}

/** Why `left` trials stay unknown, of which `unreadable` have stored results that cannot be read. */
function unreadableWords(left: number, unreadable: number): string {
  if (unreadable === left) return 'their stored results cannot be read';
  if (unreadable === 0) return 'their stored results name no version';
  return `${unreadable} of them have stored results that cannot be read, the others name no version`;
}

/** The drive probe before a suite: brief for smoke (1 s per phase, 256 MiB), 5 s per phase otherwise. */
export function probeSettingsFor(profile: string): { durationS: number; sizeBytes: number | null } {
  return profile === 'smoke' ? { durationS: 1, sizeBytes: 256 * 1024 * 1024 } : { durationS: 5, sizeBytes: null };
}

/**
 * Hardware for a suite: the machine, the cache directory, and (optionally) the drive and memory
 * probes, and the GPU copy probe where the suite has a scenario with a GPU tier (`gpuScenarios`,
 * default yes) and a GPU the tier can use.
 */
export async function detectForSuite(cacheDir: string, opts: SuiteDetectOptions): Promise<HardwareProfile> {
  return detectHardware(path.resolve(cacheDir), suiteDetectOptions(opts));
}

type SuiteDetectOptions = { probe: boolean; profile: string; signal?: AbortSignal; gpuScenarios?: boolean } & Pick<DetectOptions, 'source'>;

/** What detectForSuite asks detection for. */
export function suiteDetectOptions(opts: SuiteDetectOptions): DetectOptions {
  return {
    ...(opts.source ? { source: opts.source } : {}),
    probeDirectIo: true,
    probeBandwidth: opts.probe ? { ...probeSettingsFor(opts.profile), ...(opts.signal ? { signal: opts.signal } : {}) } : false,
    probeMemory: opts.probe,
    probeGpu: opts.probe && (opts.gpuScenarios ?? true),
  };
}

/** Whether scenarios of these ids have a GPU tier where a GPU can be used (GPU only …, and production and autoscale, which use it too). */
export function scenariosUseGpu(ids: readonly string[]): boolean {
  return ids.some((id) => isScenarioId(id) && SCENARIOS[id].tiers.includes('gpu'));
}

/** Whether a planned suite runs any trial with a GPU tier. */
export const planUsesGpu = (plan: SuitePlan): boolean => plan.runs.some((r) => Number(r.options.gpuMemGb) > 0);

/**
 * Whether resuming a suite probes the drive: as it was planned (plans stored before they recorded
 * the choice: whether its first trial ran with the drive's limits measured, the probe for a suite
 * without trials), and never with nothing left to run, where no limit would describe anything.
 */
export function resumeProbe(store: Store, suiteId: number, plan: SuitePlan, opts: ResumeOptions = {}): { probe: boolean; planned: boolean; trialsLeft: number } {
  const trialsLeft = pendingTrials(store, suiteId, plan, opts).length;
  const planned = plan.probe ?? probedBefore(store, suiteId);
  return { probe: trialsLeft > 0 && planned, planned, trialsLeft };
}

function probedBefore(store: Store, suiteId: number): boolean {
  const first = store.listTrials({ suiteIds: [suiteId], order: 'asc', limit: 1 })[0];
  const hardware = first ? store.trialHardware(first.id) : null;
  return hardware === null || (hardware.cacheDir?.bandwidth ?? null) !== null;
}
