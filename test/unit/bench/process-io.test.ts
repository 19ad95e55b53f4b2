// The bench's CPU-s/GB denominator: the block-layer bytes of the measured tool's own process tree,
// not everything the shared device moved. Real bytes on the real disk (O_DIRECT needs a block device
// behind the file, which os.tmpdir() is on this project's machines; the test skips, saying why, elsewhere).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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

describe('reapedChildrenIo on the real disk', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-process-io-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  function ddDirect(ctx: Parameters<typeof skipBecause>[0], via: 'dd' | 'sh'): void {
    const dd = ['if=/dev/zero', `of=${path.join(dir, 'f')}`, `bs=${CHUNK_BYTES}`, `count=${CHUNKS}`, 'oflag=direct', 'status=none'];
    const r = via === 'dd' ? spawnSync('dd', dd, { encoding: 'utf8' }) : spawnSync('sh', ['-c', `dd ${dd.join(' ')}`], { encoding: 'utf8' });
    if (r.status !== 0 && /Invalid argument|not supported/i.test(r.stderr)) skipBecause(ctx, `O_DIRECT is not supported in ${dir}: ${r.stderr.trim()}`);
    expect(r.status, r.stderr).toBe(0);
  }

  it('a child that writes N bytes with O_DIRECT shows at least N write_bytes', (ctx) => {
    const before = childrenIo();
    ddDirect(ctx, 'dd');
    const d = ioDelta(before, childrenIo());
    expect(d.writeBytes).toBeGreaterThanOrEqual(N_BYTES);
  });

  it('a grandchild counts once its parent has reaped it (fio forks its jobs, kvbench its engine)', (ctx) => {
    const before = childrenIo();
    ddDirect(ctx, 'sh');
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

  it("runMeasured reports the child tree's own bytes beside the device's", async (ctx) => {
    const probe = spawnSync('dd', ['if=/dev/zero', `of=${path.join(dir, 'p')}`, 'bs=4096', 'count=1', 'oflag=direct', 'status=none'], { encoding: 'utf8' });
    if (probe.status !== 0) skipBecause(ctx, `O_DIRECT is not supported in ${dir}: ${probe.stderr.trim()}`);
    const r = await runMeasured('dd', ['if=/dev/zero', `of=${path.join(dir, 'f')}`, `bs=${CHUNK_BYTES}`, `count=${CHUNKS}`, 'oflag=direct', 'status=none'], { deviceDir: dir });
    expect(r.code).toBe(0);
    expect(r.ownIo.reason).toBeNull();
    expect(r.ownIo.io!.writeBytes).toBeGreaterThanOrEqual(N_BYTES);
  });
});
