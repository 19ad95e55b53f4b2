/**
 * What a stored trial's results say about the engine itself, for the app's trial details: its memory
 * over the measured window (the timeline's samples, bytes) and what it reserved, and whether the run
 * measured its request queue rather than the storage, with how late arrivals were issued. Read from
 * the results JSON the trial stored; results of kvbench before 0.7.0's memory and backlog facts (0.6.0
 * and before, and the earliest 0.7.0 builds; another tool's) lack these fields, which reads as unknown
 * (null), never as zeros or as "not queueing-bound". 0.7.0 results as released do carry them, their
 * `queueing_bound` judged by that kvbench's rule (1,000 queued requests): the verdict the details give
 * is the stored trial's (withStoredVerdict: the metric queueing_bound, today's rule, the flag's source),
 * with the engine's own beside it.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';

const bytes = z.number().nonnegative();
const count = z.number().int().nonnegative();

/** The most points a stored memory chart carries: a day-long trial has 86,400 samples. */
export const MEMORY_CHART_MAX_POINTS = 3000;

export const TrialEngineSchema = z.object({
  /**
   * The engine process's memory at each timeline sample of the measured window, bytes; null when the
   * results have no memory samples. Thinned to MEMORY_CHART_MAX_POINTS, keeping each stretch's
   * largest RSS, so a peak is never thinned away.
   */
  memoryTimeline: z
    .object({
      elapsedNs: z.array(z.number().nonnegative()),
      rssBytes: z.array(bytes.nullable()),
      heapUsedBytes: z.array(bytes.nullable()),
      arrayBuffersBytes: z.array(bytes.nullable()),
      byteWorkersHeapUsedBytes: z.array(bytes.nullable()),
      /** Samples the results hold; more than the arrays' length when thinned. */
      samples: count,
    })
    .nullable(),
  /** engine_health.memory: each kind's own peak over the samples (warm-up included), and the buffers reserved at the start; null when not recorded. */
  memory: z
    .object({
      sampledPeakRssBytes: bytes.nullable(),
      fixedBuffersBytes: bytes,
      cpuTierArenaBytes: bytes,
      storageIoBuffersBytes: bytes,
    })
    .nullable(),
  /** The backlog's verdict; null when the results do not record it (before 0.7.0's backlog facts, or another tool's results). */
  queue: z
    .object({
      /**
       * The verdict the trial is stored and flagged by: its metric queueing_bound (judged at the window's
       * close by today's rule, src-shared/domain/queueing-bound.ts, whichever kvbench measured it), as
       * history, the report and the exports use it; the engine's own where the trial has no such metric.
       */
      queueingBound: z.boolean(),
      /** The engine's own verdict in the results (`kvbench.queue.queueing_bound`), by the rule of the kvbench that measured it (before 0.8.0: 1,000 queued requests). */
      engineQueueingBound: z.boolean(),
      /** What the CLI's summary says after "Queueing-bound:" (the CLI's words): a queueing-bound run's, or one whose backlog reached its cap; null otherwise. */
      note: z.string().nullable(),
      /** The latest an arrival was issued behind its schedule, ns. */
      issueLatenessMaxNs: z.number().nonnegative(),
      /** The deepest the queue was. */
      maxDepth: count,
      /** Requests still queued at the window's close, and completed in the window; null when not recorded. */
      queuedAtClose: count.nullable(),
      requestsCompleted: count.nullable(),
      /** The cap on queued arrivals (null: an unpaced replay, kept at 2 × workers) and whether it was reached. */
      capRequests: count.nullable(),
      capReached: z.boolean(),
    })
    .nullable(),
});
export type TrialEngine = z.infer<typeof TrialEngineSchema>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const record = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

const wholeOrNull = (v: number | null): number | null => (v === null ? null : Math.round(v));

/** The memory samples of the results' timeline, thinned to `maxPoints` by each stretch's largest RSS; null without any. */
function memoryTimelineOf(timeline: unknown, maxPoints: number): TrialEngine['memoryTimeline'] {
  if (!Array.isArray(timeline)) return null;
  const points = timeline.map(record).filter((p): p is Record<string, unknown> => p !== null && num(p.elapsed_ns) !== null);
  if (!points.some((p) => num(p.rss_bytes) !== null)) return null;
  const step = Math.max(1, Math.ceil(points.length / maxPoints));
  const kept: Record<string, unknown>[] = [];
  for (let i = 0; i < points.length; i += step) {
    let best = points[i]!;
    for (let j = i + 1; j < Math.min(points.length, i + step); j++) if ((num(points[j]!.rss_bytes) ?? -1) > (num(best.rss_bytes) ?? -1)) best = points[j]!;
    kept.push(best);
  }
  return {
    elapsedNs: kept.map((p) => num(p.elapsed_ns)!),
    rssBytes: kept.map((p) => num(p.rss_bytes)),
    heapUsedBytes: kept.map((p) => num(p.heap_used_bytes)),
    arrayBuffersBytes: kept.map((p) => num(p.array_buffers_bytes)),
    byteWorkersHeapUsedBytes: kept.map((p) => num(p.byte_workers_heap_used_bytes)),
    samples: points.length,
  };
}

/**
 * A stored trial's engine facts from its results JSON (the `kvbench` section); every part null that
 * the results do not record. `maxPoints`: the most memory samples kept (MEMORY_CHART_MAX_POINTS).
 */
export function trialEngineOf(results: unknown, maxPoints = MEMORY_CHART_MAX_POINTS): TrialEngine {
  const kv = record(record(results)?.kvbench);
  const mem = record(record(kv?.engine_health)?.memory);
  const fixed = record(mem?.fixed_buffers);
  const q = record(kv?.queue);
  const fixedTotal = num(fixed?.total_bytes);
  // The backlog's facts came together (queueing_bound, issue_lateness_max_ns, note): without them the verdict is unknown.
  const recorded = q !== null && typeof q.queueing_bound === 'boolean' && num(q.issue_lateness_max_ns) !== null;
  const note = recorded && typeof q.note === 'string' && q.note !== '' ? q.note : null;
  return {
    memoryTimeline: memoryTimelineOf(kv?.timeline, maxPoints),
    memory:
      fixedTotal === null
        ? null
        : {
            sampledPeakRssBytes: num(record(mem?.sampled_peak)?.rss_bytes),
            fixedBuffersBytes: fixedTotal,
            cpuTierArenaBytes: num(fixed?.cpu_tier_arena_bytes) ?? 0,
            storageIoBuffersBytes: num(fixed?.storage_io_buffers_bytes) ?? 0,
          },
    queue: recorded
      ? {
          queueingBound: q.queueing_bound === true,
          engineQueueingBound: q.queueing_bound === true,
          note,
          issueLatenessMaxNs: num(q.issue_lateness_max_ns)!,
          maxDepth: Math.round(num(q.max_depth) ?? 0),
          queuedAtClose: wholeOrNull(num(record(kv?.measured_window)?.requests_queued_at_close)),
          requestsCompleted: wholeOrNull(num(record(results)?.requests_completed)),
          capRequests: num(q.backlog_cap_requests),
          capReached: q.backlog_cap_reached === true,
        }
      : null,
  };
}

/**
 * `engine` with the stored trial's queueing verdict: its metric queueing_bound (1/0, what flags it in
 * history, the report and the exports) where it has one, and the queue at the close it was judged on;
 * the results' own verdict stays as `engineQueueingBound`. Unchanged where the trial has no such metric.
 */
export function withStoredVerdict(engine: TrialEngine, metrics: Readonly<Record<string, number | undefined>>): TrialEngine {
  const stored = metrics.queueing_bound;
  if (engine.queue === null || (stored !== 0 && stored !== 1)) return engine;
  const queued = metrics.requests_queued_at_close;
  const completed = metrics.requests_completed;
  return {
    ...engine,
    queue: {
      ...engine.queue,
      queueingBound: stored === 1,
      queuedAtClose: engine.queue.queuedAtClose ?? (typeof queued === 'number' ? Math.round(queued) : null),
      requestsCompleted: engine.queue.requestsCompleted ?? (typeof completed === 'number' ? Math.round(completed) : null),
    },
  };
}
