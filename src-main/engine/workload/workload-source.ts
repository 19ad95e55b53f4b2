import type { CompactRequest, KvRequest } from './synthetic-workload.ts';

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
  nextQueued?(): CompactRequest;
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
