import { describe, expect, it } from 'vitest';
import {
  formatBytesAsGiB,
  formatBytesBinary,
  formatBytesPerSecAsGBps,
  formatBytesPerSecAsGiBps,
  formatFixedPy,
  formatIntegerGrouped,
  formatNsAsMs,
  formatNsPerMiBAsMsPerMiB,
  formatRatioAsPercent,
} from '../../../src-main/engine/report/format.ts';

describe('format', () => {
  it('names binary size units', () => {
    expect(formatBytesBinary(1.23 * 1024 ** 3)).toBe('1.23 GiB');
    expect(formatBytesBinary(512 * 1024 ** 2)).toBe('512.0 MiB');
    expect(formatBytesBinary(4096)).toBe('4.0 KiB');
    expect(formatBytesBinary(17)).toBe('17 B');
    expect(formatBytesBinary(2 * 1024 ** 4)).toBe('2.00 TiB');
    expect(formatBytesAsGiB(512 * 1024 ** 2)).toBe('0.50 GiB');
  });

  it('keeps decimal GB/s and binary GiB/s apart', () => {
    expect(formatBytesPerSecAsGBps(1.234e9)).toBe('1.23 GB/s');
    expect(formatBytesPerSecAsGiBps(1024 ** 3 * 1.5)).toBe('1.50 GiB/s');
    // The same rate differs by 7.4% between the two units.
    expect(formatBytesPerSecAsGBps(1024 ** 3)).toBe('1.07 GB/s');
  });

  it('formats ns as ms and per-MiB latencies', () => {
    expect(formatNsAsMs(12_345_678)).toBe('12.35 ms');
    expect(formatNsAsMs(0)).toBe('0.00 ms');
    expect(formatNsPerMiBAsMsPerMiB(52_000)).toBe('0.052 ms/MiB');
  });

  it('mirrors Python formatting for reference text', () => {
    expect(formatRatioAsPercent(0.6534)).toBe('65.3%');
    expect(formatIntegerGrouped(131072)).toBe('131,072');
    expect(formatIntegerGrouped(-1234567)).toBe('-1,234,567');
    expect(formatIntegerGrouped(999)).toBe('999');
    expect(formatFixedPy(Infinity, 2)).toBe('inf');
    expect(formatFixedPy(Number.NaN, 2)).toBe('nan');
  });
});
