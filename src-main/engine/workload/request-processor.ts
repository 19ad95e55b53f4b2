import { setTimeout as sleep } from 'node:timers/promises';
import type { IoPhase, MultiTierCache, ReadOutcome, ReadSinkFor, WriteOutcome } from '../cache/multi-tier-cache.ts';
import type { BytePool } from '../io/byte-workers.ts';
import { keyHash64 } from '../io/payload.ts';
import type { RunRecorder } from '../metrics/run-recorder.ts';
import type { CacheType } from '../metrics/tier-stats.ts';
import type { ChunkProgress, ChunkSink, ChunkSource, EntryRef, TierName } from '../tiers/tier-backend.ts';
import { EventLoopSlice } from './event-loop-slice.ts';
import type { Semaphore } from './request-queue.ts';
import { prefixReadPhase } from './trace/io-trace-log.ts';
import type { KvRequest } from './synthetic-workload.ts';

export interface VerifyFailure {
  key: string;
  tier: TierName;
  offsetBytes: number;
}

export interface ProcessorDeps {
  cache: MultiTierCache;
  bytes: BytePool;
  recorder: RunRecorder;
  seed: number;
  /** Bytes of one rank's entry of `tokens` tokens (after tensor-parallel sharding). */
  entrySizeBytes: (tokens: number) => number;
  /** KV bytes of one token of the whole model (the reference's prefix "bytes saved" uses this). */
  modelBytesPerToken: number;
  allocations: Semaphore;
  generationSecondsPerToken: number;
  /** Tokens per decode batch: a hit re-reads the entry ceil(generated / this) more times. */
  decodeBatchTokens: number;
  verify: boolean;
  /** Aborted when the measured phase ends: sleeps end early and no new step starts. */
  stopSignal: AbortSignal;
  /** How long a request's steps may hold the event loop (tests pass a zero-length slice). */
  eventLoopSlice?: EventLoopSlice;
}

/**
 * How long requests' steps that complete at once may hold the event loop. A CPU-tier run's steps all
 * do: at the engine's 10 ms slice its throughput fell 5-6 % against no pause at all (paired, six
 * alternations); at 50 ms it is within noise (req 1.005x, tok/s 0.980x), and a deadline, the heartbeat
 * (seconds) or a cancel still wait at most this long.
 */
const REQUEST_SLICE_MS = 50;

/** A request abandoned because the run stopped while it was in progress. */
export class RequestAbandoned extends Error {}

/** What an allocation did: `written` is false when the key existed (a no-op: nothing moved, 0 ns, no tier). */
export interface AllocationOutcome {
  written: boolean;
  ns: number;
  bytes: number;
  /** The tier the entry was written to; null when nothing was written. */
  tier: TierName | null;
}

/** A lookup that writes on a miss: the read, and on a miss the allocation. */
export interface PrefixLookupOutcome {
  read: ReadOutcome;
  write: AllocationOutcome;
}

/**
 * Serves one request the way the reference's worker does: system-prompt prefix, multi-turn reload,
 * prefill write, RAG retrieval, decode reads (1 + ceil(generated / 32) on a hit), simulated
 * generation, record. Every cache operation moves real bytes through the tiers.
 */
export class RequestProcessor {
  readonly verifyFailures: VerifyFailure[] = [];
  verifyErrorCount = 0;
  /** With --verify: the chunks read back and checked, and their bytes by the tier that served them (the whole run, as the errors). */
  readonly verifiedChunks: Partial<Record<TierName, { chunks: number; bytes: number }>> = {};
  readonly #d: ProcessorDeps;
  /**
   * Shared by every request in flight. Operations that complete at once (a read that misses, an entry
   * that exists, an in-memory tier) resolve as promises, and a request of many prefix blocks decoded
   * over many tokens chains hundreds of thousands of them: the event loop, and with it the window's
   * deadline, the heartbeat and a cancel, would wait for the whole request.
   */
  readonly #slice: EventLoopSlice;
  #arrivalOriginNs: bigint | null = null;

  constructor(deps: ProcessorDeps) {
    this.#d = { ...deps };
    this.#slice = deps.eventLoopSlice ?? new EventLoopSlice(REQUEST_SLICE_MS);
  }

  /** Starts recording into a fresh recorder (after preparatory phases, whose I/O is not measured). */
  setRecorder(recorder: RunRecorder): void {
    this.#d.recorder = recorder;
  }

  /**
   * Where the workload's clock (each request's scheduled `arrivalNs`) reads 0, on the hrtime clock;
   * null for an unpaced workload, whose requests arrive when the scheduler issues them.
   */
  arrivalsFrom(originNs: bigint | null): void {
    this.#arrivalOriginNs = originNs;
  }

  /** Payload source for a new entry: deterministic bytes for (key, seed), produced by byte workers. */
  payloadSource(key: string): ChunkSource {
    return this.#d.bytes.payloadSource(keyHash64(key, this.#d.seed));
  }

  /**
   * Writes a new entry of `tokens` tokens; a no-op when the key exists. Returns whether it wrote, ns
   * spent and bytes written; `progress` hears each chunk's bytes as they reach the tier. The key is
   * claimed at once, before the wait for an allocation slot (--max-concurrent-allocs), so a lookup of
   * it meanwhile waits for this write instead of missing.
   */
  async allocate(key: string, tokens: number, progress?: ChunkProgress): Promise<AllocationOutcome> {
    const d = this.#d;
    return allocationOf(await d.cache.write(this.#entryRef(key, tokens), this.payloadSource(key), progress, d.allocations));
  }

  async read(key: string, cacheType: CacheType, phase: IoPhase = 'Decode', progress?: ChunkProgress): Promise<ReadOutcome> {
    return this.#d.cache.read(key, cacheType, this.#verifySink(key), phase, progress);
  }

  /**
   * Reads a shared entry (system prompt, prefix block), or writes it when missing. Concurrent lookups
   * of one new key: one misses and writes, the others wait for that write and hit.
   */
  async lookup(key: string, tokens: number, cacheType: CacheType, phase: IoPhase, writeProgress?: ChunkProgress): Promise<PrefixLookupOutcome> {
    const d = this.#d;
    const out = await d.cache.readOrWrite(this.#entryRef(key, tokens), cacheType, this.payloadSource(key), {
      sink: this.#verifySink(key),
      phase,
      writeProgress,
      admission: d.allocations,
    });
    return { read: out.read, write: out.write ? allocationOf(out.write) : NO_ALLOCATION };
  }

  #entryRef(key: string, tokens: number): EntryRef {
    const d = this.#d;
    return { key, keyHash: keyHash64(key, d.seed), sizeBytes: Math.max(1, d.entrySizeBytes(tokens)) };
  }

  /** With --verify, checks every chunk read of `key` against its payload; otherwise no sink. */
  #verifySink(key: string): ReadSinkFor | undefined {
    const d = this.#d;
    if (!d.verify) return undefined;
    const hash = keyHash64(key, d.seed);
    return (tier: TierName): ChunkSink => async (chunk) => {
      const v = await d.bytes.verify(chunk.buffer, hash, chunk.entryOffsetBytes);
      const checked = (this.verifiedChunks[tier] ??= { chunks: 0, bytes: 0 });
      checked.chunks++;
      checked.bytes += chunk.buffer.length;
      if (!v.ok) {
        this.verifyErrorCount++;
        if (this.verifyFailures.length < 100) this.verifyFailures.push({ key, tier, offsetBytes: v.offsetBytes });
      }
    };
  }

  /**
   * `ownEntryWritten` is told when the request's own entry has been written (or found existing): the
   * queue then serves the conversation's next turn, whose reload reads it.
   */
  async process(req: KvRequest, dequeuedNs: bigint, ownEntryWritten?: () => void): Promise<void> {
    const d = this.#d;
    const rec = d.recorder;
    const stop = d.stopSignal;
    // Called after every await before anything is recorded: an operation that completes after
    // the measured window closed (stop) is not part of the measurement, nor is its request. The
    // request's reads and writes go through `read`, `allocate` and `lookup`, which check on their return.
    const checkStop = (): void => {
      if (stop.aborted) throw new RequestAbandoned();
    };
    const checked = async <T>(op: Promise<T>): Promise<T> => {
      const out = await op;
      const pause = this.#slice.pauseIfDue();
      if (pause) await pause;
      checkStop();
      return out;
    };
    const read = (...args: Parameters<RequestProcessor['read']>): Promise<ReadOutcome> => checked(this.read(...args));
    const allocate = (...args: Parameters<RequestProcessor['allocate']>): Promise<AllocationOutcome> => checked(this.allocate(...args));
    const lookup = (...args: Parameters<RequestProcessor['lookup']>): Promise<PrefixLookupOutcome> => checked(this.lookup(...args));
    // Decode and prefill bytes count chunk by chunk, so the window can close mid-entry. The decode
    // bytes cover the same reads as decodeReads: the decode passes, the multi-turn reloads and the RAG
    // chunks (the reference reads all three in its decode phase and counts their bytes alike).
    const decodeBytes: ChunkProgress = (b) => {
      if (!stop.aborted) rec.decodeBytesRead += b;
    };
    const prefillBytes: ChunkProgress = (b) => {
      if (!stop.aborted) rec.prefillBytesWritten += b;
    };
    let storageNs = 0;
    // The same time by the tier that served each operation, for the workers' busy split (RunRecorder.busy).
    const storageNsByTier: Record<TierName, number> = { gpu: 0, cpu: 0, storage: 0 };
    /** One operation's time, counted in storageNs and its tier's; returns it. */
    const spent = (tier: TierName | null, ns: number): number => {
      storageNs += ns;
      if (tier !== null) storageNsByTier[tier] += ns;
      return ns;
    };
    // Null until the request has that phase: the reference lists prefill and decode latencies only for
    // requests that wrote a prefill or ran a decode, so a prefill-only request adds no decode time of 0.
    let prefillNs: number | null = null;
    let decodeNs: number | null = null;
    // Shared-prefix reads carry the request's phase in the I/O trace (the reference's convention).
    const prefixPhase: IoPhase = prefixReadPhase(req.phase);

    // 1. Shared system prompt: read its entry; on a miss, write it so later requests really hit.
    if (req.systemPrompt) {
      const { read: r, write: w } = await lookup(req.systemPrompt.key, req.systemPrompt.tokens, 'system', prefixPhase);
      if (r.hit) {
        rec.systemPromptEntryHits++;
        rec.systemPromptEntryBytesSaved += req.systemPrompt.tokens * d.modelBytesPerToken;
        spent(r.tier, r.timing!.durationNs);
      } else {
        rec.systemPromptEntryMisses++;
        if (w.written) rec.systemPromptWrites++;
        spent(w.tier, w.ns);
      }
    }

    // 1b. Shared prefix blocks (trace hash IDs): requests sharing a block read the same cached entry.
    if (req.prefixBlocks) {
      for (const block of req.prefixBlocks) {
        const { read: r, write: w } = await lookup(block.key, block.tokens, 'common', prefixPhase, prefillBytes);
        if (r.hit) {
          rec.prefixBlockHits++;
          rec.prefixBlockBytesReused += r.timing!.bytes;
          spent(r.tier, r.timing!.durationNs);
        } else {
          rec.prefixBlockMisses++;
          // Only a write that happened is a prefill write (the reference counts none for an existing key).
          if (w.written) {
            rec.prefillWrites++;
            prefillNs = (prefillNs ?? 0) + w.ns;
          }
          spent(w.tier, w.ns);
        }
      }
    }

    // 2. Multi-turn reload: every earlier turn of the conversation, in order.
    for (const key of req.previousTurnKeys) {
      const r = await read(key, 'multi_turn', 'Decode', decodeBytes);
      if (r.hit) {
        rec.decodeReads++;
        rec.multiTurnHits++;
        spent(r.tier, r.timing!.durationNs);
      } else {
        rec.multiTurnMisses++;
      }
    }

    // 3. Prefill: write this turn's entry (a request made of shared blocks wrote them in step 1b).
    const ownEntry = !req.prefixBlocks || req.prefixBlocks.length === 0;
    if (ownEntry && (req.phase === 'prefill' || req.phase === 'prefill_decode')) {
      const w = await allocate(req.cacheKey, req.contextTokens, prefillBytes);
      ownEntryWritten?.();
      if (w.written) {
        rec.prefillWrites++;
        prefillNs = w.ns;
      }
      spent(w.tier, w.ns);
    }

    // 4. RAG: read the retrieved chunks.
    if (req.ragChunks) {
      rec.ragRetrievals++;
      for (const chunk of req.ragChunks) {
        const r = await read(chunk.key, 'user', 'Decode', decodeBytes);
        rec.ragChunkReads++;
        if (r.hit) {
          rec.decodeReads++;
          spent(r.tier, r.timing!.durationNs);
        }
      }
    }

    // 5. Decode: one read, then on a hit max(1, ceil(generated / 32)) more full reads, each counted
    // (a miss, when the entry was evicted meanwhile, takes no time); on a miss, write it.
    const batches = Math.max(1, Math.ceil(req.generationTokens / d.decodeBatchTokens));
    if (req.prefixBlocks && req.prefixBlocks.length > 0 && (req.phase === 'decode' || req.phase === 'prefill_decode')) {
      // A request made of shared blocks decodes over its whole chain of blocks.
      decodeNs = 0;
      for (let pass = 0; pass < 1 + batches; pass++) {
        for (const block of req.prefixBlocks) {
          const r = await read(block.key, 'common', 'Decode', decodeBytes);
          if (!r.hit) continue;
          rec.decodeReads++;
          decodeNs += spent(r.tier, r.timing!.durationNs);
        }
      }
    } else if (req.phase === 'decode' || req.phase === 'prefill_decode') {
      decodeNs = 0;
      const first = await read(req.decodeKey, req.cacheType, 'Decode', decodeBytes);
      if (first.hit) {
        rec.decodeReads++;
        decodeNs += spent(first.tier, first.timing!.durationNs);
        for (let i = 0; i < batches; i++) {
          const r = await read(req.decodeKey, req.cacheType, 'Decode', decodeBytes);
          if (!r.hit) continue;
          rec.decodeReads++;
          decodeNs += spent(r.tier, r.timing!.durationNs);
        }
      } else if (req.phase !== 'decode') {
        const w = await allocate(req.cacheKey, req.contextTokens, prefillBytes);
        if (w.written) rec.prefillWrites++;
        spent(w.tier, w.ns);
      }
    }

    // 6. Simulated generation on the GPU.
    const generationNs = Math.round(req.generationTokens * d.generationSecondsPerToken * 1e9);
    let generationSleptNs = 0;
    if (generationNs > 0) {
      const sleepStartNs = process.hrtime.bigint();
      try {
        await sleep(generationNs / 1e6, undefined, { signal: stop });
      } catch {
        throw new RequestAbandoned();
      }
      generationSleptNs = Number(process.hrtime.bigint() - sleepStartNs);
    }

    // 7. Record.
    checkStop();
    const completeNs = process.hrtime.bigint();
    // The user's wait runs from the request's scheduled arrival, not from when the scheduler issued
    // it: time an arrival was held back (the backlog cap, a late event loop) is time the user waited
    // too, and leaving it out would be coordinated omission. How late the issue was is kept apart.
    const arrivedNs = arrivedAtNs(req, this.#arrivalOriginNs);
    rec.complete({
      qos: req.qos,
      generationTokens: req.generationTokens,
      issueLatenessNs: this.#arrivalOriginNs === null ? null : Number(req.submitNs - arrivedNs),
      queueWaitNs: Number(dequeuedNs - arrivedNs),
      storageNs,
      storageNsByTier,
      generationNs,
      generationSleptNs,
      serviceNs: Number(completeNs - dequeuedNs),
      endToEndNs: Number(completeNs - arrivedNs),
      prefillNs,
      decodeNs,
    });
    // The reference's prefix_cache_stats keys mean "a system prompt was detected" (hit) or "none was"
    // (miss), whatever the cache held: kept so, whether the entry was cached is counted in step 1.
    if (req.systemPrompt) {
      rec.prefixHits++;
      rec.prefixBytesSaved += req.systemPrompt.tokens * d.modelBytesPerToken;
    } else {
      rec.prefixMisses++;
    }
  }
}

/**
 * When a request arrived, on the hrtime clock: its scheduled arrival (`arrivalNs` on the workload's
 * clock, which reads 0 at `originNs`), never later than its issue (`submitNs`); with no origin (an
 * unpaced workload) its issue.
 */
export function arrivedAtNs(req: Pick<KvRequest, 'arrivalNs' | 'submitNs'>, originNs: bigint | null): bigint {
  if (originNs === null) return req.submitNs;
  const scheduledNs = originNs + BigInt(Math.round(req.arrivalNs));
  return scheduledNs < req.submitNs ? scheduledNs : req.submitNs;
}

const NO_ALLOCATION: AllocationOutcome = Object.freeze({ written: false, ns: 0, bytes: 0, tier: null });

function allocationOf(out: WriteOutcome): AllocationOutcome {
  return out.written && out.timing ? { written: true, ns: out.timing.durationNs, bytes: out.timing.bytes, tier: out.tier } : NO_ALLOCATION;
}
