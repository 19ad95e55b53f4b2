// The reference's raw per-request lists (end_to_end_latencies …) of a multi-host run. Each rank keeps
// every completed request up to its cap, then a uniform sample (raw-latency-sample.ts), so ranks that
// completed different numbers of requests keep them at different shares: a rank of 1,000,000 requests
// keeps 5 %, one of 40,000 all of them. Concatenated as they are, the small rank would weigh 20 times
// as much per request in every percentile read from the lists. So each rank's lists are thinned, at
// random, to the smallest share any rank kept, which leaves the merged lists a uniform sample of all
// the ranks' requests, and the merged file says so (`kvbench_merge.raw_latency_lists`).
import { Rng } from '../engine/workload/rng.ts';
import { num, obj } from '../store/results-ingest.ts';

type Obj = Record<string, unknown>;

/** Lists every completed request has one value in, index i the same request in each. */
const PARALLEL_LISTS = ['end_to_end_latencies', 'storage_latencies', 'generation_latencies'] as const;
/** Lists of only the requests that wrote a prefill entry / ran a decode step. */
const PARTIAL_LISTS = ['prefill_latencies', 'decode_latencies'] as const;
export const RAW_LIST_KEYS = [...PARALLEL_LISTS, ...PARTIAL_LISTS] as const;
export type RawListKey = (typeof RAW_LIST_KEYS)[number];

/** What one rank's file says of its lists (its `kvbench.raw_latency_lists`, or read off the lists of an older file, which kept every request). */
export interface RankRawLists {
  requests_completed: number;
  requests_kept: number;
  /** requests_kept ÷ requests_completed (1 when it kept every request). */
  share_kept: number;
  sampled: boolean;
}

/** `kvbench_merge.raw_latency_lists`: how the merged file's top-level lists were made from the ranks'. */
export interface MergedRawListsFacts {
  /** Over every rank. */
  requests_completed: number;
  /** Requests the merged end_to_end, storage and generation lists hold (one value each). */
  requests_kept: number;
  /** The share of each rank's requests the merged lists hold: the smallest any rank's file kept. */
  share_kept: number;
  /** True when the merged lists are a sample, not every request. */
  sampled: boolean;
  /** Ranks whose lists were thinned at random to share_kept (their own file kept more). */
  resampled_ranks: number[];
  /** Each merged list: its values, and whether it is a sample (absent: a rank's file lacks the list, so the merged file has none). */
  lists: Partial<Record<RawListKey, { values: number; sampled: boolean }>>;
  note: string;
}

export interface MergedRawLists {
  /** The merged lists, in rank order; undefined where a rank's file lacks that list. */
  lists: Record<RawListKey, number[] | undefined>;
  /** Null when no rank's file has any list. */
  facts: MergedRawListsFacts | null;
  /** Per rank (in the order given): what its own file kept. */
  ranks: RankRawLists[];
}

const numbers = (v: unknown): number[] | undefined => (Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : undefined);

/** What a rank's file kept: its own facts, or (older files, which kept every request) its lists' length. */
export function rankRawLists(results: Obj): RankRawLists {
  const kept = numbers(results.end_to_end_latencies)?.length ?? 0;
  const facts = obj(obj(results.kvbench).raw_latency_lists);
  const completed = Math.max(kept, num(facts.requests_completed) ?? kept);
  return { requests_completed: completed, requests_kept: kept, share_kept: completed > 0 ? kept / completed : 1, sampled: kept < completed };
}

/** `count` of the indices 0..n−1, drawn uniformly without replacement, in ascending order. */
function uniformIndices(n: number, count: number, rng: Rng): number[] {
  if (count >= n) return Array.from({ length: n }, (_, i) => i);
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(rng.next() * (n - i));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  return pool.slice(0, count).sort((a, b) => a - b);
}

/**
 * The ranks' lists at one share: each rank's thinned to the smallest share any rank kept (a seeded
 * draw per rank, so a merge of the same files gives the same lists), the parallel lists by the same
 * requests, then concatenated in rank order.
 */
export function mergedRawLists(ranks: readonly { rank: number; results: Obj }[]): MergedRawLists {
  const perRank = ranks.map((r) => rankRawLists(r.results));
  const lists = Object.fromEntries(RAW_LIST_KEYS.map((k) => [k, ranks.every((r) => Array.isArray(r.results[k])) ? ([] as number[]) : undefined])) as Record<RawListKey, number[] | undefined>;
  if (RAW_LIST_KEYS.every((k) => lists[k] === undefined)) return { lists, facts: null, ranks: perRank };

  const withRequests = perRank.filter((r) => r.requests_completed > 0);
  const share = withRequests.length > 0 ? Math.min(...withRequests.map((r) => r.share_kept)) : 1;
  const resampled: number[] = [];
  let kept = 0;
  ranks.forEach((r, i) => {
    const own = perRank[i];
    const target = own.share_kept > share ? Math.min(own.requests_kept, Math.round(own.requests_completed * share)) : own.requests_kept;
    if (target < own.requests_kept) resampled.push(r.rank);
    kept += target;
    const thinned = target < own.requests_kept;
    const rng = new Rng(0x6d72, r.rank);
    const requests = thinned ? uniformIndices(own.requests_kept, target, rng) : [];
    for (const key of RAW_LIST_KEYS) {
      const values = numbers(r.results[key]);
      if (!lists[key] || !values) continue;
      if (!thinned) lists[key].push(...values);
      // The parallel lists keep the same requests. A partial list's values are a subset of the
      // rank's kept requests that one cannot tell apart: drawn at the same share among themselves,
      // they stay a uniform sample of that subset.
      else if ((PARALLEL_LISTS as readonly string[]).includes(key) && values.length === own.requests_kept) lists[key].push(...requests.map((j) => values[j]));
      else lists[key].push(...uniformIndices(values.length, Math.round((values.length * target) / own.requests_kept), rng).map((j) => values[j]));
    }
  });
  const completed = perRank.reduce((n, r) => n + r.requests_completed, 0);
  const sampled = kept < completed;
  const listFacts: MergedRawListsFacts['lists'] = {};
  for (const key of RAW_LIST_KEYS) {
    const values = lists[key];
    if (values) listFacts[key] = { values: values.length, sampled };
  }
  const note = !sampled
    ? "the raw per-request lists hold every rank's every completed request"
    : resampled.length === 0
      ? `the raw per-request lists are a uniform sample: every rank kept ${formatShare(share)} of its completed requests`
      : `the raw per-request lists are a uniform sample of ${formatShare(share)} of every rank's completed requests: ` +
        `rank${resampled.length > 1 ? 's' : ''} ${resampled.join(', ')} kept more in ${resampled.length > 1 ? 'their files' : 'its file'} and ${resampled.length > 1 ? 'were' : 'was'} thinned at random to that share, ` +
        'so that no rank weighs more per request in a percentile read from the lists (latency percentiles: the merged histograms, which count every request)';
  return { lists, facts: { requests_completed: completed, requests_kept: kept, share_kept: share, sampled, resampled_ranks: resampled, lists: listFacts, note }, ranks: perRank };
}

function formatShare(share: number): string {
  const pct = share * 100;
  return `${pct >= 10 ? pct.toFixed(1) : pct.toPrecision(2)} %`;
}
