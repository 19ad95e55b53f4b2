// pooledLatencies as it was before stored histograms were read without the library's decode (kvbench
// 0.7.0 after the scale review): each histogram decoded once by the library into a full counts
// array, then added to its name's merge. Kept to compare the present one with (test/unit/export/
// pooled-latency.test.ts: equal numbers; bench/pooled-latency.ts: the time).
import { LatencyHistogram } from '../../src-main/engine/metrics/latency-histogram.ts';
import type { PooledLatency as PooledLatencyNow } from '../../src-main/export/scenario-report.ts';

/** A pooled latency as this version gave it: one pool per name, no definition of its own (kvbench 0.8.0 added olderDefinition). */
type PooledLatency = Omit<PooledLatencyNow, 'olderDefinition'>;
import type { TrialHistogram } from '../../src-shared/domain/store-types.ts';

export function pooledByLibrary(names: readonly string[], histograms: readonly TrialHistogram[]): PooledLatency[] {
  const pools = new Map(names.map((name) => [name, { merged: new LatencyHistogram(), trials: 0, damagedTrials: 0 }]));
  for (const h of histograms) {
    const pool = pools.get(h.name);
    if (pool === undefined || h.count <= 0) continue;
    if (pool.merged.mergeEncodedByLibrary(h.hdr, h.sumNs) !== null) {
      pool.damagedTrials += 1;
      continue;
    }
    pool.trials += 1;
  }
  return [...pools].flatMap(([name, { merged, trials, damagedTrials }]): PooledLatency[] => {
    if (merged.count === 0) return damagedTrials === 0 ? [] : [{ name, trials, damagedTrials, count: 0, p50Ms: null, p95Ms: null, p99Ms: null }];
    const [p50Ns, p95Ns, p99Ns] = merged.percentilesNs([50, 95, 99]);
    return [{ name, trials, damagedTrials, count: merged.count, p50Ms: p50Ns / 1e6, p95Ms: p95Ns / 1e6, p99Ms: p99Ns / 1e6 }];
  });
}
