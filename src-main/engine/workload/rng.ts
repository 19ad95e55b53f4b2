/**
 * Seeded pseudo-random streams. Every random choice in a run comes from one of these, never from
 * Math.random or the clock, so the same seed and configuration offer the same request stream.
 */

/** splitmix32: turns (seed, stream index) into well-mixed state words. */
function splitmix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/** sfc32: small, fast, passes PractRand to large sizes; plenty for workload choices. */
export class Rng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number, stream = 0) {
    const mix = splitmix32((seed >>> 0) ^ Math.imul(stream + 1, 0x27d4eb2d));
    // A second mixing round keyed by the stream keeps streams of adjacent indices unrelated.
    const mix2 = splitmix32(mix() ^ (stream >>> 0));
    this.#a = mix2();
    this.#b = mix2();
    this.#c = mix2();
    this.#d = mix2() | 1;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform real in [low, high). */
  uniform(low: number, high: number): number {
    return low + (high - low) * this.next();
  }

  /** Uniform integer in [low, high] inclusive. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.index(items.length)];
  }

  /** Uniform index in [0, length): the draw {@link pick} makes, for a caller that keeps the index. */
  index(length: number): number {
    return Math.floor(this.next() * length);
  }

  /** Index chosen with probability proportional to weights[i]. */
  weightedIndex(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i];
      if (r < 0) return i;
    }
    return weights.length - 1;
  }
}
