/**
 * The options of one benchmark run: every flag of the reference's `kv-cache.py` (same defaults, same
 * limits, same error texts), plus kvbench's own I/O options and what only a config file can give
 * (user-added models, the reference's workload tuning sections).
 *
 * Keys are the camelCase of the long flag: `--num-users` → `numUsers`, `--gpu-mem-gb` → `gpuMemGb`.
 * Units follow the reference: `*Gb` values are GiB (the reference divides by 1024³ while saying GB),
 * `duration` is seconds, `requestRate` requests per second.
 *
 * This schema checks everything that needs no file system: types, ranges, cross-field rules and the
 * model name. Checks that look at the disk (system directories, files that must exist) live in the
 * CLI parser (`src-main/engine/config/parse-run-args.ts`).
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';
import { CustomModelsSchema, DEFAULT_MODEL_KEY, resolveModel } from './models.ts';

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export const GENERATION_MODES = ['none', 'fast', 'realistic'] as const;
export const PERFORMANCE_PROFILES = ['latency', 'throughput'] as const;
export const AUTOSCALER_MODES = ['qos', 'capacity'] as const;
export const DIRECT_IO_MODES = ['auto', 'on', 'off'] as const;
export const FSYNC_POLICIES = ['per-entry', 'none'] as const;
export const PROMOTION_POLICIES = ['none', 'on-hit'] as const;

/** The reference's validation limits (`workload.py`); a config's `validation_limits` may change them. */
export const REFERENCE_LIMITS = Object.freeze({
  maxUsers: 100_000,
  maxDurationSeconds: 86_400,
  maxGpuMemoryGb: 65_536,
  maxCpuMemoryGb: 131_072,
});

/** numpy's seed range: the reference crashes on seeds outside it. */
export const MAX_SEED = 2 ** 32 - 1;
export const MAX_IO_CHUNK_MIB = 1024;
/** libuv's thread pool tops out at 1024 threads, which bounds the I/Os Node can keep in flight. */
export const MAX_IO_DEPTH = 1024;
/** Ranks of one multi-host run (far beyond any cluster a KV-cache test spans; bounds the rank flags). */
export const MAX_RANKS = 100_000;

// ---------------------------------------------------------------------------------------------
// Field builders: each message names the flag, with the reference's wording where it has one.

const got = (iss: { input?: unknown }): string => String(iss.input);

function int(flag: string) {
  return z.number({ error: `${flag} must be a number` }).int({ error: (iss) => `${flag} must be an integer, got ${got(iss)}` });
}
function num(flag: string) {
  return z.number({ error: `${flag} must be a finite number` });
}
const positiveInt = (flag: string) => int(flag).min(1, { error: (iss) => `${flag} must be positive, got ${got(iss)}` });
const nonNegativeInt = (flag: string) => int(flag).min(0, { error: (iss) => `${flag} cannot be negative, got ${got(iss)}` });
const nonNegativeNum = (flag: string) => num(flag).min(0, { error: (iss) => `${flag} cannot be negative, got ${got(iss)}` });
const atLeastOneInt = (flag: string) => int(flag).min(1, { error: (iss) => `${flag} must be >= 1, got ${got(iss)}` });
function boundedInt(flag: string, min: number, max: number) {
  const msg = (iss: { input?: unknown }) => `${flag} must be between ${min} and ${max}, got ${got(iss)}`;
  return int(flag).min(min, { error: msg }).max(max, { error: msg });
}
function choice<const T extends readonly [string, ...string[]]>(flag: string, values: T) {
  return z.enum(values, {
    error: (iss) => `argument ${flag}: invalid choice: '${String(iss.input)}' (choose from ${values.map((v) => `'${v}'`).join(', ')})`,
  });
}
function path(flag: string) {
  return z.string({ error: `${flag} must be a path` }).min(1, { error: `${flag} must not be empty` });
}
const flag = (flagName: string) => z.boolean({ error: `${flagName} must be true or false` });

// ---------------------------------------------------------------------------------------------
// The reference's config-file tuning sections (`kv_cache/config.py`, VALID_SCHEMA), kept under their
// own snake_case names so a reference config.yaml maps 1:1 and the engine reads the very keys the
// reference documents. All optional: an absent key means the reference's built-in default.

const num0 = z.number().min(0);
const probability = z.number().min(0).max(1);
const posInt0 = z.number().int().positive();
const nonNegInt0 = z.number().int().nonnegative();
const intRange = z
  .tuple([nonNegInt0, nonNegInt0])
  .refine(([lo, hi]) => lo <= hi, { error: 'range must be [min, max] with min <= max' });
const secondsRange = z
  .tuple([num0, num0])
  .refine(([lo, hi]) => lo <= hi, { error: 'range must be [min, max] with min <= max' });

const UserTemplateSchema = z.strictObject({
  context_range: intRange.optional(),
  generation_range: intRange.optional(),
  think_time_range: secondsRange.optional(),
});
const QosProfileSchema = z.strictObject({
  target_latency_p95_ms: num0.optional(),
  target_latency_p99_ms: num0.optional(),
  target_latency_p999_ms: num0.optional(),
  target_latency_p9999_ms: num0.optional(),
  priority: z.number().int().optional(),
});

export const TuningSchema = z.strictObject({
  user_templates: z
    .strictObject({ chatbot: UserTemplateSchema.optional(), coding: UserTemplateSchema.optional(), document: UserTemplateSchema.optional() })
    .optional(),
  /** Seconds of simulated GPU time per generated token. */
  generation_timing: z.strictObject({ none: num0.optional(), fast: num0.optional(), realistic: num0.optional() }).optional(),
  qos_profiles: z
    .strictObject({ interactive: QosProfileSchema.optional(), responsive: QosProfileSchema.optional(), batch: QosProfileSchema.optional() })
    .optional(),
  qos_distribution: z.strictObject({ interactive_probability: probability.optional(), responsive_threshold: probability.optional() }).optional(),
  eviction: z
    .strictObject({
      max_recursion_depth: posInt0.optional(),
      target_usage_ratio: probability.optional(),
      large_entry_limit_ratio: probability.optional(),
      max_evictions_hard_cap: posInt0.optional(),
      max_evictions_min: posInt0.optional(),
    })
    .optional(),
  gpu_backend: z
    .strictObject({ memory_fraction: probability.optional(), max_eviction_attempts: nonNegInt0.optional(), free_memory_threshold: num0.optional() })
    .optional(),
  prefix_cache: z
    .strictObject({ min_prefix_length: nonNegInt0.optional(), max_prefix_entries: nonNegInt0.optional(), system_prompt_hit_probability: probability.optional() })
    .optional(),
  rag: z
    .strictObject({
      chunk_size_tokens: posInt0.optional(),
      top_k_chunks: posInt0.optional(),
      max_chunk_bytes: posInt0.optional(),
      request_probability: probability.optional(),
      retrieval_distribution: z.string().optional(),
      max_documents: nonNegInt0.optional(),
      large_model_doc_tokens_min: posInt0.optional(),
      large_model_doc_tokens_max: posInt0.optional(),
      small_model_doc_tokens_min: posInt0.optional(),
      small_model_doc_tokens_max: posInt0.optional(),
    })
    .optional(),
  conversation: z
    .strictObject({ max_conversations: posInt0.optional(), max_turns_per_conv: posInt0.optional(), end_conversation_probability: probability.optional() })
    .optional(),
  autoscaler: z
    .strictObject({
      min_users: posInt0.optional(),
      max_users: posInt0.optional(),
      scale_up_factor: num0.optional(),
      scale_down_factor: num0.optional(),
      consecutive_samples_required: posInt0.optional(),
    })
    .optional(),
  decode: z.strictObject({ batch_size: posInt0.optional() }).optional(),
  sharegpt: z
    .strictObject({ max_context_tokens: posInt0.optional(), max_generation_tokens: posInt0.optional(), chars_per_token_estimate: posInt0.optional() })
    .optional(),
  saturation_detection: z
    .strictObject({
      read_latency_p95_threshold_ms: num0.optional(),
      write_latency_p95_threshold_ms: num0.optional(),
      queue_depth_threshold: nonNegInt0.optional(),
      history_window_size: posInt0.optional(),
    })
    .optional(),
  /** Upper limits for the CLI checks (the reference reads them from constants and ignores this section). */
  validation_limits: z
    .strictObject({ max_users: posInt0.optional(), max_duration_seconds: posInt0.optional(), max_gpu_memory_gb: posInt0.optional(), max_cpu_memory_gb: posInt0.optional() })
    .optional(),
});
export type Tuning = z.infer<typeof TuningSchema>;

/** Names of the reference's tuning sections (top-level keys of its config.yaml besides `model_configs`). */
export const TUNING_SECTIONS: readonly string[] = Object.freeze(Object.keys(TuningSchema.shape));

// ---------------------------------------------------------------------------------------------

const RunOptionsObjectSchema = z.strictObject({
  // --- the reference's flags (argparse order of `kv_cache/cli.py`) ---
  logLevel: choice('--log-level', LOG_LEVELS).default('INFO'),
  model: z.string({ error: '--model must be a model name' }).min(1, { error: '--model must not be empty' }).default(DEFAULT_MODEL_KEY),
  numUsers: positiveInt('--num-users').default(100),
  /** Seconds. */
  duration: positiveInt('--duration').default(60),
  /** GiB per GPU; the GPU tier is numGpus × this; 0 disables it. */
  gpuMemGb: nonNegativeNum('--gpu-mem-gb').default(16),
  numGpus: atLeastOneInt('--num-gpus').default(1),
  tensorParallel: atLeastOneInt('--tensor-parallel').default(1),
  /** GiB; 0 disables the CPU tier. */
  cpuMemGb: nonNegativeNum('--cpu-mem-gb').default(32),
  /** Storage-tier directory; null = a fresh temporary directory. */
  cacheDir: path('--cache-dir').nullable().default(null),
  generationMode: choice('--generation-mode', GENERATION_MODES).default('realistic'),
  performanceProfile: choice('--performance-profile', PERFORMANCE_PROFILES).default('latency'),
  disableMultiTurn: flag('--disable-multi-turn').default(false),
  disablePrefixCaching: flag('--disable-prefix-caching').default(false),
  enableRag: flag('--enable-rag').default(false),
  ragNumDocs: nonNegativeInt('--rag-num-docs').default(10),
  enableAutoscaling: flag('--enable-autoscaling').default(false),
  autoscalerMode: choice('--autoscaler-mode', AUTOSCALER_MODES).default('qos'),
  targetSaturation: num('--target-saturation')
    .min(0, { error: (iss) => `--target-saturation must be between 0.0 and 1.0, got ${got(iss)}` })
    .max(1, { error: (iss) => `--target-saturation must be between 0.0 and 1.0, got ${got(iss)}` })
    .default(0.8),
  useBurstTrace: flag('--use-burst-trace').default(false),
  /** A CSV file, a directory of CSV files, or a glob (reference behaviour); read only with useBurstTrace. */
  burstTracePath: path('--burst-trace-path').default('BurstGPT/data/BurstGPT_1.csv'),
  validationTrace: path('--validation-trace').nullable().default(null),
  datasetPath: path('--dataset-path').nullable().default(null),
  maxConversations: positiveInt('--max-conversations').default(500),
  /** Results JSON; null = `benchmark_results_<YYYYmmdd_HHMMSS>.json` (the CLI parser fills it in). */
  output: path('--output').nullable().default(null),
  /** null = unseeded. */
  seed: int('--seed')
    .min(0, { error: (iss) => `--seed must be between 0 and ${MAX_SEED}, got ${got(iss)}` })
    .max(MAX_SEED, { error: (iss) => `--seed must be between 0 and ${MAX_SEED}, got ${got(iss)}` })
    .nullable()
    .default(null),
  /** 0 = unlimited. */
  maxConcurrentAllocs: nonNegativeInt('--max-concurrent-allocs').default(0),
  /** Requests per second; 0 = unlimited. */
  requestRate: nonNegativeNum('--request-rate').default(0),
  /** 0 = stop on duration only. */
  maxRequests: nonNegativeInt('--max-requests').default(0),
  xlsxOutput: path('--xlsx-output').nullable().default(null),
  /** The YAML file these options were merged from, if any (recorded, not re-read). */
  config: path('--config').nullable().default(null),
  /** GiB; 0 = 95 % of the free space at start. */
  storageCapacityGb: nonNegativeNum('--storage-capacity-gb').default(0),
  precondition: flag('--precondition').default(false),
  /** GiB; 0 = 2 × the storage capacity. */
  preconditionSizeGb: nonNegativeNum('--precondition-size-gb').default(0),
  /** 0 = one per CPU. */
  preconditionThreads: nonNegativeInt('--precondition-threads').default(0),
  /** 0 = no pacing. */
  traceSpeedup: nonNegativeNum('--trace-speedup').default(1.0),
  /** 0 = loop until the duration ends. */
  replayCycles: nonNegativeInt('--replay-cycles').default(0),
  prefillOnly: flag('--prefill-only').default(false),
  decodeOnly: flag('--decode-only').default(false),
  /** Trace-only mode: no I/O, every logical I/O logged to this CSV. */
  ioTraceLog: path('--io-trace-log').nullable().default(null),
  /** bpftrace device-latency tracing (reference flag; needs root and bpftrace). */
  enableLatencyTracing: flag('--enable-latency-tracing').default(false),

  // --- kvbench additions ---
  /** Size of one I/O request in MiB: entries are split into requests of this size. */
  ioChunkMib: boundedInt('--io-chunk-mib', 1, MAX_IO_CHUNK_MIB).default(16),
  /** Storage I/O requests in flight at once, across all entries. */
  ioDepth: boundedInt('--io-depth', 1, MAX_IO_DEPTH).default(16),
  /** auto = direct I/O where the filesystem allows it, buffered (and reported so) where not. */
  directIo: choice('--direct-io', DIRECT_IO_MODES).default('auto'),
  /** Read back and check every entry's bytes. */
  verify: flag('--verify').default(false),
  /**
   * per-entry: fdatasync each entry after writing it (with direct I/O too: it flushes the allocation
   * metadata and the drive's volatile cache, as the reference's fsync does); none: never.
   */
  fsyncPolicy: choice('--fsync-policy', FSYNC_POLICIES).default('per-entry'),
  /** Seconds between autoscaler decisions. */
  autoscalerInterval: num('--autoscaler-interval')
    .min(0.5, { error: (iss) => `--autoscaler-interval must be between 0.5 and 3600, got ${got(iss)}` })
    .max(3600, { error: (iss) => `--autoscaler-interval must be between 0.5 and 3600, got ${got(iss)}` })
    .default(10),
  /** Seconds the workload runs before the measured window opens (fio's ramp_time); 0 = the reference's behaviour. */
  warmUp: boundedInt('--warm-up', 0, 3600).default(0),
  /** A `kvbench probe` JSON result: the run states its storage efficiency against it. */
  probeResult: path('--probe-result').nullable().default(null),
  /** none = the reference (no promotion on hit); on-hit = move a hit entry to the fastest tier with room. */
  promotion: choice('--promotion', PROMOTION_POLICIES).default('none'),
  /** This host's rank in a multi-host run; null = the launcher's (mpirun, Slurm, Kubernetes), or one host. */
  rank: boundedInt('--rank', 0, MAX_RANKS - 1).nullable().default(null),
  /** Ranks in a multi-host run; null = the launcher's, or unknown. */
  worldSize: boundedInt('--world-size', 1, MAX_RANKS).nullable().default(null),
  /** Unix time (s) at which the workload starts, the same on every rank so their windows line up; null = at once. */
  startAt: num('--start-at')
    .min(0, { error: (iss) => `--start-at must be a Unix time in seconds (date +%s), got ${got(iss)}` })
    .nullable()
    .default(null),

  // --- config file only ---
  /** User-added or overridden models (`model_configs` / `custom_models` in the config file). */
  customModels: CustomModelsSchema.default({}),
  /** The reference's workload tuning sections, verbatim. */
  tuning: TuningSchema.default({}),
});

type RunOptionsShape = z.output<typeof RunOptionsObjectSchema>;

/** Each option's own schema (type, range, default), for checking one value at a time (config files). */
export const RunOptionsFieldSchemas = RunOptionsObjectSchema.shape;

/** A cross-field rule broken: the message, the field it is about (`path`), and every field it reads (`involves`). */
export interface CrossFieldError {
  message: string;
  path: (string | number)[];
  involves: string[];
}

/**
 * Cross-field rules and the limits a config may change, as messages. Tolerates fields that failed
 * their own check (callers substitute defaults for those), so all errors come out together.
 */
export function crossFieldErrors(o: RunOptionsShape): CrossFieldError[] {
  const out: CrossFieldError[] = [];
  const issue = (message: string, path: (string | number)[], others: string[] = []) => out.push({ message, path, involves: [String(path[0]), ...others] });
  const lim = o.tuning?.validation_limits ?? {};
  const maxUsers = lim.max_users ?? REFERENCE_LIMITS.maxUsers;
  const maxDuration = lim.max_duration_seconds ?? REFERENCE_LIMITS.maxDurationSeconds;
  const maxGpu = lim.max_gpu_memory_gb ?? REFERENCE_LIMITS.maxGpuMemoryGb;
  const maxCpu = lim.max_cpu_memory_gb ?? REFERENCE_LIMITS.maxCpuMemoryGb;

  if (o.numUsers > maxUsers) issue(`--num-users exceeds limit (${maxUsers}), got ${o.numUsers}`, ['numUsers'], ['tuning']);
  if (o.duration > maxDuration) {
    issue(
      maxDuration === 86_400
        ? `--duration exceeds 24 hours (86400s), got ${o.duration}`
        : `--duration exceeds limit (${maxDuration}s), got ${o.duration}`,
      ['duration'],
      ['tuning'],
    );
  }
  if (o.gpuMemGb > maxGpu) issue(`--gpu-mem-gb exceeds limit (${maxGpu}GB), got ${o.gpuMemGb}`, ['gpuMemGb'], ['tuning']);
  if (o.cpuMemGb > maxCpu) issue(`--cpu-mem-gb exceeds limit (${maxCpu}GB), got ${o.cpuMemGb}`, ['cpuMemGb'], ['tuning']);

  // As the reference: only a valid TP is compared with --num-gpus.
  if (Number.isInteger(o.tensorParallel) && o.tensorParallel >= 1 && o.tensorParallel > o.numGpus) {
    issue(`--tensor-parallel (${o.tensorParallel}) cannot exceed --num-gpus (${o.numGpus})`, ['tensorParallel'], ['numGpus']);
  }
  if (o.prefillOnly && o.decodeOnly) issue('--prefill-only and --decode-only are mutually exclusive', ['prefillOnly'], ['decodeOnly']);
  if (typeof o.rank === 'number' && typeof o.worldSize === 'number' && o.rank >= o.worldSize) {
    issue(`rank ${o.rank} must be below the world size ${o.worldSize} (--rank and --world-size, or the launcher's)`, ['rank'], ['worldSize']);
  }
  if (o.warmUp > 0 && o.enableAutoscaling) issue('--warm-up cannot be combined with --enable-autoscaling: the autoscaler ramps up as part of what it measures', ['warmUp'], ['enableAutoscaling']);

  const custom = o.customModels ?? {};
  for (const key of Object.keys(custom)) {
    const r = resolveModel(key, custom);
    if (!r.ok) issue(r.error, ['customModels', key]);
  }
  if (typeof o.model === 'string' && o.model.length > 0) {
    const r = resolveModel(o.model, custom);
    // A broken custom entry is reported once, above.
    if (!r.ok && !Object.hasOwn(custom, o.model)) issue(r.error, ['model'], ['customModels']);
  }
  return out;
}

function checkRunOptions(o: RunOptionsShape, ctx: z.RefinementCtx): void {
  for (const { message, path } of crossFieldErrors(o)) ctx.addIssue({ code: 'custom', message, path });
}

export const RunOptionsSchema = RunOptionsObjectSchema.superRefine(checkRunOptions);

/** Validated options of one run. */
export type RunOptions = z.output<typeof RunOptionsSchema>;
/** What {@link RunOptionsSchema} accepts: any subset; defaults fill the rest. */
export type RunOptionsInput = z.input<typeof RunOptionsSchema>;
export type RunOptionKey = keyof RunOptions;

export const RUN_OPTION_KEYS: readonly RunOptionKey[] = Object.freeze(Object.keys(RunOptionsObjectSchema.shape) as RunOptionKey[]);

/**
 * Each option's name for people, with its unit (the tier sizes are GiB, as the reference's `*_gb`
 * flags): what the app calls the option in a trial's configuration, and where the app has a field
 * for it, that field's label, so a message naming the option's flag is read in the app's words.
 */
export const RUN_OPTION_LABELS: Readonly<Record<RunOptionKey, string>> = Object.freeze({
  logLevel: 'Log level',
  model: 'Model',
  numUsers: 'Users',
  duration: 'Seconds per trial',
  gpuMemGb: 'GPU tier per GPU (GiB)',
  numGpus: 'GPUs',
  tensorParallel: 'Tensor parallel',
  cpuMemGb: 'CPU tier (GiB)',
  cacheDir: 'Cache directory',
  generationMode: 'Generation mode',
  performanceProfile: 'Performance profile',
  disableMultiTurn: 'Multi-turn off',
  disablePrefixCaching: 'Prefix caching off',
  enableRag: 'RAG',
  ragNumDocs: 'RAG documents',
  enableAutoscaling: 'Autoscaling',
  autoscalerMode: 'Autoscaler mode',
  targetSaturation: 'Autoscaler target saturation',
  useBurstTrace: 'BurstGPT trace',
  burstTracePath: 'BurstGPT trace path',
  validationTrace: 'Validation trace',
  datasetPath: 'Dataset',
  maxConversations: 'Conversations at most',
  output: 'Results file',
  seed: 'Seed',
  maxConcurrentAllocs: 'Concurrent allocations at most',
  requestRate: 'Request rate (req/s)',
  maxRequests: 'Requests at most',
  xlsxOutput: 'XLSX file',
  config: 'Config file',
  storageCapacityGb: 'Storage tier capacity (GiB)',
  precondition: 'Precondition',
  preconditionSizeGb: 'Precondition size (GiB)',
  preconditionThreads: 'Precondition threads',
  traceSpeedup: 'Trace speed-up',
  replayCycles: 'Replay cycles',
  prefillOnly: 'Prefill only',
  decodeOnly: 'Decode only',
  ioTraceLog: 'I/O trace log',
  enableLatencyTracing: 'Latency tracing (bpftrace)',
  ioChunkMib: 'I/O chunk (MiB)',
  ioDepth: 'I/O depth',
  directIo: 'Direct I/O',
  verify: 'Verify bytes read',
  fsyncPolicy: 'fsync policy',
  autoscalerInterval: 'Autoscaler interval (s)',
  warmUp: 'Warm-up seconds',
  probeResult: 'Probe result file',
  promotion: 'Promotion',
  rank: 'Rank',
  worldSize: 'World size',
  startAt: 'Start at (Unix time, s)',
  customModels: 'Custom models',
  tuning: 'Tuning sections',
});

/** Every option at the reference's default (kvbench additions at theirs). */
export const DEFAULT_RUN_OPTIONS: Readonly<RunOptions> = Object.freeze(RunOptionsSchema.parse({}));

/**
 * Trace-only mode (`--io-trace-log`): no storage I/O at all, every logical I/O logged instead. Its
 * bytes are counted as if they had moved and every latency is 0: nothing in it is a measurement.
 * Takes stored options too (an imported file's, where the key may be absent).
 */
export function isTraceOnlyRun(options: { readonly ioTraceLog?: unknown }): boolean {
  return options.ioTraceLog !== undefined && options.ioTraceLog !== null;
}

/**
 * Validate options, collecting every problem as a message (the reference's texts where it has them).
 * Unlike a plain `RunOptionsSchema.safeParse`, which skips the cross-field rules once any field has
 * the wrong type or an invalid choice, this checks the cross-field rules too (with defaults standing in
 * for the fields that failed), so every error is reported at once. A rule that reads a field that
 * failed, or one in `refused` (a value refused before it got here, e.g. `--num-gpus x`), is left out:
 * it would judge the default standing in for it ("--tensor-parallel (4) cannot exceed --num-gpus (1)"
 * after `--num-gpus 0` was refused), and the field's own error says what is wrong. Never throws.
 */
export function validateRunOptions(input: unknown, refused: readonly string[] = []): { ok: true; options: RunOptions } | { ok: false; errors: string[] } {
  const r = RunOptionsSchema.safeParse(input);
  if (r.success) return { ok: true, options: r.data };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return { ok: false, errors: ['run options must be an object'] };

  const errors: string[] = [];
  const fields = RunOptionsObjectSchema.safeParse(input);
  if (!fields.success) errors.push(...fields.error.issues.map(formatIssue));
  const effective: Record<string, unknown> = {};
  const standIns = new Set(refused);
  for (const key of RUN_OPTION_KEYS) {
    const f = RunOptionsFieldSchemas[key].safeParse((input as Record<string, unknown>)[key]);
    effective[key] = f.success ? f.data : RunOptionsFieldSchemas[key].parse(undefined);
    if (!f.success) standIns.add(key);
  }
  errors.push(...crossFieldErrors(effective as RunOptionsShape).filter((e) => !e.involves.some((k) => standIns.has(k))).map((e) => e.message));
  return { ok: false, errors: [...new Set(errors)] };
}

function formatIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown option(s): ${issue.keys.join(', ')}`;
  // Messages built above already name their flag; zod's generic ones (nested config sections) get the path.
  if (issue.message.startsWith('-') || issue.message.startsWith('argument ') || issue.message.startsWith('Unknown model') || issue.message.startsWith('model ')) {
    return issue.message;
  }
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}
