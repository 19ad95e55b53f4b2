import { describe, expect, it } from 'vitest';
import { groupedFixed } from '../../../src-shared/domain/number-text.ts';
import { Rng } from '../../../src-main/engine/workload/rng.ts';

// groupedFixed keeps one Intl.NumberFormat per count of decimals instead of building one per call
// (toLocaleString with options): its text must be toLocaleString's, character for character.
const toLocale = (n: number, digits: number): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

describe('groupedFixed', () => {
  it("writes every number as toLocaleString('en-US') with that many decimals does", () => {
    const edges = [
      0, -0, NaN, Infinity, -Infinity, 1, -1, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.05, 0.15, 0.25, 0.35, 0.045, 0.005, 0.0005, 1.005, 2.675, 1.045,
      9.995, 99.995, 999.5, 999.95, 999.995, 1234.5, 12345.675, -1234567.891, 1e6, 1e15, 1e21, 1.5e21, -1e21, 1e-7, -1e-7, 5e-324,
      Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, Number.MAX_VALUE, -Number.MAX_VALUE, Number.EPSILON, 0.1 + 0.2, 123456789.125, -0.0004,
    ];
    const rng = new Rng(7);
    const random = Array.from({ length: 2000 }, () => (rng.next() - 0.5) * 10 ** Math.floor(rng.next() * 14 - 4));
    for (const digits of [0, 1, 2, 3, 1, 0]) {
      for (const n of [...edges, ...random]) expect(groupedFixed(n, digits), `${n} with ${digits} decimals`).toBe(toLocale(n, digits));
    }
  });

  it('refuses a count of decimals Intl refuses, as toLocaleString does', () => {
    expect(() => toLocale(1, 101)).toThrow(RangeError);
    expect(() => groupedFixed(1, 101)).toThrow(RangeError);
  });
});
