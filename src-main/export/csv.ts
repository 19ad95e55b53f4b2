// CSV for every export (trials, endpoint runs): RFC 4180 quoting, CRLF line ends, and two things
// spreadsheets need. A UTF-8 byte order mark, because Windows Excel reads a CSV without one in the
// ANSI code page and turns drive labels ("…", "µs") into mojibake. And text that a spreadsheet would
// run as a formula (a status reason or a label from an imported file starting with = + - @, tab or
// CR: CSV injection, OWASP) is prefixed with ' so it stays text. Control characters and bidirectional
// controls (a label stored before labels were checked) are written escaped, `\u{202e}`, as the app
// and the terminal show them (printableCell): a spreadsheet would apply them. Numbers as they are.

export type CsvValue = string | number | boolean | null | undefined;

/** Excel's and LibreOffice's cue that the file is UTF-8. */
export const CSV_BOM = '\uFEFF';

import { printableCell } from '../../src-shared/domain/label-text.ts';

const FORMULA_START = /^[=+\-@\t\r]/;

/** One field: empty for null and non-finite numbers, controls escaped, formula-like text defused, quoted where needed. */
export function csvCell(v: CsvValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  let s = typeof v === 'string' ? printableCell(v) : String(v);
  if (typeof v === 'string' && FORMULA_START.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One row as a line, without its CRLF. */
function csvLine(row: readonly CsvValue[]): string {
  return row.map(csvCell).join(',');
}

/** A whole file: the BOM, a header row and one line per row, each ended by CRLF. */
export function csvTable(columns: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  return [...csvChunks(columns, [rows])].join('');
}

/** csvTable a batch of rows at a time, for a file written as its rows are read: the same bytes. */
export function* csvChunks(columns: readonly string[], batches: Iterable<readonly (readonly CsvValue[])[]>): Generator<string> {
  yield `${CSV_BOM}${csvLine(columns)}\r\n`;
  for (const rows of batches) if (rows.length > 0) yield `${rows.map(csvLine).join('\r\n')}\r\n`;
}
