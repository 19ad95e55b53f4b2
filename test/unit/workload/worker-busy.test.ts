// The rule that names what bound a queue that outgrew its workers, from their measured busy time
// (src-shared/domain/worker-busy.ts). The H200 run that showed the defect: 163 requests completed,
// per-request cache I/O 159 ms mean, simulated generation 3,944 ms mean, the storage tier read
// nothing; every message said the load exceeded what the storage serves.
import { describe, expect, it } from 'vitest';
import {
  GENERATION_BOUND_SHARE,
  addWorkersBusy,
  busySplit,
  busySplitWords,
  noWorkersBusy,
  percentText,
  queueBoundCause,
  queueBoundWords,
  type WorkersBusyNs,
} from '../../../src-shared/domain/worker-busy.ts';

const busy = (requests: number, ms: { cacheIo: Partial<Record<'gpu' | 'cpu' | 'storage', number>>; generation: number; other?: number }): WorkersBusyNs => {
  const byTier = { gpu: 0, cpu: 0, storage: 0, ...ms.cacheIo };
  const cacheIoNs = (byTier.gpu + byTier.cpu + byTier.storage) * 1e6 * requests;
  const generationNs = ms.generation * 1e6 * requests;
  return {
    requests,
    totalNs: cacheIoNs + generationNs + (ms.other ?? 0) * 1e6 * requests,
    cacheIoNs,
    cacheIoByTierNs: { gpu: byTier.gpu * 1e6 * requests, cpu: byTier.cpu * 1e6 * requests, storage: byTier.storage * 1e6 * requests },
    generationNs,
  };
};
const realistic = { mode: 'realistic', nsPerToken: 30e6 };

describe('what bound the workers: the measured split names it', () => {
  it('names the simulated generation when it took at least half the busy time, not the cache or the drive (the H200 GPU-tier run)', () => {
    const s = busySplit(busy(163, { cacheIo: { gpu: 159 }, generation: 3944 }))!;
    expect(s).toMatchObject({ requests: 163, bound: 'generation', cacheIoTier: { tier: 'gpu', share: 1 } });
    const w = queueBoundWords(s, { scope: 'in the measured window', generation: realistic, traceOnly: false });
    expect(queueBoundCause(w)).toBe(
      'the workers spent 96 % of the busy time of the 163 requests completed in the measured window in simulated generation (realistic, 30 ms/token) ' +
        'and 4 % in cache I/O (100 % of it in the GPU tier): the generation time and the user count offer more load than the workers serve',
    );
    expect(w.notWhat).toBe('the cache or the drive');
    expect(w.remedy).toBe('fewer users, a longer think time or a faster generation mode');
    expect(queueBoundCause(w)).not.toContain('storage');
  });

  it('blames the storage only when the storage tier took most of the cache I/O, and names another tier that did', () => {
    const storage = queueBoundWords(busySplit(busy(40, { cacheIo: { storage: 900, cpu: 20 }, generation: 60 })), { scope: 'so far', generation: { mode: 'fast', nsPerToken: 2e6 }, traceOnly: false });
    expect(queueBoundCause(storage)).toBe(
      'the configuration offers more load than the storage serves: the workers spent 94 % of the busy time of the 40 requests completed so far in cache I/O (98 % of it in the storage tier) ' +
        'and 6 % in simulated generation (fast, 2 ms/token)',
    );
    expect(storage).toMatchObject({ bound: 'cache', notWhat: 'storage', remedy: 'fewer users or a longer think time' });
    const gpu = queueBoundWords(busySplit(busy(40, { cacheIo: { gpu: 700, storage: 100 }, generation: 200 })), { scope: 'in the measured window', generation: realistic, traceOnly: false });
    expect(gpu.offer).toBe('the configuration offers more load than the cache (its GPU tier) serves');
    expect(gpu.notWhat).toBe('the cache');
    // No tier took half of the cache I/O: the cache as a whole.
    expect(queueBoundWords(busySplit(busy(40, { cacheIo: { gpu: 300, cpu: 300, storage: 300 }, generation: 100 })), { scope: 'in the measured window', generation: realistic, traceOnly: false }).offer).toBe(
      'the configuration offers more load than the cache serves',
    );
  });

  it('says the waits between cache operations once they are a visible share, and blames the cache, not a tier, when they outweigh its I/O', () => {
    const w = queueBoundWords(busySplit(busy(10, { cacheIo: { storage: 100 }, generation: 300, other: 600 })), { scope: 'in the measured window', generation: realistic, traceOnly: false });
    expect(queueBoundCause(w)).toBe(
      'the configuration offers more load than the cache serves: the workers spent 10 % of the busy time of the 10 requests completed in the measured window in cache I/O (100 % of it in the storage tier), ' +
        '60 % between cache operations (waiting for room in a tier, write admission or an entry being written) and 30 % in simulated generation (realistic, 30 ms/token)',
    );
  });

  it('decides at GENERATION_BOUND_SHARE of the busy time, and says a share that rounds to 0 as under 1 %', () => {
    expect(GENERATION_BOUND_SHARE).toBe(0.5);
    expect(busySplit(busy(1, { cacheIo: { cpu: 500 }, generation: 500 }))!.bound).toBe('generation');
    expect(busySplit(busy(1, { cacheIo: { cpu: 501 }, generation: 499 }))!.bound).toBe('cache');
    expect(busySplitWords(busySplit(busy(1, { cacheIo: { cpu: 10 }, generation: 990 }))!, 'so far', null)).toBe(
      'the workers spent 99 % of the busy time of the 1 request completed so far in simulated generation and 1 % in cache I/O (100 % of it in the CPU tier)',
    );
    expect(percentText(0.004)).toBe('under 1 %');
    expect(percentText(0)).toBe('0 %');
    expect(percentText(0.996)).toBe('100 %');
  });

  it('keeps the engine as the server in trace-only mode, with no split', () => {
    const w = queueBoundWords(busySplit(busy(10, { cacheIo: {}, generation: 100 })), { scope: 'in the measured window', generation: realistic, traceOnly: true });
    expect(w).toEqual({ bound: null, offer: 'the configuration offers more load than the engine serves (trace-only mode: no storage I/O)', split: null, notWhat: 'the engine', remedy: 'fewer users or a longer think time' });
    expect(queueBoundCause(w)).toBe(w.offer);
  });

  it('blames nothing before any request completed, nor for an engine that sends no busy time', () => {
    expect(busySplit(noWorkersBusy())).toBeNull();
    expect(busySplit(undefined)).toBeNull();
    expect(busySplit(null)).toBeNull();
    const w = queueBoundWords(null, { scope: 'in the measured window', generation: realistic, traceOnly: false });
    expect(queueBoundCause(w)).toBe('the configuration offers more load than the workers serve (no request has completed yet, so what held them is not measured)');
    expect(w.notWhat).toBe('storage');
    expect(queueBoundWords(null, { scope: 'in the measured window', generation: null, traceOnly: false, past: true }).offer).toBe('the configuration offered more load than the workers served');
  });

  it('adds the warm-up and the window into a new total', () => {
    const a = busy(2, { cacheIo: { gpu: 10 }, generation: 100 });
    const b = busy(3, { cacheIo: { storage: 20 }, generation: 50 });
    expect(addWorkersBusy(a, b)).toEqual({ requests: 5, totalNs: a.totalNs + b.totalNs, cacheIoNs: 80e6, cacheIoByTierNs: { gpu: 20e6, cpu: 0, storage: 60e6 }, generationNs: 350e6 });
    expect(a.requests).toBe(2);
  });
});
