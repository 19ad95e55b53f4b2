import { createHash, type Hash } from 'node:crypto';
import { Rng } from './rng.ts';
import { PREFILL_ONLY_CONTEXT_TOKENS, SYSTEM_PROMPTS, type Persona, type QosLevel, type RequestPhase } from './personas.ts';
import { DEFAULT_WORKLOAD_PROFILE, type WorkloadProfile } from './workload-profile.ts';
import type { QueuedArrival, WorkloadSource } from './workload-source.ts';
import { BinaryHeap } from './binary-heap.ts';
import type { CacheType } from '../metrics/tier-stats.ts';

export interface SystemPromptRef {
  key: string;
  tokens: number;
}

export interface RagChunk {
  key: string;
  tokens: number;
}

export interface RagDocument {
  id: string;
  tokens: number;
  chunks: RagChunk[];
}

/** One request as offered by a simulated user. Every field is fixed when it is generated. */
export interface KvRequest {
  /** Position in the offered stream (0-based); IDs come from counters, never from the clock. */
  seq: number;
  id: string;
  userIndex: number;
  userId: string;
  qos: QosLevel;
  priority: number;
  /** Scheduled (virtual) arrival in ns since the measured phase began. */
  arrivalNs: number;
  /** Real time at which it entered the queue (set by the scheduler). */
  submitNs: bigint;
  contextTokens: number;
  generationTokens: number;
  phase: RequestPhase;
  cacheKey: string;
  conversationId: string | null;
  turn: number;
  /**
   * Keys of the conversation's earlier turns, read in order before the prefill (multi-turn reload):
   * turns 1..k of `conversationId` (`<conversationId>_turn_<n>`), or none. The queue relies on it.
   */
  previousTurnKeys: string[];
  systemPrompt: SystemPromptRef | null;
  ragChunks: RagChunk[] | null;
  /** The key decode reads target: the request's own entry, or a pre-populated one in decode-only mode. */
  decodeKey: string;
  cacheType: CacheType;
  /**
   * Shared prefix blocks (Mooncake-style hash IDs): each is read if cached and written if not, before
   * the request's own prefill; decode then re-reads the whole chain. Null for other workloads.
   */
  prefixBlocks?: { key: string; tokens: number }[] | null;
}

export interface SyntheticWorkloadOptions {
  seed: number;
  numUsers: number;
  multiTurn: boolean;
  prefixCaching: boolean;
  mode: 'standard' | 'prefill-only' | 'decode-only';
  ragDocuments: RagDocument[] | null;
  /** Keys a decode-only run reads (pre-populated before the run). */
  prepopulatedKeys: string[];
  /** Workload constants (personas, QoS mix, conversation and RAG parameters); the reference's by default. */
  profile?: WorkloadProfile;
  /** Where a warning about the workload goes (the run's console); it is kept for the results too. */
  log?: (level: 'warn', message: string) => void;
}

/** A simulated user: fixed per-user parameters and its own seeded stream. */
export interface UserState {
  index: number;
  id: string;
  persona: Persona;
  contextTokens: number;
  generationTokens: number;
  thinkTimeS: number;
  qos: QosLevel;
  priority: number;
  rng: Rng;
  nextArrivalNs: number;
  conversationId: string | null;
  conversationTurn: number;
  conversationsStarted: number;
  /** The workload's options, shared by every request of every user (read when a request is built). */
  opts: SyntheticWorkloadOptions;
}

/**
 * A synthetic user's request as it waits in the queue: the numbers drawn for it, in the order the
 * stream draws them, and references to what is shared (its user, its conversation's id, the system
 * prompt and RAG chunks). Its strings (ids, keys, the keys of the earlier turns it reloads) are built
 * only when a worker takes it ({@link materialize}). Behind a drive slower than the offered load the
 * open loop queues thousands of arrivals a second; as full requests they took about 930 B each.
 */
export class CompactRequest implements QueuedArrival {
  /** Real time at which it entered the queue (set by the scheduler). */
  submitNs = 0n;
  readonly seq: number;
  readonly user: UserState;
  /** Scheduled (virtual) arrival in ns since the measured phase began. */
  readonly arrivalNs: number;
  readonly contextTokens: number;
  readonly generationTokens: number;
  readonly conversationId: string | null;
  readonly turn: number;
  /** Index into {@link SYSTEM_PROMPT_REFS}, or -1. */
  readonly systemPromptIndex: number;
  readonly ragChunks: RagChunk[] | null;
  /** Index into the pre-populated keys a decode-only run reads, or -1: the request's own entry. */
  readonly decodeKeyIndex: number;

  constructor(
    seq: number,
    user: UserState,
    arrivalNs: number,
    draws: { contextTokens: number; generationTokens: number; conversationId: string | null; turn: number; systemPromptIndex: number; ragChunks: RagChunk[] | null; decodeKeyIndex: number },
  ) {
    this.seq = seq;
    this.user = user;
    this.arrivalNs = arrivalNs;
    this.contextTokens = draws.contextTokens;
    this.generationTokens = draws.generationTokens;
    this.conversationId = draws.conversationId;
    this.turn = draws.turn;
    this.systemPromptIndex = draws.systemPromptIndex;
    this.ragChunks = draws.ragChunks;
    this.decodeKeyIndex = draws.decodeKeyIndex;
  }

  get priority(): number {
    return this.user.priority;
  }

  /** How many earlier turns of its conversation (turns 1..k) the request reloads. */
  get reloadedTurns(): number {
    return this.conversationId !== null && this.user.opts.mode !== 'decode-only' ? this.turn - 1 : 0;
  }

  /** The full request, as the source offered it. */
  materialize(): KvRequest {
    const user = this.user;
    const o = user.opts;
    const seq = this.seq;
    const conversationId = this.conversationId;
    const systemPrompt = this.systemPromptIndex >= 0 ? SYSTEM_PROMPT_REFS[this.systemPromptIndex] : null;
    const cacheKey = conversationId !== null ? `${conversationId}_turn_${this.turn}` : `${user.id}_req_${String(seq).padStart(6, '0')}`;
    let decodeKey = cacheKey;
    let phase: RequestPhase = this.contextTokens >= PREFILL_ONLY_CONTEXT_TOKENS ? 'prefill' : 'prefill_decode';
    if (o.mode === 'decode-only') {
      phase = 'decode';
      if (this.decodeKeyIndex >= 0) decodeKey = o.prepopulatedKeys[this.decodeKeyIndex];
    } else if (o.mode === 'prefill-only') {
      phase = 'prefill';
    }
    const previousTurnKeys: string[] = [];
    for (let t = 1; t <= this.reloadedTurns; t++) previousTurnKeys.push(`${conversationId}_turn_${t}`);
    return {
      seq,
      id: `req_${user.id}_${String(seq).padStart(6, '0')}`,
      userIndex: user.index,
      userId: user.id,
      qos: user.qos,
      priority: user.priority,
      arrivalNs: this.arrivalNs,
      submitNs: this.submitNs,
      contextTokens: this.contextTokens,
      generationTokens: this.generationTokens,
      phase,
      cacheKey,
      conversationId,
      turn: this.turn,
      previousTurnKeys,
      systemPrompt,
      ragChunks: this.ragChunks,
      decodeKey,
      cacheType: systemPrompt ? 'system' : 'user',
    };
  }
}

const NS_PER_S = 1e9;

export function systemPromptRef(prompt: string): SystemPromptRef {
  const tokens = prompt.split(/\s+/).filter(Boolean).length;
  const key = `kv_system_${createHash('sha256').update(`${prompt.slice(0, 500)}_${tokens}`).digest('hex').slice(0, 16)}`;
  return { key, tokens };
}

/** The shared system prompts' cache entries: every workload source looks the same three up. */
export const SYSTEM_PROMPT_REFS: readonly SystemPromptRef[] = SYSTEM_PROMPTS.map(systemPromptRef);

/**
 * The synthetic multi-user workload: users with personas and QoS classes arrive open-loop (each
 * request's arrival is scheduled from the previous one plus think time, never from completions).
 * Requests are produced centrally in arrival order, each user drawing from its own seeded stream,
 * so the offered stream depends only on the seed and the configuration.
 */
export class SyntheticWorkload implements WorkloadSource {
  readonly kind = 'synthetic' as const;
  readonly paced = true;
  readonly #opts: SyntheticWorkloadOptions;
  readonly #profile: WorkloadProfile;
  readonly #users: UserState[] = [];
  /** Active users by (next arrival, index). */
  readonly #heap = new BinaryHeap<UserState>((a, b) => a.nextArrivalNs < b.nextArrivalNs || (a.nextArrivalNs === b.nextArrivalNs && a.index < b.index));
  /** Conversations in least-recently-used order (Map keeps insertion order; touch = re-insert). */
  readonly #conversations = new Map<string, number>();
  readonly #digest: Hash = createHash('sha256');
  #issued = 0;
  /** Offered requests that continue a conversation (turn > 1). */
  #multiTurnRequests = 0;
  /** Conversations whose user came back to continue them after the tracking cap had dropped them. */
  #conversationsCutByCap = 0;
  readonly #warnings: string[] = [];

  constructor(opts: SyntheticWorkloadOptions) {
    this.#opts = opts;
    this.#profile = opts.profile ?? DEFAULT_WORKLOAD_PROFILE;
    this.addUsers(opts.numUsers, 0);
  }

  get activeUsers(): number {
    return this.#heap.size;
  }

  get issued(): number {
    return this.#issued;
  }

  users(): readonly { id: string; persona: string; contextTokens: number; qos: QosLevel }[] {
    return this.#users.map((u) => ({ id: u.id, persona: u.persona.name, contextTokens: u.contextTokens, qos: u.qos }));
  }

  /** Adds users whose first request comes one think time after `atNs` (the autoscaler uses this). */
  addUsers(count: number, atNs: number): void {
    for (let n = 0; n < count; n++) {
      const index = this.#users.length;
      const rng = new Rng(this.#opts.seed, index + 1);
      const persona = rng.pick(this.#profile.personas);
      const contextTokens = rng.int(persona.contextTokens[0], persona.contextTokens[1]);
      const generationTokens = rng.int(persona.generationTokens[0], persona.generationTokens[1]);
      const thinkTimeS = rng.uniform(persona.thinkTimeS[0], persona.thinkTimeS[1]);
      const r = rng.next();
      const [interactive, responsive, batch] = this.#profile.qos;
      const qos = r < interactive.share ? interactive : r < interactive.share + responsive.share ? responsive : batch;
      const user: UserState = {
        index,
        id: `user_${String(index).padStart(4, '0')}`,
        persona,
        contextTokens,
        generationTokens,
        thinkTimeS,
        qos: qos.level,
        priority: qos.priority,
        rng,
        nextArrivalNs: 0,
        conversationId: null,
        conversationTurn: 0,
        conversationsStarted: 0,
        opts: this.#opts,
      };
      user.nextArrivalNs = atNs + this.#thinkNs(user);
      this.#users.push(user);
      this.#heap.push(user);
    }
    this.#warnAboveConversationCap();
  }

  /**
   * The reference's cap on tracked conversations is kept, but with more users than it allows a user's
   * conversation is mostly dropped before the next turn, and the multi-turn traffic fades: said once.
   */
  #warnAboveConversationCap(): void {
    const cap = this.#profile.maxTrackedConversations;
    const users = this.#heap.size;
    if (!this.#opts.multiTurn || users <= cap || this.#warnings.length > 0) return;
    const message =
      `${users} users are more than the ${cap} conversations tracked at once (the reference's limit; the config's conversation.max_conversations): ` +
      'a conversation is mostly dropped before its user comes back, so multi-turn requests and their reloads of earlier turns will be rarer ' +
      'than with fewer users (workload_source.offered.multi_turn_share says how many were offered)';
    this.#warnings.push(message);
    this.#opts.log?.('warn', message);
  }

  /** Removes the most recently added active users (they stop offering requests). */
  removeUsers(count: number): void {
    for (let n = 0; n < count && this.#heap.size > 1; n++) {
      const newest = Math.max(...this.#heap.items().map((u) => u.index));
      this.#heap.remove((u) => u.index === newest);
    }
  }

  /** Virtual time of the next arrival, or Infinity when no user is active. */
  peekArrivalNs(): number {
    return this.#heap.peek()?.nextArrivalNs ?? Number.POSITIVE_INFINITY;
  }

  /** Produces the next request in arrival order. */
  next(): KvRequest {
    return this.nextQueued().materialize();
  }

  /** The next request in arrival order, kept compact for the queue (the scheduler's path). */
  nextQueued(): CompactRequest {
    const user = this.#heap.peek()!;
    const req = this.#generate(user);
    user.nextArrivalNs += this.#thinkNs(user);
    this.#heap.updateTop();
    this.#record(req.materialize());
    return req;
  }

  describe(): Record<string, unknown> {
    const personas: Record<string, number> = {};
    for (const u of this.#users) personas[u.persona.name] = (personas[u.persona.name] ?? 0) + 1;
    return {
      users_created: this.#users.length,
      personas,
      max_tracked_conversations: this.#profile.maxTrackedConversations,
      offered: {
        requests: this.#issued,
        multi_turn_requests: this.#multiTurnRequests,
        multi_turn_share: this.#issued > 0 ? this.#multiTurnRequests / this.#issued : null,
        conversations_cut_by_cap: this.#conversationsCutByCap,
      },
      warnings: [...this.#warnings],
    };
  }

  /** sha256 of every request offered so far, in order. */
  digest(): string {
    return this.#digest.copy().digest('hex');
  }

  #thinkNs(user: UserState): number {
    return Math.round(user.thinkTimeS * user.rng.uniform(0.8, 1.2) * NS_PER_S);
  }

  #generate(user: UserState): CompactRequest {
    const o = this.#opts;
    const rng = user.rng;
    const seq = this.#issued++;
    let conversationId: string | null = null;
    let turn = 1;
    if (o.multiTurn) {
      if (user.conversationId !== null) {
        const tracked = this.#conversations.has(user.conversationId);
        const ends = rng.next() < this.#profile.conversationEndProbability || user.conversationTurn >= this.#profile.conversationMaxTurns;
        if (!tracked && !ends) this.#conversationsCutByCap++;
        if (!tracked || ends) {
          this.#conversations.delete(user.conversationId);
          user.conversationId = null;
        }
      }
      if (user.conversationId === null) {
        user.conversationId = `conv_${user.id}_${String(user.conversationsStarted++).padStart(4, '0')}`;
        user.conversationTurn = 0;
        if (this.#conversations.size >= this.#profile.maxTrackedConversations) {
          const oldest = this.#conversations.keys().next().value as string;
          this.#conversations.delete(oldest);
        }
      }
      this.#conversations.delete(user.conversationId);
      this.#conversations.set(user.conversationId, seq);
      user.conversationTurn++;
      conversationId = user.conversationId;
      turn = user.conversationTurn;
      if (turn > 1) this.#multiTurnRequests++;
    }
    let contextTokens = rng.int(Math.max(1, Math.floor(user.contextTokens / 4)), user.contextTokens);
    const generationTokens = rng.int(Math.max(1, Math.floor(user.generationTokens / 4)), user.generationTokens);

    let systemPromptIndex = -1;
    if (o.prefixCaching && rng.chance(this.#profile.systemPromptProbability)) {
      systemPromptIndex = rng.index(SYSTEM_PROMPT_REFS.length);
      contextTokens = Math.max(1, contextTokens - SYSTEM_PROMPT_REFS[systemPromptIndex].tokens);
    }

    let ragChunks: RagChunk[] | null = null;
    if (o.ragDocuments && o.ragDocuments.length > 0 && rng.chance(this.#profile.rag.requestProbability)) {
      const doc = rng.pick(o.ragDocuments);
      ragChunks = zipfTopK(doc.chunks, this.#profile.rag.topK, rng);
    }

    const decodeKeyIndex = o.mode === 'decode-only' && o.prepopulatedKeys.length > 0 ? rng.index(o.prepopulatedKeys.length) : -1;
    return new CompactRequest(seq, user, user.nextArrivalNs, { contextTokens, generationTokens, conversationId, turn, systemPromptIndex, ragChunks, decodeKeyIndex });
  }

  #record(r: KvRequest): void {
    this.#digest.update(
      `${r.seq}|${r.userIndex}|${r.arrivalNs}|${r.qos}|${r.contextTokens}|${r.generationTokens}|${r.phase}|${r.cacheKey}|` +
        `${r.previousTurnKeys.length}|${r.systemPrompt?.key ?? '-'}|${r.ragChunks?.map((c) => c.key).join(',') ?? '-'}|${r.decodeKey}\n`,
    );
  }
}

/** Top-k chunks without replacement, chunk i weighted 1/(i+1) (zipfian retrieval). */
export function zipfTopK<T>(items: readonly T[], k: number, rng: Rng): T[] {
  const pool = items.map((item, i) => ({ item, weight: 1 / (i + 1) }));
  const chosen: T[] = [];
  while (chosen.length < k && pool.length > 0) {
    const idx = rng.weightedIndex(pool.map((p) => p.weight));
    chosen.push(pool[idx].item);
    pool.splice(idx, 1);
  }
  return chosen;
}
