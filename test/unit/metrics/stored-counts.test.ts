// storedCounts reads a stored histogram's counts without the library's decode, and mergeEncoded adds
// them as the library's add would. What it must never do: take as a histogram what the library
// refuses as damaged, or read other counts than the library's. This feeds both the real encodings of a
// lab's database (test/fixtures/stored-histograms.json) and thousands of mutations of them (truncated,
// flipped, other cookies and word sizes, other layouts and ranges, counts past 2^53 or past the
// array, zero runs, overlong and straddling varints, trailing bytes, the uncompressed form), and
// compares: the same accept or refuse (and reason), the same counts, the same merge to the last bound.
import fs from 'node:fs';
import path from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';
import * as hdr from 'hdr-histogram-js';
import { inflate as libraryInflate } from 'hdr-histogram-js/dist/JsHistogram.encoding.js';
import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { storedCounts } from '../../../src-main/engine/metrics/stored-counts.ts';
import { Rng } from '../../../src-main/engine/workload/rng.ts';

interface StoredHistogram {
  name: string;
  count: number;
  sumNs: number;
  hdr: string;
}
const lab: StoredHistogram[] = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../fixtures/stored-histograms.json'), 'utf8')).histograms;

/** A LatencyHistogram's layout: the accumulator storedCounts sizes arrays with. */
const layout = (): hdr.JsHistogram =>
  hdr.build({ bitBucketSize: 64, autoResize: true, lowestDiscernibleValue: 1, highestTrackableValue: 2, numberOfSignificantValueDigits: 3, useWebAssembly: false }) as hdr.JsHistogram;

type Verdict = { problem: string } | { bucketCount: number; countsArrayLength: number; lowest: number; digits: number; counts: [number, number][]; totalCount: number };

/** What the library makes of `encoded`: why it refuses it, or its layout and the counts above zero. */
function libraryVerdict(encoded: string): Verdict {
  let d: hdr.JsHistogram;
  try {
    d = hdr.decodeFromCompressedBase64(encoded, 64, false) as hdr.JsHistogram;
  } catch (err) {
    return { problem: err instanceof Error ? err.message : String(err) };
  }
  const counts: [number, number][] = [];
  for (let i = 0; i < d.countsArrayLength; i++) if (d.getCountAtIndex(i) > 0) counts.push([i, d.getCountAtIndex(i)]);
  return { bucketCount: d.bucketCount, countsArrayLength: d.countsArrayLength, lowest: d.lowestDiscernibleValue, digits: d.numberOfSignificantValueDigits, counts, totalCount: d.totalCount };
}

/** Accumulators of three states: empty; holding values of the stored ones' range; grown far wider. */
const RECIPES: readonly (readonly number[])[] = [[], [0, 900, 5_000_000, 47_000_000], [12, 3e12]];
function accumulator(values: readonly number[]): LatencyHistogram {
  const h = new LatencyHistogram();
  for (const v of values) h.record(v);
  return h;
}

interface Tally {
  fast: number;
  refused: number;
  libraryOnly: number;
}

/** Both readers on `encoded`: the same verdict, the same counts, the same merge. */
function expectAlike(encoded: string, tally: Tally): void {
  const lib = libraryVerdict(encoded);
  const fast = storedCounts(encoded, layout());
  if (fast !== null) {
    // The fast reader took it: the library must take it too, in kvbench's layout, with these counts.
    expect(lib, encoded).not.toHaveProperty('problem');
    if ('problem' in lib) return;
    expect([lib.lowest, lib.digits, lib.bucketCount, lib.countsArrayLength], encoded).toEqual([1, 3, fast.bucketCount, fast.countsArrayLength]);
    const counts: [number, number][] = [];
    for (let i = 0; i < fast.n; i++) counts.push([fast.indices[i]!, fast.counts[i]!]);
    expect(counts, encoded).toEqual(lib.counts);
    tally.fast += 1;
  } else if ('problem' in lib) tally.refused += 1;
  else tally.libraryOnly += 1;
  for (const recipe of RECIPES) {
    const a = accumulator(recipe);
    const b = accumulator(recipe);
    expect(outcome(() => a.mergeEncoded(encoded, 777)), encoded).toEqual(outcome(() => b.mergeEncodedByLibrary(encoded, 777)));
    expect(outcome(() => [a.count, a.sumNs, a.encode()]), encoded).toEqual(outcome(() => [b.count, b.sumNs, b.encode()]));
    // A second merge reads the first's bounds and array size (and may overflow a count, as the
    // library's add does: it throws, and must throw alike).
    expect(outcome(() => a.mergeEncoded(encoded, 1)), encoded).toEqual(outcome(() => b.mergeEncodedByLibrary(encoded, 1)));
    expect(outcome(() => [a.count, a.summary(), a.encode()]), encoded).toEqual(outcome(() => [b.count, b.summary(), b.encode()]));
  }
}

/** What `f` returns, or what it throws (the library throws strings too). */
function outcome(f: () => unknown): { value: unknown } | { thrown: unknown } {
  try {
    return { value: f() };
  } catch (err) {
    return { thrown: err instanceof Error ? err.message : err };
  }
}

// --- Writing encodings, right and wrong ---------------------------------------------------------

/** A raw (unsigned, ZigZagged) word as LEB128-64b9B: 7 bits a byte, the 9th byte whole. */
function varint(raw: bigint, minBytes = 1): number[] {
  const out: number[] = [];
  for (let k = 0; k < 8; k++) {
    const byte = Number((raw >> BigInt(7 * k)) & 0x7fn);
    const more = raw >> BigInt(7 * (k + 1)) > 0n || k + 1 < minBytes;
    out.push(byte | (more ? 0x80 : 0));
    if (!more) return out;
  }
  out.push(Number((raw >> 56n) & 0xffn));
  return out;
}
const zigzag = (word: bigint): bigint => (word >= 0n ? word * 2n : -word * 2n - 1n);

/** The words of an inflated V2 encoding's payload (counts, and negative zero runs), read exactly. */
function wordsOf(raw: Buffer): bigint[] {
  const end = 40 + raw.readUInt32BE(4);
  const words: bigint[] = [];
  let pos = 40;
  while (pos < end) {
    let value = 0n;
    for (let k = 0; k < 9; k++) {
      const b = raw[pos++]!;
      if (k === 8) {
        value |= BigInt(b) << 56n;
        break;
      }
      value |= BigInt(b & 0x7f) << BigInt(7 * k);
      if ((b & 0x80) === 0) break;
    }
    words.push(value % 2n === 0n ? value / 2n : -(value + 1n) / 2n);
  }
  return words;
}

interface Parts {
  cookie: number;
  normalizingOffset: number;
  digits: number;
  lowest: bigint;
  highest: bigint;
  payload: number[];
  payloadLength?: number;
  trailing?: number[];
}

function inner(p: Parts): Buffer {
  const head = Buffer.alloc(40);
  head.writeUInt32BE(p.cookie >>> 0, 0);
  head.writeUInt32BE(p.payloadLength ?? p.payload.length, 4);
  head.writeUInt32BE(p.normalizingOffset, 8);
  head.writeUInt32BE(p.digits >>> 0, 12);
  head.writeBigUInt64BE(p.lowest, 16);
  head.writeBigUInt64BE(p.highest, 24);
  head.writeBigUInt64BE(1n, 32);
  return Buffer.concat([head, Buffer.from(p.payload), Buffer.from(p.trailing ?? [])]);
}

/** The compressed wrapper around an inner encoding, as encodeIntoCompressedBase64 writes it. */
function wrap(raw: Buffer, opts: { cookie?: number; lengthDelta?: number; trailing?: number[] } = {}): string {
  const z = deflateSync(raw);
  const head = Buffer.alloc(8);
  head.writeUInt32BE((opts.cookie ?? 0x1c849314) >>> 0, 0);
  head.writeUInt32BE(Math.max(0, z.length + (opts.lengthDelta ?? 0)), 4);
  return Buffer.concat([head, z, Buffer.from(opts.trailing ?? [])]).toString('base64');
}

function partsOf(encoded: string): Parts {
  const bytes = Buffer.from(encoded, 'base64');
  const raw = inflateSync(bytes.subarray(8, 8 + bytes.readUInt32BE(4)));
  const words = wordsOf(raw);
  return {
    cookie: raw.readUInt32BE(0),
    normalizingOffset: raw.readUInt32BE(8),
    digits: raw.readUInt32BE(12),
    lowest: raw.readBigUInt64BE(16),
    highest: raw.readBigUInt64BE(24),
    payload: words.flatMap((w) => varint(zigzag(w))),
  };
}
const payloadOf = (words: readonly bigint[]): number[] => words.flatMap((w) => varint(zigzag(w)));

/** Kinds of histograms kvbench stores beside the lab's: empty, zeros, one value, huge and tiny ones. */
function ownEncodings(rng: Rng): string[] {
  const of = (values: readonly number[]): string => accumulator(values).encode();
  const spread = Array.from({ length: 300 }, () => Math.round(Math.exp(Math.log(1e3) + rng.next() * Math.log(1e7))));
  return [of([]), of([0, 0, 0]), of([0, 5_000, 7e9]), of([3_000_000_017]), of([1, 2, 3, 2047]), of([9e15]), of(spread), of([2048, 4096, 8191])];
}

/** Ways to damage or alter an encoding, each a function of one good encoding. */
function mutations(good: string, rng: Rng): string[] {
  const out: string[] = [];
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rng.next() * xs.length)]!;
  const int = (n: number): number => Math.floor(rng.next() * n);
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  // The text: cut, characters swapped (for base64's own, url-safe, foreign ones), blanks, padding.
  for (let k = 0; k < 4; k++) out.push(good.slice(0, int(good.length)));
  for (let k = 0; k < 6; k++) {
    const at = int(good.length);
    out.push(good.slice(0, at) + pick([...B64, '-', '_', '*', ' ', '=', '.']) + good.slice(at + 1));
  }
  out.push(` ${good}\n`, `${good}=`, `${good}A`, `${good}AAAA`, good.replace(/=+$/, ''), `${good}====`, good.slice(0, 40).replaceAll('+', '-').replaceAll('/', '_') + good.slice(40));
  // The bytes: bits flipped anywhere; the compressed cookie and length; bytes after the stream.
  const bytes = Buffer.from(good, 'base64');
  for (let k = 0; k < 6; k++) {
    const b = Buffer.from(bytes);
    b[int(b.length)]! ^= 1 << int(8);
    out.push(b.toString('base64'));
  }
  const raw = inflateSync(bytes.subarray(8, 8 + bytes.readUInt32BE(4)));
  const p = partsOf(good);
  for (const cookie of [0x1c849304, 0x1c849324, 0x1c8493f4, 0x1c849314 ^ 0x100, 0x1c849313, 0x9c849314]) out.push(wrap(raw, { cookie }));
  for (const lengthDelta of [-1, -4, 1, 100]) out.push(wrap(raw, { lengthDelta }));
  out.push(wrap(raw, { trailing: [1, 2, 3, 4, 5] }));
  {
    // Bytes after the zlib stream but inside the stated length.
    const z = Buffer.concat([deflateSync(raw), Buffer.from([9, 9, 9])]);
    const head = Buffer.alloc(8);
    head.writeUInt32BE(0x1c849314, 0);
    head.writeUInt32BE(z.length, 4);
    out.push(Buffer.concat([head, z]).toString('base64'));
  }
  // The uncompressed form (its own cookie), which decodeFromCompressedBase64 does not read.
  out.push(raw.toString('base64'));
  // The inner encoding: cookies and word sizes, layouts, ranges, lengths, trailing bytes.
  for (const cookie of [0x1c849303, 0x1c849323, 0x1c849393, 0x1c849313 ^ 0x1000, 0x1c849304]) out.push(wrap(inner({ ...p, cookie })));
  // (4 and 5 digits make arrays of 0.2 to 5 million slots for the library: a few goods only.)
  for (const digits of rng.next() < 0.05 ? [0, 1, 2, 4, 5, 6, 0xffffffff] : [0, 2, 6, 0xffffffff]) out.push(wrap(inner({ ...p, digits })));
  for (const lowest of [0n, 2n, 1000n, 1n << 32n]) out.push(wrap(inner({ ...p, lowest })));
  for (const highest of [0n, 1n, 2n, 3n, 2047n, 2048n, 1_000_000_000_000_000n, (1n << 53n) + 1n, (1n << 64n) - 1n]) out.push(wrap(inner({ ...p, highest })));
  out.push(wrap(inner({ ...p, normalizingOffset: 12345 })));
  for (const delta of [-1, -3, 1, 2, 9, 64]) out.push(wrap(inner({ ...p, payloadLength: Math.max(0, p.payload.length + delta) })));
  out.push(wrap(inner({ ...p, trailing: [0x83, 0x01, 0x02] })), wrap(inner({ ...p, trailing: [0x81] })), wrap(inner({ ...p, payloadLength: p.payload.length + 1, trailing: [0x80] })));
  out.push(wrap(raw.subarray(0, int(raw.length))), wrap(raw.subarray(0, 39)));
  // The payload's words: counts at and past 2^53, past the array, runs of zeros, overlong varints.
  const words = wordsOf(raw);
  const at = int(Math.max(1, words.length));
  const withWord = (w: bigint): number[] => payloadOf([...words.slice(0, at), w, ...words.slice(at + 1)]);
  for (const w of [0n, 1n, -1n, (1n << 52n) - 1n, 1n << 52n, (1n << 53n) - 1n, 1n << 53n, (1n << 53n) + 1n, 1n << 60n, -1_000_000n]) out.push(wrap(inner({ ...p, payload: withWord(w) })));
  out.push(wrap(inner({ ...p, payload: payloadOf([...words, -30_000n, 5n]) })), wrap(inner({ ...p, payload: payloadOf([...words, -1_000_000n]) })), wrap(inner({ ...p, payload: payloadOf([...words, -1_000_000n, 3n]) })));
  out.push(wrap(inner({ ...p, payload: payloadOf([5n, ...words]) })), wrap(inner({ ...p, payload: payloadOf([-3n, ...words]) })), wrap(inner({ ...p, payload: [] })));
  out.push(wrap(inner({ ...p, payload: words.flatMap((w) => varint(zigzag(w), 1 + int(9))) })));
  out.push(wrap(inner({ ...p, payload: [...payloadOf(words.slice(0, at)), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, ...payloadOf(words.slice(at))] })));
  out.push(wrap(inner({ ...p, payload: [...payloadOf(words.slice(0, at)), 0x84, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, ...payloadOf(words.slice(at))] })));
  {
    // A varint cut by the payload's end (read on into the bytes after it), and one cut by the data's.
    const body = payloadOf(words);
    out.push(wrap(inner({ ...p, payload: [...body, 0x84], trailing: [0x01] })), wrap(inner({ ...p, payload: [...body, 0x84, 0x80] })));
  }
  return out;
}

describe('storedCounts', () => {
  it('reads every encoding a lab stored, as the library reads it', () => {
    const tally: Tally = { fast: 0, refused: 0, libraryOnly: 0 };
    for (const h of lab) expectAlike(h.hdr, tally);
    // None of them needed the library: the whole point.
    expect(tally).toEqual({ fast: lab.length, refused: 0, libraryOnly: 0 });
  });

  it('takes nothing the library refuses, and reads what it takes as the library does, over thousands of damaged and altered encodings', () => {
    const rng = new Rng(20261125);
    const tally: Tally = { fast: 0, refused: 0, libraryOnly: 0 };
    // Every eighth of the lab's (each mutated ~90 ways) and kvbench's own kinds: ~1,700 in all (the
    // library's decode of each, several times over, takes a minute of a loaded 2-core machine).
    const goods = [...lab.filter((_, i) => i % 8 === 0).map((h) => h.hdr), ...ownEncodings(rng)];
    let seen = 0;
    for (const good of goods) {
      for (const encoded of mutations(good, rng)) {
        expectAlike(encoded, tally);
        seen += 1;
      }
    }
    expect(seen).toBeGreaterThan(1500);
    // Every branch was met, each many times: taken by the fast reader (altered but sound), refused
    // by both, and left to the library (another layout or range, varints it rounds, bytes past the end).
    expect(tally.fast).toBeGreaterThan(250);
    expect(tally.refused).toBeGreaterThan(250);
    expect(tally.libraryOnly).toBeGreaterThan(250);
  });

  it('a zero run reaching far past the array (a damaged word) leaves the later counts out, as the library does when it is done walking it', () => {
    // The library walks a run slot by slot (a word of -2^52: days); a run ending just past the array
    // is the same histogram to it, and is what it is compared with here.
    const rng = new Rng(7);
    for (const good of [...lab.slice(0, 20).map((h) => h.hdr), ...ownEncodings(rng)]) {
      const p = partsOf(good);
      const words = wordsOf(inner(p));
      const at = Math.floor(rng.next() * words.length);
      for (const run of [-(1n << 40n), -(1n << 52n), -((1n << 52n) - 1n)]) {
        const far = (r: bigint): bigint[] => [...words.slice(0, at), r, 3n, ...words.slice(at), -(1n << 52n), -(1n << 52n), 4n];
        const near = [...words.slice(0, at), -60_000n, 3n, ...words.slice(at), -60_000n, 4n];
        const encodedFar = wrap(inner({ ...p, payload: payloadOf(far(run)) }));
        const encodedNear = wrap(inner({ ...p, payload: payloadOf(near) }));
        const fast = storedCounts(encodedFar, layout());
        const lib = libraryVerdict(encodedNear);
        expect(fast).not.toBeNull();
        expect('problem' in lib).toBe(false);
        if (fast === null || 'problem' in lib) continue;
        const counts: [number, number][] = [];
        for (let i = 0; i < fast.n; i++) counts.push([fast.indices[i]!, fast.counts[i]!]);
        expect(counts).toEqual(lib.counts);
        const [a, b] = [new LatencyHistogram(), new LatencyHistogram()];
        expect(a.mergeEncoded(encodedFar, 5)).toBe(b.mergeEncodedByLibrary(encodedNear, 5));
        expect([a.count, a.summary(), a.encode()]).toEqual([b.count, b.summary(), b.encode()]);
      }
    }
  });

  it('reads as the library inflates: with node:zlib', () => {
    expect(libraryInflate).toBe(inflateSync);
  });
});
