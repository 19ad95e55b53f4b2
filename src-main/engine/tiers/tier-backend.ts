/** The contract every KV-cache tier (GPU, CPU RAM, storage) implements for the multi-tier cache. */

export type TierName = 'gpu' | 'cpu' | 'storage';

export const TIER_ORDER: readonly TierName[] = ['gpu', 'cpu', 'storage'];

export interface EntryRef {
  key: string;
  keyHash: bigint;
  sizeBytes: number;
}

export interface ChunkView {
  index: number;
  entryOffsetBytes: number;
  /** Exactly the bytes of this chunk; a view over shared memory so byte workers can touch it. */
  buffer: Buffer;
}

/** Produces the bytes of one chunk of an entry into `chunk.buffer`. */
export type ChunkSource = (chunk: ChunkView) => Promise<void>;
/** Consumes the bytes of one chunk of an entry, while the chunk's buffer is still valid. */
export type ChunkSink = (chunk: ChunkView) => Promise<void>;

export interface OpTiming {
  startNs: bigint;
  endNs: bigint;
  durationNs: number;
  bytes: number;
  /** Storage only: the part of durationNs with at least one of this entry's I/Os in flight. */
  deviceNs?: number;
}

export interface TierBackend {
  readonly name: TierName;
  /** Stores a new entry whose bytes come from `source`, chunk by chunk. Timed start to finish. */
  write(entry: EntryRef, source: ChunkSource): Promise<OpTiming>;
  /** Reads a whole entry; `sink` sees every chunk (verification, demotion copies). */
  read(entry: EntryRef, sink?: ChunkSink): Promise<OpTiming>;
  /** Copies one chunk of a stored entry into `chunk.buffer` (the source side of a move between tiers). */
  copyChunkOut(entry: EntryRef, chunk: ChunkView): Promise<void>;
  /** Frees the entry's memory or file. */
  remove(entry: EntryRef): Promise<void>;
  close(): Promise<void>;
}

/** Why a tier is not part of this run, when it is not. */
export interface TierAvailability {
  name: TierName;
  present: boolean;
  budgetBytes: number;
  reason: string | null;
}
