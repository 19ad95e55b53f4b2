import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNvidiaSmiDriverVersion } from '../../../src-main/engine/tiers/gpu/nvidia-version.ts';
import { parseNvidiaProcVersion, probeCudaDriver } from '../../../src-main/hardware/gpu-driver.ts';
import { FakeCudaDriver } from './fake-cuda-driver.ts';

const GiB = 1024 ** 3;

describe('probeCudaDriver', () => {
  it('lists devices, memory, PCI bus, CUDA version and the NVIDIA driver version', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-probe-'));
    const proc = path.join(dir, 'version');
    fs.writeFileSync(
      proc,
      'NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n',
    );
    const driver = new FakeCudaDriver({
      devices: [
        { name: 'NVIDIA H100 80GB HBM3', totalMemoryBytes: 1024 },
        { name: 'NVIDIA H100 80GB HBM3', totalMemoryBytes: 1024, pciBusId: '00000000:C1:00.0' },
      ],
      driverVersion: 12040,
    });
    const p = await probeCudaDriver({ driver, procVersionPath: proc });
    expect(p).toEqual({
      available: true,
      reason: null,
      driverVersion: '550.54.15',
      cudaVersion: '12.4',
      library: 'fake-libcuda',
      devices: [
        { index: 0, name: 'NVIDIA H100 80GB HBM3', totalMemoryBytes: 1024, pciBusId: '00000000:41:00.0' },
        { index: 1, name: 'NVIDIA H100 80GB HBM3', totalMemoryBytes: 1024, pciBusId: '00000000:C1:00.0' },
      ],
    });
    // The probe creates no context and allocates nothing.
    expect(driver.callCount('cuDevicePrimaryCtxRetain')).toBe(0);
    expect(driver.callCount('cuMemAlloc')).toBe(0);
    fs.rmSync(dir, { recursive: true });
  });

  it('gives the reason when the library loads but the driver cannot be used', async () => {
    const driver = new FakeCudaDriver({ devices: [{ name: 'x', totalMemoryBytes: GiB }] });
    driver.failNext.set('cuInit', 803);
    const p = await probeCudaDriver({ driver, procVersionPath: '/nonexistent', nvidiaSmi: null });
    expect(p).toMatchObject({
      available: false,
      reason: 'fake-libcuda loaded, but the driver cannot be used: cuInit failed: CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)',
      cudaVersion: '12.4',
      devices: [],
    });
  });

  it('says so when the driver reports no device', async () => {
    const p = await probeCudaDriver({ driver: new FakeCudaDriver({ devices: [] }), procVersionPath: '/nonexistent', nvidiaSmi: null });
    expect(p).toMatchObject({ available: false, reason: 'fake-libcuda loaded, but it reports no CUDA device' });
  });

  it('asks nvidia-smi for the driver version where /proc/driver/nvidia is missing (gVisor)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-smi-'));
    const smi = path.join(dir, 'nvidia-smi');
    fs.writeFileSync(smi, '#!/bin/sh\n[ "$1" = --query-gpu=driver_version ] && printf "580.159.03\\n580.159.03\\n"\n');
    fs.chmodSync(smi, 0o755);
    const driver = new FakeCudaDriver({ devices: [{ name: 'NVIDIA H200', totalMemoryBytes: GiB }] });
    expect(await probeCudaDriver({ driver, procVersionPath: path.join(dir, 'absent'), nvidiaSmi: smi })).toMatchObject({ available: true, driverVersion: '580.159.03' });
    // No nvidia-smi either: unknown, not an error.
    expect(await probeCudaDriver({ driver, procVersionPath: path.join(dir, 'absent'), nvidiaSmi: path.join(dir, 'none') })).toMatchObject({ available: true, driverVersion: null });
    expect(parseNvidiaSmiDriverVersion('NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.\n')).toBeNull();
    fs.rmSync(dir, { recursive: true });
  });

  it('asks nvidia-smi once per process, however often the GPU tier is opened', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-smi-'));
    const smi = path.join(dir, 'nvidia-smi');
    const calls = path.join(dir, 'calls');
    fs.writeFileSync(smi, `#!/bin/sh\necho x >> ${calls}\necho 580.159.03\n`);
    fs.chmodSync(smi, 0o755);
    const driver = new FakeCudaDriver({ devices: [{ name: 'NVIDIA H200', totalMemoryBytes: GiB }] });
    const answers = await Promise.all([1, 2, 3].map(() => probeCudaDriver({ driver, procVersionPath: path.join(dir, 'absent'), nvidiaSmi: smi })));
    expect(answers.map((a) => a.driverVersion)).toEqual(['580.159.03', '580.159.03', '580.159.03']);
    expect(await probeCudaDriver({ driver, procVersionPath: path.join(dir, 'absent'), nvidiaSmi: smi })).toMatchObject({ driverVersion: '580.159.03' });
    expect(fs.readFileSync(calls, 'utf8')).toBe('x\n');
    fs.rmSync(dir, { recursive: true });
  });

  it('parses the NVIDIA kernel module banner', () => {
    expect(parseNvidiaProcVersion('NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024')).toBe('535.183.01');
    expect(parseNvidiaProcVersion('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build')).toBe('560.35.03');
    expect(parseNvidiaProcVersion('garbage')).toBeNull();
  });
});
