// pooledLatency as it was up to 0.7.0, kept to compare the present one with (test/unit/export/
// pooled-latency.test.ts: equal numbers; bench/pooled-latency.ts: the time): each stored histogram
// decoded once to check it, again into a copy, and the copy merged.
import { LatencyHistogram } from '../../src-main/engine/metrics/latency-histogram.ts';
import type { PooledLatency as PooledLatencyNow } from '../../src-main/export/scenario-report.ts';

/** A pooled latency as this version gave it: one pool per name, no definition of its own (kvbench 0.8.0 added olderDefinition). */
type PooledLatency = Omit<PooledLatencyNow, 'olderDefinition'>;
import type { TrialHistogram } from '../../src-shared/domain/store-types.ts';

/** pooledLatency up to 0.7.0, as it was: a checking decode, a second decode into a copy, then a merge. */
export function pooledBefore(name: string, histograms: readonly TrialHistogram[]): PooledLatency | null {
  const merged = new LatencyHistogram();
  let trials = 0;
  let damagedTrials = 0;
  for (const h of histograms) {
    if (h.name !== name || h.count <= 0) continue;
    if (LatencyHistogram.decodeProblem(h.hdr) !== null) {
      damagedTrials += 1;
      continue;
    }
    merged.merge(LatencyHistogram.decode(h.hdr, h.sumNs));
    trials += 1;
  }
  if (merged.count === 0) return damagedTrials === 0 ? null : { name, trials, damagedTrials, count: 0, p50Ms: null, p95Ms: null, p99Ms: null };
  const s = merged.summary();
  return { name, trials, damagedTrials, count: s.count, p50Ms: s.p50Ns / 1e6, p95Ms: s.p95Ns / 1e6, p99Ms: s.p99Ns / 1e6 };
}
