import { describe, expect, it } from 'vitest';
import { GpuCopyError, WorkerCopyEngine } from '../../../src-main/engine/tiers/gpu/copy-engine.ts';

describe('WorkerCopyEngine start-up', () => {
  it('gives up on workers that never become ready, terminates them and says why', async () => {
    const t0 = Date.now();
    const err = await WorkerCopyEngine.start({
      driver: { moduleUrl: new URL('./fake-cuda-driver.ts', import.meta.url).href, exportName: 'openHangingWorkerDriver', options: null },
      devices: [0],
      threads: 2,
      startTimeoutMs: 300,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuCopyError);
    expect(err).toMatchObject({ code: 'GPU_COPY_WORKER_START_TIMEOUT', message: expect.stringMatching(/did not start within 0.3 s/) });
    expect(Date.now() - t0).toBeLessThan(4000);
  });
});
