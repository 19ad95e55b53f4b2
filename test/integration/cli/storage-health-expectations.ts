// The latency profile's storage-health criteria checked against the figures the same results file
// reports elsewhere, so that a criterion cannot read the wrong percentile or judge against the wrong
// threshold while staying consistent with its own passed_count.
import { expect } from 'vitest';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import type { LatencySummaryNs, RunResults, StorageHealth } from '../../../src-shared/domain/results.ts';

const decoded = (s: LatencySummaryNs | undefined): LatencyHistogram | null => (s ? LatencyHistogram.decode(s.hdr, s.sum_ns) : null);

/**
 * Storage write and read P95 (the device's share when the file has it), the CPU tier's P95 over its
 * reads and writes together, and the hit rate: each criterion's actual is that figure, and it passed
 * exactly when the figure beats its target.
 */
export function expectLatencyProfileHealth(res: RunResults): void {
  const kv = res.kvbench;
  const cs = res.summary!.cache_stats as Record<string, unknown>;
  const health = cs.storage_health as StorageHealth;
  expect(kv.run_options.performanceProfile).toBe('latency');
  const expected: { name: string; actual: number; exact: boolean }[] = [];
  for (const [op, dir, targetMs] of [['Write', 'write', 500], ['Read', 'read', 200]] as const) {
    if (!kv.latency[`tier_${dir}`].storage?.count) continue;
    const device = cs[`storage_${dir}_device_p95_ms`];
    const basis = device === undefined ? 'Total' : 'Device';
    expected.push({ name: `Storage Tier ${op} ${basis} P95 < ${targetMs}ms`, actual: (device ?? cs[`storage_${dir}_p95_ms`]) as number, exact: true });
  }
  // The CPU tier's reads and writes pooled: rebuilt here from the two stored histograms, which keep
  // the values only to HDR's 0.1 %.
  const cpuParts = [decoded(kv.latency.tier_read.cpu), decoded(kv.latency.tier_write.cpu)].filter((h) => h !== null);
  if (cpuParts.length > 0) {
    const pooled = new LatencyHistogram();
    for (const h of cpuParts) pooled.merge(h);
    expected.push({ name: 'CPU RAM P95 < 150ms', actual: pooled.percentileNs(95) / 1e6, exact: false });
  }
  if ((cs.cache_hits as number) + (cs.cache_misses as number) > 0) expected.push({ name: 'Cache Hit Rate > 30%', actual: cs.cache_hit_rate as number, exact: true });

  expect(health.criteria.map((c) => c.name)).toEqual(expected.map((e) => e.name));
  health.criteria.forEach((c, i) => {
    const e = expected[i];
    const actual = c.actual as number;
    if (e.exact) expect(actual, c.name).toBe(e.actual);
    else expect(Math.abs(actual - e.actual), `${c.name}: ${actual} vs ${e.actual}`).toBeLessThanOrEqual(e.actual / 1000);
    expect(c.passed, `${c.name}: ${actual} against ${c.target}`).toBe(c.name.includes(' < ') ? actual < (c.target as number) : actual > (c.target as number));
  });
}
