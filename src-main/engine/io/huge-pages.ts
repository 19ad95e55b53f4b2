// Transparent huge pages for the I/O buffers, asked for with madvise(MADV_HUGEPAGE).
//
// Every O_DIRECT write pins its buffer's pages in the kernel (get_user_pages) and builds block
// requests from them: with 4 KiB pages a 16 MiB chunk is 4096 pages to pin and add to the bio one
// by one. On the VM's disk (perf, write-heavy run) the pinning alone was 58 % of the kernel CPU of
// the writes, which were a fifth of all kvbench's CPU. With the buffers in 2 MiB pages the same
// chunk is 8 folios, in large physically contiguous segments: the libuv
// threads' CPU fell from 1.1-1.8 to 0.2 CPU-s per run, and the same disk took 2.0-2.4 GB/s instead
// of 1.5 (fewer, larger requests), in alternating runs (docs/benchmarks.md). Linux's usual THP mode
// is "madvise" (huge pages only where asked), and Node cannot ask, so kvbench calls libc's madvise
// through koffi (already a dependency, for the GPU tier). The advice is a hint, recorded in the
// results and never required: THP "never", another OS, or koffi missing leave the buffers in small
// pages, which work the same, at more CPU per byte.

import { createRequire } from 'node:module';

/** Linux's MADV_HUGEPAGE (asm-generic/mman-common.h). */
const MADV_HUGEPAGE = 14;
const HUGE_PAGE_BYTES = 2 * 1024 * 1024;

export type HugePageAdvice = { advised: true; reason: null } | { advised: false; reason: string };

type Madvise = (addr: Uint8Array, lengthBytes: number, advice: number) => number;
type KoffiLike = {
  load(path: string): { func(proto: string): unknown };
  errno(): number;
};

/** madvise bound once per thread, or why it cannot be. */
let bound: { madvise: Madvise; koffi: KoffiLike } | { reason: string } | null = null;

function bindMadvise(): { madvise: Madvise; koffi: KoffiLike } | { reason: string } {
  if (process.platform !== 'linux') return { reason: `huge pages are asked for on Linux only (this is ${process.platform})` };
  let koffi: KoffiLike;
  try {
    // Synchronous on purpose: the slab is built in a constructor. koffi is CommonJS.
    koffi = createRequire(import.meta.url)('koffi') as KoffiLike;
  } catch (err) {
    return { reason: `the koffi FFI package could not be loaded to call madvise: ${(err as Error).message}` };
  }
  try {
    const madvise = koffi.load('libc.so.6').func('int madvise(void *addr, size_t len, int advice)') as Madvise;
    return { madvise, koffi };
  } catch (err) {
    return { reason: `libc's madvise could not be bound: ${(err as Error).message}` };
  }
}

/**
 * Advises the kernel to back `memory` with transparent huge pages. Call it before the memory is
 * first touched: the advice applies to pages faulted in afterwards (khugepaged may collapse older
 * ones, much later). `memory` must start on a page boundary (a WebAssembly memory does).
 */
export function adviseHugePages(memory: Uint8Array): HugePageAdvice {
  if (memory.byteLength < HUGE_PAGE_BYTES) return { advised: false, reason: `the buffer (${memory.byteLength} bytes) is smaller than a huge page` };
  bound ??= bindMadvise();
  if ('reason' in bound) return { advised: false, reason: bound.reason };
  // koffi passes a typed array for `void *` as a pointer to its own bytes, without copying.
  if (bound.madvise(memory, memory.byteLength, MADV_HUGEPAGE) === 0) return { advised: true, reason: null };
  const errno = bound.koffi.errno();
  // EINVAL: a kernel built without THP (or an unaligned address, which the caller rules out).
  return { advised: false, reason: `madvise(MADV_HUGEPAGE) failed with errno ${errno}${errno === 22 ? ' (EINVAL: no transparent huge page support?)' : ''}` };
}
