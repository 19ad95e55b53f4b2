// The koffi binding of the driver API, for real: the "no driver" path on this machine (no NVIDIA
// driver here), and, where a C compiler exists, every binding against a stub libcuda built from
// fixtures/stub-libcuda.c, with copies in worker threads, through the cache.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import koffi from 'koffi';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { keyHash64, PayloadPool } from '../../../src-main/engine/io/payload.ts';
import { CpuTier } from '../../../src-main/engine/tiers/cpu-tier.ts';
import { CudaError, type CudaDriver } from '../../../src-main/engine/tiers/gpu/cuda-driver.ts';
import { GpuTier } from '../../../src-main/engine/tiers/gpu/gpu-tier.ts';
import { CUDA_LIBRARY_ENV, DEFAULT_CUDA_LIBRARY, defaultCudaLibrary, loadCudaDriver } from '../../../src-main/engine/tiers/gpu/koffi-cuda-driver.ts';
import { openGpuTier } from '../../../src-main/engine/tiers/gpu/open-gpu-tier.ts';
import { probeCudaDriver } from '../../../src-main/hardware/gpu-driver.ts';
import { buildStubLibcuda, hasCc } from './stub-libcuda.ts';
import { skippedBecause } from '../../support/skip.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

describe('koffi CUDA driver: no driver installed', () => {
  it('loading libcuda.so.1 gives a reason naming it instead of throwing', async (ctx) => {
    const r = await loadCudaDriver();
    if (r.ok) ctx.skip(); // a machine with the NVIDIA driver
    expect(DEFAULT_CUDA_LIBRARY).toBe('libcuda.so.1');
    expect(r).toEqual({ ok: false, reason: expect.stringContaining('libcuda.so.1 could not be loaded') });
    expect(r.ok === false && r.reason).toMatch(/cannot open shared object file|no NVIDIA driver/);
  });

  it('probeCudaDriver says available: false with the reason, and no devices', async (ctx) => {
    const p = await probeCudaDriver();
    if (p.available) ctx.skip();
    expect(p).toMatchObject({ available: false, devices: [], cudaVersion: null, library: 'libcuda.so.1' });
    expect(p.reason).toMatch(/^libcuda\.so\.1 could not be loaded/);
  });

  it('openGpuTier reports the GPU tier absent with that reason', async (ctx) => {
    const r = await openGpuTier({ numGpus: 1, perDeviceBudgetBytes: MiB, chunkBytes: 64 * KiB });
    if (r.ok) {
      await r.tier.close();
      ctx.skip();
    }
    expect(r.ok === false && r.reason).toMatch(/^no GPU tier: libcuda\.so\.1 could not be loaded/);
  });

  it('names any library path it could not load', async () => {
    const r = await loadCudaDriver({ libraryPath: '/nonexistent/libcuda.so.1' });
    expect(r.ok === false && r.reason).toMatch(/^\/nonexistent\/libcuda\.so\.1 could not be loaded/);
  });
});

describe('KVBENCH_CUDA_LIBRARY names the driver library for every command', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('is the default library when set and not blank, else libcuda.so.1', () => {
    expect(CUDA_LIBRARY_ENV).toBe('KVBENCH_CUDA_LIBRARY');
    expect(defaultCudaLibrary({})).toBe(DEFAULT_CUDA_LIBRARY);
    expect(defaultCudaLibrary({ KVBENCH_CUDA_LIBRARY: '  ' })).toBe(DEFAULT_CUDA_LIBRARY);
    expect(defaultCudaLibrary({ KVBENCH_CUDA_LIBRARY: ' /usr/local/nvidia/lib64/libcuda.so.1 ' })).toBe('/usr/local/nvidia/lib64/libcuda.so.1');
  });

  it('loadCudaDriver, probeCudaDriver and openGpuTier all try the library it names, and say so when it fails', async () => {
    vi.stubEnv('KVBENCH_CUDA_LIBRARY', '/nonexistent/env/libcuda.so.1');
    const r = await loadCudaDriver();
    expect(r.ok === false && r.reason).toMatch(/^\/nonexistent\/env\/libcuda\.so\.1 could not be loaded .*KVBENCH_CUDA_LIBRARY names/);
    const p = await probeCudaDriver({ procVersionPath: '/nonexistent', nvidiaSmi: null });
    expect(p).toMatchObject({ available: false, library: '/nonexistent/env/libcuda.so.1' });
    const t = await openGpuTier({ numGpus: 1, perDeviceBudgetBytes: MiB, chunkBytes: 64 * KiB });
    expect(t.ok === false && t.reason).toMatch(/^no GPU tier: \/nonexistent\/env\/libcuda\.so\.1 could not be loaded/);
  });
});

/** A 4 MiB tier of 256 KiB chunks with 2 copy worker threads, on the stub. */
function openStubTier(driver: CudaDriver): Promise<GpuTier> {
  return GpuTier.open({
    driver,
    numGpus: 1,
    perDeviceBudgetBytes: 4 * MiB,
    chunkBytes: 256 * KiB,
    slabBytes: 1 * MiB,
    copyThreads: 2,
    headroom: { minBytes: 1 * MiB, fractionOfTotal: 0.02 },
  });
}

describe.skipIf(skippedBecause(!hasCc, 'no C compiler (cc) to build the stub libcuda: the koffi CUDA driver is not tested against it'))('koffi CUDA driver against a stub libcuda (built with cc)', () => {
  let dir: string;
  let stubPath: string;
  let stub: {
    configure: (devices: number, memoryBytes: number) => void;
    outstandingBytes: () => number;
    registered: () => number;
    retains: () => number;
    copies: () => number;
    unpinnedCopies: () => number;
  };

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-stub-cuda-'));
    stubPath = buildStubLibcuda(dir);
    const lib = koffi.load(stubPath);
    const configure = lib.func('void stub_configure(int devices, size_t bytes)');
    const outstanding = lib.func('size_t stub_outstanding_bytes(void)');
    const registered = lib.func('int stub_registered_count(void)');
    const retains = lib.func('int stub_retain_count(void)');
    const copies = lib.func('long long stub_copy_count(void)');
    const unpinned = lib.func('long long stub_unpinned_copy_count(void)');
    stub = {
      configure: (d, b) => configure(d, b),
      outstandingBytes: () => Number(outstanding()),
      registered: () => registered() as number,
      retains: () => retains() as number,
      copies: () => Number(copies()),
      unpinnedCopies: () => Number(unpinned()),
    };
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('probes devices, memory, PCI bus and CUDA version through the bindings', async () => {
    stub.configure(2, 48 * MiB);
    const p = await probeCudaDriver({ libraryPath: stubPath, procVersionPath: '/nonexistent', nvidiaSmi: null });
    expect(p).toEqual({
      available: true,
      reason: null,
      driverVersion: null,
      cudaVersion: '12.4',
      library: stubPath,
      devices: [
        { index: 0, name: 'Stub CUDA Device 0', totalMemoryBytes: 48 * MiB, pciBusId: '00000000:41:00.0' },
        { index: 1, name: 'Stub CUDA Device 1', totalMemoryBytes: 48 * MiB, pciBusId: '00000000:42:00.0' },
      ],
    });
  });

  it('loads the stub through KVBENCH_CUDA_LIBRARY alone (no path passed)', async () => {
    vi.stubEnv('KVBENCH_CUDA_LIBRARY', stubPath);
    try {
      stub.configure(1, 16 * MiB);
      const p = await probeCudaDriver({ procVersionPath: '/nonexistent', nvidiaSmi: null });
      expect(p).toMatchObject({ available: true, library: stubPath, devices: [{ name: 'Stub CUDA Device 0' }] });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('turns CUresults into CudaErrors with the driver’s own error names', async () => {
    const r = await loadCudaDriver({ libraryPath: stubPath });
    if (!r.ok) throw new Error(r.reason);
    const d = r.driver;
    d.cuInit(0);
    d.cuCtxSetCurrent(null);
    const err = (() => {
      try {
        d.cuMemAlloc(1);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CudaError);
    expect((err as CudaError).message).toBe('cuMemAlloc failed: CUDA_ERROR_INVALID_CONTEXT (201)');
    const ctx = d.cuDevicePrimaryCtxRetain(0);
    d.cuCtxSetCurrent(ctx);
    stub.configure(1, 8 * MiB);
    expect(() => d.cuMemAlloc(9 * MiB)).toThrow('cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)');
    // 64-bit device pointers survive the round trip: the bytes come back.
    const p = d.cuMemAlloc(4096);
    expect(p).toBeGreaterThan(2 ** 32);
    const src = Buffer.from(new SharedArrayBuffer(4096)).fill(0xab);
    d.cuMemcpyHtoD(p, src);
    const back = Buffer.alloc(4096);
    d.cuMemcpyDtoH(back, p);
    expect(back.equals(src)).toBe(true);
    expect(d.cuMemGetInfo()).toEqual({ freeBytes: 8 * MiB - 4096, totalBytes: 8 * MiB });
    d.cuMemFree(p);
    d.cuDevicePrimaryCtxRelease(0);
    d.cuCtxSetCurrent(null);
    expect(stub.outstandingBytes()).toBe(0);
  });

  it('runs the GPU tier on the bindings with copies in worker threads, under the cache, and frees everything on close', async () => {
    stub.configure(1, 32 * MiB);
    const r = await loadCudaDriver({ libraryPath: stubPath });
    if (!r.ok) throw new Error(r.reason);
    const copiesBefore = stub.copies();
    const unpinnedBefore = stub.unpinnedCopies();
    const gpu = await openStubTier(r.driver);
    expect(stub.outstandingBytes()).toBe(4 * MiB);
    expect(stub.registered()).toBe(1);
    expect(gpu.report()).toMatchObject({ copyThreads: 2, stagingPinned: true, devices: [{ name: 'Stub CUDA Device 0' }] });

    const payload = PayloadPool.create(3, 4 * MiB);
    const bytes = await BytePool.start({ threads: 1, pool: payload });
    const cpu = new CpuTier({ chunkBytes: 256 * KiB, bytes, staging: new AlignedSlab(256 * KiB, 4), budgetBytes: 64 * MiB, depth: 2 });
    const cache = new MultiTierCache([
      { backend: gpu, budgetBytes: gpu.budgetBytes },
      { backend: cpu, budgetBytes: 64 * MiB },
    ]);
    const size = 700 * KiB;
    const entries = Array.from({ length: 12 }, (_, i) => ({ key: `e${i}`, keyHash: keyHash64(`e${i}`, 3), sizeBytes: size }));
    for (const e of entries) await cache.write(e, (chunk) => bytes.fill(chunk.buffer, e.keyHash, chunk.entryOffsetBytes));
    expect(cache.demotions.get('gpu->cpu')!.count).toBeGreaterThan(0);
    for (const e of entries) {
      await cache.read(e.key, 'user', () => async (chunk) => {
        const v = await bytes.verify(chunk.buffer, e.keyHash, chunk.entryOffsetBytes);
        expect(v.ok).toBe(true);
      });
    }
    expect(stub.copies()).toBeGreaterThan(copiesBefore);
    const report = gpu.report();
    expect(report.h2d.bytes).toBeGreaterThanOrEqual(12 * size);
    expect(report.d2h.bytes).toBeGreaterThan(0);
    // The driver saw every staging copy's host range inside the registered staging memory: koffi passed
    // the buffer's own address. Only the demotion copies (into the CPU tier's segments) are pageable.
    expect(report.demotionD2h.copies).toBeGreaterThan(0);
    expect(stub.unpinnedCopies() - unpinnedBefore).toBe(report.demotionD2h.copies);
    await cache.clear();
    await gpu.close();
    await bytes.close();
    expect(stub.outstandingBytes()).toBe(0);
    expect(stub.registered()).toBe(0);
    expect(stub.retains()).toBe(0);
  });

  it('every copy the tier makes through its staging comes from registered (pinned) host memory', async () => {
    stub.configure(1, 32 * MiB);
    const r = await loadCudaDriver({ libraryPath: stubPath });
    if (!r.ok) throw new Error(r.reason);
    const gpu = await openStubTier(r.driver);
    const copiesBefore = stub.copies();
    const unpinnedBefore = stub.unpinnedCopies();
    const e = { key: 'p', keyHash: keyHash64('p', 3), sizeBytes: 900 * KiB };
    await gpu.write(e, async (chunk) => {
      chunk.buffer.fill(7);
    });
    await gpu.read(e, async () => undefined);
    // A plain (unshared) buffer goes through staging too.
    await gpu.copyChunkOut(e, { index: 0, entryOffsetBytes: 0, buffer: Buffer.alloc(300 * KiB) });
    expect(stub.copies() - copiesBefore).toBe(4 + 4 + 2);
    expect(stub.unpinnedCopies() - unpinnedBefore).toBe(0);
    // …and the counter does count a copy from memory that is not registered.
    const outside = Buffer.from(new SharedArrayBuffer(256 * KiB));
    await gpu.copyChunkOut(e, { index: 0, entryOffsetBytes: 0, buffer: outside });
    expect(stub.unpinnedCopies() - unpinnedBefore).toBe(1);
    await gpu.close();
  });

  it('frees device memory and unpins staging from the exit hook when the process ends without close()', () => {
    const url = (rel: string): string => JSON.stringify(new URL(rel, import.meta.url).href);
    const script = `
      import koffi from ${url('../../../node_modules/koffi/index.js')};
      import { loadCudaDriver } from ${url('../../../src-main/engine/tiers/gpu/koffi-cuda-driver.ts')};
      import { GpuTier } from ${url('../../../src-main/engine/tiers/gpu/gpu-tier.ts')};
      const lib = koffi.load(process.argv[2]);
      const outstanding = lib.func('size_t stub_outstanding_bytes(void)');
      const registered = lib.func('int stub_registered_count(void)');
      const r = await loadCudaDriver({ libraryPath: process.argv[2] });
      if (!r.ok) throw new Error(r.reason);
      await GpuTier.open({ driver: r.driver, numGpus: 1, perDeviceBudgetBytes: 2 * 1024 * 1024, chunkBytes: 65536, slabBytes: 1024 * 1024, copyThreads: 1, headroom: { minBytes: 0, fractionOfTotal: 0 } });
      console.log('held', Number(outstanding()), registered());
      // Registered after the tier's hook, so it runs after it.
      process.on('exit', () => console.log('after exit hook', Number(outstanding()), registered()));
      setTimeout(() => { throw new Error('simulated crash'); }, 1);
    `;
    // A file, not -e: worker threads inherit execArgv, and --input-type breaks them.
    const file = path.join(dir, 'crash.mjs');
    fs.writeFileSync(file, script);
    const r = spawnSync(process.execPath, [file, stubPath], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toMatch(/simulated crash/);
    expect(r.stdout).toBe(`held ${2 * MiB} 1\nafter exit hook 0 0\n`);
  });

  it('reports a library that lacks the functions kvbench needs', async () => {
    const src = path.join(dir, 'old.c');
    fs.writeFileSync(src, 'int cuInit(unsigned int f) { return 0; }\n');
    const so = path.join(dir, 'libold.so');
    expect(spawnSync('cc', ['-shared', '-fPIC', '-o', so, src]).status).toBe(0);
    const r = await loadCudaDriver({ libraryPath: so });
    expect(r.ok === false && r.reason).toMatch(/lacks a driver API function kvbench needs/);
  });
});
