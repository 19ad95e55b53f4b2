// Runs host↔device copies on the calling thread: in a copy worker thread in production (so the
// event loop never waits on DMA), or inline in tests. Each device gets its primary context and one
// non-blocking stream; a copy is timed from the first cuMemcpy*Async call until
// cuStreamSynchronize says the bytes have arrived.

import type { CopyInterval } from './copy-busy-union.ts';
import { CU_STREAM_NON_BLOCKING, type CUcontext, type CudaDriver, type CUstream } from './cuda-driver.ts';

export interface CopySegment {
  device: number;
  dptr: number;
  /** Offset in the host buffer. */
  hostOffset: number;
  bytes: number;
}

export type CopyDirection = 'htod' | 'dtoh';

export class CopyExecutor {
  readonly #driver: CudaDriver;
  readonly #contexts = new Map<number, CUcontext>();
  readonly #streams = new Map<number, CUstream>();
  #current: number | null = null;
  #closed = false;

  /** Retains each device's primary context and creates a stream on it, on the calling thread. */
  constructor(driver: CudaDriver, devices: number[]) {
    this.#driver = driver;
    try {
      for (const ordinal of devices) {
        const dev = driver.cuDeviceGet(ordinal);
        const ctx = driver.cuDevicePrimaryCtxRetain(dev);
        this.#contexts.set(ordinal, ctx);
        driver.cuCtxSetCurrent(ctx);
        this.#current = ordinal;
        this.#streams.set(ordinal, driver.cuStreamCreate(CU_STREAM_NON_BLOCKING));
      }
    } catch (err) {
      this.close();
      throw err;
    }
  }

  /**
   * Copies every segment, then waits for them all; returns when that started and ended. On an error
   * it still waits for every stream it queued a copy on before throwing the first error: the
   * caller frees the host slot and device extents next, and DMA must not still be using them.
   */
  run(direction: CopyDirection, host: Uint8Array, segments: CopySegment[]): CopyInterval {
    if (this.#closed) throw new Error('copy executor is closed');
    for (const s of segments) {
      if (s.hostOffset < 0 || s.bytes <= 0 || s.hostOffset + s.bytes > host.byteLength) {
        throw new RangeError(`copy segment [${s.hostOffset}, +${s.bytes}) lies outside the ${host.byteLength}-byte host buffer`);
      }
    }
    // Another user of this thread (the tier's arena, inline) may have switched contexts since.
    this.#current = null;
    const issued = new Set<number>();
    let failure: { err: unknown } | null = null;
    const startNs = process.hrtime.bigint();
    try {
      for (const s of segments) {
        const stream = this.#select(s.device);
        // Before the call: a failed call may still leave earlier copies of this run on the stream.
        issued.add(s.device);
        const view = host.subarray(s.hostOffset, s.hostOffset + s.bytes);
        if (direction === 'htod') this.#driver.cuMemcpyHtoDAsync(s.dptr, view, stream);
        else this.#driver.cuMemcpyDtoHAsync(view, s.dptr, stream);
      }
    } catch (err) {
      failure = { err };
    }
    for (const device of issued) {
      try {
        this.#select(device);
        this.#driver.cuStreamSynchronize(this.#streams.get(device)!);
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure !== null) throw failure.err;
    return { startNs, endNs: process.hrtime.bigint() };
  }

  /** Destroys the streams and releases the contexts (best effort; idempotent). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const [ordinal, stream] of this.#streams) {
      try {
        this.#driver.cuCtxSetCurrent(this.#contexts.get(ordinal)!);
        this.#driver.cuStreamDestroy(stream);
      } catch {
        // the context may already be gone (driver torn down): nothing left to free
      }
    }
    this.#streams.clear();
    for (const ordinal of this.#contexts.keys()) {
      try {
        this.#driver.cuDevicePrimaryCtxRelease(this.#driver.cuDeviceGet(ordinal));
      } catch {
        // as above
      }
    }
    this.#contexts.clear();
    try {
      this.#driver.cuCtxSetCurrent(null);
    } catch {
      // as above
    }
  }

  #select(device: number): CUstream {
    const stream = this.#streams.get(device);
    if (stream === undefined) throw new Error(`copy executor has no stream for device ${device}`);
    if (this.#current !== device) {
      this.#driver.cuCtxSetCurrent(this.#contexts.get(device)!);
      this.#current = device;
    }
    return stream;
  }
}
