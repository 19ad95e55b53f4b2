import { describe, expect, it } from 'vitest';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import type { ChunkSource } from '../../../src-main/engine/tiers/tier-backend.ts';
import { Semaphore } from '../../../src-main/engine/workload/request-queue.ts';
import { MemoryTier, TerminalMemoryTier, patternSource, threeTierCache } from '../../support/memory-tier.ts';

const ref = (key: string, sizeBytes: number) => ({ key, keyHash: BigInt(key.length + 1), sizeBytes });

function twoTier(cpuBudget: number, storageBudget: number) {
  const cpu = new MemoryTier('cpu');
  const storage = new TerminalMemoryTier('storage');
  const cache = new MultiTierCache([
    { backend: cpu, budgetBytes: cpuBudget },
    { backend: storage, budgetBytes: storageBudget },
  ]);
  return { cpu, storage, cache };
}

describe('MultiTierCache placement rules', () => {
  it('puts a new entry in the fastest tier with room', async () => {
    const { cache } = twoTier(1000, 10_000);
    const w = await cache.write(ref('a', 100), patternSource(1));
    expect(w).toMatchObject({ written: true, tier: 'cpu' });
    expect(cache.tierOf('a')).toBe('cpu');
  });

  it('keeps a non-terminal tier at or below 80 % of its budget by demoting LRU entries', async () => {
    const { cache } = twoTier(1000, 10_000);
    for (let i = 0; i < 8; i++) await cache.write(ref(`e${i}`, 100), patternSource(i));
    expect(cache.usage()[0]).toMatchObject({ name: 'cpu', usedBytes: 800, entries: 8 });
    await cache.write(ref('e8', 100), patternSource(8));
    const [cpu, storage] = cache.usage();
    expect(cpu.usedBytes).toBe(800);
    expect(storage.entries).toBe(1);
    expect(cache.tierOf('e0')).toBe('storage');
    expect(cache.tierOf('e8')).toBe('cpu');
  });

  it('declines entries above 95 % of a non-terminal budget, and takes one between 80 % and 95 % when nearly empty', async () => {
    const { cache } = twoTier(1000, 10_000);
    expect((await cache.write(ref('big', 960), patternSource(1))).tier).toBe('storage');
    expect((await cache.write(ref('fits', 940), patternSource(2))).tier).toBe('cpu');
  });

  it('demotes in LRU order: last access first, so a recently read entry stays', async () => {
    const { cache } = twoTier(1000, 10_000);
    for (const k of ['a', 'b', 'c', 'd']) await cache.write(ref(k, 200), patternSource(1));
    expect(cache.lruOrder('cpu')).toEqual(['a', 'b', 'c', 'd']);
    await cache.read('a', 'user');
    expect(cache.lruOrder('cpu')).toEqual(['b', 'c', 'd', 'a']);
    await cache.write(ref('e', 200), patternSource(1));
    expect(cache.tierOf('b')).toBe('storage');
    expect(cache.tierOf('a')).toBe('cpu');
  });

  it('a write to an existing key changes nothing, not even the LRU order', async () => {
    const { cache } = twoTier(1000, 10_000);
    for (const k of ['a', 'b', 'c']) await cache.write(ref(k, 200), patternSource(1));
    const again = await cache.write(ref('a', 200), patternSource(1));
    expect(again.written).toBe(false);
    expect(cache.lruOrder('cpu')).toEqual(['a', 'b', 'c']);
  });

  it('cascades demotions through three tiers, moving the real bytes, counted in both tiers and timed apart', async () => {
    const { gpu, cpu, storage, cache } = threeTierCache({ gpu: 500, cpu: 500, storage: 100_000 });
    for (let i = 0; i < 12; i++) await cache.write(ref(`k${i}`, 100), patternSource(i));
    // GPU holds the 4 newest, CPU the 4 before them, storage the 4 oldest.
    expect(cache.usage().map((u) => u.entries)).toEqual([4, 4, 4]);
    expect(['k0', 'k1', 'k2', 'k3'].map((k) => cache.tierOf(k))).toEqual(['storage', 'storage', 'storage', 'storage']);
    expect(['k4', 'k7'].map((k) => cache.tierOf(k))).toEqual(['cpu', 'cpu']);
    expect(cache.tierOf('k11')).toBe('gpu');
    // The bytes that reached storage are the ones written first, unchanged by two moves.
    const seen: Buffer[] = [];
    await cache.read('k0', 'user', () => async (chunk) => {
      seen.push(Buffer.from(chunk.buffer));
    });
    const expected = Buffer.alloc(100);
    await patternSource(0)({ index: 0, entryOffsetBytes: 0, buffer: expected.subarray(0, 64) });
    await patternSource(0)({ index: 1, entryOffsetBytes: 64, buffer: expected.subarray(64) });
    expect(Buffer.concat(seen)).toEqual(expected);
    const g2c = cache.demotions.get('gpu->cpu')!;
    const c2s = cache.demotions.get('cpu->storage')!;
    expect(g2c.count).toBe(8);
    expect(c2s.count).toBe(4);
    expect(g2c.latency.count).toBe(8);
    expect(cache.tierStats.get('gpu')!.demotedOutBytes).toBe(800);
    expect(cache.tierStats.get('cpu')!.demotedInBytes).toBe(800);
    expect(cache.tierStats.get('cpu')!.write.bytes).toBe(800);
    expect(cache.tierStats.get('cpu')!.read.bytes).toBe(400);
    expect(cache.tierStats.get('storage')!.write.bytes).toBe(400);
    // New writes landed only in the GPU tier; demotions are not counted as placements.
    expect(cache.tierStats.get('gpu')!.placements).toBe(12);
    // The moves are told apart from request I/O: what is left is the request-level traffic (12 entry
    // writes, 1 hit read of 100 B), the reference's total_* keys.
    const stats = [...cache.tierStats.values()];
    expect(stats.reduce((n, t) => n + t.write.ops - t.write.movedOps, 0)).toBe(12);
    expect(stats.reduce((n, t) => n + t.write.bytes - t.write.movedBytes, 0)).toBe(1200);
    expect(stats.reduce((n, t) => n + t.read.ops - t.read.movedOps, 0)).toBe(cache.hits.hits);
    expect(stats.reduce((n, t) => n + t.read.bytes - t.read.movedBytes, 0)).toBe(100);
    expect(cache.tierStats.get('cpu')!.read.movedBytes).toBe(400);
  });

  it('counts a demotion the next tier declines as the move it really was (GPU to storage, not GPU to CPU)', async () => {
    const { cache } = threeTierCache({ gpu: 1000, cpu: 100, storage: 100_000 });
    // Entries of 200 B are larger than 95 % of the CPU budget: GPU victims go straight to storage.
    for (let i = 0; i < 6; i++) await cache.write(ref(`k${i}`, 200), patternSource(i));
    expect(cache.tierOf('k0')).toBe('storage');
    expect(cache.tierOf('k1')).toBe('storage');
    expect(cache.demotions.get('gpu->cpu')!.count).toBe(0);
    expect(cache.demotions.get('gpu->storage')!.count).toBe(2);
    expect(cache.demotions.get('gpu->storage')!.bytes).toBe(400);
    expect(cache.tierStats.get('storage')!.demotedInBytes).toBe(400);
  });

  it('a demotion that cannot make room below leaves its entry readable where it was (no reader waits forever)', async () => {
    const { gpu, cpu, storage, cache } = threeTierCache({ gpu: 500, cpu: 500, storage: 100_000 });
    for (let i = 0; i < 8; i++) await cache.write(ref(`k${i}`, 100), patternSource(i));
    expect(cache.usage().map((u) => u.entries)).toEqual([4, 4, 0]);
    // k8 needs room on the GPU: k4 moves to the CPU, which needs room: k0 moves to storage, which fails.
    storage.failWrites = new Error('storage full');
    await expect(cache.write(ref('k8', 100), patternSource(8))).rejects.toThrow('storage full');
    expect(cache.tierOf('k0')).toBe('cpu');
    expect(cache.tierOf('k4')).toBe('gpu');
    const outcomes = await Promise.all(['k0', 'k4', 'k7'].map((k) => cache.read(k, 'user')));
    expect(outcomes.map((o) => [o.hit, o.tier])).toEqual([[true, 'cpu'], [true, 'gpu'], [true, 'gpu']]);
    expect(cache.usage().map((u) => [u.entries, u.usedBytes])).toEqual([[4, 400], [4, 400], [0, 0]]);
    // Once storage works again the same write goes through; the reads above made k5 and k1 the LRU ones.
    storage.failWrites = null;
    await cache.write(ref('k8', 100), patternSource(8));
    expect(['k1', 'k5', 'k8'].map((k) => cache.tierOf(k))).toEqual(['storage', 'cpu', 'gpu']);
    expect(cache.usage().map((u) => u.entries)).toEqual([4, 4, 1]);
  });

  it('fills the storage tier to capacity, then deletes its LRU entries: capacity of 3.5 entries holds 3', async () => {
    const storage = new TerminalMemoryTier('storage');
    const cache = new MultiTierCache([{ backend: storage, budgetBytes: 350 }]);
    for (const k of ['a', 'b', 'c']) await cache.write(ref(k, 100), patternSource(1));
    expect(cache.usage()[0]).toMatchObject({ entries: 3, usedBytes: 300 });
    await cache.read('a', 'user');
    await cache.write(ref('d', 100), patternSource(1));
    expect(cache.usage()[0].entries).toBe(3);
    expect(cache.has('b')).toBe(false);
    expect(storage.entries.has('b')).toBe(false);
    expect(cache.tierStats.get('storage')!.evictedEntries).toBe(1);
    expect((await cache.read('b', 'user')).hit).toBe(false);
    expect((await cache.read('a', 'user')).hit).toBe(true);
  });

  it('deletes a demotion victim that no tier below can hold, counted as an eviction of its tier, and makes the room', async () => {
    // 'a' fits the CPU tier (600 of 1000) but not the 500-byte storage tier below it.
    const { cache, cpu, storage } = twoTier(1000, 500);
    expect((await cache.write(ref('a', 600), patternSource(1))).tier).toBe('cpu');
    // 'b' takes the CPU tier past 80 %: 'a', the LRU entry, must leave, and has nowhere to go.
    expect((await cache.write(ref('b', 300), patternSource(2))).tier).toBe('cpu');
    expect(cache.has('a')).toBe(false);
    expect(cpu.entries.has('a')).toBe(false);
    expect(storage.entries.size).toBe(0);
    expect(cache.usage().map((u) => [u.name, u.entries, u.usedBytes])).toEqual([['cpu', 1, 300], ['storage', 0, 0]]);
    expect(cache.tierStats.get('cpu')).toMatchObject({ evictedEntries: 1, evictedBytes: 600, demotedOutBytes: 0 });
    expect(cache.tierStats.get('storage')!.evictedEntries).toBe(0);
    expect(cache.demotions.get('cpu->storage')!.count).toBe(0);
    expect((await cache.read('a', 'user')).hit).toBe(false);
  });

  it('refuses an entry larger than every tier with an INSUFFICIENT_SPACE error', async () => {
    const { cache } = twoTier(100, 500);
    await expect(cache.write(ref('huge', 600), patternSource(1))).rejects.toMatchObject({ code: 'INSUFFICIENT_SPACE' });
    expect(cache.has('huge')).toBe(false);
    expect(cache.placementFailures).toBe(1);
  });

  it('treats a write to an existing key, even one still being written, as a no-op', async () => {
    const { cache, cpu } = twoTier(1000, 10_000);
    cpu.delayMs = 20;
    const [first, second] = await Promise.all([cache.write(ref('x', 100), patternSource(1)), cache.write(ref('x', 100), patternSource(2))]);
    expect(first.written).toBe(true);
    expect(second.written).toBe(false);
    expect(cpu.log.filter((l) => l === 'write x')).toHaveLength(1);
  });

  it('serves a read that arrives while the entry is being written once the write completes', async () => {
    const { cache, cpu } = twoTier(1000, 10_000);
    cpu.delayMs = 20;
    const write = cache.write(ref('x', 100), patternSource(1));
    const read = cache.read('x', 'user');
    await write;
    expect((await read).hit).toBe(true);
  });

  it('claims the key before waiting for admission: a read meanwhile waits for the write and hits; admission still bounds writes in flight', async () => {
    const { cache, cpu } = twoTier(1000, 10_000);
    cpu.delayMs = 5;
    const admission = new Semaphore(1);
    await admission.acquire(); // another allocation holds the only slot
    const write = cache.write(ref('x', 100), patternSource(1), undefined, admission);
    const read = cache.read('x', 'user');
    await new Promise((r) => setTimeout(r, 20));
    expect(cpu.log).toEqual([]); // still waiting for its slot
    admission.release();
    expect((await write).written).toBe(true);
    expect((await read).hit).toBe(true);
    expect(cache.hits.typeMisses('user')).toBe(0);

    // One slot: writes of different keys run one after the other.
    let inFlight = 0;
    let most = 0;
    const counting: ChunkSource = async (chunk) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 5));
      await patternSource(2)(chunk);
      inFlight--;
    };
    await Promise.all(['a', 'b', 'c'].map((k) => cache.write(ref(k, 100), counting, undefined, admission)));
    expect(most).toBe(1);
  });

  it('readOrWrite: of concurrent lookups of a new key one misses and writes it, the others wait for it and hit', async () => {
    const { cache, cpu } = twoTier(1000, 10_000);
    cpu.delayMs = 10;
    const out = await Promise.all(Array.from({ length: 4 }, () => cache.readOrWrite(ref('p', 100), 'common', patternSource(1))));
    expect(out.map((o) => o.read.hit)).toEqual([false, true, true, true]);
    expect(out[0].write).toMatchObject({ written: true, tier: 'cpu' });
    expect(out.slice(1).map((o) => o.write)).toEqual([null, null, null]);
    expect(cpu.log.filter((l) => l === 'write p')).toHaveLength(1);
    expect([cache.hits.typeHits('common'), cache.hits.typeMisses('common')]).toEqual([3, 1]);
    // A key whose write failed is missing for those that waited on it: the lookup writes it anew.
    const failing = cache.write(ref('q', 100), async () => {
      throw new Error('payload failed');
    });
    const waiting = cache.readOrWrite(ref('q', 100), 'common', patternSource(1));
    await expect(failing).rejects.toThrow('payload failed');
    const again = await waiting;
    expect(again.read.hit).toBe(false);
    expect(again.write).toMatchObject({ written: true });
    expect(cache.has('q')).toBe(true);
  });

  it('never oversubscribes a tier under concurrent writers (atomic reservations)', async () => {
    const cpu = new MemoryTier('cpu');
    const storage = new TerminalMemoryTier('storage');
    const cache = new MultiTierCache([
      { backend: cpu, budgetBytes: 1000 },
      { backend: storage, budgetBytes: 1000 },
    ]);
    cpu.delayMs = 5;
    storage.delayMs = 5;
    let maxCpu = 0;
    let maxStorage = 0;
    const sampler = setInterval(() => {
      const [c, s] = cache.usage();
      maxCpu = Math.max(maxCpu, c.usedBytes);
      maxStorage = Math.max(maxStorage, s.usedBytes);
    }, 1);
    await Promise.all(Array.from({ length: 40 }, (_, i) => cache.write(ref(`c${i}`, 100), patternSource(i))));
    clearInterval(sampler);
    const [c, s] = cache.usage();
    expect(maxCpu).toBeLessThanOrEqual(800);
    expect(maxStorage).toBeLessThanOrEqual(1000);
    expect(c.usedBytes).toBeLessThanOrEqual(800);
    expect(s.usedBytes).toBeLessThanOrEqual(1000);
    expect(c.usedBytes).toBe(c.entries * 100);
    expect(s.usedBytes).toBe(s.entries * 100);
  });

  it('counts hits and misses by cache type and resets them', async () => {
    const { cache } = twoTier(1000, 10_000);
    await cache.write(ref('a', 100), patternSource(1));
    await cache.read('a', 'multi_turn');
    await cache.read('zz', 'system');
    expect(cache.hits.typeHits('multi_turn')).toBe(1);
    expect(cache.hits.typeMisses('system')).toBe(1);
    cache.resetStats();
    expect(cache.hits.hits + cache.hits.misses).toBe(0);
    expect(cache.has('a')).toBe(true);
  });
});

/** CPU 1000 B over storage, promotion on-hit, nine 100-byte entries written: e0 was demoted to storage. */
async function promotingCacheWithE0InStorage(): Promise<{ cpu: MemoryTier; cache: MultiTierCache }> {
  const cpu = new MemoryTier('cpu');
  const cache = new MultiTierCache(
    [
      { backend: cpu, budgetBytes: 1000 },
      { backend: new TerminalMemoryTier('storage'), budgetBytes: 10_000 },
    ],
    { promotion: 'on-hit' },
  );
  for (let i = 0; i < 9; i++) await cache.write(ref(`e${i}`, 100), patternSource(i));
  expect(cache.tierOf('e0')).toBe('storage');
  return { cpu, cache };
}

describe('MultiTierCache promotion (opt-in)', () => {
  it('never promotes by default (the reference)', async () => {
    const { cache } = twoTier(1000, 10_000);
    for (let i = 0; i < 9; i++) await cache.write(ref(`e${i}`, 100), patternSource(i));
    await cache.read('e0', 'user');
    expect(cache.tierOf('e0')).toBe('storage');
  });

  it('with on-hit, moves a hit entry up to the fastest tier with room, bytes intact, timed apart', async () => {
    const { cpu, cache } = await promotingCacheWithE0InStorage();
    const first = await cache.read('e0', 'user');
    expect(first.tier).toBe('storage');
    expect(cache.tierOf('e0')).toBe('cpu');
    // Making room for it demoted the CPU tier's LRU entry.
    expect(cache.tierOf('e1')).toBe('storage');
    const seen: Buffer[] = [];
    const second = await cache.read('e0', 'user', () => async (c) => {
      seen.push(Buffer.from(c.buffer));
    });
    expect(second.tier).toBe('cpu');
    const expected = Buffer.alloc(100);
    await patternSource(0)({ index: 0, entryOffsetBytes: 0, buffer: expected });
    expect(Buffer.concat(seen)).toEqual(expected);
    const p = cache.promotions.get('storage->cpu')!;
    expect(p.count).toBe(1);
    expect(p.bytes).toBe(100);
    expect(p.latency.count).toBe(1);
    expect(cache.usage()[0].usedBytes).toBeLessThanOrEqual(800);
  });

  it('a promotion that fails leaves the entry where it was and its read a success, counted and kept', async () => {
    const { cpu, cache } = await promotingCacheWithE0InStorage();
    cpu.failWrites = new Error('cpu tier out of memory');
    const seen: Buffer[] = [];
    const o = await cache.read('e0', 'user', () => async (c) => void seen.push(Buffer.from(c.buffer)));
    expect(o).toMatchObject({ hit: true, tier: 'storage' });
    const expected = Buffer.alloc(100);
    await patternSource(0)({ index: 0, entryOffsetBytes: 0, buffer: expected });
    expect(Buffer.concat(seen)).toEqual(expected);
    await cache.idle();
    expect(cache.tierOf('e0')).toBe('storage');
    expect(cache.promotionFailures).toBe(1);
    expect(cache.firstPromotionError).toBe('promoting e0: cpu tier out of memory');
    expect(cache.promotions.get('storage->cpu')!.count).toBe(0);
    // The room made for it above was given back: the CPU tier's books hold only what it holds.
    const [c] = cache.usage();
    expect(c.usedBytes).toBe([...cpu.entries.keys()].length * 100);
    cpu.failWrites = null;
    await cache.read('e0', 'user');
    expect(cache.tierOf('e0')).toBe('cpu');
    expect(cache.promotionFailures).toBe(1);
  });

  it('a promotion cut off after the measured window closed is no failure', async () => {
    const { cpu, cache } = await promotingCacheWithE0InStorage();
    cache.closeWindow();
    cpu.failWrites = new Error('write of e0: cancelled, the measured window has closed');
    expect(await cache.read('e0', 'user')).toMatchObject({ hit: true, tier: 'storage' });
    expect(cache.promotionFailures).toBe(0);
    expect(cache.firstPromotionError).toBeNull();
  });
});

describe('MultiTierCache measured window', () => {
  it('while the window is open, every byte written lives in exactly one tier (demotions counted on both sides)', async () => {
    const { cache } = twoTier(1000, 100_000);
    for (let i = 0; i < 30; i++) {
      await cache.write(ref(`w${i}`, 50 + 17 * i), patternSource(i));
      if (i % 3 === 0) await cache.read(`w${Math.floor(i / 2)}`, 'user');
    }
    const cpu = cache.tierStats.get('cpu')!;
    const storage = cache.tierStats.get('storage')!;
    const d = cache.demotions.get('cpu->storage')!;
    const [cpuUse, storageUse] = cache.usage();
    expect(d.count).toBeGreaterThan(0);
    expect(cpuUse.usedBytes).toBe(cpu.write.bytes - cpu.demotedOutBytes - cpu.evictedBytes);
    expect(storageUse.usedBytes).toBe(storage.write.bytes - storage.evictedBytes);
    expect(cpuUse.usedBytes + storageUse.usedBytes).toBe(cpu.write.bytes + storage.write.bytes - d.bytes);
    expect(cache.hits.hits).toBe(cpu.read.ops + storage.read.ops - d.count);
  });

  it('counts a demotion\'s bytes chunk by chunk, as the tier bytes are: one in flight at the close is in demoted in/out as in the moved bytes', async () => {
    const cpu = new MemoryTier('cpu', 100);
    const storage = new TerminalMemoryTier('storage', 100);
    const cache = new MultiTierCache([
      { backend: cpu, budgetBytes: 1000 },
      { backend: storage, budgetBytes: 100_000 },
    ]);
    for (let i = 0; i < 8; i++) await cache.write(ref(`e${i}`, 100), patternSource(i));
    const cpuStats = cache.tierStats.get('cpu')!;
    const storageStats = cache.tierStats.get('storage')!;
    // The storage write of e0's demotion holds after its last chunk: the window closes then.
    storage.delayMs = 50;
    const writing = cache.write(ref('e8', 100), patternSource(8));
    while (storageStats.write.movedBytes < 100) await new Promise((r) => setImmediate(r));
    cache.closeWindow();
    await writing;
    expect(storageStats.write.movedBytes).toBe(100);
    expect(storageStats.demotedInBytes).toBe(storageStats.write.movedBytes);
    expect(cpuStats.demotedOutBytes).toBe(cpuStats.read.movedBytes);
    expect(cpuStats.read.movedBytes).toBe(100);
    // The finished demotions are kvbench.demotions' count: this one ended after the close.
    expect(cache.demotions.get('cpu->storage')?.count ?? 0).toBe(0);
  });

  it('knows when the oldest read and write still in flight began, and forgets them once they end, failed ones too', async () => {
    const { cache } = twoTier(0, 100_000);
    const storage = cache.tierStats.get('storage')!;
    await cache.write(ref('a', 300), patternSource(1));
    expect([storage.read.oldestInFlightStartNs(), storage.write.oldestInFlightStartNs()]).toEqual([null, null]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const beforeNs = process.hrtime.bigint();
    const writing = cache.write(ref('b', 300), async (chunk) => {
      await gate;
      await patternSource(2)(chunk);
    });
    const reading = cache.read('a', 'user', () => async () => gate);
    await new Promise((r) => setImmediate(r));
    for (const d of [storage.read, storage.write]) expect(d.oldestInFlightStartNs()).toBeGreaterThanOrEqual(beforeNs);
    // A second read begins later: the oldest is still the first.
    const firstReadNs = storage.read.oldestInFlightStartNs();
    const second = cache.read('a', 'user', () => async () => gate);
    await new Promise((r) => setImmediate(r));
    expect(storage.read.oldestInFlightStartNs()).toBe(firstReadNs);
    release();
    await Promise.all([writing, reading, second]);
    expect([storage.read.oldestInFlightStartNs(), storage.write.oldestInFlightStartNs()]).toEqual([null, null]);
    const failing = cache.write(ref('c', 300), async () => {
      throw new Error('EIO');
    });
    await expect(failing).rejects.toThrow('EIO');
    expect(storage.write.oldestInFlightStartNs()).toBeNull();
  });

  it('closing the window freezes every counter, mid-operation: completed chunks count, the rest does not', async () => {
    const cpu = new MemoryTier('cpu', 100);
    const storage = new TerminalMemoryTier('storage', 100);
    const cache = new MultiTierCache([
      { backend: cpu, budgetBytes: 10_000 },
      { backend: storage, budgetBytes: 100_000 },
    ]);
    await cache.write(ref('before', 300), patternSource(1));
    // A slow source: the window closes after the first two of five chunks.
    let chunksDone = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = async (chunk: Parameters<ReturnType<typeof patternSource>>[0]): Promise<void> => {
      if (chunk.index === 2) await gate;
      await patternSource(2)(chunk);
      chunksDone++;
    };
    const heard: number[] = [];
    const writing = cache.write(ref('during', 500), slow, (b) => heard.push(b));
    while (chunksDone < 2) await new Promise((r) => setImmediate(r));
    cache.closeWindow();
    release();
    await writing;
    await cache.read('before', 'user');
    await cache.read('missing', 'user');
    const stats = cache.tierStats.get('cpu')!;
    // 300 bytes of 'before', then 200 of the 500 of 'during': the chunks done before the close.
    expect(stats.write.bytes).toBe(500);
    expect(stats.write.ops).toBe(1);
    expect(stats.read.bytes).toBe(0);
    expect(cache.hits.hits + cache.hits.misses).toBe(0);
    // The caller's own progress hears every chunk (it applies its own window).
    expect(heard).toEqual([100, 100, 100, 100, 100]);
    // Reopening starts every counter from zero.
    cache.openWindow();
    await cache.read('during', 'user');
    expect(stats.read.bytes).toBe(500);
    expect(stats.write.bytes).toBe(0);
    expect(cache.hits.hits).toBe(1);
  });
});
