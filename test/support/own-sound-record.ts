// Tests of the record of sound database files (src-main/store/sound-file-record.ts) keep it in a cache
// directory of their own, never the user's.
import { afterEach, beforeEach } from 'vitest';
import { tempDir } from '../unit/store/fixtures.ts';

/** The record of sound files in a cache directory of each test's own (XDG_CACHE_HOME), not the user's. */
export function ownSoundRecord(): void {
  const before = process.env.XDG_CACHE_HOME;
  beforeEach(() => {
    process.env.XDG_CACHE_HOME = tempDir('kvb-cache-');
  });
  afterEach(() => {
    if (before === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = before;
  });
}
