// The counts a stored histogram holds, read without the histogram library's decode. The library
// (hdr-histogram-js 3.0.1, decodeFromCompressedBase64) turns every stored histogram into a full
// counts array, ~20,000 slots for the few hundred counts a trial records, and scans it twice more;
// pooling a big report spent most of its time there. This reads only the counts present.
//
// It reads only the encodings it is sure of: canonical base64, the V2 compressed cookie around a zlib
// stream that lies within the bytes, the V2 cookie, kvbench's layout (lowest discernible value 1, 3
// significant digits), a payload that lies within the inflated bytes, and varints within 2^53. For
// those the library accepts and holds exactly these counts (test/unit/metrics/stored-counts.test.ts
// compares the two on real and mutated encodings). For anything else it answers null, and the caller
// asks the library, so what is refused as damaged is always what the library refuses.

import { inflateSync } from 'node:zlib';

/** The V2 cookies, less their word-size nibble (the library checks `cookie & ~0xf0` against these). */
const V2_ENCODING_COOKIE_BASE = 0x1c849303;
const V2_COMPRESSED_COOKIE_BASE = 0x1c849304;
/** Cookie, payload length, normalizing offset, digits (4 bytes each), lowest, highest, ratio (8 each). */
const HEADER_BYTES = 40;
const TWO_POW_32 = 2 ** 32;
/**
 * Base64 that base64-js (the library's reader) and Node's Buffer read alike: its own alphabet only,
 * a length of whole quads, at most two pads at the end. base64-js reads other characters as zero bits
 * where Node skips them, so those go to the library.
 */
const CANONICAL_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** What of a histogram's layout sizing a counts array takes: the accumulator's own methods. */
export interface CountsLayout {
  lowestDiscernibleValue: number;
  numberOfSignificantValueDigits: number;
  getBucketsNeededToCoverValue(value: number): number;
  getLengthForNumberOfBuckets(numberOfBuckets: number): number;
}

/**
 * A stored histogram's counts as the library's decode holds them: `n` counts above zero at ascending
 * `indices` (each below `countsArrayLength`), and the bucket count its counts array was made with.
 * The arrays are reused by the next read: use them before reading another.
 */
export interface StoredCounts {
  n: number;
  indices: Float64Array;
  counts: Float64Array;
  bucketCount: number;
  countsArrayLength: number;
}

let indices = new Float64Array(1024);
let counts = new Float64Array(1024);

/**
 * The counts of `encoded` (encodeIntoCompressedBase64's text) where it was encoded in `layout`'s
 * resolution, or null where this reader is not sure what the library would make of it (damaged, or
 * another layout): the library decides those.
 */
export function storedCounts(encoded: string, layout: CountsLayout): StoredCounts | null {
  if (layout.lowestDiscernibleValue !== 1) return null;
  const text = encoded.trim();
  if (text.length % 4 !== 0 || !CANONICAL_BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length < 8) return null;
  const outer = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if ((outer.getUint32(0) & ~0xf0) !== V2_COMPRESSED_COOKIE_BASE) return null;
  const compressedBytes = outer.getUint32(4);
  if (8 + compressedBytes > bytes.length) return null;
  let raw: Buffer;
  try {
    // The library inflates the same bytes with the same function (a test checks it is zlib's).
    raw = inflateSync(bytes.subarray(8, 8 + compressedBytes));
  } catch {
    return null;
  }
  if (raw.length < HEADER_BYTES) return null;
  const inner = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if ((inner.getUint32(0) & ~0xf0) !== V2_ENCODING_COOKIE_BASE) return null;
  const payloadBytes = inner.getUint32(4);
  const digits = inner.getUint32(12);
  const lowest = inner.getUint32(16) * TWO_POW_32 + inner.getUint32(20);
  const highest = inner.getUint32(24) * TWO_POW_32 + inner.getUint32(28);
  // The same layout as the one reading (so its methods size this one's array), and a range the
  // library's constructor takes.
  if (lowest !== 1 || digits !== layout.numberOfSignificantValueDigits || highest < 2) return null;
  const end = HEADER_BYTES + payloadBytes;
  // Past the end of its bytes the library reads zero bits: not a histogram anyone encoded.
  if (end > raw.length) return null;
  const bucketCount = layout.getBucketsNeededToCoverValue(highest);
  const countsArrayLength = layout.getLengthForNumberOfBuckets(bucketCount);
  if (indices.length < payloadBytes) {
    indices = new Float64Array(payloadBytes);
    counts = new Float64Array(payloadBytes);
  }
  let n = 0;
  let index = 0;
  let pos = HEADER_BYTES;
  while (pos < end) {
    // A ZigZag LEB128-64b9B varint, read as the library reads it: at most 9 bytes, the 9th's top bit
    // ignored, bytes past the payload's end (but within the data) read too.
    let b = raw[pos++]!;
    let value = b & 0x7f;
    let scale = 128;
    for (let read = 1; (b & 0x80) !== 0 && read < 9; read++) {
      if (pos >= raw.length) return null;
      b = raw[pos++]!;
      value += (b & 0x7f) * scale;
      scale *= 128;
    }
    // The library adds in doubles: above 2^53 its value is rounded, so leave that to it.
    if (value > Number.MAX_SAFE_INTEGER) return null;
    if (value % 2 === 1) {
      // A negative word is a run of zero counts. One reaching past the array (a damaged word) leaves
      // every later count out; the library gets there by walking the run slot by slot (2^52 slots of
      // a single word: days), and this answers what it answers at the end.
      index += (value + 1) / 2;
      continue;
    }
    const count = value / 2;
    // A count past the array's end is dropped by the library (a typed array's write out of range).
    if (count > 0 && index < countsArrayLength) {
      indices[n] = index;
      counts[n] = count;
      n += 1;
    }
    index += 1;
  }
  return { n, indices, counts, bucketCount, countsArrayLength };
}
