/**
 * What a stored trial's results say about the engine itself, for the app's trial details: its memory
 * over the measured window (the timeline's samples, bytes) and what it reserved, and whether the run
 * measured its request queue rather than the storage (the `Queueing-bound:` line of the CLI's
 * summary) with how late arrivals were issued. Read from the results JSON the trial stored; results
 * of kvbench 0.7.0 and before (and another tool's) lack these fields, which reads as unknown (null),
 * never as zeros or as "not queueing-bound".
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
  /** The backlog's verdict; null when the results do not record it (kvbench 0.7.0 and before, or another tool's results). */
  queue: z
    .object({
      /** The run measured queueing, not storage (the results' queue.note is set). */
      queueingBound: z.boolean(),
      /** What the CLI's summary says after "Queueing-bound:" (the CLI's words); null when it was not queueing-bound. */
      note: z.string().nullable(),
      /** The latest an arrival was issued behind its schedule, ns. */
      issueLatenessMaxNs: z.number().nonnegative(),
      /** The deepest the queue was. */
      maxDepth: count,
      /** The cap on queued arrivals (null: an unpaced replay, kept at 2 × workers) and whether it was reached. */
      capRequests: count.nullable(),
      capReached: z.boolean(),
    })
    .nullable(),
});
export type TrialEngine = z.infer<typeof TrialEngineSchema>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const record = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

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
          queueingBound: note !== null,
          note,
          issueLatenessMaxNs: num(q.issue_lateness_max_ns)!,
          maxDepth: Math.round(num(q.max_depth) ?? 0),
          capRequests: num(q.backlog_cap_requests),
          capReached: q.backlog_cap_reached === true,
        }
      : null,
  };
}
