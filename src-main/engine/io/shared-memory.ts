// Page-aligned shared memory from WebAssembly.Memory. The project's compiler libs (ES2023 + Node
// types) don't declare the WebAssembly namespace, so the one constructor used is typed here rather
// than pulling in DOM typings or augmenting globals other modules may also declare.

export const WASM_PAGE_BYTES = 64 * 1024;
/** A wasm32 memory tops out at 65536 pages (4 GiB). */
export const WASM_MAX_PAGES = 65536;

interface SharedWasmMemory {
  readonly buffer: SharedArrayBuffer;
}

interface WasmMemoryConstructor {
  new (descriptor: { initial: number; maximum: number; shared: true }): SharedWasmMemory;
}

const wasm = (globalThis as unknown as { WebAssembly: { Memory: WasmMemoryConstructor } }).WebAssembly;

/**
 * A SharedArrayBuffer of `pages` × 64 KiB whose first byte is page-aligned (the engine maps it
 * with mmap), unlike SharedArrayBuffers from `new SharedArrayBuffer`, which start 16 bytes in.
 * The memory is freed when the returned buffer is no longer referenced.
 */
export function allocatePageAlignedShared(pages: number): SharedArrayBuffer {
  if (!Number.isSafeInteger(pages) || pages <= 0 || pages > WASM_MAX_PAGES) {
    throw new RangeError(`pages must be an integer in 1..${WASM_MAX_PAGES} (got ${pages})`);
  }
  return new wasm.Memory({ initial: pages, maximum: pages, shared: true }).buffer;
}
