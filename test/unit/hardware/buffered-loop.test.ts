// A loop device reads and writes its backing file through the host's page cache unless direct I/O is
// turned on for it (loop/dio 0, losetup's default): O_DIRECT on the loop's filesystem keeps the loop's
// own cache out, not the backing file's, so kvbench's reads there can be the host's RAM. Real loop
// devices on a file on this machine's disk (/var/tmp, not tmpfs), one buffered and one with
// --direct-io=on: detection, the plan, the advice, the engine's view and the device counters.
// Needs root (losetup, mkfs.ext4, mount); skips and says why elsewhere.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';
import { storageBehindDir } from '../../../src-main/engine/io/ram-filesystem.ts';
import { DeviceStatsSampler, resolveBlockDevice } from '../../../src-main/engine/metrics/device-stats.ts';
import { prepareStorageTarget, releaseStorageTarget } from '../../../src-main/engine/tiers/storage-target.ts';
import { hardwareAdvice } from '../../../src-main/hardware/advice.ts';
import { detectHardware } from '../../../src-main/hardware/detect-hardware.ts';
import { formatHardware } from '../../../src-main/hardware/format-hardware.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { probeLimitsOf } from '../../../src-main/export/tier-comparison.ts';
import { HardwareProfileSchema, type HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { fakeHardware } from '../store/fixtures.ts';
import { skipBecause } from '../../support/skip.ts';

const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { stdio: 'pipe', encoding: 'utf8' }).trim();

interface Loop {
  name: string;
  image: string;
  mnt: string;
}

let root = '';
const undo: (() => void)[] = [];
let setUp: { buffered: Loop; direct: Loop; disk: string; fsType: string } | string = 'not set up';

/** A 64 MiB sparse image in `root`, on a loop device (with --direct-io=on when `direct`), ext4, mounted. */
function loopOn(tag: string, direct: boolean): Loop {
  const image = path.join(root, `${tag}.img`);
  fs.writeFileSync(image, '');
  fs.truncateSync(image, 64 * 1024 * 1024);
  const dev = run('losetup', ['--find', '--show', ...(direct ? ['--direct-io=on'] : []), image]);
  undo.push(() => run('losetup', ['-d', dev]));
  run('mkfs.ext4', ['-q', dev]);
  const mnt = path.join(root, tag);
  fs.mkdirSync(mnt);
  run('mount', [dev, mnt]);
  undo.push(() => run('umount', [mnt]));
  return { name: path.basename(dev), image, mnt };
}

beforeAll(() => {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    setUp = 'needs root on Linux (losetup, mkfs.ext4, mount)';
    return;
  }
  // On the disk, as a lab's "slow drive" image would be: a loop on tmpfs is RAM-backed, another rule.
  root = fs.mkdtempSync('/var/tmp/kvb-loop-');
  const disk = resolveBlockDevice(root);
  if (!disk.ok) {
    setUp = `/var/tmp is on no block device here (${disk.reason})`;
    return;
  }
  try {
    const buffered = loopOn('buffered', false);
    const direct = loopOn('direct', true);
    if (fs.readFileSync(`/sys/block/${direct.name}/loop/dio`, 'utf8').trim() !== '1') {
      setUp = `losetup --direct-io=on did not take on ${direct.name} (the filesystem under /var/tmp refuses O_DIRECT?)`;
      return;
    }
    const fsType = run('findmnt', ['-no', 'FSTYPE', '--target', root]);
    setUp = { buffered, direct, disk: disk.device.name, fsType };
  } catch (err) {
    setUp = `cannot set up a loop device here (${(err as Error).message.split('\n')[0]})`;
  }
});

afterAll(() => {
  for (const u of undo.reverse()) {
    try {
      u();
    } catch {
      // the next step still runs
    }
  }
  if (root !== '') fs.rmSync(root, { recursive: true, force: true });
});

/** A page-aligned 1 MiB buffer, as O_DIRECT needs (the engine's own slab). */
const alignedBuffer = (): Buffer => new AlignedSlab(1 << 20, 1).tryAcquire()!.buffer;

/** Reads `file` whole with O_DIRECT in 1 MiB requests. */
function readDirect(file: string): number {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_DIRECT);
  const buf = alignedBuffer();
  let total = 0;
  try {
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, total);
      if (n === 0) return total;
      total += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `bytes` of incompressible data to `file` with O_DIRECT and fsyncs it. */
function writeDirect(file: string, bytes: number): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_DIRECT, 0o600);
  const buf = alignedBuffer();
  try {
    for (let at = 0; at < bytes; at += buf.length) {
      for (let i = 0; i < buf.length; i += 4096) buf.writeUInt32LE((at + i) >>> 0, i);
      fs.writeSync(fd, buf, 0, buf.length, at);
    }
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

describe('a loop device on a file on the disk', () => {
  it('buffered (loop/dio 0): kvbench hw, its JSON, the plan and the app advice say so, with the fix', async (ctx) => {
    if (typeof setUp === 'string') return skipBecause(ctx, setUp);
    const { buffered, fsType } = setUp;
    const hw = await detectHardware(path.join(buffered.mnt, 'kv'), { probeDirectIo: false, cudaProbe: false });
    const expected = [{ name: buffered.name, backingFile: buffered.image, backingFilesystem: fsType }];
    expect(hw.cacheDir!.bufferedLoops).toEqual(expected);
    expect(hw.cacheDir!.ramBackingChain).toBeNull();
    expect(HardwareProfileSchema.parse(JSON.parse(JSON.stringify(hw))).cacheDir!.bufferedLoops, 'kvbench hw --json, a stored snapshot').toEqual(expected);
    const words = `loop device with buffered I/O on the backing file (${buffered.name} → ${buffered.image} on ${fsType}; loop/dio 0)`;
    expect(formatHardware(hw)).toMatch(new RegExp(`^ {2}WARNING +${words.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: reads through it may be served by the host's page cache`, 'm'));
    expect(formatHardware(hw)).toContain(`(fix: losetup --direct-io=on /dev/${buffered.name})`);
    const note = planSuite(hw, { profile: 'smoke', cacheDir: path.join(buffered.mnt, 'kv') }).notes.find((n) => n.includes('loop/dio 0'));
    expect(note).toMatch(new RegExp(`^the cache directory is on a ${words.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*; every trial's storage reads will be flagged$`));
    expect(hardwareAdvice(hw, false).find((a) => a.code === 'buffered-loop')).toMatchObject({ level: 'warn', message: expect.stringContaining(words) });
  });

  it('with --direct-io=on (loop/dio 1): nothing said', async (ctx) => {
    if (typeof setUp === 'string') return skipBecause(ctx, setUp);
    const hw = await detectHardware(path.join(setUp.direct.mnt, 'kv'), { probeDirectIo: false, cudaProbe: false });
    expect(hw.cacheDir!.bufferedLoops).toEqual([]);
    expect(formatHardware(hw)).not.toMatch(/loop\/dio/);
    expect(planSuite(hw, { profile: 'smoke', cacheDir: path.join(setUp.direct.mnt, 'kv') }).notes.join('\n')).not.toMatch(/loop\/dio/);
    expect(hardwareAdvice(hw, false).map((a) => a.code)).not.toContain('buffered-loop');
  });

  it('the engine\'s view: the buffered loop for the results, the disk under the file for the counters', async (ctx) => {
    if (typeof setUp === 'string') return skipBecause(ctx, setUp);
    const { buffered, direct, disk, fsType } = setUp;
    expect(await storageBehindDir(buffered.mnt)).toEqual({ ram: null, bufferedLoops: [{ name: buffered.name, backingFile: buffered.image, backingFilesystem: fsType }], servedBy: disk });
    expect(await storageBehindDir(direct.mnt)).toEqual({ ram: null, bufferedLoops: [], servedBy: disk });
    // The disk itself: nothing below it.
    expect(await storageBehindDir(root)).toEqual({ ram: null, bufferedLoops: [], servedBy: null });
    const target = await prepareStorageTarget({ cacheDir: path.join(buffered.mnt, 'kv'), storageCapacityGb: 0.01, largestEntryBytes: 1024 });
    try {
      expect(target).toMatchObject({ ramFilesystem: null, bufferedLoops: [{ name: buffered.name }], servedBy: disk });
    } finally {
      await releaseStorageTarget(target);
    }
  });

  it('device counters are the disk\'s, the loop\'s kept beside them: with direct I/O on, the disk reads what the loop is asked for', async (ctx) => {
    if (typeof setUp === 'string') return skipBecause(ctx, setUp);
    const { buffered, direct, disk } = setUp;
    for (const loop of [buffered, direct]) {
      const sampler = DeviceStatsSampler.forDirectory(loop.mnt, {}, disk);
      expect(sampler.resolution).toMatchObject({ ok: true, device: { name: disk }, via: { name: loop.name } });
    }
    const bytes = 32 * 1024 * 1024;
    const file = path.join(direct.mnt, 'data.bin');
    writeDirect(file, bytes);
    const sampler = DeviceStatsSampler.forDirectory(direct.mnt, {}, disk);
    sampler.start();
    expect(readDirect(file)).toBe(bytes);
    const r = sampler.stop();
    expect(r.via?.name).toBe(direct.name);
    expect(r.viaIo!.readBytes).toBeGreaterThanOrEqual(bytes);
    // Every process's reads count on the disk, so only a lower bound holds: the loop's direct reads reached it.
    expect(r.io!.device).toBe(disk);
    expect(r.io!.readBytes).toBeGreaterThanOrEqual(0.95 * bytes);
  });
});

describe('a stored snapshot whose cache directory was on a buffered loop', () => {
  it("says why the drive probe's read rate is no limit", () => {
    const hw = fakeHardware();
    const bandwidth = { readBytesPerSec: null, writeBytesPerSec: 2e9, fileBytes: 1 << 30, chunkBytes: 16 << 20, depth: 16, directIo: true, pageCacheSuspected: true, phaseSeconds: 3, measuredAt: '2026-01-01T00:00:00Z' };
    const onLoop: HardwareProfile = { ...hw, cacheDir: { ...hw.cacheDir!, bandwidth, bufferedLoops: [{ name: 'loop2', backingFile: '/var/tmp/d.img', backingFilesystem: 'ext4' }] } };
    expect(probeLimitsOf(onLoop)).toMatchObject({ readBytesPerS: null, readNote: "the page cache may have served the probe's reads (loop2 read its backing file through it: loop/dio 0)" });
    // A snapshot taken before kvbench looked at loops says what it always said.
    expect(probeLimitsOf({ ...hw, cacheDir: { ...hw.cacheDir!, bandwidth } }).readNote).toBe("the page cache may have served the probe's reads");
  });
});
