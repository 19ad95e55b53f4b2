import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { labelTextSchema, printableLines, shownInput } from '../../src-shared/domain/label-text.ts';
import { isoDate, splitList, type SelectionFlags } from '../export/selection.ts';
import { numberText, type NumberKind, type NumberSyntax } from '../util/number-text.ts';

/**
 * Node's parseArgs message ("Unknown option '--x'. … as in '-- \"--x\"'") with each quoted argument as
 * shownInput shows it, and nothing else unprintable: it quotes what was typed as it was typed.
 */
function shortenedQuotes(message: string): string {
  return message.replace(/'([^']*)'/g, (_, quoted: string) => `'${shownInput(quoted)}'`);
}

/**
 * Parses a command's flags the way every kvbench command does: an invalid flag prints the message and
 * the usage to stderr (exit code 1), `--help` prints the usage to stdout (exit code 0). Returns the
 * parsed flags, or the exit code when the command is already answered.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, usage: string, config: T): ReturnType<typeof parseArgs<T>> | number {
  let parsed: ReturnType<typeof parseArgs<T>>;
  try {
    parsed = parseArgs(config.args ? ({ ...config, args: joinNegativeValues(config.args, config.options ?? {}) } as T) : config);
  } catch (err) {
    process.stderr.write(`kvbench ${command}: ${printableLines(shortenedQuotes((err as Error).message))}\n\n${usage}`);
    return 1;
  }
  if ((parsed.values as { help?: unknown }).help === true) {
    process.stdout.write(usage);
    return 0;
  }
  return parsed;
}

/**
 * `--flag -1` as `--flag=-1`: Node's parseArgs takes a value starting with '-' for a forgotten value
 * ("argument is ambiguous"), while a negative number is plainly a value, which the command then
 * range-checks with a message naming the flag (as `kvbench run` does, the way argparse does).
 */
function joinNegativeValues(args: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') return [...out, ...args.slice(i)]; // positionals from here on
    const name = args[i].startsWith('--') && !args[i].includes('=') ? args[i].slice(2) : undefined;
    const next = args[i + 1];
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${args[i]}=${next}`);
      i++;
    } else {
      out.push(args[i]);
    }
  }
  return out;
}

/** The range a numeric flag accepts; `what` replaces the generated description in the message. */
export interface FlagRange {
  min?: number;
  /** Exclusive lower bound: `above: 0` is "> 0". */
  above?: number;
  max?: number;
  what?: string;
}

/** A numeric flag's range, and how it is spelled and refused where a command mirrors another tool. */
export interface NumericFlagOptions extends FlagRange {
  /** 'python' also takes what Python's int()/float() take (see number-text.ts); default 'plain'. */
  syntax?: NumberSyntax;
  /** The whole refusal, for the text as typed (e.g. argparse's "argument --seed: invalid int value: 'x'"). */
  refusal?: (text: string) => string;
}

function rangeText(range: FlagRange): string {
  const low = range.above !== undefined ? `> ${range.above}` : range.min !== undefined ? `≥ ${range.min}` : null;
  if (range.min !== undefined && range.max !== undefined) return ` from ${range.min} to ${range.max}`;
  if (low !== null && range.max !== undefined) return ` ${low} and ≤ ${range.max}`;
  if (low !== null) return ` ${low}`;
  return range.max !== undefined ? ` ≤ ${range.max}` : '';
}

function numericFlag(kind: NumberKind, flag: string, text: string | undefined, errors: string[], options: NumericFlagOptions): number | undefined {
  if (text === undefined) return undefined;
  let value = kind === 'integer' ? z.number().int() : z.number();
  if (options.min !== undefined) value = value.min(options.min);
  if (options.above !== undefined) value = value.gt(options.above);
  if (options.max !== undefined) value = value.max(options.max);
  const parsed = numberText(kind, options.syntax, value).safeParse(text);
  if (parsed.success) return parsed.data;
  errors.push(options.refusal?.(text) ?? `${flag} takes ${options.what ?? `${kind === 'integer' ? 'a whole number' : 'a number'}${rangeText(options)}`}, got '${shownInput(text)}'`);
  return undefined;
}

/**
 * A whole-number flag (or positional) in decimal digits, within the options' range: its value, or
 * undefined when not given or refused (the refusal, naming the flag, is pushed to `errors`).
 */
export function intFlag(flag: string, text: string | undefined, errors: string[], options: NumericFlagOptions = {}): number | undefined {
  return numericFlag('integer', flag, text, errors, options);
}

/** A decimal number flag (2, 0.5, .5, 1e3; no hex or Infinity, no blanks unless `syntax: 'python'`), as intFlag. */
export function numberFlag(flag: string, text: string | undefined, errors: string[], options: NumericFlagOptions = {}): number | undefined {
  return numericFlag('decimal', flag, text, errors, options);
}

/**
 * `--NAME must not be empty` for each of `flags` given an empty value: '' or blanks, or for a flag in
 * `lists` (split at commas) nothing but commas and blanks. An empty path resolves to the current
 * directory (`probe --dir ''` probed it, writing its files there) or falls back to the default
 * (`--db ''`), and an empty filter selects everything: none of it what a script whose variable was
 * unset meant. Worded as kvbench run refuses `--cache-dir ''`. `values` are the parsed flags.
 */
export function emptyValueErrors(values: Readonly<Record<string, unknown>>, flags: readonly string[], lists: readonly string[] = []): string[] {
  return flags.filter((name) => [values[name]].flat().some((v) => typeof v === 'string' && (lists.includes(name) ? splitList(v) === undefined : v.trim() === ''))).map((name) => `--${name} must not be empty`);
}

/** The trial filters history, export and report share, as SelectionFlags names them; those split at commas. */
const SELECTION_FLAGS = ['system', 'drive', 'label', 'scenario', 'status', 'model', 'since', 'until'] as const satisfies readonly (keyof SelectionFlags)[];
const SELECTION_LIST_FLAGS = ['system', 'drive', 'scenario', 'status'] as const;

/**
 * The filters given empty (emptyValueErrors): refused, not read as "no filter" (`--system "$SYS"` with
 * SYS unset exported every system); and --since / --until that are no date (isoDate): told with the
 * other argument errors, before the database is looked for, not after it was found (or not found).
 */
export function filterFlagErrors(values: Readonly<Record<string, unknown>>): string[] {
  const errors = emptyValueErrors(values, SELECTION_FLAGS, SELECTION_LIST_FLAGS);
  for (const flag of ['since', 'until'] as const) {
    const v = values[flag];
    if (typeof v !== 'string' || v.trim() === '') continue;
    try {
      isoDate(v, `--${flag}`);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return errors;
}

/**
 * Refusals for the label flags given (labelTextSchema: at most LABEL_MAX_CHARS characters, no control
 * characters, line breaks or bidirectional overrides), as the app's API refuses them: a label is
 * printed in tables and messages, where an ESC sequence drove the terminal and a newline forged a row.
 */
export function labelFlagErrors(values: Readonly<Record<string, unknown>>, flags: readonly string[]): string[] {
  return flags.flatMap((name) =>
    [values[name]].flat().flatMap((v) => {
      const r = typeof v === 'string' ? labelTextSchema(`--${name}`).safeParse(v) : null;
      return r === null || r.success ? [] : r.error.issues.map((i) => i.message);
    }),
  );
}

/**
 * A list of whole numbers (`--suite 3,4` or `--suite 3 --suite 4`): undefined when not given. Given
 * but empty is refused, not read as "no filter" (`--suite ''` listed every suite's trials).
 */
export function intListFlag(flag: string, values: readonly string[] | string | undefined, errors: string[], options: NumericFlagOptions = {}): number[] | undefined {
  if (values === undefined) return undefined;
  const items = splitList(values);
  if (items === undefined) {
    errors.push(`${flag} takes whole numbers (comma-separated), got '${[values].flat().join(',')}'`);
    return undefined;
  }
  const out = items.map((item) => intFlag(flag, item, errors, options));
  return out.every((n) => n !== undefined) ? out : undefined;
}
