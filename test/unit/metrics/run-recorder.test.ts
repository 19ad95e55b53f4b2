import { describe, expect, it } from 'vitest';
import { RunRecorder } from '../../../src-main/engine/metrics/run-recorder.ts';

const TARGETS = { interactive: 50, responsive: 100, batch: 1000 };

describe('RunRecorder.reset (the window opening after a warm-up)', () => {
  it('zeroes every counter, list and distribution in place and keeps the QoS targets', () => {
    const rec = new RunRecorder(TARGETS);
    const same = rec;
    for (let i = 0; i < 5; i++) {
      rec.complete({ qos: 'interactive', generationTokens: 100, queueWaitNs: 1e6, storageNs: 2e6, storageNsByTier: { gpu: 0, cpu: 2e6, storage: 0 }, generationNs: 0, generationSleptNs: 0, serviceNs: 79e6, endToEndNs: 80e6, prefillNs: 1e6, decodeNs: 1e6 });
    }
    expect(rec.busy.requests).toBe(5);
    rec.decodeBytesRead = 123;
    rec.prefixBlockHits = 4;
    rec.multiTurnHits = 7;
    rec.reset();
    expect(same).toBe(rec);
    const fresh = new RunRecorder(TARGETS);
    for (const [key, value] of Object.entries(fresh)) {
      if (typeof value === 'number') expect((rec as unknown as Record<string, number>)[key], key).toBe(0);
    }
    expect(rec.rawLatencies.lists().endToEndS).toEqual([]);
    expect(rec.rawLatencies.lists().decodeS).toEqual([]);
    expect(rec.endToEnd.count + rec.queueWait.count + rec.storageIo.count + rec.decode.count).toBe(0);
    expect(rec.busy).toEqual({ requests: 0, totalNs: 0, cacheIoNs: 0, cacheIoByTierNs: { gpu: 0, cpu: 0, storage: 0 }, generationNs: 0 });
    const q = rec.qos.get('interactive')!;
    expect(q.latency.count).toBe(0);
    expect(q.violations).toBe(0);
    expect(q.targetP95Ms).toBe(50);
    // It records again from zero.
    rec.complete({ qos: 'batch', generationTokens: 10, queueWaitNs: 0, storageNs: 0, storageNsByTier: { gpu: 0, cpu: 0, storage: 0 }, generationNs: 0, generationSleptNs: 0, serviceNs: 1e6, endToEndNs: 1e6, prefillNs: 0, decodeNs: 0 });
    expect(rec.requestsCompleted).toBe(1);
    expect(rec.tokensGenerated).toBe(10);
  });
});

describe("RunRecorder.busy (the workers' busy time by phase, over completed requests)", () => {
  it('sums each completed request beside its histograms: the cache I/O by tier, the generation as slept, the whole service time', () => {
    const rec = new RunRecorder(TARGETS);
    rec.complete({ qos: 'batch', generationTokens: 10, queueWaitNs: 5e6, storageNs: 3e6, storageNsByTier: { gpu: 1e6, cpu: 0, storage: 2e6 }, generationNs: 300e6, generationSleptNs: 301e6, serviceNs: 305e6, endToEndNs: 310e6, prefillNs: 2e6, decodeNs: 1e6 });
    rec.complete({ qos: 'batch', generationTokens: 0, queueWaitNs: 0, storageNs: 4e6, storageNsByTier: { gpu: 4e6, cpu: 0, storage: 0 }, generationNs: 0, generationSleptNs: 0, serviceNs: 4.5e6, endToEndNs: 4.5e6, prefillNs: null, decodeNs: 4e6 });
    expect(rec.busy).toEqual({ requests: 2, totalNs: 309.5e6, cacheIoNs: 7e6, cacheIoByTierNs: { gpu: 5e6, cpu: 0, storage: 2e6 }, generationNs: 301e6 });
    // The cache I/O is the per-request histogram's sum, the generation the sleeps as slept (not the planned 300 ms).
    expect(rec.busy.cacheIoNs).toBe(rec.storageIo.sumNs);
    expect(rec.generation.sumNs).toBe(300e6);
  });
});
