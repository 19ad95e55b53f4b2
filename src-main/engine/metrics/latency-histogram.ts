import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  sumNs: number;
  meanNs: number;
  minNs: number;
  maxNs: number;
  p50Ns: number;
  p95Ns: number;
  p99Ns: number;
  p999Ns: number;
  p9999Ns: number;
}

/**
 * An HDR histogram of nanosecond values (3 significant digits, bounded memory, mergeable).
 * The exact sum is kept beside it so totals such as "total storage I/O time" are not quantised.
 */
export class LatencyHistogram {
  readonly #histogram: hdr.Histogram;
  #sumNs = 0;
  #count = 0;

  constructor() {
    this.#histogram = hdr.build({
      bitBucketSize: 64,
      autoResize: true,
      lowestDiscernibleValue: 1,
      highestTrackableValue: 2,
      numberOfSignificantValueDigits: 3,
      useWebAssembly: false,
    });
  }

  /** A zero (no simulated generation, a queue never waited on) is recorded as 0 and read back as 0. */
  record(valueNs: number): void {
    const v = Math.max(0, Math.round(valueNs));
    this.#histogram.recordValue(v);
    this.#sumNs += valueNs;
    this.#count += 1;
  }

  get count(): number {
    return this.#count;
  }

  get sumNs(): number {
    return this.#sumNs;
  }

  percentileNs(percentile: number): number {
    return this.#count === 0 ? 0 : this.#valueAtPercentile(percentile);
  }

  /**
   * The value at `percentile`, kept inside the recorded range. HDR answers with an edge of the value's
   * bucket (the highest equivalent value, the lowest for the 0th percentile), which can lie above the
   * largest value recorded or below the smallest: a P95 above the max, which exact percentiles (the
   * reference's numpy ones) never give.
   */
  #valueAtPercentile(percentile: number, minNs = this.#minNs()): number {
    return Math.min(Math.max(this.#histogram.getValueAtPercentile(percentile), minNs), this.#histogram.maxValue);
  }

  /**
   * The values at these percentiles, each what percentileNs gives. Each read walks the counts from
   * the lowest bucket, and so does finding the lowest value: that is done once here, not per percentile.
   */
  percentilesNs(percentiles: readonly number[]): number[] {
    if (this.#count === 0) return percentiles.map(() => 0);
    const minNs = this.#minNs();
    return percentiles.map((p) => this.#valueAtPercentile(p, minNs));
  }

  /**
   * The lowest value recorded. minNonZeroValue skips recorded zeros (and is MAX_SAFE_INTEGER when there
   * are only zeros); the 0th percentile is the lowest value recorded, 0 exactly when a zero was.
   */
  #minNs(): number {
    const h = this.#histogram;
    return h.getValueAtPercentile(0) === 0 ? 0 : h.minNonZeroValue;
  }

  merge(other: LatencyHistogram): void {
    this.#histogram.add(other.#histogram);
    this.#sumNs += other.#sumNs;
    this.#count += other.#count;
  }

  copy(): LatencyHistogram {
    const out = new LatencyHistogram();
    out.merge(this);
    return out;
  }

  reset(): void {
    this.#histogram.reset();
    this.#sumNs = 0;
    this.#count = 0;
  }

  summary(): LatencySummary {
    if (this.#count === 0) {
      return { count: 0, sumNs: 0, meanNs: 0, minNs: 0, maxNs: 0, p50Ns: 0, p95Ns: 0, p99Ns: 0, p999Ns: 0, p9999Ns: 0 };
    }
    const [p50Ns, p95Ns, p99Ns, p999Ns, p9999Ns] = this.percentilesNs([50, 95, 99, 99.9, 99.99]);
    return { count: this.#count, sumNs: this.#sumNs, meanNs: this.#sumNs / this.#count, minNs: this.#minNs(), maxNs: this.#histogram.maxValue, p50Ns, p95Ns, p99Ns, p999Ns, p9999Ns };
  }

  /** Compressed HDR encoding (HdrHistogram V2 base64), so stores can merge trials later. */
  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.#histogram);
  }

  /**
   * Why `encoded` is no histogram, or null when it decodes: files are checked with this where they
   * come in, so a damaged one is refused there instead of vanishing from a pooled latency later.
   */
  static decodeProblem(encoded: string): string | null {
    const d = decodeStored(encoded);
    return 'problem' in d ? d.problem : null;
  }

  static decode(encoded: string, sumNs: number): LatencyHistogram {
    const out = new LatencyHistogram();
    const decoded = hdr.decodeFromCompressedBase64(encoded, 64, false);
    out.#histogram.add(decoded);
    out.#count = decoded.totalCount;
    out.#sumNs = sumNs;
    return out;
  }

  /**
   * Merges a stored histogram (encode()'s text) into this one, decoding it once: the same as
   * `merge(LatencyHistogram.decode(encoded, sumNs))` to the last count and bound, without the copy
   * decode() makes where it changes nothing (see addsAsItsCopy). Returns why `encoded` does not decode
   * (then nothing is merged), or null. Pooling thousands of trials' histograms spent most of its time
   * on that copy and on a second decode that only checked the first.
   */
  mergeEncoded(encoded: string, sumNs: number): string | null {
    const d = decodeStored(encoded);
    if ('problem' in d) return d.problem;
    if (addsAsItsCopy(d.histogram)) this.#histogram.add(d.histogram);
    else {
      const copy = new LatencyHistogram();
      copy.#histogram.add(d.histogram);
      this.#histogram.add(copy.#histogram);
    }
    this.#count += d.histogram.totalCount;
    this.#sumNs += sumNs;
    return null;
  }
}

/** A stored histogram decoded (64-bit counts, as encoded), or why it does not decode. */
function decodeStored(encoded: string): { histogram: hdr.Histogram } | { problem: string } {
  try {
    return { histogram: hdr.decodeFromCompressedBase64(encoded, 64, false) };
  } catch (err) {
    return { problem: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Whether adding a decoded histogram to another adds exactly what adding decode()'s copy of it would.
 * The copy is a fresh LatencyHistogram (lowest value 1, 3 digits, auto-resizing) that took the decoded
 * one in, growing to the buckets the decoded one's largest value needs. When the decoded one has the
 * same resolution and exactly those buckets, the copy took its counts index by index and its maximum
 * and minimum as they are, and JsHistogram.add reads nothing else of the one it adds: the two add
 * alike. Otherwise (a histogram encoded with a wider range than its values need, or another
 * resolution) the copy took each count at its bucket's lowest value, maximum included: mergeEncoded
 * then merges the copy, as decode() did, rather than rely on the two adding alike in those cases too.
 */
function addsAsItsCopy(decoded: hdr.Histogram): boolean {
  return (
    decoded instanceof hdr.JsHistogram &&
    decoded.lowestDiscernibleValue === 1 &&
    decoded.numberOfSignificantValueDigits === 3 &&
    decoded.bucketCount === decoded.getBucketsNeededToCoverValue(decoded.maxValue)
  );
}
