import fsp from 'node:fs/promises';
import { KVBENCH_VERSION } from '../../../../src-shared/domain/version.ts';
import {
  WORKLOAD_FILE_FORMAT,
  WORKLOAD_FILE_SCHEMA_VERSION,
  WorkloadFileSchema,
  workloadFileIssues,
  type WorkloadBatch,
  type WorkloadFile,
  type WorkloadGenerateParams,
} from '../../../../src-shared/domain/workload-file.ts';
import { Rng } from '../rng.ts';
import { inputError, jsonErrorLine, unreadable } from './input-errors.ts';
import { printable, wholeFileText } from './text-encoding.ts';
import { blocksOf, cyclePrefix, ReplayWorkload, WORKLOAD_GENERATE_STREAM, type ReplayFeed, type ReplayNames, type ReplaySpec } from './replay-source.ts';
import { replayOptions, type SourceContext } from './source-context.ts';

/** Workload files are written by kvbench and small; anything larger is not one. */
export const MAX_WORKLOAD_FILE_BYTES = 256 * 1024 * 1024;

/** The reference generator's defaults (`workload_generator.py`), plus kvbench's two additions. */
export const WORKLOAD_GENERATE_DEFAULTS: Omit<WorkloadGenerateParams, 'contexts'> = {
  batches_per_context: 4,
  batch_sizes: [8, 16, 32],
  prompt_pool_size: 16,
  reuse_start_batch: 3,
  reuse_ratio: 0.7,
  delay_ms: 0,
  generation_tokens: 128,
  seed: 42,
};

/**
 * The long-context offload workload of the seeds' TensorRT-LLM study, from a seed. Per context size:
 * a pool of distinct prompts; batches of a size drawn from `batch_sizes`; before `reuse_start_batch`
 * request i of batch b takes pool prompt (b × max(batch_sizes) + i) mod pool — the reference
 * generator's formula, kept so files match its own. That walks distinct prompts only while the pool
 * holds reuse_start_batch × max(batch_sizes) of them; a smaller pool makes the warm-up resend prompts
 * (and a batch larger than the pool sends some twice at once): see warmupRepeats. From
 * `reuse_start_batch` on, each request reuses a random pool prompt with probability `reuse_ratio`
 * (the reload) or brings a new one (churn). Same parameters → the same file, byte for byte.
 */
export function generateWorkload(params: WorkloadGenerateParams): WorkloadFile {
  const p = params;
  const rng = new Rng(p.seed, WORKLOAD_GENERATE_STREAM);
  const maxBatch = Math.max(...p.batch_sizes);
  const batches: WorkloadBatch[] = [];
  const seen = new Set<string>();
  for (const ctx of p.contexts) {
    for (let b = 0; b < p.batches_per_context; b++) {
      const size = rng.pick(p.batch_sizes);
      const index = batches.length;
      const requests = [];
      for (let i = 0; i < size; i++) {
        let prompt: number;
        if (b < p.reuse_start_batch) prompt = (b * maxBatch + i) % p.prompt_pool_size;
        else if (rng.next() < p.reuse_ratio) prompt = rng.int(0, p.prompt_pool_size - 1);
        else prompt = p.prompt_pool_size + b * maxBatch + i;
        const promptId = `ctx${ctx}_p${prompt}`;
        requests.push({ id: `b${index}_r${i}`, prompt_id: promptId, context_tokens: ctx, generation_tokens: p.generation_tokens, reused: seen.has(promptId) });
        seen.add(promptId);
      }
      batches.push({ index, context_tokens: ctx, delay_ms: p.delay_ms, requests });
    }
  }
  return WorkloadFileSchema.parse({
    format: WORKLOAD_FILE_FORMAT,
    schema_version: WORKLOAD_FILE_SCHEMA_VERSION,
    generator: { tool: 'kvbench workload generate', version: KVBENCH_VERSION, params: p },
    batches,
  });
}

/** How much of a generated file's warm-up phase (the batches before `reuse_start_batch`) resends prompts. */
export interface WarmupRepeats {
  warmupRequests: number;
  /** Warm-up requests whose prompt an earlier request of the file already sent (the KV is likely still in the GPU cache). */
  repeated: number;
  /** Warm-up requests whose prompt another request of the same batch also carries (sent concurrently). */
  inBatchDuplicates: number;
  /** The pool size at which the warm-up would send distinct prompts only: reuse_start_batch × max(batch_sizes). */
  distinctPoolSize: number;
}

/** Counts, on the file `generateWorkload(p)` wrote, what its warm-up phase really sends. */
export function warmupRepeats(w: WorkloadFile, p: WorkloadGenerateParams): WarmupRepeats {
  const warmupBatches = Math.min(p.reuse_start_batch, p.batches_per_context);
  let warmupRequests = 0;
  let repeated = 0;
  let inBatchDuplicates = 0;
  for (const b of w.batches) {
    // generateWorkload writes batches_per_context batches per context, in order.
    if (b.index % p.batches_per_context >= warmupBatches) continue;
    const perPrompt = new Map<string, number>();
    for (const r of b.requests) perPrompt.set(r.prompt_id, (perPrompt.get(r.prompt_id) ?? 0) + 1);
    warmupRequests += b.requests.length;
    repeated += b.requests.filter((r) => r.reused).length;
    inBatchDuplicates += b.requests.filter((r) => perPrompt.get(r.prompt_id)! > 1).length;
  }
  return { warmupRequests, repeated, inBatchDuplicates, distinctPoolSize: warmupBatches * Math.max(...p.batch_sizes) };
}

/** Reads and validates a workload file; every problem is reported with the file (and line for JSON syntax). */
export async function readWorkloadFile(file: string): Promise<WorkloadFile> {
  let st;
  try {
    st = await fsp.stat(file);
  } catch (err) {
    throw unreadable(file, err);
  }
  if (st.size > MAX_WORKLOAD_FILE_BYTES) {
    throw inputError(file, null, `is ${(st.size / 2 ** 20).toFixed(0)} MiB; a kvbench workload file is at most ${MAX_WORKLOAD_FILE_BYTES / 2 ** 20} MiB`);
  }
  let bytes: Buffer;
  try {
    bytes = await fsp.readFile(file);
  } catch (err) {
    throw unreadable(file, err);
  }
  const decoded = wholeFileText(bytes);
  if (!decoded.ok) throw inputError(file, decoded.line, decoded.problem);
  const text = decoded.text;
  if (text.trim() === '') throw inputError(file, null, 'the file is empty (expected a kvbench workload JSON object)');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    throw inputError(file, jsonErrorLine(text, msg), `not valid JSON (truncated?): ${printable(msg)}`);
  }
  const r = WorkloadFileSchema.safeParse(value);
  if (!r.success) {
    const issues = workloadFileIssues(r.error);
    const shown = issues.slice(0, 10).join('\n  ');
    throw inputError(file, null, `not a valid kvbench workload file:\n  ${shown}${issues.length > 10 ? `\n  … and ${issues.length - 10} more` : ''}`);
  }
  return r.data;
}

export interface WorkloadFileReplayOptions {
  /** Divides the delays between batches; 0 = no pacing. */
  speedup: number;
  replayCycles: number;
}

/**
 * Replays a workload file: every request of a batch arrives at the batch's time; batch k arrives
 * `delay_ms` after batch k−1 (÷ speedup). A request's prompt KV is a chain of `kv_block_tokens`
 * blocks keyed by its prompt id, read where cached and written where not, so a reused prompt hits
 * the entries its first request wrote — wherever the tiers have moved them since. Users are the
 * positions within a batch (`wl_user_{i}`).
 */
export class WorkloadFileFeed implements ReplayFeed {
  readonly #file: string;
  readonly #w: WorkloadFile;
  readonly #o: WorkloadFileReplayOptions;
  #batch = 0;
  #request = 0;
  #cycle = 0;
  #cyclesCompleted = 0;
  #arrivalMs = 0;
  #maxUsers = 0;
  #ended = false;

  constructor(file: string, w: WorkloadFile, opts: WorkloadFileReplayOptions) {
    this.#file = file;
    this.#w = w;
    this.#o = opts;
    this.#arrivalMs = w.batches[0].delay_ms;
  }

  /** Paced only when the file has delays and the speedup is not 0. */
  get paced(): boolean {
    return this.#o.speedup > 0 && this.#w.batches.some((b) => b.delay_ms > 0);
  }

  async pull(max: number, maxBlocks: number): Promise<ReplaySpec[]> {
    const out: ReplaySpec[] = [];
    const w = this.#w;
    let blocks = 0;
    while (out.length < max && blocks < maxBlocks && !this.#ended) {
      const batch = w.batches[this.#batch];
      const r = batch.requests[this.#request];
      const prefix = cyclePrefix(this.#cycle);
      const arrivalNs = this.paced ? Math.round((this.#arrivalMs * 1e6) / this.#o.speedup) : 0;
      const spec = new WorkloadFileSpec(arrivalNs, this.#cycle, this.#request, r, w.kv_block_tokens);
      blocks += spec.prefixBlockCount;
      this.#maxUsers = Math.max(this.#maxUsers, this.#request + 1);
      out.push(spec);
      this.#request++;
      if (this.#request < batch.requests.length) continue;
      this.#request = 0;
      this.#batch++;
      if (this.#batch >= w.batches.length) {
        this.#batch = 0;
        this.#cyclesCompleted++;
        if (this.#o.replayCycles > 0 && this.#cyclesCompleted >= this.#o.replayCycles) this.#ended = true;
        else this.#cycle++;
      }
      this.#arrivalMs += w.batches[this.#batch].delay_ms;
    }
    return out;
  }

  activeUsers(): number {
    return this.#maxUsers;
  }

  describe(): Record<string, unknown> {
    const w = this.#w;
    let requests = 0;
    let reused = 0;
    const prompts = new Set<string>();
    for (const b of w.batches) {
      requests += b.requests.length;
      for (const r of b.requests) {
        if (r.reused) reused++;
        prompts.add(r.prompt_id);
      }
    }
    return {
      format: 'kvbench-workload-json',
      file: this.#file,
      schema_version: w.schema_version,
      batches: w.batches.length,
      requests,
      distinct_prompts: prompts.size,
      reused_requests: reused,
      contexts: [...new Set(w.batches.map((b) => b.context_tokens))],
      kv_block_tokens: w.kv_block_tokens,
      generator: w.generator ?? null,
      pacing: this.paced ? { mode: 'batch-delays', trace_speedup: this.#o.speedup } : { mode: 'unpaced', trace_speedup: this.#o.speedup },
      replay_cycles: this.#o.replayCycles,
    };
  }
}

type WorkloadRequest = WorkloadBatch['requests'][number];

/**
 * One request of a workload file as replayed (the file's request object, not a copy): user
 * `wl_user_{position in its batch}`, its own entry `[c{n}_]wl_req_{id}`, and its prompt's KV as a chain of
 * `kv_block_tokens` blocks `[c{n}_]wl_{prompt_id}_b{k}`.
 */
class WorkloadFileSpec implements ReplaySpec {
  readonly arrivalNs: number;
  readonly cycle: number;
  readonly userIndex: number;
  readonly #request: WorkloadRequest;
  readonly #blockTokens: number;

  constructor(arrivalNs: number, cycle: number, userIndex: number, request: WorkloadRequest, blockTokens: number) {
    this.arrivalNs = arrivalNs;
    this.cycle = cycle;
    this.userIndex = userIndex;
    this.#request = request;
    this.#blockTokens = blockTokens;
  }

  get contextTokens(): number {
    return this.#request.context_tokens;
  }

  get generationTokens(): number {
    return this.#request.generation_tokens;
  }

  get conversationId(): null {
    return null;
  }

  get turn(): number {
    return 1;
  }

  get prefixBlockCount(): number {
    return Math.ceil(this.#request.context_tokens / this.#blockTokens);
  }

  names(): ReplayNames {
    const r = this.#request;
    const prefix = cyclePrefix(this.cycle);
    const ids = Array.from({ length: this.prefixBlockCount }, (_, k) => k);
    return {
      userId: `wl_user_${this.userIndex}`,
      requestId: `${prefix}${r.id}`,
      cacheKey: `${prefix}wl_req_${r.id}`,
      prefixBlocks: blocksOf(ids, r.context_tokens, this.#blockTokens, (k) => `${prefix}wl_${r.prompt_id}_b${k}`),
    };
  }
}

/** Workload-file replay (`--dataset-path` with a kvbench workload file). */
export async function createWorkloadFileSource(ctx: SourceContext, file: string): Promise<ReplayWorkload> {
  const o = ctx.options;
  const w = await readWorkloadFile(file);
  const feed = new WorkloadFileFeed(file, w, { speedup: o.traceSpeedup, replayCycles: o.replayCycles });
  return ReplayWorkload.start(feed, replayOptions(ctx, 'workload-file', feed.paced, false));
}
