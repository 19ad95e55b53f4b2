// An endpoint run configuration for tests: pure (no Node, no DOM), so the store's tests and the
// renderer's (type-checked with the DOM library) share it.
import type { EndpointRunSummary } from '../../../src-main/endpoint/endpoint-compare.ts';
import type { EndpointRunConfig } from '../../../src-shared/domain/endpoint.ts';

export function endpointConfig(label: string, over: Partial<EndpointRunConfig> = {}): EndpointRunConfig {
  return {
    baseUrl: 'http://127.0.0.1:1/v1',
    model: 'm',
    api: 'completions',
    systemLabel: label,
    notes: 'n, with "quotes"',
    workloadFile: '/tmp/w.json',
    workloadDigest: 'd1',
    requestsDigest: 'r1',
    temperature: 0,
    topP: 1,
    maxTokens: null,
    ignoreEos: true,
    streamUsage: true,
    requestTimeoutS: 600,
    idleTimeoutS: 120,
    metricsUrls: ['http://127.0.0.1:1/metrics'],
    promptSalt: 'salt',
    promptTokenizer: 'words',
    maxBatches: null,
    stopAfterDeadBatches: 2,
    ...over,
  };
}

/** A stored run as a comparison sees it (complete, the same requests and settings unless `over` says otherwise). */
export function runSummary(id: number, label: string, metrics: Record<string, number>, over: Partial<EndpointRunSummary> = {}): EndpointRunSummary {
  return {
    id,
    systemLabel: label,
    status: 'complete',
    startedAt: '2026-01-01T00:00:00Z',
    workloadDigest: 'd1',
    requestsDigest: 'r1',
    model: 'm',
    baseUrl: `http://${label}:8000/v1`,
    promptSalt: `salt-${id}`,
    promptTokenizer: 'words',
    settings: { api: 'completions', maxBatches: null, maxTokens: null, ignoreEos: true, temperature: 0, topP: 1, streamUsage: true },
    metrics,
    kvbenchVersion: '0.5.0',
    metricCaveats: {},
    serverMetricNotes: [],
    tokenCountCaveat: null,
    legacyRates: null,
    ...over,
  };
}
