// The CPU tier's memory: what --cpu-mem-gb costs in RAM is the budget plus a bounded overhead (its
// arena), whatever the entry sizes and however they shift during a run.
import { afterEach, describe, expect, it } from 'vitest';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { keyHash64, PayloadPool } from '../../../src-main/engine/io/payload.ts';
import { CpuTier } from '../../../src-main/engine/tiers/cpu-tier.ts';
import type { ChunkSource, EntryRef } from '../../../src-main/engine/tiers/tier-backend.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK = 16 * MiB;

const ref = (key: string, sizeBytes: number): EntryRef => ({ key, keyHash: keyHash64(key, 1), sizeBytes });
const fill: ChunkSource = async (view) => {
  view.buffer.fill(view.index & 0xff);
};

const pools: BytePool[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
});

async function tier(budgetBytes: number): Promise<CpuTier> {
  const bytes = await BytePool.start({ threads: 0, pool: PayloadPool.create(7, 1 * MiB) });
  pools.push(bytes);
  return new CpuTier({ chunkBytes: CHUNK, bytes, staging: new AlignedSlab(CHUNK, 2), budgetBytes, depth: 2 });
}

describe('CpuTier memory', () => {
  it('allocates its RAM once: entries of every size, written and removed for many budgets, allocate nothing more, and never overlap', async () => {
    // 0.7.0 gave each chunk a SharedArrayBuffer of its size class and dropped pooled ones of other
    // classes: each such buffer stayed resident until a major GC, 800 MiB of them in a 60 s run.
    const budget = 64 * MiB;
    const real = globalThis.SharedArrayBuffer;
    let allocatedBytes = 0;
    globalThis.SharedArrayBuffer = class extends real {
      constructor(length: number) {
        super(length);
        allocatedBytes += length;
      }
    } as SharedArrayBufferConstructor;
    try {
      const t = await tier(budget);
      let seed = 12345;
      const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const live: { ref: EntryRef; byte: number }[] = [];
      let liveBytes = 0;
      let writtenBytes = 0;
      for (let i = 0; i < 120; i++) {
        const size = 1 + Math.floor(random() * 40 * MiB);
        // What the cache does: entries leave (LRU first) until the new one fits under 80 % of the budget.
        while (liveBytes + size > budget * 0.8 && live.length > 0) {
          const gone = live.shift()!;
          await t.remove(gone.ref);
          liveBytes -= gone.ref.sizeBytes;
        }
        if (size > budget * 0.8) continue;
        const byte = i & 0xff;
        const e = ref(`k${i}`, size);
        await t.write(e, async (view) => {
          view.buffer.fill(byte);
        });
        live.push({ ref: e, byte });
        liveBytes += size;
        writtenBytes += size;
      }
      expect(writtenBytes, 'the churn wrote many budgets').toBeGreaterThan(8 * budget);
      // The arena: the budget, an eighth more and two chunks of slack, allocated when the tier opened.
      expect(allocatedBytes).toBeLessThanOrEqual(budget + budget / 8 + 2 * CHUNK);
      expect(t.peakHeldBytes).toBeLessThanOrEqual(budget + budget / 8 + 2 * CHUNK);
      for (const { ref: e, byte } of live) {
        await t.read(e, async (view) => {
          const b = view.buffer;
          // Every 4 KiB extent boundary, and both ends: an overlapping segment would show at one.
          const wrong = [0, b.length - 1].concat(Array.from({ length: Math.ceil(b.length / 4096) }, (_, k) => k * 4096)).filter((at) => b[at] !== byte);
          expect(wrong, `${e.key} chunk ${view.index} intact`).toEqual([]);
        });
      }
    } finally {
      globalThis.SharedArrayBuffer = real;
    }
  });

  it('holds its entries plus at most 4 KiB per chunk for sizes just over a power of two', async () => {
    // 8 MiB + 1 byte once took a 16 MiB segment: twice the entry, so a full tier held twice its budget.
    const t = await tier(64 * MiB);
    const size = 8 * MiB + 1;
    for (let i = 0; i < 7; i++) await t.write(ref(`e${i}`, size), fill);
    expect(t.heldBytes).toBeLessThanOrEqual(7 * (size + 64 * KiB));
    expect(t.peakHeldBytes).toBe(t.heldBytes);
  });

  it('keeps held memory within the budget when entry sizes shift (freed room is reused)', async () => {
    const budget = 32 * MiB;
    const t = await tier(budget);
    // Fill with one size, free everything (the arena keeps that memory), then fill with another size.
    for (let i = 0; i < 7; i++) await t.write(ref(`a${i}`, 4 * MiB), fill);
    for (let i = 0; i < 7; i++) await t.remove(ref(`a${i}`, 4 * MiB));
    expect(t.heldBytes, 'freed room stays held, for reuse').toBe(28 * MiB);
    for (let i = 0; i < 5; i++) await t.write(ref(`b${i}`, 5 * MiB + 3), fill);
    expect(t.peakHeldBytes).toBeLessThanOrEqual(budget);
    expect(t.heldBytes).toBeLessThanOrEqual(budget);
  });

  it('reuses freed room instead of growing', async () => {
    const t = await tier(32 * MiB);
    await t.write(ref('x', 3 * MiB), fill);
    await t.remove(ref('x', 3 * MiB));
    await t.write(ref('y', 3 * MiB - 5), fill);
    expect(t.peakHeldBytes).toBe(3 * MiB);
    const out: number[] = [];
    await t.read(ref('y', 3 * MiB - 5), async (view) => {
      out.push(view.buffer.length, view.buffer[0]);
    });
    expect(out).toEqual([3 * MiB - 5, 0]);
  });
});
