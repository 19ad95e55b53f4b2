import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AlignedSlab } from '../../../src-main/engine/io/aligned-slab.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import {
  EntryFileStore,
  entryFileName,
  IoCancelledError,
  PayloadMismatchError,
  type ChunkView,
  type EntryFileStoreOptions,
} from '../../../src-main/engine/io/entry-file-store.ts';
import { keyHash64, PayloadPool } from '../../../src-main/engine/io/payload.ts';

const KiB = 1024;
const CHUNK_BYTES = 64 * KiB;
const SEED = 99;
const SIZES_BYTES = [1, 4096, 4097, 3 * CHUNK_BYTES + 5];

const payload = PayloadPool.create(SEED, 1024 * KiB);
const slab = new AlignedSlab(CHUNK_BYTES, 8);
let bytes: BytePool;
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-io-'));
let dir: string;
let dirCounter = 0;

beforeAll(async () => {
  // Threshold 0 so 64 KiB test chunks still go through the worker threads.
  bytes = await BytePool.start({ threads: 2, pool: payload, inlineBelowBytes: 0 });
});
afterAll(async () => {
  await bytes.close();
  fs.rmSync(tmpRoot, { recursive: true, force: true });
});
beforeEach(() => {
  dir = path.join(tmpRoot, `run-${dirCounter++}`);
  fs.mkdirSync(dir);
});

function open(overrides: Partial<EntryFileStoreOptions> = {}): Promise<EntryFileStore> {
  return EntryFileStore.open({ dir, directIo: 'auto', chunkBytes: CHUNK_BYTES, perEntryDepth: 3, slab, bytes, fsync: 'per-entry', ...overrides });
}

function expectedBytes(key: string, sizeBytes: number): Buffer {
  const out = Buffer.alloc(sizeBytes);
  payload.fill(out, keyHash64(key, SEED), 0);
  return out;
}

async function roundTrip(store: EntryFileStore, key: string, sizeBytes: number): Promise<void> {
  const h = keyHash64(key, SEED);
  const w = await store.write(key, sizeBytes, store.payloadSource(h));
  expect(w.bytes).toBe(sizeBytes);
  expect(w.durationNs).toBe(Number(w.endNs - w.startNs));
  expect(w.durationNs).toBeGreaterThan(0);

  const r = await store.read(key, sizeBytes, { sink: store.verifyingSink(key, h) });
  expect(r.bytes).toBe(sizeBytes);
  expect(r.durationNs).toBeGreaterThan(0);

  // Independently of the verifier: reassemble the chunks and compare with a whole fill.
  const got = Buffer.alloc(sizeBytes);
  const indexes: number[] = [];
  await store.read(key, sizeBytes, {
    sink: async (chunk: ChunkView) => {
      indexes.push(chunk.index);
      chunk.buffer.copy(got, chunk.entryOffsetBytes);
    },
  });
  expect(got.equals(expectedBytes(key, sizeBytes))).toBe(true);
  expect(indexes).toEqual([...Array(Math.ceil(sizeBytes / CHUNK_BYTES)).keys()]);
  expect(slab.inUse).toBe(0);
}

describe('EntryFileStore', () => {
  it('uses direct I/O on /tmp with auto and round-trips awkward sizes', async () => {
    const store = await open();
    expect(store.directIo).toEqual({ enabled: true, reason: null });
    for (const sizeBytes of SIZES_BYTES) {
      const key = `user-1/entry-${sizeBytes}`;
      await roundTrip(store, key, sizeBytes);
      // The tail is padded to the 4 KiB block on disk; the caller keeps the true size.
      expect(fs.statSync(store.pathFor(key)).size).toBe(Math.ceil(sizeBytes / 4096) * 4096);
    }
  });

  it('works buffered with directIo off and says why', async () => {
    const store = await open({ directIo: 'off', fsync: 'none' });
    expect(store.directIo.enabled).toBe(false);
    expect(store.directIo.reason).toMatch(/off/);
    for (const sizeBytes of SIZES_BYTES) {
      const key = `user-2/entry-${sizeBytes}`;
      await roundTrip(store, key, sizeBytes);
      expect(fs.statSync(store.pathFor(key)).size).toBe(sizeBytes);
    }
  });

  it('falls back to buffered I/O with the probe reason in auto, and refuses in on', async () => {
    const directIoProbe = { supported: false, reason: 'open with O_DIRECT failed on this filesystem (EINVAL)', logicalBlockBytes: 0 };
    const auto = await open({ directIoProbe });
    expect(auto.directIo).toEqual({ enabled: false, reason: directIoProbe.reason });
    await roundTrip(auto, 'fallback', 4097);
    await expect(open({ directIo: 'on', directIoProbe })).rejects.toMatchObject({
      code: 'DIRECT_IO_UNSUPPORTED',
      message: expect.stringMatching(/EINVAL/),
    });
    const on = await open({ directIo: 'on' });
    expect(on.directIo.enabled).toBe(true);
  });

  it('writes and reads an empty entry', async () => {
    const store = await open();
    await roundTrip(store, 'empty', 0);
    expect(fs.statSync(store.pathFor('empty')).size).toBe(0);
  });

  it('keeps at most perEntryDepth chunks in flight plus the one being filled', async () => {
    const store = await open({ perEntryDepth: 2 });
    let maxInUse = 0;
    const h = keyHash64('deep', SEED);
    const fill = store.payloadSource(h);
    await store.write('deep', 20 * CHUNK_BYTES, async (chunk) => {
      maxInUse = Math.max(maxInUse, slab.inUse);
      await fill(chunk);
    });
    expect(maxInUse).toBeLessThanOrEqual(3);
    expect(maxInUse).toBeGreaterThan(1);
    maxInUse = 0;
    await store.read('deep', 20 * CHUNK_BYTES, {
      sink: async () => {
        maxInUse = Math.max(maxInUse, slab.inUse);
        await new Promise((resolve) => setTimeout(resolve, 1));
      },
    });
    expect(maxInUse).toBeLessThanOrEqual(3);
    expect(slab.inUse).toBe(0);
  });

  it('shares the slab between concurrent entries without exceeding it', async () => {
    const small = new AlignedSlab(CHUNK_BYTES, 3);
    const store = await open({ slab: small, perEntryDepth: 4 });
    const keys = ['c0', 'c1', 'c2', 'c3', 'c4'];
    await Promise.all(keys.map((k) => store.write(k, 7 * CHUNK_BYTES + 100, store.payloadSource(keyHash64(k, SEED)))));
    await Promise.all(keys.map((k) => store.read(k, 7 * CHUNK_BYTES + 100, { sink: store.verifyingSink(k, keyHash64(k, SEED)) })));
    expect(small.inUse).toBe(0);
  });

  it('detects corruption on disk at the exact offset', async () => {
    const store = await open({ directIo: 'off' });
    const key = 'corrupt-me';
    const sizeBytes = 2 * CHUNK_BYTES + 300;
    await store.write(key, sizeBytes, store.payloadSource(keyHash64(key, SEED)));
    const fd = fs.openSync(store.pathFor(key), 'r+');
    const at = CHUNK_BYTES + 1234;
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, at);
    b[0] ^= 0x40;
    fs.writeSync(fd, b, 0, 1, at);
    fs.closeSync(fd);
    const err = await store.read(key, sizeBytes, { sink: store.verifyingSink(key, keyHash64(key, SEED)) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PayloadMismatchError);
    expect(err).toMatchObject({ code: 'PAYLOAD_MISMATCH', offsetBytes: at });
    expect(slab.inUse).toBe(0);
  });

  it('reports a missing entry and a truncated one', async () => {
    const store = await open({ directIo: 'off' });
    await expect(store.read('never-written', 10)).rejects.toMatchObject({ code: 'ENOENT' });
    await store.write('short', 100, store.payloadSource(keyHash64('short', SEED)));
    await expect(store.read('short', 5000)).rejects.toMatchObject({ code: 'ENTRY_TRUNCATED' });
    expect(slab.inUse).toBe(0);
  });

  it('removes the partial file and rethrows when the source fails', async () => {
    const store = await open();
    const boom = Object.assign(new Error('source exploded'), { code: 'EBOOM' });
    const h = keyHash64('failing', SEED);
    await expect(
      store.write('failing', 6 * CHUNK_BYTES, async (chunk) => {
        if (chunk.index === 4) throw boom;
        await bytes.fill(chunk.buffer, h, chunk.entryOffsetBytes);
      }),
    ).rejects.toBe(boom);
    expect(fs.existsSync(store.pathFor('failing'))).toBe(false);
    expect(slab.inUse).toBe(0);
  });

  it('a key written again while its old file is being deleted keeps the new file, owned and readable', async () => {
    // The cache forgets an evicted entry before its unlink completes; a miss may write the same key
    // at once. Interleaving the two must neither remove the new file (a later read: ENOENT) nor
    // leave it disowned (never removed: the disk fills beyond the tier's capacity).
    const store = await open();
    const key = 'evicted-and-rewritten';
    const h = keyHash64(key, SEED);
    for (let round = 0; round < 40; round++) {
      await store.write(key, 2 * CHUNK_BYTES + 100, store.payloadSource(h));
      await Promise.all([store.delete(key), store.write(key, CHUNK_BYTES + 7, store.payloadSource(h))]);
      await store.read(key, CHUNK_BYTES + 7, { sink: store.verifyingSink(key, h) });
    }
    await store.removeAll();
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('keeps file names inside dir', async () => {
    const store = await open();
    expect(entryFileName('../../etc/passwd')).toBe('.._.._etc_passwd.kv');
    expect(entryFileName('user 1/é:x')).toBe('user_1___x.kv');
    const long = 'k'.repeat(1000);
    expect(entryFileName(long).length).toBeLessThan(255);
    expect(entryFileName(long)).not.toBe(entryFileName(`${long}x`));
    for (const key of ['../../escape', '/abs/path', '..', long]) {
      expect(path.dirname(store.pathFor(key))).toBe(path.resolve(dir));
      await store.write(key, 10, store.payloadSource(keyHash64(key, SEED)));
    }
    expect(fs.readdirSync(dir).length).toBe(4);
    expect(fs.readdirSync(tmpRoot).every((n) => n.startsWith('run-'))).toBe(true);
  });

  it('delete and removeAll remove only files the store created', async () => {
    fs.writeFileSync(path.join(dir, 'foreign.txt'), 'not ours');
    fs.writeFileSync(path.join(dir, 'taken.kv'), 'not ours either');
    const store = await open();
    await expect(store.write('taken', 10, store.payloadSource(keyHash64('taken', SEED)))).rejects.toMatchObject({ code: 'EEXIST' });
    expect(fs.readFileSync(path.join(dir, 'taken.kv'), 'utf8')).toBe('not ours either');
    await store.delete('taken');
    expect(fs.existsSync(path.join(dir, 'taken.kv'))).toBe(true);

    for (const k of ['a', 'b', 'c']) await store.write(k, 5000, store.payloadSource(keyHash64(k, SEED)));
    // Rewriting an own entry is allowed.
    await store.write('a', 9000, store.payloadSource(keyHash64('a', SEED)));
    await store.delete('b');
    expect(fs.existsSync(store.pathFor('b'))).toBe(false);
    await store.removeAll();
    expect(fs.readdirSync(dir).sort()).toEqual(['foreign.txt', 'taken.kv']);
  });

  it('removeAll removes every file it can when one cannot be removed, then reports that one', async () => {
    const store = await open();
    for (const k of ['a', 'b', 'c']) await store.write(k, 5000, store.payloadSource(keyHash64(k, SEED)));
    // Someone replaced entry b with a directory: unlink fails there (EISDIR), even for root.
    fs.rmSync(store.pathFor('b'));
    fs.mkdirSync(store.pathFor('b'));
    await expect(store.removeAll()).rejects.toMatchObject({ code: 'EISDIR' });
    expect(fs.readdirSync(dir)).toEqual(['b.kv']);
  });

  it('removeAll removes the directory once it is empty', async () => {
    const store = await open();
    await store.write('x', 5000, store.payloadSource(keyHash64('x', SEED)));
    await store.removeAll();
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('removes the partial file and keeps ENOSPC when the disk fills', async (ctx) => {
    const mnt = path.join(dir, 'tiny');
    fs.mkdirSync(mnt);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { stdio: 'pipe' });
    } catch (err) {
      ctx.skip(`ENOSPC test skipped: cannot mount a 2 MiB tmpfs here (${(err as Error).message.split('\n')[0]})`);
    }
    try {
      for (const directIo of ['auto', 'off'] as const) {
        const runDir = path.join(mnt, `run-${directIo}`);
        fs.mkdirSync(runDir);
        const store = await EntryFileStore.open({ dir: runDir, directIo, chunkBytes: CHUNK_BYTES, perEntryDepth: 4, slab, bytes, fsync: 'per-entry' });
        const err = await store.write('too-big', 4 * 1024 * KiB, store.payloadSource(keyHash64('too-big', SEED))).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(Error);
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
        expect(fs.readdirSync(runDir)).toEqual([]);
        expect(slab.inUse).toBe(0);
        // The space is back: a small entry fits again.
        await roundTrip(store, 'fits', 100 * KiB);
        await store.removeAll();
        expect(fs.readdirSync(mnt)).toEqual([]);
      }
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});

describe('EntryFileStore --io-depth bound', () => {
  it('counts each entry\'s fdatasync as an I/O in flight: it holds a slab slot while it runs', async () => {
    // The slab's slots are the process-wide bound on storage I/Os in flight (--io-depth).
    const depthSlab = new AlignedSlab(CHUNK_BYTES, 2);
    const store = await open({ slab: depthSlab, perEntryDepth: 2 });
    const probe = await fs.promises.open(path.join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as { datasync: (this: unknown) => Promise<void> };
    await probe.close();
    const original = proto.datasync;
    const heldDuringFlush: number[] = [];
    proto.datasync = function (this: unknown) {
      heldDuringFlush.push(depthSlab.inUse);
      return original.call(this);
    };
    try {
      await Promise.all(['a', 'b', 'c', 'd'].map((k) => store.write(k, 2 * CHUNK_BYTES + 7, store.payloadSource(keyHash64(k, SEED)))));
    } finally {
      proto.datasync = original;
    }
    expect(heldDuringFlush).toHaveLength(4);
    for (const held of heldDuringFlush) expect(held).toBeGreaterThanOrEqual(1);
    expect(depthSlab.inUse, 'every slot released after the writes').toBe(0);
    await store.removeAll();
  });
});

describe('EntryFileStore payload writes with a one-chunk pool (restamping)', () => {
  // The engine's configuration: the payload pool is exactly one chunk, so a slot that holds the pool
  // becomes the next chunk by rewriting its stamps. What reaches the file must be byte for byte what
  // a full fill produces, whatever the slot held before (another entry, a read, a tail's padding).
  const chunkPayload = PayloadPool.create(SEED, CHUNK_BYTES);
  // Restamps in the worker (as the engine's 16 MiB chunks are), and inline (as small chunks are).
  const pools = {} as Record<'worker' | 'inline', BytePool>;
  const smallSlab = new AlignedSlab(CHUNK_BYTES, 3);
  beforeAll(async () => {
    pools.worker = await BytePool.start({ threads: 1, pool: chunkPayload, inlineBelowBytes: 0, restampInlineBelowBytes: 0 });
    pools.inline = await BytePool.start({ threads: 1, pool: chunkPayload, inlineBelowBytes: 0, restampInlineBelowBytes: CHUNK_BYTES + 1 });
  });
  afterAll(async () => {
    await pools.worker.close();
    await pools.inline.close();
  });

  for (const [directIo, restampIn] of [['auto', 'worker'], ['off', 'worker'], ['auto', 'inline']] as const) {
    it(`writes exactly the payload, restamping most chunks (direct I/O ${directIo}, restamps ${restampIn})`, async () => {
      const chunkBytesPool = pools[restampIn];
      const store = await EntryFileStore.open({ dir, directIo, chunkBytes: CHUNK_BYTES, perEntryDepth: 2, slab: smallSlab, bytes: chunkBytesPool, fsync: 'none' });
      // Partial tails (padding under direct I/O), block-unaligned sizes, and reads between writes.
      const sizes = [5 * CHUNK_BYTES, 2 * CHUNK_BYTES + 4097, 7 * CHUNK_BYTES + 100, 4096, 3 * CHUNK_BYTES, 9 * CHUNK_BYTES + 1];
      for (const [i, sizeBytes] of sizes.entries()) {
        const key = `restamp-${directIo}-${i}`;
        const h = keyHash64(key, SEED);
        await store.write(key, sizeBytes, chunkBytesPool.payloadSource(h));
        const onDisk = fs.readFileSync(store.pathFor(key));
        const expected = Buffer.alloc(sizeBytes);
        chunkPayload.fill(expected, h, 0);
        expect(onDisk.subarray(0, sizeBytes).equals(expected), `${key} (${sizeBytes} bytes)`).toBe(true);
        // Direct I/O pads the tail with zeros; nothing else follows the entry.
        expect(onDisk.subarray(sizeBytes).every((b) => b === 0)).toBe(true);
        if (i % 2 === 1) await store.read(`restamp-${directIo}-${i - 1}`, sizes[i - 1], { sink: store.verifyingSink(`restamp-${directIo}-${i - 1}`, keyHash64(`restamp-${directIo}-${i - 1}`, SEED)) });
      }
      const total = sizes.reduce((n, s) => n + Math.ceil(s / CHUNK_BYTES), 0);
      expect(store.payloadChunks.restamped + store.payloadChunks.filled).toBe(total);
      // Only the slab's first uses of each slot (and slots a read took) need a full fill.
      expect(store.payloadChunks.restamped).toBeGreaterThan(total / 2);
      expect(smallSlab.inUse).toBe(0);
    });
  }

  it('submits no chunk once the window closes during a restamp, and removes the partial file', async () => {
    const bytePool = pools.worker;
    const store = await EntryFileStore.open({ dir, directIo: 'auto', chunkBytes: CHUNK_BYTES, perEntryDepth: 2, slab: smallSlab, bytes: bytePool, fsync: 'none' });
    // Leaves every slot holding the pool, so the next write restamps.
    await store.write('warm', 4 * CHUNK_BYTES, bytePool.payloadSource(keyHash64('warm', SEED)));
    const restamp = bytePool.restamp.bind(bytePool);
    const patched = bytePool as unknown as { restamp: BytePool['restamp'] };
    // The window closes while chunk 1's restamp is in the worker.
    patched.restamp = (dest, keyHash, entryOffsetBytes) => {
      const done = restamp(dest, keyHash, entryOffsetBytes);
      if (entryOffsetBytes === CHUNK_BYTES) store.cancelInFlight();
      return done;
    };
    const progressBytes: number[] = [];
    try {
      const key = 'cancelled';
      await expect(
        store.write(key, 6 * CHUNK_BYTES, bytePool.payloadSource(keyHash64(key, SEED)), { progress: (n) => void progressBytes.push(n) }),
      ).rejects.toBeInstanceOf(IoCancelledError);
      // Chunk 0 was submitted before the window closed; chunk 1, restamped after, never was.
      expect(progressBytes).toEqual([CHUNK_BYTES]);
      expect(store.payloadChunks.restamped).toBeGreaterThanOrEqual(2);
      expect(fs.existsSync(store.pathFor(key))).toBe(false);
      expect(smallSlab.inUse).toBe(0);
    } finally {
      delete (patched as Partial<typeof patched>).restamp;
    }
  });

  it('never restamps for sources that are not payload, nor when the pool is not one chunk', async () => {
    const store = await open();
    await store.write('plain', 3 * CHUNK_BYTES, async (c) => void c.buffer.fill(7));
    await roundTrip(store, 'payload-big-pool', 3 * CHUNK_BYTES);
    expect(store.payloadChunks.restamped).toBe(0);
    expect(fs.readFileSync(store.pathFor('plain')).subarray(0, 3 * CHUNK_BYTES).every((b) => b === 7)).toBe(true);
  });
});
