// When a run's end-to-end latency and queue wait measure its queue rather than the storage: the one rule
// the engine (live and at the window's close) and the store (a trial's stored results, whichever
// kvbench measured them) judge by.
//
// An open loop's users never wait for their previous request, so a configuration that offers more load
// than the engine serves piles arrivals up without end. Two things tell such a run from a busy but
// steady one, both relative to the run itself, never an absolute count (before 0.8.0 the queue had to
// reach 1,000 requests, which a run of a few users never does however far behind it falls):
//  - the backlog is deep for the workers: by Little's law a request queued behind Q others waits about
//    Q ÷ workers service times, so with QUEUED_PER_WORKER per worker the queue, not the service, makes
//    most of its latency;
//  - it grew rather than fluctuated: the requests still queued are at least BACKLOG_GROWTH_SHARE of those
//    served. From an empty queue, Q = (offered − served) × T, so Q ≥ ¼ × served means the arrivals
//    outpaced the service by a quarter or more; a steady queue's depth does not grow with the window,
//    so a burst at the close of a long run is not taken for one.
// The queue wait of completed requests is not the test: the requests that complete are the early ones,
// so it stays small while thousands wait (a 100-user run with 4,462 queued had a median queue wait of
// 0.17 ms).

/** Queued requests per worker from which the queue makes most of a request's latency. */
export const QUEUED_PER_WORKER = 10;
/** Queued requests, as a share of those served, from which the backlog grew rather than fluctuated. */
export const BACKLOG_GROWTH_SHARE = 0.25;

/** The queue at the moment judged: the window's close (the results), or a scheduler tick (the live warning). */
export interface BacklogState {
  /** Requests issued and waiting for a worker (not in flight). */
  queuedRequests: number;
  /** Workers serving the queue then (the users, at most the engine's limit). */
  workers: number;
  /** Requests completed in the measured window so far. */
  requestsCompleted: number;
}

/** Whether the queue, as it stands, makes the run queueing-bound (see the rule above). */
export function isQueueingBound(s: BacklogState): boolean {
  return s.queuedRequests >= QUEUED_PER_WORKER * Math.max(1, s.workers) && s.queuedRequests >= BACKLOG_GROWTH_SHARE * s.requestsCompleted;
}

/** The rule in words, for the docs and the metric's description. */
export const QUEUEING_BOUND_RULE =
  `at the window's close at least ${QUEUED_PER_WORKER} requests per worker were still queued (so the queue, not the service, made most of their latency) ` +
  `and at least ${BACKLOG_GROWTH_SHARE * 100} % as many as had completed (the arrivals outpaced the service)`;
