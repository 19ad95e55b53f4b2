import { afterAll, describe, expect, it } from 'vitest';
import { detectHardware, type HardwareSource } from '../../../src-main/hardware/detect-hardware.ts';
import { formatHardware } from '../../../src-main/hardware/format-hardware.ts';
import { probeGpuCopy, type GpuCopyProbeOptions } from '../../../src-main/hardware/gpu-copy-probe.ts';
import { HardwareProfileSchema } from '../../../src-shared/domain/hardware.ts';
import { makeFakeSys } from '../hardware/fake-sys.ts';
import { FakeCudaDriver } from './fake-cuda-driver.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

const fakeSys = makeFakeSys();
afterAll(() => fakeSys.cleanup());

/** The probe at a fake's size: 64 KiB copies, a 1 MiB entry, 4 rounds; no headroom (the fake has 16 MiB). */
const small = (driver: FakeCudaDriver, over: Partial<GpuCopyProbeOptions> = {}): GpuCopyProbeOptions => ({
  driver, chunkBytes: 64 * KiB, entryBytes: 1 * MiB, rounds: 4, copyThreads: 0, headroom: { minBytes: 0, fractionOfTotal: 0 }, procVersionPath: '/nonexistent', nvidiaSmi: null, ...over,
});

describe('the GPU copy probe', () => {
  it('writes and reads back entries through the GPU tier, times each direction by link busy, and gives everything back', async () => {
    for (const [shareable, copyThreads] of [[false, 0], [true, 2]] as const) {
      const driver = new FakeCudaDriver({ devices: [{ name: 'Fake H200', totalMemoryBytes: 16 * MiB, pciBusId: '0000:00:06.0' }], shareable });
      const p = await probeGpuCopy(small(driver, { copyThreads }));
      expect(p).toMatchObject({ device: 0, model: 'Fake H200', chunkBytes: 64 * KiB, bytesPerDirection: 4 * MiB, copyThreads, stagingPinned: true });
      expect(p.h2dBytesPerSec).toBeGreaterThan(0);
      expect(p.d2hBytesPerSec).toBeGreaterThan(0);
      expect(Date.parse(p.measuredAt)).not.toBeNaN();
      // The warm-up round is not counted, and nothing stays held.
      expect(driver.allocatedBytes()).toBe(0);
      expect(driver.registered.size).toBe(0);
      expect(driver.primaryRetains).toEqual([0]);
    }
  });

  it('says why when the GPU cannot hold its entry, and still gives everything back', async () => {
    const driver = new FakeCudaDriver({ devices: [{ name: 'Fake small', totalMemoryBytes: 16 * MiB }] });
    driver.externalUseBytes[0] = 15.5 * MiB;
    await expect(probeGpuCopy(small(driver))).rejects.toThrow(/the probe needs 1048576 bytes/);
    expect(driver.allocatedBytes()).toBe(0);
    expect(driver.primaryRetains).toEqual([0]);
  });
});

const vm: HardwareSource = {
  cpu: async () => ({ manufacturer: 'Intel', brand: 'Xeon', cores: 16, physicalCores: 16, processors: 1, speed: 0, speedMax: 0 }),
  mem: async () => ({ total: 128 * 1024 ** 3, available: 120 * 1024 ** 3, swaptotal: 0 }),
  graphics: async () => ({ controllers: [], displays: [] }),
  diskLayout: async () => [],
  blockDevices: async () => [],
  osInfo: async () => ({ platform: 'linux', distro: 'Ubuntu', release: '24.04', kernel: '6.18', arch: 'x64', hostname: 'gpu-vm' }),
  system: async () => ({ manufacturer: '', model: 'Docker Container', virtual: true, virtualHost: 'KVM' }),
  uuid: async () => ({ os: 'abc', hardware: '', macs: [] }),
} as unknown as HardwareSource;

const h200 = async () => ({
  available: true, reason: null, driverVersion: '580.159.04', cudaVersion: '13.0', library: 'libcuda.so.1',
  devices: [{ index: 0, name: 'Fake H200', totalMemoryBytes: 16 * MiB, pciBusId: '0000:00:06.0' }],
});

describe('hardware detection with the GPU copy probe', () => {
  it('probes the first usable GPU beside the memory copy, keeps it in the profile, and kvbench hw prints it', async () => {
    const driver = new FakeCudaDriver({ devices: [{ name: 'Fake H200', totalMemoryBytes: 16 * MiB, pciBusId: '0000:00:06.0' }] });
    const hw = await detectHardware(null, { source: vm, sysRoot: fakeSys.root, machineIdPaths: [], cudaProbe: h200, probeGpu: small(driver) });
    expect(HardwareProfileSchema.parse(hw)).toEqual(hw);
    expect(hw.gpuCopy).toMatchObject({ device: 0, model: 'Fake H200', bytesPerDirection: 4 * MiB, stagingPinned: true });
    const h2d = hw.gpuCopy!.h2dBytesPerSec!;
    const d2h = hw.gpuCopy!.d2hBytesPerSec!;
    const rate = (b: number): string => (b >= 1e9 ? `${(b / 1e9).toFixed(2)} GB/s` : `${(b / 1e6).toFixed(0)} MB/s`);
    expect(formatHardware(hw)).toContain(
      `  GPU copy           host→device ${rate(h2d)}, device→host ${rate(d2h)} (kvbench GPU copy probe on GPU 0, Fake H200: 4.00 MiB each way in 64.0 KiB copies through the GPU tier, pinned staging, 0 copy threads; link busy)\n`,
    );
  });

  it('does not probe without a usable GPU, nor when not asked; a failed probe is a note, not a failure', async () => {
    const driver = new FakeCudaDriver({ devices: [{ name: 'Fake H200', totalMemoryBytes: 16 * MiB }] });
    const noGpu = async () => ({ available: false, reason: 'no driver', driverVersion: null, cudaVersion: null, library: 'libcuda.so.1', devices: [] });
    expect((await detectHardware(null, { source: vm, sysRoot: fakeSys.root, machineIdPaths: [], cudaProbe: noGpu, probeGpu: small(driver) })).gpuCopy).toBeNull();
    expect((await detectHardware(null, { source: vm, sysRoot: fakeSys.root, machineIdPaths: [], cudaProbe: h200 })).gpuCopy).toBeNull();
    expect(driver.callCount('cuInit')).toBe(0);
    driver.externalUseBytes[0] = 15.5 * MiB;
    const failed = await detectHardware(null, { source: vm, sysRoot: fakeSys.root, machineIdPaths: [], cudaProbe: h200, probeGpu: small(driver) });
    expect(failed.gpuCopy).toBeNull();
    expect(failed.warnings.join('\n')).toMatch(/^GPU copy probe: .*the probe needs 1048576 bytes/m);
  });
});
