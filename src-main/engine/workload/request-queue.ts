import type { KvRequest } from './synthetic-workload.ts';

/**
 * The one request queue the workers serve: higher QoS priority first; within a priority, earlier
 * scheduled arrival first, then lower sequence number — a total order, so ties never depend on timing.
 */
export class RequestQueue {
  readonly #heap: KvRequest[] = [];
  readonly #waiters: ((r: KvRequest | null) => void)[] = [];
  #closed = false;
  maxDepth = 0;

  get depth(): number {
    return this.#heap.length;
  }

  push(req: KvRequest): void {
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter(req);
      return;
    }
    this.#heap.push(req);
    this.#siftUp(this.#heap.length - 1);
    if (this.#heap.length > this.maxDepth) this.maxDepth = this.#heap.length;
  }

  /** Next request by priority, waiting when empty; null once closed. */
  take(): Promise<KvRequest | null> {
    if (this.#heap.length > 0) return Promise.resolve(this.#pop());
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Stops serving: waiting workers get null; queued requests are dropped and returned. */
  close(): KvRequest[] {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w(null);
    return this.#heap.splice(0);
  }

  #pop(): KvRequest {
    const h = this.#heap;
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      this.#siftDown(0);
    }
    return top;
  }

  #before(a: KvRequest, b: KvRequest): boolean {
    if (a.priority !== b.priority) return a.priority > b.priority;
    if (a.arrivalNs !== b.arrivalNs) return a.arrivalNs < b.arrivalNs;
    return a.seq < b.seq;
  }

  #siftUp(i: number): void {
    const h = this.#heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  #siftDown(i: number): void {
    const h = this.#heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.#before(h[l], h[m])) m = l;
      if (r < h.length && this.#before(h[r], h[m])) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }
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
