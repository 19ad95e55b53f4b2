// A free list of byte ranges inside one block of memory (a GPU slab, a CPU-tier region): ranges
// sorted by offset and never adjacent, so a release merges with its neighbours and free space
// never splinters more than what is live makes it.

export interface FreeExtents {
  /** Free ranges [offset, length], sorted by offset, never adjacent (merged). */
  free: [number, number][];
  freeBytes: number;
}

/** Returns [offset, offset + bytes) to `block`'s free list, merging it with free neighbours. */
export function insertFreeExtent(block: FreeExtents, offset: number, bytes: number): void {
  const free = block.free;
  let lo = 0;
  let hi = free.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (free[mid][0] < offset) lo = mid + 1;
    else hi = mid;
  }
  const prev = free[lo - 1];
  const next = free[lo];
  if ((prev && prev[0] + prev[1] > offset) || (next && offset + bytes > next[0])) {
    throw new Error(`release: extent [${offset}, ${offset + bytes}) overlaps free space (released twice?)`);
  }
  if (prev && prev[0] + prev[1] === offset) {
    prev[1] += bytes;
    if (next && prev[0] + prev[1] === next[0]) {
      prev[1] += next[1];
      free.splice(lo, 1);
    }
  } else if (next && offset + bytes === next[0]) {
    next[0] = offset;
    next[1] += bytes;
  } else {
    free.splice(lo, 0, [offset, bytes]);
  }
  block.freeBytes += bytes;
}
