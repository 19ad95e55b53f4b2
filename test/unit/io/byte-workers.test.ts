import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { keyHash64, PayloadPool } from '../../../src-main/engine/io/payload.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const payload = PayloadPool.create(5, 4 * MiB);
const key = keyHash64('entry-bytes', 5);

function expected(sizeBytes: number, entryOffsetBytes: number): Buffer {
  const out = Buffer.alloc(sizeBytes);
  payload.fill(out, key, entryOffsetBytes);
  return out;
}

describe('BytePool', () => {
  let pool: BytePool;
  let forced: BytePool;
  const slab = new AlignedSlab(2 * MiB, 4);

  beforeAll(async () => {
    pool = await BytePool.start({ threads: 2, pool: payload });
    // Threshold 0 sends even tiny jobs to the workers, so both paths are exercised.
    forced = await BytePool.start({ threads: 2, pool: payload, inlineBelowBytes: 0 });
  });
  afterAll(async () => {
    await pool.close();
    await forced.close();
  });

  it('fills through workers exactly as the inline fill does', async () => {
    const a = await slab.acquire();
    const b = await slab.acquire();
    try {
      for (const [sizeBytes, offsetBytes] of [[2 * MiB, 8192], [512 * KiB + 3, 0], [100, 4096], [1, 0]] as const) {
        await pool.fill(a.buffer.subarray(0, sizeBytes), key, offsetBytes);
        await forced.fill(b.buffer.subarray(0, sizeBytes), key, offsetBytes);
        const want = expected(sizeBytes, offsetBytes);
        expect(a.buffer.subarray(0, sizeBytes).equals(want)).toBe(true);
        expect(b.buffer.subarray(0, sizeBytes).equals(want)).toBe(true);
      }
      expect(pool.utilisation().busyNs).toBeGreaterThan(0);
      expect(pool.utilisation().inlineBusyNs).toBeGreaterThan(0);
    } finally {
      slab.release(a);
      slab.release(b);
    }
  });

  it('copies and verifies through workers like the inline code', async () => {
    const a = await slab.acquire();
    const b = await slab.acquire();
    try {
      a.buffer.set(expected(2 * MiB, 0));
      b.buffer.fill(0);
      await pool.copy(a.buffer, b.buffer);
      expect(b.buffer.equals(a.buffer)).toBe(true);
      await forced.copy(a.buffer.subarray(0, 10), b.buffer.subarray(100, 110));
      expect(b.buffer.subarray(100, 110).equals(a.buffer.subarray(0, 10))).toBe(true);

      b.buffer.set(expected(2 * MiB, 0));
      expect(await pool.verify(b.buffer, key, 0)).toEqual({ ok: true });
      b.buffer[1_500_000] ^= 0xff;
      const viaWorker = await pool.verify(b.buffer, key, 0);
      expect(viaWorker).toEqual(payload.verify(b.buffer, key, 0));
      expect(viaWorker).toMatchObject({ ok: false, offsetBytes: 1_500_000, expectedKeyHash: key, foundKeyHash: key });
      expect(await forced.verify(b.buffer.subarray(0, 4096), key, 0)).toEqual({ ok: true });
    } finally {
      slab.release(a);
      slab.release(b);
    }
  });

  it('restamps through workers and inline exactly as a fill does, each where its size sends it', async () => {
    const a = await slab.acquire();
    const b = await slab.acquire();
    const other = keyHash64('another-entry', 5);
    // Sends every restamp to the workers, so the small sizes go there too.
    const viaWorkers = await BytePool.start({ threads: 2, pool: payload, restampInlineBelowBytes: 0 });
    try {
      for (const [sizeBytes, offsetBytes] of [[2 * MiB, 8192], [512 * KiB + 3, 0], [100, 4096], [1, 0]] as const) {
        // Both slots hold another entry's payload at these offsets, as a storage slot does.
        payload.fill(a.buffer.subarray(0, sizeBytes), other, offsetBytes);
        payload.fill(b.buffer.subarray(0, sizeBytes), other, offsetBytes);
        await pool.restamp(a.buffer.subarray(0, sizeBytes), key, offsetBytes);
        await viaWorkers.restamp(b.buffer.subarray(0, sizeBytes), key, offsetBytes);
        const want = expected(sizeBytes, offsetBytes);
        expect(a.buffer.subarray(0, sizeBytes).equals(want)).toBe(true);
        expect(b.buffer.subarray(0, sizeBytes).equals(want)).toBe(true);
      }
      expect(viaWorkers.utilisation().busyNs).toBeGreaterThan(0);
      expect(viaWorkers.utilisation().inlineBusyNs).toBe(0);

      // A restamp of the threshold's size goes to a worker, a smaller one runs inline.
      const sized = await BytePool.start({ threads: 1, pool: payload, restampInlineBelowBytes: 2 * MiB });
      try {
        payload.fill(a.buffer, other, 0);
        await sized.restamp(a.buffer.subarray(0, 2 * MiB - 4 * KiB), key, 0);
        expect(sized.utilisation().busyNs).toBe(0);
        expect(sized.utilisation().inlineBusyNs).toBeGreaterThan(0);
        const inlineNs = sized.utilisation().inlineBusyNs;
        await sized.restamp(a.buffer, key, 0);
        expect(sized.utilisation().busyNs).toBeGreaterThan(0);
        expect(sized.utilisation().inlineBusyNs).toBe(inlineNs);
        expect(a.buffer.equals(expected(2 * MiB, 0))).toBe(true);
      } finally {
        await sized.close();
      }
      await expect(viaWorkers.restamp(Buffer.alloc(1 * MiB), key, 0)).rejects.toThrow(/restamp dest/);
      await expect(viaWorkers.restamp(a.buffer, key, 123)).rejects.toThrow(/multiple of 4096/);
    } finally {
      slab.release(a);
      slab.release(b);
      await viaWorkers.close();
    }
  });

  it('spreads concurrent jobs over the workers', async () => {
    const slots = [await slab.acquire(), await slab.acquire(), await slab.acquire(), await slab.acquire()];
    try {
      const jobs = slots.map((s, i) => forced.fill(s.buffer, key, i * 2 * MiB));
      const internals = forced as unknown as { workers: Array<{ pending: Map<number, unknown> }> };
      expect(internals.workers.map((w) => w.pending.size)).toEqual([2, 2]);
      await Promise.all(jobs);
      slots.forEach((s, i) => expect(s.buffer.equals(expected(2 * MiB, i * 2 * MiB))).toBe(true));
    } finally {
      for (const s of slots) slab.release(s);
    }
  });

  it('refuses buffers that are not over shared memory', async () => {
    await expect(pool.fill(Buffer.alloc(1 * MiB), key, 0)).rejects.toThrow(/SharedArrayBuffer/);
    await expect(pool.fill(Buffer.alloc(10), key, 0)).rejects.toThrow(/SharedArrayBuffer/);
    const s = await slab.acquire();
    try {
      await expect(pool.copy(s.buffer, Buffer.alloc(s.buffer.length))).rejects.toThrow(/copy dst/);
      await expect(pool.copy(s.buffer.subarray(0, 10), s.buffer.subarray(0, 11))).rejects.toThrow(RangeError);
    } finally {
      slab.release(s);
    }
  });

  it('reports job errors from the worker', async () => {
    const s = await slab.acquire();
    try {
      await expect(forced.fill(s.buffer, key, 123)).rejects.toThrow(/multiple of 4096/);
    } finally {
      slab.release(s);
    }
  });

  it('rejects pending jobs with a clear error when a worker dies', async () => {
    const dying = await BytePool.start({ threads: 1, pool: payload, inlineBelowBytes: 0 });
    const s = await slab.acquire();
    try {
      const pending = dying.verify(s.buffer, key, 0);
      // No public way to crash a worker: reach in and kill it, as a crash would.
      const internals = dying as unknown as { workers: Array<{ worker: { terminate(): Promise<number> } }> };
      await internals.workers[0].worker.terminate();
      await expect(pending).rejects.toMatchObject({ code: 'BYTE_WORKER_DIED', message: expect.stringMatching(/exited unexpectedly/) });
      await expect(dying.fill(s.buffer, key, 0)).rejects.toMatchObject({ code: 'BYTE_WORKER_DIED' });
    } finally {
      slab.release(s);
      await dying.close();
    }
  });

  it('close terminates the workers and refuses further jobs', async () => {
    const closing = await BytePool.start({ threads: 2, pool: payload });
    const internals = closing as unknown as { workers: Array<{ worker: { threadId: number } }> };
    expect(internals.workers.every((w) => w.worker.threadId > 0)).toBe(true);
    await closing.close();
    // A terminated worker's threadId becomes -1.
    expect(internals.workers.every((w) => w.worker.threadId === -1)).toBe(true);
    const s = await slab.acquire();
    try {
      await expect(closing.fill(s.buffer, key, 0)).rejects.toMatchObject({ code: 'BYTE_POOL_CLOSED' });
    } finally {
      slab.release(s);
    }
    expect(closing.utilisation().threads).toBe(2);
  });

  it('runs everything inline with threads: 0', async () => {
    const inline = await BytePool.start({ threads: 0, pool: payload });
    const s = await slab.acquire();
    try {
      await inline.fill(s.buffer, key, 4096);
      expect(s.buffer.equals(expected(2 * MiB, 4096))).toBe(true);
      payload.fill(s.buffer, keyHash64('another-entry', 5), 4096);
      await inline.restamp(s.buffer, key, 4096);
      expect(s.buffer.equals(expected(2 * MiB, 4096))).toBe(true);
      expect(await inline.verify(s.buffer, key, 4096)).toEqual({ ok: true });
    } finally {
      slab.release(s);
      await inline.close();
    }
  });
});
