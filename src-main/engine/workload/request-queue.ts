import { BinaryHeap } from './binary-heap.ts';
import type { KvRequest } from './synthetic-workload.ts';

/**
 * The one request queue the workers serve: higher QoS priority first; within a priority, earlier
 * scheduled arrival first, then lower sequence number — a total order, so ties never depend on timing.
 *
 * A conversation's turns are sequential, as in real serving: a turn that reloads earlier turns is held
 * here (still queued, its wait counted as queue wait) until each earlier turn the queue has seen has
 * written its entry or ended ({@link release}). Otherwise a turn could be served first (a higher QoS
 * priority, a free worker) and its reload would miss an entry not written yet: a miss of the request
 * order, not of the cache. Held requests occupy no worker, so other requests go on being served.
 */
export class RequestQueue {
  readonly #heap = new BinaryHeap<KvRequest>(servedBefore);
  readonly #waiters: Waiter[] = [];
  /** Conversation turns queued or being served whose entry is not written yet, by their key. */
  readonly #unwritten = new Map<string, KvRequest>();
  /** Requests held until the entry of this key is written, in arrival order. */
  readonly #heldOn = new Map<string, KvRequest[]>();
  #held = 0;
  #closed = false;
  maxDepth = 0;

  /** Requests waiting to be served, held ones included. */
  get depth(): number {
    return this.#heap.size + this.#held;
  }

  push(req: KvRequest): void {
    if (this.#closed) return;
    if (req.conversationId !== null && !this.#unwritten.has(req.cacheKey)) this.#unwritten.set(req.cacheKey, req);
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
      return Promise.resolve(this.#heap.pop()!);
    }
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiters.push({ resolve, claim }));
  }

  /**
   * `req` has written its own entry, or ended (completed, failed, abandoned) without writing it: the
   * later turns held for it may be served. Idempotent.
   */
  release(req: KvRequest): void {
    if (this.#unwritten.get(req.cacheKey) !== req) return;
    this.#unwritten.delete(req.cacheKey);
    const held = this.#heldOn.get(req.cacheKey);
    if (!held) return;
    this.#heldOn.delete(req.cacheKey);
    this.#held -= held.length;
    for (const r of held) this.#admit(r);
  }

  /** Stops serving: waiting workers get null; queued requests (held ones too) are dropped and returned. */
  close(): KvRequest[] {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w.resolve(null);
    const dropped = [...this.#heap.clear(), ...[...this.#heldOn.values()].flat()];
    this.#heldOn.clear();
    this.#unwritten.clear();
    this.#held = 0;
    return dropped;
  }

  /** Serves `req`, or holds it while an earlier turn it reloads has not written its entry. */
  #admit(req: KvRequest): void {
    if (this.#closed) return;
    const blocking = req.previousTurnKeys.findLast((k) => this.#unwritten.has(k));
    if (blocking !== undefined) {
      const held = this.#heldOn.get(blocking);
      if (held) held.push(req);
      else this.#heldOn.set(blocking, [req]);
      this.#held++;
      this.#noteDepth();
      return;
    }
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.claim();
      waiter.resolve(req);
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

function servedBefore(a: KvRequest, b: KvRequest): boolean {
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
