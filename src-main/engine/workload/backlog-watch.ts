import { isQueueingBound } from '../../../src-shared/domain/queueing-bound.ts';
import { busySplit, queueBoundCause, queueBoundWords, type GenerationPace, type WorkersBusyNs } from '../../../src-shared/domain/worker-busy.ts';
import { formatIntegerGrouped } from '../report/format.ts';

/**
 * The open loop's backlog. Simulated users never wait for their previous request (reference
 * behaviour), so when the configuration offers more load than the engine serves, arrivals pile up in
 * the request queue without end: end-to-end latency and queue wait then measure how long the queue
 * has become, not the storage, while the storage's own numbers (bandwidth, per-operation latency)
 * still describe the device at full load. This watch says so, live and in the results, naming what
 * held the workers from their measured busy time (src-shared/domain/worker-busy.ts: the simulated
 * generation, or the cache and which tier), and bounds the backlog's memory.
 */

/**
 * Queued arrivals an open loop may hold (about 175–230 MB of heap at ~350–465 B each, synthetic or replayed). Past it the scheduler
 * holds further arrivals back and issues them late, in order, as the queue drains: the request stream is
 * unchanged, only its issue times slip. Without it a one-hour 1,000-user run behind a slow drive would
 * queue 8.6 million arrivals (about 3 GB), and 10,000 users ten times that, past the heap's limit.
 */
export const OPEN_LOOP_BACKLOG_CAP = 500_000;

export interface BacklogFacts {
  /** The cap on queued arrivals; null when the workload is unpaced (its backlog is kept at 2 × workers). */
  capRequests: number | null;
  /** The cap was reached: arrivals were held back and issued late. */
  capReached: boolean;
  /** At the window's close the queue made the run queueing-bound (isQueueingBound; src-shared/domain/queueing-bound.ts). */
  queueingBound: boolean;
  /** The workers serving the queue when the window closed (null: it has not closed). */
  workersAtClose: number | null;
  /** The latest any arrival was issued behind its scheduled time (ns): the cap, or a stalled event loop. */
  issueLatenessMaxNs: number;
  /** Trace-only mode: no storage I/O, so the engine itself is what serves the load. */
  traceOnly: boolean;
  /** The workers' busy time over the window's completed requests, as the close found it (null: not closed, or not told). */
  workersBusy: WorkersBusyNs | null;
  /** The simulated generation the run was configured with (null: not told). */
  generation: GenerationPace | null;
}

/** The queue as the scheduler's ticks have judged it so far, for the live view (the results' verdict is close's). */
export interface LiveQueueing {
  /** The rule holds at the latest tick. */
  queueingNow: boolean;
  /** The queue and the workers at the first tick the rule held (null: it has not held yet); kept once met. */
  firstMet: { queuedRequests: number; workers: number } | null;
}

/** Why a message names no bound when the workers' busy time was not passed in. */
const NOT_MEASURED = 'what held them was not measured';

export class BacklogWatch {
  readonly #capRequests: number | null;
  readonly #log: (level: 'warn', message: string) => void;
  readonly #traceOnly: boolean;
  readonly #generation: GenerationPace | null;
  #capReached = false;
  #queueingNow = false;
  #firstMet: LiveQueueing['firstMet'] = null;
  #queueingBound = false;
  #workersAtClose: number | null = null;
  #issueLatenessMaxNs = 0;
  #workersBusy: WorkersBusyNs | null = null;

  constructor(paced: boolean, log: (level: 'warn', message: string) => void, capRequests?: number, traceOnly = false, generation: GenerationPace | null = null) {
    this.#capRequests = paced ? (capRequests ?? OPEN_LOOP_BACKLOG_CAP) : null;
    this.#log = log;
    this.#traceOnly = traceOnly;
    this.#generation = generation;
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
   * because the queue was at its cap. Each condition is said once, when it first happens; the results'
   * verdict is the window's close (close), which a queue that drains again does not meet.
   * `completed`: the requests completed since the workload started, warm-up included, never the
   * window's count alone: that restarts at 0 when the window opens, and any queue of 10 per worker
   * would then meet the rule's "a quarter of those served" at that tick. `busy`: the workers' busy
   * time over those same completed requests, which the warning names the bound by (absent: not measured).
   */
  observe(s: { depth: number; workers: number; issued: number; completed: number; heldBack: boolean; busy?: WorkersBusyNs }): void {
    if (this.#capRequests === null) return;
    this.#queueingNow = isQueueingBound({ queuedRequests: s.depth, workers: s.workers, requestsCompleted: s.completed });
    if (this.#queueingNow && this.#firstMet === null) {
      this.#firstMet = { queuedRequests: s.depth, workers: s.workers };
      const split = busySplit(s.busy);
      const w = queueBoundWords(split, {
        scope: 'so far',
        generation: this.#generation,
        traceOnly: this.#traceOnly,
        unmeasured: s.busy === undefined ? NOT_MEASURED : undefined,
      });
      this.#log(
        'warn',
        `the request queue has grown to ${formatIntegerGrouped(s.depth)} requests (${formatIntegerGrouped(s.issued)} issued, ${formatIntegerGrouped(s.completed)} completed): ${queueBoundCause(w)}, ` +
          `so end-to-end latency and queue wait measure queueing while it lasts, not ${w.notWhat}` +
          `${this.#traceOnly ? '' : ' (storage bandwidth and per-operation latencies still describe the device)'}; ${w.remedy} keep the queue short`,
      );
    }
    if (!this.#capReached && s.heldBack) {
      this.#capReached = true;
      this.#log(
        'warn',
        `the request queue reached its cap of ${formatIntegerGrouped(this.#capRequests)} requests: further arrivals are held back and issued late, in order, ` +
          'as it drains (the offered stream is unchanged, and latencies still run from the scheduled arrivals, the time held back included)',
      );
    }
  }

  /**
   * The window closed with this queue: the run's verdict (an unpaced replay's bounded backlog is never
   * one); `busy`, the workers' busy time over the window's completed requests, names its bound.
   */
  close(s: { queued: number; workers: number; completed: number; busy?: WorkersBusyNs }): void {
    this.#workersAtClose = s.workers;
    this.#workersBusy = s.busy ?? null;
    this.#queueingBound = this.#capRequests !== null && isQueueingBound({ queuedRequests: s.queued, workers: s.workers, requestsCompleted: s.completed });
  }

  /** The rule at the latest tick, and where it was first met (the live warning was given then), though the close may not meet it. */
  live(): LiveQueueing {
    return { queueingNow: this.#queueingNow, firstMet: this.#firstMet };
  }

  facts(): BacklogFacts {
    return {
      capRequests: this.#capRequests,
      capReached: this.#capReached,
      queueingBound: this.#queueingBound,
      workersAtClose: this.#workersAtClose,
      issueLatenessMaxNs: this.#issueLatenessMaxNs,
      traceOnly: this.#traceOnly,
      workersBusy: this.#workersBusy,
      generation: this.#generation,
    };
  }
}

/** What the results' summary says about a queueing-bound run (null when it was not one). */
export function backlogNote(f: BacklogFacts, queue: { maxDepth: number; queuedAtClose: number }, issued: number, completed: number): string | null {
  if (!f.queueingBound && !f.capReached) return null;
  const workers = f.workersAtClose === null ? '' : ` for ${formatIntegerGrouped(f.workersAtClose)} workers`;
  const split = busySplit(f.workersBusy);
  const w = queueBoundWords(split, {
    scope: 'in the measured window',
    generation: f.generation,
    traceOnly: f.traceOnly,
    unmeasured: f.workersBusy === null ? NOT_MEASURED : 'no request completed in the measured window, so what held them is not measured',
  });
  let note =
    `${formatIntegerGrouped(queue.queuedAtClose)} requests were still queued at the close${workers} (${formatIntegerGrouped(issued)} issued, ${formatIntegerGrouped(completed)} completed; the queue reached ${formatIntegerGrouped(queue.maxDepth)}): ` +
    `${queueBoundCause(w)}, so end-to-end latency and queue wait measure queueing, not ${w.notWhat}` +
    (f.traceOnly ? '' : '; storage bandwidth and per-operation latencies still describe the device') +
    (w.bound === 'generation' ? `; ${w.remedy} keep the queue short` : '');
  if (f.capReached) {
    note += `; the backlog reached its cap of ${formatIntegerGrouped(f.capRequests ?? 0)} and later arrivals were issued up to ${(f.issueLatenessMaxNs / 1e9).toFixed(1)} s behind schedule`;
  }
  return note;
}
