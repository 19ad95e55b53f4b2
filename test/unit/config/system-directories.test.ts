import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isSameFile, resolveRealPath, systemDirectoryOf } from '../../../src-main/engine/config/system-directories.ts';
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
