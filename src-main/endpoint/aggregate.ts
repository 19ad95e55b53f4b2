// A run's aggregates from its per-request samples. Per-request quantities (TTFT, end-to-end, time per
// output token) are exact percentiles over the run's requests (linear interpolation between closest
// ranks, numpy's default: the samples are all kept anyway). Inter-token gaps are pooled over every
// request into an HDR histogram (3 significant digits), as kvbench does for every latency stream.
// Throughput counts successful requests only, over the time the server had the run's batches (each
// batch's first send to its last finish, summed): never over kvbench's own pauses between batches.
import type { ContextBreakdown, Distribution, EndpointAggregates, EndpointRequestSample, RequestStatus } from '../../src-shared/domain/endpoint.ts';
import { finiteValues, mean, percentile } from '../../src-shared/domain/statistics.ts';
import { LatencyHistogram } from '../engine/metrics/latency-histogram.ts';

export function distribution(values: readonly (number | null | undefined)[]): Distribution {
  const xs = finiteValues(values);
  if (xs.length === 0) return { n: 0, mean: null, p50: null, p95: null, p99: null, max: null };
  return { n: xs.length, mean: mean(xs), p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99), max: Math.max(...xs) };
}

function histogramDistribution(h: LatencyHistogram): Distribution {
  if (h.count === 0) return { n: 0, mean: null, p50: null, p95: null, p99: null, max: null };
  const s = h.summary();
  return { n: s.count, mean: s.meanNs / 1e6, p50: s.p50Ns / 1e6, p95: s.p95Ns / 1e6, p99: s.p99Ns / 1e6, max: s.maxNs / 1e6 };
}

const sumOrNull = (xs: readonly (number | null)[]): number | null => {
  const ys = xs.filter((x): x is number => x !== null);
  return ys.length === 0 ? null : ys.reduce((a, b) => a + b, 0);
};

/**
 * Whether each request could have found its prompt in the server's cache, from what the run did
 * (not the workload's `reused` flag, which says only "seen earlier in the file"):
 * - `reused`: the same prompt finished ok in an earlier batch;
 * - `fresh`: no earlier batch sent the prompt and no other request of its batch carries it;
 * - `unclear`: neither — a prompt sent twice or more in one batch (concurrently: the server may or
 *   may not share the prefill between them, so none of them is counted), or one whose earlier sends
 *   all failed (the server may have prefilled some of it).
 * Batches run one after the other, so an earlier batch (lower seq) had finished before this one went.
 */
export type PromptReuse = 'reused' | 'fresh' | 'unclear';

export function promptReuse(samples: readonly EndpointRequestSample[]): Map<EndpointRequestSample, PromptReuse> {
  const out = new Map<EndpointRequestSample, PromptReuse>();
  const okBefore = new Set<string>();
  const sentBefore = new Set<string>();
  const ordered = [...samples].sort((a, b) => a.seq - b.seq);
  for (let i = 0; i < ordered.length; ) {
    let j = i;
    while (j < ordered.length && ordered[j].batchIndex === ordered[i].batchIndex) j++;
    const batch = ordered.slice(i, j);
    const inBatch = new Map<string, number>();
    for (const s of batch) inBatch.set(s.promptId, (inBatch.get(s.promptId) ?? 0) + 1);
    for (const s of batch) {
      out.set(s, okBefore.has(s.promptId) ? 'reused' : sentBefore.has(s.promptId) || inBatch.get(s.promptId)! > 1 ? 'unclear' : 'fresh');
    }
    for (const s of batch) {
      if (s.status === 'ok') okBefore.add(s.promptId);
      if (s.status !== 'not_sent') sentBefore.add(s.promptId);
    }
    i = j;
  }
  return out;
}

/**
 * The run's time windows from its sent requests (`sentOffsetMs` + `e2eMs`): `busyMs`, each batch's
 * first send to its last finish, summed (batches run one after the other, so this is the time the
 * server had the run's requests, the workload's `delay_ms` pauses left out); `spanMs`, the first send
 * to the last finish (wall clock, pauses included). Requests cancelled by Ctrl-C are left out: they
 * end when the signal came, and their work counts nowhere, so their time would only dilute the rates.
 */
export function runWindows(samples: readonly EndpointRequestSample[]): { busyMs: number; spanMs: number } {
  const batches = new Map<number, { fromMs: number; toMs: number }>();
  for (const s of samples) {
    if (s.sentOffsetMs === null || s.e2eMs === null || s.status === 'cancelled') continue;
    const b = batches.get(s.batchIndex);
    const end = s.sentOffsetMs + s.e2eMs;
    batches.set(s.batchIndex, b ? { fromMs: Math.min(b.fromMs, s.sentOffsetMs), toMs: Math.max(b.toMs, end) } : { fromMs: s.sentOffsetMs, toMs: end });
  }
  const windows = [...batches.values()];
  if (windows.length === 0) return { busyMs: 0, spanMs: 0 };
  const busyMs = windows.reduce((a, w) => a + Math.max(0, w.toMs - w.fromMs), 0);
  const spanMs = Math.max(0, Math.max(...windows.map((w) => w.toMs)) - Math.min(...windows.map((w) => w.fromMs)));
  return { busyMs, spanMs };
}

/**
 * @param samples every request of the run, sent or not (the windows come from the sent ones' times)
 * @param itl the pooled inter-token gaps (ns) of the run's requests
 */
export function aggregateRun(samples: readonly EndpointRequestSample[], itl: LatencyHistogram): EndpointAggregates {
  const ok = samples.filter((s) => s.status === 'ok');
  const reuse = promptReuse(samples);
  const ttftOf = (xs: readonly EndpointRequestSample[], kind: PromptReuse): Distribution => distribution(xs.filter((s) => reuse.get(s) === kind).map((s) => s.ttftMs));
  const { busyMs, spanMs } = runWindows(samples);
  const durationS = busyMs / 1000;
  const per = (x: number): number | null => (durationS > 0 ? x / durationS : null);
  const outputTokensTotal = ok.reduce((a, s) => a + (s.outputTokens ?? 0), 0);
  const contextTotal = ok.reduce((a, s) => a + s.contextTokens, 0);
  const withUsage = ok.filter((s) => s.promptTokens !== null);
  const failuresByStatus: Partial<Record<RequestStatus, number>> = {};
  const chunkCounted = ok.filter((s) => s.tokenCountSource === 'chunks');
  for (const s of samples) if (s.status !== 'ok') failuresByStatus[s.status] = (failuresByStatus[s.status] ?? 0) + 1;

  const contexts = [...new Set(samples.map((s) => s.contextTokens))].sort((a, b) => a - b);
  const byContext: ContextBreakdown[] = contexts.map((c) => {
    const all = samples.filter((s) => s.contextTokens === c);
    const good = all.filter((s) => s.status === 'ok');
    return {
      contextTokens: c,
      requests: all.length,
      ok: good.length,
      ttftMs: distribution(good.map((s) => s.ttftMs)),
      e2eMs: distribution(good.map((s) => s.e2eMs)),
      ttftReusedMs: ttftOf(good, 'reused'),
      ttftFreshMs: ttftOf(good, 'fresh'),
    };
  });

  return {
    requestsTotal: samples.length,
    requestsOk: ok.length,
    requestsFailed: samples.filter((s) => s.status !== 'ok' && s.status !== 'not_sent').length,
    requestsNotSent: samples.filter((s) => s.status === 'not_sent').length,
    durationS,
    spanS: spanMs / 1000,
    requestsPerS: per(ok.length),
    outputTokensPerS: per(outputTokensTotal),
    contextTokensPerS: per(contextTotal),
    outputTokensTotal,
    serverPromptTokensTotal: sumOrNull(ok.map((s) => s.promptTokens)),
    cachedPromptTokensTotal: sumOrNull(ok.map((s) => s.cachedPromptTokens)),
    promptTokensPerRequested:
      withUsage.length > 0 ? withUsage.reduce((a, s) => a + (s.promptTokens ?? 0), 0) / withUsage.reduce((a, s) => a + s.contextTokens, 0) : null,
    ttftMs: distribution(ok.map((s) => s.ttftMs)),
    e2eMs: distribution(ok.map((s) => s.e2eMs)),
    tpotMs: distribution(ok.map((s) => s.tpotMs)),
    itlMs: histogramDistribution(itl),
    ttftReusedMs: ttftOf(ok, 'reused'),
    ttftFreshMs: ttftOf(ok, 'fresh'),
    byContext,
    failuresByStatus,
    tokenCountSources: {
      usage: ok.filter((s) => s.tokenCountSource === 'usage').length,
      chunks: chunkCounted.length,
      chunksBelowMaxTokens: chunkCounted.filter((s) => s.finishReason === 'length' && (s.outputTokens ?? 0) < s.maxTokens).length,
    },
    itlHistogram: itl.count > 0 ? { hdr: itl.encode(), count: itl.count, sumNs: itl.sumNs } : null,
  };
}
