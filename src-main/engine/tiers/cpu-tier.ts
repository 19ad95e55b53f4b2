import type { BytePool } from '../io/byte-workers.ts';
import type { AlignedSlab } from '../io/aligned-slab.ts';
import type { ChunkProgress, ChunkSink, ChunkSource, ChunkView, EntryRef, OpTiming, TierBackend } from './tier-backend.ts';

/** Size classes step by 1/8 of a power of two, so a segment is at most 12.5 % above its chunk. */
const SIZE_CLASS_STEPS_PER_DOUBLING = 8;
const MIN_SIZE_CLASS_STEP_BYTES = 64;

/**
 * The segment size a chunk of `len` bytes gets: `len` rounded up to the next of 8 steps between two
 * powers of two (64-byte steps below 512 B), capped at the chunk size.
 */
export function cpuSizeClass(len: number, chunkBytes: number): number {
  if (len >= chunkBytes) return chunkBytes;
  const step = Math.max(MIN_SIZE_CLASS_STEP_BYTES, 2 ** Math.floor(Math.log2(len)) / SIZE_CLASS_STEPS_PER_DOUBLING);
  return Math.min(chunkBytes, Math.ceil(len / step) * step);
}

/**
 * CPU RAM tier: entries live in memory kvbench owns (shared segments of one chunk each, so byte
 * workers can copy them off the event loop). A write is a real copy into the entry's segments; a read
 * is a real copy out of them into a staging buffer, as a serving engine would copy KV blocks back
 * towards the GPU.
 */
export class CpuTier implements TierBackend {
  readonly name = 'cpu' as const;
  readonly #chunkBytes: number;
  readonly #bytes: BytePool;
  readonly #staging: AlignedSlab;
  readonly #segments = new Map<string, Buffer[]>();
  /**
   * Freed segments kept for reuse, by size class (see cpuSizeClass), so the tier's memory stays
   * bounded by its budget whatever the entry sizes, without waiting for GC.
   */
  readonly #free = new Map<number, SharedArrayBuffer[]>();
  #pooledBytes = 0;
  /** Bytes of the segments entries hold now (size classes, so up to 12.5 % above the entries' sizes). */
  #liveBytes = 0;
  #peakHeldBytes = 0;
  /** Pooling stops where live plus pooled memory would exceed this: the budget (and at least one chunk). */
  readonly #maxHeldBytes: number;
  /** Chunk copies in flight per entry: enough to keep every byte worker busy. */
  readonly #depth: number;

  constructor(opts: { chunkBytes: number; bytes: BytePool; staging: AlignedSlab; budgetBytes: number; depth: number }) {
    this.#chunkBytes = opts.chunkBytes;
    this.#bytes = opts.bytes;
    this.#staging = opts.staging;
    this.#maxHeldBytes = Math.max(opts.chunkBytes, opts.budgetBytes);
    this.#depth = Math.max(1, opts.depth);
  }

  async write(entry: EntryRef, source: ChunkSource, progress?: ChunkProgress): Promise<OpTiming> {
    const startNs = process.hrtime.bigint();
    const segments = this.#allocate(entry.sizeBytes);
    try {
      await this.#forEachChunk(segments, async (view) => {
        await source(view);
        progress?.(view.buffer.length);
      });
    } catch (err) {
      this.#release(segments);
      throw err;
    }
    this.#segments.set(entry.key, segments);
    const endNs = process.hrtime.bigint();
    return { startNs, endNs, durationNs: Number(endNs - startNs), bytes: entry.sizeBytes };
  }

  async read(entry: EntryRef, sink?: ChunkSink, progress?: ChunkProgress): Promise<OpTiming> {
    const segments = this.#get(entry);
    const startNs = process.hrtime.bigint();
    await this.#forEachChunk(segments, async (view) => {
      const slot = await this.#staging.acquire();
      try {
        const dest = slot.buffer.subarray(0, view.buffer.length);
        await this.#bytes.copy(view.buffer, dest);
        progress?.(dest.length);
        if (sink) await sink({ index: view.index, entryOffsetBytes: view.entryOffsetBytes, buffer: dest });
      } finally {
        this.#staging.release(slot);
      }
    });
    const endNs = process.hrtime.bigint();
    return { startNs, endNs, durationNs: Number(endNs - startNs), bytes: entry.sizeBytes };
  }

  /** Copies one chunk out (the source side of a demotion to the tier below). */
  async copyChunkOut(entry: EntryRef, chunk: ChunkView): Promise<void> {
    const segment = this.#get(entry)[chunk.index];
    if (!segment || segment.length !== chunk.buffer.length) {
      throw new Error(`chunk ${chunk.index} of ${entry.key} does not match the CPU tier's segment layout`);
    }
    await this.#bytes.copy(segment, chunk.buffer);
  }

  async remove(entry: EntryRef): Promise<void> {
    const segments = this.#segments.get(entry.key);
    if (!segments) return;
    this.#segments.delete(entry.key);
    this.#release(segments);
  }

  /** Memory the tier holds now: entries' segments plus freed segments kept for reuse. */
  get heldBytes(): number {
    return this.#liveBytes + this.#pooledBytes;
  }

  /** The most memory the tier held at any moment of the run (what `--cpu-mem-gb` really cost). */
  get peakHeldBytes(): number {
    return this.#peakHeldBytes;
  }

  async close(): Promise<void> {
    this.#segments.clear();
    this.#free.clear();
    this.#pooledBytes = 0;
    this.#liveBytes = 0;
  }

  #get(entry: EntryRef): Buffer[] {
    const segments = this.#segments.get(entry.key);
    if (!segments) throw new Error(`CPU tier has no entry ${entry.key}`);
    return segments;
  }

  #allocate(sizeBytes: number): Buffer[] {
    const out: Buffer[] = [];
    for (let offset = 0; offset < sizeBytes; offset += this.#chunkBytes) {
      const len = Math.min(this.#chunkBytes, sizeBytes - offset);
      const cls = cpuSizeClass(len, this.#chunkBytes);
      const reused = this.#free.get(cls)?.pop();
      if (reused) this.#pooledBytes -= cls;
      else this.#shrinkPoolToFit(cls);
      this.#liveBytes += cls;
      out.push(Buffer.from(reused ?? new SharedArrayBuffer(cls), 0, len));
    }
    this.#peakHeldBytes = Math.max(this.#peakHeldBytes, this.heldBytes);
    return out;
  }

  #release(segments: Buffer[]): void {
    for (const s of segments) {
      const sab = s.buffer as SharedArrayBuffer;
      const cls = sab.byteLength;
      this.#liveBytes -= cls;
      if (this.#liveBytes + this.#pooledBytes + cls > this.#maxHeldBytes) continue;
      let list = this.#free.get(cls);
      if (!list) this.#free.set(cls, (list = []));
      list.push(sab);
      this.#pooledBytes += cls;
    }
  }

  /**
   * Lets go of pooled segments of other sizes until a new segment of `cls` bytes fits within the
   * budget beside what is held, so a shift in entry sizes cannot leave a budget's worth of unusable
   * segments pooled next to a budget's worth of live ones.
   */
  #shrinkPoolToFit(cls: number): void {
    for (const [size, list] of this.#free) {
      while (list.length > 0 && this.#liveBytes + this.#pooledBytes + cls > this.#maxHeldBytes) {
        list.pop();
        this.#pooledBytes -= size;
      }
      if (list.length === 0) this.#free.delete(size);
      if (this.#liveBytes + this.#pooledBytes + cls <= this.#maxHeldBytes) return;
    }
  }

  /** Runs `fn` over the entry's chunks with a bounded number in flight. */
  async #forEachChunk(segments: Buffer[], fn: (view: ChunkView) => Promise<void>): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < segments.length) {
        const index = next++;
        await fn({ index, entryOffsetBytes: index * this.#chunkBytes, buffer: segments[index] });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#depth, segments.length) }, worker));
  }
}
