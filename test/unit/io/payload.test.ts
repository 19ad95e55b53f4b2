import { createHash, hash } from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  keyHash64,
  PAYLOAD_BLOCK_BYTES,
  PAYLOAD_SECTOR_BYTES,
  PAYLOAD_SECTOR_STAMP_BYTES,
  PayloadPool,
} from '../../../src-main/engine/io/payload.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

function entry(pool: PayloadPool, keyHash: bigint, sizeBytes: number, entryOffsetBytes = 0): Uint8Array {
  const out = new Uint8Array(sizeBytes);
  pool.fill(out, keyHash, entryOffsetBytes);
  return out;
}

/** Counts aligned units of `unitBytes` that repeat an earlier one, over all of `buffers`. */
function duplicateUnits(buffers: Iterable<Uint8Array>, unitBytes: number): { units: number; duplicates: number } {
  const seen = new Set<string>();
  let units = 0;
  let duplicates = 0;
  for (const bytes of buffers) {
    for (let at = 0; at + unitBytes <= bytes.length; at += unitBytes) {
      const digest = hash('sha1', bytes.subarray(at, at + unitBytes), 'base64');
      units++;
      if (seen.has(digest)) duplicates++;
      else seen.add(digest);
    }
  }
  return { units, duplicates };
}

describe('keyHash64', () => {
  it('is stable, seed-dependent and never 0', () => {
    expect(keyHash64('user-1/entry-7', 42)).toBe(keyHash64('user-1/entry-7', 42));
    expect(keyHash64('user-1/entry-7', 42)).not.toBe(keyHash64('user-1/entry-7', 43));
    expect(keyHash64('user-1/entry-7', 42)).not.toBe(keyHash64('user-1/entry-8', 42));
    for (let i = 0; i < 1000; i++) {
      const h = keyHash64(`k${i}`, i);
      expect(h > 0n && h < 1n << 64n).toBe(true);
    }
  });
});

describe('PayloadPool', () => {
  // Small pools make fills wrap around the pool's end, which is where layout bugs would hide.
  const pool = PayloadPool.create(7, 64 * KiB);

  it('is deterministic per seed and differs between seeds', () => {
    const again = PayloadPool.create(7, 64 * KiB);
    const other = PayloadPool.create(8, 64 * KiB);
    expect(Buffer.from(new Uint8Array(again.sab)).equals(Buffer.from(new Uint8Array(pool.sab)))).toBe(true);
    expect(Buffer.from(new Uint8Array(other.sab)).equals(Buffer.from(new Uint8Array(pool.sab)))).toBe(false);

    const h = keyHash64('entry-a', 7);
    expect(Buffer.from(entry(again, h, 200 * KiB)).equals(entry(pool, h, 200 * KiB))).toBe(true);
    const hOtherSeed = keyHash64('entry-a', 8);
    expect(Buffer.from(entry(other, hOtherSeed, 200 * KiB)).equals(entry(pool, h, 200 * KiB))).toBe(false);
  });

  it('rebuilds from shared memory with identical output', () => {
    const h = keyHash64('entry-shared', 7);
    const rebuilt = PayloadPool.fromShared(pool.sab);
    expect(Buffer.from(entry(rebuilt, h, 100 * KiB + 3)).equals(entry(pool, h, 100 * KiB + 3))).toBe(true);
  });

  it('fills at any 4 KiB offset equal slices of a whole fill', () => {
    const h = keyHash64('entry-slices', 7);
    const wholeBytes = 300 * KiB + 123;
    const whole = entry(pool, h, wholeBytes);
    const cases: Array<[number, number]> = [
      [0, 1], [0, 15], [0, 16], [0, 17], [0, 515], [0, 520], [0, 4096], [4096, 4097], [4096, 1029], [8192, 70 * KiB],
      [36 * 4096, 5], [17 * 4096, 64 * KiB], [40 * 4096, 100 * KiB], [73 * 4096, wholeBytes - 73 * 4096],
    ];
    for (const [offsetBytes, lengthBytes] of cases) {
      const part = entry(pool, h, lengthBytes, offsetBytes);
      expect(Buffer.from(part).equals(whole.subarray(offsetBytes, offsetBytes + lengthBytes)), `${offsetBytes}+${lengthBytes}`).toBe(true);
    }
  });

  it('stamps each block with the key hash and block index', () => {
    const h = keyHash64('entry-stamp', 7);
    const bytes = entry(pool, h, 10 * PAYLOAD_BLOCK_BYTES, 5 * PAYLOAD_BLOCK_BYTES);
    const view = new DataView(bytes.buffer);
    for (let b = 0; b < 10; b++) {
      expect(view.getBigUint64(b * PAYLOAD_BLOCK_BYTES, true)).toBe(h);
      expect(view.getBigUint64(b * PAYLOAD_BLOCK_BYTES + 8, true)).toBe(BigInt(5 + b));
    }
  });

  it('rejects offsets that are not block multiples', () => {
    expect(() => pool.fill(new Uint8Array(10), 1n, 100)).toThrow(RangeError);
    expect(() => pool.fill(new Uint8Array(10), 0n, 0)).toThrow(RangeError);
  });

  it('makes 4 KiB blocks unique across entries (fewer than 1 % duplicates)', () => {
    const big = PayloadPool.create(11, 4 * MiB);
    const seen = new Set<string>();
    let blocks = 0;
    let duplicates = 0;
    for (let e = 0; e < 50; e++) {
      const bytes = entry(big, keyHash64(`user-${e % 7}/entry-${e}`, 11), MiB + e * 4096);
      for (let at = 0; at < bytes.length; at += PAYLOAD_BLOCK_BYTES) {
        const digest = createHash('sha1').update(bytes.subarray(at, at + PAYLOAD_BLOCK_BYTES)).digest('hex');
        blocks++;
        if (seen.has(digest)) duplicates++;
        else seen.add(digest);
      }
    }
    expect(blocks).toBeGreaterThan(50 * 256);
    expect(duplicates / blocks).toBeLessThan(0.01);
  });

  it('makes aligned 512 B, 1 KiB and 2 KiB units unique across keys and chunks (fewer than 1 % duplicates)', () => {
    // A 64 KiB pool repeats 16 times per MiB, so 40 entries of about 0.5 MiB span 300+ pool periods:
    // any unit without a stamp of its own would repeat in every period (87 % of 512 B sectors did
    // with stamps only per 4 KiB block).
    const small = PayloadPool.create(13, 64 * KiB);
    const entries = Array.from({ length: 40 }, (_, e) =>
      entry(small, keyHash64(`user-${e % 5}/entry-${e}`, 13), 512 * KiB + e * 4096, (e % 3) * 64 * KiB),
    );
    const totalBytes = entries.reduce((n, b) => n + b.length, 0);
    for (const unitBytes of [512, 1024, 2048]) {
      const { units, duplicates } = duplicateUnits(entries, unitBytes);
      expect(units).toBe(totalBytes / unitBytes);
      expect(duplicates / units, `${unitBytes} B units`).toBeLessThan(0.01);
      // Stamps are per sector, so not merely rare: none at all.
      expect(duplicates, `${unitBytes} B units`).toBe(0);
    }
  });

  it('makes 512 B sectors unique in the engine configuration (pool = one chunk, entries of many chunks)', () => {
    const chunkBytes = 256 * KiB;
    const chunkPool = PayloadPool.create(17, chunkBytes);
    const chunks = function* (): Generator<Uint8Array> {
      // A buffer that held another entry's chunk, restamped, as storage writes do.
      const buffer = entry(chunkPool, keyHash64('first', 17), chunkBytes);
      for (let e = 0; e < 12; e++) {
        const h = keyHash64(`user-${e}/ctx`, 17);
        for (let c = 0; c < 8; c++) {
          chunkPool.stamp(buffer, h, c * chunkBytes);
          yield buffer;
        }
      }
    };
    const { units, duplicates } = duplicateUnits(chunks(), PAYLOAD_SECTOR_BYTES);
    expect(units).toBe((12 * 8 * chunkBytes) / PAYLOAD_SECTOR_BYTES);
    expect(duplicates / units).toBeLessThan(0.01);
  });

  it('stamps sectors 1..7 of every block with 8 bytes distinct between sectors and keys', () => {
    const h = keyHash64('entry-sectors', 7);
    const other = keyHash64('entry-sectors-2', 7);
    const offsetBytes = 2 ** 42 + 3 * PAYLOAD_BLOCK_BYTES; // sector indexes past 2^32 too
    const a = entry(pool, h, 64 * KiB, offsetBytes);
    const b = entry(pool, other, 64 * KiB, offsetBytes);
    const pooled = new Uint8Array(64 * KiB);
    pool.copyPool(pooled, offsetBytes);
    const stamps = new Set<string>();
    for (let at = 0; at < a.length; at += PAYLOAD_SECTOR_BYTES) {
      if (at % PAYLOAD_BLOCK_BYTES === 0) continue;
      const sa = Buffer.from(a.subarray(at, at + PAYLOAD_SECTOR_STAMP_BYTES)).toString('hex');
      const sb = Buffer.from(b.subarray(at, at + PAYLOAD_SECTOR_STAMP_BYTES)).toString('hex');
      expect(sa).not.toBe(sb);
      stamps.add(sa).add(sb);
      // Only the stamp differs from the pool.
      const rest = at + PAYLOAD_SECTOR_STAMP_BYTES;
      expect(Buffer.from(a.subarray(rest, at + PAYLOAD_SECTOR_BYTES)).equals(pooled.subarray(rest, at + PAYLOAD_SECTOR_BYTES))).toBe(true);
    }
    expect(stamps.size).toBe(2 * (a.length / PAYLOAD_SECTOR_BYTES) * (7 / 8));
  });

  it('restamps a buffer holding any entry\'s bytes into exactly the fill of another entry', () => {
    const sizeBytes = 3 * pool.sizeBytes;
    const buffer = entry(pool, keyHash64('was-here', 7), sizeBytes, 0);
    for (const [name, offsetBytes, lengthBytes] of [
      ['next', 3 * pool.sizeBytes, sizeBytes],
      ['short', 0, 100 * KiB + 513],
      ['shorter', 4096, 5],
      ['again', 6 * pool.sizeBytes, sizeBytes],
    ] as const) {
      const h = keyHash64(name, 7);
      // Pool offsets line up because every offset here is a multiple of the pool size (or restamps
      // a buffer filled at the same offset modulo the pool).
      const view = buffer.subarray(0, lengthBytes);
      if (offsetBytes % pool.sizeBytes !== 0) pool.fill(view, keyHash64('other', 7), offsetBytes);
      pool.stamp(view, h, offsetBytes);
      expect(Buffer.from(view).equals(entry(pool, h, lengthBytes, offsetBytes)), name).toBe(true);
      expect(pool.verify(view, h, offsetBytes)).toEqual({ ok: true });
    }
  });

  it('gives compressors nothing in the stamps or the blocks (zstd, deflate per block, the stamps alone)', () => {
    const chunkPool = PayloadPool.create(19, 16 * MiB);
    const bytes = new Uint8Array(4 * MiB);
    // A MiB each of four entries, from different quarters of their first chunk: no pool byte twice,
    // as a compressor whose window is under one chunk sees a file.
    for (let e = 0; e < 4; e++) chunkPool.fill(bytes.subarray(e * MiB, (e + 1) * MiB), keyHash64(`zip-${e}`, 19), e * MiB);
    expect(zlib.zstdCompressSync(bytes).length).toBeGreaterThanOrEqual(0.99 * bytes.length);
    expect(
      zlib.zstdCompressSync(bytes, { params: { [zlib.constants.ZSTD_c_compressionLevel]: 19 } }).length,
    ).toBeGreaterThanOrEqual(0.99 * bytes.length);
    // Arrays compress per block or record.
    let perBlock = 0;
    for (let at = 0; at < bytes.length; at += 32 * KiB) perBlock += zlib.deflateRawSync(bytes.subarray(at, at + 32 * KiB)).length;
    expect(perBlock).toBeGreaterThanOrEqual(0.99 * bytes.length);
    // The sector stamps side by side: (key, index) written plainly would shrink to a fraction.
    const stamps: Uint8Array[] = [];
    for (let at = 0; at < bytes.length; at += PAYLOAD_SECTOR_BYTES) {
      if (at % PAYLOAD_BLOCK_BYTES !== 0) stamps.push(bytes.subarray(at, at + PAYLOAD_SECTOR_STAMP_BYTES));
    }
    const joined = Buffer.concat(stamps);
    expect(zlib.deflateRawSync(joined, { level: 9 }).length).toBeGreaterThanOrEqual(0.99 * joined.length);
    expect(zlib.zstdCompressSync(joined).length).toBeGreaterThanOrEqual(0.99 * joined.length);
  });

  it('is incompressible (gzip and deflate keep at least 99 % of 8 MiB)', () => {
    const big = PayloadPool.create(3);
    const bytes = entry(big, keyHash64('entry-zip', 3), 8 * MiB);
    expect(zlib.gzipSync(bytes).length).toBeGreaterThanOrEqual(0.99 * bytes.length);
    expect(zlib.deflateSync(bytes).length).toBeGreaterThanOrEqual(0.99 * bytes.length);
  });

  describe('verify', () => {
    const h = keyHash64('entry-verify', 7);
    const offsetBytes = 3 * PAYLOAD_BLOCK_BYTES;

    it('accepts the right bytes, including a partial tail and multi-scratch lengths', () => {
      expect(pool.verify(entry(pool, h, 2 * MiB + 77, offsetBytes), h, offsetBytes)).toEqual({ ok: true });
      expect(pool.verify(entry(pool, h, 5, 0), h, 0)).toEqual({ ok: true });
    });

    it('finds a flipped byte at its exact offset', () => {
      for (const at of [0, 15, 16, 4095, 4096, 100_000, 1_048_577, 2 * MiB + 76]) {
        const bytes = entry(pool, h, 2 * MiB + 77, offsetBytes);
        bytes[at] ^= 0x01;
        const result = pool.verify(bytes, h, offsetBytes);
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.offsetBytes).toBe(offsetBytes + at);
      }
    });

    it('reports a block from another entry with both key hashes', () => {
      const other = keyHash64('entry-other', 7);
      const bytes = entry(pool, h, 20 * PAYLOAD_BLOCK_BYTES, offsetBytes);
      const foreign = entry(pool, other, PAYLOAD_BLOCK_BYTES, offsetBytes + 6 * PAYLOAD_BLOCK_BYTES);
      bytes.set(foreign, 6 * PAYLOAD_BLOCK_BYTES);
      const result = pool.verify(bytes, h, offsetBytes);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      const blockStart = offsetBytes + 6 * PAYLOAD_BLOCK_BYTES;
      expect(result.offsetBytes).toBeGreaterThanOrEqual(blockStart);
      expect(result.offsetBytes).toBeLessThan(blockStart + 8);
      expect(result.expectedKeyHash).toBe(h);
      expect(result.foundKeyHash).toBe(other);
    });

    it('reports zeroed (never written) blocks', () => {
      const bytes = entry(pool, h, 4 * PAYLOAD_BLOCK_BYTES, 0);
      bytes.fill(0, 2 * PAYLOAD_BLOCK_BYTES, 3 * PAYLOAD_BLOCK_BYTES);
      const result = pool.verify(bytes, h, 0);
      expect(result).toMatchObject({ ok: false, foundKeyHash: 0n, expectedKeyHash: h });
    });
  });
});
