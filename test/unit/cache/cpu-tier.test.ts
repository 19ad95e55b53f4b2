// The CPU tier's memory: what --cpu-mem-gb costs in RAM is the entries' bytes plus a bounded rounding
// overhead, whatever the entry sizes and however they shift during a run.
import { afterEach, describe, expect, it } from 'vitest';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { keyHash64, PayloadPool } from '../../../src-main/engine/io/payload.ts';
import { CpuTier, cpuSizeClass } from '../../../src-main/engine/tiers/cpu-tier.ts';
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

describe('cpuSizeClass', () => {
  it('rounds up by at most 12.5 % (64 bytes below 512 B) and never past the chunk size', () => {
    for (const len of [1, 63, 64, 65, 511, 512, 513, 4095, 4097, 65_537, 1 * MiB + 1, 8 * MiB + 1, 9 * MiB, 15 * MiB + 7, CHUNK - 1]) {
      const cls = cpuSizeClass(len, CHUNK);
      expect(cls, `len ${len}`).toBeGreaterThanOrEqual(len);
      expect(cls, `len ${len}`).toBeLessThanOrEqual(CHUNK);
      expect(cls - len, `len ${len}`).toBeLessThanOrEqual(Math.max(63, len / 8));
    }
    expect(cpuSizeClass(CHUNK, CHUNK)).toBe(CHUNK);
    expect(cpuSizeClass(CHUNK + 1, CHUNK)).toBe(CHUNK);
  });
});

describe('CpuTier memory', () => {
  it('holds at most 12.5 % above its entries for sizes just over a power of two', async () => {
    // 8 MiB + 1 byte used to take a 16 MiB segment: twice the entry, so a full tier held twice its budget.
    const t = await tier(64 * MiB);
    const size = 8 * MiB + 1;
    for (let i = 0; i < 7; i++) await t.write(ref(`e${i}`, size), fill);
    expect(t.heldBytes).toBeLessThanOrEqual(7 * size * 1.125);
    expect(t.peakHeldBytes).toBe(t.heldBytes);
  });

  it('keeps held memory within the budget when entry sizes shift (pooled segments of the old size are let go)', async () => {
    const budget = 32 * MiB;
    const t = await tier(budget);
    // Fill with one size, free everything (the pool keeps those segments), then fill with another size.
    for (let i = 0; i < 7; i++) await t.write(ref(`a${i}`, 4 * MiB), fill);
    for (let i = 0; i < 7; i++) await t.remove(ref(`a${i}`, 4 * MiB));
    expect(t.heldBytes, 'freed segments pooled for reuse').toBe(28 * MiB);
    for (let i = 0; i < 5; i++) await t.write(ref(`b${i}`, 5 * MiB + 3), fill);
    expect(t.peakHeldBytes).toBeLessThanOrEqual(budget);
    expect(t.heldBytes).toBeLessThanOrEqual(budget);
  });

  it('reuses a pooled segment of the same class instead of growing', async () => {
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
