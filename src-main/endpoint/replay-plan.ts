// What a run sends, and the digests that say whether two runs sent the same thing. The workload
// digest identifies the file; the requests digest identifies what actually went to the server:
// the replayed batches (--max-batches), each request's max_tokens (--max-tokens), the API, ignore_eos
// and the sampling parameters. Comparisons match runs by the requests digest: two runs of one file
// with different flags are different experiments.
import { createHash } from 'node:crypto';
import type { EndpointRunConfig } from '../../src-shared/domain/endpoint.ts';
import type { WorkloadFile } from '../../src-shared/domain/workload-file.ts';

/** The batches a run replays: all, or the first --max-batches. */
export function batchesToReplay(config: Pick<EndpointRunConfig, 'maxBatches'>, workload: WorkloadFile): WorkloadFile['batches'] {
  return config.maxBatches === null ? workload.batches : workload.batches.slice(0, config.maxBatches);
}

/** Tokens a request asks the server to generate: --max-tokens, else the workload's (at least 1). */
export function maxTokensOf(config: Pick<EndpointRunConfig, 'maxTokens'>, r: { generation_tokens: number }): number {
  return config.maxTokens ?? Math.max(1, r.generation_tokens);
}

const sha256 = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** sha256 of the workload file's canonical JSON (its batches and block size): equal digests, equal files. */
export function workloadDigest(w: WorkloadFile): string {
  return sha256({ kv_block_tokens: w.kv_block_tokens, batches: w.batches });
}

export type RequestsDigestInput = Pick<EndpointRunConfig, 'api' | 'maxBatches' | 'maxTokens' | 'ignoreEos' | 'temperature' | 'topP'>;

/**
 * sha256 of what a run sends: per replayed batch its delay and requests (prompt id, context size,
 * max_tokens), and the request fields that change the server's work (API, ignore_eos, temperature,
 * top_p). Not in it: the prompt salt (runs are meant to differ there, each starting cold), the model
 * and server (compare names those), stream usage (it changes how tokens are counted, not the work;
 * compare warns when it differs), and the workload's `reused` flags (the server never sees them).
 */
export function requestsDigest(config: RequestsDigestInput, workload: WorkloadFile): string {
  return sha256({
    v: 1,
    api: config.api,
    ignoreEos: config.ignoreEos,
    temperature: config.temperature,
    topP: config.topP,
    batches: batchesToReplay(config, workload).map((b) => ({
      delayMs: b.delay_ms,
      requests: b.requests.map((r) => [r.id, r.prompt_id, r.context_tokens, maxTokensOf(config, r)]),
    })),
  });
}

/**
 * The requests digest of a run stored before kvbench recorded one: derived from the workload file's
 * digest and the stored flags that decided what was sent. Such runs match each other exactly when
 * they replayed the same file with the same flags, and never match a newer run (whose digest is over
 * the requests themselves): compare then warns that the runs may not have sent the same requests.
 */
export function legacyRequestsDigest(config: RequestsDigestInput & Pick<EndpointRunConfig, 'workloadDigest'>): string {
  return `legacy-${sha256({ workloadDigest: config.workloadDigest, api: config.api, maxBatches: config.maxBatches, maxTokens: config.maxTokens, ignoreEos: config.ignoreEos, temperature: config.temperature, topP: config.topP })}`;
}
