import { describe, expect, it } from 'vitest';
import { RAW_LATENCY_SAMPLE_REQUESTS, RawLatencySample } from '../../../src-main/engine/metrics/raw-latency-sample.ts';
import { RunRecorder } from '../../../src-main/engine/metrics/run-recorder.ts';

/** Request i's latencies encode i: end-to-end i + 0.5 s, storage i s, generation 0.25 s; prefill on even i, decode on odd i. */
function fill(sample: RawLatencySample, n: number): void {
  for (let i = 0; i < n; i++) sample.add(i + 0.5, i, 0.25, i % 2 === 0 ? i + 0.1 : null, i % 2 === 1 ? i + 0.2 : null);
}

describe('RawLatencySample: the reference lists keep every request up to the cap, then a uniform sample', () => {
  it('keeps every request, in completion order, up to the cap', () => {
    const s = new RawLatencySample(10);
    fill(s, 10);
    const l = s.lists();
    expect(l.storageS).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(l.endToEndS).toEqual(l.storageS.map((i) => i + 0.5));
    expect(l.prefillS).toEqual([0.1, 2.1, 4.1, 6.1, 8.1]);
    expect(l.decodeS).toEqual([1.2, 3.2, 5.2, 7.2, 9.2]);
    expect(s.facts()).toEqual({ cap_requests: 10, requests_completed: 10, requests_kept: 10, sampled: false });
  });

  it('past the cap keeps exactly cap requests: uniform over the run, in completion order, a request\'s latencies together', () => {
    const cap = 2000;
    const n = 200_000;
    const s = new RawLatencySample(cap);
    fill(s, n);
    const l = s.lists();
    expect(s.facts()).toEqual({ cap_requests: cap, requests_completed: n, requests_kept: cap, sampled: true });
    expect(l.storageS).toHaveLength(cap);
    // Completion order, no request twice.
    for (let i = 1; i < cap; i++) expect(l.storageS[i]).toBeGreaterThan(l.storageS[i - 1]);
    // Parallel: index i is one request in each list.
    expect(l.endToEndS).toEqual(l.storageS.map((i) => i + 0.5));
    expect(l.generationS).toEqual(l.storageS.map(() => 0.25));
    expect(l.prefillS).toEqual(l.storageS.filter((i) => i % 2 === 0).map((i) => i + 0.1));
    expect(l.decodeS).toEqual(l.storageS.filter((i) => i % 2 === 1).map((i) => i + 0.2));
    // Uniform: each tenth of the run holds about a tenth of the sample (a fixed seed: no flakiness).
    for (let d = 0; d < 10; d++) {
      const inDecile = l.storageS.filter((i) => i >= (d * n) / 10 && i < ((d + 1) * n) / 10).length;
      expect(inDecile / cap, `decile ${d}`).toBeGreaterThan(0.08);
      expect(inDecile / cap, `decile ${d}`).toBeLessThan(0.12);
    }
  });

  it('bounds a recorder\'s lists, while its histograms count every request', () => {
    expect(RAW_LATENCY_SAMPLE_REQUESTS).toBe(50_000);
    const rec = new RunRecorder({ interactive: 50, responsive: 100, batch: 1000 }, 100);
    for (let i = 0; i < 5000; i++) {
      rec.complete({ qos: 'batch', generationTokens: 1, queueWaitNs: 0, storageNs: 1e6, storageNsByTier: { gpu: 0, cpu: 1e6, storage: 0 }, generationNs: 0, generationSleptNs: 0, serviceNs: (i + 1) * 1e6, endToEndNs: (i + 1) * 1e6, prefillNs: 1e6, decodeNs: null });
    }
    expect(rec.rawLatencies.lists().endToEndS).toHaveLength(100);
    expect(rec.rawLatencies.lists().prefillS).toHaveLength(100);
    expect(rec.endToEnd.count).toBe(5000);
    expect(rec.endToEnd.percentileNs(50) / 1e6).toBeCloseTo(2500, -1);
    rec.reset();
    expect(rec.rawLatencies.facts()).toEqual({ cap_requests: 100, requests_completed: 0, requests_kept: 0, sampled: false });
  });
});
