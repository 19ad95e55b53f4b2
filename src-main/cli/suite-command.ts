// `kvbench suite`: detect → plan (with the estimate, refused when the cache directory cannot hold
// it) → run every trial in a fresh engine process with progress bars → store → short report.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { jsonText, printable, shownInput } from '../../src-shared/domain/label-text.ts';
import { PROFILE_IDS, isProfileId, type ProfileId, type SuiteEvent, type SuitePlan } from '../../src-shared/domain/scenarios.ts';
import type { ProgressEvent } from '../../src-shared/engine-protocol.ts';
import { storageText, tokensPerSecText } from './progress-line.ts';
import { resolveDatabasePath } from '../store/data-dir.ts';
import { explainWriteFailure } from '../store/disk-full.ts';
import type { Store } from '../store/store.ts';
import type { OpenStoreOptions } from '../store/open-store.ts';
import { chosenScenarioIds, ENGINE_HAS_GPU_TIER, planOptionErrors, planSuite, type PlanOptions } from '../suite/planner.ts';
import { hardwareAdvice } from '../hardware/advice.ts';
import { cacheDirRefusal } from '../hardware/cache-dir-access.ts';
import { resumeSuite, runSuite, type SuiteRunResult } from '../suite/runner.ts';
import { backfillNotice, detectForSuite, openStoreAndRecover, planUsesGpu, probeSettingsFor, resumeProbe, scenariosUseGpu } from '../suite/services.ts';
import { CLI_ACROSS_VERSIONS_CONSENT, resumeAcrossVersionsRefusal, resumeVersions } from '../suite/resume-versions.ts';
import { resumeVersionsText } from '../../src-shared/domain/resume-versions.ts';
import { buildScenarioReport, buildTierComparison } from '../export/report-model.ts';
import { formatPlan, formatTierComparison, fmtValue } from '../export/render-text.ts';
import { splitList } from '../export/selection.ts';
import { emptyValueErrors, intFlag, labelFlagErrors, numberFlag, parseCommandArgs } from './command-args.ts';
import { backfillOnStderr } from './command-store.ts';
import { wrapText } from './help-text.ts';
import { SYSTEM_DIRECTORIES_TEXT } from '../engine/config/system-directories.ts';
import { EXIT_INTERRUPTED } from './run-command.ts';
import { abandonsStop, signalExitCode, watchStopSignals } from './stop-signals.ts';
import { removeCreatedDirs } from '../util/created-dirs.ts';
import { statOrNull } from '../util/stat-or-null.ts';
import { shellQuote } from '../../src-shared/domain/shell-quote.ts';

export const SUITE_USAGE = `Usage: kvbench suite --cache-dir DIR [--profile smoke|quick|standard|mlperf] [options]
       kvbench suite --resume SUITE_ID [--rerun-deleted] [--across-versions] [--plan] [--db PATH]

Runs the guided suite: the nine scenarios (GPU only, CPU only, storage only, GPU+CPU, CPU+storage,
GPU+CPU+storage, storage saturation, realistic production, autoscaling discovery) with parameters
derived from this machine, each trial in a fresh engine process, every trial stored in the database.
GPU scenarios are skipped, with the reason, when there is no usable GPU.

  --cache-dir DIR          the storage tier's directory (created if missing, and removed again
                           when the suite is refused or stopped before its first trial; only
                           kvbench's own run directories are ever written or removed there,
                           and a trial's results file when the database cannot store it).
${wrapText(`Refused, also behind a symbolic link: ${SYSTEM_DIRECTORIES_TEXT}.`, 72, ' '.repeat(27))}  --profile P              smoke (seconds per trial), quick (30 s), standard (180 s), mlperf (the
                           three MLPerf options, 300 s × 3); default standard
  --trials N               trials per scenario (default 3)
  --model M                model of the nine scenarios (default llama3.1-8b; tiny-1b for smoke)
  --scenarios a,b          only these scenario ids (see docs/suite.md)
  --extras                 add the MLPerf options and capacity discovery
  --duration S             seconds per trial instead of the profile's
  --warm-up S              seconds each trial runs before its measured window opens (default 0,
                           as the reference; not the autoscaling scenarios)
  --max-requests N         end each trial once N requests have completed in its measured window,
                           or at its duration if that comes first (default 0: the duration alone)
  --storage-capacity-gb G  storage tier capacity in GiB (0 = 95 % of free space)
  --label TEXT             what this suite measured (e.g. "fw 2.1"): history and export filter by it
                           (--label), report --compare A B --labels compares two; suites with one
                           label pool
  --no-probe               skip the drive probe (kvbench probe, a few seconds) and the memory-copy
                           probe before the trials; without them there is no efficiency column.
                           A resumed suite probes only if it was planned with the probe and has
                           trials left to run
  --plan                   print the plan and estimate, run nothing (and create nothing: neither
                           the database nor the cache directory); with --resume, the trials the
                           resume would run
  --events                 print every suite event as one JSON line on stdout (for tools); the
                           results text then goes to stderr with the progress
  --resume ID              run the trials suite ID still lacks: every one without a complete
                           attempt (after a cancel, a crash, a full disk: partial, failed and
                           aborted trials run again; their attempts stay stored). A complete
                           trial you deleted is not run again, unless --rerun-deleted. A suite
                           started by another kvbench says so first: which version started it,
                           measured its trials and runs the rest, and which metric definitions
                           differ between them (docs/metrics.md)
  --rerun-deleted          with --resume: also run again, into the same suite, each trial slot
                           whose complete trial you deleted (a disturbed or flagged trial), so
                           its scenario has its full trial count. A slot stays counted as
                           deleted until its new trial completes: a re-run stopped or failed
                           keeps its attempt stored and runs again only with --rerun-deleted
  --across-versions        with --resume: run the trials left although their metric definitions
                           differ from those of the suite's complete trials (refused without it:
                           a scenario would hold trials of two definitions, which its report then
                           aggregates apart)
  --db PATH                the database (default: $KVBENCH_DB, else the user data directory)

Output: the plan, each trial's outcome, the suite's end and its tier comparison on stdout (so
kvbench suite … > suite.log keeps them); progress, warnings and errors on stderr.

Ctrl-C stops the current trial (its partial results are kept, marked aborted) and ends the suite;
resume it with --resume (a suite that stops with trials left ends with the line to run: "resume
with: kvbench suite --resume ID"). Before the first trial (hardware detection, the drive probe) it
stops at once and records nothing. Exit codes: 0 every trial complete; 3 some trial failed, partial
or aborted; 130 cancelled by Ctrl-C (SIGINT), 143 by SIGTERM, 129 by SIGHUP (the terminal or SSH
session hung up: stopped as on Ctrl-C); 1 invalid input or refused plan.
`;

const BAR = 20;

/**
 * What a suite says as it goes. Progress (detection, each trial's start and progress bar, warnings,
 * notes, signals) goes to `out`, stderr; the results (the plan that runs, each trial's outcome, the
 * suite's end and its tier comparison) to `results`: stdout, as `kvbench run` puts its summary there,
 * so `kvbench suite … > suite.log` keeps them, or stderr too when stdout carries --events.
 */
class SuiteProgress {
  readonly #out: NodeJS.WriteStream;
  readonly #results: NodeJS.WriteStream;
  readonly #tty: boolean;
  #lastPlainMs = 0;
  #shown = false;

  constructor(out: NodeJS.WriteStream, results: NodeJS.WriteStream) {
    this.#out = out;
    this.#results = results;
    this.#tty = Boolean(out.isTTY);
  }

  #prefix(e: { ordinal: number; total: number; scenarioId: string; trialIndex: number; trialsPerScenario: number }): string {
    const w = String(e.total).length;
    return `[${String(e.ordinal).padStart(w)}/${e.total}] ${e.scenarioId} #${e.trialIndex + 1}/${e.trialsPerScenario}`;
  }

  #clear(): void {
    if (this.#tty && this.#shown) this.#out.write('\r\x1b[2K');
    this.#shown = false;
  }

  line(text: string): void {
    this.#clear();
    this.#out.write(`${text}\n`);
  }

  /** Results text (one line, or a block ending in a newline), after the progress bar is cleared. */
  result(text: string): void {
    this.#clear();
    this.#results.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  progress(e: Extract<SuiteEvent, { type: 'suite.trialProgressed' }>): void {
    const p: ProgressEvent = e.progress;
    const f = Math.min(1, Math.max(0, p.durationNs ? p.elapsedNs / p.durationNs : 0));
    const filled = Math.round(f * BAR);
    const text =
      `${this.#prefix(e)} ${p.phase.padEnd(9)} [${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${(f * 100).toFixed(0).padStart(3)}% ` +
      `req ${p.requestsCompleted} users ${p.activeUsers} ${tokensPerSecText(p)} ${storageText(p, (v) => fmtValue(v, 'bytes/s'))}`;
    if (this.#tty) {
      this.#out.write(`\r\x1b[2K${text.slice(0, (this.#out.columns ?? 200) - 1)}`);
      this.#shown = true;
    } else if (performance.now() - this.#lastPlainMs > 10_000) {
      this.#lastPlainMs = performance.now();
      this.#out.write(`${text}\n`);
    }
  }

  event(e: SuiteEvent): void {
    switch (e.type) {
      case 'suite.started':
        this.line(`Suite ${e.suiteId}${e.resumed ? ' (resumed)' : ''}: ${e.total} trial(s) to run, about ${Math.ceil(e.estimatedSeconds)} s.`);
        return;
      case 'suite.trialStarted':
        if (!this.#tty) this.line(`${this.#prefix(e)} started (engine pid ${e.enginePid ?? '?'})`);
        return;
      case 'suite.trialProgressed':
        this.progress(e);
        return;
      case 'suite.trialLogged':
        if (e.level === 'warn' || e.level === 'error') this.line(`${this.#prefix(e)} ${e.level}: ${e.message}`);
        return;
      case 'suite.trialFinished': {
        const detail =
          e.status === 'complete' || e.status === 'partial'
            ? `${fmtValue(e.wallClockThroughputTokPerS, 'tok/s')} tok/s, storage read ${fmtValue(e.storageReadBytesPerS, 'bytes/s')}`
            : '';
        const reason = e.reason && e.status !== 'complete' ? ` — ${e.reason.split('\n')[0]}` : '';
        this.result(`${this.#prefix(e)} ${e.status.toUpperCase()} in ${(e.wallMs / 1000).toFixed(1)} s${detail ? `: ${detail}` : ''}${reason}`);
        return;
      }
      case 'suite.finished': {
        const c = e.counts;
        // A resume's counts are its own; the outcome is the whole suite's (a finished suite without one complete trial: failed).
        const head = e.outcome === 'failed' ? 'failed (none of its trials completed: nothing to report)' : e.outcome;
        this.result(`Suite ${e.suiteId} ${head}: ${c.complete} complete, ${c.partial} partial, ${c.failed} failed, ${c.aborted} aborted, in ${(e.wallMs / 1000).toFixed(0)} s.`);
        return;
      }
    }
  }
}

/** A signal during detection or the probe: the suite never started, and the exit code names the signal. */
function stoppedBeforeStart(signal: NodeJS.Signals, what: string): number {
  process.stderr.write(`Stopped by ${signal} before the first trial: ${what}.\n`);
  return signalExitCode(signal);
}

/**
 * How to run the trials suite `suiteId` still lacks, as a line to print: with the --db the suite ran
 * with (none for the default database). Printed whenever a suite stops with trial slots left.
 */
function resumeHint(suiteId: number, db: string | undefined, rerunDeleted = false): string {
  return `resume with: kvbench suite --resume ${suiteId}${rerunDeleted ? ' --rerun-deleted' : ''}${db ? ` --db ${shellQuote(db)}` : ''}`;
}

/** A planned slot as the progress lines name it: "storage-only #2/3". */
function slotName(slot: { run: { scenarioId: string; trialsPlanned: number }; trialIndex: number }): string {
  return `${slot.run.scenarioId} #${slot.trialIndex + 1}/${slot.run.trialsPlanned}`;
}

/**
 * What `--resume ID --plan` prints: the trials the resume would run, in order, each with why (no
 * complete attempt, and which attempts it has; or deleted, run again), the estimate and the probe,
 * and the deleted slots it would leave alone without --rerun-deleted.
 */
function formatResumePlan(store: Store, suiteId: number, plan: SuitePlan, rerunDeleted: boolean, probe: { probe: boolean; why: string }): string {
  const left = store.trialSlotsLeft(suiteId, { deleted: true });
  const slots = rerunDeleted ? left : left.filter((slot) => !slot.deleted);
  const attempts = new Map(store.trialStatusesByRun(suiteId).map((t) => [`${t.runId}:${t.trialIndex}`, t.statuses]));
  const suite = store.getSuite(suiteId);
  const out = [`Suite ${suiteId}${suite?.label ? ` "${suite.label}"` : ''} (profile ${plan.profile}, cache directory ${plan.cacheDir}), resumed with its stored plan:`];
  const w = String(slots.length).length;
  slots.forEach((slot, k) => {
    const had = attempts.get(`${slot.run.id}:${slot.trialIndex}`) ?? [];
    const tried = had.length === 0 ? 'never ran' : `no complete attempt (${had.join(', ')})`;
    const why = slot.deleted ? `its complete trial was deleted: runs again${had.length > 0 ? `; since then ${had.join(', ')}` : ''}` : tried;
    out.push(`  [${String(k + 1).padStart(w)}/${slots.length}] ${slotName(slot)}: ${why}`);
  });
  const seconds = slots.reduce((sum, slot) => sum + (plan.runs.find((r) => r.position === slot.run.position)?.estimatedSecondsPerTrial ?? 0), 0);
  out.push(slots.length === 0 ? 'No trial to run.' : `${slots.length} trial(s), about ${Math.ceil(seconds)} s; the drive probe: ${probe.probe ? 'runs' : 'not run'} (${probe.why}).`);
  if (!rerunDeleted) {
    const deleted = left.filter((slot) => slot.deleted);
    if (deleted.length > 0) out.push(`Not run: ${deleted.length} deleted trial(s) (${deleted.map(slotName).join(', ')}); --rerun-deleted runs them again.`);
  }
  return `${out.join('\n')}\n`;
}

/** Whether suite `suiteId` is still in the database: a new suite that failed before storing a trial is removed. */
function suiteStored(store: Store | null, suiteId: number): boolean {
  try {
    return store?.getSuite(suiteId) != null;
  } catch {
    return false;
  }
}

function exitCode(r: SuiteRunResult, signal: NodeJS.Signals | null): number {
  if (r.status === 'cancelled') return signal === null ? EXIT_INTERRUPTED : signalExitCode(signal);
  return r.counts.failed + r.counts.partial + r.counts.aborted > 0 ? 3 : 0;
}

/** Planning flags: a resumed suite keeps its stored plan, so these have no meaning with --resume. */
const RESUME_EXCLUDES = ['cache-dir', 'profile', 'trials', 'model', 'scenarios', 'extras', 'duration', 'warm-up', 'max-requests', 'storage-capacity-gb', 'label'] as const;

export async function suiteCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('suite', SUITE_USAGE, {
    args: argv,
    options: {
      'cache-dir': { type: 'string' },
      profile: { type: 'string', default: 'standard' },
      trials: { type: 'string' },
      model: { type: 'string' },
      scenarios: { type: 'string', multiple: true },
      extras: { type: 'boolean', default: false },
      duration: { type: 'string' },
      'warm-up': { type: 'string' },
      'max-requests': { type: 'string' },
      'storage-capacity-gb': { type: 'string' },
      label: { type: 'string' },
      'no-probe': { type: 'boolean', default: false },
      plan: { type: 'boolean', default: false },
      events: { type: 'boolean', default: false },
      resume: { type: 'string' },
      'rerun-deleted': { type: 'boolean', default: false },
      'across-versions': { type: 'boolean', default: false },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  // Given but empty is refused: `--scenarios ,` planned every scenario, `--db ''` used the default database.
  const errors = [...emptyValueErrors(a, ['db', 'label', 'model', 'scenarios'], ['scenarios']), ...labelFlagErrors(a, ['label'])];
  const resumeId = intFlag('--resume', a.resume, errors, { min: 1 });
  // Only the conversion here: the planner's own checks (planOptionErrors) judge the ranges.
  const trials = numberFlag('--trials', a.trials, errors);
  const durationS = numberFlag('--duration', a.duration, errors);
  const warmUpS = numberFlag('--warm-up', a['warm-up'], errors);
  const maxRequests = numberFlag('--max-requests', a['max-requests'], errors);
  const storageCapacityGb = numberFlag('--storage-capacity-gb', a['storage-capacity-gb'], errors);
  const profileOk = isProfileId(a.profile);
  if (!profileOk) errors.push(`--profile must be one of ${PROFILE_IDS.join(', ')}, got ${shownInput(String(a.profile))}`);
  const planOptions: PlanOptions = {
    profile: a.profile as ProfileId,
    // Given empty it stays empty (the planner refuses it), not the current directory path.resolve('') would make it.
    cacheDir: a['cache-dir']?.trim() ? path.resolve(a['cache-dir']) : '',
    ...(trials !== undefined ? { trials } : {}),
    ...(a.model !== undefined ? { model: a.model } : {}),
    ...(splitList(a.scenarios) ? { scenarios: splitList(a.scenarios) } : {}),
    extras: a.extras,
    ...(durationS !== undefined ? { durationS } : {}),
    ...(warmUpS !== undefined ? { warmUpS } : {}),
    ...(maxRequests !== undefined ? { maxRequests } : {}),
    ...(storageCapacityGb !== undefined ? { storageCapacityGb } : {}),
  };
  const rerunDeleted = a['rerun-deleted'];
  // Given but refused, --resume still means a resume: the planning flags' checks do not apply.
  if (a.resume === undefined) {
    if (a['across-versions']) errors.push('--across-versions is for --resume: a new suite runs every trial on this kvbench');
    if (rerunDeleted) errors.push('--rerun-deleted runs a stored suite\'s deleted trials again: give it with --resume ID (kvbench history --suites lists them)');
    else if (a['cache-dir'] === undefined) errors.push('--cache-dir is required (the directory the storage tier writes to)');
    // Before the database is opened, the cache directory created or the hardware detected.
    else if (profileOk) errors.push(...planOptionErrors(planOptions));
  } else {
    // A resumed suite runs as it was planned; a planning flag beside --resume would be silently ignored.
    const given = RESUME_EXCLUDES.filter((f) => argv.some((x) => x === `--${f}` || x.startsWith(`--${f}=`)));
    if (given.length > 0) errors.push(`--resume runs the suite as it was planned: ${given.map((f) => `--${f}`).join(', ')} cannot be given with it`);
  }
  if (errors.length > 0) {
    process.stderr.write(`kvbench suite: invalid arguments:\n  ${errors.join('\n  ')}\n`);
    return 1;
  }

  const dbPath = resolveDatabasePath(a.db);
  const ui = new SuiteProgress(process.stderr, a.events ? process.stderr : process.stdout);
  let store: Store | null = null;
  const openTheStore = async (opts: OpenStoreOptions = {}): Promise<Store | null> => {
    try {
      const opened = await openStoreAndRecover(dbPath, { ...opts, onBackfill: backfillNotice((line) => ui.line(`note: ${line}`)) });
      for (const n of opened.store.openNotes) ui.line(`note: ${n}`);
      for (const r of opened.recovered) ui.line(`note: trial ${r.trialId} (${r.scenarioId}, suite ${r.suiteId}) was interrupted when its runner died; marked aborted`);
      for (const u of opened.unstored) ui.line(`note: trial ${u.trialId} (${u.scenarioId}, suite ${u.suiteId}) finished, but its runner could not store it; marked failed: its results are in ${u.file}`);
      for (const d of opened.removedRunDirs) ui.line(`note: removed ${d}, left by an interrupted engine`);
      return opened.store;
    } catch (err) {
      process.stderr.write(`kvbench suite: ${(err as Error).message}\n`);
      return null;
    }
  };
  // --plan runs nothing, so it creates nothing; a new suite creates its database only once the plan
  // fits. An existing one is opened first (checked, with --plan): a --db the suite would refuse is
  // said before the probe, and run directories of interrupted engines are gone before the free
  // space is measured.
  if (resumeId !== undefined && a.plan && !databaseExists(dbPath)) {
    // --plan creates nothing: there is no suite to resume in a database that does not exist.
    process.stderr.write(`kvbench suite: no database at ${printable(dbPath)}, so no suite ${resumeId} to resume\n`);
    return 1;
  }
  if (resumeId !== undefined && a.plan) {
    // What a resume would run is read as the file is: read-only, so that a plan neither upgrades an older
    // kvbench's database (which would lock that kvbench out of it) nor marks another runner's trials aborted.
    if ((store = await openTheStore({ readonly: true, keepSchema: true })) === null) return 1;
  } else if (resumeId !== undefined || (!a.plan && databaseExists(dbPath))) {
    if ((store = await openTheStore()) === null) return 1;
  } else {
    const refused = await databaseRefusedForPlan(dbPath);
    if (refused !== null) {
      process.stderr.write(`kvbench suite: ${refused}\n`);
      return 1;
    }
  }

  const controller = new AbortController();
  // The exit code says which signal ended the suite, as `kvbench run`'s does: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.
  let stoppedBy: NodeJS.Signals | null = null;
  // Until the suite starts (detection, the drive probe, planning) a signal stops it all, and nothing of
  // this suite is recorded; from then on it stops the current trial, which is kept.
  let started = false;
  let createdCacheDir: { dir: string; from: string | null } | null = null;
  const signals = watchStopSignals({
    onStop: (signal) => {
      stoppedBy = signal;
      const again = abandonsStop(signal) ? '; send it again to quit at once' : '';
      ui.line(
        started
          ? `${signal}: stopping the current trial (partial results are kept)${again}`
          : `${signal}: stopping before the suite starts (the hardware detection and any probe are cut short)${again}`,
      );
      // The trial's reason names the cause: Ctrl-C is the user's; SIGTERM or SIGHUP is whatever sent it
      // (a shutdown, a scheduler, a dropped SSH session).
      controller.abort(signal === 'SIGINT' ? 'cancelled by the user (SIGINT, Ctrl-C)' : `stopped: kvbench received ${signal}`);
    },
    onAbandon: (signal) => {
      store?.close();
      process.exit(signalExitCode(signal));
    },
  });
  // The suite this command runs, once it exists: a failure after that says how to resume it.
  let suiteId: number | null = null;
  const onEvent = (e: SuiteEvent): void => {
    if (e.type === 'suite.started') suiteId = e.suiteId;
    if (a.events) process.stdout.write(`${jsonText(e)}\n`);
    ui.event(e);
  };
  try {
    let result: SuiteRunResult;
    let plan: SuitePlan;
    if (resumeId !== undefined) {
      if (store === null) throw new Error('no database');
      const stored = store.getSuitePlan(resumeId);
      if (!stored) throw new Error(`no suite ${resumeId} with a plan in ${printable(dbPath)}`);
      plan = stored;
      // The suite resumes as it was planned, without a probe when it was planned without one; and with
      // nothing left to run there is nothing for a probe's limits to describe.
      const { trialsLeft: left, planned: plannedProbe, probe: probeAsPlanned } = resumeProbe(store, resumeId, plan, { rerunDeleted });
      // Said before anything runs: a suite an older kvbench started is finished by this one. With no
      // trial to run, no trial crosses versions: nothing to refuse, nothing to say.
      const versions = left === 0 ? null : resumeVersions(store, resumeId);
      const refusal = a['across-versions'] ? null : resumeAcrossVersionsRefusal(versions, CLI_ACROSS_VERSIONS_CONSENT);
      if (refusal !== null && !a.plan) {
        process.stderr.write(`kvbench suite: ${refusal}\n`);
        return 1;
      }
      const crossing = versions === null ? null : resumeVersionsText(versions);
      // A plan runs nothing: it says what the resume would refuse, and plans the trials all the same.
      if (refusal !== null) ui.line(`note: without --across-versions the resume is refused: ${refusal}`);
      else if (crossing !== null) ui.line(`note: ${crossing}`);
      const probe = probeAsPlanned && !a['no-probe'];
      const why = left === 0 ? `suite ${resumeId} has no trial left to run` : a['no-probe'] ? '--no-probe' : `suite ${resumeId} was planned ${plannedProbe ? 'with' : 'without'} it`;
      if (a.plan) {
        process.stdout.write(formatResumePlan(store, resumeId, plan, rerunDeleted, { probe, why }));
        return 0;
      }
      const deleted = store.trialSlotsLeft(resumeId, { deleted: true }).filter((slot) => slot.deleted);
      if (deleted.length > 0) {
        ui.line(
          rerunDeleted
            ? `Running again ${deleted.length} deleted trial(s) into suite ${resumeId}: ${deleted.map(slotName).join(', ')}.`
            : `note: suite ${resumeId} has ${deleted.length} deleted trial(s), not run: ${deleted.map(slotName).join(', ')} (--rerun-deleted runs them again).`,
        );
      }
      ui.line(`Detecting hardware${probe ? ' and probing the drive' : ', without the drive probe'} (${why}) …`);
      createdCacheDir = { dir: plan.cacheDir, from: (await fsp.mkdir(plan.cacheDir, { recursive: true })) ?? null };
      const hardware = await detectForSuite(plan.cacheDir, { probe, profile: plan.profile, signal: controller.signal, gpuScenarios: planUsesGpu(plan) });
      if (stoppedBy !== null) return stoppedBeforeStart(stoppedBy, `suite ${resumeId} is as it was`);
      started = true;
      result = await resumeSuite(resumeId, { store, hardware, onEvent, signal: controller.signal, rerunDeleted, acrossVersions: a['across-versions'], consent: CLI_ACROSS_VERSIONS_CONSENT });
    } else {
      const { cacheDir, profile } = planOptions;
      const probe = !a['no-probe'] && !a.plan;
      // A cache directory that does not exist yet is detected through its nearest existing ancestor;
      // a run creates it for the probes and the trials, and removes what it created at the end.
      if (!a.plan) {
        try {
          createdCacheDir = { dir: cacheDir, from: (await fsp.mkdir(cacheDir, { recursive: true })) ?? null };
        } catch (err) {
          process.stderr.write(`kvbench suite: cannot create --cache-dir ${cacheDir}: ${cacheDirRefusal(cacheDir)?.message ?? (err as Error).message}\n`);
          return 1;
        }
      }
      ui.line(`Detecting hardware${probe ? ' and probing the drive' : ''} …`);
      const hardware = await detectForSuite(cacheDir, { probe, profile, signal: controller.signal, gpuScenarios: scenariosUseGpu(chosenScenarioIds(planOptions)) });
      if (stoppedBy !== null) return stoppedBeforeStart(stoppedBy, 'no suite was planned or recorded');
      plan = planSuite(hardware, { ...planOptions, probe, ...(a.plan && !a['no-probe'] ? { probeRun: probeSettingsFor(profile) } : {}) });
      // The plan is a result: with --plan the command's whole output, before a run the record of what ran.
      const planText = formatPlan(plan, hardwareAdvice(hardware, ENGINE_HAS_GPU_TIER));
      if (a.plan) process.stdout.write(planText);
      else ui.result(planText);
      if (!plan.estimate.fits) {
        process.stderr.write(`kvbench suite: refused:\n  ${plan.estimate.problems.join('\n  ')}\n`);
        return 1;
      }
      if (a.plan) return 0;
      if (store === null && (store = await openTheStore()) === null) return 1;
      ui.line(`Database: ${printable(dbPath)}`);
      started = true;
      result = await runSuite(plan, { store, hardware, onEvent, signal: controller.signal, label: a.label ?? null });
    }
    // A short report of this suite: the tier comparison (kvbench report --suite N has the rest).
    const ran = store;
    const trialsOfSuite = ran.listTrials({ suiteIds: [result.suiteId], order: 'asc' });
    const report = buildScenarioReport(trialsOfSuite);
    const lastWithHw = trialsOfSuite.filter((t) => t.status === 'complete').map((t) => ran.trialHardware(t.id)).find((h) => h !== null) ?? null;
    ui.result(`\n${formatTierComparison(buildTierComparison(report, lastWithHw))}`);
    ui.result(`\nFull tables: kvbench report --suite ${result.suiteId}${a.db ? ` --db ${shellQuote(a.db)}` : ''}`);
    // Cancelled, or finished with trials that did not complete: --resume runs exactly those (and a
    // re-run of deleted trials that did not complete them, --rerun-deleted again).
    const slotsLeft = ran.trialSlotsLeft(result.suiteId, { deleted: true });
    const rerunLeft = rerunDeleted && slotsLeft.some((slot) => slot.deleted);
    if (rerunLeft || slotsLeft.some((slot) => !slot.deleted)) ui.result(resumeHint(result.suiteId, a.db, rerunLeft));
    return exitCode(result, stoppedBy);
  } catch (err) {
    const resumable = suiteId !== null && suiteStored(store, suiteId);
    const advice = resumable
      ? 'Free some space there, then resume the suite.'
      : 'Free some space there; a suite that stored trials before this can then be resumed (kvbench history --suites, kvbench suite --resume ID).';
    const e = explainWriteFailure(store?.path ?? dbPath, err, advice) as { code?: string; message?: string };
    process.stderr.write(`kvbench suite failed${e.code ? ` (${e.code})` : ''}: ${e.message ?? String(err)}\n`);
    if (resumable) process.stderr.write(`${resumeHint(suiteId!, a.db, rerunDeleted)}\n`);
    return 1;
  } finally {
    signals.dispose();
    store?.close();
    // However the suite ended (refused, stopped or failed before the first trial too), the cache
    // directory levels it created go where nothing is left in them; a resume creates them again.
    if (createdCacheDir !== null) await removeCreatedDirs(createdCacheDir.dir, createdCacheDir.from);
  }
}

/** A database file with something in it (a missing or empty one is created when first needed). */
function databaseExists(dbPath: string): boolean {
  return (statOrNull(dbPath)?.size ?? 0) > 0;
}

/**
 * Why `--plan` cannot plan into the database at `dbPath`, or null. A missing (or empty) file is not
 * created; an existing one is opened as history opens it, so a --db the suite would refuse (another
 * application's, damaged, on read-only media, written by a newer kvbench) is said with the plan
 * rather than when the suite starts. A plan writes nothing: an older database is not upgraded (the
 * note says the suite will).
 */
async function databaseRefusedForPlan(dbPath: string): Promise<string | null> {
  if (!databaseExists(dbPath)) return null;
  try {
    const { store } = await openStoreAndRecover(dbPath, { keepSchema: true, onBackfill: backfillOnStderr('suite') });
    for (const n of store.openNotes) process.stderr.write(`kvbench suite: note: ${n}\n`);
    store.close();
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
