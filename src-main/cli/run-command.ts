import os from 'node:os';
import type { ProgressEvent, RunOutcome } from '../../src-shared/engine-protocol.ts';
import type { RunOptions } from '../../src-shared/domain/run-options.ts';
import type { RunResults } from '../../src-shared/domain/results.ts';
import { parseRunArgsReadingInputs } from '../engine/config/run-input-files.ts';
import { writeResultsXlsx } from '../engine/report/xlsx-export.ts';
import { runParameters } from '../engine/report/run-parameters.ts';
import { startEngine, type EngineHandle } from '../host/engine-host.ts';
import { defaultTrialTimeoutMs } from '../suite/runner.ts';
import { removeOrphanRunDirs } from '../engine/tiers/run-dir-ownership.ts';
import { outermostMissingDir, removeCreatedDirs } from '../engine/tiers/storage-target.ts';
import { shownAtLogLevel } from './log-level.ts';
import { ProgressLine } from './progress-line.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_PARTIAL = 3;
export const EXIT_INTERRUPTED = 130;
export const EXIT_TERMINATED = 143;

/** Libuv threads beyond the storage I/Os in flight, for opens, closes, unlinks and fsyncs. */
const UV_THREADS_FOR_METADATA = 4;

/** `kvbench run`: parse and validate, run the engine in its own process, write the results. */
export async function runCommand(argv: string[]): Promise<number> {
  // Every problem at once, the input files' contents and the output directories included, before
  // the engine starts.
  const parsed = await parseRunArgsReadingInputs(argv, { runsHere: { totalMemoryBytes: os.totalmem() }, launcherEnv: process.env });
  if (parsed.ok === 'help') {
    process.stdout.write(parsed.text);
    return EXIT_OK;
  }
  if (!parsed.ok) {
    process.stderr.write(`kvbench run: invalid arguments:\n  ${parsed.errors.join('\n  ')}\n`);
    return EXIT_FAILED;
  }
  const options = parsed.options;
  if (shownAtLogLevel('warn', options.logLevel)) for (const w of parsed.warnings) process.stderr.write(`warning: ${w}\n`);
  if (parsed.rank && shownAtLogLevel('info', options.logLevel)) {
    const r = parsed.rank;
    process.stderr.write(
      `info: rank ${r.rank}${r.worldSize !== null ? ` of ${r.worldSize}` : ''} (from ${r.source}): ` +
        `cache dir ${options.cacheDir ?? 'a new temporary directory'}, seed ${options.seed ?? 'drawn at start'}, results ${options.output}\n`,
    );
  }
  const outcome = await runEngineWithProgress(options);
  if (!outcome.ok) {
    process.stderr.write(`kvbench run failed (${outcome.code}): ${outcome.message}\n`);
    return outcome.interrupted ? interruptedExit(outcome.interrupted) : EXIT_FAILED;
  }
  return writeOutputs(options, outcome.outcome, outcome.interrupted);
}

type Interruption = 'SIGINT' | 'SIGTERM' | null;
type EngineRun = { ok: true; outcome: RunOutcome; interrupted: Interruption } | { ok: false; code: string; message: string; interrupted: Interruption };

function interruptedExit(signal: Interruption): number {
  return signal === 'SIGTERM' ? EXIT_TERMINATED : EXIT_INTERRUPTED;
}

/** Tests shorten these; a real run uses a suite trial's limit and the host's cancel grace. */
export interface RunLimits {
  timeLimitMs?: number;
  cancelGraceMs?: number;
}

/**
 * The run's wall-clock limit, a suite trial's (src-main/suite/runner.ts): an engine stuck on a hung
 * device is cancelled, and killed after the cancel grace, instead of holding `kvbench run` forever.
 * It counts from the workload's start: preparation (preconditioning, RAG ingestion, --start-at)
 * has no planned length.
 */
function watchTimeLimit(handle: EngineHandle, limitMs: number, log: (message: string) => void) {
  const what = `its ${Math.round(limitMs / 1000)} s wall-clock limit (2 × (--warm-up + --duration) + 120 s, from the workload's start)`;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  return {
    onProgress(p: ProgressEvent): void {
      if (timer !== undefined || p.phase === 'starting' || p.phase === 'preconditioning') return;
      timer = setTimeout(() => {
        timedOut = true;
        log(`warn: the run exceeded ${what}: stopping it`);
        handle.cancel(`the run exceeded ${what}`);
      }, limitMs);
    },
    stop: (): void => clearTimeout(timer),
    /** A run stopped by the limit is partial whatever the engine says, and says why. */
    outcome(outcome: RunOutcome): RunOutcome {
      if (!timedOut) return outcome;
      const status = outcome.status === 'complete' ? 'partial' : outcome.status;
      const reason = outcome.reason?.includes(what) ? outcome.reason : `stopped after ${what}${outcome.reason ? ` (${outcome.reason})` : ''}`;
      const kv = (outcome.results as { kvbench?: Record<string, unknown> }).kvbench;
      if (kv) Object.assign(kv, { status, status_reason: reason });
      return { ...outcome, status, reason };
    },
  };
}

export async function runEngineWithProgress(options: RunOptions, limits: RunLimits = {}): Promise<EngineRun> {
  // The engine creates a missing --cache-dir; one killed before removing it cannot, so this host does.
  const createdFrom = options.cacheDir === null ? null : await outermostMissingDir(options.cacheDir);
  const line = new ProgressLine(process.stderr);
  let interrupted: 'SIGINT' | 'SIGTERM' | null = null;
  const handle = startEngine(options, {
    uvThreadpoolSize: options.ioDepth + UV_THREADS_FOR_METADATA,
    ...(limits.cancelGraceMs !== undefined ? { cancelGraceMs: limits.cancelGraceMs } : {}),
    onProgress: (p: ProgressEvent) => {
      limit.onProgress(p);
      line.update(p);
    },
    onLog: (level, message) => {
      if (shownAtLogLevel(level, options.logLevel)) line.log(`${level}: ${message}`);
    },
  });
  const onSignal = (signal: 'SIGINT' | 'SIGTERM'): void => {
    if (!interrupted) {
      interrupted = signal;
      line.log(`${signal}: stopping; partial results will be written (send it again to abandon them)`);
      handle.cancel(`interrupted by ${signal}`);
    } else {
      handle.kill();
    }
  };
  const limit = watchTimeLimit(handle, limits.timeLimitMs ?? defaultTrialTimeoutMs(options), (m) => {
    if (shownAtLogLevel('warn', options.logLevel)) line.log(m);
  });
  const onSigint = (): void => onSignal('SIGINT');
  const onSigterm = (): void => onSignal('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  try {
    const outcome = limit.outcome(await handle.result);
    line.done();
    return { ok: true, outcome, interrupted };
  } catch (err) {
    line.done();
    const e = err as { code?: string; message: string };
    // A killed engine cannot clean up after itself: remove the run directory it marked as its own.
    if (handle.pid !== undefined) await removeOrphanRunDirs(options.cacheDir, handle.pid).catch(() => undefined);
    if (options.cacheDir !== null && createdFrom !== null) await removeCreatedDirs(options.cacheDir, createdFrom);
    return { ok: false, code: e.code ?? 'INTERNAL', message: e.message, interrupted };
  } finally {
    limit.stop();
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  }
}

async function writeOutputs(options: RunOptions, outcome: RunOutcome, interrupted: Interruption): Promise<number> {
  const results = outcome.results as unknown as RunResults;
  process.stdout.write(outcome.summaryText.endsWith('\n') ? outcome.summaryText : `${outcome.summaryText}\n`);
  let failed = false;
  if (options.output) {
    try {
      await writeFileAtomic(options.output, `${JSON.stringify(results, null, 4)}\n`);
      process.stderr.write(`Results saved to ${options.output}\n`);
    } catch (err) {
      failed = true;
      process.stderr.write(`could not write ${options.output}: ${(err as Error).message}\n`);
    }
  }
  if (options.xlsxOutput) {
    try {
      await writeResultsXlsx(results, runParameters(options, results), options.xlsxOutput);
      process.stderr.write(`XLSX saved to ${options.xlsxOutput}\n`);
    } catch (err) {
      failed = true;
      process.stderr.write(`could not write ${options.xlsxOutput}: ${(err as Error).message}\n`);
    }
  }
  if (failed) return EXIT_FAILED;
  if (outcome.status !== 'complete') {
    process.stderr.write(`run is ${outcome.status.toUpperCase()}: ${outcome.reason ?? 'no reason given'}\n`);
    return interrupted ? interruptedExit(interrupted) : EXIT_PARTIAL;
  }
  return EXIT_OK;
}
