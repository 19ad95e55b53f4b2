import { describe, expect, it } from 'vitest';
import { CUDA_ERROR_INVALID_VALUE, CudaError, type CUcontext } from '../../../src-main/engine/tiers/gpu/cuda-driver.ts';
import { DeviceArena, type DeviceExtent } from '../../../src-main/engine/tiers/gpu/device-arena.ts';
import { FakeCudaDriver } from './fake-cuda-driver.ts';

const MiB = 1024 * 1024;

function setup(devicesMiB: number[]) {
  const driver = new FakeCudaDriver({ devices: devicesMiB.map((m, i) => ({ name: `Fake GPU ${i}`, totalMemoryBytes: m * MiB })) });
  driver.cuInit(0);
  const contexts = new Map<number, CUcontext>(devicesMiB.map((_, i) => [i, driver.cuDevicePrimaryCtxRetain(i)]));
  return { driver, contexts };
}

describe('DeviceArena', () => {
  it('reserves the whole plan in slabs and gives it back with cuMemFree', () => {
    const { driver, contexts } = setup([64]);
    const arena = DeviceArena.reserve({ driver, contexts, plan: [{ device: 0, bytes: 40 * MiB }], slabBytes: 16 * MiB, minSlabBytes: 2 * MiB });
    expect(arena.capacityBytes).toBe(40 * MiB);
    expect(arena.reservations).toEqual([
      { device: 0, requestedBytes: 40 * MiB, reservedBytes: 40 * MiB, slabs: 3, freeBytesBefore: null, capBytes: null, shortfall: null },
    ]);
    expect(driver.allocatedBytes()).toBe(40 * MiB);
    expect(arena.releaseAll()).toBeNull();
    expect(driver.allocatedBytes()).toBe(0);
    expect(arena.heldBytes).toBe(0);
    expect(arena.releaseAll()).toBeNull(); // idempotent
  });

  it('on CUDA_ERROR_OUT_OF_MEMORY halves the slab size, then stops with what it got and says why', () => {
    const { driver, contexts } = setup([64]);
    driver.externalUseBytes[0] = 27 * MiB; // another process: 37 MiB left
    const arena = DeviceArena.reserve({ driver, contexts, plan: [{ device: 0, bytes: 60 * MiB }], slabBytes: 16 * MiB, minSlabBytes: 1 * MiB });
    expect(arena.capacityBytes).toBe(37 * MiB);
    const r = arena.reservations[0];
    expect(r.reservedBytes).toBe(37 * MiB);
    expect(r.shortfall).toMatch(/CUDA_ERROR_OUT_OF_MEMORY after 38797312 of 62914560 bytes/);
    arena.releaseAll();
  });

  it('with a headroom, stops each device at its free memory less the headroom, before any allocation fails', () => {
    const { driver, contexts } = setup([64, 64]);
    driver.externalUseBytes[1] = 40 * MiB;
    const arena = DeviceArena.reserve({
      driver,
      contexts,
      plan: [
        { device: 0, bytes: 32 * MiB },
        { device: 1, bytes: 32 * MiB },
      ],
      slabBytes: 16 * MiB,
      minSlabBytes: 1 * MiB,
      headroom: { minBytes: 8 * MiB, fractionOfTotal: 0.02 },
    });
    expect(arena.reservations).toEqual([
      { device: 0, requestedBytes: 32 * MiB, reservedBytes: 32 * MiB, slabs: 2, freeBytesBefore: 64 * MiB, capBytes: 56 * MiB, shortfall: null },
      {
        device: 1,
        requestedBytes: 32 * MiB,
        reservedBytes: 16 * MiB,
        slabs: 1,
        freeBytesBefore: 24 * MiB,
        capBytes: 16 * MiB,
        shortfall: `capped at ${16 * MiB} bytes: ${24 * MiB} free of ${64 * MiB}, less ${8 * MiB} left to the driver and other processes`,
      },
    ]);
    // The cap, not an out-of-memory error, ended it.
    expect(driver.allocatedBytes(1) + driver.externalUseBytes[1]).toBe(56 * MiB);
    arena.releaseAll();
  });

  it('frees what it reserved and throws on any other driver error', () => {
    const { driver, contexts } = setup([64]);
    let n = 0;
    const alloc = driver.cuMemAlloc.bind(driver);
    driver.cuMemAlloc = (bytes: number) => {
      if (++n === 3) throw new CudaError('cuMemAlloc', CUDA_ERROR_INVALID_VALUE);
      return alloc(bytes);
    };
    expect(() => DeviceArena.reserve({ driver, contexts, plan: [{ device: 0, bytes: 48 * MiB }], slabBytes: 8 * MiB, minSlabBytes: 8 * MiB })).toThrow(
      /CUDA_ERROR_INVALID_VALUE/,
    );
    expect(driver.allocatedBytes()).toBe(0);
  });

  it('hands out exact extents, splits an entry over free ranges when fragmented, and merges freed ranges', () => {
    const { driver, contexts } = setup([64]);
    const arena = DeviceArena.reserve({ driver, contexts, plan: [{ device: 0, bytes: 8 * MiB }], slabBytes: 4 * MiB, minSlabBytes: 1 * MiB });
    const a = arena.allocate(3 * MiB)!;
    const b = arena.allocate(3 * MiB)!;
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(arena.usedBytes).toBe(6 * MiB);
    arena.release(a); // free: 3 MiB in slab 0 + 1 MiB in slab 1 ... plus slab 1's remainder
    const c = arena.allocate(5 * MiB)!;
    expect(c.length).toBeGreaterThan(1);
    expect(c.reduce((n, e) => n + e.bytes, 0)).toBe(5 * MiB);
    expect(arena.allocate(1)).toBeNull(); // full
    arena.release(b);
    arena.release(c);
    expect(arena.usedBytes).toBe(0);
    // Everything merged back: one extent can take each whole slab again.
    expect(arena.allocate(4 * MiB)).toHaveLength(1);
    expect(arena.allocate(4 * MiB)).toHaveLength(1);
    arena.releaseAll();
  });

  it('rejects a double release', () => {
    const { driver, contexts } = setup([16]);
    const arena = DeviceArena.reserve({ driver, contexts, plan: [{ device: 0, bytes: 4 * MiB }], slabBytes: 4 * MiB, minSlabBytes: 1 * MiB });
    const a = arena.allocate(MiB)!;
    arena.release(a);
    expect(() => arena.release(a)).toThrow(/released twice/);
    arena.releaseAll();
  });

  it('spreads entries over devices by free memory', () => {
    const { driver, contexts } = setup([16, 16]);
    const arena = DeviceArena.reserve({
      driver,
      contexts,
      plan: [
        { device: 0, bytes: 8 * MiB },
        { device: 1, bytes: 8 * MiB },
      ],
      slabBytes: 8 * MiB,
      minSlabBytes: 1 * MiB,
    });
    const first = arena.allocate(2 * MiB)!;
    const second = arena.allocate(2 * MiB)!;
    expect(first[0].device).not.toBe(second[0].device);
    expect(driver.allocatedBytes(0)).toBe(8 * MiB);
    expect(driver.allocatedBytes(1)).toBe(8 * MiB);
    arena.releaseAll();
    expect(driver.allocatedBytes()).toBe(0);
  });

  it('never overlaps extents and keeps used + free = capacity under random allocate/release', () => {
    const { driver, contexts } = setup([64]);
    const arena = DeviceArena.reserve({ driver, contexts, plan: [{ device: 0, bytes: 32 * MiB }], slabBytes: 8 * MiB, minSlabBytes: 1 * MiB });
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const live: DeviceExtent[][] = [];
    for (let step = 0; step < 2000; step++) {
      if (live.length > 0 && rnd(3) === 0) {
        arena.release(live.splice(rnd(live.length), 1)[0]);
      } else {
        const got = arena.allocate(1 + rnd(3 * MiB));
        if (got) live.push(got);
      }
      expect(arena.usedBytes + arena.freeBytes).toBe(arena.capacityBytes);
    }
    const ranges = live.flat().map((e) => [e.ptr, e.ptr + e.bytes] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i][0]).toBeGreaterThanOrEqual(ranges[i - 1][1]);
    expect(live.flat().reduce((n, e) => n + e.bytes, 0)).toBe(arena.usedBytes);
    arena.releaseAll();
  });
});
