// Replays a workload file against an OpenAI-compatible endpoint: batches in order, a batch's
// requests sent together (concurrency = the batch size), the next batch `delay_ms` after the previous
// one finished; the server's metrics scraped before and after. Every request ends as a sample with a
// status; the run ends with what it has — interrupted, or cut short when the server stops answering —
// and says what failed.
import os from 'node:os';
import type { WorkloadFile } from '../../src-shared/domain/workload-file.ts';
import {
  endpointRunLimitIssues,
  flattenEndpointMetrics,
  type EndpointRequestSample,
  type EndpointRunConfig,
  type EndpointRunRecord,
  type EndpointRunStatus,
  type RequestStatus,
} from '../../src-shared/domain/endpoint.ts';
import { shownInput } from '../../src-shared/domain/label-text.ts';
import { percentile } from '../../src-shared/domain/statistics.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { LatencyHistogram } from '../engine/metrics/latency-histogram.ts';
import { aggregateRun } from './aggregate.ts';
import { requestBody, streamCompletion } from './openai-client.ts';
import { PromptBuilder, type TokenCountFn } from './prompt-builder.ts';
import { batchesToReplay, maxTokensOf, requestsDigest } from './replay-plan.ts';
import { enginesOf, scrapeAll, serverMetricsDelta, type PageSnapshot } from './server-metrics.ts';

export const METRICS_SCRAPE_TIMEOUT_MS = 10_000;

export interface BatchProgress {
  batchIndex: number;
  batches: number;
  contextTokens: number;
  requests: number;
  ok: number;
  failed: number;
  ttftP50Ms: number | null;
  wallMs: number;
  /** The first failure's reason, when some failed. */
  firstError: string | null;
}

export interface EndpointRunInput {
  config: EndpointRunConfig;
  workload: WorkloadFile;
  /** Sent as `Authorization: Bearer …` (never stored). */
  apiKey?: string | null;
  tokenizer?: TokenCountFn;
  /** Cancels the run: in-flight requests become `cancelled`, the rest `not_sent`. */
  signal?: AbortSignal;
  onBatch?: (p: BatchProgress) => void;
  onNote?: (message: string) => void;
  /** Whether metricsUrls are kvbench's guesses (pages that do not answer before the run are then dropped quietly). */
  metricsUrlsAreDefaults?: boolean;
}

/** Everything a run produced, before it has a store id: the stored record plus its per-request samples. */
export type EndpointRunOutcome = Omit<EndpointRunRecord, 'id'> & { samples: EndpointRequestSample[] };

/** `--url` as given → the base ending in /v1 (http://h:8000, http://h:8000/, http://h:8000/v1 all give http://h:8000/v1). */
export function normalizeBaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`not a URL: '${shownInput(url)}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`must be http:// or https://, got ${u.protocol}//`);
  u.search = '';
  u.hash = '';
  let p = u.pathname.replace(/\/+$/, '');
  p = p.replace(/\/(chat\/)?completions$/, '');
  if (!p.endsWith('/v1')) p = `${p}/v1`;
  u.pathname = p;
  return u.toString().replace(/\/+$/, '');
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

const DEAD_STATUSES: readonly RequestStatus[] = ['connection_error', 'timeout'];

function summariseFailures(samples: readonly EndpointRequestSample[]): string | null {
  const failed = samples.filter((s) => s.status !== 'ok');
  if (failed.length === 0) return null;
  const counts = new Map<RequestStatus, number>();
  for (const s of failed) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  const parts = [...counts].map(([k, n]) => `${n} ${k.replace('_', ' ')}`);
  const first = failed.find((s) => s.error);
  return `${failed.length} of ${samples.length} request(s) did not succeed (${parts.join(', ')})${first ? `; first: ${first.requestId}: ${first.error}` : ''}`;
}

export async function runEndpointBenchmark(input: EndpointRunInput): Promise<EndpointRunOutcome> {
  const { config, workload } = input;
  const limits = endpointRunLimitIssues(config);
  if (limits.length > 0) throw new RangeError(limits.join('; '));
  const startedAt = new Date().toISOString();
  const wallStart = performance.now();
  const headers: Record<string, string> = input.apiKey ? { Authorization: `Bearer ${input.apiKey}` } : {};
  const builder = new PromptBuilder({ salt: config.promptSalt, ...(input.tokenizer ? { tokenizer: input.tokenizer } : {}) });
  const batches = batchesToReplay(config, workload);
  const endpoint = `${config.baseUrl}/${config.api === 'chat' ? 'chat/completions' : 'completions'}`;

  // Samples for every request, all `not_sent` until their batch goes.
  const samples: EndpointRequestSample[] = [];
  for (const b of batches) {
    for (const r of b.requests) {
      samples.push({
        seq: samples.length,
        requestId: r.id,
        batchIndex: b.index,
        promptId: r.prompt_id,
        reused: r.reused,
        contextTokens: r.context_tokens,
        promptChars: 0,
        maxTokens: maxTokensOf(config, r),
        status: 'not_sent',
        httpStatus: null,
        error: null,
        sentOffsetMs: null,
        ttftMs: null,
        e2eMs: null,
        tpotMs: null,
        outputTokens: null,
        outputChunks: 0,
        tokenCountSource: null,
        promptTokens: null,
        cachedPromptTokens: null,
        finishReason: null,
      });
    }
  }

  let metricsUrls = [...config.metricsUrls];
  let before: PageSnapshot[] = [];
  if (metricsUrls.length > 0) {
    const scrape = (urls: string[]): Promise<PageSnapshot[]> => scrapeAll(urls, { timeoutMs: METRICS_SCRAPE_TIMEOUT_MS, headers, ...(input.signal ? { signal: input.signal } : {}) });
    if (input.metricsUrlsAreDefaults) {
      // trtllm-serve hands each iteration's JSON statistics (/metrics) out once, to whoever GETs them
      // first, and its own Prometheus collector drains the same queue: where its Prometheus page
      // answers (with the same counters), kvbench does not touch the JSON page at all.
      const promUrls = metricsUrls.filter((u) => u.endsWith('/prometheus/metrics'));
      const prom = await scrape(promUrls);
      const trtllmProm = prom.some((s) => s.format === 'prometheus' && enginesOf(s).includes('trtllm'));
      const rest = metricsUrls.filter((u) => !promUrls.includes(u));
      if (trtllmProm) for (const u of rest) input.onNote?.(`metrics page ${u}: not read (TensorRT-LLM's Prometheus page has its counters; reading its JSON statistics would take them from the server's own collector)`);
      before = [...(trtllmProm ? [] : await scrape(rest)), ...prom].sort((a, b) => metricsUrls.indexOf(a.url) - metricsUrls.indexOf(b.url));
      // Guessed pages that do not answer are dropped quietly.
      const usable = before.filter((s) => s.format !== 'unavailable');
      if (usable.length > 0) {
        metricsUrls = usable.map((s) => s.url);
        before = usable;
      }
    } else {
      before = await scrape(metricsUrls);
    }
    for (const s of before) {
      if (s.format === 'unavailable') input.onNote?.(`metrics page ${s.url}: ${s.error}`);
      else input.onNote?.(`metrics page ${s.url}: ${s.format}`);
    }
  }

  const itl = new LatencyHistogram();
  let firstSentAt: number | null = null;
  let deadBatches = 0;
  let stopReason: string | null = null;
  let seq = 0;
  for (let bi = 0; bi < batches.length; bi++) {
    const b = batches[bi];
    const batchSamples = samples.slice(seq, seq + b.requests.length);
    seq += b.requests.length;
    if (input.signal?.aborted) {
      stopReason ??= 'interrupted';
      continue;
    }
    if (stopReason !== null) continue;
    await sleep(b.delay_ms, input.signal);
    if (input.signal?.aborted) {
      stopReason = 'interrupted';
      continue;
    }
    // Every prompt and body of the batch is built before the first request goes: building a
    // 128K-token prompt takes milliseconds, and built between sends it would delay the later
    // requests of the batch and count in the earlier ones' TTFT.
    const requests = b.requests.map((r, i) => {
      const prompt = builder.build(r.prompt_id, r.context_tokens);
      batchSamples[i].promptChars = prompt.length;
      const fields = {
        api: config.api,
        model: config.model,
        prompt,
        maxTokens: batchSamples[i].maxTokens,
        temperature: config.temperature,
        topP: config.topP,
        ignoreEos: config.ignoreEos,
        streamUsage: config.streamUsage,
      };
      return { ...fields, body: JSON.stringify(requestBody(fields)) };
    });
    const batchStart = performance.now();
    await Promise.all(
      requests.map(async (req, i) => {
        const s = batchSamples[i];
        const gaps: number[] = [];
        const o = await streamCompletion({
          url: endpoint,
          ...req,
          headers,
          requestTimeoutMs: config.requestTimeoutS * 1000,
          idleTimeoutMs: config.idleTimeoutS * 1000,
          ...(input.signal ? { signal: input.signal } : {}),
          onGapMs: (g) => gaps.push(g),
        });
        firstSentAt = firstSentAt === null ? o.sentAtMs : Math.min(firstSentAt, o.sentAtMs);
        s.status = o.status;
        s.httpStatus = o.httpStatus;
        s.error = o.error;
        s.sentOffsetMs = o.sentAtMs; // made relative below, once the first send is known
        s.ttftMs = o.ttftMs;
        s.e2eMs = o.e2eMs;
        s.tpotMs = o.tpotMs;
        s.outputTokens = o.outputTokens;
        s.outputChunks = o.outputChunks;
        s.tokenCountSource = o.tokenCountSource;
        s.promptTokens = o.promptTokens;
        s.cachedPromptTokens = o.cachedPromptTokens;
        s.finishReason = o.finishReason;
        if (o.status === 'ok') for (const g of gaps) itl.record(g * 1e6);
      }),
    );
    const ok = batchSamples.filter((s) => s.status === 'ok');
    input.onBatch?.({
      batchIndex: b.index,
      batches: batches.length,
      contextTokens: b.context_tokens,
      requests: batchSamples.length,
      ok: ok.length,
      failed: batchSamples.length - ok.length,
      // The same percentile as the stored aggregates (interpolated), so the progress line agrees with them.
      ttftP50Ms: percentile(ok.map((s) => s.ttftMs), 50),
      wallMs: performance.now() - batchStart,
      firstError: batchSamples.find((s) => s.status !== 'ok')?.error ?? null,
    });
    if (input.signal?.aborted) {
      stopReason = 'interrupted';
      continue;
    }
    // A server that is gone: every request of the batch failed to connect or timed out.
    if (batchSamples.every((s) => DEAD_STATUSES.includes(s.status))) {
      deadBatches++;
      if (deadBatches >= config.stopAfterDeadBatches) {
        // The last batch may be the one that made it stop: then nothing was left unsent.
        const unsent = bi < batches.length - 1 ? '; the remaining batches were not sent' : '';
        stopReason = `the server stopped answering: no request of the last ${deadBatches} batch(es) got an answer (${batchSamples[0].error ?? batchSamples[0].status})${unsent}`;
      }
    } else {
      deadBatches = 0;
    }
  }
  for (const s of samples) if (s.sentOffsetMs !== null) s.sentOffsetMs -= firstSentAt ?? 0;

  const after = metricsUrls.length > 0 ? await scrapeAll(metricsUrls, { timeoutMs: METRICS_SCRAPE_TIMEOUT_MS, headers }) : [];
  const serverMetrics = serverMetricsDelta(before, after);
  const aggregates = aggregateRun(samples, itl);
  const failures = summariseFailures(samples);
  let status: EndpointRunStatus = aggregates.requestsOk === 0 ? 'failed' : failures === null ? 'complete' : 'partial';
  if (samples.length === 0) status = 'failed';
  // A string abort reason says who stopped the run (the CLI's 'by SIGTERM'); otherwise it was the user.
  const interruptedBy = typeof input.signal?.reason === 'string' ? input.signal.reason : 'by the user';
  const reasons = [stopReason === 'interrupted' ? `interrupted ${interruptedBy}; the remaining requests were not sent` : stopReason, failures].filter((x): x is string => x !== null);
  return {
    systemLabel: config.systemLabel,
    status,
    statusReason: reasons.length > 0 ? reasons.join('; ') : null,
    // The digest of what this replay sent, whatever the caller's config said.
    config: { ...config, metricsUrls, requestsDigest: requestsDigest(config, workload) },
    startedAt,
    finishedAt: new Date().toISOString(),
    wallMs: performance.now() - wallStart,
    aggregates,
    serverMetrics,
    metrics: flattenEndpointMetrics(aggregates, serverMetrics),
    samples,
    kvbenchVersion: KVBENCH_VERSION,
    clientHost: os.hostname(),
  };
}
