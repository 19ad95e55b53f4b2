// CudaDriver over the NVIDIA driver library through koffi (a Node-API FFI with prebuilt binaries:
// no compiler, no CUDA toolkit, works in worker threads and under Electron). libcuda.so.1 comes
// with every NVIDIA driver, unlike the CUDA runtime (libcudart), which is why kvbench calls it
// directly. Both koffi and the library are loaded lazily, on first use: a machine without them
// gets `{ ok: false, reason }` naming what is missing, never an exception at import time.
//
// Buffers and typed arrays passed for `void *` parameters reach C as pointers to their own bytes
// (koffi passes them without copying; checked in the tests), which is what makes
// cuMemHostRegister on a SharedArrayBuffer meaningful: the copies later use that same memory.

import {
  CUDA_SUCCESS,
  CudaError,
  cudaErrorName,
  type CUcontext,
  type CudaDriver,
  type CUdevice,
  type CUdeviceptr,
  type CUstream,
  type WorkerDriverSpec,
} from './cuda-driver.ts';

type Koffi = typeof import('koffi');
type KoffiLib = ReturnType<Koffi['load']>;
type NativeFn = (...args: unknown[]) => unknown;

export type CudaDriverLoad = { ok: true; driver: CudaDriver } | { ok: false; reason: string };

/** The soname every Linux NVIDIA driver installs (nvcuda.dll on Windows). */
export const DEFAULT_CUDA_LIBRARY = process.platform === 'win32' ? 'nvcuda.dll' : 'libcuda.so.1';

/** Names the driver library for every command (hw, run, suite, serve, the bench): a path or a soname. */
export const CUDA_LIBRARY_ENV = 'KVBENCH_CUDA_LIBRARY';

/**
 * The library loaded when no path is passed: $KVBENCH_CUDA_LIBRARY when set and not blank (a driver
 * outside the loader's search path, e.g. /usr/local/nvidia/lib64/libcuda.so.1), else the soname.
 */
export function defaultCudaLibrary(env: NodeJS.ProcessEnv = process.env): string {
  const v = env[CUDA_LIBRARY_ENV]?.trim();
  return v ? v : DEFAULT_CUDA_LIBRARY;
}

let koffiModule: Promise<Koffi> | null = null;
const loaded = new Map<string, Promise<CudaDriverLoad>>();

async function importKoffi(): Promise<Koffi> {
  koffiModule ??= import('koffi').then((m) => (m as unknown as { default?: Koffi }).default ?? (m as unknown as Koffi));
  return koffiModule;
}

/**
 * Loads the driver library once per path per thread (later calls share the handle). Does not call
 * cuInit: callers decide when to initialise, and a failure there has its own reason.
 */
export function loadCudaDriver(opts: { libraryPath?: string } = {}): Promise<CudaDriverLoad> {
  const libraryPath = opts.libraryPath ?? defaultCudaLibrary();
  let p = loaded.get(libraryPath);
  if (p === undefined) {
    p = loadUncached(libraryPath);
    loaded.set(libraryPath, p);
  }
  return p;
}

async function loadUncached(libraryPath: string): Promise<CudaDriverLoad> {
  if (process.platform === 'darwin') return { ok: false, reason: 'CUDA is not available on macOS (no NVIDIA driver)' };
  let koffi: Koffi;
  try {
    koffi = await importKoffi();
  } catch (err) {
    return { ok: false, reason: `the koffi FFI package could not be loaded, so ${libraryPath} cannot be called: ${(err as Error).message}` };
  }
  let lib: KoffiLib;
  try {
    lib = koffi.load(libraryPath);
  } catch (err) {
    // koffi's message does not name the library ("Failed to load shared library: cannot open …").
    return {
      ok: false,
      reason:
        process.env[CUDA_LIBRARY_ENV]?.trim() === libraryPath
          ? `${libraryPath} could not be loaded (${(err as Error).message}): it is what ${CUDA_LIBRARY_ENV} names`
          : `${libraryPath} could not be loaded (${(err as Error).message}): no NVIDIA driver is installed, or it is not on the library path (${CUDA_LIBRARY_ENV} can name it)`,
    };
  }
  try {
    return { ok: true, driver: new KoffiCudaDriver(lib, libraryPath) };
  } catch (err) {
    return { ok: false, reason: `${libraryPath} lacks a driver API function kvbench needs (driver too old?): ${(err as Error).message}` };
  }
}

/** Entry point for copy worker threads (named in `workerSpec`): the same library, opened in the worker. */
export async function openWorkerDriver(options: unknown): Promise<CudaDriver> {
  const { libraryPath } = options as { libraryPath: string };
  const r = await loadCudaDriver({ libraryPath });
  if (!r.ok) throw new Error(r.reason);
  return r.driver;
}

/**
 * The C prototype of each driver function the tier calls, in koffi's syntax (a CUresult is an int, a
 * CUdevice an int, a CUdeviceptr a uint64_t, a CUcontext or CUstream a pointer), versioned symbol
 * first: cuda.h maps the plain names to the versioned ones, and the plain ones are the legacy
 * variants where both exist (tried only when a driver lacks the versioned one).
 * test/unit/gpu/cuda-prototypes.test.ts holds each against cuda.h's own declaration.
 */
export const CUDA_DRIVER_PROTOTYPES: Readonly<Record<string, readonly string[]>> = {
  cuInit: ['int cuInit(unsigned int flags)'],
  cuDriverGetVersion: ['int cuDriverGetVersion(_Out_ int *version)'],
  cuDeviceGetCount: ['int cuDeviceGetCount(_Out_ int *count)'],
  cuDeviceGet: ['int cuDeviceGet(_Out_ int *device, int ordinal)'],
  cuDeviceGetName: ['int cuDeviceGetName(void *name, int len, int dev)'],
  cuDeviceTotalMem: ['int cuDeviceTotalMem_v2(_Out_ size_t *bytes, int dev)'],
  cuDeviceGetPCIBusId: ['int cuDeviceGetPCIBusId(void *busId, int len, int dev)'],
  cuDevicePrimaryCtxRetain: ['int cuDevicePrimaryCtxRetain(_Out_ void **ctx, int dev)'],
  cuDevicePrimaryCtxRelease: ['int cuDevicePrimaryCtxRelease_v2(int dev)', 'int cuDevicePrimaryCtxRelease(int dev)'],
  cuCtxSetCurrent: ['int cuCtxSetCurrent(void *ctx)'],
  cuCtxSynchronize: ['int cuCtxSynchronize(void)'],
  cuMemGetInfo: ['int cuMemGetInfo_v2(_Out_ size_t *free, _Out_ size_t *total)'],
  cuMemAlloc: ['int cuMemAlloc_v2(_Out_ uint64_t *dptr, size_t bytes)'],
  cuMemFree: ['int cuMemFree_v2(uint64_t dptr)'],
  cuMemHostRegister: ['int cuMemHostRegister_v2(void *p, size_t bytes, unsigned int flags)', 'int cuMemHostRegister(void *p, size_t bytes, unsigned int flags)'],
  cuMemHostUnregister: ['int cuMemHostUnregister(void *p)'],
  cuMemcpyHtoD: ['int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t bytes)'],
  cuMemcpyDtoH: ['int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t bytes)'],
  cuMemcpyHtoDAsync: ['int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t bytes, void *stream)'],
  cuMemcpyDtoHAsync: ['int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t bytes, void *stream)'],
  cuStreamCreate: ['int cuStreamCreate(_Out_ void **stream, unsigned int flags)'],
  cuStreamSynchronize: ['int cuStreamSynchronize(void *stream)'],
  cuStreamDestroy: ['int cuStreamDestroy_v2(void *stream)', 'int cuStreamDestroy(void *stream)'],
  cuGetErrorName: ['int cuGetErrorName(int error, _Out_ const char **name)'],
};

class KoffiCudaDriver implements CudaDriver {
  readonly libraryPath: string;
  readonly workerSpec: WorkerDriverSpec;
  readonly #f: Record<string, NativeFn>;

  constructor(lib: KoffiLib, libraryPath: string) {
    this.libraryPath = libraryPath;
    this.workerSpec = { moduleUrl: import.meta.url, exportName: 'openWorkerDriver', options: { libraryPath } };
    const bind = (...protos: string[]): NativeFn => {
      let last: unknown;
      for (const proto of protos) {
        try {
          return lib.func(proto) as unknown as NativeFn;
        } catch (err) {
          last = err;
        }
      }
      throw last;
    };
    this.#f = Object.fromEntries(Object.entries(CUDA_DRIVER_PROTOTYPES).map(([fn, protos]) => [fn, bind(...protos)]));
  }

  #call(fn: string, ...args: unknown[]): void {
    const rc = this.#f[fn](...args) as number;
    if (rc !== CUDA_SUCCESS) throw new CudaError(fn, rc, this.#errorName(rc));
  }

  #errorName(code: number): string {
    try {
      const out: unknown[] = [null];
      if ((this.#f.cuGetErrorName(code, out) as number) === CUDA_SUCCESS && typeof out[0] === 'string') return out[0];
    } catch {
      // fall through to the built-in table
    }
    return cudaErrorName(code);
  }

  #out<T>(fn: string, ...args: unknown[]): T {
    const out: unknown[] = [null];
    this.#call(fn, out, ...args);
    return out[0] as T;
  }

  cuInit(flags: number): void {
    this.#call('cuInit', flags);
  }
  cuDriverGetVersion(): number {
    return this.#out<number>('cuDriverGetVersion');
  }
  cuDeviceGetCount(): number {
    return this.#out<number>('cuDeviceGetCount');
  }
  cuDeviceGet(ordinal: number): CUdevice {
    return this.#out<number>('cuDeviceGet', ordinal);
  }
  cuDeviceGetName(dev: CUdevice): string {
    const buf = Buffer.alloc(256);
    this.#call('cuDeviceGetName', buf, buf.length, dev);
    return cString(buf);
  }
  cuDeviceTotalMem(dev: CUdevice): number {
    return toSafeNumber(this.#out<number | bigint>('cuDeviceTotalMem', dev), 'cuDeviceTotalMem');
  }
  cuDeviceGetPCIBusId(dev: CUdevice): string {
    const buf = Buffer.alloc(64);
    this.#call('cuDeviceGetPCIBusId', buf, buf.length, dev);
    return cString(buf);
  }
  cuDevicePrimaryCtxRetain(dev: CUdevice): CUcontext {
    return this.#out<CUcontext>('cuDevicePrimaryCtxRetain', dev);
  }
  cuDevicePrimaryCtxRelease(dev: CUdevice): void {
    this.#call('cuDevicePrimaryCtxRelease', dev);
  }
  cuCtxSetCurrent(ctx: CUcontext | null): void {
    this.#call('cuCtxSetCurrent', ctx);
  }
  cuCtxSynchronize(): void {
    this.#call('cuCtxSynchronize');
  }
  cuMemGetInfo(): { freeBytes: number; totalBytes: number } {
    const free: unknown[] = [null];
    const total: unknown[] = [null];
    this.#call('cuMemGetInfo', free, total);
    return {
      freeBytes: toSafeNumber(free[0] as number | bigint, 'cuMemGetInfo'),
      totalBytes: toSafeNumber(total[0] as number | bigint, 'cuMemGetInfo'),
    };
  }
  cuMemAlloc(bytes: number): CUdeviceptr {
    return toSafeNumber(this.#out<number | bigint>('cuMemAlloc', bytes), 'cuMemAlloc');
  }
  cuMemFree(ptr: CUdeviceptr): void {
    this.#call('cuMemFree', ptr);
  }
  cuMemHostRegister(host: Uint8Array, flags: number): void {
    this.#call('cuMemHostRegister', host, host.byteLength, flags);
  }
  cuMemHostUnregister(host: Uint8Array): void {
    this.#call('cuMemHostUnregister', host);
  }
  cuMemcpyHtoD(dst: CUdeviceptr, src: Uint8Array): void {
    this.#call('cuMemcpyHtoD', dst, src, src.byteLength);
  }
  cuMemcpyDtoH(dst: Uint8Array, src: CUdeviceptr): void {
    this.#call('cuMemcpyDtoH', dst, src, dst.byteLength);
  }
  cuMemcpyHtoDAsync(dst: CUdeviceptr, src: Uint8Array, stream: CUstream): void {
    this.#call('cuMemcpyHtoDAsync', dst, src, src.byteLength, stream);
  }
  cuMemcpyDtoHAsync(dst: Uint8Array, src: CUdeviceptr, stream: CUstream): void {
    this.#call('cuMemcpyDtoHAsync', dst, src, dst.byteLength, stream);
  }
  cuStreamCreate(flags: number): CUstream {
    return this.#out<CUstream>('cuStreamCreate', flags);
  }
  cuStreamSynchronize(stream: CUstream): void {
    this.#call('cuStreamSynchronize', stream);
  }
  cuStreamDestroy(stream: CUstream): void {
    this.#call('cuStreamDestroy', stream);
  }
}

function cString(buf: Buffer): string {
  const end = buf.indexOf(0);
  return buf.toString('utf8', 0, end < 0 ? buf.length : end);
}

function toSafeNumber(v: number | bigint, fn: string): number {
  const n = typeof v === 'bigint' ? Number(v) : v;
  if (!Number.isSafeInteger(n) || BigInt(n) !== BigInt(v)) throw new Error(`${fn} returned ${v}, which is not a safe integer`);
  return n;
}
