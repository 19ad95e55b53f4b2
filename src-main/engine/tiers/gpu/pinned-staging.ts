// Host staging buffers for the GPU tier: page-aligned shared memory (so payload fills, CPU-tier
// copies and storage reads in worker threads can write into it, exactly as they do for the other
// tiers) that is also page-locked with cuMemHostRegister (so the DMA engines copy it at full speed).
//
// Registering the shared memory itself, rather than keeping a separate cuMemHostAlloc buffer and
// copying into it, saves a host copy per chunk: one thread copies at ~8 GB/s here, a PCIe 5 x16
// link moves ~50 GB/s, so the extra copy would bound the tier far below the link. When
// registration fails (locked-memory limits, a driver that refuses), staging stays pageable: copies
// still work, slower, and the report says so.

import { allocatePageAlignedShared, WASM_MAX_PAGES, WASM_PAGE_BYTES } from '../../io/shared-memory.ts';
import { CU_MEMHOSTREGISTER_PORTABLE, type CudaDriver } from './cuda-driver.ts';

export interface StagingSlot {
  readonly index: number;
  /** slotBytes long, over a SharedArrayBuffer, page-aligned. */
  readonly buffer: Buffer;
}

export class PinnedStaging {
  readonly slotBytes: number;
  readonly slotCount: number;
  /** True when the memory is page-locked with the driver. */
  readonly pinned: boolean;
  /** Why staging is not pinned; null when it is. */
  readonly pinnedReason: string | null;
  readonly #driver: CudaDriver;
  readonly #region: Buffer;
  readonly #slots: StagingSlot[] = [];
  readonly #free: number[] = [];
  readonly #waiting: ((slot: StagingSlot) => void)[] = [];
  #registered: boolean;

  private constructor(driver: CudaDriver, slotBytes: number, slotCount: number) {
    this.#driver = driver;
    this.slotBytes = slotBytes;
    this.slotCount = slotCount;
    const pages = Math.ceil((slotBytes * slotCount) / WASM_PAGE_BYTES);
    if (pages > WASM_MAX_PAGES) throw new RangeError(`staging of ${slotCount} × ${slotBytes} bytes exceeds one 4 GiB shared memory`);
    this.#region = Buffer.from(allocatePageAlignedShared(pages), 0, slotBytes * slotCount);
    for (let i = 0; i < slotCount; i++) {
      this.#slots.push({ index: i, buffer: this.#region.subarray(i * slotBytes, (i + 1) * slotBytes) });
    }
    for (let i = slotCount - 1; i >= 0; i--) this.#free.push(i);
    let reason: string | null = null;
    try {
      // PORTABLE: pinned for every context, so any device's copies (and any thread's) use DMA.
      driver.cuMemHostRegister(this.#region, CU_MEMHOSTREGISTER_PORTABLE);
    } catch (err) {
      reason = `cuMemHostRegister refused the staging memory, copies use pageable memory: ${(err as Error).message}`;
    }
    this.#registered = reason === null;
    this.pinned = reason === null;
    this.pinnedReason = reason;
  }

  /** A context must be current on this thread (cuMemHostRegister needs one). */
  static create(driver: CudaDriver, slotBytes: number, slotCount: number): PinnedStaging {
    if (!Number.isSafeInteger(slotBytes) || slotBytes <= 0 || slotBytes % 4096 !== 0) {
      throw new RangeError(`slotBytes must be a positive multiple of 4096 (got ${slotBytes})`);
    }
    if (!Number.isSafeInteger(slotCount) || slotCount <= 0) throw new RangeError(`slotCount must be a positive integer (got ${slotCount})`);
    return new PinnedStaging(driver, slotBytes, slotCount);
  }

  get totalBytes(): number {
    return this.slotBytes * this.slotCount;
  }

  /** Whether an acquire() now would wait for a release (every slot taken, or others already waiting). */
  get wouldWait(): boolean {
    return this.#waiting.length > 0 || this.#free.length === 0;
  }

  acquire(): Promise<StagingSlot> {
    const i = this.#waiting.length === 0 ? this.#free.pop() : undefined;
    if (i !== undefined) return Promise.resolve(this.#slots[i]);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(slot: StagingSlot): void {
    if (this.#slots[slot.index] !== slot) throw new Error(`release: slot ${slot.index} is not from this staging area`);
    const next = this.#waiting.shift();
    if (next !== undefined) next(slot);
    else this.#free.push(slot.index);
  }

  /** Unpins the memory (idempotent). The memory itself is freed with the last reference to it. */
  unregister(): Error | null {
    if (!this.#registered) return null;
    this.#registered = false;
    try {
      this.#driver.cuMemHostUnregister(this.#region);
      return null;
    } catch (err) {
      return err as Error;
    }
  }
}
