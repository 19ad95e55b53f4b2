import type { TimelinePoint } from '../../../src-shared/domain/results.ts';
import type { MultiTierCache } from '../cache/multi-tier-cache.ts';
import type { RunRecorder } from './run-recorder.ts';
import type { LatencyHistogram } from './latency-histogram.ts';
import type { MemoryPeaks, MemorySample } from './memory-usage.ts';

interface Counters {
  elapsedNs: number;
  requests: number;
  tokens: number;
  storageRead: number;
  storageWrite: number;
  cpuRead: number;
  cpuWrite: number;
}

export interface CurrentRates {
  generatedTokensPerSec: number;
  storageReadBytesPerSec: number;
  storageWriteBytesPerSec: number;
  cpuReadBytesPerSec: number;
  cpuWriteBytesPerSec: number;
  storageReadP95Ns: number | null;
}

/**
 * Samples the run's counters at a fixed interval: the throughput / latency / users timeline every
 * run records (not only autoscaled ones), and the rates progress events show.
 */
export class TimelineSampler {
  readonly #points: TimelinePoint[] = [];
  #last: Counters;
  #lastRates: CurrentRates = {
    generatedTokensPerSec: 0,
    storageReadBytesPerSec: 0,
    storageWriteBytesPerSec: 0,
    cpuReadBytesPerSec: 0,
    cpuWriteBytesPerSec: 0,
    storageReadP95Ns: null,
  };
  private readonly cache: MultiTierCache;
  private readonly recorder: RunRecorder;
  private readonly load: () => { activeUsers: number; queueDepth: number };
  private readonly memory: { sample: () => MemorySample; peaks: MemoryPeaks } | null;

  /** `memory`: sampled with every point, and its peaks kept (they outlive this sampler: the warm-up's and the window's). */
  constructor(
    cache: MultiTierCache,
    recorder: RunRecorder,
    load: () => { activeUsers: number; queueDepth: number },
    memory: { sample: () => MemorySample; peaks: MemoryPeaks } | null = null,
  ) {
    this.cache = cache;
    this.recorder = recorder;
    this.load = load;
    this.memory = memory;
    this.#last = this.#read(0);
  }

  #read(elapsedNs: number): Counters {
    const s = this.cache.tierStats.get('storage');
    const c = this.cache.tierStats.get('cpu');
    return {
      elapsedNs,
      requests: this.recorder.requestsCompleted,
      tokens: this.recorder.tokensGenerated,
      storageRead: s?.read.bytes ?? 0,
      storageWrite: s?.write.bytes ?? 0,
      cpuRead: c?.read.bytes ?? 0,
      cpuWrite: c?.write.bytes ?? 0,
    };
  }

  sample(elapsedNs: number): void {
    const now = this.#read(elapsedNs);
    const intervalNs = now.elapsedNs - this.#last.elapsedNs;
    if (intervalNs <= 0) return;
    const perSec = (d: number): number => (d * 1e9) / intervalNs;
    const storageHist: LatencyHistogram | undefined = this.cache.tierStats.get('storage')?.read.latency;
    this.#lastRates = {
      generatedTokensPerSec: perSec(now.tokens - this.#last.tokens),
      storageReadBytesPerSec: perSec(now.storageRead - this.#last.storageRead),
      storageWriteBytesPerSec: perSec(now.storageWrite - this.#last.storageWrite),
      cpuReadBytesPerSec: perSec(now.cpuRead - this.#last.cpuRead),
      cpuWriteBytesPerSec: perSec(now.cpuWrite - this.#last.cpuWrite),
      storageReadP95Ns: storageHist && storageHist.count > 0 ? storageHist.percentileNs(95) : null,
    };
    const load = this.load();
    const memory = this.memory?.sample() ?? null;
    if (memory) this.memory!.peaks.observe(memory);
    this.#points.push({
      elapsed_ns: now.elapsedNs,
      interval_ns: intervalNs,
      requests_completed: now.requests,
      generated_tokens_per_sec: this.#lastRates.generatedTokensPerSec,
      requests_per_sec: perSec(now.requests - this.#last.requests),
      storage_read_bytes_per_sec: this.#lastRates.storageReadBytesPerSec,
      storage_write_bytes_per_sec: this.#lastRates.storageWriteBytesPerSec,
      cpu_read_bytes_per_sec: this.#lastRates.cpuReadBytesPerSec,
      cpu_write_bytes_per_sec: this.#lastRates.cpuWriteBytesPerSec,
      active_users: load.activeUsers,
      queue_depth: load.queueDepth,
      e2e_latency_p95_to_date_ns: this.recorder.endToEnd.count > 0 ? this.recorder.endToEnd.percentileNs(95) : null,
      storage_read_p95_to_date_ns: this.#lastRates.storageReadP95Ns,
      ...(memory
        ? {
            rss_bytes: memory.rssBytes,
            heap_used_bytes: memory.heapUsedBytes,
            external_bytes: memory.externalBytes,
            array_buffers_bytes: memory.arrayBuffersBytes,
            byte_workers_heap_used_bytes: memory.byteWorkersHeapUsedBytes,
          }
        : {}),
    });
    this.#last = now;
  }

  current(): CurrentRates {
    return this.#lastRates;
  }

  points(): TimelinePoint[] {
    return this.#points;
  }
}
