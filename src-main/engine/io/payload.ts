// Deterministic, incompressible, dedup-proof payload for KV entries.
//
// Generating fresh random bytes at device speed is too slow on one thread (~1.7 GB/s for
// randomFillSync), so a random pool (an AES-CTR keystream of the run's seed) is generated once per
// run and an entry's bytes at offset o are the pool's bytes at o modulo the pool size, overwritten by
// stamps at the start of every 512-byte sector:
//   - sector 0 of each 4 KiB block: 16 bytes (key hash, block index), little-endian, which read
//     verification reports (a block from another entry names that entry's key hash);
//   - sectors 1..7: 8 bytes, a mix of (key hash, sector index) that looks random, so the stamps
//     themselves give a compressor nothing to find, and is distinct for every sector of an entry.
// So every aligned 512-byte sector, and every aligned 1, 2 or 4 KiB unit, of every entry is unique
// (within an entry by construction, between entries but for a 64-bit stamp coincidence): dedup at
// 512 B or coarser, aligned or content-defined (any span of 519 bytes holds a whole stamp), finds
// nothing however many keys and chunks are written. The stamps also let a read be verified without
// stored checksums.
//
// The engine sizes the pool to exactly one I/O chunk. Every full chunk of every entry is then the
// pool plus stamps, so an I/O buffer that already holds the pool needs only its stamps rewritten
// (72 bytes per 4 KiB, one cache line per sector) to become the next chunk: about a sixth of the CPU
// of copying the pool (bench/payload-cost.ts), which keeps kvbench device-bound rather than
// memcpy-bound (see EntryFileStore.write). The price: between stamps the keystream repeats every
// chunk, at the same place in every entry. Per-block and per-record compression, and compressors
// whose window holds less than a chunk of one stream (gzip, lz4, zstd without --long), see random
// data; a compressor whose window spans more than one chunk of the stream it is given (zstd --long,
// xz with a large dictionary, e.g. over a large entry or a tar of the cache directory) finds the runs
// of up to 504 bytes between stamps again and shrinks every chunk after the first to a few percent.
// Defeating that would take a pass over every byte of every chunk, the cost the one-chunk pool
// exists to avoid.

import { createCipheriv, createHash } from 'node:crypto';

export const PAYLOAD_BLOCK_BYTES = 4096;
export const PAYLOAD_STAMP_BYTES = 16;
/** Every aligned sector of this size carries a stamp, so it is unique across entries and chunks. */
export const PAYLOAD_SECTOR_BYTES = 512;
/** Bytes of the stamp at the start of sectors 1..7 of a block (sector 0 holds the block stamp). */
export const PAYLOAD_SECTOR_STAMP_BYTES = 8;
const SECTORS_PER_BLOCK = PAYLOAD_BLOCK_BYTES / PAYLOAD_SECTOR_BYTES;
export const DEFAULT_PAYLOAD_POOL_BYTES = 64 * 1024 * 1024;

const FNV64_OFFSET = 0xcbf29ce484222325n;
const FNV64_PRIME = 0x100000001b3n;
const U64_MASK = 0xffffffffffffffffn;
const TWO_POW_32 = 0x1_0000_0000;
// Verification regenerates the expected bytes piecewise so its memory stays constant whatever
// the size of the buffer being checked.
const VERIFY_SCRATCH_BYTES = 1024 * 1024;

export type VerifyResult =
  | { ok: true }
  | { ok: false; offsetBytes: number; expectedKeyHash?: bigint; foundKeyHash?: bigint };

const textEncoder = new TextEncoder();

/** 64-bit hash of `key` under `seed`: FNV-1a over seed and key bytes, then a splitmix64 finaliser. Never 0. */
export function keyHash64(key: string, seed: number): bigint {
  let h = FNV64_OFFSET;
  // The seed goes in as its decimal text so every JS number (including non-integers) hashes stably.
  const bytes = textEncoder.encode(`${seed}\u0000${key}`);
  for (let i = 0; i < bytes.length; i++) {
    h ^= BigInt(bytes[i]);
    h = (h * FNV64_PRIME) & U64_MASK;
  }
  // FNV-1a alone mixes the last bytes poorly; the finaliser spreads them over all 64 bits, so
  // keys that differ only at the end still get unrelated stamps.
  h ^= h >> 30n;
  h = (h * 0xbf58476d1ce4e5b9n) & U64_MASK;
  h ^= h >> 27n;
  h = (h * 0x94d049bb133111ebn) & U64_MASK;
  h ^= h >> 31n;
  // 0 is reserved so a zeroed (never written) block can never pass as a valid stamp.
  return h === 0n ? 0x9e3779b97f4a7c15n : h;
}

function checkKeyHash(keyHash: bigint): void {
  if (typeof keyHash !== 'bigint' || keyHash <= 0n || keyHash > U64_MASK) {
    throw new RangeError(`keyHash must be a non-zero unsigned 64-bit bigint (got ${String(keyHash)})`);
  }
}

function checkEntryOffset(entryOffsetBytes: number): void {
  if (!Number.isSafeInteger(entryOffsetBytes) || entryOffsetBytes < 0 || entryOffsetBytes % PAYLOAD_BLOCK_BYTES !== 0) {
    throw new RangeError(
      `entryOffsetBytes must be a non-negative multiple of ${PAYLOAD_BLOCK_BYTES} (got ${entryOffsetBytes})`,
    );
  }
}

function readU64Le(bytes: Uint8Array, at: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(bytes[at + i]);
  return v;
}

// murmur3's 32-bit finaliser: a bijection of 32-bit values that spreads every input bit over the word.
function fmix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

// The two halves of a sector stamp. For one key, the low half is a bijection of the sector index's
// low 32 bits (an odd multiplier, a xor, fmix32) and the high half brings in its high 32 bits, so
// no two sectors of an entry share a stamp; stamps of different keys coincide only by 64-bit chance.
// The output looks random, so neighbouring stamps share no bytes a compressor could match.
function sectorStampLo(keyLo: number, sectorLo: number): number {
  return fmix32(keyLo ^ Math.imul(sectorLo, 0x9e3779b1));
}

function sectorStampHi(keyHi: number, sectorLo: number, sectorHi: number): number {
  return fmix32(keyHi ^ Math.imul(sectorLo, 0x7feb352d) ^ Math.imul(sectorHi, 0x846ca68b));
}

export class PayloadPool {
  readonly sab: SharedArrayBuffer;
  readonly sizeBytes: number;
  private readonly bytes: Uint8Array;
  private scratch: Uint8Array | null = null;

  private constructor(sab: SharedArrayBuffer) {
    if (sab.byteLength < PAYLOAD_BLOCK_BYTES || sab.byteLength % PAYLOAD_BLOCK_BYTES !== 0) {
      throw new RangeError(`payload pool size must be a positive multiple of ${PAYLOAD_BLOCK_BYTES} bytes (got ${sab.byteLength})`);
    }
    this.sab = sab;
    this.sizeBytes = sab.byteLength;
    this.bytes = new Uint8Array(sab);
  }

  /** Generates the pool from `seed`: the same seed gives the same bytes on every machine. */
  static create(seed: number, sizeBytes: number = DEFAULT_PAYLOAD_POOL_BYTES): PayloadPool {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0 || sizeBytes % PAYLOAD_BLOCK_BYTES !== 0) {
      throw new RangeError(`payload pool sizeBytes must be a positive multiple of ${PAYLOAD_BLOCK_BYTES} (got ${sizeBytes})`);
    }
    const sab = new SharedArrayBuffer(sizeBytes);
    const pool = new PayloadPool(sab);
    // AES-128-CTR over zeros: a keyed keystream, hardware-accelerated and indistinguishable from
    // random, so no compressor finds structure in it.
    const material = createHash('sha256').update(`kvbench payload pool v1\u0000${seed}`).digest();
    const cipher = createCipheriv('aes-128-ctr', material.subarray(0, 16), material.subarray(16, 32));
    const stepBytes = Math.min(sizeBytes, 4 * 1024 * 1024);
    const zeros = new Uint8Array(stepBytes);
    for (let at = 0; at < sizeBytes; at += stepBytes) {
      const n = Math.min(stepBytes, sizeBytes - at);
      pool.bytes.set(cipher.update(n === stepBytes ? zeros : zeros.subarray(0, n)), at);
    }
    return pool;
  }

  /** Rebuilds a pool around memory created by `create` (in a worker thread, for example). */
  static fromShared(sab: SharedArrayBuffer): PayloadPool {
    return new PayloadPool(sab);
  }

  /** Writes bytes [entryOffsetBytes, entryOffsetBytes + dest.length) of the entry `keyHash` into `dest`. */
  fill(dest: Uint8Array, keyHash: bigint, entryOffsetBytes: number): void {
    checkKeyHash(keyHash);
    checkEntryOffset(entryOffsetBytes);
    const lengthBytes = dest.length;
    if (lengthBytes === 0) return;
    this.copyPool(dest, entryOffsetBytes);
    this.stamp(dest, keyHash, entryOffsetBytes);
  }

  /** Copies the pool's bytes for entry offsets [entryOffsetBytes, + dest.length) into `dest` (no stamps). */
  copyPool(dest: Uint8Array, entryOffsetBytes: number): void {
    let poolAtBytes = entryOffsetBytes % this.sizeBytes;
    // One or a few large copies run at memcpy speed; per-block copies would not.
    let doneBytes = 0;
    while (doneBytes < dest.length) {
      const n = Math.min(dest.length - doneBytes, this.sizeBytes - poolAtBytes);
      dest.set(this.bytes.subarray(poolAtBytes, poolAtBytes + n), doneBytes);
      doneBytes += n;
      poolAtBytes = 0;
    }
  }

  /**
   * Writes only the stamps of entry `keyHash` into `dest`, which must already hold the pool's bytes
   * for those offsets except at stamp positions (a previous `fill` of the same offsets, for any key):
   * the result is then exactly what `fill` would write.
   */
  stamp(dest: Uint8Array, keyHash: bigint, entryOffsetBytes: number): void {
    checkKeyHash(keyHash);
    checkEntryOffset(entryOffsetBytes);
    const lengthBytes = dest.length;
    const keyLo = Number(keyHash & 0xffffffffn);
    const keyHi = Number(keyHash >> 32n);
    const view = new DataView(dest.buffer, dest.byteOffset, dest.byteLength);
    let block = entryOffsetBytes / PAYLOAD_BLOCK_BYTES;
    let at = 0;
    for (; at + PAYLOAD_BLOCK_BYTES <= lengthBytes; at += PAYLOAD_BLOCK_BYTES, block++) {
      const blockHi = Math.floor(block / TWO_POW_32);
      view.setUint32(at, keyLo, true);
      view.setUint32(at + 4, keyHi, true);
      view.setUint32(at + 8, block >>> 0, true);
      view.setUint32(at + 12, blockHi, true);
      // The block's 8 sectors share the high half of their index (8 divides 2^32).
      const sector0Lo = (block * SECTORS_PER_BLOCK) >>> 0;
      const sectorHi = Math.floor((block * SECTORS_PER_BLOCK) / TWO_POW_32);
      for (let s = 1; s < SECTORS_PER_BLOCK; s++) {
        const sectorLo = sector0Lo + s;
        const sat = at + s * PAYLOAD_SECTOR_BYTES;
        view.setUint32(sat, sectorStampLo(keyLo, sectorLo), true);
        view.setUint32(sat + 4, sectorStampHi(keyHi, sectorLo, sectorHi), true);
      }
    }
    if (at < lengthBytes) {
      // A partial last block gets the stamps that start inside `dest`, each cut where `dest` ends,
      // as a slice of a whole fill would.
      const stamp = new Uint8Array(PAYLOAD_STAMP_BYTES);
      const sv = new DataView(stamp.buffer);
      sv.setUint32(0, keyLo, true);
      sv.setUint32(4, keyHi, true);
      sv.setUint32(8, block >>> 0, true);
      sv.setUint32(12, Math.floor(block / TWO_POW_32), true);
      dest.set(stamp.subarray(0, Math.min(PAYLOAD_STAMP_BYTES, lengthBytes - at)), at);
      const sector0Lo = (block * SECTORS_PER_BLOCK) >>> 0;
      const sectorHi = Math.floor((block * SECTORS_PER_BLOCK) / TWO_POW_32);
      for (let s = 1; s < SECTORS_PER_BLOCK && at + s * PAYLOAD_SECTOR_BYTES < lengthBytes; s++) {
        const sat = at + s * PAYLOAD_SECTOR_BYTES;
        sv.setUint32(0, sectorStampLo(keyLo, sector0Lo + s), true);
        sv.setUint32(4, sectorStampHi(keyHi, sector0Lo + s, sectorHi), true);
        dest.set(stamp.subarray(0, Math.min(PAYLOAD_SECTOR_STAMP_BYTES, lengthBytes - sat)), sat);
      }
    }
  }

  /**
   * Checks `src` against bytes [entryOffsetBytes, entryOffsetBytes + src.length) of entry `keyHash`.
   * On a mismatch, `offsetBytes` is the first differing byte's offset within the entry, and the
   * key hashes are those of the stamp of the block holding it (when its stamp lies inside `src`),
   * which tells a misplaced block (another entry's data) from corrupted bytes.
   */
  verify(src: Uint8Array, keyHash: bigint, entryOffsetBytes: number): VerifyResult {
    checkKeyHash(keyHash);
    checkEntryOffset(entryOffsetBytes);
    if (this.scratch === null) this.scratch = new Uint8Array(VERIFY_SCRATCH_BYTES);
    const scratch = this.scratch;
    for (let doneBytes = 0; doneBytes < src.length; doneBytes += VERIFY_SCRATCH_BYTES) {
      const n = Math.min(VERIFY_SCRATCH_BYTES, src.length - doneBytes);
      const expected = scratch.subarray(0, n);
      this.fill(expected, keyHash, entryOffsetBytes + doneBytes);
      const actual = src.subarray(doneBytes, doneBytes + n);
      if (Buffer.compare(actual, expected) === 0) continue;
      let i = 0;
      while (actual[i] === expected[i]) i++;
      const srcAt = doneBytes + i;
      const blockStart = srcAt - (srcAt % PAYLOAD_BLOCK_BYTES);
      const result: VerifyResult = { ok: false, offsetBytes: entryOffsetBytes + srcAt };
      if (blockStart + 8 <= src.length) {
        result.expectedKeyHash = keyHash;
        result.foundKeyHash = readU64Le(src, blockStart);
      }
      return result;
    }
    return { ok: true };
  }
}
