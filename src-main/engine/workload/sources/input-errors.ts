import { printable } from '../../../../src-shared/domain/label-text.ts';
import { KvbenchError } from '../../../../src-shared/domain/errors.ts';

/**
 * A user's input file is wrong: a VALIDATION error naming the file and, when known, the line, so the
 * user can open the file at the right place. Thrown before the measured phase starts.
 */
export function inputError(file: string, line: number | null, message: string): KvbenchError {
  // The file's name is the user's and the message may quote the file (a parser's snippet of it):
  // escaped, so neither can break the line or drive the terminal (text escaped already stays as it is).
  const shown = printable(file);
  return new KvbenchError('VALIDATION', printable(line === null ? `${shown}: ${message}` : `${shown}, line ${line}: ${message}`));
}

/** A file that cannot be opened or read at all (missing, a directory, no permission). */
export function unreadable(file: string, err: unknown): KvbenchError {
  const e = err as NodeJS.ErrnoException;
  const why = e.code === 'ENOENT' ? 'does not exist' : e.code === 'EISDIR' ? 'is a directory, not a file' : e.code === 'EACCES' ? 'is not readable (permission denied)' : `cannot be read (${e.message})`;
  // Node's message names the file too: escaped as the file's name is.
  return new KvbenchError('VALIDATION', `${printable(file)} ${printable(why)}`);
}

/**
 * The line of a JSON.parse error in `text`, or null. V8 gives "at position N", "(line L column C)", or
 * only a snippet of the text around the error (`Unexpected token ',', "...ab": [,]..." is not valid
 * JSON`); the snippet is looked up in the text.
 */
export function jsonErrorLine(text: string, message: string): number | null {
  const lineOf = (offset: number): number => {
    let n = 1;
    for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) n++;
    return n;
  };
  const line = /\(line (\d+) column \d+\)/.exec(message);
  if (line) return Number(line[1]);
  const pos = /at position (\d+)/.exec(message);
  if (pos) return lineOf(Number(pos[1]));
  // "Unexpected token 'X', [...]"<snippet>"[...] is not valid JSON" (the dots: the snippet is cut there).
  const m = /^Unexpected token '([\s\S])', ([\s\S]+) is not valid JSON$/.exec(message);
  if (m) {
    let snip = m[2];
    if (snip.startsWith('...')) snip = snip.slice(3);
    if (snip.endsWith('...')) snip = snip.slice(0, -3);
    if (snip.startsWith('"') && snip.endsWith('"') && snip.length >= 2) snip = snip.slice(1, -1);
    const at = snip.length > 0 ? text.indexOf(snip) : -1;
    if (at >= 0 && text.indexOf(snip, at + 1) < 0) return lineOf(at + Math.max(0, snip.indexOf(m[1])));
  }
  return null;
}
