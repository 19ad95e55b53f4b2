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
 * - Whether A and B differ beyond the run-to-run noise is one rule everywhere (NOISE_RULE): Welch's
 *   t-test on the logs of the per-trial values, two-sided, α = 0.05, so two labels on one drive are
 *   called different in 5 % of the comparisons, whatever the trial count or the spread.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';

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

const nnum = z.number().nullable();

/** What a report says about one metric over a set of trials. */
export const AggregateSchema = z.object({
  /** Trials with a value. */
  n: z.number().int().nonnegative(),
  median: nnum,
  p95: nnum,
  /**
   * The arithmetic mean of the per-trial values; absent where those values are percentiles (a mean
   * of P95s is no percentile of anything, style.md), though their CV still measures the spread.
   */
  mean: nnum.optional(),
  min: nnum,
  max: nnum,
  /** Sample standard deviation ÷ mean (a fraction: 0.05 = 5 %). */
  cv: nnum,
  /**
   * For a yes/no metric (1 or 0 per trial: flagAggregate), the trials that said yes: it reads "yes of
   * n", its share is `mean`, and it has no median, P95 or CV (the median of [1, 0, 1] is 1, not the share).
   */
  yes: z.number().int().nonnegative().optional(),
});
export type Aggregate = z.infer<typeof AggregateSchema>;

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

/** A yes/no metric's values (1 or 0 each) over trials: how many said yes of n, and the share (`mean`); no median, P95 or CV. */
export function flagAggregate(values: readonly (number | null | undefined)[]): Aggregate {
  const xs = finiteValues(values);
  const yes = xs.filter((x) => x === 1).length;
  return {
    n: xs.length,
    median: null,
    p95: null,
    mean: xs.length > 0 ? yes / xs.length : null,
    min: xs.length > 0 ? Math.min(...xs) : null,
    max: xs.length > 0 ? Math.max(...xs) : null,
    cv: null,
    yes,
  };
}

/** "2 of 3": a yes/no metric's aggregate in words (flagAggregate), for every reader's table. */
export const flagAggregateText = (a: Aggregate): string => `${a.yes ?? 0} of ${a.n}`;

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

/** The false-positive rate the noise test allows: two identical drives are called different this often. */
export const NOISE_ALPHA = 0.05;

/** The noise rule in words, for beside every verdict it decides. */
export const NOISE_RULE = "Welch's t-test on log values, two-sided, α = 0.05";

/** A p-value as the reports print it: two significant digits, "<0.001" below that; "—" for none. */
export function formatP(p: number | null): string {
  if (p === null) return '—';
  return p < 0.001 ? '<0.001' : p.toPrecision(2);
}

/**
 * Whether a difference is bigger than the run-to-run noise: Welch's t-test on the logarithms of the
 * per-trial values. Logs because the question is a ratio (A is 1.3× B), and the metrics are rates,
 * sizes and latencies, positive and multiplicative; Welch because the two sides' spreads differ.
 */
export interface NoiseTest {
  /** mean(ln A) − mean(ln B): the log of the ratio of the sides' geometric means. */
  logRatio: number;
  /** Standard error of logRatio: √(s²_A/n_A + s²_B/n_B) over the log values. */
  standardError: number;
  /** Welch–Satterthwaite degrees of freedom; null when the standard error is 0 (nothing varies). */
  df: number | null;
  /**
   * Two-sided p-value: how often identical sides would differ at least this much. With no spread
   * at all (standard error 0) it is 1 for no difference and 0 for any (counts that never vary).
   */
  pValue: number;
  /** pValue < NOISE_ALPHA. */
  beyondNoise: boolean;
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9: about 15 significant digits). */
function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let sum = c[0];
  for (let i = 1; i < 9; i++) sum += c[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The continued fraction of I_x(a, b), by the modified Lentz method (Numerical Recipes' betacf). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < 1e-15) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b), 0 ≤ x ≤ 1, a, b > 0. */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (!(x >= 0 && x <= 1) || !(a > 0) || !(b > 0)) throw new RangeError(`incomplete beta needs 0 ≤ x ≤ 1 and a, b > 0, got x ${x}, a ${a}, b ${b}`);
  if (x === 0 || x === 1) return x;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
  // The fraction converges quickly only below the mean a/(a+b); above it, use I_x(a,b) = 1 − I_(1−x)(b,a).
  return x < (a + 1) / (a + b + 2) ? (front * betaContinuedFraction(x, a, b)) / a : 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

/** Two-sided p-value of Student's t with `df` (> 0, not necessarily whole) degrees of freedom: P(|T| ≥ |t|). */
export function studentTTwoSidedP(t: number, df: number): number {
  if (!(df > 0)) throw new RangeError(`degrees of freedom must be positive, got ${df}`);
  if (Number.isNaN(t)) throw new RangeError('t is NaN');
  if (!Number.isFinite(t)) return 0;
  return regularizedIncompleteBeta(df / (df + t * t), df / 2, 0.5);
}

/** One side's share of a difference's variance (s²/n of the log values) and its degrees of freedom (n − 1). */
interface VarianceComponent {
  variance: number;
  dof: number;
}

/**
 * Welch's test of `difference` against the summed variance components: the Welch–Satterthwaite
 * degrees of freedom are (Σ v)² ÷ Σ (v² ÷ dof).
 */
function welch(difference: number, components: readonly VarianceComponent[]): NoiseTest {
  let variance = 0;
  let dfDenominator = 0;
  for (const c of components) {
    variance += c.variance;
    if (c.variance > 0) dfDenominator += (c.variance * c.variance) / c.dof;
  }
  const standardError = Math.sqrt(variance);
  if (standardError === 0) {
    // Nothing varied on either side: equal values are no difference, unequal ones are no noise.
    const pValue = difference === 0 ? 1 : 0;
    return { logRatio: difference, standardError: 0, df: null, pValue, beyondNoise: pValue < NOISE_ALPHA };
  }
  const df = (variance * variance) / dfDenominator;
  const pValue = studentTTwoSidedP(difference / standardError, df);
  return { logRatio: difference, standardError, df, pValue, beyondNoise: pValue < NOISE_ALPHA };
}

/** Mean and sample variance (n − 1) of the logs of positive values; null when there are none or one is ≤ 0. */
function logMoments(values: readonly number[]): { n: number; mean: number; variance: number } | null {
  if (values.length === 0 || values.some((v) => !(v > 0))) return null;
  const logs = values.map(Math.log);
  const m = mean(logs)!;
  const sd = sampleStdDev(logs);
  return { n: logs.length, mean: m, variance: sd === null ? 0 : sd * sd };
}

/**
 * mean(ln A) − mean(ln B) over the finite values: the log of the ratio of the sides' geometric means;
 * null without a value on a side, or with a value ≤ 0 (no logarithm).
 */
export function meanLogRatio(a: readonly (number | null | undefined)[], b: readonly (number | null | undefined)[]): number | null {
  const la = logMoments(finiteValues(a));
  const lb = logMoments(finiteValues(b));
  return la === null || lb === null ? null : la.mean - lb.mean;
}

/**
 * Welch's t-test on ln A against ln B (see NoiseTest), over the per-trial (or per-run) values.
 * Null (unknown: the noise cannot be judged) with fewer than 2 values on a side, or a value ≤ 0
 * (no logarithm) — except when every value on both sides is the same: no difference is never
 * beyond the noise, whatever the trial count (a count that never varies, 0 where neither side has
 * the tier). Non-finite values are dropped first.
 */
export function welchLogTest(a: readonly (number | null | undefined)[], b: readonly (number | null | undefined)[]): NoiseTest | null {
  const xs = finiteValues(a);
  const ys = finiteValues(b);
  if (xs.length === 0 || ys.length === 0) return null;
  if ([...xs, ...ys].every((v) => v === xs[0])) return { logRatio: 0, standardError: 0, df: null, pValue: 1, beyondNoise: false };
  const la = logMoments(xs);
  const lb = logMoments(ys);
  if (la === null || lb === null || la.n < 2 || lb.n < 2) return null;
  return welch(la.mean - lb.mean, [
    { variance: la.variance / la.n, dof: la.n - 1 },
    { variance: lb.variance / lb.n, dof: lb.n - 1 },
  ]);
}

/**
 * One test over several configurations: D = the mean of their log ratios (the log of the geometric
 * mean of their ratios), Var(D) = Σ SE_i² ÷ k², degrees of freedom by Welch–Satterthwaite over all
 * the sides' variance components. Each configuration's (SE_i, df_i) carries those exactly:
 * SE_i⁴ ÷ df_i = Σ v²/(n − 1) over its two sides. Null without a test.
 */
export function combinedLogTest(tests: readonly NoiseTest[]): NoiseTest | null {
  if (tests.length === 0) return null;
  const k = tests.length;
  const components = tests.map((t) => {
    const variance = (t.standardError * t.standardError) / (k * k);
    // One component with the configuration's own Satterthwaite df gives the same v²/dof sum; a
    // configuration with no spread (df null) adds no variance, so its dof is never read.
    return { variance, dof: t.df ?? 1 };
  });
  return welch(mean(tests.map((t) => t.logRatio))!, components);
}
