import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { splitList } from '../export/selection.ts';

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
    process.stderr.write(`kvbench ${command}: ${(err as Error).message}\n\n${usage}`);
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

// The number as typed, before Number() reads it: Number() alone takes '' and ' ' as 0, '0x10' as 16
// and '1e3' as a whole number, so `--limit ''` meant "no limit" and `--suite 0x1` suite 1.
const INTEGER_TEXT = /^[+-]?\d+$/;
const DECIMAL_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function rangeText(range: FlagRange): string {
  const low = range.above !== undefined ? `> ${range.above}` : range.min !== undefined ? `≥ ${range.min}` : null;
  if (range.min !== undefined && range.max !== undefined) return ` from ${range.min} to ${range.max}`;
  if (low !== null && range.max !== undefined) return ` ${low} and ≤ ${range.max}`;
  if (low !== null) return ` ${low}`;
  return range.max !== undefined ? ` ≤ ${range.max}` : '';
}

function numericFlag(kind: 'integer' | 'decimal', flag: string, text: string | undefined, errors: string[], range: FlagRange): number | undefined {
  if (text === undefined) return undefined;
  let value = kind === 'integer' ? z.number().int() : z.number();
  if (range.min !== undefined) value = value.min(range.min);
  if (range.above !== undefined) value = value.gt(range.above);
  if (range.max !== undefined) value = value.max(range.max);
  const parsed = z
    .string()
    .regex(kind === 'integer' ? INTEGER_TEXT : DECIMAL_TEXT)
    .transform(Number)
    .pipe(value)
    .safeParse(text);
  if (parsed.success) return parsed.data;
  errors.push(`${flag} takes ${range.what ?? `${kind === 'integer' ? 'a whole number' : 'a number'}${rangeText(range)}`}, got '${text}'`);
  return undefined;
}

/**
 * A whole-number flag (or positional) in decimal digits, within `range`: its value, or undefined when
 * not given or refused (the refusal, naming the flag, is pushed to `errors`).
 */
export function intFlag(flag: string, text: string | undefined, errors: string[], range: FlagRange = {}): number | undefined {
  return numericFlag('integer', flag, text, errors, range);
}

/** A decimal number flag (2, 0.5, .5, 1e3; no hex, blanks or Infinity), as intFlag. */
export function numberFlag(flag: string, text: string | undefined, errors: string[], range: FlagRange = {}): number | undefined {
  return numericFlag('decimal', flag, text, errors, range);
}

/**
 * A list of whole numbers (`--suite 3,4` or `--suite 3 --suite 4`): undefined when not given. Given
 * but empty is refused, not read as "no filter" (`--suite ''` listed every suite's trials).
 */
export function intListFlag(flag: string, values: readonly string[] | string | undefined, errors: string[], range: FlagRange = {}): number[] | undefined {
  if (values === undefined) return undefined;
  const items = splitList(values);
  if (items === undefined) {
    errors.push(`${flag} takes whole numbers (comma-separated), got '${[values].flat().join(',')}'`);
    return undefined;
  }
  const out = items.map((item) => intFlag(flag, item, errors, range));
  return out.every((n) => n !== undefined) ? out : undefined;
}
