import * as hdr from 'hdr-histogram-js';
import { storedCounts, type StoredCounts } from './stored-counts.ts';

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
   * Merges a stored histogram (encode()'s text) into this one: the same as
   * `merge(LatencyHistogram.decode(encoded, sumNs))` to the last count and bound. Returns why `encoded`
   * does not decode (then nothing is merged), or null. Pooling thousands of trials' histograms spent
   * most of its time in the library's decode, which makes a ~20,000-slot counts array of each for a
   * few hundred counts: the counts present are read on their own (storedCounts) and added as the
   * library's add would add the decoded histogram. Whatever that reader is not sure of (damage,
   * another layout) goes through the library: mergeEncodedByLibrary.
   */
  mergeEncoded(encoded: string, sumNs: number): string | null {
    const stored = storedCounts(encoded, this.#histogram as hdr.JsHistogram);
    if (stored === null) return this.mergeEncodedByLibrary(encoded, sumNs);
    const decoded = decodedBounds(stored, this.#histogram as hdr.JsHistogram);
    if (decoded.addsAsItsCopy) addDecoded(this.#histogram as hdr.JsHistogram, stored, decoded);
    else {
      // decode()'s copy, made as decode() made it, then merged (see addsAsItsCopy).
      const copy = new LatencyHistogram();
      addDecoded(copy.#histogram as hdr.JsHistogram, stored, decoded);
      this.#histogram.add(copy.#histogram);
    }
    this.#count += decoded.totalCount;
    this.#sumNs += sumNs;
    return null;
  }

  /** mergeEncoded through the library's decode (a full counts array): the reader of last resort. */
  mergeEncodedByLibrary(encoded: string, sumNs: number): string | null {
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

/** What of a decoded histogram JsHistogram.add reads beside its counts, and whether decode() copied it. */
interface DecodedBounds {
  maxValue: number;
  minNonZeroValue: number;
  totalCount: number;
  addsAsItsCopy: boolean;
}

/**
 * The bounds the library's decode gives the histogram of `stored` (establishInternalTackingValues): the
 * top of its highest count's bucket, the bottom of its lowest count's other than slot 0, the sum of its
 * counts; and addsAsItsCopy of it. `layout` is a histogram of the same layout (its methods answer alike).
 */
function decodedBounds(stored: StoredCounts, layout: hdr.JsHistogram): DecodedBounds {
  const { n, indices, counts, bucketCount } = stored;
  const maxValue = n === 0 ? 0 : layout.highestEquivalentValue(layout.valueFromIndex(indices[n - 1]!));
  const minAt = n === 0 ? -1 : indices[0] !== 0 ? 0 : n > 1 ? 1 : -1;
  let totalCount = 0;
  for (let i = 0; i < n; i++) totalCount += counts[i]!;
  return {
    maxValue,
    minNonZeroValue: minAt < 0 ? Number.MAX_VALUE : layout.valueFromIndex(indices[minAt]!),
    totalCount,
    addsAsItsCopy: bucketCount === layout.getBucketsNeededToCoverValue(maxValue),
  };
}

/** JsHistogram.add(decoded) into `into` (of kvbench's layout), step by step, over the counts present only. */
function addDecoded(into: hdr.JsHistogram, stored: StoredCounts, decoded: DecodedBounds): void {
  const { n, indices, counts, bucketCount } = stored;
  const { maxValue } = decoded;
  const internals = into as unknown as JsHistogramInternals;
  if (into.highestEquivalentValue(into.valueFromIndex(into.countsArrayLength - 1)) < maxValue) into.resize(maxValue);
  if (into.bucketCount === bucketCount) {
    let observed = 0;
    for (let i = 0; i < n; i++) {
      into.addToCountAtIndex(indices[i]!, counts[i]!);
      observed += counts[i]!;
    }
    into.setTotalCount(into.totalCount + observed);
    internals.updatedMaxValue(Math.max(into.maxValue, maxValue));
    internals.updateMinNonZeroValue(Math.min(into.minNonZeroValue, decoded.minNonZeroValue));
    return;
  }
  // Arrays of other lengths: each count goes in at its bucket's lowest value, the highest first (the
  // library's order, which sets the merge's maximum), then those below it.
  const maxIndex = into.countsArrayIndex(maxValue);
  let atMax = 0;
  for (let i = n - 1; i >= 0 && indices[i]! >= maxIndex; i--) if (indices[i] === maxIndex) atMax = counts[i]!;
  internals.recordCountAtValue(atMax, into.valueFromIndex(maxIndex));
  for (let i = 0; i < n && indices[i]! < maxIndex; i++) internals.recordCountAtValue(counts[i]!, into.valueFromIndex(indices[i]!));
}

/** What JsHistogram.add uses of the histogram it adds into that its typings keep private. */
interface JsHistogramInternals {
  updatedMaxValue(value: number): void;
  updateMinNonZeroValue(value: number): void;
  recordCountAtValue(count: number, value: number): void;
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
