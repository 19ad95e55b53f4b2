// The storage target's space refusals print their two sizes with enough decimals to differ: "0.05 GiB
// exceeds the free space (0.05 GiB)" said nothing about by how much, or even which way.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fmtGiBApart, prepareStorageTarget } from '../../../src-main/engine/tiers/storage-target.ts';

const GIB = 1024 ** 3;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

describe('storage tier space messages', () => {
  it('fmtGiBApart adds decimals until the two sizes differ', () => {
    expect(fmtGiBApart(0.05 * GIB, 50 * 1024 ** 2)).toEqual(['0.050 GiB', '0.049 GiB']);
    expect(fmtGiBApart(2 * GIB, 1 * GIB)).toEqual(['2.00 GiB', '1.00 GiB']);
    expect(fmtGiBApart(GIB + 4096, GIB)).toEqual(['1.000004 GiB', '1.000000 GiB']);
  });

  it('--storage-capacity-gb just over the free space: both sizes told apart', async (ctx) => {
    if (process.getuid?.() !== 0) {
      console.warn('skipped: needs root to mount a tmpfs of a known size');
      return ctx.skip();
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-space-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=50m', 'tmpfs', dir], { stdio: 'pipe' });
    } catch (err) {
      console.warn(`skipped: cannot mount a tmpfs (${(err as Error).message.split('\n')[0]})`);
      return ctx.skip();
    }
    cleanups.push(() => execFileSync('umount', [dir], { stdio: 'pipe' }));
    await expect(prepareStorageTarget({ cacheDir: dir, storageCapacityGb: 0.05, largestEntryBytes: 1024 })).rejects.toMatchObject({
      code: 'INSUFFICIENT_SPACE',
      message: `--storage-capacity-gb 0.05 (0.050 GiB) exceeds the free space on ${dir} (0.049 GiB)`,
    });
  });
});
