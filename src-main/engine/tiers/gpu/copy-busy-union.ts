// Time with at least one copy of a kind executing: the union of the copies' own intervals, as the
// copy threads timed them. Timing from hand-off to reply instead would count the time a copy
// waited in a copy thread behind copies of the other direction (the threads are shared), and on
// the H200 that made host→device "link busy" read 29.16 GB/s beside 40.39 GB/s per copy (its first
// gpu-only run, kvbench 0.8.0), which a union of the copies themselves cannot do.
//
// Intervals are reported out of order (two threads, different sizes). A copy cannot start before
// it is handed off, so once every copy handed off before t has reported, no interval still to come
// starts before t: reported intervals are merged in start order up to the earliest hand-off still
// pending, and only those after it wait (a few: the copies in flight).

/** A copy's own interval: from its first cuMemcpy*Async call to stream completion (process.hrtime.bigint). */
export interface CopyInterval {
  startNs: bigint;
  endNs: bigint;
}

export class CopyBusyUnion {
  /** Copies handed off and not yet reported: token → hand-off time, in hand-off order. */
  readonly #pending = new Map<number, bigint>();
  /** Reported intervals that an earlier-starting one may still precede. */
  #waiting: CopyInterval[] = [];
  /** The merged union so far: closed segments' total, and the segment still open to extension. */
  #closedNs = 0n;
  #open: CopyInterval | null = null;
  /** Nothing before this counts (the measured window's start). */
  #fromNs: bigint | null = null;
  #nextToken = 1;

  /** A copy is handed to the copy engine at `nowNs`; the token settles it. */
  handOff(nowNs: bigint): number {
    const token = this.#nextToken++;
    this.#pending.set(token, nowNs);
    return token;
  }

  /** The copy ended: its interval, or null when it failed (it carried no bytes). */
  settle(token: number, interval: CopyInterval | null): void {
    this.#pending.delete(token);
    if (interval !== null) {
      const clipped = this.#clip(interval);
      if (clipped !== null) this.#waiting.push(clipped);
    }
    this.#mergeReady();
  }

  /** Starts afresh at `nowNs`: time before it no longer counts, copies in flight count from it. */
  reset(nowNs: bigint): void {
    this.#fromNs = nowNs;
    this.#closedNs = 0n;
    this.#open = this.#open === null ? null : this.#clip(this.#open);
    this.#waiting = this.#waiting.map((i) => this.#clip(i)).filter((i): i is CopyInterval => i !== null);
  }

  /** The union's length in ns, the intervals still waiting included. */
  busyNs(): number {
    let total = this.#closedNs;
    let open = this.#open;
    for (const i of [...this.#waiting].sort(byStart)) {
      if (open !== null && i.startNs <= open.endNs) {
        if (i.endNs > open.endNs) open = { startNs: open.startNs, endNs: i.endNs };
      } else {
        if (open !== null) total += open.endNs - open.startNs;
        open = i;
      }
    }
    if (open !== null) total += open.endNs - open.startNs;
    return Number(total);
  }

  #clip(i: CopyInterval): CopyInterval | null {
    if (this.#fromNs === null || i.startNs >= this.#fromNs) return i;
    return i.endNs > this.#fromNs ? { startNs: this.#fromNs, endNs: i.endNs } : null;
  }

  #mergeReady(): void {
    if (this.#waiting.length === 0) return;
    // Map iteration is insertion order, and hand-offs are made in time order: the first is the earliest.
    const bound = this.#pending.size === 0 ? null : this.#pending.values().next().value!;
    this.#waiting.sort(byStart);
    let merged = 0;
    for (const i of this.#waiting) {
      if (bound !== null && i.startNs > bound) break;
      if (this.#open !== null && i.startNs <= this.#open.endNs) {
        if (i.endNs > this.#open.endNs) this.#open = { startNs: this.#open.startNs, endNs: i.endNs };
      } else {
        if (this.#open !== null) this.#closedNs += this.#open.endNs - this.#open.startNs;
        this.#open = i;
      }
      merged++;
    }
    if (merged > 0) this.#waiting = this.#waiting.slice(merged);
  }
}

const byStart = (a: CopyInterval, b: CopyInterval): number => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0);
