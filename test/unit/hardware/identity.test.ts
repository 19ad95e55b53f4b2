import { describe, expect, it } from 'vitest';
import { driveIdentity, systemIdentity } from '../../../src-main/hardware/identity.ts';
import type { BlockDeviceInfo } from '../../../src-shared/domain/hardware.ts';

const nvme: BlockDeviceInfo = {
  name: 'nvme0n1p1', disks: ['nvme0n1'], model: 'KIOXIA CM7', serial: 'X1234567', wwid: null, rotational: false,
  logicalBlockBytes: 512, physicalBlockBytes: 4096, sizeBytes: 7e12, media: 'nvme', backingFile: null,
};
const virtio: BlockDeviceInfo = { ...nvme, name: 'vda', disks: ['vda'], model: null, serial: 'overlayblk', media: 'virtual' };

describe('system identity', () => {
  it('is stable, hides the machine-id, and depends on the hostname', () => {
    const a = systemIdentity({ machineId: '3d1219c7c4c5404aaa1f6d2a48adfda4', osUuid: null, hostname: 'vm' });
    expect(a).toEqual(systemIdentity({ machineId: '3d1219c7c4c5404aaa1f6d2a48adfda4', osUuid: null, hostname: 'vm' }));
    expect(a.id).toMatch(/^sys-[0-9a-f]{16}$/);
    expect(a.id).not.toContain('3d1219c7');
    expect(a.source).toBe('machine-id');
    expect(systemIdentity({ machineId: '3d1219c7c4c5404aaa1f6d2a48adfda4', osUuid: null, hostname: 'vm2' }).id).not.toBe(a.id);
  });

  it('falls back to the OS UUID, then to the hostname', () => {
    expect(systemIdentity({ machineId: null, osUuid: 'abc', hostname: 'h' }).source).toBe('os-uuid');
    expect(systemIdentity({ machineId: null, osUuid: null, hostname: 'h' }).source).toBe('hostname');
  });
});

describe('drive identity', () => {
  it('a real drive is recognised by model and serial on any system', () => {
    const a = driveIdentity({ systemId: 'sys-a', block: nvme, mountSource: '/dev/nvme0n1p1', filesystem: 'xfs', mountPoint: '/mnt' });
    const b = driveIdentity({ systemId: 'sys-b', block: { ...nvme, name: 'nvme2n1' }, mountSource: '/dev/nvme2n1', filesystem: 'ext4', mountPoint: '/data' });
    expect(a.basis).toBe('serial');
    expect(a.id).toBe(b.id);
    expect(a.label).toContain('KIOXIA CM7');
  });

  it('an emulated disk (QEMU, VirtualBox …) with the emulator\'s default serial is local to its system, not one drive on every VM', () => {
    const qemu: BlockDeviceInfo = { ...nvme, name: 'sda', disks: ['sda'], model: 'QEMU HARDDISK', serial: 'QM00001', wwid: 't10.ATA QEMU HARDDISK QM00001', media: 'ssd' };
    const a = driveIdentity({ systemId: 'sys-a', block: qemu, mountSource: '/dev/sda1', filesystem: 'ext4', mountPoint: '/' });
    const b = driveIdentity({ systemId: 'sys-b', block: qemu, mountSource: '/dev/sda1', filesystem: 'ext4', mountPoint: '/' });
    expect(a.basis).toBe('local-device');
    expect(a.id).not.toBe(b.id);
    expect(a.label).toContain('QEMU HARDDISK');
    const vbox = driveIdentity({ systemId: 'sys-a', block: { ...qemu, model: 'VBOX HARDDISK', serial: 'VB1234', wwid: null }, mountSource: null, filesystem: null, mountPoint: null });
    expect(vbox.basis).toBe('local-device');
  });

  it('a virtual disk (no model, hypervisor serial) gets an identity local to its system', () => {
    const a = driveIdentity({ systemId: 'sys-a', block: virtio, mountSource: '/dev/vda', filesystem: 'ext4', mountPoint: '/' });
    const b = driveIdentity({ systemId: 'sys-b', block: virtio, mountSource: '/dev/vda', filesystem: 'ext4', mountPoint: '/' });
    expect(a.basis).toBe('local-device');
    expect(a.id).not.toBe(b.id);
    expect(a.label).toContain('vda');
  });

  it('a local device is labelled with its size in a sensible unit (600 MiB is not "1 GiB")', () => {
    const label = (sizeBytes: number | null) => driveIdentity({ systemId: 'sys-a', block: { ...virtio, sizeBytes }, mountSource: '/dev/vda', filesystem: 'ext4', mountPoint: '/' }).label;
    expect(label(600 * 1024 ** 2)).toBe('virtual disk vda (600 MiB)');
    expect(label(256 * 1024 ** 3)).toBe('virtual disk vda (256 GiB)');
    expect(label(2.5 * 1024 ** 4)).toBe('virtual disk vda (2.50 TiB)');
    expect(label(null)).toBe('virtual disk vda (?)');
  });

  it('a filesystem without a block device is identified by the filesystem', () => {
    const t = driveIdentity({ systemId: 'sys-a', block: null, mountSource: 'tmpfs', filesystem: 'tmpfs', mountPoint: '/dev/shm' });
    expect(t.basis).toBe('filesystem');
    expect(t.label).toBe('tmpfs tmpfs at /dev/shm');
  });
});
