import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import {
  assessDevicePageCache,
  decodeDevT,
  DeviceStatsSampler,
  DISKSTATS_SECTOR_BYTES,
  mountFor,
  parseDiskstats,
  parseMountInfo,
  parseProcessReadBytes,
  resolveBlockDevice,
  type DeviceStatsReport,
} from '../../../src-main/engine/metrics/device-stats.ts';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-devstats-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const DISKSTATS = [
  // kernel ≥ 5.5: 20 fields (discards and flushes)
  ' 259       0 nvme0n1 1000 10 80000 500 2000 20 160000 900 0 1200 1400 5 0 40 3 7 11',
  ' 259       1 nvme0n1p1 900 9 72000 450 1900 19 152000 850 2 1100 1300 5 0 40 3 7 11',
  // kernel < 4.18: 14 fields
  '   7       0 loop0 12 0 96 1 3 0 24 2 0 3 3',
  '   8       0 sda 1 2 3 4 5 6 7 8 9 10 11',
  'garbage line',
].join('\n');

describe('parseProcessReadBytes', () => {
  it('reads read_bytes (not rchar) from /proc/<pid>/io', () => {
    expect(parseProcessReadBytes('rchar: 123456\nwchar: 7\nsyscr: 1\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n')).toBe(4096);
    expect(parseProcessReadBytes('rchar: 123456\n')).toBeNull();
    expect(parseProcessReadBytes('read_bytes: -1\n')).toBeNull();
  });
});

describe('parseDiskstats', () => {
  it('reads every format since 2.6, missing newer fields as 0', () => {
    const m = parseDiskstats(DISKSTATS);
    expect([...m.keys()].sort()).toEqual(['loop0', 'nvme0n1', 'nvme0n1p1', 'sda']);
    const nvme = m.get('nvme0n1')!;
    expect(nvme).toMatchObject({ major: 259, minor: 0, name: 'nvme0n1' });
    expect(nvme.counters).toMatchObject({ readsCompleted: 1000, sectorsRead: 80000, writesCompleted: 2000, sectorsWritten: 160000, ioTimeMs: 1200, weightedIoTimeMs: 1400, discardsCompleted: 5, sectorsDiscarded: 40, flushesCompleted: 7 });
    const loop = m.get('loop0')!.counters;
    expect(loop).toMatchObject({ sectorsRead: 96, sectorsWritten: 24, discardsCompleted: 0, flushesCompleted: 0 });
  });
});

describe('decodeDevT', () => {
  it('decodes glibc dev_t numbers, large minors included', () => {
    expect(decodeDevT(BigInt((259 << 8) | 2))).toEqual({ major: 259, minor: 2 });
    // 7:300 → minor's high bits go to bits 20+
    expect(decodeDevT(BigInt((300 & 0xff) | (7 << 8) | ((300 & ~0xff) << 12)))).toEqual({ major: 7, minor: 300 });
    // a major above 4095 uses the high 32 bits
    expect(decodeDevT((BigInt(0x1234 & ~0xfff) << 32n) | BigInt((0x1234 & 0xfff) << 8) | 5n)).toEqual({ major: 0x1234, minor: 5 });
  });
});

describe('mountinfo', () => {
  const text = [
    '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
    '30 22 0:27 / /mnt/my\\040dir rw - tmpfs tmpfs rw,size=1024k',
    '31 22 0:40 / /data rw - btrfs /dev/nvme0n1p2 rw',
  ].join('\n');
  it('parses mount points (octal escapes decoded), types and sources', () => {
    const m = parseMountInfo(text);
    expect(m.map((x) => x.mountPoint)).toEqual(['/', '/mnt/my dir', '/data']);
    expect(m[2]).toMatchObject({ majorMinor: '0:40', fsType: 'btrfs', source: '/dev/nvme0n1p2' });
  });
  it('finds the innermost mount holding a path', () => {
    const m = parseMountInfo(text);
    expect(mountFor('/data/x/y', m)?.mountPoint).toBe('/data');
    expect(mountFor('/database', m)?.mountPoint).toBe('/');
    expect(mountFor('/mnt/my dir', m)?.fsType).toBe('tmpfs');
  });
});

/** A fake /sys where the device of `dir` is partition `name`p1 of disk `name`. */
function fakeSysFor(dir: string, name: string): { sys: string; majorMinor: string } {
  const { major, minor } = decodeDevT(fs.statSync(dir, { bigint: true }).dev);
  const mm = `${major}:${minor}`;
  const sys = fs.mkdtempSync(path.join(tmp, 'sys-'));
  const disk = path.join(sys, 'devices', 'pci0', 'block', name);
  const part = path.join(disk, `${name}p1`);
  fs.mkdirSync(part, { recursive: true });
  fs.mkdirSync(path.join(disk, 'queue'));
  fs.writeFileSync(path.join(disk, 'dev'), '259:0\n');
  fs.writeFileSync(path.join(disk, 'queue', 'logical_block_size'), '512\n');
  fs.writeFileSync(path.join(disk, 'queue', 'rotational'), '0\n');
  fs.writeFileSync(path.join(part, 'partition'), '1\n');
  fs.writeFileSync(path.join(part, 'dev'), `${mm}\n`);
  fs.mkdirSync(path.join(sys, 'dev', 'block'), { recursive: true });
  fs.symlinkSync(part, path.join(sys, 'dev', 'block', mm));
  return { sys, majorMinor: mm };
}

describe('resolveBlockDevice', () => {
  it('names a partition and its disk from sysfs', (ctx) => {
    const { major } = decodeDevT(fs.statSync(tmp, { bigint: true }).dev);
    if (major === 0) ctx.skip('the temp dir is on an anonymous device here');
    const { sys, majorMinor } = fakeSysFor(tmp, 'nvme9n1');
    const r = resolveBlockDevice(tmp, { sys, proc: '/proc' });
    expect(r).toEqual({
      ok: true,
      device: {
        name: 'nvme9n1p1',
        majorMinor,
        isPartition: true,
        parent: { name: 'nvme9n1', majorMinor: '259:0' },
        underlying: [],
        logicalBlockBytes: 512,
        rotational: false,
        resolvedVia: 'stat',
      },
    });
  });

  it('explains, rather than throws, for a missing directory or a device sysfs does not know', () => {
    const missing = resolveBlockDevice(path.join(tmp, 'nope'));
    expect(missing.ok).toBe(false);
    const empty = fs.mkdtempSync(path.join(tmp, 'emptysys-'));
    const r = resolveBlockDevice(tmp, { sys: empty, proc: empty });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/not a block device|device/);
  });

  it('resolves this machine’s temp dir or says why not', () => {
    const r = resolveBlockDevice(os.tmpdir());
    if (r.ok) expect(r.device.name).toMatch(/^\S+$/);
    else expect(r.reason.length).toBeGreaterThan(0);
  });
});

describe('DeviceStatsSampler', () => {
  /**
   * A fake sysfs naming the temp dir's device `<disk>p1` on `<disk>`, and a fake /proc with their
   * diskstats lines, written by `write`; skips where the temp dir is on an anonymous device.
   */
  function fakeDevice(ctx: TestContext, disk: string): { sys: string; proc: string; write: (partRead: number, partWritten: number, diskRead: number) => void } {
    const { major } = decodeDevT(fs.statSync(tmp, { bigint: true }).dev);
    if (major === 0) ctx.skip('the temp dir is on an anonymous device here');
    const { sys, majorMinor } = fakeSysFor(tmp, disk);
    const proc = fs.mkdtempSync(path.join(tmp, 'proc-'));
    const [maj, min] = majorMinor.split(':');
    const write = (partRead: number, partWritten: number, diskRead: number): void =>
      fs.writeFileSync(
        path.join(proc, 'diskstats'),
        ` 259 0 ${disk} 10 0 ${diskRead} 0 10 0 0 0 0 100 200\n ${maj} ${min} ${disk}p1 4 0 ${partRead} 0 8 0 ${partWritten} 0 0 50 70\n`,
      );
    return { sys, proc, write };
  }

  it('returns the bytes moved between start and stop, for the device and its parent disk', (ctx) => {
    const { sys, proc, write } = fakeDevice(ctx, 'nvme9n1');
    const writeProcessIo = (readBytes: number): void => {
      fs.mkdirSync(path.join(proc, 'self'), { recursive: true });
      fs.writeFileSync(path.join(proc, 'self', 'io'), `rchar: 99999999\nwchar: 5\nsyscr: 3\nsyscw: 1\nread_bytes: ${readBytes}\nwrite_bytes: 0\ncancelled_write_bytes: 0\n`);
    };
    write(100, 1000, 5000);
    writeProcessIo(4096);
    const s = DeviceStatsSampler.forDirectory(tmp, { sys, proc });
    expect(s.available).toBe(true);
    s.start();
    write(100 + 2048, 1000 + 4096, 5000 + 2048 + 64);
    writeProcessIo(4096 + 1000 * DISKSTATS_SECTOR_BYTES);
    const r = s.stop();
    expect(r.available).toBe(true);
    expect(r.processReadBytes).toBe(1000 * DISKSTATS_SECTOR_BYTES);
    expect(r.processReason).toBeNull();
    expect(r.io).toMatchObject({ device: 'nvme9n1p1', readBytes: 2048 * DISKSTATS_SECTOR_BYTES, writeBytes: 4096 * DISKSTATS_SECTOR_BYTES });
    expect(r.parentIo).toMatchObject({ device: 'nvme9n1', readBytes: (2048 + 64) * DISKSTATS_SECTOR_BYTES });
    expect(r.io!.elapsedNs).toBeGreaterThan(0);
  });

  it('says why the per-process count is missing, and still reports the device', (ctx) => {
    const { sys, proc, write } = fakeDevice(ctx, 'nvme8n1');
    write(100, 100, 100);
    const s = DeviceStatsSampler.forDirectory(tmp, { sys, proc });
    s.start();
    const r = s.stop();
    expect(r.available).toBe(true);
    expect(r.processReadBytes).toBeNull();
    expect(r.processReason).toMatch(/^cannot read .*self\/io: /);
  });

  it('counts this process’s own direct reads on this machine, and not its page-cache hits', async (ctx) => {
    const s = DeviceStatsSampler.forDirectory(tmp);
    if (!s.available) ctx.skip('no device counters for the temp dir here');
    const file = path.join(tmp, 'r.bin');
    fs.writeFileSync(file, Buffer.alloc(8 * 1024 * 1024, 7));
    fs.readFileSync(file); // now in the page cache
    s.start();
    fs.readFileSync(file);
    const cached = s.stop();
    if (cached.processReadBytes === null) ctx.skip(`no /proc/self/io here: ${cached.processReason}`);
    expect(cached.processReadBytes).toBeLessThan(1024 * 1024);
    const fd = (() => {
      try {
        return fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_DIRECT);
      } catch {
        return null;
      }
    })();
    if (fd === null) ctx.skip('the temp dir refuses O_DIRECT');
    const buf = new AlignedSlab(8 * 1024 * 1024, 1).tryAcquire()!.buffer; // O_DIRECT needs page alignment
    s.start();
    try {
      let at = 0;
      while (at < buf.length) at += fs.readSync(fd!, buf, at, buf.length - at, at);
    } finally {
      fs.closeSync(fd!);
    }
    const direct = s.stop();
    expect(direct.processReadBytes).toBeGreaterThanOrEqual(8 * 1024 * 1024);
    fs.unlinkSync(file);
  });

  it('reports unavailable, with the reason, where there is no block device', () => {
    const s = new DeviceStatsSampler({ ok: false, reason: 'tmpfs has no device' });
    s.start();
    expect(s.stop()).toMatchObject({ available: false, reason: 'tmpfs has no device', io: null });
  });

  it('sees real writes on this machine’s temp dir', (ctx) => {
    const s = DeviceStatsSampler.forDirectory(tmp);
    if (!s.available) ctx.skip('no device counters for the temp dir here');
    s.start();
    const file = path.join(tmp, 'w.bin');
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, Buffer.alloc(4 * 1024 * 1024, 1));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.unlinkSync(file);
    const r = s.stop();
    // Other processes may write too: at least our 4 MiB reached the device.
    expect(r.io!.writeBytes).toBeGreaterThanOrEqual(4 * 1024 * 1024);
  });
});

describe('assessDevicePageCache', () => {
  const report = (readBytes: number, writeBytes: number, processReadBytes: number | null = null): DeviceStatsReport => ({
    available: true,
    reason: null,
    device: null,
    io: { device: 'vda', readBytes, writeBytes, readIos: 1, writeIos: 1, ioBusyMs: 1, weightedIoMs: 1, flushes: 0, elapsedNs: 1e9 },
    parentIo: null,
    via: null,
    viaIo: null,
    processReadBytes,
    processReason: processReadBytes === null ? 'cannot read /proc/self/io: ENOENT' : null,
  });
  it('passes direct reads when the device read at least 95 % of the engine’s storage reads', () => {
    const a = assessDevicePageCache({ engineReadBytes: 1000, engineWriteBytes: 500, device: report(960, 600), directIo: true });
    expect(a).toEqual({ readCoverage: 0.96, writeCoverage: 1.2, processReadCoverage: null, flagged: false, reason: null });
    // Direct I/O bypasses the page cache by construction: the process count is shown, not required.
    expect(assessDevicePageCache({ engineReadBytes: 1000, engineWriteBytes: 0, device: report(960, 0, 10), directIo: true }).flagged).toBe(false);
  });
  it('passes buffered reads only when this process itself made the device read them', () => {
    const proven = assessDevicePageCache({ engineReadBytes: 1000, engineWriteBytes: 0, device: report(2000, 0, 990), directIo: false });
    expect(proven).toMatchObject({ processReadCoverage: 0.99, flagged: false, reason: null });
    // Another reader on the drive lifts the device's counters: only the process count tells.
    const hidden = assessDevicePageCache({ engineReadBytes: 1000, engineWriteBytes: 0, device: report(5000, 0, 100), directIo: false });
    expect(hidden.flagged).toBe(true);
    expect(hidden.reason).toBe('buffered I/O: this process made the block layer read 10.0 % of the 1000 bytes the storage tier reported reading (/proc/self/io); the page cache served the rest');
    const unknown = assessDevicePageCache({ engineReadBytes: 1000, engineWriteBytes: 0, device: report(5000, 0, null), directIo: false });
    expect(unknown.flagged).toBe(true);
    expect(unknown.reason).toMatch(/^buffered I\/O: the device \(vda\) read 500\.0 % .* every process's I\/O and this process's own count is unavailable \(cannot read \/proc\/self\/io: ENOENT\)/);
  });
  it('flags reads the device did not serve, saying why', () => {
    const buffered = assessDevicePageCache({ engineReadBytes: 1000, engineWriteBytes: 0, device: report(100, 0), directIo: false });
    expect(buffered.flagged).toBe(true);
    expect(buffered.reason).toMatch(/10\.0 %.*page cache/);
    const direct = assessDevicePageCache({ engineReadBytes: 1000, engineWriteBytes: 0, device: report(900, 0), directIo: true });
    expect(direct.flagged).toBe(true);
    expect(direct.reason).toMatch(/direct I\/O was on/);
  });
  it('without counters, flags buffered reads only', () => {
    const none: DeviceStatsReport = { available: false, reason: 'tmpfs', device: null, io: null, parentIo: null, via: null, viaIo: null, processReadBytes: null, processReason: 'no device counters' };
    expect(assessDevicePageCache({ engineReadBytes: 1, engineWriteBytes: 0, device: none, directIo: true }).flagged).toBe(false);
    expect(assessDevicePageCache({ engineReadBytes: 1, engineWriteBytes: 0, device: none, directIo: false }).flagged).toBe(true);
    expect(assessDevicePageCache({ engineReadBytes: 0, engineWriteBytes: 5, device: none, directIo: false }).flagged).toBe(false);
  });
});
