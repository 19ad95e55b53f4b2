import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { keyHash64, PayloadPool } from '../../../src-main/engine/io/payload.ts';
import { CpuTier } from '../../../src-main/engine/tiers/cpu-tier.ts';
import { CudaError } from '../../../src-main/engine/tiers/gpu/cuda-driver.ts';
import { copyEnded, copyStarted, dirStats, GpuTier, GpuTierFullError, newTotals, type GpuTierOpenOptions } from '../../../src-main/engine/tiers/gpu/gpu-tier.ts';
import { openGpuTier } from '../../../src-main/engine/tiers/gpu/open-gpu-tier.ts';
import { pendingExitCleanups } from '../../../src-main/engine/tiers/gpu/process-exit.ts';
import type { ChunkSource, EntryRef } from '../../../src-main/engine/tiers/tier-backend.ts';
import { CopyHold, FakeCudaDriver, type FakeDeviceSpec } from './fake-cuda-driver.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK = 64 * KiB;
const NO_HEADROOM = { minBytes: 0, fractionOfTotal: 0 };

const ref = (key: string, sizeBytes: number): EntryRef => ({ key, keyHash: keyHash64(key, 1), sizeBytes });

/** Bytes of entry `key` at `offset`: position- and key-dependent, so misplaced chunks show. */
function expectedBytes(key: string, offset: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) >>> 0;
  for (let i = 0; i < length; i++) out[i] = (h + (offset + i) * 7 + ((offset + i) >>> 8)) & 0xff;
  return out;
}

const patternSource =
  (key: string): ChunkSource =>
  async (chunk) => {
    chunk.buffer.set(expectedBytes(key, chunk.entryOffsetBytes, chunk.buffer.length));
  };

async function readAll(tier: { read: GpuTier['read'] }, entry: EntryRef): Promise<Buffer> {
  const out = Buffer.alloc(entry.sizeBytes);
  await tier.read(entry, async (c) => {
    out.set(c.buffer, c.entryOffsetBytes);
  });
  return out;
}

const tiers: GpuTier[] = [];
afterEach(async () => {
  for (const t of tiers.splice(0)) await t.close().catch(() => undefined);
});

async function open(driver: FakeCudaDriver, o: Partial<GpuTierOpenOptions> = {}): Promise<GpuTier> {
  const tier = await GpuTier.open({
    driver,
    numGpus: 1,
    perDeviceBudgetBytes: 4 * MiB,
    chunkBytes: CHUNK,
    procVersionPath: '/nonexistent',
    nvidiaSmi: null,
    slabBytes: 1 * MiB,
    minSlabBytes: 64 * KiB,
    copyThreads: 0,
    // The fakes are a few MiB: the default headroom (1 GiB) would leave them nothing.
    headroom: NO_HEADROOM,
    ...o,
  });
  tiers.push(tier);
  return tier;
}

function fake(devices: FakeDeviceSpec[] = [{ name: 'Fake H100', totalMemoryBytes: 16 * MiB }], shareable = false): FakeCudaDriver {
  return new FakeCudaDriver({ devices, shareable });
}

async function cpuTier(budgetBytes: number) {
  const bytes = await BytePool.start({ threads: 0, pool: PayloadPool.create(7, 1 * MiB) });
  return { bytes, tier: new CpuTier({ chunkBytes: CHUNK, bytes, staging: new AlignedSlab(CHUNK, 4), budgetBytes, depth: 2 }) };
}

describe('GpuTier on a fake driver', () => {
  it('reserves its budget, pins its staging buffers and reports the devices and driver', async () => {
    const driver = fake();
    const proc = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-gpu-')), 'version');
    fs.writeFileSync(proc, 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n');
    const tier = await open(driver, { procVersionPath: proc });
    expect(tier.budgetBytes).toBe(4 * MiB);
    expect(driver.allocatedBytes()).toBe(4 * MiB);
    expect(driver.registered.size).toBe(1);
    const r = tier.report();
    expect(r).toMatchObject({
      devices: [
        {
          index: 0,
          name: 'Fake H100',
          totalMemoryBytes: 16 * MiB,
          requestedBytes: 4 * MiB,
          reservedBytes: 4 * MiB,
          freeBytesAtOpen: 16 * MiB,
          reservationCapBytes: 16 * MiB,
          shortfall: null,
        },
      ],
      driverVersion: '550.54.15',
      cudaVersion: '12.4',
      driverLibrary: 'fake-libcuda',
      reservedBytes: 4 * MiB,
      shortfallReason: null,
      stagingPinned: true,
      copyThreads: 0,
    });
    expect(r.devices[0].pciBusId).toMatch(/^00000000:/);
  });

  it('round-trips entries of odd sizes byte for byte (write = H2D, read = D2H), and counts the copies', async () => {
    const tier = await open(fake());
    const sizes = [1, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 123];
    for (const [i, size] of sizes.entries()) {
      const e = ref(`e${i}`, size);
      const t = await tier.write(e, patternSource(e.key));
      expect(t.bytes).toBe(size);
      expect(t.durationNs).toBeGreaterThan(0);
    }
    for (const [i, size] of sizes.entries()) {
      const e = ref(`e${i}`, size);
      expect((await readAll(tier, e)).equals(expectedBytes(e.key, 0, size))).toBe(true);
    }
    const total = sizes.reduce((a, b) => a + b, 0);
    const r = tier.report();
    expect(r.h2d.bytes).toBe(total);
    expect(r.d2h.bytes).toBe(total);
    expect(r.h2d.copies).toBe(sizes.reduce((n, s) => n + Math.ceil(s / CHUNK), 0));
    expect(r.h2d.bandwidthBytesPerSec).toBeGreaterThan(0);
    expect(tier.usedBytes).toBe(total);
    tier.resetCopyStats();
    expect(tier.report().h2d).toEqual({
      bytes: 0,
      copies: 0,
      copyNs: 0,
      busyNs: 0,
      perCopyBytesPerSec: null,
      linkBusyBytesPerSec: null,
      bandwidthBytesPerSec: null,
    });
  });

  it('reports per-copy bandwidth (bytes ÷ summed copy time) and link-busy bandwidth (bytes ÷ time with a copy executing)', () => {
    const t = newTotals();
    const s = (x: number): bigint => BigInt(x * 1e9);
    const span = (a: number, b: number) => ({ startNs: s(a), endNs: s(b) });
    // Two 1 GB copies side by side over the same 2 s (the link shared): 0.5 GB/s each, 1 GB/s on the link.
    const a = copyStarted(t, s(0));
    const b = copyStarted(t, s(0));
    copyEnded(t, b, 1e9, span(0, 2));
    copyEnded(t, a, 1e9, span(0, 2));
    // Handed off at 2, but it waited 1 s in a copy thread behind a copy of the other direction: its
    // own 0.5 s counts, not the wait. A failed copy handed off beside it carries neither bytes nor time.
    const c = copyStarted(t, s(2));
    const failed = copyStarted(t, s(2));
    copyEnded(t, failed, 0, null);
    copyEnded(t, c, 1e9, span(3, 3.5));
    const r = dirStats(t);
    expect(r).toMatchObject({ bytes: 3e9, copies: 3, copyNs: 4.5e9, busyNs: 2.5e9 });
    expect(r.perCopyBytesPerSec).toBeCloseTo(3e9 / 4.5, 0);
    expect(r.bandwidthBytesPerSec).toBe(r.perCopyBytesPerSec);
    expect(r.linkBusyBytesPerSec).toBeCloseTo(3e9 / 2.5, 0);
    // However the copies queue, the link is never busy longer than the copies took together.
    expect(r.busyNs).toBeLessThanOrEqual(r.copyNs);
  });

  it('counts demotion copies (copyChunkOut, straight into the tier below) apart from staging reads, with busy time for each', async () => {
    const tier = await open(fake());
    const e = ref('d', 3 * CHUNK);
    await tier.write(e, patternSource('d'));
    await readAll(tier, e);
    await tier.copyChunkOut(e, { index: 0, entryOffsetBytes: 0, buffer: Buffer.from(new SharedArrayBuffer(2 * CHUNK)) });
    const r = tier.report();
    expect(r.h2d).toMatchObject({ bytes: 3 * CHUNK, copies: 3 });
    expect(r.d2h).toMatchObject({ bytes: 3 * CHUNK, copies: 3 });
    expect(r.demotionD2h).toMatchObject({ bytes: 2 * CHUNK, copies: 1 });
    for (const d of [r.h2d, r.d2h, r.demotionD2h]) {
      expect(d.busyNs).toBeGreaterThan(0);
      expect(d.linkBusyBytesPerSec).toBeGreaterThan(0);
      expect(d.perCopyBytesPerSec).toBeGreaterThan(0);
    }
  });

  it('splits each write and read into device time (its own copies executing) and the rest, host-side', async () => {
    const tier = await open(fake(), { depth: 1 });
    const slow =
      (key: string): ChunkSource =>
      async (chunk) => {
        await new Promise((r) => setTimeout(r, 5));
        await patternSource(key)(chunk);
      };
    const e = ref('s', 3 * CHUNK);
    tier.resetCopyStats();
    const w = await tier.write(e, slow('s'));
    // One entry alone in the window: its own copies are all the tier's host→device copies.
    expect(w.deviceNs).toBe(tier.report().h2d.busyNs);
    expect(w.deviceNs).toBeGreaterThan(0);
    // Its source slept 5 ms per chunk before each copy: host time, not the device's.
    expect(w.durationNs - w.deviceNs!).toBeGreaterThanOrEqual(3 * 5e6);
    tier.resetCopyStats();
    const r = await tier.read(e, async () => {
      await new Promise((res) => setTimeout(res, 5));
    });
    expect(r.deviceNs).toBe(tier.report().d2h.busyNs);
    expect(r.durationNs - r.deviceNs!).toBeGreaterThanOrEqual(3 * 5e6);
  });

  it('counts the chunks that waited for a staging slot, and how long they waited', async () => {
    const tier = await open(fake(), { stagingSlots: 1 });
    tier.resetCopyStats();
    const slow = async (chunk: Parameters<ChunkSource>[0]): Promise<void> => {
      await new Promise((r) => setTimeout(r, 5));
      chunk.buffer.fill(7);
    };
    // One slot, two entries of two chunks written at once: each chunk after the first waits for it.
    await Promise.all([tier.write(ref('a', 2 * CHUNK), slow), tier.write(ref('b', 2 * CHUNK), slow)]);
    const r = tier.report();
    expect(r.stagingSlots).toBe(1);
    expect(r.stagingWait.acquisitions).toBe(4);
    expect(r.stagingWait.waits).toBe(3);
    expect(r.stagingWait.waitNs).toBeGreaterThanOrEqual(r.stagingWait.maxWaitNs);
    expect(r.stagingWait.maxWaitNs).toBeGreaterThan(0);
    tier.resetCopyStats();
    expect(tier.report().stagingWait).toEqual({ acquisitions: 0, waits: 0, waitNs: 0, maxWaitNs: 0 });
  });

  it('copies any byte range out, into shared or plain buffers, whatever the chunking of the tier below', async () => {
    const tier = await open(fake());
    const e = ref('x', 3 * CHUNK + 500);
    await tier.write(e, patternSource('x'));
    for (const [offset, length] of [
      [0, 100],
      [CHUNK - 10, 20],
      [CHUNK / 2, 2 * CHUNK],
      [3 * CHUNK, 500],
    ]) {
      const shared = Buffer.from(new SharedArrayBuffer(length));
      await tier.copyChunkOut(e, { index: 0, entryOffsetBytes: offset, buffer: shared });
      expect(shared.equals(expectedBytes('x', offset, length))).toBe(true);
      const plain = Buffer.alloc(length);
      await tier.copyChunkOut(e, { index: 0, entryOffsetBytes: offset, buffer: plain });
      expect(plain.equals(expectedBytes('x', offset, length))).toBe(true);
    }
    await expect(tier.copyChunkOut(e, { index: 9, entryOffsetBytes: 3 * CHUNK, buffer: Buffer.alloc(501) })).rejects.toThrow(/outside/);
  });

  it('gives an entry’s device memory back on remove, and all of it to the driver on close', async () => {
    const driver = fake();
    const tier = await open(driver);
    await tier.write(ref('a', 300 * KiB), patternSource('a'));
    await tier.write(ref('b', 200 * KiB), patternSource('b'));
    expect(tier.usedBytes).toBe(500 * KiB);
    await tier.remove(ref('a', 300 * KiB));
    expect(tier.usedBytes).toBe(200 * KiB);
    expect(pendingExitCleanups()).toBeGreaterThan(0);
    await tier.close();
    expect(driver.allocatedBytes()).toBe(0);
    expect(driver.registered.size).toBe(0);
    expect(driver.primaryRetains).toEqual([0]);
    expect(tier.heldDeviceBytes).toBe(0);
    expect(pendingExitCleanups()).toBe(0);
    await tier.close(); // idempotent
    await expect(tier.write(ref('c', 1), patternSource('c'))).rejects.toThrow(/closed/);
  });

  it('refuses an entry it has no room for without leaking (the cache keeps it from happening)', async () => {
    const tier = await open(fake());
    await tier.write(ref('a', 3 * MiB), patternSource('a'));
    await expect(tier.write(ref('b', 2 * MiB), patternSource('b'))).rejects.toBeInstanceOf(GpuTierFullError);
    expect(tier.usedBytes).toBe(3 * MiB);
  });

  it('on a failed chunk gives the entry’s memory back only after its other copies have settled', async () => {
    const tier = await open(fake(), { depth: 4 });
    let started = 0;
    const failing: ChunkSource = async (chunk) => {
      started++;
      if (chunk.index === 2) throw new Error('source failed');
      await new Promise((r) => setTimeout(r, 5));
      chunk.buffer.fill(1);
    };
    await expect(tier.write(ref('bad', 8 * CHUNK), failing)).rejects.toThrow('source failed');
    expect(started).toBeLessThanOrEqual(4);
    expect(tier.usedBytes).toBe(0);
    expect(tier.entryCount).toBe(0);
  });

  it('surfaces a driver copy error as a CudaError and keeps no partial entry', async () => {
    const driver = fake();
    const tier = await open(driver);
    driver.failCopiesAfter = { count: 1, code: 700 /* CUDA_ERROR_ILLEGAL_ADDRESS */ };
    const err = await tier.write(ref('a', 3 * CHUNK), patternSource('a')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CudaError);
    expect((err as CudaError).cudaName).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(tier.usedBytes).toBe(0);
  });

  it('keeps working with pageable staging when the driver refuses to pin it, and says so', async () => {
    const driver = fake();
    driver.refuseHostRegister = true;
    const tier = await open(driver);
    expect(tier.report()).toMatchObject({ stagingPinned: false, stagingReason: expect.stringMatching(/cuMemHostRegister refused/) });
    await tier.write(ref('a', 2 * CHUNK), patternSource('a'));
    expect((await readAll(tier, ref('a', 2 * CHUNK))).equals(expectedBytes('a', 0, 2 * CHUNK))).toBe(true);
    await tier.close();
    expect(driver.registered.size).toBe(0);
  });

  it('uses the GPUs there are (up to --num-gpus), spreads entries over them, and reports a shortfall', async () => {
    const driver = fake([
      { name: 'Fake A', totalMemoryBytes: 8 * MiB },
      { name: 'Fake B', totalMemoryBytes: 8 * MiB },
    ]);
    const tier = await open(driver, { numGpus: 3, perDeviceBudgetBytes: 2 * MiB });
    expect(tier.budgetBytes).toBe(4 * MiB);
    expect(tier.report().shortfallReason).toMatch(/--num-gpus 3 asked for 3 GPUs, the driver reports 2/);
    for (let i = 0; i < 6; i++) await tier.write(ref(`e${i}`, 500 * KiB), patternSource(`e${i}`));
    expect(driver.allocatedBytes(0)).toBe(2 * MiB);
    expect(driver.allocatedBytes(1)).toBe(2 * MiB);
    for (let i = 0; i < 6; i++) expect((await readAll(tier, ref(`e${i}`, 500 * KiB))).equals(expectedBytes(`e${i}`, 0, 500 * KiB))).toBe(true);
    // Both devices' copies went through their own context and stream (the fake checks).
    expect(driver.callCount('cuMemcpyHtoDAsync')).toBeGreaterThanOrEqual(12);
  });

  it('leaves headroom on each GPU: reserves at most its free memory less max(minBytes, fraction of total), and says so', async () => {
    const driver = fake([{ name: 'Shared GPU', totalMemoryBytes: 16 * MiB }]);
    driver.externalUseBytes[0] = 2 * MiB;
    const tier = await open(driver, { perDeviceBudgetBytes: 16 * MiB, headroom: { minBytes: 4 * MiB, fractionOfTotal: 0.02 } });
    expect(tier.budgetBytes).toBe(10 * MiB);
    expect(driver.allocatedBytes()).toBe(10 * MiB);
    const r = tier.report();
    expect(r.devices[0]).toMatchObject({ freeBytesAtOpen: 14 * MiB, reservationCapBytes: 10 * MiB, reservedBytes: 10 * MiB });
    expect(r.shortfallReason).toBe(
      `GPU 0 (Shared GPU): reserved ${10 * MiB} of ${16 * MiB} bytes (capped at ${10 * MiB} bytes: ${14 * MiB} free of ${16 * MiB}, less ${4 * MiB} left to the driver and other processes)`,
    );
    // 2 % of the total when that is more than minBytes.
    const big = fake([{ name: 'Big GPU', totalMemoryBytes: 64 * MiB }]);
    const t2 = await open(big, { perDeviceBudgetBytes: 64 * MiB, headroom: { minBytes: 0, fractionOfTotal: 0.25 } });
    expect(t2.budgetBytes).toBe(48 * MiB);
  });

  it('by default keeps at least 1 GiB free on a GPU: a card smaller than that gets no tier', async () => {
    const driver = fake();
    await expect(open(driver, { headroom: undefined })).rejects.toThrow(/no device memory could be reserved: GPU 0: capped at 0 bytes/);
    tiers.length = 0;
    expect(driver.allocatedBytes()).toBe(0);
  });

  it('gives back everything it took when opening fails', async () => {
    const driver = fake();
    driver.failNext.set('cuStreamCreate', 999);
    await expect(open(driver)).rejects.toThrow(/cuStreamCreate failed: CUDA_ERROR_UNKNOWN/);
    tiers.length = 0;
    expect(driver.allocatedBytes()).toBe(0);
    expect(driver.registered.size).toBe(0);
    expect(driver.primaryRetains).toEqual([0]);
    expect(pendingExitCleanups()).toBe(0);
  });

  it('openGpuTier reports why there is no tier instead of throwing', async () => {
    const driver = fake();
    driver.failNext.set('cuInit', 100);
    const r = await openGpuTier({ driver, numGpus: 1, perDeviceBudgetBytes: MiB, chunkBytes: CHUNK });
    expect(r).toEqual({ ok: false, reason: 'no GPU tier: cuInit failed: CUDA_ERROR_NO_DEVICE (100)' });
  });
});

describe('GpuTier under MultiTierCache, with a CPU tier below', () => {
  it('places new entries on the GPU, keeps it at 80 % by demoting LRU entries to the CPU with their bytes, and never drops one', async () => {
    const driver = fake();
    const gpu = await open(driver, { perDeviceBudgetBytes: 1 * MiB });
    const { bytes, tier: cpu } = await cpuTier(64 * MiB);
    const cache = new MultiTierCache([
      { backend: gpu, budgetBytes: gpu.budgetBytes },
      { backend: cpu, budgetBytes: 64 * MiB },
    ]);
    const size = 100 * KiB + 17;
    const keys = Array.from({ length: 30 }, (_, i) => `k${i}`);
    for (const k of keys) {
      const w = await cache.write(ref(k, size), patternSource(k));
      expect(w.tier).toBe('gpu');
      const [g] = cache.usage();
      expect(g.usedBytes).toBeLessThanOrEqual(0.8 * gpu.budgetBytes);
      // The tier's device memory in use is exactly what the cache accounts to it.
      expect(gpu.usedBytes).toBe(g.usedBytes);
    }
    const [g, c] = cache.usage();
    expect(g.entries).toBe(Math.floor((0.8 * MiB) / size));
    expect(g.entries + c.entries).toBe(keys.length);
    expect(cache.demotions.get('gpu->cpu')!.count).toBe(keys.length - g.entries);
    expect(cache.tierStats.get('cpu')!.evictedEntries + cache.tierStats.get('gpu')!.evictedEntries).toBe(0);
    expect(cache.placementFailures).toBe(0);
    // LRU: the oldest went down, the newest stayed.
    expect(cache.tierOf('k0')).toBe('cpu');
    expect(cache.tierOf(keys.at(-1)!)).toBe('gpu');
    // Every entry reads back intact from wherever it lives.
    for (const k of keys) {
      const out = Buffer.alloc(size);
      const r = await cache.read(k, 'user', () => async (ch) => {
        out.set(ch.buffer, ch.entryOffsetBytes);
      });
      expect(r.hit).toBe(true);
      expect(out.equals(expectedBytes(k, 0, size))).toBe(true);
    }
    // The device memory never exceeded the reservation, which never exceeded the budget.
    expect(driver.peakAllocatedBytes).toBe(1 * MiB);
    await cache.clear();
    expect(gpu.usedBytes).toBe(0);
    await gpu.close();
    await bytes.close();
    expect(driver.allocatedBytes()).toBe(0);
  });

  it('when the driver runs out of memory the GPU tier holds what it got, and the cache demotes instead of dropping', async () => {
    // 4 MiB asked per GPU, but another process holds most of the card: CUDA_ERROR_OUT_OF_MEMORY
    // during the reservation, which stops at what is there.
    const driver = fake([{ name: 'Busy GPU', totalMemoryBytes: 4 * MiB }]);
    driver.externalUseBytes[0] = 3 * MiB + 512 * KiB;
    // ... after cuMemGetInfo said the card was free (the other process allocated in between).
    driver.cuMemGetInfo = () => ({ freeBytes: 4 * MiB, totalBytes: 4 * MiB });
    const gpu = await open(driver, { perDeviceBudgetBytes: 4 * MiB });
    expect(driver.callCount('cuMemAlloc')).toBeGreaterThan(1);
    expect(gpu.budgetBytes).toBe(512 * KiB);
    expect(gpu.report().shortfallReason).toMatch(/GPU 0 \(Busy GPU\): reserved 524288 of 4194304 bytes \(CUDA_ERROR_OUT_OF_MEMORY/);
    const { bytes, tier: cpu } = await cpuTier(64 * MiB);
    const cache = new MultiTierCache([
      { backend: gpu, budgetBytes: gpu.budgetBytes },
      { backend: cpu, budgetBytes: 64 * MiB },
    ]);
    // And the card fills up further during the run: the tier already holds its memory.
    driver.externalUseBytes[0] = 4 * MiB - driver.allocatedBytes();
    const size = 60 * KiB;
    for (let i = 0; i < 40; i++) await cache.write(ref(`k${i}`, size), patternSource(`k${i}`));
    const [g, c] = cache.usage();
    expect(g.entries + c.entries).toBe(40);
    expect(g.usedBytes).toBeLessThanOrEqual(0.8 * gpu.budgetBytes);
    expect(cache.demotions.get('gpu->cpu')!.count).toBe(40 - g.entries);
    expect(cache.tierStats.get('gpu')!.evictedEntries).toBe(0);
    for (let i = 0; i < 40; i += 7) {
      const out = Buffer.alloc(size);
      await cache.read(`k${i}`, 'user', () => async (ch) => {
        out.set(ch.buffer, ch.entryOffsetBytes);
      });
      expect(out.equals(expectedBytes(`k${i}`, 0, size))).toBe(true);
    }
    await cache.clear();
    await gpu.close();
    await bytes.close();
    expect(driver.allocatedBytes()).toBe(0);
  });

  it('stops counting copies when the window closes, chunk by chunk as the cache stops counting the tier’s bytes', async () => {
    const gpu = await open(fake(), { depth: 1 });
    const cache = new MultiTierCache([{ backend: gpu, budgetBytes: gpu.budgetBytes }]);
    const openWindow = (): void => {
      cache.openWindow();
      gpu.resetCopyStats();
    };
    const closeWindow = (): void => {
      cache.closeWindow();
      gpu.stopCopyStats();
    };
    /** Holds the chunk `index` reaches it until the test lets go, with the window closed meanwhile. */
    const closeAtChunk = (index: number) => {
      let reached!: () => void;
      const atChunk = new Promise<void>((r) => (reached = r));
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      return {
        hold: async (chunkIndex: number): Promise<void> => {
          if (chunkIndex !== index) return;
          reached();
          await held;
        },
        closeThere: async (): Promise<void> => {
          await atChunk;
          closeWindow();
          release();
        },
      };
    };
    // A write whose window closes while its third chunk is being filled: two chunks counted on each side.
    openWindow();
    const w = closeAtChunk(2);
    const writing = cache.write(ref('w', 4 * CHUNK), async (chunk) => {
      await w.hold(chunk.index);
      await patternSource('w')(chunk);
    });
    await w.closeThere();
    await writing;
    expect(gpu.report().h2d).toMatchObject({ bytes: 2 * CHUNK, copies: 2 });
    expect(cache.tierStats.get('gpu')!.write.bytes).toBe(2 * CHUNK);

    // A read whose window closes while its second chunk's sink runs: that chunk had moved, the rest not.
    openWindow();
    const r = closeAtChunk(1);
    const reading = cache.read('w', 'user', () => (chunk) => r.hold(chunk.index));
    await r.closeThere();
    await reading;
    expect(gpu.report().d2h).toMatchObject({ bytes: 2 * CHUNK, copies: 2 });
    expect(cache.tierStats.get('gpu')!.read.bytes).toBe(2 * CHUNK);
    // Nothing is counted after the close, however many copies follow.
    await cache.read('w', 'user');
    expect(gpu.report().d2h.bytes).toBe(2 * CHUNK);
    expect(gpu.report().d2h.busyNs).toBeGreaterThan(0);
    await cache.clear();
  });

  it('moves concurrent writers’ entries without mixing bytes (many writes and demotions in flight)', async () => {
    const gpu = await open(fake(), { perDeviceBudgetBytes: 2 * MiB, depth: 3 });
    const { bytes, tier: cpu } = await cpuTier(64 * MiB);
    const cache = new MultiTierCache([
      { backend: gpu, budgetBytes: gpu.budgetBytes },
      { backend: cpu, budgetBytes: 64 * MiB },
    ]);
    const keys = Array.from({ length: 48 }, (_, i) => `c${i}`);
    const sizeOf = (i: number): number => 37 * KiB + i * 3001;
    await Promise.all(keys.map((k, i) => cache.write(ref(k, sizeOf(i)), patternSource(k))));
    expect(cache.usage().reduce((n, t) => n + t.entries, 0)).toBe(keys.length);
    await Promise.all(
      keys.map(async (k, i) => {
        const out = Buffer.alloc(sizeOf(i));
        await cache.read(k, 'user', () => async (ch) => {
          out.set(ch.buffer, ch.entryOffsetBytes);
        });
        expect(out.equals(expectedBytes(k, 0, sizeOf(i)))).toBe(true);
      }),
    );
    await cache.clear();
    await gpu.close();
    await bytes.close();
  });
});

describe('GpuTier with copy worker threads', () => {
  it('runs the copies in workers attached to the same (fake) device memory', async () => {
    const driver = fake([{ name: 'Fake H100', totalMemoryBytes: 16 * MiB }], true);
    const gpu = await open(driver, { copyThreads: 2, perDeviceBudgetBytes: 2 * MiB });
    expect(gpu.report().copyThreads).toBe(2);
    const sizes = [CHUNK * 3 + 5, 1000, CHUNK];
    for (const [i, s] of sizes.entries()) await gpu.write(ref(`w${i}`, s), patternSource(`w${i}`));
    // The main thread's driver made no copies: the workers did, into the shared device memory.
    expect(driver.callCount('cuMemcpyHtoDAsync')).toBe(0);
    for (const [i, s] of sizes.entries()) expect((await readAll(gpu, ref(`w${i}`, s))).equals(expectedBytes(`w${i}`, 0, s))).toBe(true);
    const plain = Buffer.alloc(777);
    await gpu.copyChunkOut(ref('w0', sizes[0]), { index: 0, entryOffsetBytes: CHUNK - 100, buffer: plain });
    expect(plain.equals(expectedBytes('w0', CHUNK - 100, 777))).toBe(true);
    expect(gpu.report().h2d.copies).toBe(4 + 1 + 1);
    await gpu.close();
    expect(driver.allocatedBytes()).toBe(0);
    expect(driver.registered.size).toBe(0);
  });

  /** A tier whose copy worker's copies wait in the driver until `hold` lets them through. */
  async function heldTier(hold: CopyHold, o: Partial<GpuTierOpenOptions> = {}): Promise<GpuTier> {
    const driver = new FakeCudaDriver({ devices: [{ name: 'Fake H100', totalMemoryBytes: 16 * MiB }], shareable: true, holdCopies: hold });
    return open(driver, { copyThreads: 1, perDeviceBudgetBytes: 2 * MiB, depth: 1, ...o });
  }

  it('counts a copy in flight across the window’s close on neither side: handed off before it, its reply lands after it', async () => {
    const hold = new CopyHold(2);
    const gpu = await heldTier(hold);
    const cache = new MultiTierCache([{ backend: gpu, budgetBytes: gpu.budgetBytes }]);
    cache.openWindow();
    gpu.resetCopyStats();
    const writing = cache.write(ref('w', 4 * CHUNK), patternSource('w'));
    writing.catch(() => undefined); // awaited below; a failed assertion before then closes the tier under it
    // The third chunk's copy is in the driver: handed to the copy worker, no reply yet.
    await hold.untilArrived(3);
    cache.closeWindow();
    gpu.stopCopyStats();
    const atClose = gpu.report().h2d;
    hold.letThrough(Infinity);
    await writing;
    expect(atClose).toMatchObject({ bytes: 2 * CHUNK, copies: 2 });
    expect(atClose.busyNs).toBeGreaterThan(0);
    // Its reply (and the fourth chunk's copy) came after the close: no bytes, no copy, no busy time.
    expect(gpu.report().h2d).toMatchObject({ bytes: 2 * CHUNK, copies: 2, busyNs: atClose.busyNs });
    expect(cache.tierStats.get('gpu')!.write.bytes).toBe(2 * CHUNK);
    // Nor any copy after it.
    await cache.read('w', 'user');
    expect(gpu.report().h2d.busyNs).toBe(atClose.busyNs);
    expect(gpu.report().d2h).toMatchObject({ bytes: 0, copies: 0, busyNs: 0 });
    await cache.clear();
  });

  it('tells the cache each chunk of a demotion into a buffer the workers cannot reach as its copy through staging counts, not after the last one', async () => {
    // The 3 write copies pass; of the demotion's 3 copies through a one-chunk staging slot, the first does.
    const hold = new CopyHold(3 + 1);
    const gpu = await heldTier(hold);
    const e = ref('p', 3 * CHUNK);
    await gpu.write(e, patternSource('p'));
    // A window as the cache keeps it: the chunks it is told of while open, the tier's copies counted alike.
    gpu.resetCopyStats();
    let recording = true;
    let toldInWindowBytes = 0;
    let toldBytes = 0;
    const plain = Buffer.alloc(3 * CHUNK);
    const demoting = gpu.copyChunkOut(e, { index: 0, entryOffsetBytes: 0, buffer: plain }, (bytes) => {
      toldBytes += bytes;
      if (recording) toldInWindowBytes += bytes;
    });
    demoting.catch(() => undefined); // awaited below; a failed assertion before then closes the tier under it
    // The second copy is in the driver: the first has completed, been counted, and been told.
    await hold.untilArrived(3 + 2);
    expect(gpu.report().d2h).toMatchObject({ bytes: CHUNK, copies: 1 });
    expect(toldBytes).toBe(CHUNK);
    recording = false;
    gpu.stopCopyStats();
    hold.letThrough(Infinity);
    await demoting;
    expect(plain.equals(expectedBytes('p', 0, 3 * CHUNK))).toBe(true);
    expect(toldBytes).toBe(3 * CHUNK);
    // What the cache counted in the window is what the tier's copies counted.
    expect(toldInWindowBytes).toBe(gpu.report().d2h.bytes);
    expect(toldInWindowBytes).toBe(CHUNK);
  });
});
