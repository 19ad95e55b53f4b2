import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { blockDeviceForMount, diskFacts, disksBehind, findMount, parseMountInfo, ramChainOf, storageBehindMount, storageBehindPath, sysReader } from '../../../src-main/hardware/linux-storage.ts';
import { bufferedLoopMessage, ramBackingOf } from '../../../src-shared/domain/hardware.ts';
import { makeFakeSys } from './fake-sys.ts';

const fake = makeFakeSys();
afterAll(() => fake.cleanup());
const sys = sysReader(fake.root);
const mounts = parseMountInfo(sys.read('/proc/self/mountinfo')!);

/** A file (or a symbolic link) added to the fake tree, for the layouts one test needs. */
function w(p: string, content = ''): void {
  fs.mkdirSync(path.dirname(path.join(fake.root, p)), { recursive: true });
  fs.writeFileSync(path.join(fake.root, p), `${content}\n`);
}
function link(p: string, target: string): void {
  fs.mkdirSync(path.dirname(path.join(fake.root, p)), { recursive: true });
  fs.symlinkSync(target, path.join(fake.root, p));
}

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

  describe('loop devices, followed to the filesystem and disk holding their file', () => {
    // As this kernel lays a loop device out (recorded from a Debian 12 VM: losetup on a tmpfs file, on
    // an ext4 file on the root disk, on a zram-backed ext4): /sys/dev/block/7:N → devices/virtual/block/loopN,
    // with loop/backing_file beside size and queue/.
    const block = (name: string, majorMinor: string, sizeSectors: number): void => {
      w(`/sys/devices/virtual/block/${name}/dev`, majorMinor);
      w(`/sys/devices/virtual/block/${name}/size`, String(sizeSectors));
      link(`/sys/class/block/${name}`, `../../devices/virtual/block/${name}`);
      link(`/sys/dev/block/${majorMinor}`, `../../devices/virtual/block/${name}`);
      link(`/sys/block/${name}`, `../devices/virtual/block/${name}`);
      w(`/sys/devices/virtual/block/${name}/queue/rotational`, '0');
      w(`/sys/devices/virtual/block/${name}/queue/logical_block_size`, '512');
      w(`/sys/devices/virtual/block/${name}/queue/physical_block_size`, '512');
    };
    block('loop0', '7:0', 3072000);
    w('/sys/devices/virtual/block/loop0/loop/backing_file', '/tmp/kvram/disk.img');
    block('loop1', '7:1', 614400);
    w('/sys/devices/virtual/block/loop1/loop/backing_file', '/data/images/disk.img');
    block('loop2', '7:2', 614400);
    w('/sys/devices/virtual/block/loop2/loop/backing_file', '/mnt/zram/disk.img (deleted)');
    block('loop3', '7:3', 614400);
    w('/sys/devices/virtual/block/loop3/loop/backing_file', '/dev/shm/inner.img');
    block('loop4', '7:4', 614400);
    w('/sys/devices/virtual/block/loop4/loop/backing_file', '/mnt/kvdev/nested.img');
    block('zram0', '252:0', 8388608);
    const loops = parseMountInfo(
      [
        '42 27 0:39 / /tmp/kvram rw,relatime - tmpfs tmpfs rw,size=3145728k',
        '43 27 7:0 / /mnt/kvdev rw,relatime - ext4 /dev/loop0 rw',
        '44 27 7:1 / /mnt/kvdisk rw,relatime - ext4 /dev/loop1 rw',
        '45 27 252:0 / /mnt/zram rw,relatime - ext4 /dev/zram0 rw',
        '46 27 7:2 / /mnt/kvzram rw,relatime - ext4 /dev/loop2 rw',
        '47 27 7:4 / /mnt/kvnested rw,relatime - ext4 /dev/loop4 rw',
      ].join('\n'),
    );
    const all = [...mounts, ...loops];
    const at = (mountPoint: string) => blockDeviceForMount(sys, all.find((m) => m.mountPoint === mountPoint)!, all);

    it('a loop file on tmpfs is RAM: media ram, its filesystem named, said RAM-backed', () => {
      const b = at('/mnt/kvdev')!;
      expect(b).toMatchObject({ name: 'loop0', disks: ['loop0'], media: 'ram', backingFile: '/tmp/kvram/disk.img', backingFilesystem: 'tmpfs', sizeBytes: 3072000 * 512, model: null });
      expect(ramBackingOf({ filesystem: 'ext4', blockDevice: b })).toBe('loop0 on tmpfs');
    });

    it('a loop file on a disk is that disk: its disks, model, serial and media', () => {
      const b = at('/mnt/kvdisk')!;
      expect(b).toMatchObject({ name: 'loop1', disks: ['nvme0n1'], model: 'Samsung SSD 990 PRO 2TB', serial: 'S6Z2NJ0W123456', media: 'nvme', rotational: false });
      expect(b).toMatchObject({ backingFile: '/data/images/disk.img', backingFilesystem: 'ext4', sizeBytes: 614400 * 512 });
      expect(ramBackingOf({ filesystem: 'ext4', blockDevice: b })).toBeNull();
    });

    it('a loop file on a RAM disk (zram), even one already deleted, is RAM', () => {
      const b = at('/mnt/kvzram')!;
      expect(b).toMatchObject({ disks: ['zram0'], media: 'ram', backingFile: '/mnt/zram/disk.img', backingFilesystem: 'ext4' });
      expect(ramBackingOf({ filesystem: 'ext4', blockDevice: b })).toBe('loop2 on RAM disk zram0');
    });

    it('a loop in a loop is followed down to the RAM below', () => {
      const b = at('/mnt/kvnested')!;
      expect(b).toMatchObject({ name: 'loop4', disks: ['loop0'], media: 'ram', backingFilesystem: 'ext4' });
      expect(ramBackingOf({ filesystem: 'ext4', blockDevice: b })).toBe('loop4 on RAM disk loop0');
    });

    it('a loop whose file no mount here holds stays a virtual disk of unknown backing', () => {
      const b = blockDeviceForMount(sys, all.find((m) => m.mountPoint === '/mnt/kvdev')!, [])!;
      expect(b).toMatchObject({ name: 'loop0', disks: ['loop0'], media: 'virtual', backingFile: '/tmp/kvram/disk.img', backingFilesystem: null });
      expect(ramBackingOf({ filesystem: 'ext4', blockDevice: b })).toBeNull();
    });

    const chainAt = (dir: string): string | null => ramChainOf(sys, findMount(all, dir)!, all);

    it('the chain down to the RAM names every device and file on the way: the loop, its file, the filesystem holding it', () => {
      expect(chainAt('/mnt/kvdev')).toBe('loop0 → /tmp/kvram/disk.img on tmpfs');
      expect(chainAt('/tmp/kvram')).toBe('tmpfs');
      expect(chainAt('/dev/shm')).toBe('tmpfs');
      // A RAM disk mounted itself is named; a loop on a file in a filesystem on one goes on down to it.
      expect(chainAt('/mnt/zram')).toBe('zram0');
      // The kernel's " (deleted)" stays: the file is gone from its directory, its pages are still in RAM.
      expect(chainAt('/mnt/kvzram')).toBe('loop2 → /mnt/zram/disk.img (deleted) on ext4 → zram0');
      expect(chainAt('/mnt/kvnested')).toBe('loop4 → /mnt/kvdev/nested.img on ext4 → loop0 → /tmp/kvram/disk.img on tmpfs');
      // No RAM below: a disk, NFS, a loop file on the disk, a loop file no mount here holds.
      expect(chainAt('/data')).toBeNull();
      expect(chainAt('/mnt/nfs share')).toBeNull();
      expect(chainAt('/mnt/kvdisk')).toBeNull();
      expect(ramChainOf(sys, all.find((m) => m.mountPoint === '/mnt/kvdev')!, [])).toBeNull();
    });

    it('storageBehindPath reads the mounts itself: a path inside the loop is RAM-backed, a path on the disk is not', () => {
      const withLoops = sysReader(fake.root);
      const text = fs.readFileSync(path.join(fake.root, '/proc/self/mountinfo'), 'utf8');
      fs.writeFileSync(path.join(fake.root, '/proc/self/mountinfo'), `${text}${loops.map((m, i) => `${50 + i} 27 ${m.majorMinor} / ${m.mountPoint} rw - ${m.fsType} ${m.source} rw`).join('\n')}\n`);
      try {
        expect(storageBehindPath(withLoops, '/mnt/kvdev/c')?.ramBacking).toEqual({ backing: 'loop0 on tmpfs', chain: 'loop0 → /tmp/kvram/disk.img on tmpfs' });
        expect(storageBehindPath(withLoops, '/tmp/kvram/x')?.ramBacking).toEqual({ backing: 'tmpfs', chain: 'tmpfs' });
        expect(storageBehindPath(withLoops, '/mnt/zram/x')?.ramBacking).toEqual({ backing: 'RAM disk', chain: 'zram0' });
        expect(storageBehindPath(withLoops, '/mnt/kvnested/x')?.ramBacking).toEqual({ backing: 'loop4 on RAM disk loop0', chain: 'loop4 → /mnt/kvdev/nested.img on ext4 → loop0 → /tmp/kvram/disk.img on tmpfs' });
        expect(storageBehindPath(withLoops, '/mnt/kvdisk/c')?.ramBacking).toBeNull();
        expect(storageBehindPath(withLoops, '/data')?.ramBacking).toBeNull();
      } finally {
        fs.writeFileSync(path.join(fake.root, '/proc/self/mountinfo'), text);
      }
    });
  });

  describe('loop devices that read their backing file through the page cache (loop/dio 0)', () => {
    // Laid out as above; loop/dio as the kernel writes it (0: losetup's default, 1: --direct-io=on).
    const block = (name: string, majorMinor: string, file: string | null, dio: '0' | '1' | null): void => {
      w(`/sys/devices/virtual/block/${name}/dev`, majorMinor);
      w(`/sys/devices/virtual/block/${name}/size`, '614400');
      link(`/sys/class/block/${name}`, `../../devices/virtual/block/${name}`);
      link(`/sys/dev/block/${majorMinor}`, `../../devices/virtual/block/${name}`);
      link(`/sys/block/${name}`, `../devices/virtual/block/${name}`);
      if (file !== null) w(`/sys/devices/virtual/block/${name}/loop/backing_file`, file);
      if (dio !== null) w(`/sys/devices/virtual/block/${name}/loop/dio`, dio);
    };
    block('loop10', '7:10', '/data/images/buffered.img', '0'); // on the NVMe root filesystem
    block('loop11', '7:11', '/data/images/direct.img', '1');
    block('loop12', '7:12', '/mnt/kvbuf/inner.img', '1'); // a direct loop on a file in loop10's filesystem
    block('loop13', '7:13', '/mnt/kvbuf/inner2.img', '0'); // a buffered one there
    block('loop14', '7:14', '/data/images/old-kernel.img', null); // no loop/dio: before Linux 4.4, always buffered
    block('loop15', '7:15', '/data/images/dm.img', '0'); // under dm-7
    block('loop16', '7:16', '/tmp/kvram2/disk.img', '0'); // on tmpfs: RAM says more
    block('dm-7', '253:7', null, null);
    fs.mkdirSync(path.join(fake.root, '/sys/devices/virtual/block/dm-7/slaves/loop15'), { recursive: true });
    const extra = parseMountInfo(
      [
        '60 27 7:10 / /mnt/kvbuf rw,relatime - ext4 /dev/loop10 rw',
        '61 27 7:11 / /mnt/kvdirect rw,relatime - ext4 /dev/loop11 rw',
        '62 27 7:12 / /mnt/kvnest-direct rw,relatime - ext4 /dev/loop12 rw',
        '63 27 7:13 / /mnt/kvnest-buf rw,relatime - ext4 /dev/loop13 rw',
        '64 27 7:14 / /mnt/kvold rw,relatime - ext4 /dev/loop14 rw',
        '65 27 253:7 / /mnt/kvdm rw,relatime - xfs /dev/mapper/kvdm rw',
        '66 27 0:41 / /tmp/kvram2 rw,relatime - tmpfs tmpfs rw',
        '67 27 7:16 / /mnt/kvram2 rw,relatime - ext4 /dev/loop16 rw',
      ].join('\n'),
    );
    const all = [...mounts, ...extra];
    const behind = (dir: string) => storageBehindMount(sys, findMount(all, dir)!, all);
    const buffered = (name: string, backingFile: string, backingFilesystem: string | null = 'ext4') => ({ name, backingFile, backingFilesystem });

    it('a buffered loop on a disk is named with its file, and the disk holding that file serves the bytes', () => {
      expect(behind('/mnt/kvbuf/c')).toMatchObject({ bufferedLoops: [buffered('loop10', '/data/images/buffered.img')], servedBy: 'nvme0n1p2', ramBacking: null });
      expect(behind('/mnt/kvbuf/c').block).toMatchObject({ name: 'loop10', disks: ['nvme0n1'] });
    });

    it('a loop with direct I/O on (loop/dio 1) is not flagged; the disk still serves the bytes', () => {
      expect(behind('/mnt/kvdirect')).toMatchObject({ bufferedLoops: [], servedBy: 'nvme0n1p2' });
    });

    it('loops in loops: every buffered one on the way down, the outer first', () => {
      expect(behind('/mnt/kvnest-direct')).toMatchObject({ bufferedLoops: [buffered('loop10', '/data/images/buffered.img')], servedBy: 'nvme0n1p2' });
      expect(behind('/mnt/kvnest-buf').bufferedLoops).toEqual([buffered('loop13', '/mnt/kvbuf/inner2.img'), buffered('loop10', '/data/images/buffered.img')]);
    });

    it('a loop without loop/dio (a kernel before 4.4, with no direct I/O for loops) counts as buffered', () => {
      expect(behind('/mnt/kvold').bufferedLoops).toEqual([buffered('loop14', '/data/images/old-kernel.img')]);
    });

    it('device-mapper on a loop: the loop under it is followed to its file and its disk', () => {
      expect(behind('/mnt/kvdm')).toMatchObject({ bufferedLoops: [buffered('loop15', '/data/images/dm.img')], servedBy: 'nvme0n1p2' });
      expect(behind('/mnt/kvdm').block!.name).toBe('dm-7');
    });

    it('no loop: nothing flagged, the mount\'s own device serves the bytes (a dm volume its own, not its members)', () => {
      expect(behind('/data')).toMatchObject({ bufferedLoops: [], servedBy: 'nvme0n1p2' });
      expect(behind('/mnt/fast')).toMatchObject({ bufferedLoops: [], servedBy: 'dm-0' });
      expect(behind('/dev/shm')).toMatchObject({ bufferedLoops: [], servedBy: null });
    });

    it('a buffered loop on tmpfs is RAM-backed, which says more: no buffered loop, no disk below', () => {
      expect(behind('/mnt/kvram2')).toMatchObject({ ramBacking: { backing: 'loop16 on tmpfs' }, bufferedLoops: [], servedBy: null });
    });

    it('a buffered loop whose file no mount here holds is still flagged; the disk below is unknown', () => {
      const b = storageBehindMount(sys, extra[0], []);
      expect(b).toMatchObject({ bufferedLoops: [buffered('loop10', '/data/images/buffered.img', null)], servedBy: null });
    });

    it('storageBehindPath reads the mounts itself', () => {
      const text = fs.readFileSync(path.join(fake.root, '/proc/self/mountinfo'), 'utf8');
      fs.writeFileSync(path.join(fake.root, '/proc/self/mountinfo'), `${text}${extra.map((m, i) => `${70 + i} 27 ${m.majorMinor} / ${m.mountPoint} rw - ${m.fsType} ${m.source} rw`).join('\n')}\n`);
      try {
        expect(storageBehindPath(sysReader(fake.root), '/mnt/kvbuf/kv')).toMatchObject({ bufferedLoops: [buffered('loop10', '/data/images/buffered.img')], servedBy: 'nvme0n1p2' });
        expect(storageBehindPath(sysReader(fake.root), '/mnt/kvdirect/kv')).toMatchObject({ bufferedLoops: [], servedBy: 'nvme0n1p2' });
      } finally {
        fs.writeFileSync(path.join(fake.root, '/proc/self/mountinfo'), text);
      }
    });

    it('one wording: what, why it matters, and the command that fixes it', () => {
      expect(bufferedLoopMessage([buffered('loop10', '/data/images/buffered.img')])).toBe(
        "loop device with buffered I/O on the backing file (loop10 → /data/images/buffered.img on ext4; loop/dio 0): reads through it may be served by the host's page cache " +
          "of that file and writes held there until flushed, not the drive's, whatever direct I/O says (fix: losetup --direct-io=on /dev/loop10)",
      );
      expect(bufferedLoopMessage([buffered('loop13', '/mnt/kvbuf/inner2.img'), buffered('loop10', '/x.img', null)])).toMatch(
        /^loop devices with buffered I\/O on the backing file \(loop13 → \/mnt\/kvbuf\/inner2\.img on ext4, loop10 → \/x\.img; loop\/dio 0\).*\(fix: losetup --direct-io=on \/dev\/loop13; losetup --direct-io=on \/dev\/loop10\)$/,
      );
    });
  });

  it('a /dev node that is no link is named by its device number (this machine\'s own block devices)', (ctx) => {
    const host = sysReader('/');
    const node = host.list('/dev').find((n) => host.blockDeviceNumber(`/dev/${n}`) !== null && host.read(`/sys/class/block/${n}/dev`) !== null);
    if (!node) return ctx.skip(); // no block device visible here (a container without /dev nodes)
    expect(host.blockDeviceNumber(`/dev/${node}`)).toBe(host.read(`/sys/class/block/${node}/dev`));
    expect(host.blockDeviceNumber('/dev/null')).toBeNull(); // a character device
    expect(host.blockDeviceNumber('/nonexistent-kvbench')).toBeNull();
  });

  it('unallocatedBytes: the holes of a sparse file (what writes into it can still take), null for anything else', () => {
    const file = path.join(fake.root, 'sparse.img');
    fs.writeFileSync(file, Buffer.alloc(4096, 1));
    fs.truncateSync(file, 8 * 1024 * 1024);
    const holes = sys.unallocatedBytes('/sparse.img')!;
    expect(holes).toBeGreaterThan(7 * 1024 * 1024); // 4 KiB written (a filesystem block or a few)
    expect(holes).toBeLessThanOrEqual(8 * 1024 * 1024 - 4096);
    fs.writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, 1));
    expect(sys.unallocatedBytes('/sparse.img')).toBe(0);
    expect(sys.unallocatedBytes('/proc')).toBeNull();
    expect(sys.unallocatedBytes('/missing.img')).toBeNull();
  });

  it('a missing sysfs gives nulls, not errors', () => {
    const empty = sysReader('/nonexistent-root-for-kvbench-test');
    expect(empty.read('/proc/self/mountinfo')).toBeNull();
    expect(diskFacts(empty, 'sdz')).toMatchObject({ model: null, serial: null, rotational: null, sizeBytes: null, media: 'unknown' });
  });
});
