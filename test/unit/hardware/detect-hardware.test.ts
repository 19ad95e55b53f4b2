import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Systeminformation } from 'systeminformation';
import { detectHardware, gpusFrom, mergeGpus, type HardwareSource } from '../../../src-main/hardware/detect-hardware.ts';
import { formatHardware } from '../../../src-main/hardware/format-hardware.ts';
import { HardwareProfileSchema, computeGpus, usableGpus } from '../../../src-shared/domain/hardware.ts';
import { makeFakeSys } from './fake-sys.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

const fake = makeFakeSys();
afterAll(() => {
  fake.cleanup();
  removeTempDirs();
});

/** What systeminformation returns on this VM (environment.md): no GPU, no disk layout, empty fields. */
function vmSource(over: Partial<Record<keyof HardwareSource, () => Promise<unknown>>> = {}): HardwareSource {
  const base: Record<keyof HardwareSource, () => Promise<unknown>> = {
    cpu: async () => ({ manufacturer: 'AMD', brand: 'EPYC', cores: 2, physicalCores: 2, processors: 1, speed: 0, speedMax: 0 }),
    mem: async () => ({ total: 24 * 1024 ** 3, available: 20 * 1024 ** 3, swaptotal: 0 }),
    graphics: async () => ({ controllers: [], displays: [] }),
    diskLayout: async () => [],
    blockDevices: async () => [
      { name: 'vda', type: 'disk', size: 274877906944, physical: 'HDD', model: '', serial: '', removable: false, protocol: '', device: '/dev/vda' },
      { name: 'zram0', type: 'disk', size: 0, physical: 'SSD', model: '', serial: '', removable: false, protocol: '', device: '/dev/zram0' },
    ],
    osInfo: async () => ({ platform: 'linux', distro: 'Debian GNU/Linux', release: '12', kernel: '6.1', arch: 'x64', hostname: 'vm' }),
    system: async () => ({ manufacturer: '', model: 'Docker Container', virtual: true, virtualHost: 'KVM' }),
    uuid: async () => ({ os: 'abc', hardware: '', macs: [] }),
  };
  return { ...base, ...over } as unknown as HardwareSource;
}

describe('detectHardware', () => {
  it('degrades gracefully on a VM without GPU, disk model or serial', async () => {
    const cache = tempDir('kvb-hw-');
    const machineId = path.join(cache, 'machine-id');
    fs.writeFileSync(machineId, '3d1219c7c4c5404aaa1f6d2a48adfda4\n');
    const noDriver = async () => ({ available: false, reason: 'libcuda.so.1 could not be loaded', driverVersion: null, cudaVersion: null, library: 'libcuda.so.1', devices: [] });
    const hw = await detectHardware(path.join(cache, 'not-yet'), { source: vmSource(), sysRoot: fake.root, machineIdPaths: [machineId], cudaProbe: noDriver });
    expect(hw.cuda).toMatchObject({ available: false, reason: 'libcuda.so.1 could not be loaded' });
    expect(HardwareProfileSchema.parse(hw)).toEqual(hw);
    expect(hw.system.idSource).toBe('machine-id');
    expect(hw.system.hostname).toBe('vm');
    expect(hw.gpus).toEqual([]);
    expect(hw.warnings.join('\n')).toMatch(/no GPU found/);
    expect(hw.disks.find((d) => d.name === 'vda')).toMatchObject({ media: 'virtual', model: null, serial: 'overlayblk' });
    // The fake mountinfo puts / on the NVMe partition: the directory's drive is found through it.
    const c = hw.cacheDir!;
    expect(c.exists).toBe(false);
    expect(c.resolvedPath).toBe(fs.realpathSync(cache));
    expect(c.mountPoint).toBe('/');
    expect(c.blockDevice?.model).toBe('Samsung SSD 990 PRO 2TB');
    expect(c.driveIdBasis).toBe('serial');
    expect(c.freeBytes).toBeGreaterThan(0);
    expect(c.directIo).not.toBeNull();
    expect(formatHardware(hw)).toMatch(/Cache directory .*not-yet[\s\S]*drive id/);
  });

  it('writes no probe file into a system directory, also one reached through a link', async () => {
    const cache = tempDir('kvb-hw-');
    const machineId = path.join(cache, 'machine-id');
    fs.writeFileSync(machineId, '3d1219c7c4c5404aaa1f6d2a48adfda4\n');
    const link = path.join(cache, 'shm-link');
    fs.symlinkSync('/dev/shm', link);
    const noDriver = async () => ({ available: false, reason: 'none', driverVersion: null, cudaVersion: null, library: 'libcuda.so.1', devices: [] });
    const written: string[] = [];
    const watcher = fs.watch('/dev/shm', (_event, name) => name && /kvbench|probe/.test(name) && written.push(name));
    try {
      const hw = await detectHardware(path.join(link, 'kv'), { source: vmSource(), sysRoot: fake.root, machineIdPaths: [machineId], cudaProbe: noDriver, probeDirectIo: true, probeBandwidth: { durationS: 1, sizeBytes: 4 << 20 } });
      expect(hw.cacheDir).toMatchObject({ resolvedPath: '/dev/shm', directIo: null, bandwidth: null });
      expect(hw.warnings.join('\n')).toMatch(/\/dev\/shm is in the system directory \/dev; nothing probed there/);
      await new Promise((resolve) => setTimeout(resolve, 50)); // inotify events are delivered asynchronously
      expect(written).toEqual([]);
    } finally {
      watcher.close();
    }
  });

  it('says a directory that does not exist yet is not probed because the nearest one that does is a system directory, not that it is one', async () => {
    const cache = tempDir('kvb-hw-');
    const machineId = path.join(cache, 'machine-id');
    fs.writeFileSync(machineId, '3d1219c7c4c5404aaa1f6d2a48adfda4\n');
    const noDriver = async () => ({ available: false, reason: 'none', driverVersion: null, cudaVersion: null, library: 'libcuda.so.1', devices: [] });
    const dir = `/nonexistent-kvb-${process.pid}/a/b/c`;
    const hw = await detectHardware(dir, { source: vmSource(), sysRoot: fake.root, machineIdPaths: [machineId], cudaProbe: noDriver, probeDirectIo: true });
    expect(hw.cacheDir).toMatchObject({ path: dir, resolvedPath: '/', exists: false, directIo: null });
    const said = hw.warnings.filter((w) => w.startsWith('cache dir:'));
    expect(said).toContain(`cache dir: ${dir} does not exist yet (a suite creates it), and the nearest directory that does, /, is a system directory: nothing probed there. Create ${dir} first to have its drive probed.`);
    expect(said.join('\n')).not.toMatch(/\/ is in the system directory/);
    expect(fs.existsSync(`/nonexistent-kvb-${process.pid}`)).toBe(false);
  });

  it('survives a systeminformation call that throws, and a missing machine-id', async () => {
    const hw = await detectHardware(null, {
      source: vmSource({ graphics: async () => Promise.reject(new Error('no lspci')), cpu: async () => Promise.reject(new Error('boom')) }),
      sysRoot: fake.root,
      machineIdPaths: ['/nonexistent/machine-id'],
      cudaProbe: async () => Promise.reject(new Error('koffi missing')),
    });
    expect(hw.cuda).toMatchObject({ available: false, reason: 'koffi missing' });
    expect(hw.cacheDir).toBeNull();
    expect(hw.system.idSource).toBe('os-uuid');
    expect(hw.cpu.logicalCores).toBeGreaterThan(0);
    expect(hw.warnings.join('\n')).toMatch(/graphics: no lspci/);
    expect(hw.warnings.join('\n')).toMatch(/cpu: boom/);
  });

  it('reads GPUs and their memory; integrated graphics are not compute GPUs', () => {
    const gpus = gpusFrom({
      controllers: [
        { vendor: 'NVIDIA Corporation', model: 'H100 NVL', name: 'NVIDIA H100 NVL', bus: 'PCI', vram: 95830, vramDynamic: false, memoryTotal: 95830, driverVersion: '580.95.05', pciBus: '00000000:17:00.0' },
        { vendor: 'Intel Corporation', model: 'UHD 630', bus: 'Onboard', vram: 128, vramDynamic: true },
      ] as Systeminformation.GraphicsControllerData[],
      displays: [],
    });
    expect(gpus[0]).toMatchObject({ model: 'NVIDIA H100 NVL', memoryBytes: 95830 * 1024 ** 2, driverVersion: '580.95.05', compute: true });
    expect(gpus[1].compute).toBe(false);
    expect(computeGpus({ gpus })).toHaveLength(1);
    expect(usableGpus({ gpus })).toHaveLength(0); // until the driver library says so
    // The CUDA devices the driver opened come first, usable, with the driver's exact memory; the
    // same card seen by systeminformation is not listed twice; integrated graphics stay, unusable.
    const merged = mergeGpus(gpus, {
      available: true, reason: null, driverVersion: '580.95.05', cudaVersion: '13.0',
      devices: [{ index: 0, name: 'NVIDIA H100 NVL', totalMemoryBytes: 100_485_038_080, pciBusId: '0000:17:00.0' }],
    });
    expect(merged.map((g) => [g.index, g.model, g.engineUsable])).toEqual([
      [0, 'NVIDIA H100 NVL', true],
      [1, 'UHD 630', false],
    ]);
    expect(merged[0].memoryBytes).toBe(100_485_038_080);
  });

  it("reads each GPU's PCIe link from sysfs by its bus id: at detection and at most, its slot's too, and says both", async () => {
    const cuda = async () => ({
      available: true, reason: null, driverVersion: '580.159.04', cudaVersion: '13.0', library: 'libcuda.so.1',
      devices: [
        { index: 0, name: 'NVIDIA H200', totalMemoryBytes: 150_109_880_320, pciBusId: '0000:00:06.0' },
        // The CUDA driver writes hex digits in upper case; sysfs in lower.
        { index: 1, name: 'NVIDIA H100 PCIe', totalMemoryBytes: 85_520_809_984, pciBusId: '0000:B1:00.0' },
        { index: 2, name: 'NVIDIA L4', totalMemoryBytes: 24_152_899_584, pciBusId: '0000:c3:00.0' },
      ],
    });
    const hw = await detectHardware(null, { source: vmSource(), sysRoot: fake.root, machineIdPaths: [], cudaProbe: cuda });
    expect(HardwareProfileSchema.parse(hw)).toEqual(hw);
    expect(hw.gpus.map((g) => g.pcieLink)).toEqual([
      { currentGen: 5, currentLanes: 16, maxGen: 5, maxLanes: 16, upstreamMaxGen: null, upstreamMaxLanes: null },
      { currentGen: 1, currentLanes: 16, maxGen: 5, maxLanes: 16, upstreamMaxGen: 4, upstreamMaxLanes: 16 },
      null,
    ]);
    expect(hw.warnings).toContain('GPU #2 (NVIDIA L4): no PCIe link in sysfs for its bus id 0000:c3:00.0');
    const text = formatHardware(hw);
    expect(text).toContain('PCIe Gen5 x16 at detection, max Gen5 x16; 63.02 GB/s per direction at Gen5 x16 before packet overhead');
    expect(text).toContain(
      "PCIe Gen1 x16 at detection, max Gen5 x16; its slot's port reaches only Gen4 x16; 31.51 GB/s per direction at Gen4 x16 before packet overhead " +
        "(below its max at detection: an idle GPU's link trains down, and back up under load)",
    );
  });

  it('lists each GPU once on any bus: systeminformation writes the OpenCL bus in decimal and splits the device number as devfn', () => {
    // systeminformation's own formula (lib/graphics.js, its OpenCL pass), from NVIDIA's bus and slot ids.
    const siAddress = (bus: number, slot: number): string => `${(bus & 0xff).toString().padStart(2, '0')}:${((slot >> 3) & 0xff).toString().padStart(2, '0')}.${slot & 7}`;
    const placements = [
      [0x00, 0x06],
      [0x3b, 0x00],
      [0x17, 0x00],
      [0x00, 0x08],
      [0x9a, 0x00],
      [0xd8, 0x01],
    ];
    const hex = (n: number): string => n.toString(16).padStart(2, '0');
    const cuda = {
      available: true, reason: null, driverVersion: '580.159.04', cudaVersion: '13.0',
      devices: placements.map(([bus, dev], index) => ({ index, name: 'NVIDIA H100', totalMemoryBytes: 80 * 1024 ** 3, pciBusId: `0000:${hex(bus)}:${hex(dev)}.0` })),
    };
    const openCl = placements.map(([bus, dev]) => ({ vendor: 'NVIDIA Corporation', model: 'NVIDIA H100', bus: '', busAddress: siAddress(bus, dev), vram: 81559, vramDynamic: false }));
    const smi = placements.map(([bus, dev]) => ({ vendor: 'NVIDIA Corporation', model: 'GH100', name: 'NVIDIA H100', bus: 'PCI', vram: 81559, vramDynamic: false, pciBus: `00000000:${hex(bus)}:${hex(dev)}.0` }));
    const gpus = gpusFrom({ controllers: [...smi, ...openCl] as Systeminformation.GraphicsControllerData[], displays: [] });
    expect(openCl.map((c) => c.busAddress)).toEqual(['00:00.6', '59:00.0', '23:00.0', '00:01.0', '154:00.0', '216:00.1']);
    const merged = mergeGpus(gpus, cuda);
    expect(merged.map((g) => [g.busId, g.engineUsable])).toEqual(cuda.devices.map((d) => [d.pciBusId, true]));
    // Without the driver library, nvidia-smi's addresses are the real ones: still one each.
    expect(mergeGpus(gpus, null).map((g) => g.busId)).toEqual(smi.map((c) => c.pciBus));
    // A GPU the driver does not list stays, unusable, also when its real bus is another's misreading.
    const real59 = { ...gpus[0], busId: '0000:59:00.0' };
    expect(mergeGpus([...gpus, real59], cuda).map((g) => [g.busId, g.engineUsable]).at(-1)).toEqual(['0000:59:00.0', false]);
  });

  it('lists a GPU once when systeminformation also finds it through OpenCL at a misread bus id (seen on an H200)', () => {
    // On the lent H200 machine: lspci and nvidia-smi give 00:06.0; systeminformation's OpenCL pass
    // decodes NVIDIA's slot id 6 as device 0 function 6 and adds a second controller at "00:00.6".
    const gpus = gpusFrom({
      controllers: [
        { vendor: 'NVIDIA Corporation', model: 'GH100 [H200 SXM 141GB]', name: 'NVIDIA H200', bus: 'PCI', busAddress: '00:06.0', vram: 143771, vramDynamic: false, memoryTotal: 143771, driverVersion: '580.159.04', pciBus: '00000000:00:06.0' },
        { vendor: 'NVIDIA Corporation', model: 'NVIDIA H200', bus: '', busAddress: '00:00.6', vram: 143155.0625, vramDynamic: false },
      ] as Systeminformation.GraphicsControllerData[],
      displays: [],
    });
    const cuda = {
      available: true, reason: null, driverVersion: '580.159.04', cudaVersion: '13.0',
      devices: [{ index: 0, name: 'NVIDIA H200', totalMemoryBytes: 150_109_880_320, pciBusId: '0000:00:06.0' }],
    };
    expect(mergeGpus(gpus, cuda).map((g) => [g.index, g.model, g.engineUsable])).toEqual([[0, 'NVIDIA H200', true]]);
    // Without a working driver library the two controllers are still one GPU.
    expect(mergeGpus(gpus, null).map((g) => [g.index, g.busId])).toEqual([[0, '00000000:00:06.0']]);
    // With only the OpenCL controller, it is the CUDA device.
    expect(mergeGpus([gpus[1]], cuda)).toHaveLength(1);
    // A second GPU of another bus stays listed, unusable.
    const other = { ...gpus[0], busId: '0000:41:00.0' };
    expect(mergeGpus([...gpus, other], cuda).map((g) => [g.index, g.busId, g.engineUsable])).toEqual([
      [0, '0000:00:06.0', true],
      [1, '0000:41:00.0', false],
    ]);
  });
});
