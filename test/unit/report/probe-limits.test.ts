// The storage tier's bandwidth as a share of a probed limit: what is computed, and every caveat said;
// and the probe file it is computed against, read from a real file and refused naming what is wrong.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { efficiencySection, loadProbeLimits, type ProbeFileLimits } from '../../../src-main/engine/report/probe-limits.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import type { TierBytes } from '../../../src-shared/domain/results.ts';

const GB = 1e9;
const limits: ProbeFileLimits = {
  file: '/tmp/probe.json',
  dir: '/mnt/nvme',
  device: 'nvme0n1',
  probedAt: '2026-11-24T00:00:00.000Z',
  ioChunkBytes: 16 * 1024 * 1024,
  ioDepth: 16,
  readBytesPerSec: 4 * GB,
  writeBytesPerSec: 2 * GB,
};
const run = { ioChunkBytes: 16 * 1024 * 1024, ioDepth: 16 };
const device = { device: 'nvme0n1', flagged: false, flag_reason: null };

function storage(readBps: number, writeBps: number, seconds = 10): TierBytes {
  return {
    read_bytes: readBps * seconds, write_bytes: writeBps * seconds, read_ops: 1, write_ops: 1,
    read_bytes_per_sec: readBps, write_bytes_per_sec: writeBps,
    demoted_in_bytes: 0, demoted_out_bytes: 0, hit_read_bytes: 0, evicted_entries: 0, evicted_bytes: 0, entries_at_end: 0, used_bytes_at_end: 0,
  };
}

describe('efficiencySection', () => {
  it('states each direction and the time-weighted mix as a share of the probe, with no caveat on a like-for-like run', () => {
    const e = efficiencySection(limits, storage(2 * GB, 1 * GB), device, run);
    expect(e.storage_read_efficiency).toBe(0.5);
    expect(e.storage_write_efficiency).toBe(0.5);
    // Each direction alone is at half its limit, but together they kept the device busy: 20 GB read
    // at 4 GB/s plus 10 GB written at 2 GB/s is 10 s of device time, and the run took 10 s.
    expect(e.storage_mixed_efficiency).toBeCloseTo(1, 12);
    expect(e.notes).toEqual([]);
  });

  it('says when a run beat the probed limit by more than noise, per direction', () => {
    const e = efficiencySection(limits, storage(5 * GB, 2.1 * GB), device, run);
    expect(e.storage_read_efficiency).toBe(1.25);
    expect(e.notes).toEqual([
      'reads ran at 125 % of the probed limit: above the device\'s measured rate, so either the probe under-measured it (other load at the time) ' +
        'or a cache below the filesystem (a VM host, a RAID controller) served part of this run',
    ]);
  });

  it('gives no read or mixed efficiency for reads the page cache may have served, and names a different device or I/O shape', () => {
    const e = efficiencySection(
      limits,
      storage(9 * GB, 1 * GB),
      { device: 'sda', flagged: true, flag_reason: 'buffered I/O: this process made the block layer read 0.0 % of …' },
      { ioChunkBytes: 4 * 1024 * 1024, ioDepth: 32 },
    );
    expect(e.storage_read_efficiency).toBeNull();
    expect(e.storage_mixed_efficiency).toBeNull();
    expect(e.storage_write_efficiency).toBe(0.5);
    expect(e.notes).toEqual([
      'no read or mixed efficiency: buffered I/O: this process made the block layer read 0.0 % of …',
      'the probe measured nvme0n1, this run\'s cache directory is on sda',
      `the probe ran 16 × ${16 * 1024 * 1024} B in flight, this run 32 × ${4 * 1024 * 1024} B`,
    ]);
  });
});

describe('loadProbeLimits (kvbench run --probe-result FILE)', () => {
  afterEach(removeTempDirs);
  /** The fields a probe file's reader uses, as `kvbench probe --output` writes them (others left out, as an older kvbench's file may). */
  const probeFile = (change: (p: Record<string, any>) => void = () => {}): string => {
    const p: Record<string, any> = {
      kind: 'kvbench-probe',
      version: '0.1.0',
      status: 'complete',
      started_at: '2026-11-24T00:00:00.000Z',
      dir: '/mnt/nvme',
      device: { name: 'nvme0n1', majorMinor: '259:0' },
      io_chunk_bytes: 16 * 1024 * 1024,
      io_depth: 16,
      phases: { write: { op: 'write', bytes_per_sec: 2 * GB, page_cache_suspected: false }, read: { op: 'read', bytes_per_sec: 4 * GB, page_cache_suspected: false } },
    };
    change(p);
    const file = path.join(tempDir('kvb-probe-limits-'), 'probe.json');
    fs.writeFileSync(file, JSON.stringify(p));
    return file;
  };
  const refusal = (file: string): string => {
    try {
      loadProbeLimits(file);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('reads the limits, the device and the I/O shape', () => {
    const file = probeFile();
    expect(loadProbeLimits(file)).toEqual({ ...limits, file, probedAt: '2026-11-24T00:00:00.000Z' });
    expect(loadProbeLimits(probeFile((p) => { p.device = null; delete p.phases.write; })).writeBytesPerSec).toBeNull();
  });

  it('refuses a malformed file naming each field, instead of reading it as zeros or text', () => {
    // review rev7 #9: parsed by hand, a string rate was "no limit", a missing io_depth 0, a numeric dir "42".
    const bad = probeFile((p) => {
      p.phases.read.bytes_per_sec = '4e9';
      delete p.io_depth;
      p.dir = 42;
    });
    expect(refusal(bad)).toBe(
      `--probe-result ${bad}: is not a probe result kvbench can read: dir: Invalid input: expected string, received number; ` +
        'io_depth: Invalid input: expected number, received undefined; phases.read.bytes_per_sec: Invalid input: expected number, received string',
    );
    const negative = probeFile((p) => { p.phases.write.bytes_per_sec = -1; });
    expect(refusal(negative)).toMatch(/: phases\.write\.bytes_per_sec: Too small: expected number to be >=0$/);
    const cached = probeFile((p) => { p.phases.read.page_cache_suspected = true; });
    expect(refusal(cached)).toBe(`--probe-result ${cached}: its read phase was served by the page cache: not the device's limit`);
    const notAProbe = probeFile((p) => { p.kind = 'other'; });
    expect(refusal(notAProbe)).toMatch(/is not a kvbench probe result \(no "kind": "kvbench-probe"\)$/);
  });
});
