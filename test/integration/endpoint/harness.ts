// Shared by the endpoint integration tests: a small workload and a run configuration for a fake server.
import type { EndpointRunConfig } from '../../../src-shared/domain/endpoint.ts';
import type { WorkloadFile } from '../../../src-shared/domain/workload-file.ts';
import { generateWorkload } from '../../../src-main/engine/workload/sources/workload-file.ts';
import { requestsDigest, workloadDigest } from '../../../src-main/endpoint/replay-plan.ts';
import { defaultMetricsUrls } from '../../../src-main/endpoint/server-metrics.ts';
import type { FakeServer } from './fake-openai-server.ts';

/** Two context sizes, pools of 3, reuse from batch 2: 8 batches, 26 requests (9 new prompts, 17 reused). */
export function smallWorkload(generationTokens = 6): WorkloadFile {
  return generateWorkload({
    contexts: [256, 512],
    batches_per_context: 4,
    batch_sizes: [2, 4],
    prompt_pool_size: 3,
    reuse_start_batch: 2,
    reuse_ratio: 0.7,
    delay_ms: 0,
    generation_tokens: generationTokens,
    seed: 42,
  });
}

export function configFor(s: FakeServer, w: WorkloadFile, over: Partial<EndpointRunConfig> = {}): EndpointRunConfig {
  const c = {
    baseUrl: `${s.url}/v1`,
    model: 'fake-model',
    api: 'completions' as const,
    systemLabel: 'test',
    notes: null,
    workloadFile: null,
    workloadDigest: workloadDigest(w),
    temperature: 0,
    topP: 1,
    maxTokens: null,
    ignoreEos: true,
    streamUsage: true,
    requestTimeoutS: 30,
    idleTimeoutS: 10,
    metricsUrls: defaultMetricsUrls(`${s.url}/v1`),
    promptSalt: 'fixed-salt',
    promptTokenizer: 'words' as const,
    maxBatches: null,
    stopAfterDeadBatches: 2,
    ...over,
  };
  return { ...c, requestsDigest: over.requestsDigest ?? requestsDigest(c, w) };
}
