import type { Worker } from 'node:worker_threads';

/** Why a worker thread did not become ready: the caller turns this into its own error. */
export type WorkerStartFailure = { kind: 'error'; error: Error } | { kind: 'exit'; code: number } | { kind: 'refused'; message: unknown };

/**
 * Waits until `worker` reports ready (`readiness(message)` returns 'ready'), or fails: the worker
 * throws, exits, or says it cannot start (`readiness` returns 'refused'). Listeners are removed either way.
 */
export function waitForWorkerReady<M>(
  worker: Worker,
  readiness: (message: M) => 'ready' | 'refused' | 'ignore',
  failure: (f: WorkerStartFailure) => Error,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error): void => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    const onMessage = (m: M): void => {
      const r = readiness(m);
      if (r === 'ready') done();
      else if (r === 'refused') done(failure({ kind: 'refused', message: m }));
    };
    const onError = (error: Error): void => done(failure({ kind: 'error', error }));
    const onExit = (code: number): void => done(failure({ kind: 'exit', code }));
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/**
 * Waits for every worker to be ready; if any fails, or `timeout.ms` passes first, terminates them all
 * and throws (the failure's error, or `timeout.error()`).
 */
export async function allWorkersReady(workers: readonly Worker[], ready: readonly Promise<void>[], timeout?: { ms: number; error: () => Error }): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = timeout ? [new Promise<never>((_, reject) => (timer = setTimeout(() => reject(timeout.error()), timeout.ms)))] : [];
  try {
    // The race also handles the rejection that terminating the workers after the deadline causes.
    await Promise.race([Promise.all(ready), ...deadline]);
  } catch (err) {
    await Promise.allSettled(workers.map((w) => w.terminate()));
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
