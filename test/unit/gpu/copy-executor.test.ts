import { describe, expect, it } from 'vitest';
import { CopyExecutor, type CopySegment } from '../../../src-main/engine/tiers/gpu/copy-executor.ts';
import { CudaError } from '../../../src-main/engine/tiers/gpu/cuda-driver.ts';
import { FakeCudaDriver } from './fake-cuda-driver.ts';

const KiB = 1024;

/** Two fake GPUs with one 64 KiB allocation each, and a copy of 4 segments alternating between them. */
function setup() {
  const driver = new FakeCudaDriver({
    devices: [
      { name: 'Fake A', totalMemoryBytes: 1024 * KiB },
      { name: 'Fake B', totalMemoryBytes: 1024 * KiB },
    ],
  });
  driver.cuInit(0);
  const ptrs = [0, 1].map((d) => {
    driver.cuCtxSetCurrent(driver.cuDevicePrimaryCtxRetain(d));
    return driver.cuMemAlloc(64 * KiB);
  });
  const executor = new CopyExecutor(driver, [0, 1]);
  const segments: CopySegment[] = [0, 1, 2, 3].map((i) => ({ device: i % 2, dptr: ptrs[i % 2] + (i >> 1) * 4 * KiB, hostOffset: i * 4 * KiB, bytes: 4 * KiB }));
  return { driver, executor, segments, host: new Uint8Array(16 * KiB) };
}

describe('CopyExecutor', () => {
  it('copies every segment and waits for each device’s stream', () => {
    const { driver, executor, segments, host } = setup();
    const before = process.hrtime.bigint();
    const { startNs, endNs } = executor.run('htod', host, segments);
    expect(startNs).toBeGreaterThanOrEqual(before);
    expect(endNs).toBeGreaterThanOrEqual(startNs);
    expect(driver.callCount('cuMemcpyHtoDAsync')).toBe(4);
    expect(driver.unsynchronisedCopies()).toBe(0);
    executor.close();
  });

  it('when a later copy fails, waits for the copies already queued before throwing (the caller frees their memory next)', () => {
    const { driver, executor, segments, host } = setup();
    driver.failCopiesAfter = { count: 2, code: 700 };
    const err = (() => {
      try {
        executor.run('htod', host, segments);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(CudaError);
    expect((err as CudaError).cudaName).toBe('CUDA_ERROR_ILLEGAL_ADDRESS');
    expect(driver.callCount('cuMemcpyHtoDAsync')).toBe(3);
    expect(driver.unsynchronisedCopies()).toBe(0);
    executor.close();
  });

  it('when one device’s synchronise fails, still waits for the others, then throws that first error', () => {
    const { driver, executor, segments, host } = setup();
    driver.failNext.set('cuStreamSynchronize', 999);
    expect(() => executor.run('dtoh', host, segments)).toThrow(/cuStreamSynchronize failed: CUDA_ERROR_UNKNOWN/);
    expect(driver.callCount('cuStreamSynchronize')).toBe(2);
    expect(driver.unsynchronisedCopies()).toBe(0);
    executor.close();
  });

  it('checks every segment against the host buffer before queuing any copy', () => {
    const { driver, executor, segments, host } = setup();
    const bad = [...segments, { device: 0, dptr: segments[0].dptr, hostOffset: 16 * KiB - 1, bytes: 2 }];
    expect(() => executor.run('htod', host, bad)).toThrow(RangeError);
    expect(driver.callCount('cuMemcpyHtoDAsync')).toBe(0);
    executor.close();
  });
});
