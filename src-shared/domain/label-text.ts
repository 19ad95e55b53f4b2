/**
 * What a label a user gives (a system, drive or suite label) may hold, and how text from outside is
 * made safe to print. Labels are shown raw in terminal tables and messages: an ESC sequence in one
 * cleared the screen, a newline made a fake row of `kvbench history`, and a bidirectional override
 * reverses what follows it. Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';

/** The longest system, drive or suite label taken (the app's fields and the command line alike). */
export const LABEL_MAX_CHARS = 200;

/** Control characters (C0, DEL, C1), line and paragraph separators and bidirectional overrides/isolates. */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** UNPRINTABLE less the C0 controls: those JSON.stringify leaves unescaped. */
const UNPRINTABLE_PAST_C0 = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const codePoint = (ch: string): string => `U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * `text` safe to quote in a message or a table cell: every unprintable character (UNPRINTABLE) is
 * written as `\u{…}`, so a quoted line from a binary or hostile file, or a label stored before labels
 * were checked, cannot drive the terminal or break a line.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (ch) => `\\u{${ch.charCodeAt(0).toString(16)}}`);
}

/** One piece of a label as the app shows it: plain text, or one unprintable character written as printable writes it (`\u{202e}`). */
export interface PrintablePart {
  text: string;
  /** The code point this part stands for ("U+202E"), where it is one written escaped; absent for plain text. */
  escapedCodePoint?: string;
}

/**
 * `text` as printable writes it, in pieces: the app marks each escaped character (a page cannot tell a
 * stored `\u{202e}` from the six characters typed so, unless the escaped ones look different).
 */
export function printableParts(text: string): PrintablePart[] {
  const parts: PrintablePart[] = [];
  let from = 0;
  for (const m of text.matchAll(UNPRINTABLE)) {
    if (m.index > from) parts.push({ text: text.slice(from, m.index) });
    parts.push({ text: printable(m[0]), escapedCodePoint: codePoint(m[0]) });
    from = m.index + m[0].length;
  }
  if (from < text.length) parts.push({ text: text.slice(from) });
  return parts;
}

/**
 * `JSON.stringify(value, null, indent)` with every UNPRINTABLE character written as a `\uXXXX`
 * escape. JSON.stringify escapes the C0 controls (the raw line breaks left are the indent's) but
 * writes DEL, C1 controls (U+009B is a CSI), U+2028/9 and bidirectional overrides raw, and
 * `--json | less` or `cat export.json` hands them to a terminal, which acts on them. The escape is
 * JSON's own: a parser reads back the stored text exactly (JSON output is data; nothing is dropped
 * or replaced), and such characters can only stand inside strings, where an escape is valid.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(UNPRINTABLE_PAST_C0, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `jsonText(items, indent)` a piece at a time, for an array too large to hold as one text (a year's
 * trials): the same characters, an element per piece. `depth` is how deep the array stands in the
 * document around it (0: the array is the document), whose indentation its lines take.
 */
export function* jsonArrayTexts(items: Iterable<unknown>, indent: number, depth = 0): Generator<string> {
  const pad = ' '.repeat(indent * (depth + 1));
  let first = true;
  for (const item of items) {
    // What JSON.stringify leaves out of an object (undefined, a function) is null in an array.
    const text = item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : jsonText(item, indent);
    yield `${first ? '[' : ','}\n${pad}${text.replaceAll('\n', `\n${pad}`)}`;
    first = false;
  }
  yield first ? '[]' : `\n${' '.repeat(indent * depth)}]`;
}

/** The most characters of a given value a message quotes (shownInput). */
const SHOWN_INPUT_MAX_CHARS = 60;

/**
 * A value someone gave (a flag's value, a request's field) as a message quotes it back: printable,
 * and past SHOWN_INPUT_MAX_CHARS characters cut, with its length said, so a 5,000-character value
 * pasted by mistake does not bury the message. Cut between characters, not inside one.
 */
export function shownInput(text: string): string {
  const chars = Array.from(text);
  if (chars.length <= SHOWN_INPUT_MAX_CHARS) return printable(text);
  return `${printable(chars.slice(0, SHOWN_INPUT_MAX_CHARS - 1).join(''))}… (${chars.length} characters)`;
}

/** UNPRINTABLE less tab, line feed and carriage return. */
const UNPRINTABLE_IN_CELL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text as a spreadsheet cell (CSV, XLSX) holds it: every UNPRINTABLE character but tab, line feed and
 * carriage return written as printable writes it (`\u{202e}`). A cell is shown, not parsed: Excel and
 * LibreOffice apply a bidirectional override in a stored label ("abc\u202Efdp.exe" shows "abcexe.pdf"),
 * and `cat export.csv` hands an ESC to the terminal. Tab and line breaks are a cell's own (a failure's
 * engine output keeps its lines); the CSV writer quotes them and defuses a formula start. The exact
 * text is the JSON export's (jsonText), which a JSON reader reads back as stored.
 */
export function printableCell(text: string): string {
  return text.replace(UNPRINTABLE_IN_CELL, (ch) => `\\u{${ch.charCodeAt(0).toString(16)}}`);
}

/** As printable, but line breaks and tabs are kept: for a whole text (a report) whose parts may quote stored labels. */
export function printableLines(text: string): string {
  return text.replace(UNPRINTABLE, (ch) => (ch === '\n' || ch === '\t' ? ch : `\\u{${ch.charCodeAt(0).toString(16)}}`));
}

/**
 * Why `label` cannot be stored as `what` ("--system", "systemLabel"), or null: it holds a control
 * character or a bidirectional override, named by code point.
 */
export function labelTextProblem(what: string, label: string): string | null {
  const found = label.match(UNPRINTABLE);
  if (found === null) return null;
  const named = [...new Set(found)].slice(0, 3).map(codePoint).join(', ');
  return `${what} must not hold control characters, line breaks or bidirectional overrides (found ${named})`;
}

/**
 * A label as the API and the command line take it: trimmed, at most `maxChars` (default
 * LABEL_MAX_CHARS), and printable
 * (labelTextProblem). Empty is refused by `.min(1)` where the caller requires one.
 */
export function labelTextSchema(what: string, maxChars = LABEL_MAX_CHARS) {
  return z
    .string()
    .trim()
    .max(maxChars, { error: `${what} is at most ${maxChars} characters` })
    .check((ctx) => {
      const problem = labelTextProblem(what, ctx.value);
      if (problem !== null) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    });
}
