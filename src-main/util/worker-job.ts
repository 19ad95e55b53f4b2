// One job on a worker thread of its own, for work that would otherwise hold a backend's event loop
// for seconds (reading or recovering a damaged database: store/salvage-thread.ts; building a report
// or an export: server/report-thread.ts). The worker is started for the job, says what it wants said
// meanwhile, answers once, and exits; one that ends without answering (out of memory, a crash,
// stopped through the signal) is said as such, once it has exited, so that nothing of it still
// reads or writes when the caller hears of it.
import { Worker, type ResourceLimits } from 'node:worker_threads';

export interface WorkerJobOptions<M> {
  /** Stops the worker: the job then fails as one whose worker was stopped ({ aborted }, with the signal's reason). */
  signal?: AbortSignal;
  /** The worker's memory limits (tests make one run out). */
  resourceLimits?: ResourceLimits;
  /** Whether a message is the job's answer; any other is passed to onMessage (progress). */
  isAnswer: (message: M) => boolean;
  onMessage?: (message: M) => void;
  /**
   * Settles only once the worker has exited, answer or not: for an answer as large as the database
   * (a salvaged copy), so that the worker's own copy is freed before the caller makes another.
   */
  answerAtExit?: boolean;
}

/** How a worker ended without answering. */
export type WorkerEnd = { error: Error } | { exitCode: number } | { aborted: true; reason: unknown };

/** How a worker ended without answering, in words; `stopped`: what its stop (the signal) means to the caller. */
export function workerEndText(end: WorkerEnd, stopped: string): string {
  if ('aborted' in end) return stopped;
  if ('exitCode' in end) return `its worker thread stopped without an answer (exit code ${end.exitCode})`;
  const code = (end.error as NodeJS.ErrnoException).code;
  return code === 'ERR_WORKER_OUT_OF_MEMORY' ? 'its worker thread ran out of memory' : `its worker thread failed (${end.error.message})`;
}

/**
 * Runs the worker module at `url` with `workerData`: its answer, or `died(how)` thrown where it ended
 * without one. `died` is called only once the worker has exited.
 */
export function runWorkerJob<M>(url: URL, workerData: unknown, opts: WorkerJobOptions<M>, died: (end: WorkerEnd) => Error): Promise<M> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(died({ aborted: true, reason: opts.signal.reason }));
      return;
    }
    const worker = new Worker(url, { workerData, ...(opts.resourceLimits ? { resourceLimits: opts.resourceLimits } : {}) });
    let answered = false;
    let answer: M | undefined;
    let aborted = false;
    let failure: Error | null = null;
    const onAbort = (): void => {
      aborted = true;
      void worker.terminate(); // said at its exit, below
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: M) => {
      if (aborted || answered) return;
      if (!opts.isAnswer(m)) {
        opts.onMessage?.(m);
        return;
      }
      // The worker's work is over once it answers: nothing of it reads or writes any more.
      answered = true;
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.answerAtExit) answer = m;
      else resolve(m);
    });
    worker.on('error', (error) => (failure ??= error));
    worker.on('exit', (exitCode) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (answered) {
        if (opts.answerAtExit) resolve(answer as M);
      } else reject(died(aborted ? { aborted: true, reason: opts.signal?.reason } : failure ? { error: failure } : { exitCode }));
    });
  });
}
