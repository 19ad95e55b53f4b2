import { BinaryHeap } from './binary-heap.ts';
import type { KvRequest } from './synthetic-workload.ts';
import type { QueuedArrival } from './workload-source.ts';

/**
 * What waits in the queue: a full request, or an arrival kept compact (a synthetic user's or a replay's:
 * the numbers drawn for it and references to shared state) and built into a full request when a worker
 * takes it. An open loop behind a slow drive queues hundreds of thousands of arrivals.
 */
export type QueuedRequest = KvRequest | QueuedArrival;

/** A conversation with turns queued or in service whose entry is not written yet. */
interface Conversation {
  /** Those turns, by turn number. */
  readonly unwritten: Map<number, QueuedRequest>;
  /** Requests held until the entry of this turn is written, in arrival order. */
  readonly heldOn: Map<number, QueuedRequest[]>;
}

/**
 * The one request queue the workers serve: higher QoS priority first; within a priority, earlier
 * scheduled arrival first, then lower sequence number — a total order, so ties never depend on timing.
 *
 * A conversation's turns are sequential, as in real serving: a turn that reloads earlier turns is held
 * here (still queued, its wait counted as queue wait) until each earlier turn the queue has seen has
 * written its entry or ended ({@link release}). Otherwise a turn could be served first (a higher QoS
 * priority, a free worker) and its reload would miss an entry not written yet: a miss of the request
 * order, not of the cache. Held requests occupy no worker, so other requests go on being served.
 * The earlier turns a request reloads are turns 1..k of its conversation (`previousTurnKeys`), so they
 * are tracked by conversation and turn number rather than by key.
 */
export class RequestQueue {
  readonly #heap = new BinaryHeap<QueuedRequest>(servedBefore);
  readonly #waiters: Waiter[] = [];
  readonly #conversations = new Map<string, Conversation>();
  #held = 0;
  #closed = false;
  maxDepth = 0;

  /** Requests waiting to be served, held ones included. */
  get depth(): number {
    return this.#heap.size + this.#held;
  }

  /** Requests a worker could take now: queued and not held for an earlier turn. */
  get servable(): number {
    return this.#heap.size;
  }

  push(req: QueuedRequest): void {
    if (this.#closed) return;
    if (req.conversationId !== null) {
      let c = this.#conversations.get(req.conversationId);
      if (!c) this.#conversations.set(req.conversationId, (c = { unwritten: new Map(), heldOn: new Map() }));
      if (!c.unwritten.has(req.turn)) c.unwritten.set(req.turn, req);
    }
    this.#admit(req);
  }

  /**
   * Next request by priority, waiting when empty; null once closed. `claim` is called the moment a
   * request is handed over, before the promise resumes the taker (a later microtask): whoever counts
   * requests in service must count this one at once, or for that moment it is neither queued nor in
   * service, and a check that nothing is left (the end of a replay) would drop it.
   */
  take(claim: () => void = () => {}): Promise<KvRequest | null> {
    if (this.#heap.size > 0) {
      claim();
      return Promise.resolve(materialize(this.#heap.pop()!));
    }
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiters.push({ resolve, claim }));
  }

  /**
   * `req` has written its own entry, or ended (completed, failed, abandoned) without writing it: the
   * later turns held for it may be served. Idempotent.
   */
  release(req: KvRequest): void {
    if (req.conversationId === null) return;
    const c = this.#conversations.get(req.conversationId);
    if (!c || c.unwritten.get(req.turn)?.seq !== req.seq) return;
    c.unwritten.delete(req.turn);
    const held = c.heldOn.get(req.turn);
    if (held) {
      c.heldOn.delete(req.turn);
      this.#held -= held.length;
      for (const r of held) this.#admit(r);
    }
    if (c.unwritten.size === 0 && c.heldOn.size === 0) this.#conversations.delete(req.conversationId);
  }

  /** Stops serving: waiting workers get null; queued requests (held ones too) are dropped and returned. */
  close(): QueuedRequest[] {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.resolve(null);
    const dropped = this.#heap.clear();
    for (const c of this.#conversations.values()) for (const held of c.heldOn.values()) dropped.push(...held);
    this.#conversations.clear();
    this.#held = 0;
    return dropped;
  }

  /** Serves `req`, or holds it while an earlier turn it reloads has not written its entry. */
  #admit(req: QueuedRequest): void {
    if (this.#closed) return;
    const c = req.conversationId === null ? undefined : this.#conversations.get(req.conversationId);
    if (c) {
      // The latest earlier turn still unwritten: the one written last.
      for (let turn = reloadedTurns(req); turn >= 1; turn--) {
        if (!c.unwritten.has(turn)) continue;
        const held = c.heldOn.get(turn);
        if (held) held.push(req);
        else c.heldOn.set(turn, [req]);
        this.#held++;
        this.#noteDepth();
        return;
      }
    }
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.claim();
      waiter.resolve(materialize(req));
      return;
    }
    this.#heap.push(req);
    this.#noteDepth();
  }

  #noteDepth(): void {
    if (this.depth > this.maxDepth) this.maxDepth = this.depth;
  }
}

interface Waiter {
  resolve: (r: KvRequest | null) => void;
  claim: () => void;
}

function isCompact(req: QueuedRequest): req is QueuedArrival {
  return 'materialize' in req;
}

function materialize(req: QueuedRequest): KvRequest {
  return isCompact(req) ? req.materialize() : req;
}

/** How many earlier turns of its conversation (turns 1..k) the request reloads. */
function reloadedTurns(req: QueuedRequest): number {
  return isCompact(req) ? req.reloadedTurns : req.previousTurnKeys.length;
}

function servedBefore(a: QueuedRequest, b: QueuedRequest): boolean {
  if (a.priority !== b.priority) return a.priority > b.priority;
  if (a.arrivalNs !== b.arrivalNs) return a.arrivalNs < b.arrivalNs;
  return a.seq < b.seq;
}

/** A counting semaphore (for --max-concurrent-allocs); limit 0 means unlimited. */
export class Semaphore {
  #available: number;
  readonly #waiters: (() => void)[] = [];

  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
    this.#available = limit;
  }

  async acquire(): Promise<void> {
    if (this.limit <= 0) return;
    if (this.#available > 0) {
      this.#available--;
      return;
    }
    await new Promise<void>((r) => this.#waiters.push(r));
  }

  release(): void {
    if (this.limit <= 0) return;
    const w = this.#waiters.shift();
    if (w) w();
    else this.#available++;
  }
}
