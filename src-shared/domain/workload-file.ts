/**
 * The kvbench workload file: a fixed, replayable list of request batches for KV-cache offload studies
 * (the long-context "offload, then reload" workload of the seeds' TensorRT-LLM study). `kvbench workload
 * generate` writes it; `kvbench run --dataset-path FILE` replays it through the tiers; the endpoint
 * benchmark sends the same batches to a serving engine. One schema for all three, versioned.
 *
 * A batch's requests arrive together; batch k arrives `delay_ms` after batch k−1 (batch 0: after the
 * start). Requests with the same `prompt_id` carry the same prompt, so a later one can reuse the KV cache
 * of an earlier one (a hit) instead of recomputing it.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';

export const WORKLOAD_FILE_FORMAT = 'kvbench-workload';
export const WORKLOAD_FILE_SCHEMA_VERSION = 1;
/** Tokens per KV block when a prompt's cache is split into blocks (the Mooncake traces' block size). */
export const DEFAULT_KV_BLOCK_TOKENS = 512;
const MAX_SEED = 2 ** 32 - 1;

/**
 * More tokens than any model's context window (the longest are a few million): a larger count is a
 * mistake, and would make one entry's bookkeeping alone exhaust memory.
 */
export const MAX_CONTEXT_TOKENS = 10_000_000;

const positiveInt = (what: string) =>
  z.number({ error: `${what} must be a number` }).int({ error: `${what} must be an integer` }).positive({ error: `${what} must be positive` });
const contextTokens = (what: string) =>
  positiveInt(what).max(MAX_CONTEXT_TOKENS, { error: `${what} must be at most ${MAX_CONTEXT_TOKENS.toLocaleString('en-US')} (longer than any model's context)` });
const nonNegativeInt = (what: string) =>
  z.number({ error: `${what} must be a number` }).int({ error: `${what} must be an integer` }).nonnegative({ error: `${what} cannot be negative` });

/** The parameters of `kvbench workload generate` (the seed study's `workload_generator.py` flags). */
export const WorkloadGenerateParamsSchema = z.strictObject({
  /** Target context sizes in tokens; each gets its own prompt pool and batches. */
  contexts: z.array(contextTokens('--contexts'), { error: '--contexts must be a list of token counts' }).min(1, { error: '--contexts needs at least one value' }),
  batches_per_context: positiveInt('--batches-per-context'),
  /** Each batch's size is drawn from these. */
  batch_sizes: z.array(positiveInt('--batch-sizes')).min(1, { error: '--batch-sizes needs at least one value' }),
  /** Distinct prompts per context size, offered first and reused later. */
  prompt_pool_size: positiveInt('--prompt-pool-size'),
  /** From this batch (0-based, per context) on, requests reuse pool prompts with probability reuse_ratio. */
  reuse_start_batch: nonNegativeInt('--reuse-start-batch'),
  reuse_ratio: z.number({ error: '--reuse-ratio must be a number' }).min(0, { error: '--reuse-ratio must be between 0 and 1' }).max(1, { error: '--reuse-ratio must be between 0 and 1' }),
  /** Milliseconds between batch arrivals. */
  delay_ms: z.number({ error: '--delay-ms must be a number' }).min(0, { error: '--delay-ms cannot be negative' }),
  /** Tokens generated per request. */
  generation_tokens: nonNegativeInt('--generation-tokens'),
  seed: nonNegativeInt('--seed').max(MAX_SEED, { error: `--seed must be between 0 and ${MAX_SEED}` }),
});
export type WorkloadGenerateParams = z.output<typeof WorkloadGenerateParamsSchema>;

export const WorkloadRequestSchema = z.strictObject({
  /** Unique within the file. */
  id: z.string().min(1),
  /** Requests with equal prompt_id have the same prompt (and the same context size). */
  prompt_id: z.string().min(1),
  context_tokens: contextTokens('context_tokens'),
  generation_tokens: nonNegativeInt('generation_tokens'),
  /** True when an earlier request (in this or an earlier batch) had the same prompt_id. */
  reused: z.boolean(),
});

export const WorkloadBatchSchema = z.strictObject({
  /** 0-based position of the batch in the file. */
  index: nonNegativeInt('index'),
  /** The context size this batch was generated for. */
  context_tokens: contextTokens('context_tokens'),
  /** Milliseconds after the previous batch's arrival (after the start, for batch 0). */
  delay_ms: z.number().min(0, { error: 'delay_ms cannot be negative' }),
  requests: z.array(WorkloadRequestSchema).min(1, { error: 'a batch needs at least one request' }),
});
export type WorkloadBatch = z.output<typeof WorkloadBatchSchema>;

export const WorkloadFileSchema = z
  .strictObject({
    format: z.literal(WORKLOAD_FILE_FORMAT, { error: `format must be "${WORKLOAD_FILE_FORMAT}"` }),
    schema_version: z.literal(WORKLOAD_FILE_SCHEMA_VERSION, {
      error: (iss) => `unsupported schema_version ${JSON.stringify(iss.input)} (this kvbench reads version ${WORKLOAD_FILE_SCHEMA_VERSION})`,
    }),
    /** Tokens per KV block when a prompt's cache is stored as blocks (kvbench's replay). */
    kv_block_tokens: positiveInt('kv_block_tokens').default(DEFAULT_KV_BLOCK_TOKENS),
    /** How the file was made (absent in hand-written files). */
    generator: z
      .strictObject({
        tool: z.string(),
        version: z.string(),
        params: WorkloadGenerateParamsSchema,
      })
      .optional(),
    batches: z.array(WorkloadBatchSchema).min(1, { error: 'a workload needs at least one batch' }),
  })
  .superRefine((w, ctx) => {
    const ids = new Set<string>();
    const promptContext = new Map<string, number>();
    w.batches.forEach((b, bi) => {
      if (b.index !== bi) ctx.addIssue({ code: 'custom', path: ['batches', bi, 'index'], message: `batch index must be ${bi} (batches in order), got ${b.index}` });
      b.requests.forEach((r, ri) => {
        const path = ['batches', bi, 'requests', ri];
        if (ids.has(r.id)) ctx.addIssue({ code: 'custom', path: [...path, 'id'], message: `duplicate request id "${r.id}"` });
        ids.add(r.id);
        const known = promptContext.get(r.prompt_id);
        if (known !== undefined && known !== r.context_tokens) {
          ctx.addIssue({
            code: 'custom',
            path: [...path, 'context_tokens'],
            message: `prompt "${r.prompt_id}" has ${r.context_tokens} context tokens here but ${known} earlier (one prompt, one size)`,
          });
        }
        if (known === undefined) promptContext.set(r.prompt_id, r.context_tokens);
      });
    });
  });
export type WorkloadFile = z.output<typeof WorkloadFileSchema>;

/** Every problem of a candidate workload file, as `path: message` lines; empty when valid. */
export function workloadFileIssues(error: z.ZodError): string[] {
  return error.issues.map((i) => (i.path.length > 0 ? `${formatPath(i.path)}: ${i.message}` : i.message));
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? String(p) : `.${String(p)}`;
  return out;
}
