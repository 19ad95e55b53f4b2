import { performance } from 'node:perf_hooks';

/**
 * How long code that never waits for the event loop may hold it before timers and I/O callbacks run:
 * the scheduler's tick, and the trace-only tiers' chains of operations that complete at once.
 */
export const EVENT_LOOP_SLICE_MS = 10;

/**
 * Lets timers and I/O callbacks run while code that never waits for them goes on. Work that resolves
 * only through promises (trace-only mode's tiers complete at once) chains as microtasks, and the event
 * loop runs nothing else until the chain ends: under a backlog of requests, never, so the window's
 * deadline, the scheduler and the engine's heartbeat waited for seconds. Such code asks `pauseIfDue()`
 * at its steps; once a slice has run, the answer is a pause until the loop's next check phase, shared
 * by everyone who asks meanwhile.
 */
export class EventLoopSlice {
  readonly #sliceMs: number;
  /** When the event loop last ran its other callbacks (a pause ended, or it turned by itself). */
  #startMs = performance.now();
  #pause: Promise<void> | null = null;
  /** A check-phase callback is scheduled that marks the loop's next turn. */
  #turnMarked = false;

  constructor(sliceMs = EVENT_LOOP_SLICE_MS) {
    this.#sliceMs = sliceMs;
  }

  /** Null while the slice lasts (nothing to await); then the pause. */
  pauseIfDue(): Promise<void> | null {
    if (this.#pause) return this.#pause;
    // Code that waits on real I/O lets the loop turn by itself, and each turn begins a new slice: only
    // a chain that never lets it turn is paused (a pause every slice regardless held every request in
    // flight at the next check phase while real I/O was turning the loop anyway).
    if (!this.#turnMarked) {
      this.#turnMarked = true;
      setImmediate(() => {
        this.#turnMarked = false;
        this.#startMs = performance.now();
      });
    }
    if (performance.now() - this.#startMs < this.#sliceMs) return null;
    this.#pause = new Promise((resolve) =>
      setImmediate(() => {
        this.#pause = null;
        this.#startMs = performance.now();
        resolve();
      }),
    );
    return this.#pause;
  }
}

/**
 * `wait`, after a pause once per slice: what trace-only tiers await before each operation. Their
 * operations are the steps every request takes, so no request chain runs far past a slice; a real
 * tier's I/O lets the event loop in by itself, and pays nothing.
 */
export function withEventLoopTurns(wait: () => Promise<void>, slice = new EventLoopSlice()): () => Promise<void> {
  return async () => {
    const pause = slice.pauseIfDue();
    if (pause) await pause;
    await wait();
  };
}
