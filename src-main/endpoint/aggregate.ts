// A run's aggregates from its per-request samples. Per-request quantities (TTFT, end-to-end, time per
// output token) are exact percentiles over the run's requests (linear interpolation between closest
// ranks, numpy's default: the samples are all kept anyway). Inter-token gaps are pooled over every
// request into an HDR histogram (3 significant digits), as kvbench does for every latency stream.
// Throughput counts successful requests only, over the time the server had the run's batches (each
// batch's first send to its last finish, summed): never over kvbench's own pauses between batches.
import {
  SPAN_RATE_KEYS,
  type ContextBreakdown,
  type Distribution,
  type EndpointAggregates,
  type EndpointRequestSample,
  type LegacyRates,
  type RequestStatus,
  type SpanRateKey,
} from '../../src-shared/domain/endpoint.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
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
/** What of a request the run's windows and rates read. */
export type RateSample = Pick<EndpointRequestSample, 'batchIndex' | 'status' | 'sentOffsetMs' | 'e2eMs' | 'outputTokens' | 'contextTokens'>;

export function runWindows(samples: readonly RateSample[]): { busyMs: number; spanMs: number } {
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

/** The run's duration, wall-clock span and rates from its requests (successful ones counted, over the batches' own times). */
export function runRates(samples: readonly RateSample[]): Pick<EndpointAggregates, 'durationS' | 'spanS' | 'requestsPerS' | 'outputTokensPerS' | 'contextTokensPerS' | 'outputTokensTotal'> {
  const ok = samples.filter((s) => s.status === 'ok');
  const { busyMs, spanMs } = runWindows(samples);
  const durationS = busyMs / 1000;
  const per = (x: number): number | null => (durationS > 0 ? x / durationS : null);
  const outputTokensTotal = ok.reduce((a, s) => a + (s.outputTokens ?? 0), 0);
  const contextTotal = ok.reduce((a, s) => a + s.contextTokens, 0);
  return { durationS, spanS: spanMs / 1000, requestsPerS: per(ok.length), outputTokensPerS: per(outputTokensTotal), contextTokensPerS: per(contextTotal), outputTokensTotal };
}

/**
 * @param samples every request of the run, sent or not (the windows come from the sent ones' times)
 * @param itl the pooled inter-token gaps (ns) of the run's requests
 */
export function aggregateRun(samples: readonly EndpointRequestSample[], itl: LatencyHistogram): EndpointAggregates {
  const ok = samples.filter((s) => s.status === 'ok');
  const reuse = promptReuse(samples);
  const ttftOf = (xs: readonly EndpointRequestSample[], kind: PromptReuse): Distribution => distribution(xs.filter((s) => reuse.get(s) === kind).map((s) => s.ttftMs));
  const rates = runRates(samples);
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
    ...rates,
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

/** Where each flat metric a recompute replaces lives in the aggregates. */
const SPAN_RATE_FIELDS: Record<SpanRateKey, 'durationS' | 'requestsPerS' | 'outputTokensPerS' | 'contextTokensPerS'> = {
  duration_s: 'durationS',
  requests_per_s: 'requestsPerS',
  output_tokens_per_s: 'outputTokensPerS',
  context_tokens_per_s: 'contextTokensPerS',
};

/**
 * The span kvbench before 0.5.0 took duration_s over (its runner's firstSentAt → lastDoneAt): every
 * sent request counted, cancelled ones too, one without an end-to-end time at its send.
 */
function spanBefore050Ms(samples: readonly RateSample[]): number {
  const sent = samples.filter((s): s is RateSample & { sentOffsetMs: number } => s.sentOffsetMs !== null);
  if (sent.length === 0) return 0;
  return Math.max(0, Math.max(...sent.map((s) => s.sentOffsetMs + (s.e2eMs ?? 0))) - Math.min(...sent.map((s) => s.sentOffsetMs)));
}

/** Equal but for floating-point rounding (the stored offsets are relative to the first send, the span was taken on absolute times). */
const same = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * A run stored before kvbench 0.5.0 (aggregates without spanS: duration_s and the rates over the
 * span, pauses included), recomputed from its stored requests as aggregateRun takes it today
 * (runRates): `aggregates` and `metrics` are changed in place, in memory (the store never rewrites
 * the stored row). Only where the requests reproduce what was stored — all of them there, their
 * successes and output tokens adding up to the stored counts, their span equal to the stored
 * duration — otherwise the stored values stay, and the answer says why.
 */
export function recomputeSpanRates(aggregates: EndpointAggregates, metrics: Record<string, number>, samples: readonly RateSample[], storedBy: string): LegacyRates {
  const stored: LegacyRates['stored'] = {};
  for (const k of SPAN_RATE_KEYS) if (typeof metrics[k] === 'number') stored[k] = metrics[k];
  const kept = (why: string): LegacyRates => ({ storedBy, stored, recomputedBy: null, notRecomputed: why });
  if (samples.length !== aggregates.requestsTotal) {
    return kept(`only ${samples.length} of its ${aggregates.requestsTotal} requests are stored (the others lost, e.g. in a recovery): the batches' times cannot all be read`);
  }
  const rates = runRates(samples);
  const ok = samples.filter((s) => s.status === 'ok').length;
  if (ok !== aggregates.requestsOk || rates.outputTokensTotal !== aggregates.outputTokensTotal) {
    return kept(
      `its stored requests do not add up to its stored counts (${ok} successful with ${rates.outputTokensTotal} output tokens in the requests, ` +
        `${aggregates.requestsOk} with ${aggregates.outputTokensTotal} stored)`,
    );
  }
  const spanMs = spanBefore050Ms(samples);
  if (!same(spanMs, aggregates.durationS * 1000)) {
    return kept(`its stored requests span ${(spanMs / 1000).toFixed(3)} s, not the ${aggregates.durationS.toFixed(3)} s it stored`);
  }
  const { outputTokensTotal: _same, ...replaced } = rates;
  Object.assign(aggregates, replaced);
  for (const k of SPAN_RATE_KEYS) {
    const v = rates[SPAN_RATE_FIELDS[k]];
    if (v === null || !Number.isFinite(v)) delete metrics[k];
    else metrics[k] = v;
  }
  return { storedBy, stored, recomputedBy: KVBENCH_VERSION, notRecomputed: null };
}
