/**
 * A number as a person typed it on a command line, read by one zod schema: the text must look like a
 * decimal number before Number() reads it, since Number() alone takes '' and ' ' as 0, '0x10' as 16,
 * '1e3' and '1.0' as whole numbers and 'Infinity' as a number.
 *
 * Two spellings:
 * - `plain` (kvbench's own flags): digits with an optional sign; decimals also `2.5`, `.5`, `1e3`.
 * - `python` (flags that mirror a reference script's argparse `type=int` / `type=float`): also what
 *   Python's int() and float() take, so the script's command lines keep working — blanks around the
 *   number and `_` between digits (`131_072`). Not taken, though Python takes them: 'inf' and 'nan'
 *   (kvbench wants finite values; an endless delay or a NaN bound is no setting) and non-ASCII digits.
 *
 * Integers must be exact (at most 2^53 − 1); decimals finite.
 */
import { z } from 'zod';
import { shownInput } from '../../src-shared/domain/label-text.ts';

export type NumberKind = 'integer' | 'decimal';
export type NumberSyntax = 'plain' | 'python';

const TEXT: Record<NumberSyntax, Record<NumberKind, RegExp>> = {
  plain: {
    integer: /^[+-]?\d+$/,
    decimal: /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/,
  },
  python: {
    integer: /^[+-]?\d+(?:_\d+)*$/,
    decimal: /^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+)?$/,
  },
};

/**
 * The schema that reads `kind` in `syntax` and hands the number to `value` (default: any finite number,
 * whole for `integer`), where a caller adds its range.
 */
export function numberText(kind: NumberKind, syntax: NumberSyntax = 'plain', value: z.ZodNumber = kind === 'integer' ? z.number().int() : z.number()) {
  const text = syntax === 'python' ? z.string().trim() : z.string();
  return text
    .regex(TEXT[syntax][kind])
    .transform((s) => Number(s.replaceAll('_', '')))
    .pipe(value);
}

/**
 * argparse's refusal of a `type=int` / `type=float` value, for the commands that mirror a reference
 * script. A number spelled right but too large to hold (an integer past 2^53 − 1, which would be
 * rounded; a decimal past ~1.8e308) is said to be out of range, as Python's range check would, not
 * an invalid spelling.
 */
export function argparseInvalidValue(flag: string, type: 'int' | 'float', text: string): string {
  const kind: NumberKind = type === 'int' ? 'integer' : 'decimal';
  if (!TEXT.python[kind].test(text.trim())) return `argument ${flag}: invalid ${type} value: '${shownInput(text)}'`;
  return `argument ${flag}: '${shownInput(text)}' is out of range (beyond ±${kind === 'integer' ? Number.MAX_SAFE_INTEGER : '1.8e308'})`;
}
