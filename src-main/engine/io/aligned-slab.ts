// Page-aligned I/O buffers for direct I/O, shared with worker threads.
//
// Node's own large Buffers and SharedArrayBuffers start 16 bytes past a page boundary, so O_DIRECT
// reads and writes from them fail with EINVAL. A WebAssembly.Memory is mapped page-aligned, and
// a shared one exposes a SharedArrayBuffer that worker threads can fill and verify in place.
// The slot count doubles as the process-wide bound on I/Os in flight, which is what keeps the
// engine's memory independent of entry size and user count. The memories are advised into
// transparent huge pages before first use (huge-pages.ts: less kernel CPU per direct I/O).

import { adviseHugePages, type HugePageAdvice } from './huge-pages.ts';
import { allocatePageAlignedShared, WASM_MAX_PAGES, WASM_PAGE_BYTES } from './shared-memory.ts';

export const SLAB_ALIGNMENT_BYTES = 4096;
// Several moderate memories rather than one huge one: a failed reservation then costs less, and
// no single view comes near the 4 GiB limit.
const PREFERRED_MEMORY_BYTES = 1024 * 1024 * 1024;

export interface Slot {
  readonly index: number;
  /** A view over shared WebAssembly memory: `buffer.buffer` is a SharedArrayBuffer, `slotBytes` long, page-aligned. */
  readonly buffer: Buffer;
  /**
   * The owner's note that the slot holds the payload pool (plus some entry's stamps), so a payload
   * write can restamp it instead of refilling it. Whoever writes other bytes into the slot clears it.
   */
  holdsPayload: boolean;
}

/** Which free slot an acquirer would rather have: payload writes want one that holds the payload, everything else one that does not. */
export type SlotPreference = 'payload' | 'other';

export class AlignedSlab {
  readonly slotBytes: number;
  readonly slotCount: number;
  /** Whether every memory behind the slots was advised into huge pages, or why not (the first refusal). */
  readonly hugePages: HugePageAdvice;
  private readonly slots: Slot[] = [];
  private readonly taken: boolean[];
  // Stack, so the most recently used (cache-warm) buffer is reused first.
  private readonly free: number[] = [];
  private readonly queue: Array<(slot: Slot) => void> = [];

  constructor(slotBytes: number, slotCount: number) {
    if (!Number.isSafeInteger(slotBytes) || slotBytes <= 0 || slotBytes % SLAB_ALIGNMENT_BYTES !== 0) {
      throw new RangeError(`slotBytes must be a positive multiple of ${SLAB_ALIGNMENT_BYTES} (got ${slotBytes})`);
    }
    if (!Number.isSafeInteger(slotCount) || slotCount <= 0) {
      throw new RangeError(`slotCount must be a positive integer (got ${slotCount})`);
    }
    const maxMemoryBytes = WASM_MAX_PAGES * WASM_PAGE_BYTES;
    if (slotBytes > maxMemoryBytes) {
      throw new RangeError(`slotBytes ${slotBytes} exceeds the 4 GiB limit of one WebAssembly memory`);
    }
    this.slotBytes = slotBytes;
    this.slotCount = slotCount;
    this.taken = new Array<boolean>(slotCount).fill(false);

    const slotsPerMemory = Math.max(1, Math.floor(PREFERRED_MEMORY_BYTES / slotBytes));
    let hugePages: HugePageAdvice = { advised: true, reason: null };
    for (let first = 0; first < slotCount; first += slotsPerMemory) {
      const n = Math.min(slotsPerMemory, slotCount - first);
      const pages = Math.ceil((n * slotBytes) / WASM_PAGE_BYTES);
      const sab = allocatePageAlignedShared(pages);
      // Before anything touches the memory, so its pages are faulted in huge.
      const advice = adviseHugePages(new Uint8Array(sab));
      if (hugePages.advised && !advice.advised) hugePages = advice;
      for (let j = 0; j < n; j++) {
        this.slots.push({ index: first + j, buffer: Buffer.from(sab, j * slotBytes, slotBytes), holdsPayload: false });
      }
    }
    this.hugePages = hugePages;
    for (let i = slotCount - 1; i >= 0; i--) this.free.push(i);
  }

  /** Slots currently held. */
  get inUse(): number {
    return this.slotCount - this.free.length;
  }

  /** Callers waiting in `acquire`. */
  get waiters(): number {
    return this.queue.length;
  }

  /**
   * Resolves with a free slot, the most recently used one that matches `prefer` if any; when none
   * is free, waits first-come first-served (a waiter takes the next slot released, whatever it holds).
   */
  acquire(prefer: SlotPreference = 'other'): Promise<Slot> {
    const slot = this.tryAcquire(prefer);
    if (slot !== null) return Promise.resolve(slot);
    return new Promise<Slot>((resolve) => this.queue.push(resolve));
  }

  /** A free slot, or null without waiting. Never jumps ahead of queued waiters. */
  tryAcquire(prefer: SlotPreference = 'other'): Slot | null {
    if (this.queue.length > 0 || this.free.length === 0) return null;
    const wantPayload = prefer === 'payload';
    let at = this.free.length - 1;
    // The free list is short (one slot per I/O in flight): a scan costs less than two lists' upkeep.
    while (at >= 0 && this.slots[this.free[at]].holdsPayload !== wantPayload) at--;
    if (at < 0) at = this.free.length - 1;
    const index = this.free[at];
    this.free.splice(at, 1);
    this.taken[index] = true;
    return this.slots[index];
  }

  release(slot: Slot): void {
    const own = this.slots[slot.index];
    if (own === undefined || own.buffer !== slot.buffer) {
      throw new Error(`release: slot ${slot.index} does not belong to this slab`);
    }
    if (!this.taken[slot.index]) {
      throw new Error(`release: slot ${slot.index} is not in use (released twice?)`);
    }
    const next = this.queue.shift();
    if (next !== undefined) {
      // Handed straight to the oldest waiter, so a stream of new acquirers can't starve it.
      next(own);
      return;
    }
    this.taken[slot.index] = false;
    this.free.push(slot.index);
  }
}
