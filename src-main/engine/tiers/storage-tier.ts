import type { EntryFileStore } from '../io/entry-file-store.ts';
import type { ChunkProgress, ChunkSink, ChunkSource, ChunkView, EntryRef, OpTiming, TierBackend } from './tier-backend.ts';

/** The storage tier: one file per entry in the run-owned directory, direct I/O where the filesystem allows. */
export class StorageTier implements TierBackend {
  readonly name = 'storage' as const;

  readonly store: EntryFileStore;

  constructor(store: EntryFileStore) {
    this.store = store;
  }

  write(entry: EntryRef, source: ChunkSource, progress?: ChunkProgress): Promise<OpTiming> {
    return this.store.write(entry.key, entry.sizeBytes, source, { progress });
  }

  read(entry: EntryRef, sink?: ChunkSink, progress?: ChunkProgress): Promise<OpTiming> {
    return this.store.read(entry.key, entry.sizeBytes, { sink, progress });
  }

  /** Copies one chunk out (the source side of a promotion to a faster tier). */
  async copyChunkOut(entry: EntryRef, chunk: ChunkView, progress?: ChunkProgress): Promise<void> {
    await this.store.readChunkInto(entry.key, entry.sizeBytes, chunk.index, chunk.buffer);
    progress?.(chunk.buffer.length);
  }

  remove(entry: EntryRef): Promise<void> {
    return this.store.delete(entry.key);
  }

  close(): Promise<void> {
    return this.store.removeAll();
  }
}
