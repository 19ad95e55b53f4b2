// Page-cache honesty in real runs: the block device behind --cache-dir is counted over the measured
// phase and its bytes stand beside the storage tier's. With direct I/O the device serves every
// storage read; with buffered I/O the entries just written sit in the page cache, the device reads
// next to nothing, and the run must say so rather than report RAM speed as the drive's.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { resolveBlockDevice } from '../../../src-main/engine/metrics/device-stats.ts';
import { TINY_RUN_FLAGS, explain, makeTempDir, readResults, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

async function storageOnlyRun(extra: string[]): Promise<{ res: RunResults; stdout: string; onBlockDevice: boolean }> {
  const tmp = makeTempDir();
  const output = path.join(tmp, 'results.json');
  const r = await runCli(
    ['run', ...TINY_RUN_FLAGS, '--num-users', '4', '--duration', '4', '--cpu-mem-gb', '0', '--cache-dir', path.join(tmp, 'cache'), '--seed', '7', '--output', output, ...extra],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  return { res: readResults(output), stdout: r.stdout, onBlockDevice: resolveBlockDevice(tmp).ok };
}

describe('device bytes beside engine bytes (kvbench run)', () => {
  it('direct I/O: the device read at least 95 % of what the storage tier read, and the run is not flagged', async () => {
    const { res, stdout, onBlockDevice } = await storageOnlyRun([]);
    const kv = res.kvbench;
    const d = kv.device_io;
    const st = kv.tier_bytes.storage;
    expect(st.read_bytes, 'the run read from storage').toBeGreaterThan(0);
    expect(d.min_read_coverage).toBe(0.95);
    if (!onBlockDevice) {
      // A tmpfs /tmp (no block device, no O_DIRECT): no counters, and the reason is given.
      expect(d.available).toBe(false);
      expect(d.reason).toMatch(/not a block device|cannot/);
      return;
    }
    expect(d.available, d.reason ?? '').toBe(true);
    expect(d.device).toMatch(/\S/);
    expect(kv.tiers.storage.direct_io, 'direct I/O works on this filesystem').toBe(true);
    expect(d.read_bytes!).toBeGreaterThanOrEqual(0.95 * st.read_bytes);
    expect(d.read_coverage).toBeCloseTo(d.read_bytes! / st.read_bytes, 9);
    // Direct writes with an fdatasync per entry reach the device too.
    expect(d.write_bytes!).toBeGreaterThanOrEqual(0.95 * st.write_bytes);
    expect(d.flagged).toBe(false);
    expect(d.flag_reason).toBeNull();
    expect(kv.tiers.storage.reads_may_hit_page_cache).toBe(false);
    expect(d.busy_ratio!).toBeGreaterThan(0);
    expect(d.busy_ratio!).toBeLessThanOrEqual(1);
    expect(stdout).toMatch(new RegExp(`Device I/O \\(${d.device}`));
    expect(stdout).not.toMatch(/WARNING: storage reads may have been served by the OS page cache/);
  });

  it('buffered I/O: reads served by the page cache are flagged, in the JSON and on the console', async () => {
    const { res, stdout, onBlockDevice } = await storageOnlyRun(['--direct-io', 'off']);
    const kv = res.kvbench;
    const d = kv.device_io;
    expect(kv.tiers.storage.direct_io).toBe(false);
    expect(kv.tier_bytes.storage.read_bytes).toBeGreaterThan(0);
    // Flagged either way: by the device's own counters, or (without any) because reads were buffered.
    expect(d.flagged).toBe(true);
    expect(kv.tiers.storage.reads_may_hit_page_cache).toBe(true);
    expect(stdout).toMatch(/WARNING: storage reads may have been served by the OS page cache/);
    if (onBlockDevice) {
      expect(d.available).toBe(true);
      // Entries written a moment ago through the page cache are read back from it: the device saw almost none.
      expect(d.read_coverage!).toBeLessThan(0.95);
      expect(d.flag_reason).toMatch(/read \d+(\.\d)? % of the \d+ bytes the storage tier reported reading, buffered I\/O/);
    }
  });
});
