// GPUs as the NVIDIA driver library (libcuda.so.1, through koffi) reports them: the same library
// and calls the GPU tier uses, so what hardware detection lists is what a run can use. No context
// is created and no device memory is touched. The installed driver's version comes from
// /proc/driver/nvidia/version (Linux) or else nvidia-smi, the CUDA version it supports from
// cuDriverGetVersion.

import { formatCudaVersion, type CudaDriver } from '../engine/tiers/gpu/cuda-driver.ts';
import { defaultCudaLibrary, loadCudaDriver } from '../engine/tiers/gpu/koffi-cuda-driver.ts';
import { parseNvidiaProcVersion, readNvidiaDriverVersion } from '../engine/tiers/gpu/nvidia-version.ts';

export { parseNvidiaProcVersion };

export interface CudaDeviceProbe {
  index: number;
  name: string;
  totalMemoryBytes: number;
  pciBusId?: string;
}

export interface CudaDriverProbe {
  available: boolean;
  /** Why no GPU can be used (null when available). */
  reason: string | null;
  /** The NVIDIA driver's version (e.g. "550.54.15"), when the system says. */
  driverVersion: string | null;
  /** The CUDA version the driver supports (e.g. "12.4"). */
  cudaVersion: string | null;
  /** The library loaded (or tried). */
  library: string;
  devices: CudaDeviceProbe[];
}

export async function probeCudaDriver(
  opts: { libraryPath?: string; driver?: CudaDriver; procVersionPath?: string; nvidiaSmi?: string | null } = {},
): Promise<CudaDriverProbe> {
  let driver = opts.driver;
  let library = driver?.libraryPath ?? opts.libraryPath ?? defaultCudaLibrary();
  const driverVersion = await readNvidiaDriverVersion({ procPath: opts.procVersionPath, nvidiaSmi: opts.nvidiaSmi });
  const none = (reason: string, cudaVersion: string | null = null): CudaDriverProbe => ({
    available: false,
    reason,
    driverVersion,
    cudaVersion,
    library,
    devices: [],
  });
  if (driver === undefined) {
    const loaded = await loadCudaDriver({ libraryPath: opts.libraryPath });
    if (!loaded.ok) return none(loaded.reason);
    driver = loaded.driver;
    library = driver.libraryPath;
  }
  let cudaVersion: string | null = null;
  try {
    cudaVersion = formatCudaVersion(driver.cuDriverGetVersion());
    driver.cuInit(0);
    const count = driver.cuDeviceGetCount();
    if (count === 0) return none(`${library} loaded, but it reports no CUDA device`, cudaVersion);
    const devices: CudaDeviceProbe[] = [];
    for (let i = 0; i < count; i++) {
      const dev = driver.cuDeviceGet(i);
      const d: CudaDeviceProbe = { index: i, name: driver.cuDeviceGetName(dev), totalMemoryBytes: driver.cuDeviceTotalMem(dev) };
      try {
        d.pciBusId = driver.cuDeviceGetPCIBusId(dev);
      } catch {
        // optional detail
      }
      devices.push(d);
    }
    return { available: true, reason: null, driverVersion, cudaVersion, library, devices };
  } catch (err) {
    return none(`${library} loaded, but the driver cannot be used: ${(err as Error).message}`, cudaVersion);
  }
}
