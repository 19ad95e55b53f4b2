import { describe, expect, it } from 'vitest';
import { RunRecorder } from '../../../src-main/engine/metrics/run-recorder.ts';

const TARGETS = { interactive: 50, responsive: 100, batch: 1000 };

describe('RunRecorder.reset (the window opening after a warm-up)', () => {
  it('zeroes every counter, list and distribution in place and keeps the QoS targets', () => {
    const rec = new RunRecorder(TARGETS);
    const same = rec;
    for (let i = 0; i < 5; i++) {
      rec.complete({ qos: 'interactive', generationTokens: 100, queueWaitNs: 1e6, storageNs: 2e6, generationNs: 0, endToEndNs: 80e6, prefillNs: 1e6, decodeNs: 1e6 });
    }
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
    const q = rec.qos.get('interactive')!;
    expect(q.latency.count).toBe(0);
    expect(q.violations).toBe(0);
    expect(q.targetP95Ms).toBe(50);
    // It records again from zero.
    rec.complete({ qos: 'batch', generationTokens: 10, queueWaitNs: 0, storageNs: 0, generationNs: 0, endToEndNs: 1e6, prefillNs: 0, decodeNs: 0 });
    expect(rec.requestsCompleted).toBe(1);
    expect(rec.tokensGenerated).toBe(10);
  });
});
