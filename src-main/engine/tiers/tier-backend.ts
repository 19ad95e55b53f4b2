/** The contract every KV-cache tier (GPU, CPU RAM, storage) implements for the multi-tier cache. */
import type { ChunkSink, ChunkSource, ChunkView, IoTiming } from '../io/entry-file-store.ts';
import type { TierName } from '../../../src-shared/domain/tiers.ts';

export type { TierName };

export interface EntryRef {
  key: string;
  keyHash: bigint;
  sizeBytes: number;
}

// Chunks are the unit every tier moves; the storage layer defines them and every tier shares them.
export type { ChunkSink, ChunkSource, ChunkView } from '../io/entry-file-store.ts';

/**
 * Told the bytes of each chunk as soon as they have moved (the chunk's I/O or copy completed), so
 * byte counters stop exactly when the measured window closes, mid-entry if need be.
 */
export type ChunkProgress = (bytes: number) => void;

/**
 * The source side of a move between tiers: each chunk it copies out is counted as a read of the tier it
 * leaves. `countCopiedOut` is that counter, for a destination that moves no bytes and so never calls
 * the source (trace-only mode's NullTier): it reports the bytes itself, as a real copy's chunks would.
 */
export type MoveSource = ChunkSource & { readonly countCopiedOut: ChunkProgress };

/** The source-side counter of a move, or null for any other source (a new entry's payload). */
export function copiedOutCounter(source: ChunkSource): ChunkProgress | null {
  return (source as Partial<MoveSource>).countCopiedOut ?? null;
}

/** One whole-entry operation. Storage also says how much of it had I/O in flight (`deviceNs`). */
export type OpTiming = Omit<IoTiming, 'deviceNs'> & { deviceNs?: number };

export interface TierBackend {
  readonly name: TierName;
  /** Stores a new entry whose bytes come from `source`, chunk by chunk. Timed start to finish. */
  write(entry: EntryRef, source: ChunkSource, progress?: ChunkProgress): Promise<OpTiming>;
  /** Reads a whole entry; `sink` sees every chunk (verification, demotion copies). */
  read(entry: EntryRef, sink?: ChunkSink, progress?: ChunkProgress): Promise<OpTiming>;
  /**
   * Copies one chunk of a stored entry into `chunk.buffer` (the source side of a move between tiers),
   * and tells `progress` its bytes once they are there, as `read` does: a tier that counts its own
   * copies (the GPU tier) counts them in the same step, so a window closing between the two cannot
   * count the chunk on one side only.
   */
  copyChunkOut(entry: EntryRef, chunk: ChunkView, progress?: ChunkProgress): Promise<void>;
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
