import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-io-'));
afterAll(() => fs.rmSync(tmpDir, { recursive: true, force: true }));

describe('AlignedSlab', () => {
  it('hands out slot-sized views over shared memory', async () => {
    const slab = new AlignedSlab(64 * 1024, 3);
    const a = await slab.acquire();
    const b = await slab.acquire();
    expect(a.buffer.length).toBe(64 * 1024);
    expect(Object.prototype.toString.call(a.buffer.buffer)).toBe('[object SharedArrayBuffer]');
    expect(a.index).not.toBe(b.index);
    a.buffer.fill(1);
    b.buffer.fill(2);
    expect(a.buffer.every((x) => x === 1)).toBe(true);
    expect(slab.inUse).toBe(2);
  });

  it('spreads large slabs over several memories', async () => {
    // 3 × 512 MiB > the 1 GiB preferred memory size, so at least two memories back this slab.
    const slab = new AlignedSlab(512 * 1024 * 1024, 3);
    const slots = [await slab.acquire(), await slab.acquire(), await slab.acquire()];
    expect(new Set(slots.map((s) => s.buffer.buffer)).size).toBeGreaterThan(1);
  });

  it('gives page-aligned buffers: O_DIRECT write and read work from every slot', async () => {
    const slab = new AlignedSlab(3 * 4096, 4);
    const file = path.join(tmpDir, 'direct.bin');
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_DIRECT, 0o600);
    try {
      const slots = [];
      for (let i = 0; i < 4; i++) slots.push(await slab.acquire());
      for (const slot of slots) {
        slot.buffer.fill(slot.index + 10);
        expect(fs.writeSync(fd, slot.buffer, 0, slot.buffer.length, slot.index * slot.buffer.length)).toBe(slot.buffer.length);
      }
      for (const slot of slots) {
        slot.buffer.fill(0);
        expect(fs.readSync(fd, slot.buffer, 0, slot.buffer.length, slot.index * slot.buffer.length)).toBe(slot.buffer.length);
        expect(slot.buffer.every((x) => x === slot.index + 10)).toBe(true);
      }
    } finally {
      fs.closeSync(fd);
    }
  });

  it('makes waiters queue first-come first-served', async () => {
    const slab = new AlignedSlab(4096, 2);
    const a = await slab.acquire();
    const b = await slab.acquire();
    expect(slab.tryAcquire()).toBeNull();
    const order: string[] = [];
    const w1 = slab.acquire().then((s) => (order.push('w1'), s));
    const w2 = slab.acquire().then((s) => (order.push('w2'), s));
    const w3 = slab.acquire().then((s) => (order.push('w3'), s));
    expect(slab.waiters).toBe(3);
    slab.release(b);
    const s1 = await w1;
    expect(s1.index).toBe(b.index);
    slab.release(a);
    const s2 = await w2;
    slab.release(s1);
    const s3 = await w3;
    expect(order).toEqual(['w1', 'w2', 'w3']);
    expect(slab.waiters).toBe(0);
    expect(slab.inUse).toBe(2);
    slab.release(s2);
    slab.release(s3);
    expect(slab.inUse).toBe(0);
  });

  it('rejects double and foreign releases', async () => {
    const slab = new AlignedSlab(4096, 1);
    const other = new AlignedSlab(4096, 1);
    const s = await slab.acquire();
    slab.release(s);
    expect(() => slab.release(s)).toThrow(/not in use/);
    const foreign = await other.acquire();
    expect(() => slab.release(foreign)).toThrow(/does not belong/);
  });

  it('backs its slots with transparent huge pages where the kernel allows them', (ctx) => {
    const thp = fs.existsSync('/sys/kernel/mm/transparent_hugepage/enabled') ? fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8') : null;
    if (process.platform !== 'linux' || thp === null) ctx.skip('no transparent huge pages on this system');
    if (thp!.includes('[never]')) ctx.skip('transparent huge pages are off here ([never])');
    const slab = new AlignedSlab(4 * 1024 * 1024, 4);
    expect(slab.hugePages).toEqual({ advised: true, reason: null });
    const slots = [0, 1, 2, 3].map(() => slab.tryAcquire()!);
    for (const slot of slots) slot.buffer.fill(7); // the first touch faults the pages in
    // The slots' memory mapping, as the kernel reports it: its huge pages must cover the 16 MiB
    // (less any 2 MiB at either end that the mapping does not hold whole).
    const koffi = createRequire(import.meta.url)('koffi') as { address(v: unknown): bigint };
    const at = koffi.address(slots[0].buffer);
    const mapping = fs
      .readFileSync('/proc/self/smaps', 'utf8')
      .split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)
      .find((m) => {
        const [lo, hi] = m.slice(0, m.indexOf(' ')).split('-').map((x) => BigInt(`0x${x}`));
        return lo <= at && at < hi;
      });
    const hugeKiB = Number(/AnonHugePages:\s+(\d+) kB/.exec(mapping ?? '')?.[1] ?? 0);
    expect(hugeKiB).toBeGreaterThanOrEqual(12 * 1024);
  });

  it('does direct I/O from huge-page slots: the bytes written are the bytes read back', () => {
    const slab = new AlignedSlab(4 * 1024 * 1024, 2);
    const [a, b] = [slab.tryAcquire()!, slab.tryAcquire()!];
    for (let i = 0; i < a.buffer.length; i++) a.buffer[i] = (i * 2654435761) >>> 24;
    const file = path.join(tmpDir, 'huge-direct.bin');
    const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_DIRECT, 0o600);
    try {
      expect(fs.writeSync(fd, a.buffer, 0, a.buffer.length, 0)).toBe(a.buffer.length);
      expect(fs.readSync(fd, b.buffer, 0, b.buffer.length, 0)).toBe(b.buffer.length);
    } finally {
      fs.closeSync(fd);
    }
    expect(b.buffer.equals(a.buffer)).toBe(true);
  });

  it('says why a memory smaller than a huge page is not advised', () => {
    expect(new AlignedSlab(64 * 1024, 3).hugePages).toEqual({ advised: false, reason: expect.stringMatching(/smaller than a huge page/) });
  });

  it('validates its sizes', () => {
    expect(() => new AlignedSlab(1000, 1)).toThrow(RangeError);
    expect(() => new AlignedSlab(4096, 0)).toThrow(RangeError);
  });
});
