import { LatencyHistogram } from './latency-histogram.ts';
import type { OpTiming, TierName } from '../tiers/tier-backend.ts';

const MIB = 1024 * 1024;

/** Byte counters and latency distributions of one direction (read or write) of one tier. */
export class DirectionStats {
  /** Bytes moved, counted chunk by chunk as each completes (so a window can close mid-entry). */
  bytes = 0;
  /** Whole operations completed. */
  ops = 0;
  /**
   * The part of `bytes` and `ops` that moved entries between tiers (demotions, promotions) rather
   * than serving a request: the reference's request-level totals leave it out.
   */
  movedBytes = 0;
  movedOps = 0;
  readonly latency = new LatencyHistogram();
  /**
   * Latency ÷ the entry's MiB, over entries of at least `perMiBMinEntryBytes` (one I/O chunk):
   * compares drives across entry sizes. A smaller entry is one I/O whose time is mostly the
   * per-entry fixed cost (open, the fdatasync, close): divided by a fraction of a MiB it would set
   * the upper percentiles by how many such entries a run happened to move (docs/metrics.md).
   */
  readonly nsPerMiB = new LatencyHistogram();
  readonly perMiBMinEntryBytes: number;
  /** Time with at least one of the operation's I/Os in flight at the device (storage tier only). */
  readonly deviceLatency = new LatencyHistogram();
  /** The rest of the operation's time: producing or consuming bytes, waiting for an I/O slot, open/close. */
  readonly hostLatency = new LatencyHistogram();
  /** Latencies since the autoscaler last looked: its decisions use recent behaviour, not the whole run. */
  readonly windowLatency = new LatencyHistogram();
  /**
   * When each whole-entry operation still in flight began, by id. A Map iterates in insertion order
   * and operations begin in time order, so the first is the oldest: how long it has taken so far is a
   * lower bound of its latency, which the autoscaler needs when nothing completed in its interval.
   */
  readonly #inFlightStartNs = new Map<number, bigint>();
  #nextOpId = 0;

  /** `perMiBMinEntryBytes`: the run's I/O chunk; smaller entries stay out of `nsPerMiB`. */
  constructor(perMiBMinEntryBytes: number) {
    this.perMiBMinEntryBytes = perMiBMinEntryBytes;
  }

  /** A whole-entry operation begins; `end` with the id it returns when it has completed or failed. */
  begin(startNs: bigint = process.hrtime.bigint()): number {
    const id = this.#nextOpId++;
    this.#inFlightStartNs.set(id, startNs);
    return id;
  }

  end(id: number): void {
    this.#inFlightStartNs.delete(id);
  }

  /** When the oldest operation still in flight began, or null when none is. */
  oldestInFlightStartNs(): bigint | null {
    for (const startNs of this.#inFlightStartNs.values()) return startNs;
    return null;
  }

  /** A completed whole-entry operation (its bytes were counted chunk by chunk as they moved). */
  record(timing: OpTiming): void {
    this.ops += 1;
    this.latency.record(timing.durationNs);
    this.windowLatency.record(timing.durationNs);
    if (timing.bytes > 0 && timing.bytes >= this.perMiBMinEntryBytes) this.nsPerMiB.record((timing.durationNs * MIB) / timing.bytes);
    if (timing.deviceNs !== undefined) {
      this.deviceLatency.record(timing.deviceNs);
      this.hostLatency.record(Math.max(0, timing.durationNs - timing.deviceNs));
    }
  }

  /** Zeroes the counters; operations in flight stay in flight (they end later, in the new window). */
  reset(): void {
    this.bytes = 0;
    this.ops = 0;
    this.movedBytes = 0;
    this.movedOps = 0;
    this.latency.reset();
    this.nsPerMiB.reset();
    this.deviceLatency.reset();
    this.hostLatency.reset();
    this.windowLatency.reset();
  }
}

export class TierStats {
  readonly read: DirectionStats;
  readonly write: DirectionStats;
  /** Bytes that left this tier by demotion (also counted in `read`), chunk by chunk as `read` counts them. */
  demotedOutBytes = 0;
  /** Bytes that arrived by demotion (also counted in `write`), chunk by chunk as `write` counts them. */
  demotedInBytes = 0;
  /**
   * Entries deleted to make room: the terminal (storage) tier's LRU entries, and an entry demoted from
   * a tier above that no tier below can hold (it leaves the cache from that tier).
   */
  evictedEntries = 0;
  evictedBytes = 0;
  /** Requests for which this tier was the home of a new entry. */
  placements = 0;

  readonly name: TierName;

  /** `ioChunkBytes`: the run's I/O chunk, the least entry size its per-MiB latencies take (DirectionStats). */
  constructor(name: TierName, ioChunkBytes: number) {
    this.name = name;
    this.read = new DirectionStats(ioChunkBytes);
    this.write = new DirectionStats(ioChunkBytes);
  }

  reset(): void {
    this.read.reset();
    this.write.reset();
    this.demotedOutBytes = 0;
    this.demotedInBytes = 0;
    this.evictedEntries = 0;
    this.evictedBytes = 0;
    this.placements = 0;
  }
}

export class DemotionStats {
  count = 0;
  bytes = 0;
  readonly latency = new LatencyHistogram();

  readonly from: TierName;
  readonly to: TierName;

  constructor(from: TierName, to: TierName) {
    this.from = from;
    this.to = to;
  }

  reset(): void {
    this.count = 0;
    this.bytes = 0;
    this.latency.reset();
  }
}

export type CacheType = 'system' | 'common' | 'user' | 'multi_turn' | 'rag';

export class HitStats {
  hits = 0;
  misses = 0;
  readonly byType = new Map<CacheType, { hits: number; misses: number }>();

  record(type: CacheType, hit: boolean): void {
    if (hit) this.hits++;
    else this.misses++;
    let t = this.byType.get(type);
    if (!t) {
      t = { hits: 0, misses: 0 };
      this.byType.set(type, t);
    }
    if (hit) t.hits++;
    else t.misses++;
  }

  typeHits(type: CacheType): number {
    return this.byType.get(type)?.hits ?? 0;
  }

  typeMisses(type: CacheType): number {
    return this.byType.get(type)?.misses ?? 0;
  }

  reset(): void {
    this.hits = 0;
    this.misses = 0;
    this.byType.clear();
  }
}
