import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { databaseSystemDirectoryOf, isSameFile, resolveRealPath, SYSTEM_DIRECTORIES_TEXT, systemDirectoryError, systemDirectoryOf } from '../../../src-main/engine/config/system-directories.ts';
import { isSystemDirectory, prepareStorageTarget } from '../../../src-main/engine/tiers/storage-target.ts';

const tmps: string[] = [];
afterEach(() => {
  for (const d of tmps.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A temp dir holding `link` → /dev, and a cache directory path below the link that does not exist yet. */
function linkToDev(): { tmp: string; cacheDir: string; realTarget: string } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-sysdir-'));
  tmps.push(tmp);
  fs.symlinkSync('/dev', path.join(tmp, 'link'));
  const name = `kvb-test-${process.pid}-${Date.now()}`;
  return { tmp, cacheDir: path.join(tmp, 'link', name), realTarget: path.join('/dev', name) };
}

describe('isSameFile', () => {
  it('answers for a path that cannot be stat\'ed (a loop of links) instead of throwing ELOOP', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-same-'));
    tmps.push(tmp);
    const loop = path.join(tmp, 'loop');
    fs.symlinkSync(loop, loop);
    fs.writeFileSync(path.join(tmp, 'r.json'), '{}');
    expect(isSameFile(loop, path.join(tmp, 'r.json'))).toBe(false);
    expect(isSameFile(path.join(tmp, 'r.json'), loop)).toBe(false);
    expect(isSameFile(loop, loop)).toBe(true);
  });
});

describe('the refused set', () => {
  const home = '/home/lab';
  it('refuses / and /var themselves, and the rest of the system with everything below it', () => {
    for (const [p, dir] of [
      ['/', '/'],
      ['/var', '/var'],
      ['/usr', '/usr'],
      ['/usr/local/kv', '/usr'],
      ['/usr/lib/x', '/usr'],
      ['/lib', '/lib'],
      ['/lib64/kv', '/lib64'],
      ['/run/user/1000/kv', '/run'],
      ['/var/lib/docker', '/var/lib'],
      ['/var/log/kv', '/var/log'],
      ['/usr/bin/kv', '/usr/bin'],
      ['/dev/shm/kv', '/dev'],
      ['/etc', '/etc'],
    ]) {
      expect(systemDirectoryOf(p, home), p).toBe(dir);
    }
  });

  it('accepts the places scratch drives and scratch space are kept', () => {
    for (const p of ['/mnt', '/mnt/nvme0', '/media/usb', '/data/kv', '/scratch', '/srv/kv', '/opt/kv', '/home/lab/kv', '/tmp/kv', '/var/tmp/kv', '/var/cache/kvbench', '/variable', '/usrdata', '/library']) {
      expect(systemDirectoryOf(p, home), p).toBeUndefined();
    }
  });

  it("inside the user's own home only the reference's directories count: a CI account's /var/lib/jenkins works, root's /root stays refused", () => {
    expect(systemDirectoryOf('/var/lib/jenkins/workspace/kv', '/var/lib/jenkins')).toBeUndefined();
    expect(systemDirectoryOf('/var/lib/docker', '/var/lib/jenkins')).toBe('/var/lib');
    expect(systemDirectoryOf('/root/kv', '/root')).toBe('/root');
    expect(systemDirectoryOf('/usr/kv', '/')).toBe('/usr'); // a home of / exempts nothing
  });

  it('says what it refused, and the help text lists the set', () => {
    expect(systemDirectoryError('/usr/local/kv', '--cache-dir')).toBe('--cache-dir cannot be a system directory: /usr/local/kv');
    expect(SYSTEM_DIRECTORIES_TEXT).toBe(
      '/ and /var themselves, and /etc, /bin, /sbin, /boot, /sys, /proc, /dev, /root, /usr, /lib, /lib32, /lib64, /libx32, /run, /var/lib, /var/log with everything below them',
    );
  });
});

describe('a database path', () => {
  it('may be in /var/lib, where a service keeps its state, or in the home, root\'s /root too; not among the system\'s own files', () => {
    expect(databaseSystemDirectoryOf('/var/lib/kvbench/kvbench.db', '/home/lab')).toBeUndefined();
    expect(databaseSystemDirectoryOf('/root/.local/share/kvbench/kvbench.db', '/root')).toBeUndefined();
    expect(databaseSystemDirectoryOf('/root/kv.db', '/home/lab')).toBe('/root');
    expect(databaseSystemDirectoryOf('/usr/lib/kv.db', '/home/lab')).toBe('/usr');
    expect(databaseSystemDirectoryOf('/etc/kv.db', '/home/lab')).toBe('/etc');
    expect(databaseSystemDirectoryOf('/var/log/kv.db', '/home/lab')).toBe('/var/log');
  });
});

describe('system directories behind symbolic links', () => {
  it('resolveRealPath follows the link through a path that does not exist yet', () => {
    const { cacheDir, realTarget } = linkToDev();
    expect(resolveRealPath(cacheDir)).toBe(realTarget);
    expect(systemDirectoryOf(resolveRealPath(cacheDir))).toBe('/dev');
    expect(systemDirectoryOf('/devices/x')).toBeUndefined();
  });

  it("the engine's storage target refuses a link into /dev before it creates anything", async () => {
    const { cacheDir, realTarget } = linkToDev();
    expect(isSystemDirectory(cacheDir)).toBe(true);
    try {
      await expect(prepareStorageTarget({ cacheDir, storageCapacityGb: 0, largestEntryBytes: 1024 })).rejects.toMatchObject({
        code: 'VALIDATION',
        message: expect.stringContaining('--cache-dir cannot be a system directory'),
      });
      expect(fs.existsSync(realTarget)).toBe(false);
    } finally {
      fs.rmSync(realTarget, { recursive: true, force: true }); // only if the old check let it through
    }
  });
});
