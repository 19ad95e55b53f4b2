import { describe, expect, it } from 'vitest';
import { GpuCopyError, WorkerCopyEngine } from '../../../src-main/engine/tiers/gpu/copy-engine.ts';

describe('WorkerCopyEngine start-up', () => {
  // A start that never gave up would hang here: the test's own timeout, far above the 0.3 s limit,
  // catches that without asserting how long the start took (timings are bench/'s).
  it('gives up on workers that never become ready, terminates them and says why', { timeout: 30_000 }, async () => {
    const err = await WorkerCopyEngine.start({
      driver: { moduleUrl: new URL('./fake-cuda-driver.ts', import.meta.url).href, exportName: 'openHangingWorkerDriver', options: null },
      devices: [0],
      threads: 2,
      startTimeoutMs: 300,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuCopyError);
    expect(err).toMatchObject({ code: 'GPU_COPY_WORKER_START_TIMEOUT', message: expect.stringMatching(/did not start within 0.3 s/) });
  });
});

describe('WorkerCopyEngine on the exit path', () => {
  it('stopForExit starts no more copies and returns only once the copy inside the driver has finished', async () => {
    const sig = new Int32Array(new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT));
    const engine = await WorkerCopyEngine.start({
      driver: { moduleUrl: new URL('./fake-cuda-driver.ts', import.meta.url).href, exportName: 'openGatedWorkerDriver', options: { sig: sig.buffer } },
      devices: [0],
      threads: 1,
    });
    try {
      const host = new Uint8Array(new SharedArrayBuffer(4096));
      const first = engine.copy('htod', host, [{ device: 0, dptr: 0, hostOffset: 0, bytes: 4096 }]);
      while (Atomics.load(sig, 0) === 0) await new Promise((r) => setTimeout(r, 5)); // the copy is inside the driver
      expect(engine.stopForExit(50)).toBe(false); // still running: the caller is told, not lied to
      expect(Atomics.load(sig, 2)).toBe(0);
      Atomics.store(sig, 1, 1);
      Atomics.notify(sig, 1);
      expect(engine.stopForExit(5_000)).toBe(true);
      expect(Atomics.load(sig, 2)).toBe(1); // finished before stopForExit said none was running
      // The copy's own interval, on the process's one clock, from a thread that is not this one.
      const { startNs, endNs } = await first;
      expect(endNs).toBeGreaterThan(startNs);
      expect(endNs).toBeLessThanOrEqual(process.hrtime.bigint());
      // From now on no copy starts.
      Atomics.store(sig, 0, 0);
      await expect(engine.copy('dtoh', host, [{ device: 0, dptr: 0, hostOffset: 0, bytes: 4096 }])).rejects.toThrow(/the process is exiting: no more copies/);
      expect(Atomics.load(sig, 0)).toBe(0);
    } finally {
      await engine.close();
    }
  });
});

