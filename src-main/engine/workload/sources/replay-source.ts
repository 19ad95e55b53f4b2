import { createHash, type Hash } from 'node:crypto';
import { PREFILL_ONLY_CONTEXT_TOKENS, type QosClass, type QosLevel, type RequestPhase } from '../personas.ts';
import { Rng } from '../rng.ts';
import { SYSTEM_PROMPT_REFS, zipfTopK, type KvRequest, type RagChunk, type RagDocument, type SystemPromptRef } from '../synthetic-workload.ts';
import type { WorkloadProfile } from '../workload-profile.ts';
import type { QueuedArrival, WorkloadSource } from '../workload-source.ts';

/**
 * Seeded stream for the per-request choices of a replay (QoS class, system prompt, RAG retrieval,
 * decode-only target). Far from the synthetic users' streams (0 = RAG documents, 1..n = users).
 */
export const REPLAY_REQUEST_STREAM = 0x4b56_0001;
/** Seeded stream for the order in which ShareGPT conversations are replayed. */
export const SHAREGPT_SHUFFLE_STREAM = 0x4b56_0002;
/** Seeded stream of `kvbench workload generate`. */
export const WORKLOAD_GENERATE_STREAM = 0x4b56_0003;

/**
 * What `peekArrivalNs` returns while the next requests are still being read from the file: a time no
 * run reaches, so the scheduler waits (≤ 50 ms) and asks again; never Infinity, which means "over".
 */
export const PENDING_ARRIVAL_NS = Number.MAX_SAFE_INTEGER;
/** Requests read ahead of the scheduler at most; reading resumes when fewer than half a pull are left. */
const READ_AHEAD = 4096;
/**
 * Prefix blocks the read-ahead holds at most (about 100 bytes each): a trace of very long prompts
 * (thousands of hash IDs per line) is read fewer requests at a time, so memory stays bounded.
 */
const READ_AHEAD_BLOCKS = 1_000_000;
/** The first pull, before the blocks per request are known. */
const FIRST_PULL = 64;
/** Distinct prefix-block keys remembered for the ideal hit rate; beyond this it is reported as unknown. */
const MAX_TRACKED_BLOCK_KEYS = 5_000_000;

export interface PrefixBlock {
  key: string;
  tokens: number;
}

/**
 * One request as the replayed file defines it, before the per-request draws every source shares. It
 * keeps numbers and references to what the feed holds anyway (the loaded dataset, the parsed row); its
 * strings are built by {@link names} when they are needed: a paced replay behind a slow drive queues
 * hundreds of thousands of these, and as strings they took several times the heap.
 */
export interface ReplaySpec {
  /** Scheduled arrival in ns since the measured phase began (pacing and cycles applied). */
  readonly arrivalNs: number;
  /** Replay pass (0-based) this request belongs to. */
  readonly cycle: number;
  readonly userIndex: number;
  readonly contextTokens: number;
  readonly generationTokens: number;
  /**
   * The conversation (cycle prefix applied), or null. Its turns 1..turn−1 are the request's multi-turn
   * reload, keyed `<conversationId>_turn_<n>` (as the synthetic users').
   */
  readonly conversationId: string | null;
  readonly turn: number;
  /** How many prefix blocks {@link names} lists (the read-ahead's budget counts them unbuilt). */
  readonly prefixBlockCount: number;
  /** Its ids and keys: the user, the request, its own entry (the cycle prefix applied), its prefix blocks. */
  names(): ReplayNames;
}

export interface ReplayNames {
  userId: string;
  requestId: string;
  cacheKey: string;
  prefixBlocks: PrefixBlock[] | null;
}

/** A replayed file, read in arrival order. */
export interface ReplayFeed {
  /**
   * Up to `max` next requests in arrival order (non-decreasing arrivals); an empty array when the
   * replay is over. A feed stops early, after at least one request, once those it pulled carry
   * `maxBlocks` prefix blocks or more (give or take a few requests'): the first pull, before the
   * blocks per request are known, would otherwise hold 64 requests of tens of thousands each.
   */
  pull(max: number, maxBlocks: number): Promise<ReplaySpec[]>;
  /** Distinct users that have offered a request so far. */
  activeUsers(): number;
  /** The file's statistics and the replay's state (cycles, pacing) for the results. */
  describe(): Record<string, unknown>;
  /**
   * Called with each request as it is offered to the run. `pull` reads ahead of that, so a feed
   * counts what the run was offered (conversations started …) here, not in `pull`.
   */
  offered?(spec: ReplaySpec): void;
}

export interface ReplayWorkloadOptions {
  kind: Exclude<WorkloadSource['kind'], 'synthetic'>;
  /** False when arrivals carry no timing (--trace-speedup 0, --request-rate 0, zero delays). */
  paced: boolean;
  seed: number;
  profile: WorkloadProfile;
  mode: 'standard' | 'prefill-only' | 'decode-only';
  /**
   * Draw the reference's shared system prompts for this source's requests (with prefix caching on).
   * Off for formats whose shared prefixes are explicit (Mooncake hash IDs, workload files).
   */
  systemPrompts: boolean;
  ragDocuments: RagDocument[] | null;
  prepopulatedKeys: string[];
  log: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;
}

interface TokenStats {
  min: number;
  max: number;
  sum: number;
  n: number;
}
const newStats = (): TokenStats => ({ min: Number.POSITIVE_INFINITY, max: 0, sum: 0, n: 0 });
function addStat(s: TokenStats, v: number): void {
  if (v < s.min) s.min = v;
  if (v > s.max) s.max = v;
  s.sum += v;
  s.n++;
}
export function statsOut(s: { min: number; max: number; sum: number; n: number }): { min: number; mean: number; max: number } | null {
  return s.n === 0 ? null : { min: s.min, mean: s.sum / s.n, max: s.max };
}

/**
 * A replayed workload (dataset or trace) as a {@link WorkloadSource}. The feed fixes what the file
 * defines (sizes, users, keys, arrival times); this class adds what the reference's worker decides per
 * request — QoS class (15/35/50 % by default), shared system prompt, RAG retrieval, phase (prefill only
 * at ≥ 10,000 context tokens) — from one seeded stream, in offered order, so the stream and its digest
 * depend only on the file, the seed and the configuration. The feed is read ahead asynchronously in
 * bounded batches, so a trace of any length replays in flat memory.
 */
export class ReplayWorkload implements WorkloadSource {
  readonly kind: ReplayWorkloadOptions['kind'];
  readonly paced: boolean;
  readonly #feed: ReplayFeed;
  readonly #o: ReplayWorkloadOptions;
  readonly #rng: Rng;
  readonly #digest: Hash = createHash('sha256');
  #buf: ReplaySpec[] = [];
  #head = 0;
  #loading: Promise<void> | null = null;
  /** Requests per pull: READ_AHEAD, or fewer where requests carry many prefix blocks. */
  #pullSize = FIRST_PULL;
  #ended = false;
  #streamError: string | null = null;
  #streamErrorCause: unknown = null;
  #issued = 0;
  /** Block keys offered so far (bounded), to tell what an unbounded cache would have hit. */
  #blockKeys: Set<string> | null = new Set();
  readonly #offered = {
    context: newStats(),
    generation: newStats(),
    prefillOnly: 0,
    systemPrompt: 0,
    rag: 0,
    multiTurnReloads: 0,
    prefixBlocks: 0,
    /** Prefix blocks whose key an earlier offered request already listed. */
    repeatedPrefixBlocks: 0,
    qos: { interactive: 0, responsive: 0, batch: 0 } as Record<QosLevel, number>,
    lastArrivalNs: 0,
    lastCycle: 0,
  };

  private constructor(feed: ReplayFeed, opts: ReplayWorkloadOptions) {
    this.#feed = feed;
    this.#o = opts;
    this.kind = opts.kind;
    this.paced = opts.paced;
    this.#rng = new Rng(opts.seed, REPLAY_REQUEST_STREAM);
  }

  /** A replay whose first requests are already read (so the first arrival is known). */
  static async start(feed: ReplayFeed, opts: ReplayWorkloadOptions): Promise<ReplayWorkload> {
    const w = new ReplayWorkload(feed, opts);
    await w.#refill();
    // Failing on the very first batch is an input problem to report as such, not a replay cut short.
    if (w.#streamErrorCause) throw w.#streamErrorCause;
    return w;
  }

  get activeUsers(): number {
    return this.#feed.activeUsers();
  }

  get issued(): number {
    return this.#issued;
  }

  /** Why the replay ended before the file's end (it changed or broke under the run), or null. */
  get stoppedEarly(): string | null {
    return this.#streamError === null ? null : `the ${this.kind} replay stopped early: ${this.#streamError}`;
  }

  peekArrivalNs(): number {
    if (this.#head < this.#buf.length) return this.#buf[this.#head].arrivalNs;
    if (this.#ended) return Number.POSITIVE_INFINITY;
    this.#startRefill();
    return PENDING_ARRIVAL_NS;
  }

  /** Resolves when requests are ready or the replay is over (tests, and callers that may wait). */
  async ready(): Promise<void> {
    while (this.#head >= this.#buf.length && !this.#ended) {
      this.#startRefill();
      await this.#loading;
    }
  }

  next(): KvRequest {
    return this.nextQueued().materialize();
  }

  /**
   * The next request in arrival order, kept compact for the queue (the scheduler's path): the spec and
   * the draws; its strings are built when a worker takes it.
   */
  nextQueued(): QueuedReplay {
    if (this.#head >= this.#buf.length) throw new Error('ReplayWorkload.next() called with no request ready (check peekArrivalNs first)');
    const spec = this.#buf[this.#head++];
    if (this.#head >= READ_AHEAD) {
      this.#buf = this.#buf.slice(this.#head);
      this.#head = 0;
    }
    if (this.#buf.length - this.#head < this.#pullSize / 2) this.#startRefill();
    this.#feed.offered?.(spec);
    const queued = this.#decorate(spec);
    const req = queued.materialize();
    this.#count(req, spec.cycle);
    this.#record(req);
    return queued;
  }

  digest(): string {
    return this.#digest.copy().digest('hex');
  }

  describe(): Record<string, unknown> {
    const f = this.#offered;
    const allOffered = this.#ended && this.#head >= this.#buf.length;
    return {
      ...this.#feed.describe(),
      paced: this.paced,
      // Counted from the requests offered, not from the file reader (which reads ahead).
      cycles_completed: this.#issued === 0 ? 0 : allOffered ? f.lastCycle + 1 : f.lastCycle,
      current_cycle: f.lastCycle,
      offered: {
        requests: this.#issued,
        context_tokens: statsOut(f.context),
        generation_tokens: statsOut(f.generation),
        prefill_only_requests: f.prefillOnly,
        system_prompt_requests: f.systemPrompt,
        rag_requests: f.rag,
        multi_turn_reload_reads: f.multiTurnReloads,
        prefix_blocks: f.prefixBlocks,
        /**
         * Share of the offered prefix blocks that an earlier offered request had listed: the prefix-block
         * hit rate unbounded tiers would give on this stream (null when too many keys to track).
         */
        prefix_block_ideal_hit_rate: this.#blockKeys === null ? null : f.prefixBlocks > 0 ? f.repeatedPrefixBlocks / f.prefixBlocks : null,
        qos: { ...f.qos },
        last_arrival_s: f.lastArrivalNs / 1e9,
      },
      stream_error: this.#streamError,
    };
  }

  #startRefill(): void {
    if (this.#loading || this.#ended) return;
    this.#loading = this.#refill().finally(() => {
      this.#loading = null;
    });
  }

  async #refill(): Promise<void> {
    try {
      // Half the block budget per pull: a pull arrives while up to half of the previous one is left.
      const got = await this.#feed.pull(this.#pullSize, READ_AHEAD_BLOCKS / 2);
      if (got.length === 0) this.#ended = true;
      else for (const s of got) this.#buf.push(s);
      const blocks = got.reduce((n, s) => n + s.prefixBlockCount, 0);
      this.#pullSize = blocks === 0 ? READ_AHEAD : Math.max(1, Math.min(READ_AHEAD, Math.floor(READ_AHEAD_BLOCKS / 2 / (blocks / got.length))));
    } catch (err) {
      // The file was validated before the run; failing now means it changed underneath. End the
      // replay here (the run ends as partial, see stoppedEarly) and say why in the results.
      this.#ended = true;
      this.#streamErrorCause = err;
      this.#streamError = (err as Error).message;
      if (this.#issued > 0 || this.#buf.length > 0) this.#o.log('error', `replay stopped early: ${this.#streamError}`);
    }
  }

  /** The per-request draws, in offered order (the seeded stream), kept with the spec for the queue. */
  #decorate(s: ReplaySpec): QueuedReplay {
    const o = this.#o;
    const rng = this.#rng;
    const seq = this.#issued++;
    const [interactive, responsive, batch] = o.profile.qos;
    const r = rng.next();
    const qos = r < interactive.share ? interactive : r < interactive.share + responsive.share ? responsive : batch;

    let contextTokens = s.contextTokens;
    let systemPrompt: SystemPromptRef | null = null;
    if (o.systemPrompts && rng.chance(o.profile.systemPromptProbability)) {
      systemPrompt = rng.pick(SYSTEM_PROMPT_REFS);
      contextTokens = Math.max(1, contextTokens - systemPrompt.tokens);
    }
    let ragChunks: RagChunk[] | null = null;
    if (o.ragDocuments && o.ragDocuments.length > 0 && rng.chance(o.profile.rag.requestProbability)) {
      const doc = rng.pick(o.ragDocuments);
      ragChunks = zipfTopK(doc.chunks, o.profile.rag.topK, rng);
    }

    let phase: RequestPhase = contextTokens >= PREFILL_ONLY_CONTEXT_TOKENS ? 'prefill' : 'prefill_decode';
    let decodeKey: string | null = null;
    if (o.mode === 'decode-only') {
      // As the synthetic users: decode reads hit the pre-populated entries; nothing is written.
      phase = 'decode';
      if (o.prepopulatedKeys.length > 0) decodeKey = rng.pick(o.prepopulatedKeys);
    } else if (o.mode === 'prefill-only') {
      phase = 'prefill';
    }
    return new QueuedReplay(seq, s, qos, { contextTokens, phase, systemPrompt, ragChunks, decodeKey });
  }

  /** Counts what was offered (the request built once here, for the counts and the digest). */
  #count(req: KvRequest, cycle: number): void {
    const f = this.#offered;
    addStat(f.context, req.contextTokens);
    addStat(f.generation, req.generationTokens);
    if (req.phase === 'prefill') f.prefillOnly++;
    if (req.systemPrompt) f.systemPrompt++;
    if (req.ragChunks) f.rag++;
    f.multiTurnReloads += req.previousTurnKeys.length;
    const prefixBlocks = req.prefixBlocks;
    if (prefixBlocks) {
      f.prefixBlocks += prefixBlocks.length;
      if (this.#blockKeys) {
        for (const b of prefixBlocks) {
          if (this.#blockKeys.has(b.key)) f.repeatedPrefixBlocks++;
          else this.#blockKeys.add(b.key);
        }
        if (this.#blockKeys.size > MAX_TRACKED_BLOCK_KEYS) this.#blockKeys = null;
      }
    }
    f.qos[req.qos]++;
    f.lastArrivalNs = req.arrivalNs;
    f.lastCycle = cycle;
  }

  #record(r: KvRequest): void {
    this.#digest.update(
      `${r.seq}|${r.userIndex}|${r.arrivalNs}|${r.qos}|${r.contextTokens}|${r.generationTokens}|${r.phase}|${r.cacheKey}|` +
        `${r.previousTurnKeys.length}|${r.systemPrompt?.key ?? '-'}|${r.ragChunks?.map((c) => c.key).join(',') ?? '-'}|${r.decodeKey}|` +
        `${r.prefixBlocks ? r.prefixBlocks.map((b) => `${b.key}:${b.tokens}`).join(',') : '-'}\n`,
    );
  }
}

/**
 * A replayed request as it waits in the queue: its spec (numbers, and references to what the feed holds)
 * and the draws made for it when it was offered. {@link materialize} builds the request the source
 * offered: its ids and keys, the keys of the earlier turns it reloads, its prefix blocks.
 */
export class QueuedReplay implements QueuedArrival {
  submitNs = 0n;
  readonly seq: number;
  readonly spec: ReplaySpec;
  readonly #qos: QosClass;
  /** The spec's, less the shared system prompt drawn for it. */
  readonly #contextTokens: number;
  readonly #phase: RequestPhase;
  readonly #systemPrompt: SystemPromptRef | null;
  readonly #ragChunks: RagChunk[] | null;
  /** Decode-only: the pre-populated entry its decode reads, or null for its own entry. */
  readonly #decodeKey: string | null;

  constructor(
    seq: number,
    spec: ReplaySpec,
    qos: QosClass,
    draws: { contextTokens: number; phase: RequestPhase; systemPrompt: SystemPromptRef | null; ragChunks: RagChunk[] | null; decodeKey: string | null },
  ) {
    this.seq = seq;
    this.spec = spec;
    this.#qos = qos;
    this.#contextTokens = draws.contextTokens;
    this.#phase = draws.phase;
    this.#systemPrompt = draws.systemPrompt;
    this.#ragChunks = draws.ragChunks;
    this.#decodeKey = draws.decodeKey;
  }

  get arrivalNs(): number {
    return this.spec.arrivalNs;
  }

  get priority(): number {
    return this.#qos.priority;
  }

  get conversationId(): string | null {
    return this.spec.conversationId;
  }

  get turn(): number {
    return this.spec.turn;
  }

  /** Decode-only requests reload nothing (nothing is written; decode reads the pre-populated entries). */
  get reloadedTurns(): number {
    return this.spec.conversationId !== null && this.#phase !== 'decode' ? this.spec.turn - 1 : 0;
  }

  materialize(): KvRequest {
    const s = this.spec;
    const names = s.names();
    const decodeOnly = this.#phase === 'decode';
    const previousTurnKeys: string[] = [];
    for (let t = 1; t <= this.reloadedTurns; t++) previousTurnKeys.push(`${s.conversationId}_turn_${t}`);
    return {
      seq: this.seq,
      id: names.requestId,
      userIndex: s.userIndex,
      userId: names.userId,
      qos: this.#qos.level,
      priority: this.#qos.priority,
      arrivalNs: s.arrivalNs,
      submitNs: this.submitNs,
      contextTokens: this.#contextTokens,
      generationTokens: s.generationTokens,
      phase: this.#phase,
      cacheKey: names.cacheKey,
      conversationId: s.conversationId,
      turn: s.turn,
      previousTurnKeys,
      systemPrompt: this.#systemPrompt,
      ragChunks: this.#ragChunks,
      decodeKey: this.#decodeKey ?? names.cacheKey,
      cacheType: this.#systemPrompt ? 'system' : 'user',
      prefixBlocks: decodeOnly ? null : names.prefixBlocks,
    };
  }
}

/** Key prefix of replay cycle `cycle`: later passes use their own keys, so they never hit an earlier pass's entries. */
export function cyclePrefix(cycle: number): string {
  return cycle === 0 ? '' : `c${cycle}_`;
}

/** Splits `tokens` into blocks of `blockTokens` (the last one shorter), one per id. */
export function blocksOf(ids: readonly (string | number)[], tokens: number, blockTokens: number, keyOf: (id: string | number) => string): PrefixBlock[] {
  const out: PrefixBlock[] = [];
  for (let k = 0; k < ids.length; k++) {
    const t = k < ids.length - 1 ? blockTokens : tokens - blockTokens * (ids.length - 1);
    out.push({ key: keyOf(ids[k]), tokens: t });
  }
  return out;
}

export { addStat, newStats, type TokenStats };
