// A small filesystem to fill up, for the tests of a full disk: a tmpfs, which only root can mount
// (the test is skipped elsewhere, saying why). Filled with fallocate, so "full" means no block left.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'vitest';
import { mountTmpfsOrSkip, unmountTmpfs } from '../../support/tmpfs.ts';
import { tempDir } from './fixtures.ts';

/** A tmpfs of `sizeBytes` on a new directory, unmounted by the returned cleanup; null (the test skipped) where none can be mounted. */
export function smallFilesystem(ctx: TestContext, sizeBytes: number): { dir: string; unmount: () => void } | null {
  const dir = tempDir('kvb-full-');
  mountTmpfsOrSkip(ctx, dir, String(sizeBytes));
  return { dir, unmount: () => unmountTmpfs(dir) };
}

/** Takes the free space of the filesystem holding `dir` down to `leaveBytes` (rounded to its blocks); returns the filler's path. */
export function fillUp(dir: string, leaveBytes = 0): string {
  const st = fs.statfsSync(dir);
  const filler = path.join(dir, `filler-${Date.now()}-${Math.random().toString(16).slice(2)}`);
  const bytes = Number(st.bavail) * Number(st.bsize) - leaveBytes;
  if (bytes > 0) execFileSync('fallocate', ['-l', String(bytes), filler], { stdio: 'pipe' });
  return filler;
}
