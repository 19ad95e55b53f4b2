// A cache directory whose files live in RAM (tmpfs, ramfs) is said to be so wherever kvbench
// describes it: tmpfs takes O_DIRECT since Linux 6.6, so direct I/O alone would pass it as a drive.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ramFilesystemOf, storageBehindDir } from '../../../src-main/engine/io/ram-filesystem.ts';
import { efficiencySection } from '../../../src-main/engine/report/probe-limits.ts';
import { prepareStorageTarget, releaseStorageTarget } from '../../../src-main/engine/tiers/storage-target.ts';
import { detectHardware } from '../../../src-main/hardware/detect-hardware.ts';
import { formatHardware } from '../../../src-main/hardware/format-hardware.ts';
import { hardwareAdvice } from '../../../src-main/hardware/advice.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { cacheDirRamBacking, HardwareProfileSchema, ramBackingOf, type HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { probeLimitsOf } from '../../../src-main/export/tier-comparison.ts';
import type { TierBytes } from '../../../src-shared/domain/results.ts';
import { fakeHardware } from '../store/fixtures.ts';

function onTmpfs(): HardwareProfile {
  const hw = fakeHardware();
  hw.cacheDir = { ...hw.cacheDir!, path: '/mnt/ram/kv', resolvedPath: '/mnt/ram/kv', mountPoint: '/mnt/ram', filesystem: 'tmpfs', mountSource: 'tmpfs' };
  return hw;
}

/** Undoes the set-up steps last first (unmount, detach, remove), then removes `dir`. */
function undoAll(undo: (() => void)[], dir: string): void {
  for (const u of undo.reverse()) {
    try {
      u();
    } catch {
      // the next step still runs; a busy mount is reported by the next test run's left-overs
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

describe('RAM-backed cache directories', () => {
  it('statfs f_type: tmpfs and ramfs on Linux, nothing elsewhere', () => {
    expect(ramFilesystemOf(0x01021994, 'linux')).toBe('tmpfs');
    expect(ramFilesystemOf(0x858458f6, 'linux')).toBe('ramfs');
    expect(ramFilesystemOf(0x858458f6 | 0, 'linux'), 'a sign-extended f_type').toBe('ramfs');
    expect(ramFilesystemOf(0xef53, 'linux'), 'ext4').toBeNull();
    expect(ramFilesystemOf(0x01021994, 'darwin')).toBeNull();
  });

  it('finds a real tmpfs, and not the disk the temp directory is on', async (ctx) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-ram-'));
    try {
      const disk = (await storageBehindDir(dir)).ram?.backing ?? null;
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
      } catch (err) {
        return ctx.skip(`cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})`);
      }
      try {
        expect((await storageBehindDir(dir)).ram?.backing).toBe('tmpfs');
        expect((await storageBehindDir(dir)).ram).toEqual({ backing: 'tmpfs', chain: 'tmpfs' });
      } finally {
        execFileSync('umount', [dir], { stdio: 'pipe' });
      }
      // Whatever the temp directory is on, it is not the tmpfs just unmounted; on a RAM /tmp it says so.
      expect((await storageBehindDir(dir)).ram?.backing ?? null).toBe(disk);
      expect((await storageBehindDir(path.join(dir, 'missing'))).ram).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a real loop device whose file is on tmpfs is RAM wherever it is described; one whose file is on the disk is that disk', async (ctx) => {
    // environment.md's "stable test device": ext4 on a loop file in tmpfs. Needs root (mount, losetup).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-loop-'));
    const ram = path.join(dir, 'ram');
    const onRam = path.join(dir, 'on-ram');
    const onDisk = path.join(dir, 'on-disk');
    for (const d of [ram, onRam, onDisk]) fs.mkdirSync(d);
    const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { stdio: 'pipe', encoding: 'utf8' }).trim();
    const undo: (() => void)[] = [];
    try {
      try {
        run('mount', ['-t', 'tmpfs', '-o', 'size=80m', 'tmpfs', ram]);
      } catch (err) {
        return ctx.skip(`cannot mount a tmpfs here (${(err as Error).message.split('\n')[0]})`);
      }
      undo.push(() => run('umount', [ram]));
      const loopOn = (image: string, at: string): string => {
        fs.writeFileSync(image, '');
        fs.truncateSync(image, 64 * 1024 * 1024);
        const dev = run('losetup', ['--find', '--show', image]);
        undo.push(() => run('losetup', ['-d', dev]));
        run('mkfs.ext4', ['-q', dev]);
        run('mount', [dev, at]);
        undo.push(() => run('umount', [at]));
        return path.basename(dev);
      };
      let ramLoop: string;
      let diskLoop: string;
      try {
        ramLoop = loopOn(path.join(ram, 'disk.img'), onRam);
        diskLoop = loopOn(path.join(dir, 'disk.img'), onDisk);
      } catch (err) {
        return ctx.skip(`cannot set up a loop device here (${(err as Error).message.split('\n')[0]})`);
      }
      const tmpRam = (await storageBehindDir(dir)).ram?.backing ?? null; // the temp directory's own filesystem: a disk, or RAM on a RAM /tmp

      const hw = await detectHardware(path.join(onRam, 'kv'), { probeDirectIo: false, cudaProbe: false });
      const c = hw.cacheDir!;
      expect(c.blockDevice).toMatchObject({ name: ramLoop, media: 'ram', backingFile: path.join(fs.realpathSync(ram), 'disk.img'), backingFilesystem: 'tmpfs' });
      expect(ramBackingOf(c)).toBe(`${ramLoop} on tmpfs`);
      // mkfs wrote a few MiB of the sparse 64 MiB image: the rest is RAM the storage tier could still take.
      expect(c.blockDevice!.backingFileUnallocatedBytes).toBeGreaterThan(0);
      expect(c.blockDevice!.backingFileUnallocatedBytes).toBeLessThan(64 * 1024 * 1024);
      // kvbench hw, the plan and the app's advice name the chain the trial's results and cautions will name.
      const chain = `${ramLoop} → ${path.join(fs.realpathSync(ram), 'disk.img')} on tmpfs`;
      expect(c.ramBackingChain).toBe(chain);
      expect(formatHardware(hw)).toMatch(/^ {2}WARNING +RAM-backed filesystem \((.+)\): the storage tier measures memory, not a drive/m);
      expect(formatHardware(hw)).toContain(`RAM-backed filesystem (${chain}): the storage tier measures memory, not a drive (direct I/O or not)`);
      expect(JSON.parse(JSON.stringify(hw)).cacheDir.ramBackingChain, 'kvbench hw --json').toBe(chain);
      expect(planSuite(hw, { profile: 'smoke', cacheDir: path.join(onRam, 'kv') }).notes).toContain(
        `the cache directory is on a RAM-backed filesystem (${chain}): the storage tier measures memory, not a drive; every storage result describes RAM`,
      );
      expect(hardwareAdvice(hw, false).find((a) => a.code === 'ram-backed')?.message).toBe(`The cache directory is on a RAM-backed filesystem (${chain}): the storage tier measures memory, not a drive.`);
      // The engine's own view, which the trial's results (ram_backed, ram_backing_chain) and so the report's caution come from.
      expect((await storageBehindDir(onRam)).ram?.backing).toBe(`${ramLoop} on tmpfs`);
      const target = await prepareStorageTarget({ cacheDir: path.join(onRam, 'kv'), storageCapacityGb: 0.01, largestEntryBytes: 1024 });
      expect(target.ramFilesystem).toBe(`${ramLoop} on tmpfs`);
      // The loop, the file behind it as the kernel names it, and the filesystem holding that file.
      expect(target.ramBackingChain).toBe(`${ramLoop} → ${path.join(fs.realpathSync(ram), 'disk.img')} on tmpfs`);
      await releaseStorageTarget(target);

      const disk = (await detectHardware(onDisk, { probeDirectIo: false, cudaProbe: false })).cacheDir!;
      expect(disk.blockDevice).toMatchObject({ name: diskLoop, backingFilesystem: expect.any(String) });
      expect(disk.blockDevice!.disks).not.toEqual([diskLoop]); // followed to the disk holding the file …
      expect(ramBackingOf(disk) === null).toBe(tmpRam === null); // … which is RAM only when the temp dir is
      expect((await storageBehindDir(onDisk)).ram === null).toBe(tmpRam === null);
    } finally {
      undoAll(undo, dir);
    }
  });

  it('a real RAM disk (a zram device of its own) is named, mounted itself or under a loop device\'s file', async (ctx) => {
    // Needs root and zram: a device hot-added for the test (never zram0, which may be this machine's swap), removed after.
    const run = (cmd: string, args: string[]): string => execFileSync(cmd, args, { stdio: 'pipe', encoding: 'utf8' }).trim();
    const undo: (() => void)[] = [];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-zram-'));
    const onZram = path.join(dir, 'zram');
    const onLoop = path.join(dir, 'loop');
    for (const d of [onZram, onLoop]) fs.mkdirSync(d);
    try {
      let zram: string;
      try {
        const n = fs.readFileSync('/sys/class/zram-control/hot_add', 'utf8').trim();
        zram = `zram${n}`;
        undo.push(() => fs.writeFileSync('/sys/class/zram-control/hot_remove', n));
        fs.writeFileSync(`/sys/block/${zram}/disksize`, String(64 * 1024 * 1024));
        run('mkfs.ext4', ['-q', `/dev/${zram}`]);
        run('mount', [`/dev/${zram}`, onZram]);
        undo.push(() => run('umount', [onZram]));
      } catch (err) {
        return ctx.skip(`cannot set up a zram device here (${(err as Error).message.split('\n')[0]})`);
      }
      expect((await storageBehindDir(onZram)).ram).toEqual({ backing: 'RAM disk', chain: zram });
      const zhw = await detectHardware(path.join(onZram, 'kv'), { probeDirectIo: false, cudaProbe: false });
      expect(zhw.cacheDir!.ramBackingChain).toBe(zram);
      expect(formatHardware(zhw)).toContain(`RAM-backed filesystem (${zram}): the storage tier measures memory, not a drive`);
      const image = path.join(fs.realpathSync(onZram), 'disk.img');
      fs.writeFileSync(image, '');
      fs.truncateSync(image, 16 * 1024 * 1024);
      const loop = path.basename(run('losetup', ['--find', '--show', image]));
      undo.push(() => run('losetup', ['-d', `/dev/${loop}`]));
      run('mkfs.ext4', ['-q', `/dev/${loop}`]);
      run('mount', [`/dev/${loop}`, onLoop]);
      undo.push(() => run('umount', [onLoop]));
      const target = await prepareStorageTarget({ cacheDir: path.join(onLoop, 'kv'), storageCapacityGb: 0.001, largestEntryBytes: 1024 });
      expect(target.ramFilesystem).toBe(`${loop} on RAM disk ${zram}`);
      expect(target.ramBackingChain).toBe(`${loop} → ${image} on ext4 → ${zram}`);
      await releaseStorageTarget(target);
    } finally {
      undoAll(undo, dir);
    }
  });

  it('a real tmpfs (/dev/shm): kvbench hw, its JSON, the plan and the app advice name the chain the results name', async (ctx) => {
    if (!fs.existsSync('/dev/shm')) return ctx.skip('no /dev/shm here');
    const dir = fs.mkdtempSync('/dev/shm/kvb-hw-');
    try {
      const engine = (await storageBehindDir(dir)).ram;
      if (engine === null) return ctx.skip('/dev/shm is not RAM-backed here');
      const hw = await detectHardware(path.join(dir, 'kv'), { probeDirectIo: false, cudaProbe: false });
      expect(hw.cacheDir!.ramBackingChain).toBe(engine.chain);
      expect(engine.chain).toBe('tmpfs');
      expect(HardwareProfileSchema.parse(JSON.parse(JSON.stringify(hw))).cacheDir!.ramBackingChain, 'kvbench hw --json, a stored snapshot').toBe('tmpfs');
      expect(formatHardware(hw)).toMatch(/^ {2}WARNING +RAM-backed filesystem \(tmpfs\): the storage tier measures memory, not a drive/m);
      // The planner refuses /dev/shm itself as a system directory; the plan's RAM note comes from the snapshot all the same.
      const plan = planSuite(hw, { profile: 'smoke', cacheDir: path.join(os.tmpdir(), 'kvb-plan', 'kv') });
      expect(plan.notes).toContain('the cache directory is on a RAM-backed filesystem (tmpfs): the storage tier measures memory, not a drive; every storage result describes RAM');
      expect(hardwareAdvice(hw, false).find((a) => a.code === 'ram-backed')?.message).toBe('The cache directory is on a RAM-backed filesystem (tmpfs): the storage tier measures memory, not a drive.');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a snapshot that kept the chain names it everywhere; one stored before the chain was kept still reads, in its short words', () => {
    const hw = fakeHardware();
    const loop = {
      name: 'loop0', disks: ['loop0'], model: null, serial: null, wwid: null, rotational: false, logicalBlockBytes: 512, physicalBlockBytes: 512,
      sizeBytes: 1 << 30, media: 'ram' as const, backingFile: '/dev/shm/d.img', backingFilesystem: 'tmpfs',
    };
    const chain = 'loop0 → /dev/shm/d.img on tmpfs';
    const old: HardwareProfile = { ...hw, cacheDir: { ...hw.cacheDir!, filesystem: 'ext4', blockDevice: loop, bandwidth: { readBytesPerSec: null, writeBytesPerSec: 2e9, fileBytes: 1 << 30, chunkBytes: 16 << 20, depth: 16, directIo: false, pageCacheSuspected: true, phaseSeconds: 3, measuredAt: '2026-01-01T00:00:00Z' } },
    };
    expect(old.cacheDir).not.toHaveProperty('ramBackingChain');
    const oldParsed = HardwareProfileSchema.parse(JSON.parse(JSON.stringify(old)));
    expect(cacheDirRamBacking(oldParsed.cacheDir!)).toBe('loop0 on tmpfs');
    expect(formatHardware(oldParsed)).toContain('RAM-backed filesystem (loop0 on tmpfs)');
    expect(probeLimitsOf(oldParsed).readNote).toBe("the probe's reads came from memory (loop0 on tmpfs is RAM-backed)");
    const kept: HardwareProfile = { ...old, cacheDir: { ...old.cacheDir!, ramBackingChain: chain } };
    expect(formatHardware(kept)).toContain(`RAM-backed filesystem (${chain}): the storage tier measures memory, not a drive`);
    expect(hardwareAdvice(kept, false).find((a) => a.code === 'ram-backed')?.message).toContain(`(${chain})`);
    expect(planSuite(kept, { profile: 'smoke', cacheDir: '/mnt/kv' }).notes.join('\n')).toContain(`RAM-backed filesystem (${chain})`);
    expect(probeLimitsOf(kept).readNote).toBe(`the probe's reads came from memory (${chain} is RAM-backed)`);
    // Kept as not RAM-backed: nothing is said, whatever the short words would guess.
    const notRam: HardwareProfile = { ...old, cacheDir: { ...old.cacheDir!, ramBackingChain: null } };
    expect(cacheDirRamBacking(notRam.cacheDir!)).toBeNull();
  });

  it('the hardware profile: tmpfs, ramfs and a RAM block device are RAM; ext4 and NFS are not', () => {
    const hw = onTmpfs();
    expect(ramBackingOf(hw.cacheDir!)).toBe('tmpfs');
    expect(ramBackingOf({ filesystem: 'ramfs', blockDevice: null })).toBe('ramfs');
    expect(ramBackingOf(fakeHardware().cacheDir!)).toBeNull();
    expect(ramBackingOf({ filesystem: 'nfs4', blockDevice: null })).toBeNull();
  });

  it('kvbench hw, the suite plan and the app advice say it', () => {
    const hw = onTmpfs();
    expect(formatHardware(hw)).toMatch(/^ {2}WARNING +RAM-backed filesystem \(tmpfs\): the storage tier measures memory, not a drive/m);
    expect(formatHardware(fakeHardware())).not.toMatch(/RAM-backed/);
    const plan = planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/ram/kv' });
    expect(plan.notes).toContain('the cache directory is on a RAM-backed filesystem (tmpfs): the storage tier measures memory, not a drive; every storage result describes RAM');
    expect(planSuite(fakeHardware(), { profile: 'smoke', cacheDir: '/mnt/kv' }).notes.join('\n')).not.toMatch(/RAM-backed/);
    expect(hardwareAdvice(hw, false).find((a) => a.code === 'ram-backed')?.message).toBe(
      'The cache directory is on a RAM-backed filesystem (tmpfs): the storage tier measures memory, not a drive.',
    );
  });

  it('a run there claims no efficiency against a probed limit, in either direction', () => {
    const GB = 1e9;
    const storage: TierBytes = {
      read_bytes: 10 * GB, write_bytes: 10 * GB, read_ops: 1, write_ops: 1, read_bytes_per_sec: GB, write_bytes_per_sec: GB,
      demoted_in_bytes: 0, demoted_out_bytes: 0, hit_read_bytes: 0, evicted_entries: 0, evicted_bytes: 0, entries_at_end: 0, used_bytes_at_end: 0,
    };
    const limits = { file: '/tmp/p.json', dir: '/mnt/ram', device: null, probedAt: '', ioChunkBytes: 16 << 20, ioDepth: 16, readBytesPerSec: 4 * GB, writeBytesPerSec: 2 * GB };
    const e = efficiencySection(limits, storage, { device: null, flagged: true, flag_reason: 'RAM-backed …' }, { ioChunkBytes: 16 << 20, ioDepth: 16, ramFilesystem: 'tmpfs' });
    expect([e.storage_read_efficiency, e.storage_write_efficiency, e.storage_mixed_efficiency]).toEqual([null, null, null]);
    expect(e.notes).toEqual(['no efficiency: RAM-backed filesystem (tmpfs): the storage tier measures memory, not a drive']);
  });
});
