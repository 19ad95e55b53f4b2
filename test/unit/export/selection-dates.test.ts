// --since / --until: the instants stored start times (UTC ISO) are compared with.
import { describe, expect, it } from 'vitest';
import { isoDate } from '../../../src-main/export/selection.ts';

describe('--since and --until dates', () => {
  it('a bare date is the start of that UTC day for --since and its end for --until, so --until includes the day', () => {
    expect(isoDate('2026-11-24', '--since')).toBe('2026-11-24T00:00:00.000Z');
    expect(isoDate('2026-11-24', '--until')).toBe('2026-11-24T23:59:59.999Z');
  });

  it('a time without an offset is UTC, as the listings show it, whatever the machine\'s zone; an offset is honoured', () => {
    expect(isoDate('2026-11-24T05:24', '--since')).toBe('2026-11-24T05:24:00.000Z');
    expect(isoDate('2026-11-24 05:24:13', '--until')).toBe('2026-11-24T05:24:13.000Z');
    expect(isoDate('2026-11-24T10:00:00+09:00', '--since')).toBe('2026-11-24T01:00:00.000Z');
    expect(isoDate('2026-11-24T10:00:00Z', '--since')).toBe('2026-11-24T10:00:00.000Z');
  });

  it('anything else is refused with the flag named', () => {
    expect(() => isoDate('yesterday', '--since')).toThrow("--since must be a date (YYYY-MM-DD or ISO 8601, e.g. 2026-11-24 or 2026-11-24T09:00+01:00), got 'yesterday'");
  });

  it("forms JavaScript's Date reads leniently are refused, not read as another span", () => {
    // 99999-01-01 was +099999-…, whose text sorts before every stored '2026-…': it listed every trial.
    for (const s of ['99999-01-01', '0', '1', '-1', '12', '2026', '2026-11', '2026-11-24T05', 'Nov 24 2026', '7d', '\u001b[2J']) {
      expect(() => isoDate(s, '--since'), s).toThrow(/--since must be a date/);
    }
    expect(() => isoDate('\u001b[2J', '--until')).toThrow("got '\\u{1b}[2J'");
  });

  it('a day or time that does not exist is refused (2026-02-30 was 2 March)', () => {
    expect(() => isoDate('2026-02-30', '--since')).toThrow('--since 2026-02-30 is not a real date');
    expect(() => isoDate('2026-02-29', '--until')).toThrow('--until 2026-02-29 is not a real date');
    expect(isoDate('2024-02-29', '--since')).toBe('2024-02-29T00:00:00.000Z');
    for (const s of ['2026-11-24T24:00', '2026-11-24T10:60', '2026-11-24T10:00:60', '2026-11-24T10:00+24:00']) {
      expect(() => isoDate(s, '--since'), s).toThrow(/is not a real time/);
    }
  });

  it('every accepted value compares right against the stored four-digit-year times, at the ends of the range too', () => {
    expect(isoDate('2026-11-24T10:00+0530', '--since')).toBe('2026-11-24T04:30:00.000Z');
    expect(isoDate('2026-11-24T10:00:00.5-01', '--since')).toBe('2026-11-24T11:00:00.500Z');
    expect(isoDate('0050-03-01', '--since')).toBe('0050-03-01T00:00:00.000Z');
    // An offset past year 9999 or before year 0 stays a four-digit year (the bound), never '+010000-…'.
    expect(isoDate('9999-12-31T23:00-05:00', '--until')).toBe('9999-12-31T23:59:59.999Z');
    expect(isoDate('0000-01-01T00:00+01:00', '--since')).toBe('0000-01-01T00:00:00.000Z');
    expect(isoDate('9999-12-31', '--until')).toBe('9999-12-31T23:59:59.999Z');
  });
});
