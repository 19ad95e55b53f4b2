import { describe, expect, it } from 'vitest';
import { fmtBytes, fmtDuration, fmtLatencyMs, fmtMetric, fmtRate, fmtRatio, rateAxis } from '../../../src-renderer/format.ts';

const dec = { byteUnits: 'decimal' as const, latencyUnit: 'ms' as const };
const bin = { byteUnits: 'binary' as const, latencyUnit: 'us' as const };

describe('formatting with units', () => {
  it('shows bandwidth and sizes in decimal or binary units', () => {
    expect(fmtRate(2.5e9, dec)).toBe('2.50 GB/s');
    expect(fmtRate(2.5e9, bin)).toBe('2.33 GiB/s');
    expect(fmtRate(0, dec)).toBe('0 B/s');
    expect(fmtBytes(1024 ** 3, bin)).toBe('1.00 GiB');
    expect(fmtBytes(1.5e6, dec)).toBe('1.50 MB');
    expect(rateAxis(3.2e9, dec)).toEqual({ divisor: 1e9, unit: 'GB/s' });
    expect(rateAxis(500, bin)).toEqual({ divisor: 1, unit: 'B/s' });
  });

  it('shows latencies in ms or µs, durations for people, and a dash for nothing', () => {
    expect(fmtLatencyMs(12.345, dec)).toBe('12.3 ms');
    expect(fmtLatencyMs(1.25, bin)).toBe('1,250 µs');
    expect(fmtLatencyMs(0.0034, dec)).toBe('0.0034 ms'); // a 3.4 µs page-cache hit, not "0.00 ms"
    expect(fmtLatencyMs(0.5, dec)).toBe('0.50 ms');
    expect(fmtLatencyMs(0, dec)).toBe('0.00 ms');
    expect(fmtLatencyMs(0.0034, bin)).toBe('3.4 µs');
    expect(fmtLatencyMs(0.00005, bin)).toBe('0.050 µs');
    expect(fmtDuration(45)).toBe('45 s');
    expect(fmtDuration(200)).toBe('3 min 20 s');
    expect(fmtDuration(3900)).toBe('1 h 05 min');
    expect(fmtRatio(1.5)).toBe('1.50×');
    expect(fmtRate(null)).toBe('—');
    expect(fmtMetric(Number.NaN, 'ms')).toBe('—');
  });

  it('gives every catalogue unit its unit', () => {
    expect(fmtMetric(1234.5, 'tok/s', dec)).toBe('1,235 tok/s');
    expect(fmtMetric(0.973, 'ratio', dec)).toBe('97.3 %');
    expect(fmtMetric(4.5, 'ms/MiB', dec)).toBe('4.50 ms/MiB');
    expect(fmtMetric(20, 'users', dec)).toBe('20 users');
    expect(fmtMetric(3.5, 's', dec)).toBe('3.50 s');
    expect(fmtMetric(2.5e9, 'bytes/s', bin)).toBe('2.33 GiB/s');
  });
});
