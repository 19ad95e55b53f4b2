/**
 * `kvbench run`'s input files read before the run starts, with the engine's own parsers: a
 * `--dataset-path` or `--burst-trace-path` the engine could not replay, a `--validation-trace` it could
 * not compare with and a `--probe-result` it could not use are refused with every other argument
 * problem, each naming its flag, before the engine process starts, instead of one at a time after it.
 * The engine reads them again when it runs (a ShareGPT file only up to --max-conversations, a trace or
 * workload file in one streaming pass, so the second read costs seconds at most).
 */
import { DEFAULT_RUN_OPTIONS } from '../../../src-shared/domain/run-options.ts';
import { loadProbeLimits } from '../report/probe-limits.ts';
import { AZURE_FORMAT } from '../workload/sources/azure-source.ts';
import { BURSTGPT_FORMAT, resolveBurstTraceFiles } from '../workload/sources/burstgpt-source.ts';
import { detectDatasetFormat, type DatasetFormat } from '../workload/sources/detect-format.ts';
import { MOONCAKE_FORMAT } from '../workload/sources/mooncake-source.ts';
import { loadShareGpt } from '../workload/sources/sharegpt-source.ts';
import { scanTimedTrace } from '../workload/sources/timed-trace.ts';
import { estimateCounter } from '../workload/sources/token-counter.ts';
import { readWorkloadFile } from '../workload/sources/workload-file.ts';
import { loadValidationTrace } from '../workload/trace/validation-trace.ts';
import { parseRunArgsInto, type ParseRunArgsEnv, type ParseRunArgsResult } from './parse-run-args.ts';
import { statOrNull } from '../../util/stat-or-null.ts';

/** {@link parseRunArgsInto}, then the input files' contents: every problem in one result. Never throws. */
export async function parseRunArgsReadingInputs(argv: readonly string[], env: ParseRunArgsEnv = {}): Promise<ParseRunArgsResult> {
  const merged: Record<string, unknown> = {};
  const result = parseRunArgsInto(argv, env, merged);
  if (result.ok === 'help') return result;
  const fileErrors = await inputFileErrors({ ...DEFAULT_RUN_OPTIONS, ...merged });
  if (fileErrors.length === 0) return result;
  return { ok: false, errors: [...new Set([...(result.ok ? [] : result.errors), ...fileErrors])] };
}

async function inputFileErrors(o: Record<string, unknown>): Promise<string[]> {
  const errors: string[] = [];
  if (typeof o.probeResult === 'string') {
    try {
      loadProbeLimits(o.probeResult);
    } catch (err) {
      errors.push(messageOf(err));
    }
  }
  // One that is missing or not a file is said by the parse already.
  if (typeof o.datasetPath === 'string' && statOrNull(o.datasetPath)?.isFile()) {
    const maxConversations = typeof o.maxConversations === 'number' ? o.maxConversations : DEFAULT_RUN_OPTIONS.maxConversations;
    try {
      await readDataset(o.datasetPath, maxConversations);
    } catch (err) {
      errors.push(`--dataset-path ${messageOf(err)}`);
    }
  }
  // --dataset-path wins over --use-burst-trace (the engine replays only the dataset then). A path that
  // matches nothing is said by the parse already.
  if (o.useBurstTrace === true && typeof o.burstTracePath === 'string' && typeof o.datasetPath !== 'string') {
    try {
      await scanTimedTrace(resolveBurstTraceFiles(o.burstTracePath), BURSTGPT_FORMAT);
    } catch (err) {
      const message = messageOf(err);
      errors.push(message.startsWith('--burst-trace-path') ? message : `--burst-trace-path ${message}`);
    }
  }
  if (typeof o.validationTrace === 'string' && statOrNull(o.validationTrace)?.isFile()) {
    try {
      await loadValidationTrace(o.validationTrace);
    } catch (err) {
      errors.push(`--validation-trace ${messageOf(err)}`);
    }
  }
  return errors;
}

/**
 * Reads `file` as the engine's replay would (create-source.ts picks the same parser by the same
 * detection), keeping nothing: throws the engine's VALIDATION error naming the file and line.
 */
async function readDataset(file: string, maxConversations: number): Promise<void> {
  const format: DatasetFormat = await detectDatasetFormat(file);
  switch (format) {
    case 'sharegpt':
      // Token counts never make a file invalid: the estimate spares loading a tokenizer twice.
      await loadShareGpt(file, { maxConversations, counter: estimateCounter() });
      return;
    case 'mooncake':
      await scanTimedTrace([file], MOONCAKE_FORMAT);
      return;
    case 'azure':
      await scanTimedTrace([file], AZURE_FORMAT);
      return;
    case 'burstgpt':
      await scanTimedTrace([file], BURSTGPT_FORMAT);
      return;
    case 'workload-file':
      await readWorkloadFile(file);
      return;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
