// Zero-valued samples are zeros: --generation-mode none gives generation latencies of 0, and their
// percentiles must read 0 ms as the reference's do, not the histogram's smallest unit (1 ns).
import { describe, expect, it } from 'vitest';
import { LatencyHistogram, type LatencySummary } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { expectPercentilesOf, exponentialNs } from '../../support/known-distribution.ts';

const reported = (s: LatencySummary) => ({ 50: s.p50Ns, 95: s.p95Ns, 99: s.p99Ns, 99.9: s.p999Ns, 99.99: s.p9999Ns });

describe('LatencyHistogram', () => {
  it('only zeros: every percentile, the min and the max are 0', () => {
    const h = new LatencyHistogram();
    for (let i = 0; i < 100; i++) h.record(0);
    expect(h.summary()).toEqual({ count: 100, sumNs: 0, meanNs: 0, minNs: 0, maxNs: 0, p50Ns: 0, p95Ns: 0, p99Ns: 0, p999Ns: 0, p9999Ns: 0 });
    expect(h.percentileNs(99.99)).toBe(0);
  });

  it('zeros beside other values: the low percentiles and the min are 0, the rest unchanged', () => {
    const h = new LatencyHistogram();
    for (let i = 0; i < 90; i++) h.record(0);
    for (let i = 0; i < 10; i++) h.record(2_000_000);
    const s = h.summary();
    expect(s.minNs).toBe(0);
    expect(s.p50Ns).toBe(0);
    expect(s.p95Ns).toBeGreaterThanOrEqual(2_000_000);
    expect(s.p95Ns).toBeLessThan(2_000_000 * 1.001);
    expect(s.maxNs).toBeGreaterThanOrEqual(2_000_000);
  });

  it('no zeros: the min is the smallest value recorded, as before', () => {
    const h = new LatencyHistogram();
    h.record(5000);
    h.record(7000);
    expect(h.summary().minNs).toBe(5000);
  });

  it('zeros survive encoding, decoding and merging', () => {
    const h = new LatencyHistogram();
    for (let i = 0; i < 10; i++) h.record(0);
    const back = LatencyHistogram.decode(h.encode(), h.sumNs);
    expect(back.count).toBe(10);
    expect(back.summary().p9999Ns).toBe(0);
    const merged = new LatencyHistogram();
    merged.record(1000);
    merged.merge(back);
    expect(merged.summary()).toMatchObject({ count: 11, minNs: 0, p50Ns: 0 });
  });

  it('every percentile lies between the recorded min and max (HDR bucket edges lie outside them)', () => {
    const h = new LatencyHistogram();
    // The review's run: HDR put P95 at its bucket's top, 3,728,736,255 ns, above the max recorded.
    for (const v of [1_234_567, 2_245_750_000, 3_700_000_000, 3_727_616_818]) h.record(v);
    const s = h.summary();
    expect(s.maxNs).toBe(3_727_616_818);
    expect(s.minNs).toBe(1_234_567);
    for (const p of [s.p50Ns, s.p95Ns, s.p99Ns, s.p999Ns, s.p9999Ns]) {
      expect(p).toBeLessThanOrEqual(s.maxNs);
      expect(p).toBeGreaterThanOrEqual(s.minNs);
    }
    expect(s.p95Ns).toBe(3_727_616_818);
    // The 0th percentile is the bottom edge of the lowest bucket, below the smallest value recorded.
    expect(h.percentileNs(0)).toBe(1_234_567);
    expect(h.percentileNs(100)).toBe(3_727_616_818);
    // A decoded histogram keeps only buckets: its min and max are bucket edges, and percentiles stay within them.
    const back = LatencyHistogram.decode(h.encode(), h.sumNs).summary();
    expect(back.p95Ns).toBeLessThanOrEqual(back.maxNs);
    expect(back.p50Ns).toBeGreaterThanOrEqual(back.minNs);
  });

  it('a known distribution: P50, P95, P99, P99.9 and P99.99 are the exact percentiles to HDR precision', () => {
    const values = exponentialNs();
    const h = new LatencyHistogram();
    for (const v of values) h.record(v);
    expectPercentilesOf(values, reported(h.summary()));
    expect(h.percentileNs(99)).toBe(h.summary().p99Ns);
  });

  it('merging and decoding keep the sum, so the mean of merged trials or ranks is Σsum ÷ Σcount', () => {
    const values = exponentialNs();
    // Two halves recorded apart (the odd and even quantiles), as two ranks would, then encoded as stored.
    const halves = [values.filter((_, i) => i % 2 === 0), values.filter((_, i) => i % 2 === 1)].map((vs) => {
      const h = new LatencyHistogram();
      for (const v of vs) h.record(v);
      return LatencyHistogram.decode(h.encode(), h.sumNs);
    });
    const total = values.reduce((a, v) => a + v, 0);
    expect(halves[0].sumNs + halves[1].sumNs).toBe(total);
    const merged = new LatencyHistogram();
    for (const h of halves) merged.merge(h);
    expect(merged.count).toBe(values.length);
    expect(merged.sumNs).toBe(total);
    expect(merged.summary().meanNs).toBe(total / values.length);
    expect(merged.copy().summary().meanNs).toBe(total / values.length);
    expectPercentilesOf(values, reported(merged.summary()));
  });
});
