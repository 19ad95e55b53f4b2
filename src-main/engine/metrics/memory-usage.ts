// What the engine's memory is made of, sampled with the timeline, so a run shows what grew (the JS
// heap, buffers outside it) beside what was reserved up front (the CPU tier's arena, the I/O buffers).

/** One sample of the engine process's memory, in bytes. */
export interface MemorySample {
  rssBytes: number;
  /** The main thread's JS heap in use. */
  heapUsedBytes: number;
  /**
   * Memory outside the main thread's JS heap that JS objects hold: plain ArrayBuffers are in it, but
   * Node 24 counts no SharedArrayBuffer here (the CPU tier's arena is one) and no shared WebAssembly
   * memory (the storage I/O buffers): +256 MiB of either leaves it unchanged.
   */
  externalBytes: number;
  /**
   * ArrayBuffers and SharedArrayBuffers (the CPU tier's arena among them): not a part of
   * `externalBytes`, and overlapping it (the plain ArrayBuffers are in both). The storage I/O buffers,
   * shared WebAssembly memory, are in neither: FixedBuffers.storageIoBuffersBytes says them.
   */
  arrayBuffersBytes: number;
  /** The byte-worker threads' JS heaps in use, summed; null until first measured. */
  byteWorkersHeapUsedBytes: number | null;
}

/** Buffers the engine reserves when the run starts and holds to its end, in bytes. */
export interface FixedBuffers {
  /** The CPU tier's arena (0 without a CPU tier): only the part ever used becomes resident. */
  cpuTierArenaBytes: number;
  /** Storage I/O buffers: --io-depth × --io-chunk-mib. */
  storageIoBuffersBytes: number;
  /** Buffers CPU-tier reads copy into. */
  cpuReadStagingBytes: number;
  /** The payload pool entries' bytes are made from. */
  payloadPoolBytes: number;
  /** The GPU tier's staging buffers (0 without a GPU tier): page-locked (pinned) host memory unless the driver refused. */
  gpuStagingBytes: number;
  /** Whether they are page-locked; null without a GPU tier. */
  gpuStagingPinned: boolean | null;
}

export function sampleMemory(byteWorkersHeapUsedBytes: number | null): MemorySample {
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed, externalBytes: m.external, arrayBuffersBytes: m.arrayBuffers, byteWorkersHeapUsedBytes };
}

/** The largest value of each kind over the samples (each kind's own peak, not one moment's). */
export class MemoryPeaks {
  #peak: MemorySample | null = null;

  observe(s: MemorySample): void {
    const p = this.#peak;
    this.#peak =
      p === null
        ? { ...s }
        : {
            rssBytes: Math.max(p.rssBytes, s.rssBytes),
            heapUsedBytes: Math.max(p.heapUsedBytes, s.heapUsedBytes),
            externalBytes: Math.max(p.externalBytes, s.externalBytes),
            arrayBuffersBytes: Math.max(p.arrayBuffersBytes, s.arrayBuffersBytes),
            byteWorkersHeapUsedBytes:
              s.byteWorkersHeapUsedBytes === null ? p.byteWorkersHeapUsedBytes : Math.max(p.byteWorkersHeapUsedBytes ?? 0, s.byteWorkersHeapUsedBytes),
          };
  }

  get peak(): MemorySample | null {
    return this.#peak;
  }
}
