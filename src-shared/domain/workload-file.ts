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
/** A model's output lives in its context window: no request generates more than the longest one. */
export const MAX_GENERATION_TOKENS = MAX_CONTEXT_TOKENS;
/**
 * KV blocks (prefix-cache entries) of one request at most. The engine builds and tracks each block of
 * a request as it is issued: at 65,536 its event loop stalls no longer than at start-up (0.6 s), at
 * 262,144 for about 1 s per request, at a million for 5.7 s, and at 10 million its heap runs out. The
 * bound keeps a 1 M-token context at 16-token blocks (vLLM's) and the 10 M maximum at 153 or more;
 * a Mooncake trace (512-token blocks) needs at most 19,532.
 */
export const MAX_PREFIX_BLOCKS_PER_REQUEST = 65_536;
/**
 * Requests of one workload file at most: a generated file of a million takes about 200 MB (the reader
 * takes 256 MiB) and 7.5 s of the engine's start, and `workload generate` 1.2 GB of memory.
 */
export const MAX_WORKLOAD_REQUESTS = 1_000_000;
/** The longest pause between two batches: a day (a longer one is a mistake, and timers cap at 24.8 days). */
export const MAX_DELAY_MS = 86_400_000;

const positiveInt = (what: string) =>
  z.number({ error: `${what} must be a number` }).int({ error: `${what} must be an integer` }).positive({ error: `${what} must be positive` });
const contextTokens = (what: string) =>
  positiveInt(what).max(MAX_CONTEXT_TOKENS, { error: `${what} must be at most ${MAX_CONTEXT_TOKENS.toLocaleString('en-US')} (longer than any model's context)` });
const nonNegativeInt = (what: string) =>
  z.number({ error: `${what} must be a number` }).int({ error: `${what} must be an integer` }).nonnegative({ error: `${what} cannot be negative` });
const generationTokens = (what: string) =>
  nonNegativeInt(what).max(MAX_GENERATION_TOKENS, { error: `${what} must be at most ${MAX_GENERATION_TOKENS.toLocaleString('en-US')} (more than any model's context holds)` });
const delayMs = (what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .min(0, { error: `${what} cannot be negative` })
    .max(MAX_DELAY_MS, { error: `${what} must be at most ${MAX_DELAY_MS.toLocaleString('en-US')} (a day)` });
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

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
  delay_ms: delayMs('--delay-ms'),
  /** Tokens generated per request. */
  generation_tokens: generationTokens('--generation-tokens'),
  seed: nonNegativeInt('--seed').max(MAX_SEED, { error: `--seed must be between 0 and ${MAX_SEED}` }),
}).superRefine((p, ctx) => {
  // The most the parameters can make (each batch's size is drawn): refused before anything is built.
  const maxRequests = p.contexts.length * p.batches_per_context * Math.max(...p.batch_sizes);
  if (maxRequests > MAX_WORKLOAD_REQUESTS) {
    ctx.addIssue({
      code: 'custom',
      path: ['batches_per_context'],
      message:
        `--contexts (${plural(p.contexts.length, 'size')}) × --batches-per-context ${p.batches_per_context} × the largest of --batch-sizes ${Math.max(...p.batch_sizes)} ` +
        `is up to ${maxRequests.toLocaleString('en-US')} requests; a workload file holds at most ${MAX_WORKLOAD_REQUESTS.toLocaleString('en-US')}`,
    });
  }
});
export type WorkloadGenerateParams = z.output<typeof WorkloadGenerateParamsSchema>;

export const WorkloadRequestSchema = z.strictObject({
  /** Unique within the file. */
  id: z.string().min(1),
  /** Requests with equal prompt_id have the same prompt (and the same context size). */
  prompt_id: z.string().min(1),
  context_tokens: contextTokens('context_tokens'),
  generation_tokens: generationTokens('generation_tokens'),
  /** True when an earlier request (in this or an earlier batch) had the same prompt_id. */
  reused: z.boolean(),
});

export const WorkloadBatchSchema = z.strictObject({
  /** 0-based position of the batch in the file. */
  index: nonNegativeInt('index'),
  /** The context size this batch was generated for. */
  context_tokens: contextTokens('context_tokens'),
  /** Milliseconds after the previous batch's arrival (after the start, for batch 0). */
  delay_ms: delayMs('delay_ms'),
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
    kv_block_tokens: positiveInt('kv_block_tokens')
      .max(MAX_CONTEXT_TOKENS, { error: `kv_block_tokens must be at most ${MAX_CONTEXT_TOKENS.toLocaleString('en-US')} (longer than any model's context)` })
      .default(DEFAULT_KV_BLOCK_TOKENS),
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
        const blocks = Math.ceil(r.context_tokens / w.kv_block_tokens);
        if (blocks > MAX_PREFIX_BLOCKS_PER_REQUEST) {
          ctx.addIssue({
            code: 'custom',
            path: [...path, 'context_tokens'],
            message:
              `${r.context_tokens} tokens in blocks of kv_block_tokens ${w.kv_block_tokens} make ${blocks.toLocaleString('en-US')} KV blocks; ` +
              `a request holds at most ${MAX_PREFIX_BLOCKS_PER_REQUEST.toLocaleString('en-US')} ` +
              `(kv_block_tokens ${Math.ceil(r.context_tokens / MAX_PREFIX_BLOCKS_PER_REQUEST)} or more)`,
          });
        }
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
