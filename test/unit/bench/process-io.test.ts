// The bench's CPU-s/GB denominator: the block-layer bytes of the measured tool's own process tree,
// not everything the shared device moved. Real bytes on the real disk: the tests that need block-layer
// accounting write where a 4 KiB O_DIRECT probe showed up in the child's write_bytes: os.tmpdir() (ext4
// on this project's machines), else /var/tmp. Neither exit code nor O_DIRECT support tells: tmpfs takes
// O_DIRECT since kernel 6.6 (dd succeeds) yet its writes never reach the block layer (write_bytes
// stays 0), and /tmp is tmpfs on Fedora and Arch. Where no candidate counts, they skip, saying why.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ioDelta, parseProcessIo, reapedChildrenIo, storageBytesOf, type ProcessIo } from '../../../bench/lib/process-io.ts';
import { runMeasured } from '../../../bench/lib/measure.ts';
import { skipBecause } from '../../support/skip.ts';

const CHUNK_BYTES = 1024 * 1024;
const CHUNKS = 8;
const N_BYTES = CHUNK_BYTES * CHUNKS;

function childrenIo(): ProcessIo {
  const r = reapedChildrenIo();
  if (!r.ok) throw new Error(r.reason);
  return r.io;
}

describe('parseProcessIo', () => {
  it('reads the three block-layer counters of a /proc/<pid>/io text', () => {
    const text = 'rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 512\n';
    expect(parseProcessIo(text)).toEqual({ readBytes: 4096, writeBytes: 8192, cancelledWriteBytes: 512 });
  });

  it('a text without them is no reading', () => {
    expect(parseProcessIo('rchar: 10\nwchar: 20\n')).toBeNull();
  });

  it('storage bytes: reads plus writes that were not cancelled before writeback', () => {
    expect(storageBytesOf({ readBytes: 10, writeBytes: 100, cancelledWriteBytes: 30 })).toBe(80);
    expect(ioDelta({ readBytes: 1, writeBytes: 2, cancelledWriteBytes: 3 }, { readBytes: 11, writeBytes: 22, cancelledWriteBytes: 33 })).toEqual({ readBytes: 10, writeBytes: 20, cancelledWriteBytes: 30 });
  });
});

const PROBE_BYTES = 4096;

/**
 * The first candidate folder where a child's 4 KiB O_DIRECT write shows in its reaped write_bytes, or
 * why none does (one reason per folder).
 */
function countedDiskDir(candidates: readonly string[]): { ok: true; dir: string } | { ok: false; reason: string } {
  const reasons: string[] = [];
  for (const base of new Set(candidates)) {
    let dir: string;
    try {
      dir = fs.mkdtempSync(path.join(base, 'kvb-process-io-probe-'));
    } catch (err) {
      reasons.push(`${base}: ${(err as Error).message}`);
      continue;
    }
    try {
      const before = childrenIo();
      const r = spawnSync('dd', ['if=/dev/zero', `of=${path.join(dir, 'p')}`, `bs=${PROBE_BYTES}`, 'count=1', 'oflag=direct', 'status=none'], { encoding: 'utf8' });
      const writeBytes = ioDelta(before, childrenIo()).writeBytes;
      if (r.status !== 0) reasons.push(`${base}: O_DIRECT write failed (${r.stderr.trim() || `dd exit ${r.status}`})`);
      else if (writeBytes < PROBE_BYTES) reasons.push(`${base}: a ${PROBE_BYTES} B O_DIRECT write counted ${writeBytes} write_bytes (no block device behind it, e.g. tmpfs)`);
      else return { ok: true, dir: base };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return { ok: false, reason: `no folder whose writes the block layer counts: ${reasons.join('; ')}` };
}

describe('reapedChildrenIo on the real disk', () => {
  let disk: ReturnType<typeof countedDiskDir>;
  let dir: string;
  beforeAll(() => {
    disk = countedDiskDir([os.tmpdir(), '/var/tmp']);
  });
  beforeEach((ctx) => {
    if (!disk.ok) skipBecause(ctx, disk.reason);
    dir = fs.mkdtempSync(path.join(disk.dir, 'kvb-process-io-'));
  });
  afterEach(() => {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  function ddDirect(via: 'dd' | 'sh'): void {
    const dd = ['if=/dev/zero', `of=${path.join(dir, 'f')}`, `bs=${CHUNK_BYTES}`, `count=${CHUNKS}`, 'oflag=direct', 'status=none'];
    const r = via === 'dd' ? spawnSync('dd', dd, { encoding: 'utf8' }) : spawnSync('sh', ['-c', `dd ${dd.join(' ')}`], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  }

  it('a child that writes N bytes with O_DIRECT shows at least N write_bytes', () => {
    const before = childrenIo();
    ddDirect('dd');
    const d = ioDelta(before, childrenIo());
    expect(d.writeBytes).toBeGreaterThanOrEqual(N_BYTES);
  });

  it('a grandchild counts once its parent has reaped it (fio forks its jobs, kvbench its engine)', () => {
    const before = childrenIo();
    ddDirect('sh');
    expect(ioDelta(before, childrenIo()).writeBytes).toBeGreaterThanOrEqual(N_BYTES);
  });

  it("this process's own writes are not charged to its children", () => {
    const before = childrenIo();
    // Buffered: write_bytes is charged to the writing thread when it dirties the pages.
    const fd = fs.openSync(path.join(dir, 'own'), 'w');
    fs.writeSync(fd, Buffer.alloc(N_BYTES, 1));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    expect(ioDelta(before, childrenIo()).writeBytes).toBeLessThan(N_BYTES);
  });

  it("runMeasured reports the child tree's own bytes beside the device's", async () => {
    const r = await runMeasured('dd', ['if=/dev/zero', `of=${path.join(dir, 'f')}`, `bs=${CHUNK_BYTES}`, `count=${CHUNKS}`, 'oflag=direct', 'status=none'], { deviceDir: dir });
    expect(r.code).toBe(0);
    expect(r.ownIo.reason).toBeNull();
    expect(r.ownIo.io!.writeBytes).toBeGreaterThanOrEqual(N_BYTES);
  });
});
