// Metrics whose definition changed between kvbench versions. Trials measured on both sides of a
// change are not comparable on that metric, and the comparisons say so rather than show a
// difference the definition made.

export interface MetricDefinitionChange {
  metric: string;
  /** The first kvbench version with the new definition. */
  since: string;
  change: string;
}

/** The 0.8.0 change of a request's latencies: what the metric is, and what it was before. */
function timedFromArrival(ends: string): string {
  return (
    `is timed from the request's scheduled arrival and ${ends}, so the time the scheduler held the arrival back (the open loop's backlog cap, a late event loop; ` +
    'kvbench.latency.issue_lateness shows how much) is in it; an unpaced replay\'s still from its issue (before 0.8.0 it was timed from when the scheduler issued the request, that time left out)'
  );
}

export const METRIC_DEFINITION_CHANGES: readonly MetricDefinitionChange[] = [
  { metric: 'decode_bytes_read', since: '0.3.0', change: 'counts multi-turn reload and RAG chunk reads too, as decode_reads does (before 0.3.0 it left them out)' },
  // Results keys that are no trial metric are listed by their path in the results JSON: no comparison
  // shows them, but this stays the one list of what changed.
  {
    metric: 'summary.prefix_cache_stats.prefix_hits',
    since: '0.4.0',
    change: 'counts the completed requests that detected a system prompt, as the reference does (before 0.4.0: the lookups that found its entry cached, now kvbench.cache.system_prompt_entries.hits)',
  },
  {
    metric: 'summary.prefix_cache_stats.prefix_misses',
    since: '0.4.0',
    change: 'counts the completed requests that detected no system prompt, as the reference does (before 0.4.0: the lookups that did not find the entry cached, now kvbench.cache.system_prompt_entries.misses)',
  },
  {
    metric: 'summary.prefix_cache_stats.bytes_saved',
    since: '0.4.0',
    change: "counts every detected prompt's KV bytes, as the reference does (before 0.4.0: only those found cached, now kvbench.cache.system_prompt_entries.bytes_saved)",
  },
  {
    metric: 'summary.prefix_cache_stats.system_prompt_reuse',
    since: '0.4.0',
    change: 'equals prefix_hits, counted when the request completes (before 0.4.0: when its lookup started)',
  },
  // Endpoint runs' metrics (kvbench endpoint) as endpoint.<key>: some share a key with a trial metric.
  {
    metric: 'endpoint.duration_s',
    since: '0.5.0',
    change:
      "is the time the server had the run's batches, each batch's first send to its last finish, summed, requests cancelled by Ctrl-C left out (before 0.5.0: the span from the first send to the last finish, the workload's delay_ms pauses between batches and the cancelled requests included)",
  },
  ...(['requests_per_s', 'output_tokens_per_s', 'context_tokens_per_s'] as const).map((key) => ({
    metric: `endpoint.${key}`,
    since: '0.5.0',
    change: "is over duration_s, the batches' own time (before 0.5.0: over the span, the pauses between batches and the time of requests cancelled by Ctrl-C included)",
  })),
  // The qos autoscaler's decisions, which its final users and every logged step's saturation follow.
  ...(['autoscale_final_users', 'summary.autoscaling_stats.saturation_level'] as const).map((metric) => ({
    metric,
    since: '0.6.0',
    change:
      'follows a qos autoscaler that judges an interval in which no storage read completed by the age of the oldest storage operation still in flight, a lower bound of its latency, as well as the writes\' P95 (before 0.6.0 such an interval with no write completed either counted as idle, saturation 0, and added users: storage too slow to finish an operation within an interval drew more users)',
  })),
  // Per-MiB latency, stored per trial (storage_*_p95_ms_per_mib) and in the results' latency section.
  ...(['storage_read_p95_ms_per_mib', 'storage_write_p95_ms_per_mib', 'kvbench.latency.tier_read_ns_per_mib', 'kvbench.latency.tier_write_ns_per_mib'] as const).map((metric) => ({
    metric,
    since: '0.7.0',
    change:
      "is over entries of at least one I/O chunk (16 MiB by default), each entry's latency ÷ its MiB (before 0.7.0 it took every entry, and the few small ones, mostly the per-entry fdatasync divided by a fraction of a MiB, set its upper percentiles: a write P95 of 341 ms/MiB beside a median of 4.2)",
  })),
  // A request's latencies, stored per trial (e2e_*, queue_wait_p95_ms) and in the results, and the QoS
  // classes' compliance, which is counted on the end-to-end latency.
  ...(['e2e_p50_ms', 'e2e_p95_ms', 'e2e_p99_ms', 'summary.end_to_end_latency_ms', 'kvbench.latency.end_to_end'] as const).map((metric) => ({
    metric,
    since: '0.8.0',
    change: timedFromArrival('ends when the request completes'),
  })),
  ...(['queue_wait_p95_ms', 'kvbench.latency.queue_wait'] as const).map((metric) => ({
    metric,
    since: '0.8.0',
    change: timedFromArrival('ends when a worker takes the request'),
  })),
  {
    metric: 'summary.qos_metrics',
    since: '0.8.0',
    change:
      "counts a request against its class's target (50, 100 or 1,000 ms) by its end-to-end latency from its scheduled arrival, the time the scheduler held it back included (before 0.8.0 from when it was issued, so an arrival held back by the backlog cap or a late event loop could meet a target its user waited past)",
  },
  // The engine's verdict on a queueing-bound run. The store judges every kvbench trial by today's rule
  // from its stored results (the trial metric queueing_bound), so this changes what older files say only.
  {
    metric: 'kvbench.queue.queueing_bound',
    since: '0.8.0',
    change:
      "is judged at the window's close, relative to the run: at least 10 requests per worker still queued and at least a quarter as many as had completed (before 0.8.0: the queue reached max(1,000, 10 × workers) at any point, so a run of a few users never was one however far behind it fell: 4 users, 238 queued, queue wait P95 11.1 s of an end-to-end P95 of 14.4 s read false)",
  },
  // Demotion bytes per tier, counted as the tier's own bytes are.
  ...(['kvbench.tier_bytes.demoted_in_bytes', 'kvbench.tier_bytes.demoted_out_bytes'] as const).map((metric) => ({
    metric,
    since: '0.8.0',
    change:
      "counts a demotion's bytes chunk by chunk inside the window, as the tier's read and write bytes do, so a demotion in flight at the close counts the chunks it moved (before 0.8.0 only finished demotions counted, whole: 192 MiB below the storage tier's demotion writes in a 20 s run)",
  })),
  // The GPU tier's copy counters, frozen with the tier's bytes at the window's close.
  ...(['h2d_copy_bytes', 'h2d_copies', 'd2h_copy_bytes', 'd2h_copies', 'd2h_staging_copy_bytes', 'd2h_staging_copies', 'demotion_d2h_copy_bytes', 'demotion_d2h_copies'] as const).map(
    (key) => ({
      metric: `kvbench.tiers.gpu.${key}`,
      since: '0.8.1',
      change:
        "counts the copies that completed inside the measured window, chunk by chunk as the GPU tier's bytes count, so copy bytes equal the tier's bytes (before 0.8.1 the counters ran on through the drain after the close: 2.1 GB more host→device bytes than the tier wrote in a 30 s run)",
    }),
  ),
  // The GPU tier's busy times: frozen with the counters above, and timed differently.
  ...(['h2d_busy_ns', 'd2h_staging_busy_ns', 'demotion_d2h_busy_ns'] as const).map((key) => ({
    metric: `kvbench.tiers.gpu.${key}`,
    since: '0.8.1',
    change:
      "is the time at least one copy of its kind was executing, the union of the copies' own intervals as the copy workers timed them, over the copies that completed inside the measured window (before 0.8.1 it changed in two ways: it ran from handing a copy to a copy worker to its reply, so a copy waiting behind one of the other direction counted, and it ran on through the drain after the close; the H200's host→device link read 29.16 GB/s beside 40.39 GB/s per copy in its first gpu-only run, kvbench 0.8.0)",
  })),
  {
    metric: 'kvbench.engine_health.memory.fixed_buffers.total_bytes',
    since: '0.8.1',
    change: "includes the GPU tier's page-locked staging buffers (gpu_staging_bytes; before 0.8.1 they were left out: 128 MiB of pinned host memory on the H200 runs)",
  },
  // The GPU tier's link-busy bandwidths, in the results and as the trial metrics that store them. The
  // store keeps none measured before 0.8.1 (results-ingest.ts), so no trial metric holds the older one.
  ...(
    [
      'gpu_h2d_link_bytes_per_s',
      'gpu_d2h_link_bytes_per_s',
      'gpu_demotion_d2h_link_bytes_per_s',
      'kvbench.tiers.gpu.h2d_link_busy_bytes_per_sec',
      'kvbench.tiers.gpu.d2h_staging_link_busy_bytes_per_sec',
      'kvbench.tiers.gpu.demotion_d2h_link_busy_bytes_per_sec',
    ] as const
  ).map((metric) => ({
    metric,
    since: '0.8.1',
    change:
      "is bytes ÷ the time at least one copy of its kind was executing, the union of the copies' own intervals as the copy workers timed them (before 0.8.1 the busy time ran from handing a copy to a copy worker to its reply, so a copy waiting behind one of the other direction counted: the H200's host→device link read 29.16 GB/s beside 40.39 GB/s per copy in its first gpu-only run, kvbench 0.8.0; the store keeps no trial metric of that definition)",
  })),
];

/** Orders "major.minor.patch" versions numerically; anything unparsable sorts first. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string): number[] => v.split('.').map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The changes whose boundary these kvbench versions straddle (some before `since`, some from it on),
 * for the metrics asked about: the definitions differ between those trials.
 */
export function straddledChanges(versions: readonly string[], metrics: readonly string[]): MetricDefinitionChange[] {
  return METRIC_DEFINITION_CHANGES.filter(
    (c) => metrics.includes(c.metric) && versions.some((v) => compareVersions(v, c.since) < 0) && versions.some((v) => compareVersions(v, c.since) >= 0),
  );
}

/**
 * The change whose older definition kvbench `version` measured `metric` under: the earliest listed
 * change of the metric that the version predates; null for the current definition, and for a value
 * whose measuring version is not known (the reference's files, stored results that could not be
 * read): its definition cannot be told, so it is read as today's, as the comparisons read it.
 */
export function olderDefinitionOf(metric: string, version: string | null): MetricDefinitionChange | null {
  if (version === null) return null;
  const older = METRIC_DEFINITION_CHANGES.filter((c) => c.metric === metric && compareVersions(version, c.since) < 0);
  return older.sort((a, b) => compareVersions(a.since, b.since))[0] ?? null;
}

/**
 * The listed metric whose definition a stored latency histogram (a report's pooled latency, by its
 * name: end_to_end, tier_read.storage) follows: the results' kvbench.latency entry of that name.
 */
export const pooledDefinitionMetric = (histogramName: string): string => `kvbench.latency.${histogramName}`;

/** A pooled latency of an older definition in words: a pool of its own, and why. */
export function pooledDefinitionText(p: { name: string; trials: number; olderDefinition: { since: string; change: string } | null }): string | null {
  if (p.olderDefinition === null) return null;
  const { since, change } = p.olderDefinition;
  return (
    `${p.name} (${olderDefinitionText(since)}): ${p.trials === 1 ? '1 trial was' : `${p.trials} trials were`} measured before kvbench ${since} changed its definition ` +
    `(from then on it ${change}), so their histograms are pooled apart, never merged with later ones`
  );
}

/** What marks a value measured under the definition a change replaced: "definition before 0.7.0". */
export const olderDefinitionText = (since: string): string => `definition before ${since}`;

/** A metric's row label, marked where its values were measured under an older definition. */
export const definitionRowLabel = (label: string, older: { since: string } | null): string => (older === null ? label : `${label} (${olderDefinitionText(older.since)})`);

/**
 * One metric of a report group whose trials include values measured before a listed change of its
 * definition: `trialsBefore` of them, `trialsSince` from the change on (or of unknown version). Both
 * above 0: the group straddles the change, and the two are aggregated apart, never in one median.
 */
export interface DefinitionSplit {
  metric: string;
  label: string;
  since: string;
  change: string;
  trialsBefore: number;
  trialsSince: number;
}

/** A DefinitionSplit in words: how many trials each side, that they are aggregated apart, and how the older row is marked. */
export function definitionSplitText(d: DefinitionSplit): string {
  const mark = `"(${olderDefinitionText(d.since)})"`;
  const total = d.trialsBefore + d.trialsSince;
  if (d.trialsSince === 0) {
    return (
      `${d.label} (${d.metric}): ${total === 1 ? 'its trial was' : `all ${total} trials were`} measured before kvbench ${d.since} changed its definition ` +
      `(from ${d.since} on it ${d.change}): marked ${mark}, not comparable with values measured by kvbench ${d.since} or later`
    );
  }
  return (
    `${d.label} (${d.metric}) changed definition in kvbench ${d.since} (from then on it ${d.change}): ` +
    `${d.trialsBefore} of these ${total} trials were measured before it, ${d.trialsSince} from it on, so the two are aggregated apart, never in one median ` +
    `(the row marked ${mark} holds the ${d.trialsBefore} older)`
  );
}

/** The mark of a compared metric (or a configuration's row) whose values were measured under two definitions of it. */
export const MIXED_DEFINITIONS = 'mixed definitions †';

/** Said under a comparison with a metric marked MIXED_DEFINITIONS (the CLI's and the app's). */
export const MIXED_DEFINITIONS_LEGEND =
  `${MIXED_DEFINITIONS}: the metric's compared trials were measured on both sides of a change of its definition (the notes say which): ` +
  'its ratios are shown, but they mix the two definitions, so it names no better side, p-value or win rate, and is no best differentiator.';
