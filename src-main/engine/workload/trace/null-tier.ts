import { copiedOutCounter, type ChunkProgress, type ChunkSink, type ChunkSource, type ChunkView, type EntryRef, type OpTiming, type TierBackend, type TierName } from '../../tiers/tier-backend.ts';

/**
 * A tier that moves no bytes (trace-only mode, the reference's NullBackend): every write, read and
 * removal succeeds at once with a zero-duration timing, so the cache's placement, LRU and demotion
 * logic runs exactly as with real tiers while the I/O trace records what would have been done. No
 * payload is produced (the source is never called) and sinks see nothing (verification is moot); the
 * bytes are counted as if they had moved, on both sides of a move between tiers.
 */
export class NullTier implements TierBackend {
  readonly name: TierName;
  readonly #waitForRoom: (() => Promise<void>) | null;
  writes = 0;
  reads = 0;
  removes = 0;

  /** `waitForRoom`: awaited before every operation, so a trace log that falls behind slows the run instead of growing. */
  constructor(name: TierName, opts: { waitForRoom?: () => Promise<void> } = {}) {
    this.name = name;
    this.#waitForRoom = opts.waitForRoom ?? null;
  }

  async write(entry: EntryRef, source: ChunkSource, progress?: ChunkProgress): Promise<OpTiming> {
    if (this.#waitForRoom) await this.#waitForRoom();
    this.writes++;
    // The bytes the trace says would have moved, counted as if they had (at once). A demotion's or
    // promotion's source counts its side in its own chunk callback, which is never called here, so it
    // is told the bytes directly: they are a read of the tier the entry leaves, as in a real run.
    progress?.(entry.sizeBytes);
    copiedOutCounter(source)?.(entry.sizeBytes);
    return this.#timing(entry);
  }

  async read(entry: EntryRef, _sink?: ChunkSink, progress?: ChunkProgress): Promise<OpTiming> {
    if (this.#waitForRoom) await this.#waitForRoom();
    this.reads++;
    progress?.(entry.sizeBytes);
    return this.#timing(entry);
  }

  async remove(_entry: EntryRef): Promise<void> {
    this.removes++;
  }

  /** Demotion copies out of this tier: nothing to copy, but the chunk counts as moved. */
  async copyChunkOut(_entry: EntryRef, chunk: ChunkView, progress?: ChunkProgress): Promise<void> {
    progress?.(chunk.buffer.length);
  }

  async close(): Promise<void> {}

  #timing(entry: EntryRef): OpTiming {
    const now = process.hrtime.bigint();
    const t: OpTiming = { startNs: now, endNs: now, durationNs: 0, bytes: entry.sizeBytes };
    if (this.name === 'storage') t.deviceNs = 0;
    return t;
  }
}
