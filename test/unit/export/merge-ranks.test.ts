// Merging the ranks of a multi-host run: throughput summed over the window all ranks measured in,
// latency from the merged histograms, and every way the files can fail to be one run refused.
import { describe, expect, it } from 'vitest';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { latencySummaryNs } from '../../../src-main/engine/report/results-builder.ts';
import { MergeError, mergeRanks, type RankResultsFile } from '../../../src-main/export/merge-ranks.ts';
import { mergedResultsFile } from '../../../src-main/export/merged-results-file.ts';
import { measuringVersion, ResultsFileSchema, ResultsValuesSchema } from '../../../src-main/store/results-ingest.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { expectPercentilesOf, exponentialNs } from '../../support/known-distribution.ts';

const S = 1e9;
const T0 = Date.parse('2026-11-24T10:00:00Z') * 1e6;

interface RankSpec {
  rank: number;
  worldSize?: number | null;
  /** Window start, ns after T0. */
  offsetNs?: number;
  seconds?: number;
  /** Storage bytes read per second, constant. */
  readBps?: number;
  readLatenciesMs?: number[];
  options?: Record<string, unknown>;
  status?: string;
  /** The kvbench that measured the rank (`kvbench.version`); 0.2.0 unless given. */
  version?: string;
}

function histogram(valuesMs: number[]) {
  const h = new LatencyHistogram();
  for (const v of valuesMs) h.record(v * 1e6);
  return latencySummaryNs(h);
}

function rankFile(r: RankSpec): RankResultsFile {
  const seconds = r.seconds ?? 10;
  const readBps = r.readBps ?? 1e9;
  const timeline = Array.from({ length: seconds }, (_, i) => ({
    elapsed_ns: (i + 1) * S,
    interval_ns: S,
    storage_read_bytes_per_sec: readBps,
    storage_write_bytes_per_sec: readBps / 4,
    cpu_read_bytes_per_sec: 0,
    cpu_write_bytes_per_sec: 0,
    generated_tokens_per_sec: 100,
    requests_per_sec: 2,
  }));
  return {
    file: `r.rank${r.rank}.json`,
    results: {
      kvbench: {
        version: r.version ?? '0.2.0',
        status: r.status ?? 'complete',
        effective_seed: 42 + r.rank,
        elapsed_ns: seconds * S,
        rank: { rank: r.rank, world_size: r.worldSize === undefined ? 2 : r.worldSize, host: `host${r.rank}` },
        measured_window: { started_unix_ns: T0 + (r.offsetNs ?? 0) },
        timeline,
        run_options: { model: 'tiny-1b', numUsers: 8, duration: 10, seed: 42 + r.rank, cacheDir: `/shared/rank-${r.rank}`, ...r.options },
        // As the engine writes it: every per-request distribution (count 0 here), a tier's only where it did such operations.
        latency: {
          ...Object.fromEntries(['end_to_end', 'queue_wait', 'storage_io_per_request', 'generation', 'prefill', 'decode'].map((k) => [k, histogram([])])),
          tier_read: { storage: histogram(r.readLatenciesMs ?? [10, 20, 30]) },
          tier_write: {},
          tier_read_ns_per_mib: {},
          tier_write_ns_per_mib: {},
          demotion: {},
        },
      },
    },
  };
}

function refusal(files: RankResultsFile[]): string[] {
  try {
    mergeRanks(files);
  } catch (err) {
    if (err instanceof MergeError) return err.problems;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('mergeRanks', () => {
  it('sums bytes over the common window only, pro-rating the edge seconds', () => {
    // Rank 1 opened its window 2.5 s after rank 0: they overlap for 7.5 s.
    const m = mergeRanks([rankFile({ rank: 0, readBps: 1e9 }), rankFile({ rank: 1, offsetNs: 2.5 * S, readBps: 3e9 })]);
    expect(m.common_window).toEqual({ started_unix_ns: T0 + 2.5 * S, ended_unix_ns: T0 + 10 * S, duration_ns: 7.5 * S });
    expect(m.totals.storage_read_bytes).toBeCloseTo(7.5 * 1e9 + 7.5 * 3e9, -3);
    expect(m.rates_per_sec.storage_read_bytes).toBeCloseTo(4e9, -3);
    expect(m.rates_per_sec.storage_write_bytes).toBeCloseTo(1e9, -3);
    expect(m.rates_per_sec.generated_tokens).toBeCloseTo(200, 6);
    expect(m.rates_per_sec.requests_completed).toBeCloseTo(4, 6);
    expect(m.ranks.map((r) => [r.rank, r.host, r.seed, r.share_in_common_window])).toEqual([
      [0, 'host0', 42, 0.75],
      [1, 'host1', 43, 0.75],
    ]);
    expect(m.status).toBe('complete');
    expect(m.notes).toContain(
      "the common window is 7.5 s of the longest rank window's 10.0 s (rank 1 started 2.5 s after the first): the rates describe only that span; start the ranks together with --start-at",
    );
    expect(m.ranks.map((r) => [r.late_ns, r.start_at_late_ns, r.short_ns])).toEqual([
      [0, null, 0],
      [2.5 * S, null, 0],
    ]);
  });

  it('says so when one rank stopped early: the common window is then that rank\'s', () => {
    const m = mergeRanks([rankFile({ rank: 0, seconds: 10 }), rankFile({ rank: 1, seconds: 1, status: 'partial' })]);
    expect(m.common_window.duration_ns).toBe(1 * S);
    expect(m.notes).toContain(
      "the common window is 1.0 s of the longest rank window's 10.0 s (rank 1 measured 9.0 s less than the longest): the rates describe only that span; see in its log why the short rank stopped early",
    );
    expect(m.ranks[1].short_ns).toBe(9 * S);
  });

  it('names the ranks that opened their window late against --start-at, though each ran its full duration', () => {
    // As in a real run: ranks 0 and 1 were ready 0.6 s after --start-at, rank 2 in time; each measured 5 s.
    const startAt = T0 / 1e9;
    const ranks = [0.6, 0.6, 0].map((lateS, rank) => rankFile({ rank, worldSize: 3, seconds: 5, offsetNs: lateS * S, options: { startAt } }));
    const m = mergeRanks(ranks);
    expect(m.notes).toContain(
      "the common window is 4.4 s of the longest rank window's 5.0 s (rank 0 started 0.6 s after the first, 0.6 s after --start-at; " +
        'rank 1 started 0.6 s after the first, 0.6 s after --start-at): the rates describe only that span; leave the ranks more time to get ready before --start-at',
    );
    expect(m.ranks.map((r) => [r.late_ns, r.start_at_late_ns, r.short_ns])).toEqual([
      [0.6 * S, 0.6 * S, 0],
      [0.6 * S, 0.6 * S, 0],
      [0, 0, 0],
    ]);
  });

  it('pools latency from the merged histograms and reports the worst rank P95 apart', () => {
    const fast = Array.from({ length: 95 }, () => 1);
    const m = mergeRanks([rankFile({ rank: 0, readLatenciesMs: fast }), rankFile({ rank: 1, readLatenciesMs: [100, 100, 100, 100, 100] })]);
    const l = m.latency['tier_read.storage'];
    expect(l.count).toBe(100);
    // Pooled: 95 of 100 samples are 1 ms, so P95 is 1 ms; averaging the two ranks' P95s would say ~50 ms.
    expect(l.p95_ns / 1e6).toBeCloseTo(1, 1);
    expect(l.max_rank_p95_ns / 1e6).toBeCloseTo(100, 0);
  });

  it('keeps merged percentiles within the values recorded, and takes the worst rank P95 from the ranks\' own', () => {
    // 3,349,943,456 ns sits inside an HDR bucket whose upper edge is higher: read back from the
    // encoded histogram, it would give a P99 (and a rank P95) above anything recorded.
    const slowMs = 3349.943456;
    const ranks = [rankFile({ rank: 0, readLatenciesMs: [10, 20, 30] }), rankFile({ rank: 1, readLatenciesMs: [slowMs] })];
    const reportedP95 = (ranks[1].results as { kvbench: { latency: { tier_read: { storage: { p95_ns: number; max_ns: number } } } } }).kvbench.latency.tier_read.storage;
    expect(reportedP95.max_ns).toBe(3_349_943_456);
    const l = mergeRanks(ranks).latency['tier_read.storage'];
    expect(l.p99_ns).toBe(3_349_943_456);
    expect(l.max_rank_p95_ns).toBe(reportedP95.p95_ns);
  });

  it('gives the pooled values\' own P50, P95 and P99 (to HDR precision), not one rank\'s', () => {
    const valuesNs = exponentialNs(20_000);
    const ms = valuesNs.map((v) => v / 1e6);
    // Each rank holds every other quantile: the pool is the whole distribution, neither rank alone is.
    const l = mergeRanks([
      rankFile({ rank: 0, readLatenciesMs: ms.filter((_, i) => i % 2 === 0) }),
      rankFile({ rank: 1, readLatenciesMs: ms.filter((_, i) => i % 2 === 1) }),
    ]).latency['tier_read.storage'];
    expect(l.count).toBe(valuesNs.length);
    expectPercentilesOf(valuesNs, { 50: l.p50_ns, 95: l.p95_ns, 99: l.p99_ns });
  });

  it('keeps each rank\'s sum: the merged mean is Σsum ÷ Σcount, in kvbench_merge and in the reference keys', () => {
    const r0 = rankFile({ rank: 0, readLatenciesMs: [1, 2, 3] });
    const r1 = rankFile({ rank: 1, readLatenciesMs: [10, 20] });
    for (const [f, e2eMs] of [[r0, [100, 200, 300]], [r1, [1000]]] as const) {
      const r = f.results as { requests_completed: number; kvbench: { latency: Record<string, unknown> } };
      r.requests_completed = e2eMs.length;
      r.kvbench.latency.end_to_end = histogram([...e2eMs]);
    }
    const m = mergeRanks([r0, r1]);
    const read = (m.histograms.tier_read as Record<string, { count: number; sum_ns: number; mean_ns: number }>).storage;
    expect(read.count).toBe(5);
    expect(read.sum_ns).toBeCloseTo(36e6, 0);
    expect(read.mean_ns).toBeCloseTo(36e6 / 5, 0);
    const e2e = m.histograms.end_to_end as { sum_ns: number; mean_ns: number };
    expect(e2e.mean_ns).toBeCloseTo(1600e6 / 4, 0);
    const summary = mergedResultsFile(m).summary as { end_to_end_latency_ms: { mean: number } };
    expect(summary.end_to_end_latency_ms.mean).toBeCloseTo(400, 9);
  });

  it('refuses files that are not one whole run', () => {
    expect(refusal([rankFile({ rank: 0 }), rankFile({ rank: 0 })])).toEqual(['rank 0 appears twice: r.rank0.json and r.rank0.json', 'rank(s) 1 of 2 missing: a merge of some ranks would understate what the storage served all of them']);
    expect(refusal([rankFile({ rank: 0, worldSize: 3 }), rankFile({ rank: 1, worldSize: 3 })])).toEqual([
      'rank(s) 2 of 3 missing: a merge of some ranks would understate what the storage served all of them',
    ]);
    expect(refusal([rankFile({ rank: 0 }), rankFile({ rank: 1, options: { numUsers: 16 } })])[0]).toMatch(/^the ranks ran different configurations \(rank 0 vs rank 1\)/);
    expect(refusal([rankFile({ rank: 0 }), rankFile({ rank: 1, offsetNs: 11 * S })])).toEqual([
      "the ranks measured at different times (no moment when all of them were measuring): start them together with --start-at, and check that the hosts' clocks agree (NTP, chrony): the windows are placed by each host's wall clock",
    ]);
    const noRank = rankFile({ rank: 0 });
    (noRank.results as { kvbench: { rank: unknown } }).kvbench.rank = null;
    expect(refusal([noRank])[0]).toMatch(/is not one rank of a multi-host run \(no kvbench\.rank\)/);
    expect(refusal([{ file: 'ref.json', results: { summary: {} } }])[0]).toMatch(/^ref\.json is not a kvbench results file/);
  });

  it('refuses a rank whose histogram does not decode, naming the file and the histogram', () => {
    // review rev7 #6: the decoder's exception escaped merge as a stack trace.
    const damaged = rankFile({ rank: 1 });
    (damaged.results as { kvbench: { latency: { tier_read: { storage: { hdr: string } } } } }).kvbench.latency.tier_read.storage.hdr = 'abc';
    expect(refusal([rankFile({ rank: 0 }), damaged])).toEqual([
      "r.rank1.json: the tier_read.storage latency histogram (kvbench.latency.tier_read.storage.hdr) cannot be decoded (Invalid string. Length must be a multiple of 4): the file is damaged; copy it from the rank's host again, or run the rank again",
    ]);
  });

  it('refuses a rank whose histograms are missing, naming the rank, the file and each histogram (review rev13 #3)', () => {
    // kvbench.latency replaced: the merge pooled rank 0's latencies alone under "the ranks' histograms merged".
    const replaced = rankFile({ rank: 1 });
    (replaced.results as { kvbench: Record<string, unknown> }).kvbench.latency = { x: 1 };
    const tail = ": every kvbench run writes these (a count of 0 where it measured none), so the file is damaged; copy it from the rank's host again, or run the rank again";
    expect(refusal([rankFile({ rank: 0 }), replaced])).toEqual([
      'rank 1 (r.rank1.json): kvbench.latency.end_to_end is missing; kvbench.latency.queue_wait is missing; kvbench.latency.storage_io_per_request is missing; ' +
        'kvbench.latency.generation is missing; and 7 more' +
        tail,
    ]);
    const gone = rankFile({ rank: 0 });
    (gone.results as { kvbench: Record<string, unknown> }).kvbench.latency = null;
    const noHdr = rankFile({ rank: 1 });
    delete (noHdr.results as { kvbench: { latency: { tier_read: { storage: { hdr?: string } } } } }).kvbench.latency.tier_read.storage.hdr;
    expect(refusal([gone, noHdr])).toEqual([
      `rank 0 (r.rank0.json): kvbench.latency is null, not the run's latency histograms${tail}`,
      `rank 1 (r.rank1.json): kvbench.latency.tier_read.storage has 3 samples but no histogram (hdr)${tail}`,
    ]);
  });

  it('merges a rank that did no operation of a kind (no reads from a tier): its distribution is absent, not damaged', () => {
    const noReads = rankFile({ rank: 1 });
    (noReads.results as { kvbench: { latency: { tier_read: Record<string, unknown> } } }).kvbench.latency.tier_read = {};
    const m = mergeRanks([rankFile({ rank: 0 }), noReads]);
    expect(m.latency['tier_read.storage'].count).toBe(3);
  });

  it('refuses a rank number or world size no launcher gives: negative, fractional, zero (review rev13 #3)', () => {
    const withRank = (rank: unknown, worldSize: unknown = 2) => {
      const f = rankFile({ rank: 1 });
      (f.results as { kvbench: { rank: Record<string, unknown> } }).kvbench.rank = { rank, world_size: worldSize, host: 'h' };
      return f;
    };
    expect(refusal([rankFile({ rank: 0 }), withRank(-1)])).toEqual(['r.rank1.json: kvbench.rank.rank is -1, not a rank (a whole number from 0): the file is damaged or edited']);
    expect(refusal([rankFile({ rank: 0 }), withRank(0.5)])).toEqual(['r.rank1.json: kvbench.rank.rank is 0.5, not a rank (a whole number from 0): the file is damaged or edited']);
    expect(refusal([rankFile({ rank: 0 }), withRank(1, 0)])).toEqual(['r.rank1.json: kvbench.rank.world_size is 0, not a world size (a whole number from 1): the file is damaged or edited']);
    expect(refusal([rankFile({ rank: 0 }), withRank(1e308)])).toContain('rank(s) 1e+308 outside a world of 2');
  });

  it('refuses a window start no clock shows (a damaged file), naming the file, instead of an internal "Invalid time value"', () => {
    // review rev13 #5: 1e22 ns (past the year 275760) merged, saved, then failed printing the window's start.
    for (const startNs of [1e22, -5]) {
      const files = [rankFile({ rank: 0 }), rankFile({ rank: 1 })];
      for (const f of files) (f.results as { kvbench: { measured_window: { started_unix_ns: number } } }).kvbench.measured_window.started_unix_ns = startNs;
      expect(refusal(files)).toEqual([
        `r.rank0.json: its window start (kvbench.measured_window.started_unix_ns ${startNs}) is not a time since 1970 any clock shows: the file is damaged; copy it from the rank's host again, or run the rank again`,
        `r.rank1.json: its window start (kvbench.measured_window.started_unix_ns ${startNs}) is not a time since 1970 any clock shows: the file is damaged; copy it from the rank's host again, or run the rank again`,
      ]);
    }
  });

  it('refuses ranks of different launches or storage setups, which the configuration key leaves out', () => {
    const startAt = T0 / 1e9;
    const job = (rank: number, options: Record<string, unknown> = {}) => rankFile({ rank, worldSize: 3, options: { startAt, ...options } });
    // Another job's rank 2 against the same storage, overlapping in time.
    expect(refusal([job(0), job(1), job(2, { startAt: startAt + 3600 })])).toEqual([
      `the ranks waited for different --start-at times (rank 0, rank 1 (${startAt}) vs rank 2 (${startAt + 3600})): ranks of different launches are not one run`,
    ]);
    expect(refusal([job(0), job(1), job(2, { storageCapacityGb: 500, cacheDir: '/local/nvme/rank-2' })])).toEqual([
      'the ranks had different --storage-capacity-gb (rank 0, rank 1 (a share of the free space) vs rank 2 (500)): give every rank the same flags',
      "the ranks' cache directories are not rank-N subdirectories of one --cache-dir (rank 0, rank 1 (/shared) vs rank 2 (/local/nvme)): the ranks of one run share it",
    ]);
    expect(refusal([job(0), job(1, { cacheDir: '/shared/rank-7' }), job(2)])[0]).toMatch(/\(rank 0, rank 2 \(\/shared\) vs rank 1 \(\/shared\/rank-7\)\)/);
    expect(mergeRanks([job(0, { storageCapacityGb: 10 }), job(1, { storageCapacityGb: 10 }), job(2, { storageCapacityGb: 10 })]).status).toBe('complete');
  });

  it('refuses ranks that recorded no world size unless --world-size says how many there were', () => {
    // Pods 0 and 1 of a 3-pod Job, pod 2 lost: the files alone look like a whole world of 2.
    const pods = [rankFile({ rank: 0, worldSize: null }), rankFile({ rank: 1, worldSize: null })];
    expect(refusal(pods)).toEqual([
      'no file records the world size (the ranks ran without --world-size): give kvbench merge --world-size N, so that a rank missing from the world is noticed instead of merged away',
    ]);
    expect(() => mergeRanks(pods, { worldSize: 3 })).toThrow(/rank\(s\) 2 of 3 missing/);
    expect(mergeRanks(pods, { worldSize: 2 })).toMatchObject({ status: 'complete', world_size: 2 });
    // The flag may not contradict what the files record, nor leave a rank outside the world.
    const recorded = [rankFile({ rank: 0 }), rankFile({ rank: 1 })];
    expect(() => mergeRanks(recorded, { worldSize: 3 })).toThrow(/--world-size 3 disagrees with the world size the files record \(2\)/);
    expect(() => mergeRanks(pods, { worldSize: 1 })).toThrow(/rank\(s\) 1 outside a world of 1/);
  });

  it("is measured by the ranks' kvbench, not the merging one: each rank's version recorded, the merger's apart, the older definitions named", () => {
    // review rev13 #5: 0.4.0's ranks merged by 0.7.0 were stamped (and imported) as measured by 0.7.0.
    const m = mergeRanks([rankFile({ rank: 0, version: '0.4.0' }), rankFile({ rank: 1, version: '0.4.0' })]);
    expect(m.version).toBe('0.4.0');
    expect(m.merged_by_version).toBe(KVBENCH_VERSION);
    expect(m.ranks.map((r) => [r.rank, r.version])).toEqual([[0, '0.4.0'], [1, '0.4.0']]);
    // What an import stores as the trial's measuring version.
    expect(measuringVersion(mergedResultsFile(m))).toBe('0.4.0');
    const definitions = m.notes.find((n) => n.startsWith('the ranks were measured by kvbench 0.4.0'));
    expect(definitions).toMatch(/storage_write_p95_ms_per_mib \(changed in 0\.7\.0\)/);
    expect(definitions).toMatch(/autoscale_final_users \(changed in 0\.6\.0\)/);
    expect(definitions).not.toMatch(/decode_bytes_read|endpoint\./);
    // Ranks of this kvbench: nothing to say about definitions.
    const current = mergeRanks([rankFile({ rank: 0, version: KVBENCH_VERSION }), rankFile({ rank: 1, version: KVBENCH_VERSION })]);
    expect(current).toMatchObject({ version: KVBENCH_VERSION, merged_by_version: KVBENCH_VERSION });
    expect(current.notes.filter((n) => n.startsWith('the ranks were measured by'))).toEqual([]);
  });

  it('refuses ranks measured by different kvbench versions: one merged number would mix two engines', () => {
    expect(refusal([rankFile({ rank: 0, version: '0.6.0' }), rankFile({ rank: 1, version: '0.7.0' })])).toEqual([
      'the ranks were measured by different kvbench versions (rank 0 (0.6.0) vs rank 1 (0.7.0)): one merged number would mix their engines and metric definitions; run every rank with the same kvbench',
    ]);
  });

  it('merges ranks that ran with different seeds and cache directories, and says when one did not complete', () => {
    const m = mergeRanks([rankFile({ rank: 0 }), rankFile({ rank: 1, status: 'partial' })]);
    expect(m.status).toBe('partial');
    expect(m.notes).toContain('not every rank completed: rank 1 partial');
  });
});

describe('mergeRanks counters', () => {
  /** A rank's whole-window counters, as a kvbench results file records them. */
  function withCounters(f: RankResultsFile, c: { issued: number; completed: number; failed: number; hits: number; misses: number; mtHits: number; mtMisses: number; reads: number; writes: number; queueMs: number[] }): RankResultsFile {
    const r = f.results as Record<string, unknown> & { kvbench: Record<string, unknown> & { latency: Record<string, unknown> } };
    Object.assign(r, {
      requests_completed: c.completed,
      total_tokens_generated: c.completed * 100,
      multi_turn_cache_hits: c.mtHits,
      multi_turn_cache_misses: c.mtMisses,
      summary: { cache_stats: { cache_hits: c.hits, cache_misses: c.misses, cache_hit_rate: c.hits / (c.hits + c.misses) } },
    });
    Object.assign(r.kvbench, {
      requests_issued: c.issued,
      requests_failed: c.failed,
      tier_bytes: { storage: { read_ops: c.reads, write_ops: c.writes, read_bytes: c.reads * 1024, write_bytes: c.writes * 1024 } },
    });
    r.kvbench.latency.queue_wait = histogram(c.queueMs);
    return f;
  }

  it('sums requests, cache lookups and operations over the ranks, and takes hit rates from the sums, never a mean of rates', () => {
    // The review's 3-rank run: 29/2, 23/1 and 10/1 hits/misses. Mean of the rates 0.934; of the sums 62/66 = 0.939.
    const m = mergeRanks([
      withCounters(rankFile({ rank: 0, worldSize: 3 }), { issued: 14, completed: 4, failed: 0, hits: 29, misses: 2, mtHits: 6, mtMisses: 0, reads: 29, writes: 8, queueMs: [1, 2] }),
      withCounters(rankFile({ rank: 1, worldSize: 3 }), { issued: 17, completed: 4, failed: 3, hits: 23, misses: 1, mtHits: 5, mtMisses: 1, reads: 23, writes: 6, queueMs: [3] }),
      withCounters(rankFile({ rank: 2, worldSize: 3 }), { issued: 16, completed: 2, failed: 0, hits: 10, misses: 1, mtHits: 2, mtMisses: 0, reads: 10, writes: 4, queueMs: [500] }),
    ]);
    expect(m.counts).toMatchObject({
      requests_issued: 47,
      requests_completed: 10,
      requests_failed: 3,
      tokens_generated: 1000,
      cache_hits: 62,
      cache_misses: 4,
      multi_turn_hits: 13,
      multi_turn_misses: 1,
      tiers: { storage: { read_ops: 62, write_ops: 18, read_bytes: 62 * 1024, write_bytes: 18 * 1024 } },
    });
    expect(m.counts.cache_hit_rate).toBeCloseTo(62 / 66, 12);
    expect(m.counts.multi_turn_hit_rate).toBeCloseTo(13 / 14, 12);
    // A rank that completed with failed requests keeps its status; the notes name it.
    expect(m.status).toBe('complete');
    expect(m.notes).toContain('requests failed on rank 1 (3 of 17 issued): see those ranks\' logs; counts.requests_failed adds them up');
    expect(m.notes.join(' ')).toMatch(/counts \(requests, cache hits and misses, tier operations\): summed over each rank's whole window/);
    // Queue wait is pooled from the ranks' histograms like the other latencies.
    expect(m.latency.queue_wait.count).toBe(4);
    expect(m.latency.queue_wait.max_rank_p95_ns / 1e6).toBeCloseTo(500, 0);
  });

  it('thins every rank\'s raw per-request lists to the smallest share any rank kept, and says so per list and per rank (rev18 L5)', () => {
    // Rank 0 completed 1,000 requests and its file kept a 5 % sample (50); rank 1 completed 40 and kept
    // them all. Concatenated as they were, each of rank 1's requests would weigh 20 times rank 0's.
    const r0 = rankFile({ rank: 0 });
    const r1 = rankFile({ rank: 1 });
    const lists = (f: RankResultsFile, kept: number, completed: number, e2eS: number) => {
      const r = f.results as Record<string, unknown>;
      r.end_to_end_latencies = Array.from({ length: kept }, (_, i) => e2eS + i * 1e-6);
      r.storage_latencies = Array.from({ length: kept }, (_, i) => e2eS / 10 + i * 1e-6);
      r.generation_latencies = Array.from({ length: kept }, () => 0);
      r.prefill_latencies = Array.from({ length: kept / 2 }, () => e2eS / 10);
      r.decode_latencies = [];
      (r.kvbench as Record<string, unknown>).raw_latency_lists = { cap_requests: 50, requests_completed: completed, requests_kept: kept, sampled: kept < completed };
    };
    lists(r0, 50, 1000, 1);
    lists(r1, 40, 40, 2);
    const m = mergeRanks([r0, r1]);
    expect(m.ranks.map((r) => r.raw_latency_lists)).toEqual([
      { requests_completed: 1000, requests_kept: 50, share_kept: 0.05, sampled: true },
      { requests_completed: 40, requests_kept: 40, share_kept: 1, sampled: false },
    ]);
    expect(m.raw_latency_lists).toMatchObject({
      requests_completed: 1040,
      requests_kept: 52,
      share_kept: 0.05,
      sampled: true,
      resampled_ranks: [1],
      lists: {
        end_to_end_latencies: { values: 52, sampled: true },
        storage_latencies: { values: 52, sampled: true },
        generation_latencies: { values: 52, sampled: true },
        prefill_latencies: { values: 26, sampled: true },
        decode_latencies: { values: 0, sampled: true },
      },
    });
    expect(m.raw_latency_lists!.note).toBe(
      'the raw per-request lists are a uniform sample of 5.0 % of every rank\'s completed requests: rank 1 kept more in its file and was thinned at random to that share, ' +
        'so that no rank weighs more per request in a percentile read from the lists (latency percentiles: the merged histograms, which count every request)',
    );
    expect(m.notes).toContain(m.raw_latency_lists!.note);
    const file = mergedResultsFile(m) as Record<string, number[]>;
    expect(ResultsValuesSchema.safeParse(file).success).toBe(true);
    // Rank 0's 50 whole, then 2 of rank 1's 40: the parallel lists keep the same two requests.
    expect(file.end_to_end_latencies.slice(0, 50)).toEqual((r0.results as Record<string, number[]>).end_to_end_latencies);
    const picked = file.end_to_end_latencies.slice(50).map((v) => Math.round((v - 2) * 1e6));
    expect(picked).toHaveLength(2);
    expect(file.storage_latencies.slice(50).map((v) => Math.round((v - 0.2) * 1e6))).toEqual(picked);
    expect(file.prefill_latencies).toHaveLength(26);
    // The same files merge to the same lists.
    expect((mergedResultsFile(mergeRanks([r0, r1])) as Record<string, number[]>).end_to_end_latencies).toEqual(file.end_to_end_latencies);
  });

  it('keeps every value where every rank kept every request, and says the lists are whole', () => {
    const r0 = rankFile({ rank: 0 });
    const r1 = rankFile({ rank: 1 });
    for (const f of [r0, r1]) (f.results as Record<string, unknown>).end_to_end_latencies = [1, 2, 3];
    const m = mergeRanks([r0, r1]);
    expect(m.raw_latency_lists).toMatchObject({ requests_completed: 6, requests_kept: 6, share_kept: 1, sampled: false, resampled_ranks: [], lists: { end_to_end_latencies: { values: 6, sampled: false } } });
    expect(m.raw_latency_lists!.lists.storage_latencies).toBeUndefined();
    expect((mergedResultsFile(m) as Record<string, unknown>).end_to_end_latencies).toEqual([1, 2, 3, 1, 2, 3]);
  });

  it('writes the reference\'s top-level keys for the whole run: top-level counters over whole windows, summary totals and rates over the common window, percentiles of the merged histograms', () => {
    // Rank 1 opened its window 2 s late: the common window is 8 s of each rank's 10 s.
    const r0 = withCounters(rankFile({ rank: 0, readLatenciesMs: Array.from({ length: 95 }, () => 1) }), { issued: 14, completed: 4, failed: 0, hits: 29, misses: 2, mtHits: 6, mtMisses: 0, reads: 29, writes: 8, queueMs: [1] });
    const r1 = withCounters(rankFile({ rank: 1, offsetNs: 2 * S, readLatenciesMs: [100, 100, 100, 100, 120] }), { issued: 17, completed: 6, failed: 3, hits: 23, misses: 1, mtHits: 5, mtMisses: 1, reads: 23, writes: 6, queueMs: [3] });
    for (const [f, storageS] of [[r0, 2.5], [r1, 4]] as const) {
      const r = f.results as Record<string, unknown>;
      r.total_storage_io_latency = storageS;
      r.end_to_end_latencies = [1, 2];
      r.seed = (r.kvbench as { effective_seed: number }).effective_seed;
    }
    const file = mergedResultsFile(mergeRanks([r0, r1]));
    // What kvbench import and the reference's readers ask of a results file.
    expect(ResultsFileSchema.safeParse(file).success).toBe(true);
    expect(ResultsValuesSchema.safeParse(file).success).toBe(true);
    expect(file).toMatchObject({ requests_completed: 10, total_tokens_generated: 1000, total_storage_io_latency: 6.5, multi_turn_cache_hits: 11, multi_turn_cache_misses: 1, seed: 42 });
    expect(file.end_to_end_latencies).toEqual([1, 2, 1, 2]);
    const summary = file.summary as Record<string, any>;
    expect(summary.elapsed_time).toBeCloseTo(8, 9);
    // Each rank generates 100 tokens/s: 200 tokens/s together over the common window.
    expect(summary.avg_throughput_tokens_per_sec).toBeCloseTo(200, 6);
    expect(summary.requests_per_second).toBeCloseTo(4, 6);
    // The summary's totals cover the same common window as its rates, so the reference's identities
    // hold (review rev6 #7: whole-window totals beside common-window rates broke them).
    expect(summary.total_tokens).toBeCloseTo(1600, 6);
    expect(summary.total_requests).toBeCloseTo(32, 6);
    expect(summary.avg_throughput_tokens_per_sec).toBeCloseTo(summary.total_tokens / summary.elapsed_time, 9);
    expect(summary.requests_per_second).toBeCloseTo(summary.total_requests / summary.elapsed_time, 9);
    // The reference's rule across ranks: the sum of each rank's tokens ÷ its storage seconds.
    expect(summary.storage_throughput_tokens_per_sec).toBeCloseTo(400 / 2.5 + 600 / 4, 9);
    expect(summary.cache_stats.cache_hit_rate).toBeCloseTo(52 / 55, 12);
    expect(summary.cache_stats.tier_storage_read_bandwidth_gbps).toBeCloseTo(2e9 / 1024 ** 3, 9);
    // Pooled, and never above the largest value a rank recorded (120 ms), which HDR's bucket edge is.
    expect(summary.cache_stats.storage_read_p95_ms).toBeCloseTo(1, 2);
    expect(summary.cache_stats.storage_read_p9999_ms).toBeLessThanOrEqual(120);
    expect(summary.multi_turn_stats).toEqual({ cache_hits: 11, cache_misses: 1, hit_rate: 11 / 12 });
    // No honest aggregate: left out rather than made up.
    expect(summary.qos_metrics).toBeUndefined();
    expect(summary.cache_stats.storage_health).toBeUndefined();
    const timeline = file.throughput_timeline as { timestamp: number; throughput_tokens_per_sec: number }[];
    expect(timeline).toHaveLength(8);
    expect(timeline.at(-1)!.throughput_tokens_per_sec).toBeCloseTo(200, 6);
    const m = file.kvbench_merge as Record<string, any>;
    expect(m.reference).toBeUndefined();
    // The whole windows' counts stay beside them, as the top-level counters have them.
    expect(m.counts).toMatchObject({ requests_completed: 10, tokens_generated: 1000 });
    expect(m.totals).toMatchObject({ requests_completed: summary.total_requests, generated_tokens: summary.total_tokens });
    expect(m.run_options).toMatchObject({ rank: null, worldSize: 2, seed: 42, cacheDir: '/shared', output: null });
    expect(m.histograms.tier_read.storage.count).toBe(100);
    expect(typeof m.histograms.tier_read.storage.hdr).toBe('string');
  });

  it('gives no sum where a rank lacks the counter: a sum of some ranks would understate the run', () => {
    const m = mergeRanks([
      withCounters(rankFile({ rank: 0 }), { issued: 14, completed: 4, failed: 0, hits: 29, misses: 2, mtHits: 6, mtMisses: 0, reads: 29, writes: 8, queueMs: [1] }),
      rankFile({ rank: 1 }),
    ]);
    expect(m.counts.cache_hits).toBeNull();
    expect(m.counts.cache_hit_rate).toBeNull();
    expect(m.counts.requests_failed).toBeNull();
  });
});
