// The CPU tier's arena: extents inside regions allocated once, so the tier's RAM is bounded by them.
import { describe, expect, it } from 'vitest';
import { CPU_ARENA_GRANULE_BYTES, CpuArena } from '../../../src-main/engine/tiers/cpu-arena.ts';
import { cpuArenaCapacityBytes } from '../../../src-main/engine/tiers/cpu-tier.ts';

const MiB = 1024 * 1024;
const CHUNK = 4 * MiB;

describe('CpuArena', () => {
  it('takes whole chunks from the low end and partial ones from the high end, rounded to 4 KiB', () => {
    const arena = new CpuArena({ capacityBytes: 4 * CHUNK, chunkBytes: CHUNK });
    const whole = arena.allocate(CHUNK);
    const tail = arena.allocate(10);
    expect([whole.region, whole.offset, whole.bytes]).toEqual([0, 0, CHUNK]);
    expect([tail.offset, tail.bytes, tail.buffer.length]).toEqual([4 * CHUNK - CPU_ARENA_GRANULE_BYTES, CPU_ARENA_GRANULE_BYTES, 10]);
    expect(arena.usedBytes).toBe(CHUNK + CPU_ARENA_GRANULE_BYTES);
  });

  it('reuses released room, merged with its neighbours, without holding more', () => {
    const arena = new CpuArena({ capacityBytes: 4 * CHUNK, chunkBytes: CHUNK });
    const parts = [arena.allocate(MiB), arena.allocate(MiB), arena.allocate(2 * MiB)];
    const held = arena.heldBytes;
    for (const p of parts) arena.release(p);
    expect(arena.usedBytes).toBe(0);
    // The three merged back into one range: a whole chunk fits where they were.
    const all = [arena.allocate(CHUNK), arena.allocate(CHUNK), arena.allocate(CHUNK), arena.allocate(CHUNK)];
    expect(all.every((s) => s.region === 0)).toBe(true);
    expect(arena.overflowSegments).toBe(0);
    expect(arena.heldBytes).toBe(4 * CHUNK);
    expect(held).toBeLessThanOrEqual(4 * CHUNK);
  });

  it('gives a chunk a buffer of its own, counted, when no extent fits, and holds it only while it lives', () => {
    const arena = new CpuArena({ capacityBytes: 2 * CHUNK, chunkBytes: CHUNK });
    const a = arena.allocate(CHUNK);
    const b = arena.allocate(CHUNK);
    const over = arena.allocate(CHUNK);
    expect(over.region).toBe(-1);
    expect(arena.overflowSegments).toBe(1);
    expect(arena.heldBytes).toBe(3 * CHUNK);
    arena.release(over);
    arena.release(a);
    arena.release(b);
    expect(arena.heldBytes).toBe(2 * CHUNK);
    expect(arena.peakHeldBytes).toBe(3 * CHUNK);
  });

  it('refuses a release of room that is already free', () => {
    const arena = new CpuArena({ capacityBytes: 2 * CHUNK, chunkBytes: CHUNK });
    const s = arena.allocate(MiB);
    arena.release(s);
    expect(() => arena.release(s)).toThrow(/released twice/);
  });

  it('splits a large capacity into regions of whole chunks', () => {
    const arena = new CpuArena({ capacityBytes: 3 * 1024 * MiB + 5, chunkBytes: 48 * MiB });
    const segments = Array.from({ length: Math.floor(arena.capacityBytes / (48 * MiB)) }, () => arena.allocate(48 * MiB));
    expect(new Set(segments.map((s) => s.region)).size).toBeGreaterThan(1);
    expect(arena.overflowSegments).toBe(0);
    // Nothing written: the regions are reserved, and counted held only as they are handed out.
    expect(arena.usedBytes).toBe(segments.length * 48 * MiB);
  });

  it('sizes the arena at the budget plus an eighth, at least two chunks more', () => {
    expect(cpuArenaCapacityBytes(1024 * MiB, 16 * MiB)).toBe(1024 * MiB + 128 * MiB);
    expect(cpuArenaCapacityBytes(64 * MiB, 16 * MiB)).toBe(64 * MiB + 32 * MiB);
  });
});
