import fs from 'node:fs';
import path from 'node:path';
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

  it('btrfs on LUKS (and LVM on LUKS): the anonymous 0:NN device is found through the /dev/mapper link', () => {
    // As udev lays it out: /dev/mapper/<name> → ../dm-N; dm-2 (LVM) on dm-1 (LUKS) on nvme1n1p3.
    const w = (p: string, content = ''): void => {
      fs.mkdirSync(path.dirname(path.join(fake.root, p)), { recursive: true });
      fs.writeFileSync(path.join(fake.root, p), `${content}\n`);
    };
    const link = (p: string, target: string): void => {
      fs.mkdirSync(path.dirname(path.join(fake.root, p)), { recursive: true });
      fs.symlinkSync(target, path.join(fake.root, p));
    };
    w('/dev/dm-1');
    w('/dev/dm-2');
    link('/dev/mapper/luks-3f2a', '../dm-1');
    link('/dev/mapper/vg0-home', '../dm-2');
    for (const [dm, mm] of [['dm-1', '253:1'], ['dm-2', '253:2']]) {
      w(`/sys/devices/virtual/block/${dm}/dev`, mm);
      link(`/sys/class/block/${dm}`, `../../devices/virtual/block/${dm}`);
      link(`/sys/dev/block/${mm}`, `../../devices/virtual/block/${dm}`);
    }
    fs.mkdirSync(path.join(fake.root, '/sys/block/dm-1/slaves/nvme1n1p3'), { recursive: true });
    fs.mkdirSync(path.join(fake.root, '/sys/block/dm-2/slaves/dm-1'), { recursive: true });
    w('/sys/devices/pci0/nvme/nvme1/nvme1n1/nvme1n1p3/partition', '3');
    link('/sys/class/block/nvme1n1p3', '../../devices/pci0/nvme/nvme1/nvme1n1/nvme1n1p3');
    w('/sys/block/nvme1n1/device/model', 'WD Black SN850X');
    w('/sys/block/nvme1n1/device/serial', 'WD123');
    w('/sys/block/nvme1n1/queue/rotational', '0');
    const [luks, lvm] = parseMountInfo(
      ['40 27 0:45 /@home /home rw,relatime - btrfs /dev/mapper/luks-3f2a rw', '41 27 0:46 / /srv rw,relatime - btrfs /dev/mapper/vg0-home rw'].join('\n'),
    );
    const b = blockDeviceForMount(sys, luks)!;
    expect(b).toMatchObject({ name: 'dm-1', disks: ['nvme1n1'], model: 'WD Black SN850X', serial: 'WD123', media: 'nvme' });
    expect(blockDeviceForMount(sys, lvm)).toMatchObject({ name: 'dm-2', disks: ['nvme1n1'], model: 'WD Black SN850X' });
    // A source that resolves nowhere stays unknown rather than guessed.
    expect(blockDeviceForMount(sys, { ...luks, source: '/dev/mapper/gone' })).toBeNull();
  });

  it('a /dev node that is no link is named by its device number (this machine\'s own block devices)', (ctx) => {
    const host = sysReader('/');
    const node = host.list('/dev').find((n) => host.blockDeviceNumber(`/dev/${n}`) !== null && host.read(`/sys/class/block/${n}/dev`) !== null);
    if (!node) return ctx.skip(); // no block device visible here (a container without /dev nodes)
    expect(host.blockDeviceNumber(`/dev/${node}`)).toBe(host.read(`/sys/class/block/${node}/dev`));
    expect(host.blockDeviceNumber('/dev/null')).toBeNull(); // a character device
    expect(host.blockDeviceNumber('/nonexistent-kvbench')).toBeNull();
  });

  it('a missing sysfs gives nulls, not errors', () => {
    const empty = sysReader('/nonexistent-root-for-kvbench-test');
    expect(empty.read('/proc/self/mountinfo')).toBeNull();
    expect(diskFacts(empty, 'sdz')).toMatchObject({ model: null, serial: null, rotational: null, sizeBytes: null, media: 'unknown' });
  });
});
