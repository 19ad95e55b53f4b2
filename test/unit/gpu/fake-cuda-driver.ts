// An in-memory CudaDriver: device memory is a SharedArrayBuffer per device, device addresses are
// offsets into it, and the driver's rules that the tier depends on are enforced (cuInit first, a
// current context for allocations and copies, streams and pointers of the current device, copies
// only inside live allocations, host registration paired with unregistration). No GPU can exist
// on the machines the tests run on; this stands in for one.
//
// `shareable: true` lets copy worker threads attach to the same device memory (workerSpec), so the
// worker path runs here too; a worker's instance checks bounds but not the allocation table,
// which lives in the main thread. `holdCopies` (a CopyHold) makes the workers' copies wait in
// cuStreamSynchronize until the test lets them through, as a DMA transfer still running: a copy
// handed off and not yet replied to, for as long as a test needs.

import {
  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
  CUDA_ERROR_INVALID_CONTEXT,
  CUDA_ERROR_INVALID_DEVICE,
  CUDA_ERROR_INVALID_HANDLE,
  CUDA_ERROR_INVALID_VALUE,
  CUDA_ERROR_NOT_INITIALIZED,
  CUDA_ERROR_OUT_OF_MEMORY,
  CudaError,
  type CUcontext,
  type CudaDriver,
  type CUdevice,
  type CUdeviceptr,
  type CUstream,
  type WorkerDriverSpec,
} from '../../../src-main/engine/tiers/gpu/cuda-driver.ts';

export interface FakeDeviceSpec {
  name: string;
  totalMemoryBytes: number;
  pciBusId?: string;
}

interface SharedState {
  specs: FakeDeviceSpec[];
  memories: SharedArrayBuffer[];
  driverVersion: number;
}

interface FakeContext extends CUcontext {
  device: number;
}

interface FakeStream extends CUstream {
  device: number;
  destroyed: boolean;
  /** Async copies queued on it since its last synchronisation (a real copy may still be running). */
  queued: number;
}

const DEVICE_SPACING = 2 ** 36;
/** Device addresses never start at 0 (a null device pointer is an error in CUDA too). */
const BASE_OFFSET = 0x10000;

export function fakeDevicePtrBase(device: number): number {
  return (device + 1) * DEVICE_SPACING + BASE_OFFSET;
}

export class FakeCudaDriver implements CudaDriver {
  readonly libraryPath = 'fake-libcuda';
  readonly workerSpec: WorkerDriverSpec | null;
  readonly #shared: SharedState;
  readonly #attached: boolean;
  #initialised = false;
  #current: FakeContext | null = null;
  /** Live allocations: pointer → bytes (main-thread instance only). */
  readonly allocations = new Map<CUdeviceptr, { device: number; bytes: number }>();
  /** Device memory another process holds (not this fake's allocations). */
  readonly externalUseBytes: number[];
  readonly registered = new Set<string>();
  readonly primaryRetains: number[];
  readonly calls = new Map<string, number>();
  /** The next call of a function with this name fails with that code (one-shot each). */
  readonly failNext = new Map<string, number>();
  /** Copies fail with this code after this many have succeeded (null: never). */
  failCopiesAfter: { count: number; code: number } | null = null;
  /** Refuse cuMemHostRegister (as under a tight RLIMIT_MEMLOCK). */
  refuseHostRegister = false;
  /** Highest total of allocated bytes seen. */
  peakAllocatedBytes = 0;
  #copies = 0;
  readonly #streams: FakeStream[] = [];

  constructor(opts: { devices: FakeDeviceSpec[]; driverVersion?: number; shareable?: boolean; attach?: SharedState; holdCopies?: CopyHold }) {
    if (opts.attach) {
      this.#shared = opts.attach;
      this.#attached = true;
    } else {
      this.#shared = {
        specs: opts.devices,
        memories: opts.devices.map((d) => new SharedArrayBuffer(d.totalMemoryBytes)),
        driverVersion: opts.driverVersion ?? 12040,
      };
      this.#attached = false;
    }
    this.externalUseBytes = this.#shared.specs.map(() => 0);
    this.primaryRetains = this.#shared.specs.map(() => 0);
    this.workerSpec = !opts.shareable
      ? null
      : opts.holdCopies
        ? { moduleUrl: import.meta.url, exportName: 'openHeldFakeWorkerDriver', options: { shared: this.#shared, gate: opts.holdCopies.gate } }
        : { moduleUrl: import.meta.url, exportName: 'openFakeWorkerDriver', options: this.#shared };
  }

  /** Bytes allocated now, on one device or all. */
  allocatedBytes(device?: number): number {
    let n = 0;
    for (const a of this.allocations.values()) if (device === undefined || a.device === device) n += a.bytes;
    return n;
  }

  /** Async copies queued on some stream and not yet waited for: DMA a real GPU could still be doing. */
  unsynchronisedCopies(): number {
    return this.#streams.reduce((n, s) => n + s.queued, 0);
  }

  callCount(fn: string): number {
    return this.calls.get(fn) ?? 0;
  }

  /** Reads device memory directly (test assertions). */
  peek(ptr: CUdeviceptr, bytes: number): Buffer {
    const { device, offset } = this.#locate(ptr, bytes, false);
    return Buffer.from(this.#shared.memories[device], offset, bytes);
  }

  #enter(fn: string): void {
    this.calls.set(fn, (this.calls.get(fn) ?? 0) + 1);
    const code = this.failNext.get(fn);
    if (code !== undefined) {
      this.failNext.delete(fn);
      throw new CudaError(fn, code);
    }
    if (fn !== 'cuInit' && fn !== 'cuDriverGetVersion' && !this.#initialised) throw new CudaError(fn, CUDA_ERROR_NOT_INITIALIZED);
  }

  #needContext(fn: string): FakeContext {
    if (this.#current === null) throw new CudaError(fn, CUDA_ERROR_INVALID_CONTEXT);
    return this.#current;
  }

  #device(fn: string, dev: number): number {
    if (!Number.isInteger(dev) || dev < 0 || dev >= this.#shared.specs.length) throw new CudaError(fn, CUDA_ERROR_INVALID_DEVICE);
    return dev;
  }

  #locate(ptr: CUdeviceptr, bytes: number, checkAllocation: boolean, fn = 'memcpy'): { device: number; offset: number } {
    const device = Math.floor(ptr / DEVICE_SPACING) - 1;
    const offset = ptr - fakeDevicePtrBase(device);
    const mem = this.#shared.memories[device];
    if (mem === undefined || offset < 0 || offset + bytes > mem.byteLength) throw new CudaError(fn, CUDA_ERROR_INVALID_VALUE, undefined, `address ${ptr} +${bytes}`);
    if (checkAllocation && !this.#attached) {
      let inside = false;
      for (const [p, a] of this.allocations) {
        if (ptr >= p && ptr + bytes <= p + a.bytes) {
          inside = true;
          break;
        }
      }
      if (!inside) throw new CudaError(fn, CUDA_ERROR_INVALID_VALUE, undefined, `[${ptr}, +${bytes}) is not inside a live allocation`);
    }
    return { device, offset };
  }

  #copyCheck(fn: string, ptr: CUdeviceptr, bytes: number, stream: CUstream | null): Uint8Array {
    const ctx = this.#needContext(fn);
    const { device, offset } = this.#locate(ptr, bytes, true, fn);
    if (stream !== null) {
      const s = stream as FakeStream;
      if (s.destroyed || s.device !== ctx.device) throw new CudaError(fn, CUDA_ERROR_INVALID_HANDLE, undefined, 'stream of another context');
    }
    if (device !== ctx.device) throw new CudaError(fn, CUDA_ERROR_INVALID_VALUE, undefined, 'pointer of another device than the current context');
    if (this.failCopiesAfter && this.#copies >= this.failCopiesAfter.count) throw new CudaError(fn, this.failCopiesAfter.code);
    this.#copies++;
    return new Uint8Array(this.#shared.memories[device], offset, bytes);
  }

  cuInit(flags: number): void {
    this.#enter('cuInit');
    if (flags !== 0) throw new CudaError('cuInit', CUDA_ERROR_INVALID_VALUE);
    this.#initialised = true;
  }
  cuDriverGetVersion(): number {
    this.#enter('cuDriverGetVersion');
    return this.#shared.driverVersion;
  }
  cuDeviceGetCount(): number {
    this.#enter('cuDeviceGetCount');
    return this.#shared.specs.length;
  }
  cuDeviceGet(ordinal: number): CUdevice {
    this.#enter('cuDeviceGet');
    return this.#device('cuDeviceGet', ordinal);
  }
  cuDeviceGetName(dev: CUdevice): string {
    this.#enter('cuDeviceGetName');
    return this.#shared.specs[this.#device('cuDeviceGetName', dev)].name;
  }
  cuDeviceTotalMem(dev: CUdevice): number {
    this.#enter('cuDeviceTotalMem');
    return this.#shared.specs[this.#device('cuDeviceTotalMem', dev)].totalMemoryBytes;
  }
  cuDeviceGetPCIBusId(dev: CUdevice): string {
    this.#enter('cuDeviceGetPCIBusId');
    const d = this.#device('cuDeviceGetPCIBusId', dev);
    return this.#shared.specs[d].pciBusId ?? `00000000:${(0x41 + d).toString(16).toUpperCase()}:00.0`;
  }
  cuDevicePrimaryCtxRetain(dev: CUdevice): CUcontext {
    this.#enter('cuDevicePrimaryCtxRetain');
    const d = this.#device('cuDevicePrimaryCtxRetain', dev);
    this.primaryRetains[d]++;
    return { device: d } as FakeContext;
  }
  cuDevicePrimaryCtxRelease(dev: CUdevice): void {
    this.#enter('cuDevicePrimaryCtxRelease');
    const d = this.#device('cuDevicePrimaryCtxRelease', dev);
    if (this.primaryRetains[d] <= 0) throw new CudaError('cuDevicePrimaryCtxRelease', CUDA_ERROR_INVALID_CONTEXT);
    this.primaryRetains[d]--;
  }
  cuCtxSetCurrent(ctx: CUcontext | null): void {
    this.#enter('cuCtxSetCurrent');
    this.#current = ctx as FakeContext | null;
  }
  cuCtxSynchronize(): void {
    this.#enter('cuCtxSynchronize');
    this.#needContext('cuCtxSynchronize');
  }
  cuMemGetInfo(): { freeBytes: number; totalBytes: number } {
    this.#enter('cuMemGetInfo');
    const d = this.#needContext('cuMemGetInfo').device;
    const total = this.#shared.specs[d].totalMemoryBytes;
    return { freeBytes: total - this.externalUseBytes[d] - this.allocatedBytes(d), totalBytes: total };
  }
  cuMemAlloc(bytes: number): CUdeviceptr {
    this.#enter('cuMemAlloc');
    const d = this.#needContext('cuMemAlloc').device;
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new CudaError('cuMemAlloc', CUDA_ERROR_INVALID_VALUE);
    const total = this.#shared.specs[d].totalMemoryBytes;
    if (this.allocatedBytes(d) + this.externalUseBytes[d] + bytes > total) throw new CudaError('cuMemAlloc', CUDA_ERROR_OUT_OF_MEMORY);
    // First fit over the device's address range.
    const taken = [...this.allocations].filter(([, a]) => a.device === d).sort((a, b) => a[0] - b[0]);
    let at = fakeDevicePtrBase(d);
    for (const [p, a] of taken) {
      if (p - at >= bytes) break;
      at = p + a.bytes;
    }
    if (at + bytes > fakeDevicePtrBase(d) + total) throw new CudaError('cuMemAlloc', CUDA_ERROR_OUT_OF_MEMORY, undefined, 'fragmented');
    this.allocations.set(at, { device: d, bytes });
    this.peakAllocatedBytes = Math.max(this.peakAllocatedBytes, this.allocatedBytes());
    return at;
  }
  cuMemFree(ptr: CUdeviceptr): void {
    this.#enter('cuMemFree');
    this.#needContext('cuMemFree');
    if (!this.allocations.delete(ptr)) throw new CudaError('cuMemFree', CUDA_ERROR_INVALID_VALUE, undefined, `no allocation at ${ptr}`);
  }
  cuMemHostRegister(host: Uint8Array, flags: number): void {
    this.#enter('cuMemHostRegister');
    this.#needContext('cuMemHostRegister');
    if (this.refuseHostRegister) throw new CudaError('cuMemHostRegister', 801);
    void flags;
    const k = hostKey(host);
    if (this.registered.has(k)) throw new CudaError('cuMemHostRegister', CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    this.registered.add(k);
  }
  cuMemHostUnregister(host: Uint8Array): void {
    this.#enter('cuMemHostUnregister');
    if (!this.registered.delete(hostKey(host))) throw new CudaError('cuMemHostUnregister', CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  }
  cuMemcpyHtoD(dst: CUdeviceptr, src: Uint8Array): void {
    this.#enter('cuMemcpyHtoD');
    this.#copyCheck('cuMemcpyHtoD', dst, src.byteLength, null).set(src);
  }
  cuMemcpyDtoH(dst: Uint8Array, src: CUdeviceptr): void {
    this.#enter('cuMemcpyDtoH');
    dst.set(this.#copyCheck('cuMemcpyDtoH', src, dst.byteLength, null));
  }
  cuMemcpyHtoDAsync(dst: CUdeviceptr, src: Uint8Array, stream: CUstream): void {
    this.#enter('cuMemcpyHtoDAsync');
    this.#copyCheck('cuMemcpyHtoDAsync', dst, src.byteLength, stream).set(src);
    (stream as FakeStream).queued++;
  }
  cuMemcpyDtoHAsync(dst: Uint8Array, src: CUdeviceptr, stream: CUstream): void {
    this.#enter('cuMemcpyDtoHAsync');
    dst.set(this.#copyCheck('cuMemcpyDtoHAsync', src, dst.byteLength, stream));
    (stream as FakeStream).queued++;
  }
  cuStreamCreate(flags: number): CUstream {
    this.#enter('cuStreamCreate');
    void flags;
    const s = { device: this.#needContext('cuStreamCreate').device, destroyed: false, queued: 0 } as FakeStream;
    this.#streams.push(s);
    return s;
  }
  cuStreamSynchronize(stream: CUstream): void {
    const s = stream as FakeStream;
    // Waited for even when it reports an error (an injected one too): the call returns only once
    // the stream is idle, whatever the copies' outcome.
    if (!s.destroyed) s.queued = 0;
    this.#enter('cuStreamSynchronize');
    if (s.destroyed) throw new CudaError('cuStreamSynchronize', CUDA_ERROR_INVALID_HANDLE);
  }
  cuStreamDestroy(stream: CUstream): void {
    this.#enter('cuStreamDestroy');
    const s = stream as FakeStream;
    if (s.destroyed) throw new CudaError('cuStreamDestroy', CUDA_ERROR_INVALID_HANDLE);
    s.destroyed = true;
  }
}

function hostKey(host: Uint8Array): string {
  // Identity of the memory: the buffer object plus the range (a WeakMap id per buffer).
  let id = bufferIds.get(host.buffer);
  if (id === undefined) {
    id = nextBufferId++;
    bufferIds.set(host.buffer, id);
  }
  return `${id}:${host.byteOffset}:${host.byteLength}`;
}
const bufferIds = new WeakMap<ArrayBufferLike, number>();
let nextBufferId = 1;

/** Worker-thread entry (named in workerSpec): the same device memory, attached. */
export function openFakeWorkerDriver(options: unknown): CudaDriver {
  return new FakeCudaDriver({ devices: [], attach: options as SharedState });
}

/**
 * Holds the copy worker threads' copies of a shareable FakeCudaDriver inside the driver (in
 * cuStreamSynchronize, after their bytes moved) until the test lets them through, in the order they
 * arrived: the copy n (from 0) completes once more than n were let through.
 */
export class CopyHold {
  readonly gate = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
  readonly #sig = new Int32Array(this.gate);

  constructor(letThrough = 0) {
    this.#sig[1] = letThrough;
  }

  /** Copies that reached the driver's synchronisation (held or let through). */
  get arrived(): number {
    return Atomics.load(this.#sig, 0);
  }

  /** Lets copies through until `count` in all have been (all held ones with Infinity). */
  letThrough(count: number): void {
    Atomics.store(this.#sig, 1, Math.min(count, 2 ** 31 - 1));
    Atomics.notify(this.#sig, 1);
  }

  /** Resolves once `count` copies in all have reached the driver (polled: the worker cannot call back). */
  async untilArrived(count: number): Promise<void> {
    while (this.arrived < count) await new Promise((r) => setTimeout(r, 2));
  }
}

/** Worker-thread entry for FakeCudaDriver's holdCopies: the same device memory, its copies held by the gate. */
export function openHeldFakeWorkerDriver(options: unknown): CudaDriver {
  const { shared, gate } = options as { shared: SharedState; gate: SharedArrayBuffer };
  const sig = new Int32Array(gate);
  const driver = new FakeCudaDriver({ devices: [], attach: shared });
  const synchronize = driver.cuStreamSynchronize.bind(driver);
  driver.cuStreamSynchronize = (stream: CUstream): void => {
    const ordinal = Atomics.add(sig, 0, 1);
    for (;;) {
      const letThrough = Atomics.load(sig, 1);
      if (letThrough > ordinal) break;
      // A test that never lets it through fails on this, not by hanging.
      if (Atomics.wait(sig, 1, letThrough, 10_000) === 'timed-out') throw new Error(`held copy ${ordinal} was never let through`);
    }
    synchronize(stream);
  };
  return driver;
}

/** Worker-thread entry that never finishes opening, as a driver call that hangs would (the timer keeps the thread alive). */
export function openHangingWorkerDriver(): Promise<CudaDriver> {
  return new Promise(() => {
    setInterval(() => undefined, 1000);
  });
}

/**
 * Worker-thread entry whose copies block in cuStreamSynchronize until the test lets them go, as a
 * DMA transfer still running: Int32 [0] = a copy entered, [1] = released (set by the test), [2] = a
 * copy finished. Every other call succeeds and does nothing.
 */
export function openGatedWorkerDriver(options: unknown): CudaDriver {
  const sig = new Int32Array((options as { sig: SharedArrayBuffer }).sig);
  const noop = (): number => 0;
  return new Proxy({} as CudaDriver, {
    get: (_target, name) => {
      if (name === 'then') return undefined; // not a thenable: the worker awaits this driver
      if (name === 'cuStreamSynchronize') {
        return () => {
          Atomics.store(sig, 0, 1);
          Atomics.wait(sig, 1, 0, 10_000);
          Atomics.store(sig, 2, 1);
        };
      }
      return noop;
    },
  });
}
