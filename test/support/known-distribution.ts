// A latency distribution whose exact percentiles are known, for checking what is read from HDR histograms.
import { expect } from 'vitest';
import { percentile } from '../../src-shared/domain/statistics.ts';

/**
 * `count` exponentially distributed values in ns (mean 1 ms), placed at their quantiles so every run
 * records the same ones. The tail is spread out (P99 4.6 ms, P99.9 6.9 ms, P99.99 9.2 ms), so a
 * percentile read at the wrong rank lands far outside HDR's precision.
 */
export function exponentialNs(count = 100_000): number[] {
  return Array.from({ length: count }, (_, i) => Math.round(1e6 * -Math.log(1 - (i + 0.5) / count)));
}

/**
 * Reported percentiles (by percent: `{ 99: p99 }`) against numpy's (type 7) over the raw values, to
 * HDR's 3 significant digits (0.1 %). With this many values the two closest ranks type 7 interpolates
 * between are far closer together than that.
 */
export function expectPercentilesOf(values: readonly number[], reported: Record<number, number>): void {
  for (const [p, got] of Object.entries(reported)) {
    const exact = percentile(values, Number(p))!;
    expect(Math.abs(got - exact), `P${p}: ${got} vs ${exact}`).toBeLessThanOrEqual(exact / 1000);
  }
}
