// RAM for the CPU tier: a few large shared regions reserved when the tier opens, handed to entries'
// chunks as byte extents and taken back when they leave, so what the tier costs in RAM is bounded by
// the regions and never waits for a garbage collection.
//
// Why not one SharedArrayBuffer per chunk (kvbench 0.7.0 and before): a SharedArrayBuffer cannot be
// freed explicitly; one the tier lets go of stays resident until the engine's next major GC. Entries'
// last chunks come in every size, so segments churned: a 60 s run of 200 users beside a 1 GiB tier
// carried up to 800 MiB of such garbage (array buffers 1.1 → 1.9 GiB between two GCs), and the
// engine's RSS reached 2.5-3.0 GiB.
//
// The regions are ordinary zero-filled allocations, which the kernel maps lazily: a page counts in
// RSS once it has been written, so the tier's RSS is the part of the regions ever used (`touchedBytes`),
// at most their size. Whole chunks are taken first-fit from the low end, partial chunks (an entry's
// last chunk, a small entry) best-fit from the high end, so the holes whole chunks leave stay whole
// chunks and tails do not splinter them. Should no extent fit anyway (free space too fragmented), the
// chunk gets a buffer of its own, counted as an overflow and never hidden.

import { insertFreeExtent, type FreeExtents } from './free-extents.ts';

/** Extents are rounded up to this: a chunk's segment is at most 4 KiB larger than its bytes. */
export const CPU_ARENA_GRANULE_BYTES = 4096;
/** Unit of the touched-memory accounting (one mark per 64 KiB of region). */
const TOUCH_PAGE_BYTES = 64 * 1024;
/** Regions of about this size: no single allocation comes near the limits of one buffer. */
const PREFERRED_REGION_BYTES = 1024 * 1024 * 1024;

export interface ArenaSegment {
  /** Exactly the chunk's bytes: a view into a region (or into the segment's own buffer on overflow). */
  readonly buffer: Buffer;
  /** Region index; -1 for an overflow segment (a buffer of its own). */
  readonly region: number;
  readonly offset: number;
  /** Bytes the segment takes (its length rounded up to the granule). */
  readonly bytes: number;
}

interface Region extends FreeExtents {
  sab: SharedArrayBuffer;
  bytes: number;
  /** One mark per TOUCH_PAGE_BYTES ever handed out. */
  touched: Uint8Array;
}

function roundUp(n: number, multiple: number): number {
  return Math.ceil(n / multiple) * multiple;
}

export class CpuArena {
  readonly chunkBytes: number;
  readonly capacityBytes: number;
  readonly #regions: Region[] = [];
  #usedBytes = 0;
  #touchedBytes = 0;
  #overflowLiveBytes = 0;
  #peakHeldBytes = 0;
  /** Segments that found no extent and got a buffer of their own, over the arena's life. */
  overflowSegments = 0;
  #closed = false;

  /** `capacityBytes`: the regions' total, rounded up to whole granules. */
  constructor(opts: { capacityBytes: number; chunkBytes: number }) {
    const { chunkBytes } = opts;
    if (!Number.isSafeInteger(chunkBytes) || chunkBytes <= 0 || chunkBytes % CPU_ARENA_GRANULE_BYTES !== 0) {
      throw new RangeError(`chunkBytes must be a positive multiple of ${CPU_ARENA_GRANULE_BYTES} (got ${chunkBytes})`);
    }
    if (!(opts.capacityBytes > 0)) throw new RangeError(`capacityBytes must be positive (got ${opts.capacityBytes})`);
    this.chunkBytes = chunkBytes;
    this.capacityBytes = roundUp(opts.capacityBytes, CPU_ARENA_GRANULE_BYTES);
    // Whole chunks per region, so whole-chunk extents tile a region exactly.
    const regionBytes = Math.max(chunkBytes, Math.floor(PREFERRED_REGION_BYTES / chunkBytes) * chunkBytes);
    for (let at = 0; at < this.capacityBytes; at += regionBytes) {
      const bytes = Math.min(regionBytes, this.capacityBytes - at);
      this.#regions.push({ sab: new SharedArrayBuffer(bytes), bytes, free: [[0, bytes]], freeBytes: bytes, touched: new Uint8Array(Math.ceil(bytes / TOUCH_PAGE_BYTES)) });
    }
  }

  /** Bytes of the segments live now (regions and overflow). */
  get usedBytes(): number {
    return this.#usedBytes + this.#overflowLiveBytes;
  }

  /** RAM the arena holds now: region pages ever handed out (they stay resident) plus live overflow segments. */
  get heldBytes(): number {
    return this.#touchedBytes + this.#overflowLiveBytes;
  }

  /** The most RAM the arena held at any moment. */
  get peakHeldBytes(): number {
    return this.#peakHeldBytes;
  }

  /** A segment for `lengthBytes` (1..chunkBytes) of one chunk. */
  allocate(lengthBytes: number): ArenaSegment {
    if (this.#closed) throw new Error('the CPU arena has been closed');
    if (!Number.isSafeInteger(lengthBytes) || lengthBytes <= 0 || lengthBytes > this.chunkBytes) {
      throw new RangeError(`allocate: length must be 1..${this.chunkBytes} bytes (got ${lengthBytes})`);
    }
    const bytes = roundUp(lengthBytes, CPU_ARENA_GRANULE_BYTES);
    const found = bytes === this.chunkBytes ? this.#firstFitLow(bytes) : this.#bestFitHigh(bytes);
    let segment: ArenaSegment;
    if (found === null) {
      this.overflowSegments++;
      this.#overflowLiveBytes += bytes;
      segment = { buffer: Buffer.from(new SharedArrayBuffer(bytes), 0, lengthBytes), region: -1, offset: 0, bytes };
    } else {
      const [regionIndex, offset] = found;
      const region = this.#regions[regionIndex];
      this.#usedBytes += bytes;
      this.#touch(region, offset, bytes);
      segment = { buffer: Buffer.from(region.sab, offset, lengthBytes), region: regionIndex, offset, bytes };
    }
    this.#peakHeldBytes = Math.max(this.#peakHeldBytes, this.heldBytes);
    return segment;
  }

  release(segment: ArenaSegment): void {
    if (this.#closed) return;
    if (segment.region === -1) {
      this.#overflowLiveBytes -= segment.bytes;
      return;
    }
    const region = this.#regions[segment.region];
    if (region === undefined || segment.offset < 0 || segment.offset + segment.bytes > region.bytes) {
      throw new Error(`release: segment outside region ${segment.region}`);
    }
    insertFreeExtent(region, segment.offset, segment.bytes);
    this.#usedBytes -= segment.bytes;
  }

  /** Lets go of the regions (end of run). */
  close(): void {
    this.#closed = true;
    this.#regions.length = 0;
    this.#usedBytes = 0;
    this.#touchedBytes = 0;
    this.#overflowLiveBytes = 0;
  }

  /** Lowest free range that fits, taken from its low end. */
  #firstFitLow(bytes: number): [number, number] | null {
    for (let r = 0; r < this.#regions.length; r++) {
      const region = this.#regions[r];
      if (region.freeBytes < bytes) continue;
      for (let i = 0; i < region.free.length; i++) {
        const range = region.free[i];
        if (range[1] < bytes) continue;
        const offset = range[0];
        if (range[1] === bytes) region.free.splice(i, 1);
        else {
          range[0] += bytes;
          range[1] -= bytes;
        }
        region.freeBytes -= bytes;
        return [r, offset];
      }
    }
    return null;
  }

  /** Smallest free range that fits (the highest of equals), taken from its high end. */
  #bestFitHigh(bytes: number): [number, number] | null {
    let best: { r: number; i: number } | null = null;
    let bestLength = Number.POSITIVE_INFINITY;
    for (let r = this.#regions.length - 1; r >= 0; r--) {
      const region = this.#regions[r];
      if (region.freeBytes < bytes) continue;
      for (let i = region.free.length - 1; i >= 0; i--) {
        const length = region.free[i][1];
        if (length >= bytes && length < bestLength) {
          best = { r, i };
          bestLength = length;
          if (length === bytes) break;
        }
      }
      if (bestLength === bytes) break;
    }
    if (best === null) return null;
    const region = this.#regions[best.r];
    const range = region.free[best.i];
    const offset = range[0] + range[1] - bytes;
    if (range[1] === bytes) region.free.splice(best.i, 1);
    else range[1] -= bytes;
    region.freeBytes -= bytes;
    return [best.r, offset];
  }

  #touch(region: Region, offset: number, bytes: number): void {
    const end = Math.ceil((offset + bytes) / TOUCH_PAGE_BYTES);
    for (let p = Math.floor(offset / TOUCH_PAGE_BYTES); p < end; p++) {
      if (region.touched[p] === 1) continue;
      region.touched[p] = 1;
      this.#touchedBytes += Math.min(TOUCH_PAGE_BYTES, region.bytes - p * TOUCH_PAGE_BYTES);
    }
  }
}
