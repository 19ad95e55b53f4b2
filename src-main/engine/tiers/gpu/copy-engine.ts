// Where the GPU tier's copies run. WorkerCopyEngine: a few worker threads, each with its own
// driver instance, contexts and streams (a 16 MiB copy is a fraction of a millisecond of DMA, but
// the call blocks its thread for all of it, so it must not be the event loop's thread).
// InlineCopyEngine: the calling thread, for tests and for drivers that live only in this thread.

import { Worker } from 'node:worker_threads';
import { CudaError, type CudaDriver, type WorkerDriverSpec } from './cuda-driver.ts';
import type { CopyInterval } from './copy-busy-union.ts';
import { CopyExecutor, type CopyDirection, type CopySegment } from './copy-executor.ts';
import { GATE_IN_FLIGHT, GATE_STOP, type CopyErrorData, type CopyJob, type CopyWorkerInit, type CopyWorkerReply } from './copy-protocol.ts';
import { allWorkersReady, waitForWorkerReady } from '../../../util/worker-ready.ts';

export interface CopyEngine {
  /** Worker threads (0: copies run on the calling thread). */
  readonly threads: number;
  /** Whether `copy` needs host buffers over shared memory (worker threads can only reach those). */
  readonly needsSharedHost: boolean;
  /** Copies the segments and waits for them; resolves with when the copy itself started and ended. */
  copy(direction: CopyDirection, host: Uint8Array, segments: CopySegment[]): Promise<CopyInterval>;
  close(): Promise<void>;
  /**
   * For the process-exit path, synchronously: no copy starts from now on, and returns once none is
   * running (true), or after `maxWaitMs` (false), so memory can be freed under no DMA.
   */
  stopForExit(maxWaitMs: number): boolean;
}

export class GpuCopyError extends Error {
  readonly code: 'GPU_COPY_FAILED' | 'GPU_COPY_WORKER_DIED' | 'GPU_COPY_WORKER_START_TIMEOUT' | 'GPU_COPY_ENGINE_CLOSED';
  constructor(code: GpuCopyError['code'], message: string) {
    super(message);
    this.name = 'GpuCopyError';
    this.code = code;
  }
}

export function isSharedView(buf: Uint8Array): boolean {
  return Object.prototype.toString.call(buf.buffer) === '[object SharedArrayBuffer]';
}

function toError(data: CopyErrorData, prefix: string): Error {
  if (data.cudaCode !== undefined) return new CudaError(data.fn ?? 'copy', data.cudaCode, data.cudaName, prefix);
  return new GpuCopyError('GPU_COPY_FAILED', `${prefix}: ${data.name}: ${data.message}`);
}

export class InlineCopyEngine implements CopyEngine {
  readonly threads = 0;
  readonly needsSharedHost = false;
  readonly #executor: CopyExecutor;

  constructor(driver: CudaDriver, devices: number[]) {
    this.#executor = new CopyExecutor(driver, devices);
  }

  async copy(direction: CopyDirection, host: Uint8Array, segments: CopySegment[]): Promise<CopyInterval> {
    return this.#executor.run(direction, host, segments);
  }

  async close(): Promise<void> {
    this.#executor.close();
  }

  stopForExit(): boolean {
    return true; // its copies run on the thread that exits: none can be running
  }
}

interface Pending {
  resolve: (interval: CopyInterval) => void;
  reject: (err: Error) => void;
  bytes: number;
}

interface CopyWorker {
  index: number;
  worker: Worker;
  pending: Map<number, Pending>;
  pendingBytes: number;
  alive: boolean;
  lastError: Error | null;
}

/** How long close() waits for a worker to release its contexts before terminating it. */
const CLOSE_GRACE_MS = 5000;
/**
 * How long start() waits for every worker to open the driver and its contexts. A driver call that
 * hangs (a wedged GPU, a virtualised driver) would otherwise hang the run before it starts.
 */
export const DEFAULT_COPY_WORKER_START_TIMEOUT_MS = 60_000;

export class WorkerCopyEngine implements CopyEngine {
  readonly threads: number;
  readonly needsSharedHost = true;
  readonly #workers: CopyWorker[];
  readonly #gate: Int32Array;
  #nextId = 1;
  #closed = false;

  private constructor(workers: CopyWorker[], gate: Int32Array) {
    this.#workers = workers;
    this.#gate = gate;
    this.threads = workers.length;
  }

  stopForExit(maxWaitMs: number): boolean {
    Atomics.store(this.#gate, GATE_STOP, 1);
    const deadline = performance.now() + maxWaitMs;
    for (;;) {
      const inFlight = Atomics.load(this.#gate, GATE_IN_FLIGHT);
      if (inFlight === 0) return true;
      const leftMs = deadline - performance.now();
      if (leftMs <= 0) return false;
      Atomics.wait(this.#gate, GATE_IN_FLIGHT, inFlight, leftMs);
    }
  }

  static async start(opts: { driver: WorkerDriverSpec; devices: number[]; threads: number; startTimeoutMs?: number }): Promise<WorkerCopyEngine> {
    if (!Number.isSafeInteger(opts.threads) || opts.threads < 1) throw new RangeError(`threads must be a positive integer (got ${opts.threads})`);
    const gate = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    const init: CopyWorkerInit = { driver: opts.driver, devices: opts.devices, gate: gate.buffer as SharedArrayBuffer };
    const workers: CopyWorker[] = [];
    const ready: Promise<void>[] = [];
    for (let index = 0; index < opts.threads; index++) {
      const worker = new Worker(new URL('./copy-worker.ts', import.meta.url), { workerData: init });
      workers.push({ index, worker, pending: new Map(), pendingBytes: 0, alive: true, lastError: null });
      ready.push(
        waitForWorkerReady<CopyWorkerReply>(
          worker,
          (m) => (m.type === 'ready' ? 'ready' : m.type === 'init-failed' ? 'refused' : 'ignore'),
          (f) =>
            f.kind === 'refused'
              ? toError((f.message as Extract<CopyWorkerReply, { type: 'init-failed' }>).error, `GPU copy worker ${index} could not open the driver`)
              : new GpuCopyError(
                  'GPU_COPY_WORKER_DIED',
                  f.kind === 'exit'
                    ? `GPU copy worker ${index} exited during start-up (exit code ${f.code})`
                    : `GPU copy worker ${index} failed to start: ${f.error.message}`,
                ),
        ),
      );
    }
    const timeoutMs = opts.startTimeoutMs ?? DEFAULT_COPY_WORKER_START_TIMEOUT_MS;
    await allWorkersReady(
      workers.map((w) => w.worker),
      ready,
      {
        ms: timeoutMs,
        error: () =>
          new GpuCopyError(
            'GPU_COPY_WORKER_START_TIMEOUT',
            `GPU copy workers did not start within ${timeoutMs / 1000} s (opening the driver or a device context hung); they were terminated`,
          ),
      },
    );
    const engine = new WorkerCopyEngine(workers, gate);
    for (const w of workers) engine.#attach(w);
    return engine;
  }

  copy(direction: CopyDirection, host: Uint8Array, segments: CopySegment[]): Promise<CopyInterval> {
    if (this.#closed) return Promise.reject(new GpuCopyError('GPU_COPY_ENGINE_CLOSED', 'the GPU copy engine is closed'));
    if (!isSharedView(host)) {
      return Promise.reject(new TypeError('GPU copies from worker threads need a host buffer over a SharedArrayBuffer'));
    }
    let target: CopyWorker | undefined;
    for (const w of this.#workers) {
      if (w.alive && (target === undefined || w.pendingBytes < target.pendingBytes)) target = w;
    }
    if (target === undefined) return Promise.reject(new GpuCopyError('GPU_COPY_WORKER_DIED', 'every GPU copy worker has exited'));
    const id = this.#nextId++;
    const bytes = segments.reduce((n, s) => n + s.bytes, 0);
    const w = target;
    const job: CopyJob = {
      type: 'copy',
      id,
      direction,
      host: { sab: host.buffer as SharedArrayBuffer, byteOffset: host.byteOffset, length: host.byteLength },
      segments,
    };
    return new Promise<CopyInterval>((resolve, reject) => {
      w.pending.set(id, { resolve, reject, bytes });
      w.pendingBytes += bytes;
      // Idle workers are unref'd so an engine nobody closed cannot keep the process alive.
      if (w.pending.size === 1) w.worker.ref();
      w.worker.postMessage(job);
    });
  }

  /** Lets each worker release its streams and contexts, then ends it; pending copies reject. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(
      this.#workers.map(async (w) => {
        this.#rejectAll(w, new GpuCopyError('GPU_COPY_ENGINE_CLOSED', 'the GPU copy engine closed while the copy was pending'));
        if (!w.alive) return;
        w.alive = false;
        const exited = new Promise<void>((resolve) => w.worker.once('exit', () => resolve()));
        w.worker.ref();
        w.worker.postMessage({ type: 'close' });
        const timer = setTimeout(() => void w.worker.terminate(), CLOSE_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  #attach(w: CopyWorker): void {
    w.worker.unref();
    w.worker.on('message', (m: CopyWorkerReply) => {
      if (m.type !== 'done' && m.type !== 'failed') return;
      const p = w.pending.get(m.id);
      if (p === undefined) return;
      w.pending.delete(m.id);
      w.pendingBytes -= p.bytes;
      if (w.pending.size === 0) w.worker.unref();
      if (m.type === 'done') p.resolve({ startNs: m.startNs, endNs: m.endNs });
      else p.reject(toError(m.error, `GPU copy worker ${w.index}`));
    });
    w.worker.on('error', (err: Error) => {
      w.lastError = err;
    });
    w.worker.on('exit', (code: number) => {
      if (!w.alive) return;
      w.alive = false;
      const cause = w.lastError ? `: ${w.lastError.message}` : '';
      this.#rejectAll(w, new GpuCopyError('GPU_COPY_WORKER_DIED', `GPU copy worker ${w.index} exited unexpectedly (exit code ${code})${cause}`));
    });
  }

  #rejectAll(w: CopyWorker, err: Error): void {
    const jobs = [...w.pending.values()];
    w.pending.clear();
    w.pendingBytes = 0;
    for (const j of jobs) j.reject(err);
  }
}
