import { MultiTierCache } from '../../src-main/engine/cache/multi-tier-cache.ts';
import type { ChunkProgress, ChunkSink, ChunkSource, ChunkView, EntryRef, OpTiming, TierBackend, TierName } from '../../src-main/engine/tiers/tier-backend.ts';

/**
 * A tier that keeps entries in plain memory, chunk by chunk, with real copies. Stands in for the GPU
 * tier (no GPU here) and keeps placement tests fast; `delayMs` lets tests hold operations in flight.
 */
export class MemoryTier implements TierBackend {
  readonly name: TierName;
  readonly chunkBytes: number;
  readonly entries = new Map<string, Buffer[]>();
  readonly log: string[] = [];
  delayMs = 0;
  /** When set, every write fails with it after its first chunk (a full or failing device). */
  failWrites: Error | null = null;

  constructor(name: TierName, chunkBytes = 1024) {
    this.name = name;
    this.chunkBytes = chunkBytes;
  }

  async write(entry: EntryRef, source: ChunkSource, progress?: ChunkProgress): Promise<OpTiming> {
    const start = process.hrtime.bigint();
    const chunks: Buffer[] = [];
    for (let off = 0, i = 0; off < entry.sizeBytes; off += this.chunkBytes, i++) {
      const buffer = Buffer.from(new SharedArrayBuffer(Math.min(this.chunkBytes, entry.sizeBytes - off)));
      await source({ index: i, entryOffsetBytes: off, buffer });
      chunks.push(buffer);
      progress?.(buffer.length);
      if (this.failWrites) throw this.failWrites;
    }
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    this.entries.set(entry.key, chunks);
    this.log.push(`write ${entry.key}`);
    const end = process.hrtime.bigint();
    return { startNs: start, endNs: end, durationNs: Number(end - start), bytes: entry.sizeBytes };
  }

  async read(entry: EntryRef, sink?: ChunkSink, progress?: ChunkProgress): Promise<OpTiming> {
    const start = process.hrtime.bigint();
    const chunks = this.entries.get(entry.key);
    if (!chunks) throw new Error(`${this.name}: no entry ${entry.key}`);
    if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
    for (let i = 0; i < chunks.length; i++) {
      const copy = Buffer.from(new SharedArrayBuffer(chunks[i].length));
      chunks[i].copy(copy);
      progress?.(copy.length);
      if (sink) await sink({ index: i, entryOffsetBytes: i * this.chunkBytes, buffer: copy });
    }
    this.log.push(`read ${entry.key}`);
    const end = process.hrtime.bigint();
    return { startNs: start, endNs: end, durationNs: Number(end - start), bytes: entry.sizeBytes };
  }

  async copyChunkOut(entry: EntryRef, chunk: ChunkView, progress?: ChunkProgress): Promise<void> {
    const chunks = this.entries.get(entry.key);
    if (!chunks) throw new Error(`${this.name}: no entry ${entry.key}`);
    chunks[chunk.index].copy(chunk.buffer);
    progress?.(chunk.buffer.length);
  }

  async remove(entry: EntryRef): Promise<void> {
    this.entries.delete(entry.key);
    this.log.push(`remove ${entry.key}`);
  }

  async close(): Promise<void> {
    this.entries.clear();
  }
}

/** The tier double used last in a hierarchy (where the storage tier sits). */
export class TerminalMemoryTier extends MemoryTier {}

/** A source that stamps every byte of chunk i of `key` with a recognisable value. */
export function patternSource(seed: number): ChunkSource {
  return async (chunk) => {
    for (let i = 0; i < chunk.buffer.length; i++) chunk.buffer[i] = (seed + chunk.entryOffsetBytes + i) & 0xff;
  };
}

/** GPU → CPU → storage over memory doubles with 64-byte chunks, as the three-tier cache tests use them. */
export function threeTierCache(
  budgets: { gpu: number; cpu: number; storage: number },
  rules?: ConstructorParameters<typeof MultiTierCache>[1],
): { gpu: MemoryTier; cpu: MemoryTier; storage: TerminalMemoryTier; cache: MultiTierCache } {
  const gpu = new MemoryTier('gpu', 64);
  const cpu = new MemoryTier('cpu', 64);
  const storage = new TerminalMemoryTier('storage', 64);
  const cache = new MultiTierCache(
    [
      { backend: gpu, budgetBytes: budgets.gpu },
      { backend: cpu, budgetBytes: budgets.cpu },
      { backend: storage, budgetBytes: budgets.storage },
    ],
    rules,
  );
  return { gpu, cpu, storage, cache };
}
