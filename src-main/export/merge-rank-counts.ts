// The counters of a multi-host run: each rank's requests, cache lookups and tier operations, summed.
// The ranks keep these only as whole-window totals (their per-second timeline has bytes, tokens and
// requests, nothing else), so the sums cover each rank's whole window, not the common one; the rates
// derived here are ratios of those sums, never means of the ranks' own rates.
import { TIER_NAMES, type TierName } from '../../src-shared/domain/tiers.ts';
import { num, obj } from '../store/results-ingest.ts';

type Obj = Record<string, unknown>;


export interface MergedTierOps {
  read_ops: number | null;
  write_ops: number | null;
  read_bytes: number | null;
  write_bytes: number | null;
}

/** Summed over every rank's whole window; null where a rank does not record the counter. */
export interface MergedCounts {
  requests_issued: number | null;
  requests_completed: number | null;
  requests_failed: number | null;
  tokens_generated: number | null;
  cache_hits: number | null;
  cache_misses: number | null;
  /** Σ hits ÷ Σ (hits + misses); null when no lookup was made or a rank has no cache statistics. */
  cache_hit_rate: number | null;
  multi_turn_hits: number | null;
  multi_turn_misses: number | null;
  multi_turn_hit_rate: number | null;
  /** Each tier's operations and bytes (`kvbench.tier_bytes`: demotions count in both tiers, as in a rank's). */
  tiers: Record<TierName, MergedTierOps>;
}

/** The sum of `pick` over the ranks, or null when any rank lacks it: a sum of some ranks would understate the run. */
export function sumOverRanks(ranks: readonly Obj[], pick: (results: Obj) => unknown): number | null {
  let total = 0;
  for (const r of ranks) {
    const v = num(pick(r));
    if (v === undefined) return null;
    total += v;
  }
  return total;
}

const ratio = (part: number | null, other: number | null): number | null =>
  part === null || other === null || part + other === 0 ? null : part / (part + other);

/** `ranks`: each rank's results JSON. */
export function mergedCounts(ranks: readonly Obj[]): MergedCounts {
  const kv = (r: Obj): Obj => obj(r.kvbench);
  // A rank that completed no request has no summary, so no cache statistics: the sums are unknown then.
  const cacheStats = (r: Obj): Obj => obj(obj(r.summary).cache_stats);
  const cacheHits = sumOverRanks(ranks, (r) => cacheStats(r).cache_hits);
  const cacheMisses = sumOverRanks(ranks, (r) => cacheStats(r).cache_misses);
  const multiTurnHits = sumOverRanks(ranks, (r) => r.multi_turn_cache_hits);
  const multiTurnMisses = sumOverRanks(ranks, (r) => r.multi_turn_cache_misses);
  const tierOps = (tier: TierName): MergedTierOps => {
    const field = (name: keyof MergedTierOps) => sumOverRanks(ranks, (r) => obj(obj(kv(r).tier_bytes)[tier])[name]);
    return { read_ops: field('read_ops'), write_ops: field('write_ops'), read_bytes: field('read_bytes'), write_bytes: field('write_bytes') };
  };
  return {
    requests_issued: sumOverRanks(ranks, (r) => kv(r).requests_issued),
    requests_completed: sumOverRanks(ranks, (r) => r.requests_completed),
    requests_failed: sumOverRanks(ranks, (r) => kv(r).requests_failed),
    tokens_generated: sumOverRanks(ranks, (r) => r.total_tokens_generated),
    cache_hits: cacheHits,
    cache_misses: cacheMisses,
    cache_hit_rate: ratio(cacheHits, cacheMisses),
    multi_turn_hits: multiTurnHits,
    multi_turn_misses: multiTurnMisses,
    multi_turn_hit_rate: ratio(multiTurnHits, multiTurnMisses),
    tiers: Object.fromEntries(TIER_NAMES.map((t) => [t, tierOps(t)])) as Record<TierName, MergedTierOps>,
  };
}

/**
 * "requests failed on rank 1 (3 of 50 issued)": a rank keeps its status when requests fail (a request
 * larger than every tier fails alone, the run goes on), so the merged status alone would hide them.
 */
export function failedRequestsNote(ranks: readonly { rank: number; results: Obj }[]): string | null {
  const failing = ranks
    .map((r) => ({ rank: r.rank, failed: num(obj(r.results.kvbench).requests_failed) ?? 0, issued: num(obj(r.results.kvbench).requests_issued) }))
    .filter((r) => r.failed > 0);
  if (failing.length === 0) return null;
  const each = failing.map((r) => `rank ${r.rank} (${r.failed}${r.issued === undefined ? '' : ` of ${r.issued} issued`})`);
  return `requests failed on ${each.join(', ')}: see those ranks' logs; counts.requests_failed adds them up`;
}
