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
  #valueAtPercentile(percentile: number): number {
    return Math.min(Math.max(this.#histogram.getValueAtPercentile(percentile), this.#minNs()), this.#histogram.maxValue);
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
    return {
      count: this.#count,
      sumNs: this.#sumNs,
      meanNs: this.#sumNs / this.#count,
      minNs: this.#minNs(),
      maxNs: this.#histogram.maxValue,
      p50Ns: this.#valueAtPercentile(50),
      p95Ns: this.#valueAtPercentile(95),
      p99Ns: this.#valueAtPercentile(99),
      p999Ns: this.#valueAtPercentile(99.9),
      p9999Ns: this.#valueAtPercentile(99.99),
    };
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
    try {
      hdr.decodeFromCompressedBase64(encoded, 64, false);
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  static decode(encoded: string, sumNs: number): LatencyHistogram {
    const out = new LatencyHistogram();
    const decoded = hdr.decodeFromCompressedBase64(encoded, 64, false);
    out.#histogram.add(decoded);
    out.#count = decoded.totalCount;
    out.#sumNs = sumNs;
    return out;
  }
}
