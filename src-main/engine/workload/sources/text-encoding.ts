/**
 * Input files are UTF-8 text. What a user most often hands over instead — a compressed trace, a
 * UTF-16 export from a Windows tool, a Latin-1 file — is named as such, with what to do, and never
 * echoed raw into the terminal.
 */
import { isUtf8 } from 'node:buffer';
import { inputError } from './input-errors.ts';

const MAGIC: readonly { bytes: readonly number[]; what: string }[] = [
  { bytes: [0x1f, 0x8b], what: 'gzip-compressed: decompress it first (gunzip)' },
  { bytes: [0x28, 0xb5, 0x2f, 0xfd], what: 'zstd-compressed: decompress it first (unzstd)' },
  { bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], what: 'xz-compressed: decompress it first (unxz)' },
  { bytes: [0x42, 0x5a, 0x68], what: 'bzip2-compressed: decompress it first (bunzip2)' },
  { bytes: [0x50, 0x4b, 0x03, 0x04], what: 'a zip archive: extract the trace from it first (unzip)' },
];

const TO_UTF8 = 'convert it to UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)';

/**
 * What is wrong with a file whose first bytes are `head`, when it is not UTF-8 text at all: compressed,
 * UTF-16/32 (by its byte-order mark, or by the NUL bytes every ASCII character then carries), or binary.
 * Null for anything else (which may still hold a bad byte further on: see {@link utf8Text}).
 */
export function encodingProblem(head: Uint8Array): string | null {
  for (const m of MAGIC) if (head.length >= m.bytes.length && m.bytes.every((b, i) => head[i] === b)) return `the file is ${m.what}`;
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return `the file is UTF-16 encoded: ${TO_UTF8}`;
  const sample = head.subarray(0, 4096);
  let nulEven = 0;
  let nulOdd = 0;
  for (let i = 0; i < sample.length; i++) if (sample[i] === 0) (i % 2 === 0 ? nulEven++ : nulOdd++);
  if (nulEven + nulOdd === 0) return null;
  // ASCII text in UTF-16 has a NUL in every other byte (odd positions little-endian, even big-endian).
  const half = sample.length / 2;
  if (Math.max(nulEven, nulOdd) >= half * 0.6 && Math.min(nulEven, nulOdd) <= half * 0.1) return `the file is UTF-16 encoded (no byte-order mark): ${TO_UTF8}`;
  return 'the file holds NUL bytes: a binary file, not a UTF-8 text trace';
}

/**
 * `bytes` decoded as UTF-8, or a VALIDATION error naming the line (`firstLineNo` is the line `bytes`
 * starts on) and column of the first byte that is not UTF-8 — instead of decoding it silently to
 * U+FFFD, which would change token counts and keys without a word.
 */
export function utf8Text(file: string, bytes: Buffer, firstLineNo: number): string {
  const bad = invalidUtf8(bytes, firstLineNo);
  if (bad) throw inputError(file, bad.line, bad.problem);
  return bytes.toString('utf8');
}

/** Where `bytes` (starting on line `firstLineNo`) stop being UTF-8, in words; null when they are UTF-8. */
function invalidUtf8(bytes: Buffer, firstLineNo: number): { line: number; problem: string } | null {
  if (isUtf8(bytes)) return null;
  const at = firstInvalidUtf8(bytes);
  let line = firstLineNo;
  let lineStart = 0;
  for (let i = 0; i < at; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  const byte = bytes[at].toString(16).toUpperCase().padStart(2, '0');
  return {
    line,
    problem: `not UTF-8 text (byte 0x${byte} at column ${at - lineStart + 1}): kvbench reads UTF-8 only; convert the file (for Latin-1: iconv -f latin1 -t utf-8)`,
  };
}

/**
 * A whole file's bytes as text, for readers that parse it at once (a JSON document): a compressed,
 * UTF-16 or binary file is named as such with what to do, a byte that is not UTF-8 by its line and
 * column, and a byte-order mark in front (as editors on Windows write) is dropped. Every reader of a
 * user's JSON file says these alike: workload files, imported results, the app's settings.
 */
export function wholeFileText(bytes: Buffer): { ok: true; text: string } | { ok: false; line: number | null; problem: string } {
  const problem = encodingProblem(bytes);
  if (problem) return { ok: false, line: null, problem };
  const bad = invalidUtf8(bytes, 1);
  if (bad) return { ok: false, ...bad };
  return { ok: true, text: bytes.toString('utf8').replace(/^\uFEFF/, '') };
}

/** Offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (n < 0) return i;
    // The second byte's range excludes overlong forms, surrogates and code points above U+10FFFF.
    const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? lo : 0x80) || d > (k === 1 ? hi : 0xbf)) return i;
    }
    i += n + 1;
  }
  return b.length;
}

/** The line readers split at LF: a file whose lines end in CR alone reads as one long line. */
export function crOnlyLineEndings(file: string, lineNo: number): Error {
  return inputError(file, lineNo, 'the lines end in CR alone (classic Mac line endings): convert them to LF or CR LF (e.g. tr "\\r" "\\n")');
}

// Quoting a line of a file in a message: one rule with the labels' (src-shared/domain/label-text.ts).
export { printable } from '../../../../src-shared/domain/label-text.ts';
