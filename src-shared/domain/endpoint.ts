/**
 * The real-engine benchmark: a kvbench workload file replayed against an OpenAI-compatible serving
 * endpoint (vLLM, TensorRT-LLM's trtllm-serve, SGLang …), one run per "system label", two systems
 * compared side by side. This module holds what the CLI, the store, the exports and the app share:
 * the run configuration, the per-request sample, the aggregates, the server cache metrics and the
 * stored run (each a zod schema with its type inferred from it), the metric catalogue, and the shape
 * and words of a comparison of two systems. The comparison itself is src-main's
 * (src-main/endpoint/endpoint-compare.ts).
 *
 * Units are in every name: `…Ms` milliseconds, `…S` seconds, `…PerS` per second, `…Bytes` bytes.
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';
import { NOISE_RULE } from './statistics.ts';
import { groupedFixed } from './number-text.ts';

// ---------------------------------------------------------------------------------------------
// Configuration

const ENDPOINT_APIS = ['completions', 'chat'] as const;
export type EndpointApi = (typeof ENDPOINT_APIS)[number];

/** Where the prompt token counts come from (see src-main/endpoint/prompt-builder.ts). */
export type PromptTokenizer = 'gpt-tokenizer cl100k_base' | 'words';

const finite = (what: string) => z.number({ error: `${what} must be a number` }).refine(Number.isFinite, { error: `${what} must be a finite number` });

export const EndpointRunConfigSchema = z.strictObject({
  /** The server's base URL as normalised: scheme, host, port and path prefix, ending in /v1. */
  baseUrl: z.string().min(1),
  model: z.string().min(1, { error: '--model must not be empty' }),
  api: z.enum(ENDPOINT_APIS, { error: `--api must be one of ${ENDPOINT_APIS.join(', ')}` }),
  systemLabel: z
    .string()
    .min(1, { error: '--system-label must not be empty', abort: true })
    .max(100, { error: '--system-label is at most 100 characters' })
    .regex(/^[A-Za-z0-9][A-Za-z0-9._:+-]*$/, { error: '--system-label may hold letters, digits and . _ : + - (starting with a letter or digit)' }),
  notes: z.string().max(10_000, { error: '--notes is at most 10,000 characters' }).nullable(),
  /** Absolute path of the workload file as given (null when the workload came from elsewhere, e.g. a test). */
  workloadFile: z.string().nullable(),
  /** sha256 of the workload file's canonical JSON: the same file (not necessarily the same requests: see requestsDigest). */
  workloadDigest: z.string().min(1),
  /**
   * sha256 of what the run sent: the replayed batches with each request's max_tokens, the API,
   * ignore_eos, temperature and top_p (src-main/endpoint/replay-plan.ts). Equal digests: the same
   * requests. Runs stored before it existed read back with `legacy-…`, derived from the file digest
   * and their stored flags.
   */
  requestsDigest: z.string().min(1),
  temperature: finite('--temperature').min(0, { error: '--temperature must be between 0 and 2' }).max(2, { error: '--temperature must be between 0 and 2' }),
  topP: finite('--top-p').gt(0, { error: '--top-p must be in (0, 1]' }).max(1, { error: '--top-p must be in (0, 1]' }),
  /** Overrides every request's generation_tokens; null = the workload's per-request value. */
  maxTokens: z.number().int({ error: '--max-tokens must be an integer' }).positive({ error: '--max-tokens must be positive' }).nullable(),
  /** Sends `ignore_eos: true` (vLLM, SGLang, TensorRT-LLM) so every request generates exactly max_tokens. */
  ignoreEos: z.boolean(),
  /** Sends `stream_options: {include_usage: true}`: the server's own token counts. */
  streamUsage: z.boolean(),
  /** A request taking longer than this in total is aborted and recorded as a timeout. */
  requestTimeoutS: finite('--request-timeout-s').positive({ error: '--request-timeout-s must be positive' }),
  /** A stream that sends nothing for this long is aborted and recorded as a timeout. */
  idleTimeoutS: finite('--idle-timeout-s').positive({ error: '--idle-timeout-s must be positive' }),
  /** Prometheus (or trtllm-serve JSON) pages scraped before and after the run; empty = none. */
  metricsUrls: z.array(z.string()),
  /** Mixed into every prompt: equal salts give identical prompt texts across runs (and a warm server cache). */
  promptSalt: z.string().min(1, { error: '--prompt-salt must not be empty' }).max(200, { error: '--prompt-salt is at most 200 characters' }),
  promptTokenizer: z.enum(['gpt-tokenizer cl100k_base', 'words']),
  /** Replay only the first N batches (null = all). */
  maxBatches: z.number().int({ error: '--max-batches must be an integer' }).positive({ error: '--max-batches must be positive' }).nullable(),
  /** Stop after this many consecutive batches in which no request got an answer (a server that is gone). */
  stopAfterDeadBatches: z.number().int({ error: '--stop-after-dead-batches must be an integer' }).positive({ error: '--stop-after-dead-batches must be positive' }),
});
export type EndpointRunConfig = z.output<typeof EndpointRunConfigSchema>;

/** Node's timers take at most 2^31 − 1 ms (about 24.8 days): a longer delay fires at once. */
const MAX_TIMEOUT_S = 2_147_483;

/**
 * What makes a configuration unrunnable by this kvbench though it is a valid record: the timeouts
 * beyond what a timer can hold (each request would time out at once). Not in the schema, so a stored
 * run that has such a value still reads back.
 */
export function endpointRunLimitIssues(c: Pick<EndpointRunConfig, 'requestTimeoutS' | 'idleTimeoutS'>): string[] {
  const issues: string[] = [];
  for (const [flag, v] of [['--request-timeout-s', c.requestTimeoutS], ['--idle-timeout-s', c.idleTimeoutS]] as const) {
    if (v > MAX_TIMEOUT_S) issues.push(`${flag} must be at most ${MAX_TIMEOUT_S} (about 24.8 days, the longest timer Node can set), got ${v}`);
  }
  return issues;
}

// ---------------------------------------------------------------------------------------------
// Per-request samples

/**
 * What became of one request. `ok`: the stream ended properly (`[DONE]` or a finish reason).
 * Everything else is a failure, recorded with its reason; the run goes on without it.
 */
export const REQUEST_STATUSES = [
  'ok',
  /** The server answered with a non-2xx status (its body's message is kept). */
  'http_error',
  /** --request-timeout-s or --idle-timeout-s ran out. */
  'timeout',
  /** No connection, or the connection broke before the response began. */
  'connection_error',
  /** A `data:` line that is not JSON, or a chunk without the OpenAI fields. */
  'malformed_stream',
  /** The stream carried an `error` object (the server failed mid-request). */
  'server_error',
  /** The stream ended (connection closed) without `[DONE]` or a finish reason. */
  'incomplete',
  /** Interrupted by the user (Ctrl-C) while in flight. */
  'cancelled',
  /** Never sent: the run stopped before its batch (interrupted, or the server was gone). */
  'not_sent',
] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export interface EndpointRequestSample {
  /** Position in the replayed workload, 0-based over all requests. */
  seq: number;
  requestId: string;
  batchIndex: number;
  promptId: string;
  /** The workload's flag: an earlier request of the file had the same prompt (the TTFT split does not use it: see promptReuse). */
  reused: boolean;
  /** Requested context size in tokens (the workload's). */
  contextTokens: number;
  /** Characters of the prompt text sent. */
  promptChars: number;
  maxTokens: number;
  status: RequestStatus;
  httpStatus: number | null;
  error: string | null;
  /** When it was sent, ms after the run's first request (null when not sent). */
  sentOffsetMs: number | null;
  /** Send → first content token. */
  ttftMs: number | null;
  /** Send → end of the stream. */
  e2eMs: number | null;
  /** (last token − first token) ÷ (output tokens − 1): decode time per output token after the first. */
  tpotMs: number | null;
  /** Output tokens: the server's usage.completion_tokens when reported, else the content chunks counted. */
  outputTokens: number | null;
  /** Content-bearing chunks received. */
  outputChunks: number;
  tokenCountSource: 'usage' | 'chunks' | null;
  /** The server's usage.prompt_tokens (its tokenizer's count of the prompt). */
  promptTokens: number | null;
  /** The server's usage.prompt_tokens_details.cached_tokens, when it reports it. */
  cachedPromptTokens: number | null;
  finishReason: string | null;
}

// ---------------------------------------------------------------------------------------------
// Aggregates

const count = z.number().int().nonnegative();
const nnum = z.number().nullable();

/** Percentiles of one per-request quantity (linear interpolation between closest ranks, numpy's default). */
const DistributionSchema = z.object({ n: count, mean: nnum, p50: nnum, p95: nnum, p99: nnum, max: nnum });
export type Distribution = z.infer<typeof DistributionSchema>;

const ContextBreakdownSchema = z.object({
  contextTokens: z.number(),
  requests: count,
  ok: count,
  ttftMs: DistributionSchema,
  e2eMs: DistributionSchema,
  ttftReusedMs: DistributionSchema,
  ttftFreshMs: DistributionSchema,
});
export type ContextBreakdown = z.infer<typeof ContextBreakdownSchema>;

/**
 * How a run's output tokens were counted, over its successful requests. Without the server's usage
 * the content chunks are counted, which undercounts a server that puts several tokens in one chunk:
 * output tok/s too low, time per output token too high. `chunksBelowMaxTokens` are chunk-counted
 * requests that ended at max_tokens (finish_reason "length") with fewer chunks than max_tokens —
 * proof that they were undercounted.
 */
const TokenCountSourcesSchema = z.object({ usage: count, chunks: count, chunksBelowMaxTokens: count });
export type TokenCountSources = z.infer<typeof TokenCountSourcesSchema>;

/** Why a run's output token counts may be too low (null when the server reported usage for every request). */
export function tokenCountCaveat(t: TokenCountSources): string | null {
  if (t.chunks === 0) return null;
  const proof =
    t.chunksBelowMaxTokens > 0
      ? `; ${t.chunksBelowMaxTokens} of them stopped at max_tokens (finish_reason length) with fewer chunks than max_tokens: undercounted`
      : '';
  return (
    `output tokens of ${t.chunks} of ${t.chunks + t.usage} successful request(s) were counted as content chunks (the server sent no usage)${proof}` +
    ' — where a chunk carries several tokens, output tokens/s is too low and time per output token too high'
  );
}

export const EndpointAggregatesSchema = z.object({
  requestsTotal: count,
  requestsOk: count,
  requestsFailed: count,
  requestsNotSent: count,
  /**
   * The time the server had the run's requests: each batch's first send to its last finish, summed
   * (the workload's delay_ms pauses between batches left out). From kvbench 0.5.0 on; before, the span.
   */
  durationS: z.number(),
  /** First request sent → last one finished, the pauses between batches included (wall clock). Absent in runs stored before 0.5.0. */
  spanS: z.number().optional(),
  /** Successful requests ÷ duration. */
  requestsPerS: nnum,
  /** Output tokens of successful requests ÷ duration. */
  outputTokensPerS: nnum,
  /** Requested context tokens of successful requests ÷ duration. */
  contextTokensPerS: nnum,
  outputTokensTotal: z.number(),
  /** Sum of the server-reported prompt tokens (null when the server never reported usage). */
  serverPromptTokensTotal: nnum,
  /** Sum of the server-reported cached prompt tokens (null when never reported). */
  cachedPromptTokensTotal: nnum,
  /** Server prompt tokens ÷ requested context tokens over requests with usage: how well the prompt builder hit the size. */
  promptTokensPerRequested: nnum,
  ttftMs: DistributionSchema,
  e2eMs: DistributionSchema,
  tpotMs: DistributionSchema,
  /** Gaps between consecutive content chunks, pooled over every request (HDR histogram, 3 significant digits). */
  itlMs: DistributionSchema,
  /**
   * TTFT of requests whose prompt finished ok in an earlier batch (server cache or offload reload) vs
   * prompts never sent before (full prefill). Neither holds a prompt duplicated within its batch or
   * one whose earlier sends all failed (src-main/endpoint/aggregate.ts, promptReuse).
   */
  ttftReusedMs: DistributionSchema,
  ttftFreshMs: DistributionSchema,
  byContext: z.array(ContextBreakdownSchema),
  /** Failures per status (ok excluded). */
  failuresByStatus: z.partialRecord(z.enum(REQUEST_STATUSES), count),
  /** Where the successful requests' output token counts came from (tokenCountSources). */
  tokenCountSources: TokenCountSourcesSchema,
  /** The pooled inter-token histogram, HdrHistogram V2 compressed base64, for merging runs. */
  itlHistogram: z.object({ hdr: z.string(), count, sumNs: z.number() }).nullable(),
});
export type EndpointAggregates = z.infer<typeof EndpointAggregatesSchema>;

// ---------------------------------------------------------------------------------------------
// Runs stored before kvbench 0.5.0: their duration and rates were over the span (pauses included)

/** The flat metrics kvbench 0.5.0 redefined (the span → the batches' own times): what a recompute replaces. */
export const SPAN_RATE_KEYS = ['duration_s', 'requests_per_s', 'output_tokens_per_s', 'context_tokens_per_s'] as const;
export type SpanRateKey = (typeof SPAN_RATE_KEYS)[number];

/**
 * A run stored before kvbench 0.5.0 (no aggregates.spanS) took duration_s over the span, first send
 * to last finish with the pauses between batches, and its rates over that. Its stored requests hold
 * each request's batch, send time and end-to-end time, so the store recomputes them on read as
 * today's kvbench takes them (src-main/endpoint/aggregate.ts, recomputeSpanRates), in memory: the
 * stored row is never changed. Where the requests cannot reproduce the run (some lost, or not
 * matching what was stored), the stored values are kept, and marked, with why.
 */
export const LegacyRatesSchema = z.object({
  /** The kvbench that stored the run (before 0.5.0). */
  storedBy: z.string(),
  /** The values as stored, over the span (SPAN_RATE_KEYS; a rate the run had none of is absent). */
  stored: z.partialRecord(z.enum(SPAN_RATE_KEYS), z.number()),
  /** The kvbench that recomputed them from the stored requests (its definition); null: kept as stored. */
  recomputedBy: z.string().nullable(),
  /** Why they were not recomputed (null when they were). */
  notRecomputed: z.string().nullable(),
});
export type LegacyRates = z.infer<typeof LegacyRatesSchema>;

/** Marks a value recomputed from the stored requests (list, show, compare). */
export const RECOMPUTED_MARK = '†';
/** Marks a value kept as a kvbench before 0.5.0 stored it: over the span, pauses included. */
export const SPAN_BASED_MARK = '‡';

/** What RECOMPUTED_MARK means, under a comparison that shows it. */
export const RECOMPUTED_LEGEND =
  `${RECOMPUTED_MARK}: recomputed from the stored requests of a run stored before kvbench 0.5.0 (which took duration and rates over the span, pauses included), ` +
  "over the batches' own times as kvbench 0.5.0 and later take them: like for like with later runs (the notes give the values it stored)";
/** What SPAN_BASED_MARK means, under a comparison that shows it. */
export const SPAN_BASED_LEGEND =
  `${SPAN_BASED_MARK}: kept as a kvbench before 0.5.0 stored it, over the span (pauses included), as its requests could not reproduce the run (the warnings say why): ` +
  'not comparable with the rates of kvbench 0.5.0 and later';

const SPAN_RATE_UNITS: Record<SpanRateKey, string> = { duration_s: 's', requests_per_s: 'req/s', output_tokens_per_s: 'output tok/s', context_tokens_per_s: 'context tok/s' };

/** A stored value in its unit, as `endpoint list` rounds it ("8.51 req/s", "2,178 context tok/s", "0.71 s"). */
export function spanRateValueText(key: SpanRateKey, v: number): string {
  const digits = key !== 'duration_s' && Math.abs(v) >= 100 ? 0 : 2;
  return `${groupedFixed(v, digits)} ${SPAN_RATE_UNITS[key]}`;
}

const storedValuesText = (l: LegacyRates, keys: readonly SpanRateKey[] = SPAN_RATE_KEYS): string =>
  keys.flatMap((k) => (l.stored[k] === undefined ? [] : [spanRateValueText(k, l.stored[k])])).join(', ') || 'no rates';

/**
 * What a metric's value is, where the run was stored before 0.5.0 (null for other metrics and runs):
 * "recomputed from stored requests; stored by kvbench 0.4.0 as 8.51 req/s (over the span, pauses included)".
 */
export function legacyRateNote(l: LegacyRates | null | undefined, key: string): string | null {
  if (!l || !(SPAN_RATE_KEYS as readonly string[]).includes(key)) return null;
  const was = `stored by kvbench ${l.storedBy} as ${storedValuesText(l, [key as SpanRateKey])} (over the span, pauses included)`;
  return l.recomputedBy !== null
    ? `recomputed from stored requests; ${was}`
    : `${was}, kept as stored, not comparable with kvbench 0.5.0 and later: not recomputed, ${l.notRecomputed}`;
}

/** The run's duration and rates in one sentence: recomputed (with what was stored) or kept (with why). */
export function legacyRatesText(l: LegacyRates): string {
  return l.recomputedBy !== null
    ? `stored by kvbench ${l.storedBy}, which took duration and rates over the span (pauses included): ${storedValuesText(l)}; ` +
        `recomputed from the stored requests over the batches' own times, as kvbench 0.5.0 and later take them`
    : `stored by kvbench ${l.storedBy} over the span (pauses included): ${storedValuesText(l)}, kept as stored — not recomputed: ${l.notRecomputed}; ` +
        'not comparable with the rates of kvbench 0.5.0 and later';
}

// ---------------------------------------------------------------------------------------------
// Server cache metrics (scraped from the server before and after the run)

export type ServerMetricUnit = 'tokens' | 'blocks' | 'bytes' | 'seconds' | 'count' | 'ratio' | 'bytes/s';

export interface ServerMetricSource {
  /** The metric family as served (Prometheus name without `_total`, or a trtllm-serve JSON field). */
  name: string;
  /** Only samples with these label values (compared case-insensitively). */
  labels?: Record<string, string>;
}

export interface ServerMetricDefinition {
  key: string;
  label: string;
  unit: ServerMetricUnit;
  kind: 'counter' | 'gauge';
  /** Which engines expose it. */
  engines: readonly ('vllm' | 'sglang' | 'trtllm')[];
  /** Tried in order; the first family with samples is used (so the same quantity is never counted twice). */
  sources: readonly ServerMetricSource[];
  description: string;
}

const sm = (
  key: string,
  label: string,
  unit: ServerMetricUnit,
  kind: 'counter' | 'gauge',
  engines: ServerMetricDefinition['engines'],
  sources: ServerMetricSource[],
  description: string,
): ServerMetricDefinition => Object.freeze({ key, label, unit, kind, engines, sources: Object.freeze(sources), description });

/**
 * The server metric families kvbench reads. Counters are reported as after − before (the run's own
 * share); gauges as their value before and after. Families come from the engines' documentation and
 * sources: vLLM (/metrics), SGLang (/metrics with --enable-metrics), TensorRT-LLM's trtllm-serve
 * (/prometheus/metrics, and the JSON iteration statistics on /metrics with enable_iter_perf_stats).
 * `trtllm-json:` sources are fields of the last iteration's `kvCacheStats` in that JSON.
 */
export const SERVER_METRICS: readonly ServerMetricDefinition[] = Object.freeze([
  sm('prefix_cache_queries', 'Prefix cache queries', 'tokens', 'counter', ['vllm'], [{ name: 'vllm:prefix_cache_queries' }, { name: 'vllm:gpu_prefix_cache_queries' }],
    'Prompt tokens looked up in the GPU prefix cache (vLLM v1).'),
  sm('prefix_cache_hits', 'Prefix cache hits', 'tokens', 'counter', ['vllm'], [{ name: 'vllm:prefix_cache_hits' }, { name: 'vllm:gpu_prefix_cache_hits' }],
    'Prompt tokens found in the GPU prefix cache (vLLM v1).'),
  sm('external_prefix_cache_queries', 'External (offload) cache queries', 'tokens', 'counter', ['vllm'], [{ name: 'vllm:external_prefix_cache_queries' }],
    'Prompt tokens looked up through the KV connector (CPU / disk offload, LMCache …).'),
  sm('external_prefix_cache_hits', 'External (offload) cache hits', 'tokens', 'counter', ['vllm'], [{ name: 'vllm:external_prefix_cache_hits' }],
    'Prompt tokens loaded through the KV connector instead of recomputed.'),
  sm('prompt_tokens_from_offload', 'Prompt tokens from offload', 'tokens', 'counter', ['vllm'], [{ name: 'vllm:prompt_tokens_by_source', labels: { source: 'external_kv_transfer' } }],
    'Prompt tokens whose KV came from the connector (vLLM prompt_tokens_by_source).'),
  sm('prompt_tokens_from_local_cache', 'Prompt tokens from GPU cache', 'tokens', 'counter', ['vllm'], [{ name: 'vllm:prompt_tokens_by_source', labels: { source: 'local_cache_hit' } }],
    'Prompt tokens whose KV was already in the GPU prefix cache.'),
  sm('prompt_tokens_computed', 'Prompt tokens computed', 'tokens', 'counter', ['vllm'], [{ name: 'vllm:prompt_tokens_by_source', labels: { source: 'local_compute' } }],
    'Prompt tokens prefilled from scratch.'),
  sm('cached_prompt_tokens', 'Cached prompt tokens', 'tokens', 'counter', ['vllm', 'sglang', 'trtllm'],
    [{ name: 'sglang:cached_tokens' }, { name: 'vllm:prompt_tokens_cached' }, { name: 'trtllm_prompt_cached_tokens' }],
    'Prompt tokens served from the cache (every tier the engine counts).'),
  sm('prompt_tokens', 'Prompt tokens (server)', 'tokens', 'counter', ['vllm', 'sglang', 'trtllm'],
    [{ name: 'vllm:prompt_tokens' }, { name: 'sglang:prompt_tokens' }, { name: 'trtllm_prompt_tokens' }], 'Prompt tokens the server processed.'),
  sm('generation_tokens', 'Generation tokens (server)', 'tokens', 'counter', ['vllm', 'sglang', 'trtllm'],
    [{ name: 'vllm:generation_tokens' }, { name: 'sglang:generation_tokens' }, { name: 'trtllm_generation_tokens' }], 'Tokens the server generated.'),
  sm('preemptions', 'Preemptions', 'count', 'counter', ['vllm'], [{ name: 'vllm:num_preemptions' }], 'Requests preempted (their KV dropped) for lack of GPU KV space.'),
  sm('offload_bytes', 'Offloaded bytes (GPU→host)', 'bytes', 'counter', ['vllm', 'trtllm'],
    [{ name: 'vllm:kv_offload_store_bytes' }, { name: 'vllm:kv_offload_total_bytes', labels: { transfer_type: 'GPU_to_CPU' } }, { name: 'trtllm_kv_cache_offload_bytes' }],
    'KV bytes copied from GPU to the offload tier.'),
  sm('reload_bytes', 'Reloaded bytes (host→GPU)', 'bytes', 'counter', ['vllm', 'trtllm'],
    [{ name: 'vllm:kv_offload_load_bytes' }, { name: 'vllm:kv_offload_total_bytes', labels: { transfer_type: 'CPU_to_GPU' } }, { name: 'trtllm_kv_cache_onboard_bytes' }],
    'KV bytes copied back from the offload tier to GPU (onboarded).'),
  sm('offload_time', 'Offload transfer time', 'seconds', 'counter', ['vllm'],
    [{ name: 'vllm:kv_offload_store_time' }, { name: 'vllm:kv_offload_total_time', labels: { transfer_type: 'GPU_to_CPU' } }], 'Time the GPU→host copies took.'),
  sm('reload_time', 'Reload transfer time', 'seconds', 'counter', ['vllm'],
    [{ name: 'vllm:kv_offload_load_time' }, { name: 'vllm:kv_offload_total_time', labels: { transfer_type: 'CPU_to_GPU' } }], 'Time the host→GPU copies took.'),
  sm('offload_allocation_failures', 'Offload allocation failures', 'count', 'counter', ['vllm'], [{ name: 'vllm:kv_offload_allocation_failure' }],
    'Stores that found no free CPU blocks (not offloaded).'),
  sm('offload_cpu_block_lookups', 'Offload CPU block lookups', 'blocks', 'counter', ['vllm'], [{ name: 'vllm:kv_offload_cpu_block_lookup' }], 'Blocks looked up in the CPU offload tier.'),
  sm('offload_cpu_block_hits', 'Offload CPU block hits', 'blocks', 'counter', ['vllm'], [{ name: 'vllm:kv_offload_cpu_block_hit' }], 'Blocks found in the CPU offload tier.'),
  sm('offload_block_evictions', 'Offload tier evictions', 'blocks', 'counter', ['vllm'], [{ name: 'vllm:kv_offload_block_eviction' }], 'Blocks evicted from the offload tier.'),
  sm('reused_blocks', 'Reused KV blocks', 'blocks', 'counter', ['trtllm'], [{ name: 'trtllm_kv_cache_reused_blocks' }, { name: 'trtllm-json:reusedBlocks' }],
    'KV blocks reused instead of recomputed (TensorRT-LLM block reuse; offloaded blocks that came back count here).'),
  sm('missed_blocks', 'Missed KV blocks', 'blocks', 'counter', ['trtllm'], [{ name: 'trtllm_kv_cache_missed_blocks' }, { name: 'trtllm-json:missedBlocks' }],
    'KV blocks looked up for reuse and not found.'),
  sm('alloc_new_blocks', 'Newly allocated KV blocks', 'blocks', 'counter', ['trtllm'], [{ name: 'trtllm-json:allocNewBlocks' }], 'KV blocks allocated fresh (TensorRT-LLM JSON statistics).'),
  sm('server_cache_hit_rate', 'Server-reported cache hit rate', 'ratio', 'gauge', ['vllm', 'sglang', 'trtllm'],
    [{ name: 'sglang:cache_hit_rate' }, { name: 'vllm:gpu_prefix_cache_hit_rate' }, { name: 'trtllm_kv_cache_hit_rate' }, { name: 'trtllm-json:cacheHitRate' }],
    'The engine\'s own hit-rate gauge (its own window: since start, or recent).'),
  sm('kv_cache_usage', 'GPU KV cache usage', 'ratio', 'gauge', ['vllm', 'sglang', 'trtllm'],
    [{ name: 'vllm:kv_cache_usage_perc' }, { name: 'vllm:gpu_cache_usage_perc' }, { name: 'sglang:token_usage' }, { name: 'trtllm_kv_cache_utilization' }, { name: 'trtllm-json:usage' }],
    'Share of the GPU KV cache in use (0–1).'),
  sm('host_kv_cache_usage', 'Host (offload) KV cache usage', 'ratio', 'gauge', ['vllm', 'trtllm'],
    [{ name: 'vllm:kv_offload_cpu_cache_usage_perc' }, { name: 'vllm:cpu_cache_usage_perc' }, { name: 'trtllm_kv_cache_host_utilization' }],
    'Share of the host offload tier in use (0–1).'),
]);

export const SERVER_METRIC_BY_KEY: Readonly<Record<string, ServerMetricDefinition>> = Object.freeze(Object.fromEntries(SERVER_METRICS.map((d) => [d.key, d])));

/** Rates derived from counter deltas: numerator ÷ denominator (or ÷ the sum of the listed keys). */
export const DERIVED_SERVER_METRICS: readonly { key: string; label: string; unit: ServerMetricUnit; numerator: string; denominator: readonly string[]; description: string }[] = Object.freeze([
  { key: 'prefix_cache_hit_rate', label: 'Prefix cache hit rate (run)', unit: 'ratio', numerator: 'prefix_cache_hits', denominator: ['prefix_cache_queries'], description: 'Δhits ÷ Δqueries over the run.' },
  { key: 'external_prefix_cache_hit_rate', label: 'Offload cache hit rate (run)', unit: 'ratio', numerator: 'external_prefix_cache_hits', denominator: ['external_prefix_cache_queries'], description: 'Δexternal hits ÷ Δexternal queries over the run.' },
  { key: 'block_reuse_rate', label: 'KV block reuse rate (run)', unit: 'ratio', numerator: 'reused_blocks', denominator: ['reused_blocks', 'missed_blocks'], description: 'Δreused ÷ (Δreused + Δmissed) over the run (TensorRT-LLM).' },
  { key: 'offload_cpu_block_hit_rate', label: 'Offload CPU block hit rate (run)', unit: 'ratio', numerator: 'offload_cpu_block_hits', denominator: ['offload_cpu_block_lookups'], description: 'Δhits ÷ Δlookups in the CPU offload tier.' },
  { key: 'offload_bandwidth', label: 'Offload copy bandwidth', unit: 'bytes/s', numerator: 'offload_bytes', denominator: ['offload_time'], description: 'Δoffloaded bytes ÷ Δtransfer time (the server\'s own copy time).' },
  { key: 'reload_bandwidth', label: 'Reload copy bandwidth', unit: 'bytes/s', numerator: 'reload_bytes', denominator: ['reload_time'], description: 'Δreloaded bytes ÷ Δtransfer time.' },
]);

const ServerMetricValueSchema = z.object({
  key: z.string(),
  /** The family the value came from (null when none of the sources was served). */
  source: z.string().nullable(),
  before: nnum,
  after: nnum,
  /** Counters: after − before per series, summed (a series that went backwards counts from zero: its after value). */
  delta: nnum,
  /** A series of the counter went backwards between the scrapes, or the server's process_start_time_seconds changed. */
  reset: z.boolean(),
  /**
   * The counter had no baseline before the run (trtllm-serve's JSON iteration queue was empty, so its
   * block counters were taken to start at 0): `delta` is the server's total since it started, not
   * the run's share. Runs stored before the flag existed get it when read (endpoint-store.ts).
   */
  sinceServerStart: z.boolean(),
});
export type ServerMetricValue = z.infer<typeof ServerMetricValueSchema>;

/** Why a server counter's Δ may not be the run's own share (null when it is). */
function serverValueCaveat(v: Pick<ServerMetricValue, 'reset' | 'sinceServerStart'>): string | null {
  if (v.sinceServerStart) return 'totals since the server started (no baseline before the run): the run\'s own share only on a server started just for it';
  if (v.reset) return 'a counter reset during the run (the server or a rank restarted): counted from the reset, not the run\'s whole share';
  return null;
}

const MetricsPageResultSchema = z.object({
  url: z.string(),
  format: z.enum(['prometheus', 'trtllm-iteration-json', 'unavailable']),
  /** Engines whose families were seen on the page. */
  engines: z.array(z.string()),
  error: z.string().nullable(),
  /** Why a value is only approximate (e.g. trtllm-serve's JSON queue was empty before the run). */
  notes: z.array(z.string()),
});
export type MetricsPageResult = z.infer<typeof MetricsPageResultSchema>;

export const ServerCacheMetricsSchema = z.object({
  pages: z.array(MetricsPageResultSchema),
  values: z.array(ServerMetricValueSchema),
  /** Derived rates (null when a part is missing or the denominator is 0). */
  derived: z.record(z.string(), nnum),
  /**
   * Every counter (and histogram _sum/_count) of the vllm:, sglang:, trtllm_, lmcache families:
   * `name{labels}` → after − before. JSON has no NaN: a counter that was not a number reads back as null.
   */
  rawCounterDeltas: z.record(z.string(), nnum),
});
export type ServerCacheMetrics = z.infer<typeof ServerCacheMetricsSchema>;

// ---------------------------------------------------------------------------------------------
// The stored run

export const ENDPOINT_RUN_STATUSES = ['complete', 'partial', 'failed'] as const;
export type EndpointRunStatus = (typeof ENDPOINT_RUN_STATUSES)[number];

export const EndpointRunRecordSchema = z.object({
  id: z.number().int(),
  systemLabel: z.string(),
  status: z.enum(ENDPOINT_RUN_STATUSES),
  statusReason: z.string().nullable(),
  config: EndpointRunConfigSchema,
  startedAt: z.string(),
  finishedAt: z.string(),
  wallMs: z.number(),
  aggregates: EndpointAggregatesSchema,
  serverMetrics: ServerCacheMetricsSchema,
  /** Flat numeric metrics (the catalogue's keys): what compare, list and export read. */
  metrics: z.record(z.string(), z.number()),
  kvbenchVersion: z.string(),
  /** The machine kvbench ran on (the client, not the server). */
  clientHost: z.string(),
  /** Runs stored before kvbench 0.5.0: their span-based values, and whether the store recomputed them (absent for later runs). */
  legacyRates: LegacyRatesSchema.optional(),
});
export type EndpointRunRecord = z.infer<typeof EndpointRunRecordSchema>;

/** The id of a finished run the database refused (shown and written to a file all the same): SQLite ids start at 1. */
export const UNSTORED_RUN_ID = 0;

// ---------------------------------------------------------------------------------------------
// Metric catalogue (flat keys, one number per run)

const ENDPOINT_METRIC_UNITS = ['req/s', 'tok/s', 'ms', 'count', 'ratio', 'tokens', 'blocks', 'bytes', 'bytes/s', 's'] as const;
export type EndpointMetricUnit = (typeof ENDPOINT_METRIC_UNITS)[number];
export const ENDPOINT_METRIC_GROUPS = ['throughput', 'latency', 'requests', 'server'] as const;

const EndpointMetricDefinitionSchema = z.object({
  key: z.string(),
  label: z.string(),
  unit: z.enum(ENDPOINT_METRIC_UNITS),
  better: z.enum(['higher', 'lower']).nullable(),
  group: z.enum(ENDPOINT_METRIC_GROUPS),
});
export type EndpointMetricDefinition = z.infer<typeof EndpointMetricDefinitionSchema>;

const em = (key: string, label: string, unit: EndpointMetricUnit, better: EndpointMetricDefinition['better'], group: EndpointMetricDefinition['group']): EndpointMetricDefinition =>
  Object.freeze({ key, label, unit, better, group });

const SERVER_UNIT: Record<ServerMetricUnit, EndpointMetricUnit> = { tokens: 'tokens', blocks: 'blocks', bytes: 'bytes', seconds: 's', count: 'count', ratio: 'ratio', 'bytes/s': 'bytes/s' };

/** Better direction of server metrics where one exists. */
const SERVER_BETTER: Record<string, 'higher' | 'lower'> = {
  prefix_cache_hit_rate: 'higher',
  external_prefix_cache_hit_rate: 'higher',
  block_reuse_rate: 'higher',
  offload_cpu_block_hit_rate: 'higher',
  offload_bandwidth: 'higher',
  reload_bandwidth: 'higher',
  preemptions: 'lower',
  offload_allocation_failures: 'lower',
  prompt_tokens_computed: 'lower',
};

export const ENDPOINT_METRICS: readonly EndpointMetricDefinition[] = Object.freeze([
  em('requests_per_s', 'Requests/s', 'req/s', 'higher', 'throughput'),
  em('output_tokens_per_s', 'Output tokens/s', 'tok/s', 'higher', 'throughput'),
  em('context_tokens_per_s', 'Context tokens/s', 'tok/s', 'higher', 'throughput'),
  em('duration_s', 'Duration', 's', 'lower', 'throughput'),
  em('ttft_p50_ms', 'TTFT P50', 'ms', 'lower', 'latency'),
  em('ttft_p95_ms', 'TTFT P95', 'ms', 'lower', 'latency'),
  em('ttft_p99_ms', 'TTFT P99', 'ms', 'lower', 'latency'),
  em('ttft_mean_ms', 'TTFT mean', 'ms', 'lower', 'latency'),
  em('ttft_reused_p50_ms', 'TTFT P50, reused prompts', 'ms', 'lower', 'latency'),
  em('ttft_reused_p95_ms', 'TTFT P95, reused prompts', 'ms', 'lower', 'latency'),
  em('ttft_fresh_p50_ms', 'TTFT P50, new prompts', 'ms', 'lower', 'latency'),
  em('ttft_fresh_p95_ms', 'TTFT P95, new prompts', 'ms', 'lower', 'latency'),
  em('latency_p50_ms', 'End-to-end P50', 'ms', 'lower', 'latency'),
  em('latency_p95_ms', 'End-to-end P95', 'ms', 'lower', 'latency'),
  em('latency_p99_ms', 'End-to-end P99', 'ms', 'lower', 'latency'),
  em('tpot_p50_ms', 'Time per output token P50', 'ms', 'lower', 'latency'),
  em('tpot_p95_ms', 'Time per output token P95', 'ms', 'lower', 'latency'),
  em('itl_p50_ms', 'Inter-token latency P50', 'ms', 'lower', 'latency'),
  em('itl_p95_ms', 'Inter-token latency P95', 'ms', 'lower', 'latency'),
  em('itl_p99_ms', 'Inter-token latency P99', 'ms', 'lower', 'latency'),
  em('requests_total', 'Requests', 'count', null, 'requests'),
  em('requests_ok', 'Requests OK', 'count', 'higher', 'requests'),
  em('requests_failed', 'Requests failed', 'count', 'lower', 'requests'),
  em('requests_not_sent', 'Requests not sent', 'count', 'lower', 'requests'),
  em('output_tokens_total', 'Output tokens', 'count', null, 'requests'),
  em('requests_tokens_from_chunks', 'Requests with output tokens counted as chunks', 'count', null, 'requests'),
  em('server_prompt_tokens_total', 'Prompt tokens (server usage)', 'count', null, 'requests'),
  em('cached_prompt_tokens_total', 'Cached prompt tokens (server usage)', 'count', 'higher', 'requests'),
  em('prompt_tokens_per_requested', 'Server prompt tokens ÷ requested', 'ratio', null, 'requests'),
  ...DERIVED_SERVER_METRICS.map((d) => em(`server.${d.key}`, d.label, SERVER_UNIT[d.unit], SERVER_BETTER[d.key] ?? null, 'server')),
  ...SERVER_METRICS.map((d) =>
    em(d.kind === 'counter' ? `server.${d.key}` : `server.${d.key}_after`, d.kind === 'counter' ? `${d.label} (Δ)` : `${d.label} (after)`, SERVER_UNIT[d.unit], SERVER_BETTER[d.key] ?? null, 'server'),
  ),
]);

export const ENDPOINT_METRIC_BY_KEY: Readonly<Record<string, EndpointMetricDefinition>> = Object.freeze(Object.fromEntries(ENDPOINT_METRICS.map((d) => [d.key, d])));

/** The flat metrics of one run, from its aggregates and server metrics (non-finite values left out). */
export function flattenEndpointMetrics(a: EndpointAggregates, s: ServerCacheMetrics): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (k: string, v: number | null | undefined): void => {
    if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  };
  put('requests_per_s', a.requestsPerS);
  put('output_tokens_per_s', a.outputTokensPerS);
  put('context_tokens_per_s', a.contextTokensPerS);
  put('duration_s', a.durationS);
  put('ttft_p50_ms', a.ttftMs.p50);
  put('ttft_p95_ms', a.ttftMs.p95);
  put('ttft_p99_ms', a.ttftMs.p99);
  put('ttft_mean_ms', a.ttftMs.mean);
  put('ttft_reused_p50_ms', a.ttftReusedMs.p50);
  put('ttft_reused_p95_ms', a.ttftReusedMs.p95);
  put('ttft_fresh_p50_ms', a.ttftFreshMs.p50);
  put('ttft_fresh_p95_ms', a.ttftFreshMs.p95);
  put('latency_p50_ms', a.e2eMs.p50);
  put('latency_p95_ms', a.e2eMs.p95);
  put('latency_p99_ms', a.e2eMs.p99);
  put('tpot_p50_ms', a.tpotMs.p50);
  put('tpot_p95_ms', a.tpotMs.p95);
  put('itl_p50_ms', a.itlMs.p50);
  put('itl_p95_ms', a.itlMs.p95);
  put('itl_p99_ms', a.itlMs.p99);
  put('requests_total', a.requestsTotal);
  put('requests_ok', a.requestsOk);
  put('requests_failed', a.requestsFailed);
  put('requests_not_sent', a.requestsNotSent);
  put('output_tokens_total', a.outputTokensTotal);
  put('requests_tokens_from_chunks', a.tokenCountSources.chunks);
  put('server_prompt_tokens_total', a.serverPromptTokensTotal);
  put('cached_prompt_tokens_total', a.cachedPromptTokensTotal);
  put('prompt_tokens_per_requested', a.promptTokensPerRequested);
  for (const [k, v] of Object.entries(s.derived)) put(`server.${k}`, v);
  for (const v of s.values) {
    const def = SERVER_METRIC_BY_KEY[v.key];
    if (!def) continue;
    if (def.kind === 'counter') put(`server.${v.key}`, v.delta);
    else put(`server.${v.key}_after`, v.after);
  }
  return out;
}

/**
 * The run's flat server metrics (flattenEndpointMetrics' keys) whose value may not be the run's own
 * share, each with why: counters flagged by serverValueCaveat, and the rates derived from them.
 */
export function serverMetricCaveats(s: Pick<ServerCacheMetrics, 'values' | 'derived'>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of s.values) {
    const why = v.delta === null || SERVER_METRIC_BY_KEY[v.key]?.kind !== 'counter' ? null : serverValueCaveat(v);
    if (why) out[`server.${v.key}`] = why;
  }
  for (const d of DERIVED_SERVER_METRICS) {
    if (typeof s.derived[d.key] !== 'number') continue;
    const from = [...new Set([d.numerator, ...d.denominator])].filter((k) => `server.${k}` in out);
    if (from.length > 0) out[`server.${d.key}`] = `computed from ${from.map((k) => SERVER_METRIC_BY_KEY[k]?.label ?? k).join(' and ')}: ${out[`server.${from[0]}`]}`;
  }
  return out;
}

/** Each metrics page's notes (why a value is approximate or missing), prefixed with its URL. */
export function serverMetricNotes(s: ServerCacheMetrics): string[] {
  return s.pages.flatMap((p) => p.notes.map((n) => `${p.url}: ${n}`));
}

/**
 * One cache hit rate per run, for listings: engines count hits differently, so this takes the first
 * source the run has. The server's usage counts (cached ÷ prompt tokens) come first because they
 * cover every tier the engine reuses from (GPU prefix cache and offload reloads alike); then the
 * engine's own counters over the run; last its hit-rate gauge, whose window is the engine's own.
 */
export function cacheHitRateOf(metrics: Readonly<Record<string, number>>): { value: number; source: string; /** The flat metric it is (null: computed from two). */ key: string | null } | null {
  const cached = metrics.cached_prompt_tokens_total;
  const prompt = metrics.server_prompt_tokens_total;
  if (cached !== undefined && prompt !== undefined && prompt > 0) return { value: cached / prompt, source: 'cached ÷ prompt tokens (server usage)', key: null };
  for (const [key, source] of [
    ['server.prefix_cache_hit_rate', 'GPU prefix cache, Δhits ÷ Δqueries (server metrics)'],
    ['server.block_reuse_rate', 'KV block reuse, Δreused ÷ (Δreused + Δmissed) (server metrics)'],
    ['server.server_cache_hit_rate_after', 'the server\'s hit-rate gauge after the run'],
  ] as const) {
    if (metrics[key] !== undefined) return { value: metrics[key], source, key };
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Comparing two systems: the comparison's shape, and its words for the page. How runs are compared
// is src-main/endpoint/endpoint-compare.ts (compareEndpointRuns).

/** How a run's rates are taken (the exports' About, the app's footnotes): from 0.5.0, over the batches' own times. */
export const THROUGHPUT_METHOD =
  'successful requests (and their output tokens) ÷ duration_s, the time the server had the batches: each batch\'s first send to its last finish, summed ' +
  '(the pauses between batches and cancelled requests left out); span_s is the wall clock, first send → last finish with the pauses; ' +
  'runs stored before kvbench 0.5.0 took duration_s (and their rates) over that span: they are recomputed from their stored requests as today (marked †, with the stored values beside them), ' +
  'or, where their requests cannot reproduce the run, kept as stored (marked ‡, with why)';

/** One side's values of a metric over its runs. */
const CompareSpreadSchema = z.object({
  min: z.number(),
  max: z.number(),
  /** Sample standard deviation ÷ |mean| over the side's runs; null for one run or a zero mean. */
  cv: nnum,
});
export type CompareSpread = z.infer<typeof CompareSpreadSchema>;

/**
 * Whether a difference is larger than run-to-run noise (NOISE_RULE): `beyond`, `within`, or
 * `unknown` when a side has a single run, or a value ≤ 0 (no logarithm to test).
 */
const NoiseVerdictSchema = z.enum(['beyond', 'within', 'unknown']);
export type NoiseVerdict = z.infer<typeof NoiseVerdictSchema>;

const side = z.enum(['a', 'b']).nullable();

const CompareRowSchema = z.object({
  metric: EndpointMetricDefinitionSchema,
  a: nnum,
  b: nnum,
  /** Runs with a value. */
  nA: count,
  nB: count,
  /** Each side's min, max and CV over its runs (null without a value). */
  spreadA: CompareSpreadSchema.nullable(),
  spreadB: CompareSpreadSchema.nullable(),
  /** a ÷ b. */
  ratio: nnum,
  /** The difference against the run-to-run noise (NOISE_RULE); null when a value is missing. */
  noise: NoiseVerdictSchema.nullable(),
  /** The noise test's two-sided p-value; null where it cannot be taken (noise null or unknown). */
  pValue: nnum,
  /**
   * The side with the better value by the metric's direction, noise or not (null: no direction, a tie
   * within compare's tie band, a value missing, or values of two definitions: spanBasedMixed).
   */
  leader: side,
  /** The leader, where the difference is beyond noise and no value is flagged: the side compare names better. */
  better: side,
  /** Runs of each side whose value may not be the run's own share (serverMetricCaveats): no verdict. */
  flaggedA: z.array(z.number().int()),
  flaggedB: z.array(z.number().int()),
  /** Runs of each side stored before kvbench 0.5.0 whose value was recomputed from their stored requests (LegacyRates): today's definition, marked. */
  recomputedA: z.array(z.number().int()),
  recomputedB: z.array(z.number().int()),
  /** Runs of each side whose value is still the span-based one a kvbench before 0.5.0 stored (not recomputed: the warnings say why). */
  spanBasedA: z.array(z.number().int()),
  spanBasedB: z.array(z.number().int()),
});
export type CompareRow = z.infer<typeof CompareRowSchema>;

export const EndpointComparisonSchema = z.object({
  method: z.string(),
  labelA: z.string(),
  labelB: z.string(),
  runIdsA: z.array(z.number().int()),
  runIdsB: z.array(z.number().int()),
  /** Problems that make the comparison weaker (different workloads, models, missing runs). */
  warnings: z.array(z.string()),
  /** What the numbers cannot tell (as the storage report's system comparison says it): one run on a side gives no noise estimate. */
  notes: z.array(z.string()),
  rows: z.array(CompareRowSchema),
});
export type EndpointComparison = z.infer<typeof EndpointComparisonSchema>;

/**
 * Whether a compared metric's values follow two definitions: some kept span-based (‡, stored before
 * kvbench 0.5.0 and not recomputable), some not. Those do not measure the same thing (the span holds
 * kvbench's pauses between batches), so no side is named better, nor the better value; where every
 * value is span-based they follow one definition and are compared.
 */
export function spanBasedMixed(r: Pick<CompareRow, 'nA' | 'nB' | 'spanBasedA' | 'spanBasedB'>): boolean {
  const spanBased = r.spanBasedA.length + r.spanBasedB.length;
  return spanBased > 0 && spanBased < r.nA + r.nB;
}

/** compareVerdict's word for a spanBasedMixed row. */
export const NO_VERDICT_SPAN_BASED = `no verdict ${SPAN_BASED_MARK}`;

/** Why a spanBasedMixed row names no side, under a comparison that has one. */
export const NO_VERDICT_SPAN_BASED_LEGEND =
  `${NO_VERDICT_SPAN_BASED}: no side is named better where some values are ${SPAN_BASED_MARK} (over the span, pauses included, as a kvbench before 0.5.0 stored them) ` +
  "and others are taken over the batches' own times: they do not measure the same thing";

/** What compareVerdict's words mean, for under a comparison table. */
export const COMPARE_VERDICT_LEGEND =
  `better: the side named is better beyond run-to-run noise (${NOISE_RULE}); "within noise": the difference is not; "X?": X has the better value, but the noise cannot be judged (one run on a side, or a 0, which has no logarithm); ` +
  '*: a run\'s value may not be its own share (see the warnings), so no side is named';

/**
 * Who is better, as far as the runs can tell: a label beyond noise, "within noise", "label?" without a
 * noise estimate, "*" on a flagged value, "no verdict ‡" on values of two definitions (spanBasedMixed).
 */
export function compareVerdict(r: CompareRow, labelA: string, labelB: string): string {
  const leader = r.leader === 'a' ? labelA : r.leader === 'b' ? labelB : null;
  if (r.flaggedA.length > 0 || r.flaggedB.length > 0) return '*';
  if (spanBasedMixed(r)) return NO_VERDICT_SPAN_BASED;
  if (r.better !== null) return leader!;
  if (r.noise === 'within' && (leader !== null || r.metric.better !== null)) return 'within noise';
  if (r.noise === 'unknown' && leader !== null) return `${leader}?`;
  return '';
}
