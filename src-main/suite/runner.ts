// Runs a suite plan: every trial in a fresh engine process (through the engine host), each recorded
// in the store before it starts (`running`, with this process as its owner) and after it ends. A
// crashed or killed engine makes that trial `failed` with its reason and the suite goes on; a cancel
// stops the current trial gracefully (its partial results are kept, marked `aborted`) and ends the
// suite; a suite can be resumed, running exactly the trials that have no complete result.
//
// Events are plain data (src-shared/domain/scenarios.ts SuiteEvent): the CLI draws progress bars
// from them, the app forwards them over IPC.
import { createHash } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HardwareProfile } from '../../src-shared/domain/hardware.ts';
import type { TrialStatus } from '../../src-shared/domain/results.ts';
import { SuitePlanSchema, type SuiteEvent, type SuitePlan, type SuiteTrialRef } from '../../src-shared/domain/scenarios.ts';
import { suiteOutcome, type RunRecord } from '../../src-shared/domain/store-types.ts';
import { KvbenchError } from '../../src-shared/domain/errors.ts';
import { startEngine as realStartEngine, type EngineHandle, type StartEngineOptions } from '../host/engine-host.ts';
import { removeOrphanRunDirs } from '../engine/tiers/run-dir-ownership.ts';
import { currentProcess, processLiveness } from '../util/process-identity.ts';
import { detectFormat, extractHistograms, extractMetrics } from '../store/results-ingest.ts';
import type { RecoveredTrial, Store } from '../store/store.ts';
import { StoreError } from '../store/store-error.ts';
import { fileNameTime, keepInFirstWritable, printResultsJson, RESULTS_JSON_BEGIN, RESULTS_JSON_END, type KeepPlace } from '../util/keep-file.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { UV_THREADS_FOR_METADATA } from './planner.ts';
import { CLI_ACROSS_VERSIONS_CONSENT, resumeRefusalFor } from './resume-versions.ts';
import { jsonText } from '../../src-shared/domain/label-text.ts';

export type StartEngineFn = (options: unknown, opts: StartEngineOptions) => EngineHandle;

export interface RunSuiteDeps {
  store: Store;
  /** The snapshot stored with every trial (detected just before the suite starts). */
  hardware: HardwareProfile;
  onEvent?: (event: SuiteEvent) => void;
  /**
   * Abort = stop the current trial gracefully (partial results kept) and run no more. A string given
   * to `abort(reason)` is the cause the trial's reason names ('stopped: kvbench received SIGTERM');
   * without one it is 'cancelled by the user'.
   */
  signal?: AbortSignal;
  /** Injected in tests; the real engine host otherwise. */
  startEngine?: StartEngineFn;
  /** How long a cancelled engine may take to hand back partial results (default: the host's 30 s). */
  cancelGraceMs?: number;
  /**
   * Wall-clock limit of one trial; default {@link defaultTrialTimeoutMs}. Past it the trial times out:
   * it is stopped and kept as partial, or, when its engine does not stop within the grace, killed
   * and recorded aborted (no results).
   */
  trialTimeoutMs?: (options: Record<string, unknown>) => number;
}

/**
 * A trial that runs far past its planned duration (an engine stuck on a hung device, say) is
 * stopped so the suite can go on: its warm-up and duration, plus as long again, plus two minutes for
 * start-up, draining and clean-up.
 */
export function defaultTrialTimeoutMs(options: Record<string, unknown>): number {
  const durationS = typeof options.duration === 'number' ? options.duration : 60;
  const warmUpS = typeof options.warmUp === 'number' ? options.warmUp : 0;
  return (2 * (warmUpS + durationS) + 120) * 1000;
}

export interface TrialOutcomeSummary {
  trialId: number;
  scenarioId: string;
  trialIndex: number;
  status: TrialStatus;
  reason: string | null;
}

export interface SuiteRunResult {
  suiteId: number;
  status: 'finished' | 'cancelled';
  /** The whole suite as listings show it: 'failed' when none of its trials (of any run) completed. */
  outcome: 'finished' | 'failed' | 'cancelled';
  counts: Record<TrialStatus, number>;
  trials: TrialOutcomeSummary[];
}

interface PendingTrial {
  run: RunRecord;
  trialIndex: number;
  uvThreadpoolSize: number;
}

/** Longest crash report kept with a trial: the first line and the end of the engine's output. */
const MAX_REASON_CHARS = 4000;

function clip(s: string): string {
  return s.length <= MAX_REASON_CHARS ? s : `${s.slice(0, 600)}\n…\n${s.slice(-(MAX_REASON_CHARS - 600))}`;
}

/** Starts a new suite from a plan. */
export async function runSuite(plan: SuitePlan, deps: RunSuiteDeps & { label?: string | null }): Promise<SuiteRunResult> {
  if (!plan.estimate.fits) throw new KvbenchError('INSUFFICIENT_SPACE', plan.estimate.problems.join('\n'));
  const { store, hardware } = deps;
  store.upsertDetectedSystem(hardware);
  const suiteId = store.createSuite({
    systemId: hardware.system.id,
    driveId: hardware.cacheDir?.driveId ?? null,
    profile: plan.profile,
    label: deps.label ?? null,
    source: 'suite',
    plan,
    cacheDir: plan.cacheDir,
    runner: currentProcess(),
  });
  const runs = store.listRuns(suiteId);
  const pending: PendingTrial[] = [];
  for (const run of runs) {
    const planned = plan.runs.find((r) => r.position === run.position)!;
    for (let i = 0; i < run.trialsPlanned; i++) pending.push({ run, trialIndex: i, uvThreadpoolSize: planned.uvThreadpoolSize });
  }
  try {
    return await execute(suiteId, pending, plan, false, deps);
  } catch (err) {
    // The store failed before the first trial was recorded (a full disk): nothing to resume, so no
    // empty `interrupted` suite is left in the history. Best effort: if even this write fails, the
    // next open marks the suite interrupted as it would.
    try {
      const counts = store.getSuite(suiteId)?.trialCounts;
      if (counts && Object.values(counts).every((n) => n === 0)) store.deleteSuite(suiteId);
    } catch {
      // the error that stopped the suite is the one to report
    }
    throw err;
  }
}

/**
 * The trials of a suite still to run: every planned slot without a complete attempt (partial,
 * failed and aborted attempts are run again; they stay stored). Reports count a slot by the same
 * rule (src-shared/domain/trial-slots.ts), so a resumed suite ends with every slot aggregated.
 */
export function pendingTrials(store: Store, suiteId: number, plan: SuitePlan, opts: ResumeOptions = {}): PendingTrial[] {
  return store.trialSlotsLeft(suiteId, { deleted: opts.rerunDeleted === true }).map(({ run, trialIndex }) => ({
    run,
    trialIndex,
    uvThreadpoolSize: plan.runs.find((r) => r.position === run.position)?.uvThreadpoolSize ?? Number(run.options.ioDepth ?? 16) + UV_THREADS_FOR_METADATA,
  }));
}

export interface ResumeOptions {
  /**
   * Also run again the slots whose complete trial the user deleted (a disturbed trial, say), into the
   * same suite. A slot stays recorded as deleted until its new trial completes (Store.finishTrial).
   */
  rerunDeleted?: boolean;
  /**
   * Run the trials left although the suite's complete trials were measured under other metric
   * definitions than this kvbench's (an older kvbench started it: resumeVersions); refused without it:
   * its scenarios would hold trials of two definitions, which the report then aggregates apart, and
   * that is the user's choice to make.
   */
  acrossVersions?: boolean;
  /** How the refusal says to consent (the CLI's flag, the app's button). */
  consent?: string;
}

/** Resumes a suite: runs the trials it still lacks (with `rerunDeleted`, the deleted ones too), with its stored plan. */
export async function resumeSuite(suiteId: number, deps: RunSuiteDeps & ResumeOptions): Promise<SuiteRunResult> {
  const { store } = deps;
  const suite = store.getSuite(suiteId);
  if (!suite) throw new KvbenchError('NOT_FOUND', `no suite ${suiteId}`);
  const raw = store.getSuitePlan(suiteId);
  const parsed = SuitePlanSchema.safeParse(raw);
  if (!parsed.success) throw new KvbenchError('VALIDATION', `suite ${suiteId} has no usable plan (imported results cannot be resumed)`);
  if (suite.systemId !== deps.hardware.system.id) {
    throw new KvbenchError('VALIDATION', `suite ${suiteId} belongs to system ${suite.systemId}; this is ${deps.hardware.system.id}. Resume it on the machine that started it.`);
  }
  const pending = pendingTrials(store, suiteId, parsed.data, deps);
  const refusal = resumeRefusalFor(store, suiteId, { acrossVersions: deps.acrossVersions === true, trialsToRun: pending.length, consent: deps.consent ?? CLI_ACROSS_VERSIONS_CONSENT });
  if (refusal !== null) throw new KvbenchError('VALIDATION', refusal);
  store.upsertDetectedSystem(deps.hardware);
  store.claimSuite(suiteId, currentProcess());
  return execute(suiteId, pending, parsed.data, true, deps);
}

async function execute(suiteId: number, pending: PendingTrial[], plan: SuitePlan, resumed: boolean, deps: RunSuiteDeps): Promise<SuiteRunResult> {
  const { store, hardware } = deps;
  const emit = deps.onEvent ?? (() => {});
  const start = deps.startEngine ?? realStartEngine;
  const snapshotId = store.saveHardwareSnapshot(hardware);
  const runner = currentProcess();
  const counts: Record<TrialStatus, number> = { complete: 0, partial: 0, failed: 0, aborted: 0 };
  const outcomes: TrialOutcomeSummary[] = [];
  const t0 = performance.now();
  const estimatedSeconds = pending.reduce((s, p) => s + (plan.runs.find((r) => r.position === p.run.position)?.estimatedSecondsPerTrial ?? 0), 0);
  emit({ type: 'suite.started', suiteId, resumed, total: pending.length, estimatedSeconds });

  let cancelled = false;
  for (let k = 0; k < pending.length; k++) {
    if (deps.signal?.aborted) {
      cancelled = true;
      break;
    }
    const p = pending[k];
    const ref: SuiteTrialRef = {
      suiteId,
      trialId: 0,
      scenarioId: p.run.scenarioId,
      label: p.run.label,
      trialIndex: p.trialIndex,
      trialsPerScenario: p.run.trialsPlanned,
      ordinal: k + 1,
      total: pending.length,
    };
    const options = p.run.options;
    ref.trialId = store.startTrial({
      runId: p.run.id,
      suiteId,
      systemId: hardware.system.id,
      driveId: hardware.cacheDir?.driveId ?? null,
      hardwareSnapshotId: snapshotId,
      scenarioId: p.run.scenarioId,
      trialIndex: p.trialIndex,
      options,
      configKey: p.run.configKey,
      runner,
      cacheDir: typeof options.cacheDir === 'string' ? options.cacheDir : null,
    });
    let outcome: Awaited<ReturnType<typeof runOneTrial>>;
    try {
      outcome = await runOneTrial(ref, options, p.uvThreadpoolSize, { ...deps, startEngine: start, emit });
    } catch (err) {
      // The store failed under the suite: leave it resumable if the store still takes this much.
      try {
        store.setSuiteStatus(suiteId, 'interrupted');
      } catch {
        // Nothing more can be written; the next open's recovery will mark it.
      }
      throw err;
    }
    counts[outcome.status] += 1;
    outcomes.push({ trialId: ref.trialId, scenarioId: ref.scenarioId, trialIndex: ref.trialIndex, status: outcome.status, reason: outcome.reason });
    if (outcome.cancelled) {
      cancelled = true;
      break;
    }
  }
  const status = cancelled ? 'cancelled' : 'finished';
  store.setSuiteStatus(suiteId, status);
  // The whole suite's, not this run's: a resume that completes nothing leaves a suite with earlier complete trials finished.
  const endedAs = suiteOutcome(status, store.getSuite(suiteId)?.trialCounts.complete ?? counts.complete);
  emit({ type: 'suite.finished', suiteId, status, outcome: endedAs, counts, wallMs: performance.now() - t0 });
  return { suiteId, status, outcome: endedAs, counts, trials: outcomes };
}

async function runOneTrial(
  ref: SuiteTrialRef,
  options: Record<string, unknown>,
  uvThreadpoolSize: number,
  deps: RunSuiteDeps & { startEngine: StartEngineFn; emit: (e: SuiteEvent) => void },
): Promise<{ status: TrialStatus; reason: string | null; cancelled: boolean }> {
  const { store, emit } = deps;
  const t0 = performance.now();
  let handle: EngineHandle | undefined;
  let pidRecorded = false;
  try {
    handle = deps.startEngine(options, {
      uvThreadpoolSize,
      ...(deps.cancelGraceMs !== undefined ? { cancelGraceMs: deps.cancelGraceMs } : {}),
      onProgress: (progress) => {
        // A utility process's pid is known only after it spawned: record it with its first sign of life.
        if (!pidRecorded && handle?.pid !== undefined) {
          pidRecorded = true;
          store.setTrialEnginePid(ref.trialId, handle.pid);
        }
        emit({ type: 'suite.trialProgressed', progress, ...ref });
      },
      onLog: (level, message) => emit({ type: 'suite.trialLogged', level, message, ...ref }),
    });
  } catch (err) {
    const reason = `the engine could not be started: ${(err as Error).message}`;
    store.finishTrial(ref.trialId, { status: 'failed', reason, wallMs: performance.now() - t0 });
    emit({ type: 'suite.trialFinished', status: 'failed', reason, wallMs: performance.now() - t0, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...ref });
    return { status: 'failed', reason, cancelled: false };
  }
  pidRecorded = handle.pid !== undefined;
  store.setTrialEnginePid(ref.trialId, handle.pid ?? null);
  emit({ type: 'suite.trialStarted', enginePid: handle.pid ?? null, startedAtMs: Date.now(), ...ref });

  // Who stopped the suite (the user, a signal, a shutdown), as the trial's reason will say it.
  let stoppedBecause: string | null = null;
  const onAbort = (): void => {
    stoppedBecause = stopCauseOf(deps.signal!);
    handle.cancel(stoppedBecause);
  };
  if (deps.signal?.aborted) onAbort();
  else deps.signal?.addEventListener('abort', onAbort, { once: true });
  const limitMs = (deps.trialTimeoutMs ?? defaultTrialTimeoutMs)(options);
  const limitText = `its ${Math.round(limitMs / 1000)} s wall-clock limit`;
  let timedOut = false;
  const watchdog = setTimeout(() => {
    timedOut = true;
    emit({ type: 'suite.trialLogged', level: 'warn', message: `trial timed out (past ${limitText}): stopping it`, ...ref });
    handle.cancel(`the trial timed out after ${limitText}`);
  }, limitMs);

  let status: TrialStatus;
  let reason: string | null;
  let metricsOut: { tok: number | null; read: number | null } = { tok: null, read: null };
  // The engine's outcome first, the store's write apart from it: a database that cannot be written
  // (disk full, a lock held too long) is not an engine failure, and must not cost the results.
  let outcome: Awaited<EngineHandle['result']> | null = null;
  let engineError: unknown = null;
  try {
    outcome = await handle.result;
  } catch (err) {
    engineError = err;
  } finally {
    clearTimeout(watchdog);
    deps.signal?.removeEventListener('abort', onAbort);
  }
  if (outcome !== null) {
    const results = outcome.results;
    const metrics = extractMetrics(results);
    status = stoppedBecause !== null ? 'aborted' : timedOut && outcome.status === 'complete' ? 'partial' : outcome.status;
    const stopped = stoppedBecause ?? (timedOut ? `timed out: stopped at ${limitText}` : null);
    const engineReason = engineReasonBesidesCancel(outcome);
    reason =
      stopped === null
        ? outcome.reason
        : `${stopped}; ${outcome.status === 'aborted' ? 'nothing was measured yet' : 'partial results kept'}${engineReason ? ` (${engineReason})` : ''}`;
    try {
      store.finishTrial(ref.trialId, {
        status,
        reason,
        wallMs: performance.now() - t0,
        results,
        resultsFormat: detectFormat(results),
        summaryText: outcome.summaryText,
        metrics,
        histograms: extractHistograms(results),
      });
    } catch (storeErr) {
      throw await unstoredTrialError(store, ref, status, results, storeErr, typeof options.cacheDir === 'string' ? options.cacheDir : null);
    }
    metricsOut = { tok: metrics.wall_clock_throughput_tok_per_s ?? null, read: metrics.storage_read_bytes_per_s ?? null };
  } else {
    const err = engineError;
    const e = err as { code?: string; message?: string };
    const code = e.code ?? 'INTERNAL';
    if (code === 'CANCELLED') {
      status = 'aborted';
      // A hung engine (a device that never answers) does not stop when asked: the host kills it, and
      // no results come back to keep.
      // The host's message repeats the cancel's reason ("cancelled before the engine started: <reason>",
      // "… of cancel (<reason>); killed"), which this reason already leads with: said once.
      const cancelReason = stoppedBecause ?? (timedOut ? `the trial timed out after ${limitText}` : null);
      const message = cancelReason === null ? (e.message ?? '') : withoutCancelReason(e.message ?? '', cancelReason);
      reason = stoppedBecause !== null ? `${stoppedBecause}: ${message}` : timedOut ? `timed out after ${limitText}, no results kept: ${message}` : `engine stopped: ${message}`;
    } else {
      status = 'failed';
      reason = clip(`${code}: ${e.message ?? String(err)}`);
    }
    // A killed engine cannot remove its run directory; the host knows it by the owner marker.
    if (handle.pid !== undefined) await removeOrphanRunDirs(typeof options.cacheDir === 'string' ? options.cacheDir : null, handle.pid).catch(() => undefined);
    store.finishTrial(ref.trialId, { status, reason, wallMs: performance.now() - t0 });
  }
  emit({
    type: 'suite.trialFinished',
    status,
    reason,
    wallMs: performance.now() - t0,
    wallClockThroughputTokPerS: metricsOut.tok,
    storageReadBytesPerS: metricsOut.read,
    ...ref,
  });
  return { status, reason, cancelled: stoppedBecause !== null };
}

/**
 * What stopped a suite, in its trials' reasons: the abort's reason where the front end gave one
 * (`controller.abort('stopped: kvbench received SIGTERM')`), else the user (a plain `abort()`: the
 * app's Cancel, Ctrl-C).
 */
export function stopCauseOf(signal: AbortSignal): string {
  return typeof signal.reason === 'string' && signal.reason.trim() !== '' ? signal.reason : 'cancelled by the user';
}

/** The host's CANCELLED message without the cancel reason it quotes (as `: reason` or ` (reason)`). */
function withoutCancelReason(message: string, cancelReason: string): string {
  const quoted = message.replace(` (${cancelReason})`, '');
  const suffix = `: ${cancelReason}`;
  return quoted.endsWith(suffix) ? quoted.slice(0, -suffix.length) : quoted;
}

/**
 * The engine's reason for its outcome, or null where it says only that the run was cancelled
 * (its window closed by the cancel): the runner, which cancelled it, says why instead.
 */
function engineReasonBesidesCancel(outcome: { reason: string | null; results: unknown }): string | null {
  const closedBy = (outcome.results as { kvbench?: { measured_window?: { closed_by?: unknown } } } | null)?.kvbench?.measured_window?.closed_by;
  return closedBy === 'cancel' ? null : outcome.reason;
}

/**
 * A trial the engine finished whose results the store could not take. The results go to a file that
 * `kvbench import` can load later, in the first of {@link unstoredPlaces} that takes it; where none
 * does, to stderr between marker lines: they exist nowhere else. The trial is marked failed with
 * that place where the store still allows it (a lock held too long; a full disk usually refuses
 * this too, and the next open finds the file: {@link explainUnstored}), and the error that ends the
 * suite says all of it.
 */
async function unstoredTrialError(store: Store, ref: SuiteTrialRef, status: TrialStatus, results: unknown, storeErr: unknown, cacheDir: string | null): Promise<StoreError> {
  const why = (storeErr as Error).message ?? String(storeErr);
  const json = `${jsonText(results, 2)}\n`;
  const stem = `${unstoredFilePrefix(store.path, ref)}${ref.trialIndex + 1}-${fileNameTime()}-pid${process.pid}`;
  const kept = await keepInFirstWritable(unstoredPlaces(store.path, cacheDir), `${stem}.json`, (file) => writeFileAtomic(file, json));
  let where: string;
  if (kept.path !== null) {
    where = `its results are saved in ${kept.path} (${importHint(kept.path, ref.scenarioId)})`;
  } else {
    printResultsJson(json);
    where =
      `no file could take its results (${kept.failures.join('; ')}): the results JSON is printed on stderr, between the lines ` +
      `"${RESULTS_JSON_BEGIN}" and "${RESULTS_JSON_END}" (save it to a file, then ${importHint('FILE', ref.scenarioId)})`;
  }
  try {
    store.finishTrial(ref.trialId, { status: 'failed', reason: clip(`the engine finished (${status}) but the database could not store the results (${why}); ${where}`), wallMs: 0 });
  } catch {
    // The store refuses every write: the message below is all that is left.
  }
  return new StoreError('DB_WRITE_FAILED', `trial ${ref.ordinal}/${ref.total} (${ref.label} #${ref.trialIndex + 1}) finished ${status}, but the database ${store.path} could not store it: ${why}; ${where}. The suite stops here; resume it with --resume ${ref.suiteId} once the database can be written.`);
}

const importHint = (file: string, scenarioId: string): string => `load them with: kvbench import ${file} --system LABEL --scenario ${scenarioId}`;

/**
 * Where a trial's rescue file is tried, in order: `unstored-results/` beside the database (created,
 * and removed again when it cannot take the file), the suite's cache directory (the plan checked its
 * free space, and it is usually another drive; not its parent, which may be /mnt), the temporary
 * directory.
 * Several filesystems: the database's disk may be the full one, and the temporary directory often
 * shares it.
 */
function unstoredPlaces(dbPath: string, cacheDir: string | null): KeepPlace[] {
  return [
    { dir: path.join(path.dirname(path.resolve(dbPath)), 'unstored-results'), create: true },
    ...(cacheDir !== null ? [path.resolve(cacheDir)] : []),
    os.tmpdir(),
  ];
}

/**
 * The start of a rescue file's name; the whole name adds the trial's number, the time and the
 * runner's pid. Suite and trial ids restart at 1 in every database, and the temporary directory is
 * shared: the database's path (hashed), the time and the process make the name its own.
 */
function unstoredFilePrefix(dbPath: string, t: { suiteId: number; trialId: number; scenarioId: string }): string {
  const db = createHash('sha256').update(path.resolve(dbPath)).digest('hex').slice(0, 8);
  return `kvbench-unstored-db${db}-suite${t.suiteId}-trial${t.trialId}-${t.scenarioId}-`;
}

/** A trial whose runner could not store it, found at a later open, with its rescue file. */
export interface UnstoredTrial {
  trialId: number;
  suiteId: number;
  scenarioId: string;
  file: string;
}

/**
 * Among the trials an open's recovery just marked interrupted (their runner is gone), those whose
 * runner did not die mid-trial but could not store the finished trial (a full disk under the
 * database refuses even the short note saying so): it left a rescue file, named for this database,
 * the trial and its own pid, in one of the places it tries. Their reason is set to say that, and
 * where the results are, instead of a crash's; they are `failed`, as the runner would have marked
 * them. Returns those found (a trial whose results went to stderr only is not among them).
 */
export async function explainUnstored(store: Store, recovered: readonly RecoveredTrial[]): Promise<UnstoredTrial[]> {
  const found: UnstoredTrial[] = [];
  for (const r of recovered) {
    const file = await findUnstoredFile(store.path, r);
    if (file === null) continue;
    try {
      // Unknown (the recovery's NULL) unless the trial had one: never a made-up 0 s.
      const wallMs = store.getTrial(r.trialId)?.wallMs ?? null;
      const reason = `the engine finished but the database could not store the results (found at the next start; the runner did not crash); its results are saved in ${file} (${importHint(file, r.scenarioId)})`;
      store.finishTrial(r.trialId, { status: 'failed', reason, wallMs });
      found.push({ trialId: r.trialId, suiteId: r.suiteId, scenarioId: r.scenarioId, file });
    } catch {
      // Still not writable: the recovery's own reason stays.
    }
  }
  return found;
}

/** The rescue file of `r` in the places its runner tried (this process's temporary directory for its), or null. */
async function findUnstoredFile(dbPath: string, r: RecoveredTrial): Promise<string | null> {
  const prefix = unstoredFilePrefix(dbPath, r);
  const pid = r.runnerPid === null ? '\\d+' : String(r.runnerPid);
  const rest = new RegExp(`^\\d+-\\d{8}T\\d{6}Z-pid${pid}(-\\d+)?\\.json$`);
  for (const place of unstoredPlaces(dbPath, r.cacheDir)) {
    const dir = typeof place === 'string' ? place : place.dir;
    const names = await fsp.readdir(dir).catch(() => [] as string[]);
    const name = names.sort().find((n) => n.startsWith(prefix) && rest.test(n.slice(prefix.length)));
    if (name !== undefined) return path.join(dir, name);
  }
  return null;
}

/**
 * After an interrupted runner (found by the store on open): removes the run directories its
 * engines left, by their owner markers. Never touches anything else in the cache directory.
 */
export async function cleanUpRecovered(recovered: readonly { enginePid: number | null; cacheDir: string | null }[]): Promise<string[]> {
  const removed: string[] = [];
  for (const r of recovered) {
    if (r.enginePid === null) continue;
    // An orphaned engine exits by itself within seconds (and cleans up); never pull files from under a live one.
    if (processLiveness({ pid: r.enginePid, host: null, startTicks: null }) === 'alive') continue;
    removed.push(...(await removeOrphanRunDirs(r.cacheDir, r.enginePid).catch(() => [] as string[])));
  }
  return removed;
}
