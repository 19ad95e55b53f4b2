import fsp from 'node:fs/promises';
import { WORKLOAD_FILE_FORMAT } from '../../../../src-shared/domain/workload-file.ts';
import { AZURE_HEADER } from './azure-source.ts';
import { BURSTGPT_HEADER } from './burstgpt-source.ts';
import { splitCsvLine } from './csv.ts';
import { inputError, unreadable } from './input-errors.ts';
import { MAX_LINE_BYTES } from './line-reader.ts';
import { crOnlyLineEndings, encodingProblem, printable } from './text-encoding.ts';

export type DatasetFormat = 'sharegpt' | 'mooncake' | 'azure' | 'burstgpt' | 'workload-file';

/** How each format is recognised, for messages and docs. */
export const DATASET_FORMATS: Readonly<Record<DatasetFormat, string>> = {
  sharegpt: 'ShareGPT JSON: a JSON array of {id, conversations: [{from, value}]}',
  mooncake: 'Mooncake JSON Lines: one {timestamp, input_length, output_length, hash_ids} object per line',
  azure: `Azure LLM inference trace CSV: header ${AZURE_HEADER}`,
  burstgpt: `BurstGPT CSV: header ${BURSTGPT_HEADER}`,
  'workload-file': `kvbench workload file: a JSON object with "format": "${WORKLOAD_FILE_FORMAT}" (kvbench workload generate)`,
};

/**
 * Tells a `--dataset-path` file's format from its content (not its name): a JSON array is ShareGPT; a
 * first line holding a JSON object with `hash_ids` is a Mooncake trace; a JSON object with
 * `"format": "kvbench-workload"` is a workload file; a CSV header names an Azure or a BurstGPT trace.
 * Reads at most the first MiB. Blank lines before the first line are skipped, as the parsers do;
 * compressed, UTF-16 and binary files are named as such.
 */
export async function detectDatasetFormat(file: string): Promise<DatasetFormat> {
  let head: Buffer;
  try {
    const fh = await fsp.open(file, 'r');
    try {
      const buf = Buffer.alloc(MAX_LINE_BYTES + 1);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      head = buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw unreadable(file, err);
  }
  const problem = encodingProblem(head);
  if (problem) throw inputError(file, null, problem);
  let text = head.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const trimmed = text.trimStart();
  if (trimmed === '') throw inputError(file, null, 'the file is empty');
  const supported = `supported formats:\n  ${Object.values(DATASET_FORMATS).join('\n  ')}`;
  // JSON allows any whitespace (a lone CR too) around the array's elements: ShareGPT reads it all.
  if (trimmed.startsWith('[')) return 'sharegpt';
  // The line formats are read as the parsers will: blank lines before the first one are skipped.
  const firstLineNo = text.slice(0, text.length - trimmed.length).split('\n').length;
  const firstStart = text.lastIndexOf('\n', text.length - trimmed.length - 1) + 1;
  const nl = text.indexOf('\n', firstStart);
  const firstLine = (nl >= 0 ? text.slice(firstStart, nl) : text.slice(firstStart)).replace(/\r$/, '');
  const crOnly = firstLine.includes('\r');
  const crOnlyError = () => crOnlyLineEndings(file, firstLineNo);
  const tooLong = nl < 0 && head.length > MAX_LINE_BYTES;
  if (trimmed.startsWith('{')) {
    let first: unknown = undefined;
    try {
      first = JSON.parse(firstLine);
    } catch {
      // not a one-line object: a pretty-printed JSON document
    }
    if (first !== null && typeof first === 'object' && !Array.isArray(first)) {
      const rec = first as Record<string, unknown>;
      if ('hash_ids' in rec) return 'mooncake';
      if (rec.format === WORKLOAD_FILE_FORMAT) return 'workload-file';
      throw inputError(file, firstLineNo, `a JSON object without "hash_ids" (not a Mooncake trace) and without "format": "${WORKLOAD_FILE_FORMAT}"; ${supported}`);
    }
    if (new RegExp(`"format"\\s*:\\s*"${WORKLOAD_FILE_FORMAT}"`).test(text)) return 'workload-file';
    if (crOnly) throw crOnlyError();
    if (tooLong) throw lineTooLong(file, firstLineNo);
    // A one-line record naming hash_ids that does not parse (a NaN, a truncated line): a Mooncake
    // trace whose parser names the line and what is wrong with it.
    if (/"hash_ids"\s*:/.test(firstLine)) return 'mooncake';
    throw inputError(file, null, `a JSON document that is neither a ShareGPT array, a Mooncake trace nor a kvbench workload file; ${supported}`);
  }
  if (crOnly) throw crOnlyError();
  if (tooLong) throw lineTooLong(file, firstLineNo);
  const split = splitCsvLine(firstLine);
  const cols = split.ok ? split.fields.map((f) => f.trim()) : [];
  if (['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'].every((c) => cols.includes(c))) return 'azure';
  if (['Timestamp', 'Request tokens', 'Response tokens'].every((c) => cols.includes(c))) return 'burstgpt';
  throw inputError(file, firstLineNo, `unrecognised format (first line "${printable(firstLine.slice(0, 120))}"); ${supported}`);
}

/** Detection reads 1 MiB; no trace format needs a longer line (the line reader refuses one too). */
function lineTooLong(file: string, lineNo: number): Error {
  return inputError(file, lineNo, `the line is longer than ${MAX_LINE_BYTES / 2 ** 20} MiB: not a trace file kvbench reads`);
}
