// The results file's summaries read from the engine's histograms, checked on known inputs.
import { describe, expect, it } from 'vitest';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { RunRecorder } from '../../../src-main/engine/metrics/run-recorder.ts';
import { percentilesMs, qosMetrics, storageHealth } from '../../../src-main/engine/report/results-builder.ts';
import { expectPercentilesOf, exponentialNs } from '../../support/known-distribution.ts';
import { MemoryTier, TerminalMemoryTier, patternSource } from '../../support/memory-tier.ts';

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

describe('qosMetrics (the recorder counts requests over their class target; the results say what share met it)', () => {
  const request = (qos: 'interactive' | 'responsive' | 'batch', endToEndMs: number) =>
    ({ qos, generationTokens: 1, queueWaitNs: 0, storageNs: 0, storageNsByTier: { gpu: 0, cpu: 0, storage: 0 }, generationNs: 0, generationSleptNs: 0, serviceNs: endToEndMs * 1e6, endToEndNs: endToEndMs * 1e6, prefillNs: null, decodeNs: null }) as const;

  it('3 of 10 interactive requests over 50 ms: compliance 0.7, not met; 1 of 20 responsive over 100 ms: 0.95, met', () => {
    const rec = new RunRecorder({ interactive: 50, responsive: 100, batch: 1000 });
    for (const v of [10, 15, 20, 25, 30, 35, 40, 60, 70, 80]) rec.complete(request('interactive', v));
    for (let i = 1; i <= 19; i++) rec.complete(request('responsive', 50 + i));
    rec.complete(request('responsive', 150));
    expect(rec.qos.get('interactive')!.violations).toBe(3);
    expect(rec.qos.get('responsive')!.violations).toBe(1);
    const q = qosMetrics(rec);
    expect(q.batch).toEqual({ no_data: true });
    const interactive = q.interactive as Exclude<typeof q.interactive, { no_data: true }>;
    expect(interactive.total_requests).toBe(10);
    expect(interactive.sla).toMatchObject({ target_p95_ms: 50, compliance: 0.7, met: false });
    // Its P95 is the 10th value (80 ms), to HDR's 0.1 %; the SLA states the same one.
    expect(interactive.latency_ms.p95).toBeCloseTo(80, 1);
    expect(interactive.latency_ms.max).toBeCloseTo(80, 1);
    expect(interactive.latency_ms.mean).toBeCloseTo(38.5, 9);
    expect(interactive.sla.actual_p95_ms).toBe(interactive.latency_ms.p95);
    const responsive = q.responsive as Exclude<typeof q.responsive, { no_data: true }>;
    // Exactly 95 % within target meets it.
    expect(responsive.sla).toMatchObject({ target_p95_ms: 100, compliance: 0.95, met: true });
    expect(responsive.total_requests).toBe(20);
  });
});

describe('storageHealth (the latency profile\'s criteria)', () => {
  const ref = (key: string, sizeBytes: number) => ({ key, keyHash: BigInt(key.length + 1), sizeBytes });

  it('states each tier\'s P95 and the hit rate as measured, and passes each only when it beats its target', async () => {
    const cache = new MultiTierCache([
      { backend: new MemoryTier('cpu'), budgetBytes: 1000 },
      { backend: new TerminalMemoryTier('storage'), budgetBytes: 100_000 },
    ]);
    // Above 95 % of the CPU budget: placed in storage. The small one stays in the CPU tier.
    expect((await cache.write(ref('big', 960), patternSource(1))).tier).toBe('storage');
    expect((await cache.write(ref('small', 100), patternSource(2))).tier).toBe('cpu');
    // 1 hit in 5 lookups: a 20 % hit rate, under the 30 % target.
    expect((await cache.read('big', 'user')).hit).toBe(true);
    for (const k of ['m1', 'm2', 'm3', 'm4']) expect((await cache.read(k, 'user')).hit).toBe(false);
    const rate = cache.hits.hits / (cache.hits.hits + cache.hits.misses);
    expect(rate).toBe(0.2);

    const health = storageHealth({ options: { performanceProfile: 'latency' }, cache }, { cache_hit_rate: rate }, 1, { read: null, write: null });
    const st = (t: 'cpu' | 'storage') => cache.tierStats.get(t)!;
    const p95Ms = (h: LatencyHistogram) => h.percentileNs(95) / 1e6;
    expect(health.criteria.map((c) => [c.name, c.target, c.actual])).toEqual([
      ['Storage Tier Write Total P95 < 500ms', 500, p95Ms(st('storage').write.latency)],
      ['Storage Tier Read Total P95 < 200ms', 200, p95Ms(st('storage').read.latency)],
      ['CPU RAM P95 < 150ms', 150, p95Ms(st('cpu').write.latency)],
      ['Cache Hit Rate > 30%', 0.3, 0.2],
    ]);
    for (const c of health.criteria) {
      expect(c.passed, c.name).toBe(c.name.includes(' < ') ? (c.actual as number) < (c.target as number) : (c.actual as number) > (c.target as number));
    }
    expect(health.criteria.at(-1)!.passed).toBe(false);
    expect(health).toMatchObject({ overall_status: 'FAIL', passed_count: health.criteria.filter((c) => c.passed).length, total_count: 4 });

    // Two more hits: 3 in 7 lookups, 43 %, over the target.
    await cache.read('big', 'user');
    await cache.read('small', 'user');
    const rate2 = cache.hits.hits / (cache.hits.hits + cache.hits.misses);
    const again = storageHealth({ options: { performanceProfile: 'latency' }, cache }, { cache_hit_rate: rate2 }, 1, { read: null, write: null });
    expect(again.criteria.at(-1)).toMatchObject({ name: 'Cache Hit Rate > 30%', actual: 3 / 7, passed: true });
  });
});
