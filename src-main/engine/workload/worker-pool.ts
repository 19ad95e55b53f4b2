import type { RequestQueue } from './request-queue.ts';
import type { KvRequest } from './synthetic-workload.ts';

/**
 * The workers serving the request queue. Its size can change while the run goes on (the autoscaler
 * adds workers with users); surplus workers leave after finishing the request in hand.
 */
export class WorkerPool {
  readonly #serve: (req: KvRequest) => Promise<void>;
  readonly #queue: RequestQueue;
  readonly #running = new Set<Promise<void>>();
  #target = 0;
  #alive = 0;
  #busy = 0;

  constructor(serve: (req: KvRequest) => Promise<void>, queue: RequestQueue) {
    this.#serve = serve;
    this.#queue = queue;
  }

  get size(): number {
    return this.#target;
  }

  /** Requests in service: handed over by the queue and not yet finished. */
  get busy(): number {
    return this.#busy;
  }

  resize(target: number): void {
    this.#target = Math.max(1, target);
    while (this.#alive < this.#target) this.#spawn();
  }

  /** Resolves when every worker has left (after the queue is closed). */
  async drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }

  #spawn(): void {
    this.#alive++;
    const run = (async () => {
      try {
        while (this.#alive <= this.#target) {
          // Busy from the moment the queue hands the request over, not when this worker resumes.
          const req = await this.#queue.take(() => this.#busy++);
          if (!req) return;
          try {
            await this.#serve(req);
          } finally {
            this.#busy--;
          }
        }
      } finally {
        this.#alive--;
      }
    })();
    this.#running.add(run);
    void run.finally(() => this.#running.delete(run));
  }
}
