// The one call the engine makes to get a GPU tier: load the NVIDIA driver library, open the tier,
// or say in one sentence why there is none (that sentence goes into the log and the results).

import type { CudaDriver } from './cuda-driver.ts';
import { GpuTier, type GpuTierOpenOptions } from './gpu-tier.ts';
import { loadCudaDriver } from './koffi-cuda-driver.ts';

export type GpuTierOpenResult = { ok: true; tier: GpuTier } | { ok: false; reason: string };

export async function openGpuTier(
  o: Omit<GpuTierOpenOptions, 'driver'> & { libraryPath?: string; driver?: CudaDriver },
): Promise<GpuTierOpenResult> {
  let driver = o.driver;
  if (driver === undefined) {
    const loaded = await loadCudaDriver({ libraryPath: o.libraryPath });
    if (!loaded.ok) return { ok: false, reason: `no GPU tier: ${loaded.reason}` };
    driver = loaded.driver;
  }
  try {
    return { ok: true, tier: await GpuTier.open({ ...o, driver }) };
  } catch (err) {
    return { ok: false, reason: `no GPU tier: ${(err as Error).message}` };
  }
}
