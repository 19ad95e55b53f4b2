// A small pool of worker threads for CPU-heavy byte work (payload fill, restamp, copy, verify) on
// shared memory. A 16 MiB copy takes milliseconds; done on the main thread it would show up as
// event-loop lag and as latency of every simulated user, so large jobs go to workers and only small
// ones, where the message round trip costs more than the work, run inline.

import { Worker } from 'node:worker_threads';
import { PayloadPool, type VerifyResult } from './payload.ts';
import type { ChunkView, PayloadChunkSource } from './entry-file-store.ts';
import type { ByteJob, ByteWorkerInit, ByteWorkerReply, SharedBufferRef } from './byte-protocol.ts';
import { allWorkersReady, waitForWorkerReady } from '../../util/worker-ready.ts';

export const DEFAULT_INLINE_BELOW_BYTES = 256 * 1024;
// A restamp touches one cache line per 512 bytes, about a sixth of the CPU of a fill per byte, so it
// pays for a worker round trip only from a few MiB. Inline it costs the main thread 7-15 µs per MiB;
// handing it to a worker costs 5-50 µs whatever its size (posting, the reply, waking up for it: the
// most with one job in flight, the least with many). They break even around 2 MiB with several
// writes in flight, as there are whenever the write rate is high enough for this to matter; a 16 MiB
// chunk costs the main thread 2-8× less in a worker (bench/payload-cost.ts, "restamp: main-thread").
export const DEFAULT_RESTAMP_INLINE_BELOW_BYTES = 2 * 1024 * 1024;
// What a restamp weighs, per byte, against a fill when spreading jobs over the workers.
const RESTAMP_COST_DIVISOR = 6;

export interface BytePoolOptions {
  /** Worker threads; 0 runs every job inline on the calling thread. */
  threads: number;
  pool: PayloadPool;
  /** Jobs smaller than this run inline (default 256 KiB). */
  inlineBelowBytes?: number;
  /** Restamps smaller than this run inline (default 2 MiB). */
  restampInlineBelowBytes?: number;
}

export interface BytePoolUtilisation {
  /** Time the workers spent working, summed over workers. */
  busyNs: number;
  /** Time since the pool started (until close, once closed). */
  wallNs: number;
  threads: number;
  /** Time spent on jobs run inline on the calling thread. */
  inlineBusyNs: number;
}

export class BytePoolError extends Error {
  readonly code: 'BYTE_WORKER_DIED' | 'BYTE_POOL_CLOSED' | 'BYTE_WORKER_FAILED';
  constructor(code: BytePoolError['code'], message: string) {
    super(message);
    this.name = 'BytePoolError';
    this.code = code;
  }
}

interface PendingJob {
  resolve: (result: VerifyResult | undefined) => void;
  reject: (err: Error) => void;
  /** The job's bytes, weighted by what its kind costs per byte (a restamp weighs less than a fill). */
  costBytes: number;
}

interface WorkerState {
  index: number;
  worker: Worker;
  pending: Map<number, PendingJob>;
  pendingCostBytes: number;
  alive: boolean;
  lastError: Error | null;
}

function isShared(buf: Uint8Array): boolean {
  return Object.prototype.toString.call(buf.buffer) === '[object SharedArrayBuffer]';
}

function sharedRef(buf: Uint8Array, what: string): SharedBufferRef {
  if (!isShared(buf)) {
    throw new TypeError(
      `BytePool: ${what} must be a view over a SharedArrayBuffer (got a view over an ArrayBuffer); ` +
        'take I/O buffers from AlignedSlab so worker threads can reach them',
    );
  }
  return { sab: buf.buffer as SharedArrayBuffer, byteOffset: buf.byteOffset, length: buf.byteLength };
}

export class BytePool {
  readonly threads: number;
  private readonly payload: PayloadPool;
  private readonly inlineBelowBytes: number;
  private readonly restampInlineBelowBytes: number;
  private readonly workers: WorkerState[];
  private readonly startNs: bigint;
  private closedAtNs: bigint | null = null;
  private nextJobId = 1;
  private workerBusyNs = 0;
  private inlineBusyNs = 0;

  private constructor(opts: BytePoolOptions, workers: WorkerState[]) {
    this.threads = opts.threads;
    this.payload = opts.pool;
    this.inlineBelowBytes = opts.inlineBelowBytes ?? DEFAULT_INLINE_BELOW_BYTES;
    this.restampInlineBelowBytes = opts.restampInlineBelowBytes ?? DEFAULT_RESTAMP_INLINE_BELOW_BYTES;
    this.workers = workers;
    this.startNs = process.hrtime.bigint();
  }

  static async start(opts: BytePoolOptions): Promise<BytePool> {
    if (!Number.isSafeInteger(opts.threads) || opts.threads < 0) {
      throw new RangeError(`threads must be a non-negative integer (got ${opts.threads})`);
    }
    const init: ByteWorkerInit = { poolSab: opts.pool.sab };
    const states: WorkerState[] = [];
    const ready: Array<Promise<void>> = [];
    for (let index = 0; index < opts.threads; index++) {
      const worker = new Worker(new URL('./byte-worker.ts', import.meta.url), { workerData: init });
      const state: WorkerState = { index, worker, pending: new Map(), pendingCostBytes: 0, alive: true, lastError: null };
      states.push(state);
      ready.push(
        waitForWorkerReady<ByteWorkerReply>(
          worker,
          (m) => (m.type === 'ready' ? 'ready' : 'ignore'),
          (f) =>
            new BytePoolError(
              'BYTE_WORKER_DIED',
              f.kind === 'exit'
                ? `byte worker ${index} exited during start-up (exit code ${f.code})`
                : `byte worker ${index} failed to start: ${f.kind === 'error' ? f.error.message : String(f.message)}`,
            ),
        ),
      );
    }
    await allWorkersReady(
      states.map((s) => s.worker),
      ready,
    );
    const bytePool = new BytePool(opts, states);
    for (const state of states) bytePool.attach(state);
    return bytePool;
  }

  /** Size of the payload pool: an entry's bytes repeat (stamps aside) with this period. */
  get payloadPoolBytes(): number {
    return this.payload.sizeBytes;
  }

  /** The source of entry `keyHash`'s payload; tiers that keep the pool in their buffers restamp instead of refilling. */
  payloadSource(keyHash: bigint): PayloadChunkSource {
    return Object.assign((chunk: ChunkView) => this.fill(chunk.buffer, keyHash, chunk.entryOffsetBytes), { payloadKeyHash: keyHash });
  }

  /**
   * Turns `dest`, which holds the payload of some entry at these offsets, into entry `keyHash`'s by
   * rewriting its stamps: 72 bytes per 4 KiB (one per 512-byte sector). A sixth of a full fill, but
   * still ~200 µs of memory traffic for a 16 MiB chunk, which at 10+ GB/s of writes would be a large
   * share of the event loop: large restamps go to a worker, small ones run inline.
   */
  async restamp(dest: Buffer, keyHash: bigint, entryOffsetBytes: number): Promise<void> {
    const job: ByteJob = { id: 0, op: 'stamp', dest: sharedRef(dest, 'restamp dest'), keyHash, entryOffsetBytes };
    await this.run(job, dest.byteLength, this.restampInlineBelowBytes, Math.ceil(dest.byteLength / RESTAMP_COST_DIVISOR));
  }

  /** Puts the pool's bytes (no stamps) back into `dest` at entry offset `entryOffsetBytes`: for small repairs, inline. */
  restorePool(dest: Buffer, entryOffsetBytes: number): void {
    this.inline(() => this.payload.copyPool(dest, entryOffsetBytes));
  }

  /** Writes bytes [entryOffsetBytes, entryOffsetBytes + dest.length) of entry `keyHash` into `dest`. */
  async fill(dest: Buffer, keyHash: bigint, entryOffsetBytes: number): Promise<void> {
    await this.run({ id: 0, op: 'fill', dest: sharedRef(dest, 'fill dest'), keyHash, entryOffsetBytes }, dest.byteLength);
  }

  async copy(src: Buffer, dst: Buffer): Promise<void> {
    const srcRef = sharedRef(src, 'copy src');
    const dstRef = sharedRef(dst, 'copy dst');
    if (src.byteLength !== dst.byteLength) {
      throw new RangeError(`BytePool.copy: src is ${src.byteLength} bytes but dst is ${dst.byteLength}`);
    }
    await this.run({ id: 0, op: 'copy', src: srcRef, dst: dstRef }, src.byteLength);
  }

  async verify(src: Buffer, keyHash: bigint, entryOffsetBytes: number): Promise<VerifyResult> {
    const result = await this.run({ id: 0, op: 'verify', src: sharedRef(src, 'verify src'), keyHash, entryOffsetBytes }, src.byteLength);
    if (result === undefined) throw new BytePoolError('BYTE_WORKER_FAILED', 'byte worker returned no verify result');
    return result;
  }

  utilisation(): BytePoolUtilisation {
    const endNs = this.closedAtNs ?? process.hrtime.bigint();
    return {
      busyNs: this.workerBusyNs,
      wallNs: Number(endNs - this.startNs),
      threads: this.threads,
      inlineBusyNs: this.inlineBusyNs,
    };
  }

  /** The worker threads' JS heaps in use, summed (null without workers, or once closed). */
  async workersHeapUsedBytes(): Promise<number | null> {
    const live = this.workers.filter((w) => w.alive);
    if (live.length === 0 || this.closedAtNs !== null) return null;
    const stats = await Promise.all(live.map((w) => w.worker.getHeapStatistics().catch(() => null)));
    return stats.reduce((n, h) => n + (h?.used_heap_size ?? 0), 0);
  }

  /** Terminates the workers; jobs still pending reject with BYTE_POOL_CLOSED. */
  async close(): Promise<void> {
    if (this.closedAtNs !== null) return;
    this.closedAtNs = process.hrtime.bigint();
    const terminations: Array<Promise<number>> = [];
    for (const state of this.workers) {
      const wasAlive = state.alive;
      state.alive = false;
      this.rejectAll(state, new BytePoolError('BYTE_POOL_CLOSED', 'BytePool closed while the job was pending'));
      if (wasAlive) terminations.push(state.worker.terminate());
    }
    await Promise.all(terminations);
  }

  private inline<T>(work: () => T): T {
    if (this.closedAtNs !== null) throw new BytePoolError('BYTE_POOL_CLOSED', 'BytePool is closed');
    const t0 = process.hrtime.bigint();
    try {
      return work();
    } finally {
      this.inlineBusyNs += Number(process.hrtime.bigint() - t0);
    }
  }

  /**
   * Runs `job` inline when its `lengthBytes` are under `inlineBelow` (there a worker round trip costs
   * more than the work), else on the least-loaded worker, its load weighted by `costBytes`.
   */
  private async run(job: ByteJob, lengthBytes: number, inlineBelow = this.inlineBelowBytes, costBytes = lengthBytes): Promise<VerifyResult | undefined> {
    if (lengthBytes < inlineBelow) return this.inline(() => this.runInline(job));
    return this.dispatch(job, costBytes);
  }

  private dispatch(job: ByteJob, costBytes: number): Promise<VerifyResult | undefined> {
    if (this.closedAtNs !== null) return Promise.reject(new BytePoolError('BYTE_POOL_CLOSED', 'BytePool is closed'));
    let target: WorkerState | undefined;
    for (const state of this.workers) {
      if (!state.alive) continue;
      if (
        target === undefined ||
        state.pendingCostBytes < target.pendingCostBytes ||
        (state.pendingCostBytes === target.pendingCostBytes && state.pending.size < target.pending.size)
      ) {
        target = state;
      }
    }
    if (target === undefined) {
      if (this.workers.length === 0) {
        // threads: 0 means the caller chose inline work for everything.
        try {
          return Promise.resolve(this.inline(() => this.runInline(job)));
        } catch (err) {
          return Promise.reject(err);
        }
      }
      return Promise.reject(new BytePoolError('BYTE_WORKER_DIED', 'BytePool has no live worker threads left (all exited)'));
    }
    const id = this.nextJobId++;
    const state = target;
    return new Promise<VerifyResult | undefined>((resolve, reject) => {
      state.pending.set(id, { resolve, reject, costBytes });
      state.pendingCostBytes += costBytes;
      // Idle workers are unref'd so a pool nobody closed can't keep the process alive; a
      // pending job must, or the process could exit with the job's promise unsettled.
      if (state.pending.size === 1) state.worker.ref();
      state.worker.postMessage({ ...job, id });
    });
  }

  private runInline(job: ByteJob): VerifyResult | undefined {
    const view = (r: SharedBufferRef): Uint8Array => new Uint8Array(r.sab, r.byteOffset, r.length);
    if (job.op === 'fill') this.payload.fill(view(job.dest), job.keyHash, job.entryOffsetBytes);
    else if (job.op === 'stamp') this.payload.stamp(view(job.dest), job.keyHash, job.entryOffsetBytes);
    else if (job.op === 'copy') view(job.dst).set(view(job.src));
    else return this.payload.verify(view(job.src), job.keyHash, job.entryOffsetBytes);
    return undefined;
  }

  private attach(state: WorkerState): void {
    const { worker } = state;
    worker.unref();
    worker.on('message', (m: ByteWorkerReply) => {
      if (m.type === 'ready') return;
      const job = state.pending.get(m.id);
      if (job === undefined) return;
      state.pending.delete(m.id);
      state.pendingCostBytes -= job.costBytes;
      if (state.pending.size === 0) worker.unref();
      this.workerBusyNs += m.busyNs;
      if (m.type === 'done') job.resolve(m.result);
      else job.reject(new BytePoolError('BYTE_WORKER_FAILED', `byte worker ${state.index}: ${m.error.name}: ${m.error.message}`));
    });
    worker.on('error', (err: Error) => {
      state.lastError = err;
    });
    worker.on('exit', (code: number) => {
      if (!state.alive) return;
      state.alive = false;
      const cause = state.lastError === null ? '' : `: ${state.lastError.message}`;
      this.rejectAll(
        state,
        new BytePoolError('BYTE_WORKER_DIED', `byte worker ${state.index} exited unexpectedly (exit code ${code})${cause}`),
      );
    });
  }

  private rejectAll(state: WorkerState, err: BytePoolError): void {
    const jobs = [...state.pending.values()];
    state.pending.clear();
    state.pendingCostBytes = 0;
    for (const job of jobs) job.reject(err);
  }
}
