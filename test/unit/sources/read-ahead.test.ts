// How far a replay reads ahead of the scheduler: up to 4096 requests, but fewer when requests carry
// many prefix blocks (a Mooncake line can list thousands of hash IDs), so that the blocks held stay
// under a million however long the prompts are. A trace of 2,000 such lines used to exhaust the heap.
import { describe, expect, it } from 'vitest';
import { ReplayWorkload, type ReplayFeed, type ReplaySpec } from '../../../src-main/engine/workload/sources/replay-source.ts';
import { resolveWorkloadProfile } from '../../../src-main/engine/workload/workload-profile.ts';

/** A feed of `total` requests with `blocksEach` prefix blocks each; remembers what it was asked for. */
function feed(total: number, blocksEach: number): ReplayFeed & { asked: number[]; handedOut: () => number } {
  let n = 0;
  const asked: number[] = [];
  return {
    asked,
    handedOut: () => n,
    async pull(max: number, maxBlocks: number): Promise<ReplaySpec[]> {
      asked.push(max);
      const out: ReplaySpec[] = [];
      while (out.length < max && out.length * blocksEach < (maxBlocks ?? Infinity) && n < total) {
        const i = n++;
        out.push({
          arrivalNs: i, cycle: 0, userIndex: 0, contextTokens: blocksEach * 512, generationTokens: 1, conversationId: null, turn: 1,
          prefixBlockCount: blocksEach,
          names: () => ({
            userId: 'u', requestId: `r${i}`, cacheKey: `k${i}`,
            prefixBlocks: blocksEach === 0 ? null : Array.from({ length: blocksEach }, (_, b) => ({ key: `b${b}`, tokens: 512 })),
          }),
        });
      }
      return out;
    },
    activeUsers: () => 1,
    describe: () => ({}),
  };
}

async function replay(f: ReplayFeed): Promise<ReplayWorkload> {
  return ReplayWorkload.start(f, {
    kind: 'mooncake', paced: false, seed: 1, profile: resolveWorkloadProfile({}).profile, mode: 'standard', systemPrompts: false,
    ragDocuments: null, prepopulatedKeys: [], log: () => {},
  });
}

async function drain(w: ReplayWorkload, f: { handedOut: () => number }): Promise<number> {
  let maxAhead = 0;
  for (;;) {
    await w.ready();
    if (w.peekArrivalNs() === Number.POSITIVE_INFINITY) return maxAhead;
    w.next();
    maxAhead = Math.max(maxAhead, f.handedOut() - w.issued);
  }
}

describe('replay read-ahead', () => {
  it('reads 4096 requests ahead when they carry no prefix blocks', async () => {
    const f = feed(10_000, 0);
    const w = await replay(f);
    await drain(w, f);
    expect(w.issued).toBe(10_000);
    expect(Math.max(...f.asked)).toBe(4096);
  });

  it('holds fewer requests, and under a million blocks, when each carries 12,000', async () => {
    const f = feed(400, 12_000);
    const w = await replay(f);
    const maxAhead = await drain(w, f);
    expect(w.issued).toBe(400);
    expect(f.asked.slice(1).every((m) => m === Math.floor(500_000 / 12_000))).toBe(true);
    expect(maxAhead * 12_000).toBeLessThanOrEqual(1_000_000);
  });

  it('holds under a million blocks from the first pull on, before the blocks per request are known (65,536 each)', async () => {
    // The first pull asked for 64 requests whatever they carried: 4 M blocks, seconds of the engine's
    // event loop and a gigabyte of heap before the first request was issued.
    const f = feed(200, 65_536);
    const w = await replay(f);
    expect(f.handedOut() * 65_536).toBeLessThanOrEqual(1_000_000);
    const maxAhead = await drain(w, f);
    expect(w.issued).toBe(200);
    expect(maxAhead * 65_536).toBeLessThanOrEqual(1_000_000);
  });
});
