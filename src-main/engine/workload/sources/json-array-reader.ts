import fsp from 'node:fs/promises';
import { inputError, unreadable } from './input-errors.ts';
import { encodingProblem, printable, utf8Text } from './text-encoding.ts';

/** Largest single array element accepted (one ShareGPT conversation, one validation-trace record). */
export const MAX_JSON_ELEMENT_BYTES = 64 * 1024 * 1024;
const READ_CHUNK_BYTES = 1024 * 1024;

export interface JsonArrayElement {
  value: unknown;
  /** 0-based position in the array. */
  index: number;
  /** 1-based line where the element starts. */
  lineNo: number;
}

/** Scanner states. */
const S = {
  beforeArray: 0,
  beforeElement: 1,
  inElement: 2,
  afterElement: 3,
  afterArray: 4,
} as const;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * Streams the elements of a top-level JSON array (`[ {...}, {...} ]`) one at a time, parsing each
 * element on its own, so a file of any size is read in bounded memory (one element plus one chunk)
 * and an error names the line where the broken element starts. Minified (one-line) and pretty-printed
 * files both work. `onElement` returns false to stop early (the rest of the file is not read).
 */
export async function readJsonArray(
  file: string,
  onElement: (element: JsonArrayElement) => boolean | void,
  opts: { maxElementBytes?: number } = {},
): Promise<{ elements: number; complete: boolean }> {
  const maxElementBytes = opts.maxElementBytes ?? MAX_JSON_ELEMENT_BYTES;
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(file, 'r');
  } catch (err) {
    throw unreadable(file, err);
  }
  let state: number = S.beforeArray;
  let line = 1;
  let elementLine = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let scalar = false;
  let sawComma = false;
  let parts: Buffer[] = [];
  let partsBytes = 0;
  let count = 0;
  let offset = 0;
  let stopped = false;

  const finish = (last: Buffer): void => {
    const bytes = parts.length > 0 ? Buffer.concat([...parts, last]) : last;
    parts = [];
    partsBytes = 0;
    if (bytes.length > maxElementBytes) throw tooBig();
    const text = utf8Text(file, bytes, elementLine);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw inputError(file, elementLine, `element ${count + 1} of the JSON array is not valid JSON: ${printable((err as Error).message)}`);
    }
    const index = count++;
    if (onElement({ value, index, lineNo: elementLine }) === false) stopped = true;
  };
  const tooBig = () => inputError(file, elementLine, `element ${count + 1} of the JSON array is larger than ${maxElementBytes / (1024 * 1024)} MiB`);

  try {
    const buf = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    while (!stopped) {
      let n: number;
      try {
        ({ bytesRead: n } = await fh.read(buf, 0, READ_CHUNK_BYTES, offset));
      } catch (err) {
        throw unreadable(file, err);
      }
      if (n === 0) break;
      if (offset === 0) {
        const problem = encodingProblem(buf.subarray(0, n));
        if (problem) throw inputError(file, null, problem);
      }
      let i = 0;
      if (offset === 0 && n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) i = 3;
      offset += n;
      let partStart = state === S.inElement ? 0 : -1;
      for (; i < n && !stopped; i++) {
        const b = buf[i];
        if (b === 0x0a) line++;
        switch (state) {
          case S.beforeArray:
            if (isSpace(b)) break;
            if (b !== 0x5b /* [ */) throw inputError(file, line, 'not a JSON array: the file must start with "["');
            state = S.beforeElement;
            break;
          case S.beforeElement:
            if (isSpace(b)) break;
            if (b === 0x5d /* ] */) {
              if (sawComma) throw inputError(file, line, 'a trailing comma before "]" is not valid JSON');
              state = S.afterArray;
              break;
            }
            elementLine = line;
            partStart = i;
            depth = b === 0x7b || b === 0x5b ? 1 : 0;
            inString = b === 0x22;
            escaped = false;
            scalar = depth === 0;
            state = S.inElement;
            break;
          case S.inElement:
            if (inString) {
              if (escaped) escaped = false;
              else if (b === 0x5c /* \ */) escaped = true;
              else if (b === 0x22 /* " */) {
                inString = false;
                if (scalar) {
                  finish(Buffer.from(buf.subarray(partStart, i + 1)));
                  state = S.afterElement;
                }
              }
              break;
            }
            if (scalar) {
              if (isSpace(b) || b === 0x2c || b === 0x5d) {
                finish(Buffer.from(buf.subarray(partStart, i)));
                state = S.afterElement;
                i--; // this byte belongs to what follows the element
                if (b === 0x0a) line--;
              }
              break;
            }
            if (b === 0x22) inString = true;
            else if (b === 0x7b || b === 0x5b) depth++;
            else if (b === 0x7d || b === 0x5d) {
              depth--;
              if (depth === 0) {
                finish(Buffer.from(buf.subarray(partStart, i + 1)));
                state = S.afterElement;
              }
            }
            break;
          case S.afterElement:
            if (isSpace(b)) break;
            if (b === 0x2c /* , */) {
              state = S.beforeElement;
              sawComma = true;
            } else if (b === 0x5d) {
              state = S.afterArray;
            } else {
              throw inputError(file, line, `expected "," or "]" after element ${count} of the JSON array`);
            }
            break;
          default:
            if (!isSpace(b)) throw inputError(file, line, 'unexpected content after the closing "]" of the JSON array');
        }
      }
      if (state === S.inElement && !stopped) {
        const rest = buf.subarray(partStart, n);
        partsBytes += rest.length;
        if (partsBytes > maxElementBytes) throw tooBig();
        parts.push(Buffer.from(rest));
      }
    }
  } finally {
    await fh.close().catch(() => undefined);
  }
  if (stopped) return { elements: count, complete: false };
  if (state === S.beforeArray) throw inputError(file, null, 'the file is empty (expected a JSON array)');
  if (state !== S.afterArray) {
    throw inputError(file, line, `the file ends inside the JSON array (truncated?): no closing "]" after ${count} complete element(s)`);
  }
  return { elements: count, complete: true };
}
