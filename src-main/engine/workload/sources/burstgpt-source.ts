import { globSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { KvbenchError } from '../../../../src-shared/domain/errors.ts';
import { MAX_CONTEXT_TOKENS } from '../../../../src-shared/domain/workload-file.ts';
import { columnIndex, parseDecimal, parseTokenCount, splitCsvLine } from './csv.ts';
import { inputError } from './input-errors.ts';
import { printable } from './text-encoding.ts';
import type { ReplayWorkload } from './replay-source.ts';
import type { SourceContext } from './source-context.ts';
import { replayTimedTrace } from './timed-trace-source.ts';
import type { TimedRow, TimedTraceFormat } from './timed-trace.ts';
import type { TextLine } from './line-reader.ts';

export const BURSTGPT_HEADER = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';
/** The columns kvbench uses; the others (Model, Total tokens, Log Type) may be absent. */
const REQUIRED = ['Timestamp', 'Request tokens', 'Response tokens'] as const;

/**
 * A CSV trace parser for one file: the first non-blank line is the header (columns found by name, so
 * their order does not matter), every further line a request. Shared by BurstGPT and Azure.
 */
export function csvTraceParser(
  file: string,
  label: string,
  expectedHeader: string,
  required: readonly string[],
  toRow: (get: (column: string) => string, line: TextLine) => TimedRow,
): (line: TextLine) => TimedRow | null {
  let index: Map<string, number> | null = null;
  let width = 0;
  return (line) => {
    if (line.text.trim() === '') return null;
    const split = splitCsvLine(line.text);
    if (!split.ok) throw inputError(file, line.lineNo, split.error);
    if (!index) {
      const cols = columnIndex(split.fields, required);
      if (!cols.ok) {
        throw inputError(
          file,
          line.lineNo,
          `not a ${label} header: missing column(s) ${cols.missing.map((c) => `"${c}"`).join(', ')}; expected "${expectedHeader}", found "${printable(line.text.slice(0, 200))}"`,
        );
      }
      index = cols.index;
      width = split.fields.length;
      return null;
    }
    if (split.fields.length !== width) {
      throw inputError(file, line.lineNo, `expected ${width} fields as in the header, found ${split.fields.length} (truncated or malformed row?)`);
    }
    const fields = split.fields;
    const cols = index;
    return toRow((c) => fields[cols.get(c)!], line);
  };
}

/**
 * A token-count column: a non-negative integer no longer than any model's context (context and
 * generation alike: a model's output lives in its context window), or an error naming the file, line
 * and column. A larger count is a mistake, and its request would never complete.
 */
export function tokenField(file: string, line: TextLine, column: string, text: string): number {
  const v = parseTokenCount(text);
  if (v === null) throw inputError(file, line.lineNo, `${column} "${printable(text.slice(0, 50))}" is not a non-negative integer`);
  if (v > MAX_CONTEXT_TOKENS) throw inputError(file, line.lineNo, `${column} ${v} is more than ${MAX_CONTEXT_TOKENS.toLocaleString('en-US')} (longer than any model's context)`);
  return v;
}

export const BURSTGPT_FORMAT: TimedTraceFormat = {
  label: 'BurstGPT CSV',
  fileParser: (file) =>
    csvTraceParser(file, 'BurstGPT CSV', BURSTGPT_HEADER, REQUIRED, (get, line) => {
      const ts = get('Timestamp');
      const t = parseDecimal(ts);
      if (t === null) throw inputError(file, line.lineNo, `Timestamp "${printable(ts.slice(0, 50))}" is not a number (seconds)`);
      return {
        t,
        contextTokens: tokenField(file, line, 'Request tokens', get('Request tokens')),
        generationTokens: tokenField(file, line, 'Response tokens', get('Response tokens')),
        hashIds: null,
      };
    }),
};

/**
 * `--burst-trace-path` as the reference reads it: a CSV file, a directory (all its `*.csv`, sorted by
 * name) or a glob pattern (its matching files, sorted).
 */
export function resolveBurstTraceFiles(p: string): string[] {
  let files: string[];
  if (/[*?[]/.test(p)) {
    files = globSync(p).filter((f) => statSync(f, { throwIfNoEntry: false })?.isFile());
  } else {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) throw new KvbenchError('VALIDATION', `--burst-trace-path does not exist: ${printable(p)}`);
    files = st.isDirectory()
      ? readdirSync(p)
          .filter((n) => n.endsWith('.csv'))
          .map((n) => path.join(p, n))
          .filter((f) => statSync(f, { throwIfNoEntry: false })?.isFile())
      : [p];
  }
  files.sort();
  if (files.length === 0) throw new KvbenchError('VALIDATION', `--burst-trace-path: no CSV files matched: ${printable(p)}`);
  return files;
}

/** BurstGPT replay (`--use-burst-trace`): the reference's users and keys, pacing by timestamp ÷ speedup. */
export async function createBurstGptSource(ctx: SourceContext, files: string[]): Promise<ReplayWorkload> {
  // The reference's BurstGPT keys: `{user}_req_{id:04d}`.
  return replayTimedTrace(ctx, files, BURSTGPT_FORMAT, { formatName: 'burstgpt-csv', kind: 'burstgpt', keyDigits: 4 });
}
