// The results file's summaries read from the engine's histograms, checked on known inputs.
import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { percentilesMs } from '../../../src-main/engine/report/results-builder.ts';
import { expectPercentilesOf, exponentialNs } from '../../support/known-distribution.ts';

describe('percentilesMs (the summary\'s *_latency_ms keys)', () => {
  it('gives each key the percentile it names, in ms, and the exact mean', () => {
    const values = exponentialNs();
    const h = new LatencyHistogram();
    for (const v of values) h.record(v);
    const p = percentilesMs(h);
    expectPercentilesOf(values.map((v) => v / 1e6), { 50: p.p50, 95: p.p95, 99: p.p99, 99.9: p.p999, 99.99: p.p9999 });
    expect(p.mean).toBeCloseTo(values.reduce((a, v) => a + v, 0) / values.length / 1e6, 12);
  });
});
