// Endpoint runs for the renderer's tests: what `endpoint.list`, `endpoint.get` and
// `endpoint.compare` answer, small and pure (the comparison is src-main's own, which is Node-free).
import { compareEndpointRuns, endpointRunSummary } from '../../../src-main/endpoint/endpoint-compare.ts';
import type { EndpointRunConfig } from '../../../src-shared/domain/endpoint.ts';
import type { DistributionData, EndpointComparisonData, EndpointRunDetailData, EndpointRunRowData, ResponseOf } from '../../../src-shared/ipc/contract.ts';
import { endpointConfig } from '../endpoint/fixtures.ts';

const config = (label: string): EndpointRunConfig =>
  endpointConfig(label, {
    baseUrl: `http://${label}-host:8000/v1`,
    model: 'meta-llama/Llama-3.1-8B-Instruct',
    notes: `${label} notes`,
    workloadFile: '/data/workload.json',
    workloadDigest: 'abcdef0123456789',
    metricsUrls: [`http://${label}-host:8000/metrics`],
  });

/** A run as listed; `scale` slows every latency and throughput down (scale 2: half as fast). */
export function endpointRow(id: number, label: string, scale = 1, over: Partial<EndpointRunRowData> = {}): EndpointRunRowData {
  return {
    id,
    systemLabel: label,
    status: 'complete',
    statusReason: null,
    config: config(label),
    startedAt: `2026-11-0${id}T10:00:00.000Z`,
    finishedAt: `2026-11-0${id}T10:01:00.000Z`,
    wallMs: 60_000,
    metrics: {
      requests_total: 26,
      requests_ok: 26,
      requests_failed: 0,
      requests_not_sent: 0,
      requests_per_s: 12.5 / scale,
      output_tokens_per_s: 740 / scale,
      ttft_p50_ms: 45.25 * scale,
      ttft_p95_ms: 80 * scale,
      ttft_p99_ms: 95 * scale,
      latency_p95_ms: 420 * scale,
      cached_prompt_tokens_total: 3000,
      server_prompt_tokens_total: 8000,
      'server.reload_bytes': 2 * 1024 ** 3,
    },
    metricCaveats: {},
    kvbenchVersion: '0.1.0',
    clientHost: 'client-1',
    ...over,
  };
}

const dist = (p50: number | null, n = 26): DistributionData => ({ n, mean: p50, p50, p95: p50 === null ? null : p50 * 2, p99: p50 === null ? null : p50 * 3, max: p50 === null ? null : p50 * 4 });

export function endpointDetail(row: EndpointRunRowData, failed = false): ResponseOf<'endpoint.get'> {
  const run: EndpointRunDetailData = {
    ...row,
    status: failed ? 'partial' : row.status,
    statusReason: failed ? '5 of 26 request(s) did not succeed: 4 http error, 1 incomplete (first: HTTP 503: server overloaded)' : row.statusReason,
    aggregates: {
      requestsTotal: 26,
      requestsOk: failed ? 21 : 26,
      requestsFailed: failed ? 5 : 0,
      requestsNotSent: 0,
      durationS: 2.08,
      requestsPerS: 12.5,
      outputTokensPerS: 740,
      contextTokensPerS: 4800,
      outputTokensTotal: 156,
      serverPromptTokensTotal: 8000,
      cachedPromptTokensTotal: 3000,
      promptTokensPerRequested: 1.012,
      ttftMs: dist(45.25),
      e2eMs: dist(210),
      tpotMs: dist(3.5),
      itlMs: dist(3.4, 130),
      ttftReusedMs: dist(12, 17),
      ttftFreshMs: dist(95, 9),
      byContext: [{ contextTokens: 32768, requests: 26, ok: 26, ttftMs: dist(45.25), e2eMs: dist(210), ttftReusedMs: dist(12, 17), ttftFreshMs: dist(95, 9) }],
      failuresByStatus: failed ? { http_error: 4, incomplete: 1 } : {},
      tokenCountSources: { usage: failed ? 21 : 26, chunks: 0, chunksBelowMaxTokens: 0 },
    },
    serverMetrics: {
      pages: [{ url: `http://${row.systemLabel}-host:8000/metrics`, format: 'prometheus', engines: ['vllm'], error: null, notes: [] }],
      values: [
        { key: 'reload_bytes', source: 'vllm:kv_offload_load_bytes', before: 1e9, after: 1e9 + 2 * 1024 ** 3, delta: 2 * 1024 ** 3, reset: false, sinceServerStart: false },
        { key: 'prefix_cache_hits', source: 'vllm:prefix_cache_hits', before: 100, after: 3100, delta: 3000, reset: false, sinceServerStart: false },
        { key: 'kv_cache_usage', source: 'vllm:kv_cache_usage_perc', before: 0.1, after: 0.85, delta: null, reset: false, sinceServerStart: false },
      ],
      derived: { prefix_cache_hit_rate: 0.375, reload_bandwidth: 2.5e10 },
      rawCounterDeltas: { 'vllm:prefix_cache_hits_total': 3000 },
    },
  };
  const failedRequests: ResponseOf<'endpoint.get'>['failedRequests'] = failed
    ? [
        { seq: 2, requestId: 'b1_r0', batchIndex: 1, contextTokens: 32768, status: 'http_error', httpStatus: 503, error: 'HTTP 503: server overloaded' },
        { seq: 7, requestId: 'b2_r1', batchIndex: 2, contextTokens: 32768, status: 'incomplete', httpStatus: 200, error: 'the stream ended without [DONE]' },
      ]
    : [];
  return { run, failedRequests };
}

export function endpointList(rows: EndpointRunRowData[]): ResponseOf<'endpoint.list'> {
  const labels = [...new Set(rows.map((r) => r.systemLabel))].map((l) => {
    const mine = rows.filter((r) => r.systemLabel === l);
    return { systemLabel: l, runs: mine.length, complete: mine.filter((r) => r.status === 'complete').length, latestStartedAt: mine[0].startedAt };
  });
  return { labels, runs: rows };
}

/** The shared domain's comparison of two sets of rows (what the backend answers). */
export function endpointComparison(labelA: string, a: EndpointRunRowData[], labelB: string, b: EndpointRunRowData[]): EndpointComparisonData {
  // The listed rows carry no server metrics: compare them as runs whose every value is the run's own share.
  const summary = (r: EndpointRunRowData) =>
    endpointRunSummary({ ...r, serverMetrics: { pages: [], values: [], derived: {}, rawCounterDeltas: {} }, aggregates: { tokenCountSources: { usage: 26, chunks: 0, chunksBelowMaxTokens: 0 } } });
  return compareEndpointRuns(labelA, a.map(summary), labelB, b.map(summary));
}
