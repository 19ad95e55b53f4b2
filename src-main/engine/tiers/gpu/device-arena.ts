// Device memory for the GPU tier: reserved from the driver when the tier opens, in slabs (device
// allocations of `slabBytes`), and handed to entries as byte extents inside the slabs.
//
// Why reserve up front rather than cuMemAlloc per entry:
// - The tier's budget is then memory it really holds. When the driver cannot give the whole
//   --gpu-mem-gb (another process, a smaller card), the reservation stops at what it got, the
//   budget shrinks to that, and the cache's 80 % rule demotes entries to the CPU tier as it would
//   on any full tier. Nothing is dropped, and CUDA_ERROR_OUT_OF_MEMORY can no longer strike in the
//   middle of a run (after which an entry half-copied to the device would have nowhere to go).
// - cuMemFree synchronises the device, so freeing per demotion would stall every copy in flight;
//   cuMemAlloc per write would put allocator time into write latency. PyTorch's caching allocator,
//   which the reference relies on, holds memory the same way.
// Extents are exact byte ranges, so the bytes entries hold never exceed what the cache has
// reserved for them, and an entry can take several extents (from any slab, on any of the tier's
// devices): free space never goes unused because it is fragmented. Freed extents merge with their
// neighbours. Slabs go back to the driver (cuMemFree) when the tier closes, and from the process
// exit hook on crash paths.

import { insertFreeExtent, type FreeExtents } from '../free-extents.ts';
import { CudaError, isCudaOutOfMemory, type CUcontext, type CudaDriver, type CUdeviceptr } from './cuda-driver.ts';

export interface DeviceExtent {
  /** Device ordinal. */
  device: number;
  ptr: CUdeviceptr;
  bytes: number;
  /** Index of the slab it lies in (internal bookkeeping). */
  slab: number;
  /** Offset in that slab. */
  offset: number;
}

interface Slab extends FreeExtents {
  device: number;
  ptr: CUdeviceptr;
  bytes: number;
}

export interface DeviceReservation {
  device: number;
  requestedBytes: number;
  reservedBytes: number;
  slabs: number;
  /** Free device memory (cuMemGetInfo) before reserving; null when no headroom was asked for. */
  freeBytesBefore: number | null;
  /** The most this device's reservation could take (free − headroom); null when uncapped. */
  capBytes: number | null;
  /** Why less than requested was reserved; null when all of it was. */
  shortfall: string | null;
}

/** Device memory left to the driver and other processes: max(minBytes, fractionOfTotal × total). */
export interface DeviceHeadroom {
  minBytes: number;
  fractionOfTotal: number;
}

export interface ArenaReserveOptions {
  driver: CudaDriver;
  /** Each device's primary context (made current while allocating and freeing on it). */
  contexts: Map<number, CUcontext>;
  plan: { device: number; bytes: number }[];
  slabBytes: number;
  /** Smallest slab tried when the driver runs short (halving from `slabBytes`). */
  minSlabBytes: number;
  /**
   * Caps each device's reservation at its free memory less this headroom. Without a cap the
   * reservation takes everything cuMemAlloc gives, which leaves the driver (its own allocations,
   * other processes on the card, torch in a side-by-side bench) nothing and fails them instead.
   */
  headroom?: DeviceHeadroom;
}

export class DeviceArena {
  readonly #driver: CudaDriver;
  readonly #contexts: Map<number, CUcontext>;
  readonly #slabs: Slab[];
  readonly reservations: DeviceReservation[];
  #usedBytes = 0;
  #released = false;

  private constructor(driver: CudaDriver, contexts: Map<number, CUcontext>, slabs: Slab[], reservations: DeviceReservation[]) {
    this.#driver = driver;
    this.#contexts = contexts;
    this.#slabs = slabs;
    this.reservations = reservations;
  }

  /**
   * Reserves up to `plan[i].bytes` on each device (up to the headroom cap, if one is given). Out of
   * memory is not an error: the slab size halves down to `minSlabBytes`, then the device's
   * reservation stops where it is and says why. Any other driver error frees what was reserved and throws.
   */
  static reserve(o: ArenaReserveOptions): DeviceArena {
    if (!(o.slabBytes > 0) || !(o.minSlabBytes > 0) || o.minSlabBytes > o.slabBytes) {
      throw new RangeError(`need 0 < minSlabBytes <= slabBytes (got ${o.minSlabBytes}, ${o.slabBytes})`);
    }
    const slabs: Slab[] = [];
    const reservations: DeviceReservation[] = [];
    try {
      for (const { device, bytes } of o.plan) {
        const ctx = o.contexts.get(device);
        if (ctx === undefined) throw new Error(`no context for device ${device}`);
        o.driver.cuCtxSetCurrent(ctx);
        const reasons: string[] = [];
        let freeBytesBefore: number | null = null;
        let capBytes: number | null = null;
        if (o.headroom) {
          const info = o.driver.cuMemGetInfo();
          const keep = Math.max(o.headroom.minBytes, Math.ceil(o.headroom.fractionOfTotal * info.totalBytes));
          freeBytesBefore = info.freeBytes;
          capBytes = Math.max(0, info.freeBytes - keep);
          if (capBytes < bytes) {
            reasons.push(`capped at ${capBytes} bytes: ${info.freeBytes} free of ${info.totalBytes}, less ${keep} left to the driver and other processes`);
          }
        }
        const target = capBytes === null ? bytes : Math.min(bytes, capBytes);
        let left = target;
        let size = o.slabBytes;
        let count = 0;
        while (left > 0) {
          const want = Math.min(size, left);
          let ptr: CUdeviceptr;
          try {
            ptr = o.driver.cuMemAlloc(want);
          } catch (err) {
            if (!isCudaOutOfMemory(err)) throw err;
            if (want > o.minSlabBytes) {
              size = Math.max(o.minSlabBytes, Math.floor(want / 2));
              continue;
            }
            reasons.push(`${(err as CudaError).cudaName} after ${target - left} of ${target} bytes`);
            break;
          }
          slabs.push({ device, ptr, bytes: want, free: [[0, want]], freeBytes: want });
          left -= want;
          count++;
        }
        reservations.push({
          device,
          requestedBytes: bytes,
          reservedBytes: target - left,
          slabs: count,
          freeBytesBefore,
          capBytes,
          shortfall: reasons.length > 0 ? reasons.join('; ') : null,
        });
      }
    } catch (err) {
      freeSlabs(o.driver, o.contexts, slabs);
      throw err;
    }
    return new DeviceArena(o.driver, o.contexts, slabs, reservations);
  }

  get capacityBytes(): number {
    return this.#slabs.reduce((n, s) => n + s.bytes, 0);
  }

  get usedBytes(): number {
    return this.#usedBytes;
  }

  get freeBytes(): number {
    return this.capacityBytes - this.#usedBytes;
  }

  /** Device memory held from the driver (0 once released). */
  get heldBytes(): number {
    return this.#released ? 0 : this.capacityBytes;
  }

  /** Free bytes per device ordinal. */
  freeBytesByDevice(): Map<number, number> {
    const m = new Map<number, number>();
    for (const s of this.#slabs) m.set(s.device, (m.get(s.device) ?? 0) + s.freeBytes);
    return m;
  }

  /**
   * Takes `bytes` as one or more extents, or returns null (nothing taken) when there is not enough
   * free. Prefers the device with the most free memory, and one contiguous extent when there is one.
   */
  allocate(bytes: number): DeviceExtent[] | null {
    if (this.#released) throw new Error('the device arena has been released');
    if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new RangeError(`allocate: bytes must be a positive integer (got ${bytes})`);
    if (bytes > this.freeBytes) return null;
    const byDevice = [...this.freeBytesByDevice()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    const order: number[] = [];
    for (const [device] of byDevice) for (let i = 0; i < this.#slabs.length; i++) if (this.#slabs[i].device === device) order.push(i);

    // One extent, first fit.
    for (const i of order) {
      const slab = this.#slabs[i];
      if (slab.freeBytes < bytes) continue;
      for (let r = 0; r < slab.free.length; r++) {
        if (slab.free[r][1] >= bytes) return [this.#take(i, r, bytes)];
      }
    }
    // Several extents, in slab order.
    const out: DeviceExtent[] = [];
    let left = bytes;
    for (const i of order) {
      const slab = this.#slabs[i];
      while (left > 0 && slab.free.length > 0) {
        const n = Math.min(left, slab.free[0][1]);
        out.push(this.#take(i, 0, n));
        left -= n;
      }
      if (left === 0) break;
    }
    return out;
  }

  release(extents: DeviceExtent[]): void {
    if (this.#released) return;
    for (const e of extents) {
      const slab = this.#slabs[e.slab];
      if (slab === undefined || e.offset < 0 || e.offset + e.bytes > slab.bytes) throw new Error(`release: extent outside slab ${e.slab}`);
      insertFreeExtent(slab, e.offset, e.bytes);
      this.#usedBytes -= e.bytes;
    }
  }

  /** Gives every slab back to the driver (cuMemFree). Idempotent; best effort on errors (reported). */
  releaseAll(): Error | null {
    if (this.#released) return null;
    this.#released = true;
    this.#usedBytes = 0;
    return freeSlabs(this.#driver, this.#contexts, this.#slabs);
  }

  #take(slabIndex: number, rangeIndex: number, bytes: number): DeviceExtent {
    const slab = this.#slabs[slabIndex];
    const range = slab.free[rangeIndex];
    const offset = range[0];
    if (range[1] === bytes) slab.free.splice(rangeIndex, 1);
    else {
      range[0] += bytes;
      range[1] -= bytes;
    }
    slab.freeBytes -= bytes;
    this.#usedBytes += bytes;
    return { device: slab.device, ptr: slab.ptr + offset, bytes, slab: slabIndex, offset };
  }
}

function freeSlabs(driver: CudaDriver, contexts: Map<number, CUcontext>, slabs: Slab[]): Error | null {
  let first: Error | null = null;
  let current: number | null = null;
  for (const s of slabs) {
    try {
      if (current !== s.device) {
        driver.cuCtxSetCurrent(contexts.get(s.device) ?? null);
        current = s.device;
      }
      driver.cuMemFree(s.ptr);
    } catch (err) {
      first ??= err as Error;
    }
  }
  slabs.length = 0;
  return first;
}
