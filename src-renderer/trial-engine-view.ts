// A stored trial's engine facts (src-shared/domain/trial-engine.ts) as its details show them: the
// queueing verdict and issue lateness the CLI's summary gives, the engine's memory, and its memory
// chart. The bytes stay bytes until here: only the text and the chart's axis convert them,
// in the units chosen in Settings (MiB in binary units, MB in decimal). Facts the trial's results do
// not record read "—" (and no chart), never zeros. Pure: tested without a DOM.
import type { TrialEngine } from '../src-shared/domain/trial-engine.ts';
import type { LineSeries } from './components/chart-types.ts';
import { fmtBytes, fmtInt, fmtSpanNs, type UnitPrefs } from './format.ts';
import { memorySeries } from './memory-chart.ts';

const DASH = '—';

/**
 * Whether the run measured queueing, in a line: the stored trial's verdict (the flag history and the
 * report give it), with the engine's own note (the CLI summary's `Queueing-bound:` line, in the app's
 * words: `words`, inAppWords) where the two agree, and said apart where they do not (a trial measured
 * by an older kvbench's rule, or a backlog that reached its cap without being queueing-bound at the close).
 */
export function queueingVerdictText(engine: TrialEngine | null | undefined, words: (text: string) => string): { text: string; bound: boolean } {
  const q = engine?.queue;
  if (!q) return { text: `${DASH} (not recorded: its results come from a kvbench that did not record the queue yet, or from another tool)`, bound: false };
  // The queue the stored verdict was judged on, where recorded: "238 requests still queued, 31 completed".
  const then =
    q.queuedAtClose === null ? null : `${fmtInt(q.queuedAtClose)} requests still queued${q.requestsCompleted === null ? '' : `, ${fmtInt(q.requestsCompleted)} completed`}`;
  const atClose = `at the window's close${then === null ? '' : ` (${then})`}`;
  if (q.queueingBound) {
    if (q.engineQueueingBound && q.note) return { text: `Queueing-bound: ${words(q.note)}`, bound: true };
    return {
      text:
        `Queueing-bound ${atClose} by this kvbench's rule (the queue outgrew the workers and grew rather than fluctuated): ` +
        'its end-to-end latency and queue wait measure the queue, not the storage. The kvbench that measured it did not call it queueing-bound (an older rule)',
      bound: true,
    };
  }
  if (q.engineQueueingBound) {
    return { text: `No, by this kvbench's rule ${atClose}; the kvbench that measured it called it queueing-bound by an older rule${q.note ? `: ${words(q.note)}` : ''}`, bound: false };
  }
  if (q.capReached && q.capRequests !== null) {
    return { text: `Not queueing-bound ${atClose}, but its backlog reached its cap of ${fmtInt(q.capRequests)} requests: later arrivals were issued late (see Issue lateness)`, bound: false };
  }
  return {
    text: `No: not queueing-bound at the window's close (${then === null ? '' : `${then}; `}the queue reached at most ${fmtInt(q.maxDepth)} requests); its latencies describe the storage, not a queue`,
    bound: false,
  };
}

/** The latest an arrival was issued behind its schedule, with what it means; "—" when not recorded. */
export function issueLatenessText(engine: TrialEngine | null | undefined): string {
  const q = engine?.queue;
  if (!q) return DASH;
  const why = q.capReached && q.capRequests !== null ? `: the queue reached its cap of ${fmtInt(q.capRequests)} requests, and later arrivals waited to be issued` : '';
  return `${fmtSpanNs(q.issueLatenessMaxNs)} at most behind schedule${why}`;
}

/** The engine's memory in a line: its sampled peak RSS and the buffers it reserved at the start; "—" when not recorded. */
export function engineMemoryText(engine: TrialEngine | null | undefined, u: UnitPrefs): string {
  const m = engine?.memory;
  if (!m) return DASH;
  const peak = m.sampledPeakRssBytes === null ? '' : `peak RSS ${fmtBytes(m.sampledPeakRssBytes, u)} (sampled each second); `;
  return `${peak}buffers reserved ${fmtBytes(m.fixedBuffersBytes, u)} (CPU tier arena ${fmtBytes(m.cpuTierArenaBytes, u)}, storage I/O ${fmtBytes(m.storageIoBuffersBytes, u)})`;
}

/** The memory chart of a stored trial: seconds into its window (memorySeries); null without samples. */
export function memoryChart(engine: TrialEngine | null | undefined, u: UnitPrefs): { x: number[]; series: LineSeries[]; unit: string; thinned: boolean } | null {
  const t = engine?.memoryTimeline;
  if (!t || t.elapsedNs.length === 0) return null;
  return { x: t.elapsedNs.map((ns) => ns / 1e9), ...memorySeries(t, u), thinned: t.samples > t.elapsedNs.length };
}
