import { describe, expect, it } from 'vitest';
import { bytesAxis, fmtBytes, fmtDriveLabel, fmtDuration, fmtGibOption, fmtLatencyMs, fmtMetric, fmtPlaceLabel, fmtRate, fmtRatio, fmtSpanNs, rateAxis } from '../../../src-renderer/format.ts';

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

  it('puts a memory axis in MiB/GiB in binary units and MB/GB in decimal ones, by its largest value', () => {
    expect(bytesAxis(439e6, dec)).toEqual({ divisor: 1e6, unit: 'MB' });
    expect(bytesAxis(439e6, bin)).toEqual({ divisor: 1024 ** 2, unit: 'MiB' });
    expect(bytesAxis(2.45 * 1024 ** 3, bin)).toEqual({ divisor: 1024 ** 3, unit: 'GiB' });
    // 1,000 MiB is under a GiB: still MiB; 1 GB decimal is GB.
    expect(bytesAxis(1000 * 1024 ** 2, bin)).toEqual({ divisor: 1024 ** 2, unit: 'MiB' });
    expect(bytesAxis(1e9, dec)).toEqual({ divisor: 1e9, unit: 'GB' });
    expect(bytesAxis(1, dec)).toEqual({ divisor: 1, unit: 'B' });
  });

  it('says a span of nanoseconds in ms under a second, in tenths of a second under a minute, then in minutes', () => {
    expect(fmtSpanNs(0)).toBe('0 ms');
    expect(fmtSpanNs(71.4e6)).toBe('71 ms');
    expect(fmtSpanNs(3.7e9)).toBe('3.7 s');
    expect(fmtSpanNs(200e9)).toBe('3 min 20 s');
    expect(fmtSpanNs(null)).toBe('—');
  });

  it("restates a drive's stored size from its byte count in the chosen units; a name whose size is not that count keeps its text", () => {
    const gib256 = 256 * 1024 ** 3;
    expect(fmtDriveLabel('virtual disk vda (256 GiB)', gib256, dec)).toBe('virtual disk vda (275 GB)');
    expect(fmtDriveLabel('virtual disk vda (256 GiB)', gib256, bin)).toBe('virtual disk vda (256 GiB)');
    expect(fmtDriveLabel('virtual disk vda (256 GiB)', null, dec)).toBe('virtual disk vda (256 GiB)'); // size not known: as stored
    expect(fmtDriveLabel('virtual disk vda (256 GiB)', 100e9, dec)).toBe('virtual disk vda (256 GiB)'); // another size: not this name's
    expect(fmtDriveLabel('Vendor X (nvme0n1, serial …1234)', 3.84e12, dec)).toBe('Vendor X (nvme0n1, serial …1234)');
    expect(fmtPlaceLabel({ systemLabel: 'lab1', driveLabel: 'virtual disk vda (256 GiB)', driveSizeBytes: gib256 }, dec)).toBe('lab1 · virtual disk vda (275 GB)');
    expect(fmtPlaceLabel({ systemLabel: 'lab1', driveLabel: null }, dec)).toBe('lab1');
  });

  it('states a size a run option gives in GiB in the chosen units, with its GiB beside a decimal size so it matches its field', () => {
    const spaced = (x: string): string => x.replace(/\u00a0/g, ' '); // a number and its unit never part
    expect(fmtGibOption(16, dec)).toBe('17.2\u00a0GB (16\u00a0GiB)');
    expect(spaced(fmtGibOption(0.125, dec))).toBe('134 MB (0.125 GiB)');
    expect(spaced(fmtGibOption(16, bin))).toBe('16.0 GiB');
    expect(fmtGibOption(0, dec)).toBe('none');
    expect(fmtGibOption(null, dec)).toBe('—');
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
