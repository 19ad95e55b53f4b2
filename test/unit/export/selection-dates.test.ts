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
    expect(() => isoDate('yesterday', '--since')).toThrow("--since must be a date (YYYY-MM-DD or ISO 8601), got 'yesterday'");
  });
});
