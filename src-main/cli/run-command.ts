import os from 'node:os';
import type { ProgressEvent, RunOutcome } from '../../src-shared/engine-protocol.ts';
import type { RunOptions } from '../../src-shared/domain/run-options.ts';
import type { RunResults } from '../../src-shared/domain/results.ts';
import { parseRunArgsReadingInputs } from '../engine/config/run-input-files.ts';
import { writeResultsXlsx } from '../engine/report/xlsx-export.ts';
import { runParameters } from '../engine/report/run-parameters.ts';
import { startEngine } from '../host/engine-host.ts';
import { removeOrphanRunDirs } from '../engine/tiers/run-dir-ownership.ts';
import { shownAtLogLevel } from './log-level.ts';
import { abandonsStop, signalExitCode, STOP_SIGNALS, type StopSignal } from './stop-signals.ts';
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
    return outcome.interrupted ? signalExitCode(outcome.interrupted) : EXIT_FAILED;
  }
  return writeOutputs(options, outcome.outcome, outcome.interrupted);
}

type Interruption = StopSignal | null;
type EngineRun = { ok: true; outcome: RunOutcome; interrupted: Interruption } | { ok: false; code: string; message: string; interrupted: Interruption };

async function runEngineWithProgress(options: RunOptions): Promise<EngineRun> {
  const line = new ProgressLine(process.stderr);
  let interrupted: Interruption = null;
  const handle = startEngine(options, {
    uvThreadpoolSize: options.ioDepth + UV_THREADS_FOR_METADATA,
    onProgress: (p: ProgressEvent) => line.update(p),
    onLog: (level, message) => {
      if (shownAtLogLevel(level, options.logLevel)) line.log(`${level}: ${message}`);
    },
  });
  const onSignal = (signal: StopSignal): void => {
    if (!interrupted) {
      interrupted = signal;
      line.log(`${signal}: stopping; partial results will be written${abandonsStop(signal) ? ' (send it again to abandon them)' : ''}`);
      handle.cancel(`interrupted by ${signal}`);
    } else if (abandonsStop(signal)) {
      handle.kill();
    }
  };
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  try {
    const outcome = await handle.result;
    line.done();
    return { ok: true, outcome, interrupted };
  } catch (err) {
    line.done();
    const e = err as { code?: string; message: string };
    // A killed engine cannot clean up after itself: remove the run directory it marked as its own.
    if (handle.pid !== undefined) await removeOrphanRunDirs(options.cacheDir, handle.pid).catch(() => undefined);
    return { ok: false, code: e.code ?? 'INTERNAL', message: e.message, interrupted };
  } finally {
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
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
    return interrupted ? signalExitCode(interrupted) : EXIT_PARTIAL;
  }
  return EXIT_OK;
}
