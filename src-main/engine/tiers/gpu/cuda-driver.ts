// The slice of the NVIDIA driver API (libcuda) the GPU tier uses, as an interface, so the tier's
// logic runs against an in-memory fake where no GPU exists and against libcuda through koffi where
// one does. Method names are the API's own (cuda.h maps cuMemAlloc to the cuMemAlloc_v2 symbol and
// so on; the implementation binds the versioned symbols). Every method throws a CudaError when the
// driver returns anything but CUDA_SUCCESS; out-parameters come back as return values.

export const CUDA_SUCCESS = 0;
export const CUDA_ERROR_INVALID_VALUE = 1;
export const CUDA_ERROR_OUT_OF_MEMORY = 2;
export const CUDA_ERROR_NOT_INITIALIZED = 3;
export const CUDA_ERROR_NO_DEVICE = 100;
export const CUDA_ERROR_INVALID_DEVICE = 101;
export const CUDA_ERROR_INVALID_CONTEXT = 201;
export const CUDA_ERROR_INVALID_HANDLE = 400;
export const CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712;
export const CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713;
export const CUDA_ERROR_NOT_SUPPORTED = 801;

/** cuMemHostRegister: the memory is pinned for every CUDA context, not only the current one. */
export const CU_MEMHOSTREGISTER_PORTABLE = 0x01;
/** cuStreamCreate: the stream does not synchronise with the legacy default stream. */
export const CU_STREAM_NON_BLOCKING = 0x01;

/** Names of the codes kvbench meets most; cuGetErrorName covers the rest when the library is there. */
const ERROR_NAMES: Record<number, string> = {
  0: 'CUDA_SUCCESS',
  1: 'CUDA_ERROR_INVALID_VALUE',
  2: 'CUDA_ERROR_OUT_OF_MEMORY',
  3: 'CUDA_ERROR_NOT_INITIALIZED',
  4: 'CUDA_ERROR_DEINITIALIZED',
  35: 'CUDA_ERROR_INSUFFICIENT_DRIVER',
  100: 'CUDA_ERROR_NO_DEVICE',
  101: 'CUDA_ERROR_INVALID_DEVICE',
  201: 'CUDA_ERROR_INVALID_CONTEXT',
  304: 'CUDA_ERROR_OPERATING_SYSTEM',
  400: 'CUDA_ERROR_INVALID_HANDLE',
  700: 'CUDA_ERROR_ILLEGAL_ADDRESS',
  712: 'CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED',
  713: 'CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED',
  801: 'CUDA_ERROR_NOT_SUPPORTED',
  803: 'CUDA_ERROR_SYSTEM_DRIVER_MISMATCH',
  804: 'CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE',
  999: 'CUDA_ERROR_UNKNOWN',
};

export function cudaErrorName(code: number): string {
  return ERROR_NAMES[code] ?? `CUDA error ${code}`;
}

export class CudaError extends Error {
  /** The CUresult the driver returned. */
  readonly cudaCode: number;
  readonly cudaName: string;
  /** The driver function that returned it. */
  readonly fn: string;

  constructor(fn: string, cudaCode: number, cudaName = cudaErrorName(cudaCode), detail?: string) {
    super(`${fn} failed: ${cudaName} (${cudaCode})${detail ? `: ${detail}` : ''}`);
    this.name = 'CudaError';
    this.cudaCode = cudaCode;
    this.cudaName = cudaName;
    this.fn = fn;
  }
}

export function isCudaOutOfMemory(err: unknown): boolean {
  return err instanceof CudaError && err.cudaCode === CUDA_ERROR_OUT_OF_MEMORY;
}

/** CUdevice: an ordinal-derived handle (an int in the C API). */
export type CUdevice = number;
/** CUdeviceptr: a device address. Unified addressing keeps them under 2^53, so a Number holds one exactly. */
export type CUdeviceptr = number;
/** CUcontext and CUstream: opaque handles, only ever passed back to the driver that made them. */
export interface CUcontext {
  readonly __cuHandle: 'CUcontext';
}
export interface CUstream {
  readonly __cuHandle: 'CUstream';
}

/**
 * How a worker thread opens its own instance of the same driver: a module and one of its exports,
 * called with `options` (structured-cloneable; SharedArrayBuffers are shared, not copied).
 */
export interface WorkerDriverSpec {
  moduleUrl: string;
  exportName: string;
  options: unknown;
}

export interface CudaDriver {
  /** What was loaded (a path or soname), for reports and error messages. */
  readonly libraryPath: string;
  /** How copy worker threads open the same driver; null when it can only be used on this thread. */
  readonly workerSpec: WorkerDriverSpec | null;

  cuInit(flags: number): void;
  /** CUDA version the driver supports, as the API encodes it: 1000 × major + 10 × minor (12040 = 12.4). */
  cuDriverGetVersion(): number;
  cuDeviceGetCount(): number;
  cuDeviceGet(ordinal: number): CUdevice;
  cuDeviceGetName(dev: CUdevice): string;
  cuDeviceTotalMem(dev: CUdevice): number;
  cuDeviceGetPCIBusId(dev: CUdevice): string;
  cuDevicePrimaryCtxRetain(dev: CUdevice): CUcontext;
  cuDevicePrimaryCtxRelease(dev: CUdevice): void;
  /** Makes `ctx` current on the calling thread (contexts are per thread). */
  cuCtxSetCurrent(ctx: CUcontext | null): void;
  cuCtxSynchronize(): void;
  /** Free and total memory of the current context's device. */
  cuMemGetInfo(): { freeBytes: number; totalBytes: number };
  cuMemAlloc(bytes: number): CUdeviceptr;
  cuMemFree(ptr: CUdeviceptr): void;
  /** Page-locks `host` (its exact bytes) so DMA can reach it; undone by cuMemHostUnregister. */
  cuMemHostRegister(host: Uint8Array, flags: number): void;
  cuMemHostUnregister(host: Uint8Array): void;
  /** Copies all of `src` to device address `dst`; returns when the copy is complete. */
  cuMemcpyHtoD(dst: CUdeviceptr, src: Uint8Array): void;
  /** Fills all of `dst` from device address `src`; returns when the copy is complete. */
  cuMemcpyDtoH(dst: Uint8Array, src: CUdeviceptr): void;
  cuMemcpyHtoDAsync(dst: CUdeviceptr, src: Uint8Array, stream: CUstream): void;
  cuMemcpyDtoHAsync(dst: Uint8Array, src: CUdeviceptr, stream: CUstream): void;
  cuStreamCreate(flags: number): CUstream;
  cuStreamSynchronize(stream: CUstream): void;
  cuStreamDestroy(stream: CUstream): void;
}

/** "12.4" from 12040. */
export function formatCudaVersion(encoded: number): string {
  return `${Math.floor(encoded / 1000)}.${Math.floor((encoded % 1000) / 10)}`;
}
