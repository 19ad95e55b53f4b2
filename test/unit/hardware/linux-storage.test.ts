import { afterAll, describe, expect, it } from 'vitest';
import { blockDeviceForMount, diskFacts, disksBehind, findMount, parseMountInfo, sysReader } from '../../../src-main/hardware/linux-storage.ts';
import { makeFakeSys } from './fake-sys.ts';

const fake = makeFakeSys();
afterAll(() => fake.cleanup());
const sys = sysReader(fake.root);
const mounts = parseMountInfo(sys.read('/proc/self/mountinfo')!);

describe('mountinfo', () => {
  it('parses entries, unescapes octal escapes and skips garbage', () => {
    expect(mounts).toHaveLength(5);
    expect(mounts[0]).toEqual({ majorMinor: '259:2', root: '/', mountPoint: '/', fsType: 'ext4', source: '/dev/nvme0n1p2' });
    expect(mounts[4].mountPoint).toBe('/mnt/nfs share');
    expect(mounts[3].fsType).toBe('ext4'); // optional fields ("shared:5") before the separator
  });

  it('finds the longest mount point holding a path, not a mere string prefix', () => {
    expect(findMount(mounts, '/mnt/fast/kv/cache')?.mountPoint).toBe('/mnt/fast');
    expect(findMount(mounts, '/mnt/fastest')?.mountPoint).toBe('/');
    expect(findMount(mounts, '/dev/shm')?.fsType).toBe('tmpfs');
    expect(findMount(mounts, '/home/user')?.mountPoint).toBe('/');
  });
});

describe('block devices behind a mount', () => {
  it('NVMe partition → its namespace, with model, serial and NVMe media', () => {
    const b = blockDeviceForMount(sys, findMount(mounts, '/data')!)!;
    expect(b.name).toBe('nvme0n1p2');
    expect(b.disks).toEqual(['nvme0n1']);
    expect(b.model).toBe('Samsung SSD 990 PRO 2TB');
    expect(b.serial).toBe('S6Z2NJ0W123456');
    expect(b.media).toBe('nvme');
    expect(b.rotational).toBe(false);
    expect(b.logicalBlockBytes).toBe(512);
    expect(b.physicalBlockBytes).toBe(4096);
    expect(b.sizeBytes).toBe(1_000_000 * 512); // the partition's own size
  });

  it('device-mapper volume → every member disk; no single model', () => {
    expect(disksBehind(sys, 'dm-0')).toEqual(['sda', 'sdb']);
    const b = blockDeviceForMount(sys, findMount(mounts, '/mnt/fast')!)!;
    expect(b.disks).toEqual(['sda', 'sdb']);
    expect(b.model).toBeNull();
    expect(b.media).toBe('hdd');
  });

  it('virtio disk: virtual media, no model (degrades, does not fail)', () => {
    const f = diskFacts(sys, 'vda');
    expect(f.media).toBe('virtual');
    expect(f.protocol).toBe('virtio');
    expect(f.model).toBeNull();
    expect(f.serial).toBe('overlayblk');
    expect(f.sizeBytes).toBe(256 * 1024 ** 3);
  });

  it('tmpfs and NFS have no block device', () => {
    expect(blockDeviceForMount(sys, findMount(mounts, '/dev/shm')!)).toBeNull();
    expect(blockDeviceForMount(sys, findMount(mounts, '/mnt/nfs share/x')!)).toBeNull();
  });

  it('a missing sysfs gives nulls, not errors', () => {
    const empty = sysReader('/nonexistent-root-for-kvbench-test');
    expect(empty.read('/proc/self/mountinfo')).toBeNull();
    expect(diskFacts(empty, 'sdz')).toMatchObject({ model: null, serial: null, rotational: null, sizeBytes: null, media: 'unknown' });
  });
});
