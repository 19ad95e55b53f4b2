import { describe, expect, it } from 'vitest';
import { aggregate, coefficientOfVariation, geometricMean, mean, median, percentile, ratio, sampleStdDev } from '../../../src-shared/domain/statistics.ts';
import { isPercentileMetric, METRICS } from '../../../src-shared/domain/store-types.ts';

// A seeded generator so the property checks are repeatable.
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('percentile (linear interpolation between closest ranks, numpy default)', () => {
  it('matches numpy.percentile on known values', () => {
    // numpy.percentile([1, 2, 3, 4], [0, 25, 50, 95, 100]) = [1, 1.75, 2.5, 3.85, 4]
    expect(percentile([4, 1, 3, 2], 0)).toBe(1);
    expect(percentile([4, 1, 3, 2], 25)).toBeCloseTo(1.75, 12);
    expect(percentile([4, 1, 3, 2], 50)).toBeCloseTo(2.5, 12);
    expect(percentile([4, 1, 3, 2], 95)).toBeCloseTo(3.85, 12);
    expect(percentile([4, 1, 3, 2], 100)).toBe(4);
    // Three trials: the P95 lies between the second-largest and the largest (h = 1.9).
    expect(percentile([10, 20, 30], 95)).toBeCloseTo(29, 12);
    expect(median([10, 20, 30])).toBe(20);
  });

  it('ignores missing and non-finite values and returns null when nothing is left', () => {
    expect(percentile([], 50)).toBeNull();
    expect(median([null, undefined, Number.NaN, Infinity])).toBeNull();
    expect(median([null, 5, undefined])).toBe(5);
    expect(() => percentile([1], 101)).toThrow(RangeError);
  });

  it('property: monotone in p, bounded by min and max, order-independent', () => {
    const rnd = lcg(7);
    for (let trial = 0; trial < 200; trial++) {
      const n = 1 + Math.floor(rnd() * 12);
      const xs = Array.from({ length: n }, () => Math.round((rnd() - 0.3) * 1e6) / 100);
      const shuffled = [...xs].sort(() => rnd() - 0.5);
      let prev = -Infinity;
      for (const p of [0, 5, 25, 50, 75, 95, 99, 100]) {
        const v = percentile(xs, p)!;
        expect(v).toBeGreaterThanOrEqual(prev - 1e-9);
        expect(v).toBeGreaterThanOrEqual(Math.min(...xs) - 1e-9);
        expect(v).toBeLessThanOrEqual(Math.max(...xs) + 1e-9);
        expect(percentile(shuffled, p)).toBeCloseTo(v, 9);
        prev = v;
      }
    }
  });
});

describe('spread', () => {
  it('uses the sample standard deviation (n − 1) for the CV', () => {
    expect(mean([2, 4, 4, 4, 5, 5, 7, 9])).toBe(5);
    expect(sampleStdDev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(Math.sqrt(32 / 7), 12);
    expect(coefficientOfVariation([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(Math.sqrt(32 / 7) / 5, 12);
    // 003's NVMe-only trials: 266, 261, 262 tok/s → CV ≈ 1 %.
    expect(coefficientOfVariation([266, 261, 262])).toBeCloseTo(0.01006, 4);
  });

  it('has no CV for one value or a zero mean', () => {
    expect(coefficientOfVariation([5])).toBeNull();
    expect(coefficientOfVariation([-1, 1])).toBeNull();
    expect(sampleStdDev([1])).toBeNull();
  });

  it('property: CV is invariant to scaling', () => {
    const rnd = lcg(11);
    for (let i = 0; i < 100; i++) {
      const xs = Array.from({ length: 2 + Math.floor(rnd() * 8) }, () => 1 + rnd() * 100);
      const k = 0.001 + rnd() * 1000;
      expect(coefficientOfVariation(xs.map((x) => x * k))).toBeCloseTo(coefficientOfVariation(xs)!, 9);
    }
  });
});

describe('aggregate, ratio, geometric mean', () => {
  it('summarises one metric over trials', () => {
    const a = aggregate([1692, 1501, 1879, null]);
    expect(a.n).toBe(3);
    expect(a.median).toBe(1692);
    expect(a.p95).toBeCloseTo(1692 + 0.9 * (1879 - 1692), 9);
    expect(a.min).toBe(1501);
    expect(a.max).toBe(1879);
    expect(a.cv).toBeGreaterThan(0.1);
    expect(aggregate([]).median).toBeNull();
    // Per-trial percentiles: their spread still, but no mean (never averaged: style.md).
    const p95s = aggregate([350, 360, 370], { percentiles: true });
    expect('mean' in p95s).toBe(false);
    expect(p95s).toMatchObject({ n: 3, median: 360, min: 350, max: 370 });
    expect(p95s.cv).toBeCloseTo(10 / 360, 9);
    expect(aggregate([350, 360, 370]).mean).toBe(360);
  });

  it('knows which catalogue metrics are per-trial percentiles', () => {
    expect(METRICS.filter((d) => isPercentileMetric(d.key)).map((d) => d.key)).toEqual([
      'e2e_p50_ms', 'e2e_p95_ms', 'e2e_p99_ms', 'storage_io_per_request_p95_ms', 'queue_wait_p95_ms',
      'gpu_read_p95_ms', 'gpu_write_p95_ms', 'cpu_read_p95_ms', 'cpu_write_p95_ms', 'storage_read_p95_ms', 'storage_write_p95_ms',
      'storage_read_device_p95_ms', 'storage_write_device_p95_ms', 'storage_read_p95_ms_per_mib', 'storage_write_p95_ms_per_mib', 'event_loop_lag_p99_ms',
    ]);
  });

  it('ratio refuses a zero or missing denominator', () => {
    expect(ratio(2, 4)).toBe(0.5);
    expect(ratio(2, 0)).toBeNull();
    expect(ratio(null, 1)).toBeNull();
  });

  it('geometric mean of ratios is symmetric under inversion', () => {
    const r = [2, 0.5, 4, 1];
    expect(geometricMean(r)).toBeCloseTo(Math.SQRT2, 12);
    expect(geometricMean(r.map((x) => 1 / x))).toBeCloseTo(1 / Math.SQRT2, 12);
    expect(geometricMean([])).toBeNull();
    // A ratio of 0 (A did nothing where B did) is not dropped: it makes the mean 0.
    expect(geometricMean([2, 0, 8])).toBe(0);
    expect(geometricMean([2, -1])).toBeNull();
  });
});
