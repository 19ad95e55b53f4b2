/**
 * The open loop's backlog. Simulated users never wait for their previous request (reference
 * behaviour), so when the configuration offers more load than the storage serves, arrivals pile up in
 * the request queue without end: end-to-end latency and queue wait then measure how long the queue
 * has become, not the storage, while the storage's own numbers (bandwidth, per-operation latency)
 * still describe the device at full load. This watch says so, live and in the results, and bounds the
 * backlog's memory.
 */

/**
 * Queued arrivals an open loop may hold (about 175–230 MB of heap at ~350–465 B each, synthetic or replayed). Past it the scheduler
 * holds further arrivals back and issues them late, in order, as the queue drains: the request stream is
 * unchanged, only its issue times slip. Without it a one-hour 1,000-user run behind a slow drive would
 * queue 8.6 million arrivals (about 3 GB), and 10,000 users ten times that, past the heap's limit.
 */
export const OPEN_LOOP_BACKLOG_CAP = 500_000;

/** A backlog this deep (and at least 10 requests per worker) means the run measures queueing. */
export function queueingBoundDepth(workers: number): number {
  return Math.max(1000, 10 * workers);
}

export interface BacklogFacts {
  /** The cap on queued arrivals; null when the workload is unpaced (its backlog is kept at 2 × workers). */
  capRequests: number | null;
  /** The cap was reached: arrivals were held back and issued late. */
  capReached: boolean;
  /** The queue reached {@link queueingBoundDepth} requests at some point. */
  queueingBound: boolean;
  /** The latest any arrival was issued behind its scheduled time (ns): the cap, or a stalled event loop. */
  issueLatenessMaxNs: number;
}

export class BacklogWatch {
  readonly #capRequests: number | null;
  readonly #log: (level: 'warn', message: string) => void;
  #capReached = false;
  #queueingBound = false;
  #issueLatenessMaxNs = 0;

  constructor(paced: boolean, log: (level: 'warn', message: string) => void, capRequests?: number) {
    this.#capRequests = paced ? (capRequests ?? OPEN_LOOP_BACKLOG_CAP) : null;
    this.#log = log;
  }

  /** How many requests the scheduler may keep queued now. */
  maxQueued(workers: number): number {
    return this.#capRequests ?? 2 * workers;
  }

  /** An arrival issued at `nowNs` (the scheduler's clock) that was due at `arrivalNs`. */
  issued(arrivalNs: number, nowNs: number): void {
    if (nowNs - arrivalNs > this.#issueLatenessMaxNs) this.#issueLatenessMaxNs = nowNs - arrivalNs;
  }

  /**
   * After each scheduler tick: the queue's depth, and whether an arrival that was due stayed back
   * because the queue was at its cap. Each condition is said once, when it first happens.
   */
  observe(s: { depth: number; workers: number; issued: number; completed: number; heldBack: boolean }): void {
    if (this.#capRequests === null) return;
    if (!this.#queueingBound && s.depth >= queueingBoundDepth(s.workers)) {
      this.#queueingBound = true;
      this.#log(
        'warn',
        `the request queue has grown to ${s.depth} requests (${s.issued} issued, ${s.completed} completed): the configuration offers more load ` +
          'than the storage serves, so end-to-end latency and queue wait measure queueing from here on, not storage ' +
          '(storage bandwidth and per-operation latencies still describe the device); fewer users or a longer think time keep the queue short',
      );
    }
    if (!this.#capReached && s.heldBack) {
      this.#capReached = true;
      this.#log(
        'warn',
        `the request queue reached its cap of ${this.#capRequests} requests: further arrivals are held back and issued late, in order, ` +
          'as it drains (the offered stream is unchanged, and latencies still run from the scheduled arrivals, the time held back included)',
      );
    }
  }

  facts(): BacklogFacts {
    return { capRequests: this.#capRequests, capReached: this.#capReached, queueingBound: this.#queueingBound, issueLatenessMaxNs: this.#issueLatenessMaxNs };
  }
}

/** What the results' summary says about a queueing-bound run (null when it was not one). */
export function backlogNote(f: BacklogFacts, maxDepth: number, issued: number, completed: number): string | null {
  if (!f.queueingBound && !f.capReached) return null;
  let note =
    `the queue grew to ${maxDepth} requests (${issued} issued, ${completed} completed): the configuration offers more load than the storage serves, ` +
    'so end-to-end latency and queue wait measure queueing, not storage; storage bandwidth and per-operation latencies still describe the device';
  if (f.capReached) {
    note += `; the backlog reached its cap of ${f.capRequests} and later arrivals were issued up to ${(f.issueLatenessMaxNs / 1e9).toFixed(1)} s behind schedule`;
  }
  return note;
}
