import type { ChunkProgress, ChunkSource, EntryRef, MoveSource, OpTiming, TierBackend, TierName } from '../tiers/tier-backend.ts';
import { DemotionStats, HitStats, TierStats, type CacheType, type DirectionStats } from '../metrics/tier-stats.ts';
import { DEFAULT_RUN_OPTIONS } from '../../../src-shared/domain/run-options.ts';

/** Phases of a logical I/O, as the reference's I/O trace names them. */
export type IoPhase = 'Prefill' | 'Decode' | 'Both' | 'Evict';

/** Receives every logical I/O the cache performs (trace-only mode). */
export interface IoObserver {
  record(r: { op: 'Read' | 'Write'; tier: TierName; key: string; sizeBytes: number; phase: IoPhase }): void;
}

/** Non-terminal tiers keep usage at or below this share of their budget by demoting LRU entries. */
export const TIER_FILL_TARGET = 0.8;
/** Non-terminal tiers decline entries larger than this share of their budget. */
export const TIER_ENTRY_SIZE_CAP = 0.95;
/** Below this share of its budget a non-terminal tier always takes an entry (under the size cap). */
export const TIER_NEARLY_EMPTY = 0.05;

export interface CacheTier {
  backend: TierBackend;
  budgetBytes: number;
}

type EntryState = 'writing' | 'resident' | 'moving';

interface CacheEntry extends EntryRef {
  tierIndex: number;
  state: EntryState;
  /** Logical clock of the last access: unique, so LRU order never depends on timer resolution. */
  lastAccess: number;
  accessCount: number;
  pins: number;
  /** Settles when a write or a move of this entry finishes. */
  settled: Promise<void>;
}

interface TierState {
  name: TierName;
  backend: TierBackend;
  budgetBytes: number;
  terminal: boolean;
  /** Resident plus reserved bytes: reservations are taken synchronously, so writers never oversubscribe. */
  usedBytes: number;
  entries: Map<string, CacheEntry>;
  /** Moves and deletions in flight out of this tier; waiting on them frees room. */
  leaving: Set<Promise<void>>;
  /** Woken when an entry of this tier becomes evictable (written, or no longer being read). */
  waiters: (() => void)[];
  /** Reservations whose entry is not resident here yet (being written, or moving in). */
  inbound: number;
}

export interface WriteOutcome {
  /** False when the key already existed (a write to an existing key is a no-op). */
  written: boolean;
  tier: TierName | null;
  timing: OpTiming | null;
}

export interface ReadOutcome {
  hit: boolean;
  tier: TierName | null;
  timing: OpTiming | null;
}

/** The sink a read hands its chunks to, chosen once the tier that serves the read is known. */
export type ReadSinkFor = (tier: TierName) => Parameters<TierBackend['read']>[1];

/**
 * Bounds the writes in progress (--max-concurrent-allocs: data production, placement and the write).
 * A write claims its key before it waits here, so a lookup of the key meanwhile waits for the write and
 * hits instead of missing and writing it again.
 */
export interface WriteAdmission {
  acquire(): Promise<void>;
  release(): void;
}

/** A lookup that writes the entry when it was missing: what the read found, and what the write did. */
export interface LookupOutcome {
  read: ReadOutcome;
  /** Null on a hit. */
  write: WriteOutcome | null;
}

const MISS: ReadOutcome = Object.freeze({ hit: false, tier: null, timing: null });

export class PlacementError extends Error {
  readonly code = 'INSUFFICIENT_SPACE';
}

/**
 * The GPU → CPU → storage hierarchy with the reference's placement rules: new entries go to the
 * fastest tier that can take them; non-terminal tiers stay at ≤ 80 % of budget by demoting their
 * least-recently-used entries one tier down (recursively making room below); the storage tier fills
 * to its capacity and then deletes its LRU entries. Demotions are real copies, counted in both
 * tiers' bytes and timed in their own distributions.
 */
export class MultiTierCache {
  readonly #tiers: TierState[];
  readonly #index = new Map<string, CacheEntry>();
  /** Entries whose promotion is looking for room (at most one promotion per entry). */
  readonly #promoting = new Set<CacheEntry>();
  #clock = 0;
  readonly tierStats: Map<TierName, TierStats>;
  readonly demotions = new Map<string, DemotionStats>();
  readonly hits = new HitStats();
  /** Entries that could be placed nowhere (larger than every tier). */
  placementFailures = 0;

  readonly #fillTarget: number;
  readonly #entrySizeCap: number;

  readonly #promoteOnHit: boolean;
  /** Entries moved up after a hit (opt-in policy; the reference never promotes), keyed `from->to`. */
  readonly promotions = new Map<string, DemotionStats>();
  /**
   * Promotions whose copy up failed. The read before it had succeeded and the entry stays where it
   * was, so the request goes on; the failure is counted and the first one kept, never hidden.
   */
  promotionFailures = 0;
  firstPromotionError: string | null = null;

  readonly #observer: IoObserver | null;
  /**
   * Whether the measured window is open. Every counter and distribution of the cache stops when it
   * closes, mid-operation: chunks that complete later, and operations that finish later, are not
   * part of the measurement.
   */
  #recording = true;

  constructor(
    tiers: CacheTier[],
    rules: {
      fillTarget?: number;
      entrySizeCap?: number;
      promotion?: 'none' | 'on-hit';
      observer?: IoObserver;
      /** The run's I/O chunk (default: --io-chunk-mib's): per-MiB latencies take entries of at least this size. */
      ioChunkBytes?: number;
    } = {},
  ) {
    if (tiers.length === 0) throw new Error('the cache needs at least one tier');
    this.#fillTarget = rules.fillTarget ?? TIER_FILL_TARGET;
    this.#entrySizeCap = rules.entrySizeCap ?? TIER_ENTRY_SIZE_CAP;
    this.#promoteOnHit = rules.promotion === 'on-hit';
    this.#observer = rules.observer ?? null;
    this.#tiers = tiers.map((t, i) => ({
      name: t.backend.name,
      backend: t.backend,
      budgetBytes: t.budgetBytes,
      terminal: i === tiers.length - 1,
      usedBytes: 0,
      entries: new Map(),
      leaving: new Set(),
      waiters: [],
      inbound: 0,
    }));
    const ioChunkBytes = rules.ioChunkBytes ?? DEFAULT_RUN_OPTIONS.ioChunkMib * 1024 * 1024;
    this.tierStats = new Map(this.#tiers.map((t) => [t.name, new TierStats(t.name, ioChunkBytes)]));
    for (let i = 0; i + 1 < this.#tiers.length; i++) {
      const from = this.#tiers[i].name;
      const to = this.#tiers[i + 1].name;
      this.demotions.set(`${from}->${to}`, new DemotionStats(from, to));
    }
    for (let lo = 0; lo < this.#tiers.length; lo++) {
      for (let hi = lo + 1; hi < this.#tiers.length; hi++) {
        const from = this.#tiers[hi].name;
        const to = this.#tiers[lo].name;
        this.promotions.set(`${from}->${to}`, new DemotionStats(from, to));
      }
    }
  }

  get tierNames(): TierName[] {
    return this.#tiers.map((t) => t.name);
  }

  has(key: string): boolean {
    return this.#index.has(key);
  }

  tierOf(key: string): TierName | null {
    const e = this.#index.get(key);
    return e && e.tierIndex >= 0 ? this.#tiers[e.tierIndex].name : null;
  }

  usage(): { name: TierName; usedBytes: number; budgetBytes: number; entries: number }[] {
    return this.#tiers.map((t) => ({ name: t.name, usedBytes: t.usedBytes, budgetBytes: t.budgetBytes, entries: t.entries.size }));
  }

  /** Sizes of the entries in the cache now, in bytes (the reference's block-size note). */
  entrySizes(): number[] {
    return [...this.#index.values()].filter((e) => e.tierIndex >= 0).map((e) => e.sizeBytes);
  }

  /** Keys of one tier from least to most recently used (for tests and diagnostics). */
  lruOrder(tier: TierName): string[] {
    const t = this.#tiers.find((x) => x.name === tier);
    if (!t) return [];
    return [...t.entries.values()].sort(compareLru).map((e) => e.key);
  }

  /**
   * Writes a new entry. The key is claimed before any await (`admission` included), so a concurrent
   * write of the same key is a no-op rather than a duplicate, and a read of it waits for this write.
   * A write to an existing key is a no-op in every way: it does not count as an access, so it leaves
   * the LRU order alone (the reference's rule).
   */
  async write(entryRef: EntryRef, source: ChunkSource, progress?: ChunkProgress, admission?: WriteAdmission): Promise<WriteOutcome> {
    if (this.#index.has(entryRef.key)) return { written: false, tier: this.tierOf(entryRef.key), timing: null };
    let settle!: () => void;
    const entry: CacheEntry = {
      ...entryRef,
      tierIndex: -1,
      state: 'writing',
      lastAccess: ++this.#clock,
      accessCount: 0,
      pins: 0,
      settled: new Promise<void>((r) => (settle = r)),
    };
    this.#index.set(entry.key, entry);
    let admitted = false;
    try {
      if (admission) {
        await admission.acquire();
        admitted = true;
      }
      const tierIndex = await this.#place(entry, 0);
      if (tierIndex < 0) {
        if (this.#recording) this.placementFailures++;
        throw new PlacementError(
          `entry ${entry.key} (${entry.sizeBytes} bytes) is larger than every tier can hold`,
        );
      }
      const tier = this.#tiers[tierIndex];
      entry.tierIndex = tierIndex;
      tier.entries.set(entry.key, entry);
      let timing: OpTiming;
      const writes = this.tierStats.get(tier.name)!.write;
      const op = writes.begin();
      try {
        timing = await tier.backend.write(entry, source, this.#progress(tier.name, 'write', progress));
      } catch (err) {
        tier.entries.delete(entry.key);
        tier.usedBytes -= entry.sizeBytes;
        this.#arrived(tier);
        throw err;
      } finally {
        writes.end(op);
      }
      entry.state = 'resident';
      this.#arrived(tier);
      this.#observer?.record({ op: 'Write', tier: tier.name, key: entry.key, sizeBytes: entry.sizeBytes, phase: 'Prefill' });
      if (this.#recording) {
        const stats = this.tierStats.get(tier.name)!;
        stats.write.record(timing);
        stats.placements++;
      }
      return { written: true, tier: tier.name, timing };
    } catch (err) {
      this.#index.delete(entry.key);
      throw err;
    } finally {
      if (admitted) admission!.release();
      settle();
    }
  }

  /**
   * Reads an entry, or writes it when the cache does not have it (a shared prefix: read it if cached,
   * else prefill it). The lookup and the claim of a missing key happen in one step, so of concurrent
   * lookups of one new key exactly one misses and writes it; the others wait for that write and hit,
   * as a lookup of any key being written does.
   */
  async readOrWrite(
    entryRef: EntryRef,
    cacheType: CacheType,
    source: ChunkSource,
    opts: { sink?: ReadSinkFor; phase?: IoPhase; readProgress?: ChunkProgress; writeProgress?: ChunkProgress; admission?: WriteAdmission } = {},
  ): Promise<LookupOutcome> {
    if (this.#index.has(entryRef.key)) {
      const read = await this.read(entryRef.key, cacheType, opts.sink, opts.phase, opts.readProgress);
      if (read.hit) return { read, write: null };
      // Gone once its write or move settled (the write failed, or it was evicted): the read counted
      // the miss; write it again (a no-op if another lookup has claimed it meanwhile).
    } else {
      this.#missed(cacheType);
    }
    return { read: MISS, write: await this.write(entryRef, source, opts.writeProgress, opts.admission) };
  }

  /** Reads a whole entry where it lives. A miss costs nothing; a hit updates LRU state. */
  async read(
    key: string,
    cacheType: CacheType,
    sink?: ReadSinkFor,
    phase: IoPhase = 'Decode',
    progress?: ChunkProgress,
  ): Promise<ReadOutcome> {
    let entry = this.#index.get(key);
    // An entry being written or moved is read once it has settled, from wherever it then lives.
    while (entry && entry.state !== 'resident') {
      const settled = entry.settled;
      await settled;
      const now = this.#index.get(key);
      // Settled without becoming resident and without a new move: waiting again would spin on a
      // resolved promise and starve the event loop, so the broken invariant is reported instead.
      if (now === entry && (entry.state as EntryState) !== 'resident' && entry.settled === settled) {
        throw new Error(`cache entry ${key} settled but is still ${entry.state} (tier ${entry.tierIndex})`);
      }
      entry = now;
    }
    if (!entry) return this.#missed(cacheType);
    this.#touch(entry);
    entry.pins++;
    try {
      const tier = this.#tiers[entry.tierIndex];
      const reads = this.tierStats.get(tier.name)!.read;
      const op = reads.begin();
      let timing: OpTiming;
      try {
        timing = await tier.backend.read(entry, sink?.(tier.name), this.#progress(tier.name, 'read', progress));
      } finally {
        reads.end(op);
      }
      // A hit counts with its read, once the read has completed: hits equal completed reads.
      if (this.#recording) {
        this.hits.record(cacheType, true);
        this.tierStats.get(tier.name)!.read.record(timing);
      }
      this.#observer?.record({ op: 'Read', tier: tier.name, key, sizeBytes: entry.sizeBytes, phase });
      return { hit: true, tier: tier.name, timing };
    } finally {
      entry.pins--;
      if (entry.pins === 0 && entry.tierIndex >= 0) this.#wake(this.#tiers[entry.tierIndex]);
      // Promotion is timed apart from the read it follows, so read latencies stay comparable.
      if (this.#promoteOnHit && entry.pins === 0 && entry.state === 'resident' && entry.tierIndex > 0) {
        await this.#promote(entry, phase).catch((err: unknown) => this.#promotionFailed(entry, err));
      }
    }
  }

  /** A lookup that found nothing: counted as a miss (a miss costs nothing). */
  #missed(cacheType: CacheType): ReadOutcome {
    if (this.#recording) this.hits.record(cacheType, false);
    return MISS;
  }

  #promotionFailed(entry: CacheEntry, err: unknown): void {
    // After the window has closed, moves still in flight are cancelled on purpose: not failures.
    if (!this.#recording) return;
    this.promotionFailures++;
    this.firstPromotionError ??= `promoting ${entry.key}: ${(err as Error).message}`;
  }

  /** Moves a hit entry up to the fastest tier above it that can take it (opt-in policy). */
  async #promote(entry: CacheEntry, phase: IoPhase): Promise<void> {
    if (this.#promoting.has(entry)) return;
    this.#promoting.add(entry);
    try {
      const fromIndex = entry.tierIndex;
      // Room above is found while the entry stays where it is, resident and evictable: making that
      // room can wait for demotions into this entry's tier, and those can wait for this tier's moves
      // to finish, so a promotion must not count as one of them until it has its room.
      const destIndex = await this.#place(entry, 0, fromIndex);
      if (destIndex < 0) return;
      const dest = this.#tiers[destIndex];
      if (this.#index.get(entry.key) !== entry || entry.state !== 'resident' || entry.tierIndex !== fromIndex || entry.pins > 0) {
        // Demoted, deleted or being read while room was made: give the room back.
        dest.usedBytes -= entry.sizeBytes;
        this.#arrived(dest);
        return;
      }
      await this.#moveUp(entry, fromIndex, destIndex, phase);
    } finally {
      this.#promoting.delete(entry);
    }
  }

  /** Copies an entry into the room reserved for it in a faster tier, then releases its old copy. */
  async #moveUp(entry: CacheEntry, fromIndex: number, destIndex: number, phase: IoPhase): Promise<void> {
    const src = this.#tiers[fromIndex];
    const dest = this.#tiers[destIndex];
    entry.state = 'moving';
    let settle!: () => void;
    entry.settled = new Promise<void>((r) => (settle = r));
    const work = (async () => {
      const startNs = process.hrtime.bigint();
      try {
        await dest.backend.write(entry, this.#copyOut(src, entry), this.#progress(dest.name, 'write', undefined, 'move'));
      } catch (err) {
        dest.usedBytes -= entry.sizeBytes;
        this.#arrived(dest);
        throw err;
      }
      const durationNs = Number(process.hrtime.bigint() - startNs);
      this.#observer?.record({ op: 'Read', tier: src.name, key: entry.key, sizeBytes: entry.sizeBytes, phase });
      this.#observer?.record({ op: 'Write', tier: dest.name, key: entry.key, sizeBytes: entry.sizeBytes, phase });
      src.entries.delete(entry.key);
      entry.tierIndex = destIndex;
      dest.entries.set(entry.key, entry);
      this.#arrived(dest);
      try {
        await src.backend.remove(entry);
      } finally {
        src.usedBytes -= entry.sizeBytes;
      }
      if (!this.#recording) return;
      countMove(this.tierStats.get(src.name)!.read);
      countMove(this.tierStats.get(dest.name)!.write);
      const p = this.promotions.get(`${src.name}->${dest.name}`)!;
      p.count++;
      p.bytes += entry.sizeBytes;
      p.latency.record(durationNs);
    })().finally(() => {
      entry.state = 'resident';
      src.leaving.delete(work);
      settle();
    });
    src.leaving.add(work);
    await work;
  }

  /**
   * Resolves once no move or deletion is in flight. A write that fails while making room returns
   * at once, but the evictions it started finish on their own; the books balance only after them.
   */
  async idle(): Promise<void> {
    for (;;) {
      const inFlight = this.#tiers.flatMap((t) => [...t.leaving]);
      if (inFlight.length === 0) return;
      await Promise.allSettled(inFlight);
    }
  }

  /** Frees everything (end of run). */
  async clear(): Promise<void> {
    await this.idle();
    for (const t of this.#tiers) {
      for (const e of t.entries.values()) await t.backend.remove(e).catch(() => undefined);
      t.entries.clear();
      t.usedBytes = 0;
    }
    this.#index.clear();
  }

  /** Opens the measured window: every counter starts from zero (preparatory phases are not measured). */
  openWindow(): void {
    this.resetStats();
    this.#recording = true;
  }

  /** Closes the measured window: nothing is counted from now on, including operations in flight. */
  closeWindow(): void {
    this.#recording = false;
  }

  /**
   * Counts each chunk's bytes in `tier`'s `direction` as it completes, while the window is open, and
   * passes them on to the caller's `also` (the request's own per-chunk accounting).
   */
  #progress(tier: TierName, direction: 'read' | 'write', also?: ChunkProgress, move: 'move' | 'demotion' | null = null): ChunkProgress {
    const tierStats = this.tierStats.get(tier)!;
    const stats = tierStats[direction];
    return (bytes) => {
      if (this.#recording) {
        stats.bytes += bytes;
        if (move !== null) stats.movedBytes += bytes;
        // Chunk by chunk, as the tier's bytes are: a demotion in flight when the window closes counts
        // the chunks it moved in both (whole demotions only are kvbench.demotions' count and bytes).
        if (move === 'demotion' && direction === 'write') tierStats.demotedInBytes += bytes;
        if (move === 'demotion' && direction === 'read') tierStats.demotedOutBytes += bytes;
      }
      also?.(bytes);
    };
  }

  /** The source side of a move between tiers: each chunk copied out of `src` is a read there. */
  #copyOut(src: TierState, entry: CacheEntry, move: 'move' | 'demotion' = 'move'): MoveSource {
    const counted = this.#progress(src.name, 'read', undefined, move);
    const copy = async (chunk: Parameters<MoveSource>[0]): Promise<void> => {
      await src.backend.copyChunkOut(entry, chunk, counted);
    };
    return Object.assign(copy, { countCopiedOut: counted });
  }

  resetStats(): void {
    for (const s of this.tierStats.values()) s.reset();
    for (const d of this.demotions.values()) d.reset();
    for (const p of this.promotions.values()) p.reset();
    this.hits.reset();
    this.placementFailures = 0;
    this.promotionFailures = 0;
    this.firstPromotionError = null;
  }

  /** An inbound reservation of `tier` settled (resident now, or released). */
  #arrived(tier: TierState): void {
    tier.inbound--;
    this.#wake(tier);
  }

  #wake(tier: TierState): void {
    for (const w of tier.waiters.splice(0)) w();
  }

  #touch(entry: CacheEntry): void {
    entry.lastAccess = ++this.#clock;
    entry.accessCount++;
  }

  /** Finds and reserves room for `entry` in tier `from` or below; returns the tier index or -1. */
  async #place(entry: CacheEntry, from: number, until = this.#tiers.length): Promise<number> {
    for (let i = from; i < until; i++) {
      const tier = this.#tiers[i];
      if (tier.budgetBytes <= 0) continue;
      if (tier.terminal) {
        if (entry.sizeBytes > tier.budgetBytes) return -1;
        if (await this.#reserve(i, entry.sizeBytes, tier.budgetBytes)) return i;
        return -1;
      }
      if (entry.sizeBytes > tier.budgetBytes * this.#entrySizeCap) continue;
      if (await this.#reserve(i, entry.sizeBytes, tier.budgetBytes * this.#fillTarget, tier.budgetBytes * TIER_NEARLY_EMPTY)) return i;
    }
    return -1;
  }

  /**
   * Reserves `sizeBytes` in tier `i` under `limitBytes`, pushing LRU entries out (one tier down, or
   * deleted from the terminal tier) until it fits. A nearly empty tier (usage under `alwaysBelowBytes`)
   * takes the entry regardless, so entries between 80 % and 95 % of a budget still have a home
   * (the reference's rule). Returns false when nothing more can leave.
   */
  async #reserve(i: number, sizeBytes: number, limitBytes: number, alwaysBelowBytes = 0): Promise<boolean> {
    const tier = this.#tiers[i];
    for (;;) {
      if (tier.usedBytes + sizeBytes <= limitBytes || tier.usedBytes < alwaysBelowBytes) {
        tier.usedBytes += sizeBytes;
        tier.inbound++;
        return true;
      }
      const victims = this.#chooseVictims(tier, tier.usedBytes + sizeBytes - limitBytes);
      if (victims.length > 0) {
        await Promise.all(victims.map((v) => this.#evict(i, v)));
        continue;
      }
      if (tier.leaving.size > 0) {
        await Promise.race(tier.leaving);
        continue;
      }
      // The terminal tier has nowhere to send a writer: it waits until an entry being written or
      // read there becomes evictable. A non-terminal tier declines instead (the tier below takes it).
      if (tier.terminal && (tier.inbound > 0 || [...tier.entries.values()].some((e) => e.pins > 0))) {
        await new Promise<void>((r) => tier.waiters.push(r));
        continue;
      }
      return false;
    }
  }

  /** LRU entries (by last access, then access count) that are idle, enough to free `needBytes`. */
  #chooseVictims(tier: TierState, needBytes: number): CacheEntry[] {
    const idle = [...tier.entries.values()].filter((e) => e.state === 'resident' && e.pins === 0);
    idle.sort(compareLru);
    const chosen: CacheEntry[] = [];
    let freed = 0;
    for (const e of idle) {
      if (freed >= needBytes) break;
      chosen.push(e);
      freed += e.sizeBytes;
    }
    return chosen;
  }

  async #evict(i: number, victim: CacheEntry): Promise<void> {
    const tier = this.#tiers[i];
    victim.state = 'moving';
    let settle!: () => void;
    victim.settled = new Promise<void>((r) => (settle = r));
    const work = (tier.terminal ? this.#delete(i, victim) : this.#demote(i, victim)).finally(() => {
      tier.leaving.delete(work);
      settle();
    });
    tier.leaving.add(work);
    return work;
  }

  async #delete(i: number, victim: CacheEntry): Promise<void> {
    const tier = this.#tiers[i];
    tier.entries.delete(victim.key);
    this.#index.delete(victim.key);
    try {
      await tier.backend.remove(victim);
    } finally {
      tier.usedBytes -= victim.sizeBytes;
      if (this.#recording) {
        const stats = this.tierStats.get(tier.name)!;
        stats.evictedEntries++;
        stats.evictedBytes += victim.sizeBytes;
      }
    }
  }

  async #demote(i: number, victim: CacheEntry): Promise<void> {
    const src = this.#tiers[i];
    let destIndex: number;
    try {
      destIndex = await this.#place(victim, i + 1);
    } catch (err) {
      // Making room below failed (an eviction there failed, or the window closed on it): the
      // entry never left this tier, and readers waiting for the move must find it here.
      victim.state = 'resident';
      throw err;
    }
    if (destIndex < 0) {
      // Nothing below can hold it: the entry leaves the cache (counted as an eviction, never silent).
      await this.#delete(i, victim);
      return;
    }
    const dest = this.#tiers[destIndex];
    const startNs = process.hrtime.bigint();
    let readTiming: OpTiming | null = null;
    try {
      // The destination pulls each chunk from the source tier: one real copy per chunk.
      await dest.backend.write(victim, this.#copyOut(src, victim, 'demotion'), this.#progress(dest.name, 'write', undefined, 'demotion'));
    } catch (err) {
      dest.usedBytes -= victim.sizeBytes;
      this.#arrived(dest);
      victim.state = 'resident';
      throw err;
    }
    const endNs = process.hrtime.bigint();
    readTiming = { startNs, endNs, durationNs: Number(endNs - startNs), bytes: victim.sizeBytes };
    this.#observer?.record({ op: 'Read', tier: src.name, key: victim.key, sizeBytes: victim.sizeBytes, phase: 'Evict' });
    this.#observer?.record({ op: 'Write', tier: dest.name, key: victim.key, sizeBytes: victim.sizeBytes, phase: 'Evict' });
    // The bytes are in the destination: the entry belongs there before the source copy is released,
    // so a failing release cannot leave it in no tier.
    src.entries.delete(victim.key);
    victim.tierIndex = destIndex;
    victim.state = 'resident';
    dest.entries.set(victim.key, victim);
    this.#arrived(dest);
    try {
      await src.backend.remove(victim);
    } finally {
      src.usedBytes -= victim.sizeBytes;
    }

    if (!this.#recording) return;
    const srcStats = this.tierStats.get(src.name)!;
    const destStats = this.tierStats.get(dest.name)!;
    countMove(srcStats.read);
    countMove(destStats.write);
    // Keyed by where the entry really went: a victim the next tier declines (too large for it, or
    // no room) goes further down, and is counted as that move, not as one to the next tier.
    const key = `${src.name}->${dest.name}`;
    let d = this.demotions.get(key);
    if (!d) this.demotions.set(key, (d = new DemotionStats(src.name, dest.name)));
    d.count++;
    d.bytes += victim.sizeBytes;
    d.latency.record(readTiming.durationNs);
  }
}

/** One whole move between tiers: an operation of that tier, and one of its moves. */
function countMove(d: DirectionStats): void {
  d.ops += 1;
  d.movedOps += 1;
}

function compareLru(a: CacheEntry, b: CacheEntry): number {
  return a.lastAccess - b.lastAccess || a.accessCount - b.accessCount;
}
