import os from 'node:os';
import path from 'node:path';
import type { ProgressEvent, RunOutcome } from '../../src-shared/engine-protocol.ts';
import type { RunOptions } from '../../src-shared/domain/run-options.ts';
import type { RunResults } from '../../src-shared/domain/results.ts';
import { parseRunArgsReadingInputs } from '../engine/config/run-input-files.ts';
import { runParameters } from '../engine/report/run-parameters.ts';
import { startEngine, type EngineHandle } from '../host/engine-host.ts';
import { defaultTrialTimeoutMs } from '../suite/runner.ts';
import { removeOrphanRunDirs } from '../engine/tiers/run-dir-ownership.ts';
import { outermostMissingDir, removeCreatedDirs } from '../util/created-dirs.ts';
import { shownAtLogLevel } from './log-level.ts';
import { abandonsStop, signalExitCode, watchStopSignals, type StopSignal } from './stop-signals.ts';
import { ProgressLine } from './progress-line.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { askedFileFolder, fileNameTime, keepInFirstDirectory, printResultsJson } from '../util/keep-file.ts';
import { jsonText, printable } from '../../src-shared/domain/label-text.ts';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_PARTIAL = 3;
export const EXIT_INTERRUPTED = 130;

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
        `cache dir ${options.cacheDir == null ? 'a new temporary directory' : printable(options.cacheDir)}, seed ${options.seed ?? 'drawn at start'}, results ${printable(String(options.output))}\n`,
    );
  }
  const outcome = await runEngineWithProgress(options);
  if (!outcome.ok) {
    process.stderr.write(`kvbench run failed (${outcome.code}): ${outcome.message}\n`);
    return outcome.interrupted ? signalExitCode(outcome.interrupted) : EXIT_FAILED;
  }
  return writeOutputs(options, outcome.outcome, outcome.interrupted);
}

type Interruption = StopSignal | null;
type EngineRun = { ok: true; outcome: RunOutcome; interrupted: Interruption } | { ok: false; code: string; message: string; interrupted: Interruption };

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
  // The engine creates a missing --cache-dir; one killed before removing it cannot, so this host does
  // (of a rank's, its own rank-N only, as the engine: prepareStorageTarget's rankSubdir).
  const { cacheDir } = options;
  const missingFrom = cacheDir === null ? null : await outermostMissingDir(cacheDir);
  const createdFrom = cacheDir !== null && missingFrom !== null && options.rank !== null ? path.resolve(cacheDir) : missingFrom;
  const line = new ProgressLine(process.stderr);
  let interrupted: Interruption = null;
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
  const limit = watchTimeLimit(handle, limits.timeLimitMs ?? defaultTrialTimeoutMs(options), (m) => {
    if (shownAtLogLevel('warn', options.logLevel)) line.log(m);
  });
  const signals = watchStopSignals({
    onStop: (signal) => {
      interrupted = signal;
      line.log(`${signal}: stopping; partial results will be written${abandonsStop(signal) ? ' (send it again to abandon them)' : ''}`);
      handle.cancel(`interrupted by ${signal}`);
    },
    onAbandon: () => handle.kill(),
  });
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
    signals.dispose();
  }
}

/**
 * The summary to stdout, then the results files. A file that cannot be written where asked (its disk
 * filled up or its directory went away during the run) is saved elsewhere rather than lost: the run's
 * measurement exists nowhere else. The exit status is then 1, whatever the run's own status.
 */
async function writeOutputs(options: RunOptions, outcome: RunOutcome, interrupted: Interruption): Promise<number> {
  const results = outcome.results as unknown as RunResults;
  process.stdout.write(outcome.summaryText.endsWith('\n') ? outcome.summaryText : `${outcome.summaryText}\n`);
  const json = `${jsonText(results, 4)}\n`;
  const writeJson = (file: string): Promise<void> => writeFileAtomic(file, json);
  // exceljs is loaded only for an XLSX: importing it costs the CLI ~0.3 CPU-s, a third of its start,
  // which engine-vs-fio counts in kvbench's CPU per GB whether or not an XLSX is written.
  const writeXlsx = async (file: string): Promise<void> => (await import('../engine/report/xlsx-export.ts')).writeResultsXlsx(results, runParameters(options, results), file);
  const stamp = fileNameTime();
  const jsonName = `kvbench-results-${stamp}.json`;
  let failed = false;
  // Set when no file holds a results JSON, the one thing `kvbench import` and `merge` read back.
  let jsonLost = false;
  if (options.output) {
    const kept = await writeOrKeep(options, options.output, 'Results', jsonName, writeJson);
    failed ||= kept !== options.output;
    jsonLost = kept === null;
  }
  if (options.xlsxOutput) {
    const kept = await writeOrKeep(options, options.xlsxOutput, 'XLSX', `kvbench-results-${stamp}.xlsx`, writeXlsx);
    failed ||= kept !== options.xlsxOutput;
    if (kept === null && !options.output) {
      // The XLSX was the only copy asked for: the results JSON keeps the run instead.
      const jsonFile = await keepElsewhere(options, null, jsonName, writeJson);
      if (jsonFile !== null) process.stderr.write(`Results (JSON) saved instead in ${printable(jsonFile)}\n`);
      jsonLost = jsonFile === null;
    }
  }
  if (jsonLost) printResultsJson(json);
  if (outcome.status !== 'complete') process.stderr.write(`run is ${outcome.status.toUpperCase()}: ${outcome.reason ?? 'no reason given'}\n`);
  if (failed) return EXIT_FAILED;
  if (outcome.status !== 'complete') return interrupted ? signalExitCode(interrupted) : EXIT_PARTIAL;
  return EXIT_OK;
}

/**
 * Writes one output file where asked, else keeps it in the first fallback that takes it. Returns
 * where it went: `file`, a fallback path, or null (nowhere).
 */
async function writeOrKeep(options: RunOptions, file: string, what: string, fallbackName: string, write: (file: string) => Promise<void>): Promise<string | null> {
  try {
    await write(file);
    process.stderr.write(`${what} saved to ${printable(file)}\n`);
    return file;
  } catch (err) {
    process.stderr.write(`could not write ${printable(file)}: ${printable((err as Error).message)}\n`);
  }
  const kept = await keepElsewhere(options, file, fallbackName, write);
  if (kept !== null) process.stderr.write(`${what} saved instead in ${kept}\n`);
  return kept;
}

/**
 * Keeps a file the run could not write where asked. The places, in order: the asked file's own
 * directory (under a new name: the asked one may be a directory now, or space may have been freed;
 * not that of a device or FIFO, such as /dev for --output /dev/full), the cache directory if it is still there (not its parent, which may be /mnt or another user's
 * folder), the current directory and the temporary directory: several filesystems, most likely one with room, and the cache directory's had room for
 * the run. Those that do not exist are skipped. Prints every place that refused; returns where it
 * went, or null.
 */
async function keepElsewhere(options: RunOptions, file: string | null, name: string, write: (file: string) => Promise<void>): Promise<string | null> {
  return keepInFirstDirectory([...(file !== null ? askedFileFolder(file) : []), ...(options.cacheDir !== null ? [path.resolve(options.cacheDir)] : [])], name, write);
}
