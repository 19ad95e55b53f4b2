import { BinaryHeap } from './binary-heap.ts';
import type { KvRequest } from './synthetic-workload.ts';

/**
 * The one request queue the workers serve: higher QoS priority first; within a priority, earlier
 * scheduled arrival first, then lower sequence number — a total order, so ties never depend on timing.
 */
export class RequestQueue {
  readonly #heap = new BinaryHeap<KvRequest>(servedBefore);
  readonly #waiters: ((r: KvRequest | null) => void)[] = [];
  #closed = false;
  maxDepth = 0;

  get depth(): number {
    return this.#heap.size;
  }

  push(req: KvRequest): void {
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter(req);
      return;
    }
    this.#heap.push(req);
    if (this.#heap.size > this.maxDepth) this.maxDepth = this.#heap.size;
  }

  /** Next request by priority, waiting when empty; null once closed. */
  take(): Promise<KvRequest | null> {
    if (this.#heap.size > 0) return Promise.resolve(this.#heap.pop()!);
    if (this.#closed) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Stops serving: waiting workers get null; queued requests are dropped and returned. */
  close(): KvRequest[] {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w(null);
    return this.#heap.clear();
  }
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
