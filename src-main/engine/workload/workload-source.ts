import type { KvRequest } from './synthetic-workload.ts';

/**
 * An arrival as the open loop's queue keeps it until a worker takes it: what the queue orders and holds
 * by (priority, arrival, sequence, conversation turn), the numbers drawn for it and references to what
 * is shared; its strings (ids, keys, the keys of the earlier turns it reloads, prefix blocks) are built
 * by {@link materialize}. Behind a drive slower than the offered load the queue holds hundreds of
 * thousands of these.
 */
export interface QueuedArrival {
  /** Real time at which it entered the queue (set by the scheduler). */
  submitNs: bigint;
  readonly seq: number;
  readonly priority: number;
  /** Scheduled (virtual) arrival in ns since the measured phase began. */
  readonly arrivalNs: number;
  readonly conversationId: string | null;
  readonly turn: number;
  /** How many earlier turns of its conversation (turns 1..k) the request reloads. */
  readonly reloadedTurns: number;
  /** The full request, exactly as the source offered it. */
  materialize(): KvRequest;
}

/**
 * Where a run's requests come from: the synthetic users, or a replayed dataset or trace. The
 * scheduler asks for the next arrival time and takes requests in arrival order; the source fixes
 * every request's parameters when it produces it, so the offered stream is reproducible.
 */
export interface WorkloadSource {
  readonly kind: 'synthetic' | 'sharegpt' | 'burstgpt' | 'mooncake' | 'azure' | 'workload-file';
  /** Users currently offering requests (for replay: distinct users seen so far, or configured). */
  readonly activeUsers: number;
  readonly issued: number;
  /**
   * False when arrival times carry no pacing (--trace-speedup 0): the scheduler then keeps only a
   * bounded number of requests queued, so memory stays flat however long the trace.
   */
  readonly paced: boolean;
  /** Scheduled (virtual) time of the next request in ns since the measured phase began; Infinity when none is left. */
  peekArrivalNs(): number;
  next(): KvRequest;
  /**
   * The same next request kept compact until a worker takes it (the scheduler queues these when the
   * source offers them: an open loop's backlog can hold hundreds of thousands).
   */
  nextQueued?(): QueuedArrival;
  /**
   * Set when a replay ended before the end of its file (the file changed under the run): the run's
   * status reason, and the run is partial rather than "replayed to its end".
   */
  readonly stoppedEarly?: string | null;
  /** sha256 of every request offered so far, in order. */
  digest(): string;
  /** Only sources with simulated users can grow or shrink (the autoscaler). */
  addUsers?(count: number, atNs: number): void;
  removeUsers?(count: number): void;
  /** Facts for the results (dataset statistics, cycles replayed...). */
  describe(): Record<string, unknown>;
}
