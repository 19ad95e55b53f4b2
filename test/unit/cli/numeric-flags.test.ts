// The one reader of the CLI's numeric flags: numbers as people type them, nothing Number() would
// also take ('' and ' ' as 0, '0x1', 'Infinity'), ranges said in the refusal.
import { describe, expect, it } from 'vitest';
import { intFlag, intListFlag, numberFlag, type NumericFlagOptions } from '../../../src-main/cli/command-args.ts';

const read = (fn: typeof intFlag, text: string | undefined, range: NumericFlagOptions = {}): number | undefined | string => {
  const errors: string[] = [];
  const v = fn('--n', text, errors, range);
  return errors.length > 0 ? errors.join('; ') : v;
};

describe('intFlag and numberFlag', () => {
  it('read decimal numbers, and nothing else', () => {
    for (const [text, value] of [['0', 0], ['42', 42], ['-3', -3], ['+7', 7], ['007', 7]] as const) expect(read(intFlag, text)).toBe(value);
    for (const [text, value] of [['2.5', 2.5], ['.5', 0.5], ['1e3', 1000], ['-0.25', -0.25], ['3', 3]] as const) expect(read(numberFlag, text)).toBe(value);
    for (const text of ['', ' ', ' 5', '0x1', '0b1', '1e3', '1.5', '1.0', '5 ', 'Infinity', '1_000', '9007199254740993']) {
      expect(read(intFlag, text)).toBe(`--n takes a whole number, got '${text}'`);
    }
    for (const text of ['', ' ', '0x10', 'Infinity', '1e400', 'NaN', '1.2.3', '- 1']) expect(read(numberFlag, text)).toBe(`--n takes a number, got '${text}'`);
    expect(read(intFlag, undefined)).toBeUndefined();
  });

  it('say the range in the refusal', () => {
    expect(read(intFlag, '0', { min: 1 })).toBe("--n takes a whole number ≥ 1, got '0'");
    expect(read(intFlag, '70000', { min: 0, max: 65535 })).toBe("--n takes a whole number from 0 to 65535, got '70000'");
    expect(read(numberFlag, '0', { above: 0, max: 600 })).toBe("--n takes a number > 0 and ≤ 600, got '0'");
    expect(read(numberFlag, '0', { above: 0, what: 'a positive number of GB/s' })).toBe("--n takes a positive number of GB/s, got '0'");
    expect(read(numberFlag, '600', { above: 0, max: 600 })).toBe(600);
  });

  it("syntax 'python' also reads what Python's int() and float() read, still finite; refusal words the message", () => {
    const python = { syntax: 'python' as const };
    for (const [text, value] of [[' 5 ', 5], ['+5', 5], ['1_000', 1000], ['-0_7', -7]] as const) expect(read(intFlag, text, python)).toBe(value);
    for (const [text, value] of [[' 1e3', 1000], ['1_0.2_5', 10.25], ['5.', 5], ['+.5', 0.5]] as const) expect(read(numberFlag, text, python)).toBe(value);
    for (const text of ['', ' ', '1__0', '_1', '1_', '0x10', '1e3', '1.0', '١']) expect(read(intFlag, text, python)).toBe(`--n takes a whole number, got '${text}'`);
    for (const text of ['inf', 'nan', '-Infinity', '0x1p3', '1e400']) expect(read(numberFlag, text, python)).toBe(`--n takes a number, got '${text}'`);
    expect(read(intFlag, '0', { ...python, min: 1, refusal: (text) => `bad: '${text}'` })).toBe("bad: '0'");
  });

  it('intListFlag: comma-separated or repeated, an empty value refused rather than read as no list', () => {
    const list = (values: string | string[] | undefined): number[] | undefined | string => {
      const errors: string[] = [];
      const v = intListFlag('--suite', values, errors, { min: 1 });
      return errors.length > 0 ? errors.join('; ') : v;
    };
    expect(list(['3,4', '5'])).toEqual([3, 4, 5]);
    expect(list('1, 2,')).toEqual([1, 2]);
    expect(list(undefined)).toBeUndefined();
    expect(list('')).toBe("--suite takes whole numbers (comma-separated), got ''");
    expect(list('1,0x2,0')).toBe("--suite takes a whole number ≥ 1, got '0x2'; --suite takes a whole number ≥ 1, got '0'");
  });
});
