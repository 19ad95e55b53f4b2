import type { BytePool } from '../io/byte-workers.ts';
import type { AlignedSlab } from '../io/aligned-slab.ts';
import { CpuArena, type ArenaSegment } from './cpu-arena.ts';
import type { ChunkProgress, ChunkSink, ChunkSource, ChunkView, EntryRef, OpTiming, TierBackend } from './tier-backend.ts';

/**
 * The arena's size for a budget: the budget plus an eighth (at least two chunks), room for the 4 KiB
 * rounding of segments and for free space the arena cannot use because it is split.
 */
export function cpuArenaCapacityBytes(budgetBytes: number, chunkBytes: number): number {
  return Math.max(budgetBytes, chunkBytes) + Math.max(Math.ceil(budgetBytes / 8), 2 * chunkBytes);
}

/**
 * CPU RAM tier: entries live in memory kvbench owns (an arena of shared regions, one segment per
 * chunk, so byte workers can copy them off the event loop; cpu-arena.ts says why an arena). A write
 * is a real copy into the entry's segments; a read is a real copy out of them into a staging buffer,
 * as a serving engine would copy KV blocks back towards the GPU.
 */
export class CpuTier implements TierBackend {
  readonly name = 'cpu' as const;
  readonly #chunkBytes: number;
  readonly #bytes: BytePool;
  readonly #staging: AlignedSlab;
  readonly #segments = new Map<string, ArenaSegment[]>();
  readonly #arena: CpuArena;
  /** Chunk copies in flight per entry: enough to keep every byte worker busy. */
  readonly #depth: number;

  constructor(opts: { chunkBytes: number; bytes: BytePool; staging: AlignedSlab; budgetBytes: number; depth: number }) {
    this.#chunkBytes = opts.chunkBytes;
    this.#bytes = opts.bytes;
    this.#staging = opts.staging;
    this.#arena = new CpuArena({ capacityBytes: cpuArenaCapacityBytes(opts.budgetBytes, opts.chunkBytes), chunkBytes: opts.chunkBytes });
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
  async copyChunkOut(entry: EntryRef, chunk: ChunkView, progress?: ChunkProgress): Promise<void> {
    const segment = this.#get(entry)[chunk.index]?.buffer;
    if (!segment || segment.length !== chunk.buffer.length) {
      throw new Error(`chunk ${chunk.index} of ${entry.key} does not match the CPU tier's segment layout`);
    }
    await this.#bytes.copy(segment, chunk.buffer);
    progress?.(chunk.buffer.length);
  }

  async remove(entry: EntryRef): Promise<void> {
    const segments = this.#segments.get(entry.key);
    if (!segments) return;
    this.#segments.delete(entry.key);
    this.#release(segments);
  }

  /** RAM the tier holds now: the part of its arena ever used (it stays resident), plus any overflow segments. */
  get heldBytes(): number {
    return this.#arena.heldBytes;
  }

  /** The most RAM the tier held at any moment of the run (what `--cpu-mem-gb` really cost). */
  get peakHeldBytes(): number {
    return this.#arena.peakHeldBytes;
  }

  /** The arena's size: the most RAM the tier can hold without overflow segments. */
  get arenaBytes(): number {
    return this.#arena.capacityBytes;
  }

  /** Chunks that found no room in the arena and got a buffer of their own (fragmentation), over the run. */
  get overflowSegments(): number {
    return this.#arena.overflowSegments;
  }

  async close(): Promise<void> {
    this.#segments.clear();
    this.#arena.close();
  }

  #get(entry: EntryRef): ArenaSegment[] {
    const segments = this.#segments.get(entry.key);
    if (!segments) throw new Error(`CPU tier has no entry ${entry.key}`);
    return segments;
  }

  #allocate(sizeBytes: number): ArenaSegment[] {
    const out: ArenaSegment[] = [];
    for (let offset = 0; offset < sizeBytes; offset += this.#chunkBytes) {
      out.push(this.#arena.allocate(Math.min(this.#chunkBytes, sizeBytes - offset)));
    }
    return out;
  }

  #release(segments: ArenaSegment[]): void {
    for (const s of segments) this.#arena.release(s);
  }

  /**
   * Runs `fn` over the entry's chunks with a bounded number in flight. On a failure no further chunk
   * starts, and it rejects only once those in flight have settled: a failed write's segments go back
   * to the arena, and another entry must not get them while a copy into them is still running.
   */
  async #forEachChunk(segments: ArenaSegment[], fn: (view: ChunkView) => Promise<void>): Promise<void> {
    let next = 0;
    let failed = false;
    const worker = async (): Promise<void> => {
      while (next < segments.length && !failed) {
        const index = next++;
        try {
          await fn({ index, entryOffsetBytes: index * this.#chunkBytes, buffer: segments[index].buffer });
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    };
    const settled = await Promise.allSettled(Array.from({ length: Math.min(this.#depth, segments.length) }, worker));
    const rejected = settled.find((r) => r.status === 'rejected');
    if (rejected) throw rejected.reason;
  }
}
