import { parseArgs, type ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { splitList } from '../export/selection.ts';
import { numberText, type NumberKind, type NumberSyntax } from '../util/number-text.ts';

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
  errors.push(options.refusal?.(text) ?? `${flag} takes ${options.what ?? `${kind === 'integer' ? 'a whole number' : 'a number'}${rangeText(options)}`}, got '${text}'`);
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
