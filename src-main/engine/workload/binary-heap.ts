/** A binary min-heap under `before(a, b)` (a comes out first). */
export class BinaryHeap<T> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    this.#items.push(item);
    this.#siftUp(this.#items.length - 1);
  }

  pop(): T | undefined {
    const h = this.#items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      this.#siftDown(0);
    }
    return top;
  }

  /** Re-establishes order after the top item's key changed. */
  updateTop(): void {
    if (this.#items.length > 0) this.#siftDown(0);
  }

  /** Removes the first item matching `pred` (linear scan). */
  remove(pred: (item: T) => boolean): boolean {
    const h = this.#items;
    const i = h.findIndex(pred);
    if (i < 0) return false;
    const last = h.pop()!;
    if (i < h.length) {
      h[i] = last;
      this.#siftDown(i);
      this.#siftUp(i);
    }
    return true;
  }

  items(): readonly T[] {
    return this.#items;
  }

  clear(): T[] {
    return this.#items.splice(0);
  }

  #siftUp(i: number): void {
    const h = this.#items;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.#before(h[i], h[p])) break;
      [h[i], h[p]] = [h[p], h[i]];
      i = p;
    }
  }

  #siftDown(i: number): void {
    const h = this.#items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.#before(h[l], h[m])) m = l;
      if (r < h.length && this.#before(h[r], h[m])) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m], h[i]];
      i = m;
    }
  }
}
