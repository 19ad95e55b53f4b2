/**
 * Statistics across trials: the aggregates every report states.
 *
 * - Percentiles use linear interpolation between the closest ranks (numpy's default, Hyndman & Fan
 *   type 7): for sorted values x[0..n-1] and p in [0, 100], h = (n − 1)·p/100 and the result is
 *   x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). The median is the 50th percentile. With 3 trials the
 *   P95 lies between the second-largest and the largest value (h = 1.9).
 * - Spread is the coefficient of variation: the sample standard deviation (n − 1) ÷ the mean; null
 *   for fewer than 2 values or a zero mean.
 * - Across trials, latency percentiles are never averaged: a report gives the median and the P95 of
 *   the per-trial values (or reads percentiles from merged HDR histograms), and says which.
 *
 * Pure TypeScript: no Node, no DOM.
 */

export const PERCENTILE_METHOD =
  'linear interpolation between closest ranks (numpy default, type 7) over per-trial values';

/** Only finite numbers take part; NaN, ±Infinity and null are dropped. */
export function finiteValues(values: readonly (number | null | undefined)[]): number[] {
  return values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
}

/** The p-th percentile (0 ≤ p ≤ 100) of `values`; null when there are none. */
export function percentile(values: readonly (number | null | undefined)[], p: number): number | null {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be between 0 and 100, got ${p}`);
  const xs = finiteValues(values).sort((a, b) => a - b);
  if (xs.length === 0) return null;
  if (xs.length === 1) return xs[0];
  const h = ((xs.length - 1) * p) / 100;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, xs.length - 1);
  return xs[lo] + (h - lo) * (xs[hi] - xs[lo]);
}

export function median(values: readonly (number | null | undefined)[]): number | null {
  return percentile(values, 50);
}

export function mean(values: readonly (number | null | undefined)[]): number | null {
  const xs = finiteValues(values);
  if (xs.length === 0) return null;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Sample standard deviation (divides by n − 1); null for fewer than 2 values. */
export function sampleStdDev(values: readonly (number | null | undefined)[]): number | null {
  const xs = finiteValues(values);
  if (xs.length < 2) return null;
  const m = mean(xs)!;
  let ss = 0;
  for (const x of xs) ss += (x - m) ** 2;
  return Math.sqrt(ss / (xs.length - 1));
}

/** Coefficient of variation = sample standard deviation ÷ |mean|; null for < 2 values or mean 0. */
export function coefficientOfVariation(values: readonly (number | null | undefined)[]): number | null {
  const sd = sampleStdDev(values);
  const m = mean(values);
  if (sd === null || m === null || m === 0) return null;
  return sd / Math.abs(m);
}

/** What a report says about one metric over a set of trials. */
export interface Aggregate {
  /** Trials with a value. */
  n: number;
  median: number | null;
  p95: number | null;
  /**
   * The arithmetic mean of the per-trial values; absent where those values are percentiles (a mean
   * of P95s is no percentile of anything), though their CV still measures the spread.
   */
  mean?: number | null;
  min: number | null;
  max: number | null;
  /** Sample standard deviation ÷ mean (a fraction: 0.05 = 5 %). */
  cv: number | null;
}

/** `percentiles`: the values are per-trial percentiles, so no mean is given. */
export function aggregate(values: readonly (number | null | undefined)[], opts: { percentiles?: boolean } = {}): Aggregate {
  const xs = finiteValues(values);
  return {
    n: xs.length,
    median: median(xs),
    p95: percentile(xs, 95),
    ...(opts.percentiles ? {} : { mean: mean(xs) }),
    min: xs.length > 0 ? Math.min(...xs) : null,
    max: xs.length > 0 ? Math.max(...xs) : null,
    cv: coefficientOfVariation(xs),
  };
}

/** a ÷ b, or null when either is missing or b is 0. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (typeof a !== 'number' || typeof b !== 'number' || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return a / b;
}

/**
 * Geometric mean (the fair average of ratios): 0 when a value is 0 (a side that did nothing there),
 * null when there are no values or one is negative (no geometric mean exists).
 */
export function geometricMean(values: readonly (number | null | undefined)[]): number | null {
  const xs = finiteValues(values);
  if (xs.length === 0 || xs.some((x) => x < 0)) return null;
  if (xs.some((x) => x === 0)) return 0;
  let logSum = 0;
  for (const x of xs) logSum += Math.log(x);
  return Math.exp(logSum / xs.length);
}

/**
 * Whether the difference between two medians may be run-to-run noise (the storage report's system
 * comparison and the endpoint comparison judge it alike). Equal medians differ by
 * nothing, so they are a tie within noise whatever the spread or the trial count (CV 0 on both
 * sides is common for counts that do not vary, and must not make "no difference" beyond noise).
 * Otherwise |ln ratio| ≤ √(CV_A² + CV_B²): the gap is no larger than the two sides' combined
 * spread. Unknown (null) without a spread on both sides (one trial or run, or a zero mean), or without a
 * ratio (0 on one side).
 */
export function withinNoise(medianA: number | null, medianB: number | null, cvA: number | null, cvB: number | null): boolean | null {
  const r = ratio(medianA, medianB);
  if (r === null || r <= 0) return null;
  if (medianA === medianB) return true;
  if (cvA === null || cvB === null) return null;
  return Math.abs(Math.log(r)) <= Math.sqrt(cvA ** 2 + cvB ** 2);
}
