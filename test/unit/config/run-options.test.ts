import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RUN_OPTIONS,
  RUN_OPTION_KEYS,
  RunOptionsSchema,
  TUNING_SECTIONS,
  validateRunOptions,
} from '../../../src-shared/domain/run-options.ts';

function errorsOf(input: Record<string, unknown>): string[] {
  const r = validateRunOptions(input);
  return r.ok ? [] : r.errors;
}

describe('defaults', () => {
  it("equal the reference's argparse defaults (kv_cache/cli.py)", () => {
    expect(DEFAULT_RUN_OPTIONS).toMatchObject({
      logLevel: 'INFO',
      model: 'llama3.1-8b',
      numUsers: 100,
      duration: 60,
      gpuMemGb: 16,
      numGpus: 1,
      tensorParallel: 1,
      cpuMemGb: 32,
      cacheDir: null,
      generationMode: 'realistic',
      performanceProfile: 'latency',
      disableMultiTurn: false,
      disablePrefixCaching: false,
      enableRag: false,
      ragNumDocs: 10,
      enableAutoscaling: false,
      autoscalerMode: 'qos',
      targetSaturation: 0.8,
      useBurstTrace: false,
      burstTracePath: 'BurstGPT/data/BurstGPT_1.csv',
      validationTrace: null,
      datasetPath: null,
      maxConversations: 500,
      output: null, // the CLI fills in benchmark_results_<timestamp>.json, as the reference's default
      seed: null,
      maxConcurrentAllocs: 0,
      requestRate: 0,
      maxRequests: 0,
      xlsxOutput: null,
      config: null,
      storageCapacityGb: 0,
      precondition: false,
      preconditionSizeGb: 0,
      preconditionThreads: 0,
      traceSpeedup: 1.0,
      replayCycles: 0,
      prefillOnly: false,
      decodeOnly: false,
      ioTraceLog: null,
      enableLatencyTracing: false,
    });
  });

  it("kvbench's additions default as documented", () => {
    expect(DEFAULT_RUN_OPTIONS).toMatchObject({
      ioChunkMib: 16,
      ioDepth: 16,
      directIo: 'auto',
      verify: false,
      fsyncPolicy: 'per-entry',
      promotion: 'none',
      customModels: {},
      tuning: {},
    });
  });

  it('has one key per option and nothing else', () => {
    expect(Object.keys(DEFAULT_RUN_OPTIONS).sort()).toEqual([...RUN_OPTION_KEYS].sort());
    // 40 of the reference, 12 of kvbench (--io-chunk-mib … --promotion, --rank, --world-size, --start-at), 2 from the config file only.
    expect(RUN_OPTION_KEYS).toHaveLength(40 + 12 + 2);
  });

  it('parsing {} gives the defaults; unknown keys are refused', () => {
    expect(RunOptionsSchema.parse({})).toEqual(DEFAULT_RUN_OPTIONS);
    expect(RunOptionsSchema.safeParse({ numUser: 5 }).success).toBe(false);
    expect(errorsOf({ numUser: 5 })).toEqual(['unknown option(s): numUser']);
  });

  it('knows every section of the reference config.yaml', () => {
    expect([...TUNING_SECTIONS].sort()).toEqual(
      [
        'user_templates', 'generation_timing', 'qos_profiles', 'qos_distribution', 'eviction', 'gpu_backend', 'prefix_cache',
        'rag', 'conversation', 'autoscaler', 'decode', 'sharegpt', 'saturation_detection', 'validation_limits',
      ].sort(),
    );
  });
});

describe('validation rules (reference texts)', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['users 0', { numUsers: 0 }, '--num-users must be positive, got 0'],
    ['users over the limit', { numUsers: 100_001 }, '--num-users exceeds limit (100000), got 100001'],
    ['duration 0', { duration: 0 }, '--duration must be positive, got 0'],
    ['duration over 24 h', { duration: 86_401 }, '--duration exceeds 24 hours (86400s), got 86401'],
    ['negative GPU memory', { gpuMemGb: -1 }, '--gpu-mem-gb cannot be negative, got -1'],
    ['GPU memory over the limit', { gpuMemGb: 70_000 }, '--gpu-mem-gb exceeds limit (65536GB), got 70000'],
    ['negative CPU memory', { cpuMemGb: -0.5 }, '--cpu-mem-gb cannot be negative, got -0.5'],
    ['CPU memory over the limit', { cpuMemGb: 200_000 }, '--cpu-mem-gb exceeds limit (131072GB), got 200000'],
    ['negative RAG docs', { ragNumDocs: -1 }, '--rag-num-docs cannot be negative, got -1'],
    ['zero conversations', { maxConversations: 0 }, '--max-conversations must be positive, got 0'],
    ['negative allocs', { maxConcurrentAllocs: -2 }, '--max-concurrent-allocs cannot be negative, got -2'],
    ['negative request rate', { requestRate: -1 }, '--request-rate cannot be negative, got -1'],
    ['negative max requests', { maxRequests: -1 }, '--max-requests cannot be negative, got -1'],
    ['negative storage capacity', { storageCapacityGb: -1 }, '--storage-capacity-gb cannot be negative, got -1'],
    ['negative precondition size', { preconditionSizeGb: -1 }, '--precondition-size-gb cannot be negative, got -1'],
    ['negative precondition threads', { preconditionThreads: -1 }, '--precondition-threads cannot be negative, got -1'],
    ['negative trace speedup', { traceSpeedup: -1 }, '--trace-speedup cannot be negative, got -1'],
    ['negative replay cycles', { replayCycles: -1 }, '--replay-cycles cannot be negative, got -1'],
    ['saturation above 1', { targetSaturation: 1.2 }, '--target-saturation must be between 0.0 and 1.0, got 1.2'],
    ['saturation below 0', { targetSaturation: -0.1 }, '--target-saturation must be between 0.0 and 1.0, got -0.1'],
    ['zero GPUs', { numGpus: 0 }, '--num-gpus must be >= 1, got 0'],
    ['TP 0', { tensorParallel: 0 }, '--tensor-parallel must be >= 1, got 0'],
    ['TP above GPUs', { tensorParallel: 8, numGpus: 4 }, '--tensor-parallel (8) cannot exceed --num-gpus (4)'],
    ['prefill and decode only', { prefillOnly: true, decodeOnly: true }, '--prefill-only and --decode-only are mutually exclusive'],
    ['bad choice', { generationMode: 'slow' }, "argument --generation-mode: invalid choice: 'slow' (choose from 'none', 'fast', 'realistic')"],
    ['bad log level', { logLevel: 'info' }, "argument --log-level: invalid choice: 'info' (choose from 'DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL')"],
    ['fractional int', { numUsers: 1.5 }, '--num-users must be an integer, got 1.5'],
    ['negative seed', { seed: -1 }, '--seed must be between 0 and 4294967295, got -1'],
    ['huge seed', { seed: 2 ** 32 }, '--seed must be between 0 and 4294967295, got 4294967296'],
    ['zero chunk', { ioChunkMib: 0 }, '--io-chunk-mib must be between 1 and 1024, got 0'],
    ['deep queue', { ioDepth: 4096 }, '--io-depth must be between 1 and 1024, got 4096'],
    ['bad direct-io', { directIo: 'yes' }, "argument --direct-io: invalid choice: 'yes' (choose from 'auto', 'on', 'off')"],
    ['bad fsync policy', { fsyncPolicy: 'always' }, "argument --fsync-policy: invalid choice: 'always' (choose from 'per-entry', 'none')"],
    ['bad promotion', { promotion: 'lru' }, "argument --promotion: invalid choice: 'lru' (choose from 'none', 'on-hit')"],
    ['warm-up over an hour', { warmUp: 3601 }, '--warm-up must be between 0 and 3600, got 3601'],
    ['warm-up with the autoscaler', { warmUp: 5, enableAutoscaling: true }, '--warm-up cannot be combined with --enable-autoscaling: the autoscaler ramps up as part of what it measures'],
    ['empty cache dir', { cacheDir: '' }, '--cache-dir must not be empty'],
    ['unknown model', { model: 'gpt-5' }, "Unknown model 'gpt-5'. Available models: deepseek-v3, gpt-oss-120b, gpt-oss-20b, llama2-7b, llama3.1-70b-instruct, llama3.1-8b, mistral-7b, qwen3-32b, tiny-1b"],
    ['wrong type', { enableRag: 'yes' }, '--enable-rag must be true or false'],
  ];

  it.each(cases)('%s', (_name, input, message) => {
    expect(errorsOf(input)).toEqual([message]);
  });

  it('accepts the boundaries', () => {
    const r = validateRunOptions({
      numUsers: 100_000, duration: 86_400, gpuMemGb: 0, cpuMemGb: 0, targetSaturation: 1, tensorParallel: 8, numGpus: 8,
      seed: 0, ioChunkMib: 1024, ioDepth: 1, traceSpeedup: 0,
    });
    expect(r.ok).toBe(true);
  });

  it('reports every error at once, cross-field rules included, even beside an invalid choice', () => {
    const errors = errorsOf({
      numUsers: 0, duration: 100_000, gpuMemGb: -1, targetSaturation: 2, tensorParallel: 4, prefillOnly: true, decodeOnly: true,
      model: 'nope', generationMode: 'bogus', enableRag: 'x',
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        '--num-users must be positive, got 0',
        '--duration exceeds 24 hours (86400s), got 100000',
        '--gpu-mem-gb cannot be negative, got -1',
        '--target-saturation must be between 0.0 and 1.0, got 2',
        '--tensor-parallel (4) cannot exceed --num-gpus (1)',
        '--prefill-only and --decode-only are mutually exclusive',
        "argument --generation-mode: invalid choice: 'bogus' (choose from 'none', 'fast', 'realistic')",
        '--enable-rag must be true or false',
      ]),
    );
    expect(errors.some((e) => e.startsWith("Unknown model 'nope'"))).toBe(true);
    expect(errors).toHaveLength(9);
  });

  it("a config's validation_limits replaces the reference's limits", () => {
    const tuning = { validation_limits: { max_users: 10, max_duration_seconds: 30 } };
    expect(errorsOf({ numUsers: 11, duration: 31, tuning })).toEqual(['--num-users exceeds limit (10), got 11', '--duration exceeds limit (30s), got 31']);
    expect(validateRunOptions({ numUsers: 10, duration: 30, tuning }).ok).toBe(true);
  });

  it('a user-added model is accepted as --model; an incomplete one is reported once', () => {
    const customModels = { mine: { num_layers: 2, hidden_dim: 64, num_heads: 4, kv_heads: 2 } };
    expect(validateRunOptions({ model: 'mine', customModels }).ok).toBe(true);
    expect(errorsOf({ model: 'broken', customModels: { broken: { num_layers: 2 } } })).toEqual([
      "model 'broken': missing hidden_dim, num_heads, kv_heads (required for a model that is not built in)",
    ]);
  });

  it('tuning sections are strict and typed', () => {
    expect(errorsOf({ tuning: { qos_profiles: { interactive: { target_latency_p95_ms: 'fast' } } } })).toHaveLength(1);
    expect(errorsOf({ tuning: { rag: { top_k: 5 } } })).toHaveLength(1);
    expect(errorsOf({ tuning: { user_templates: { chatbot: { context_range: [4096, 512] } } } })).toHaveLength(1);
    expect(validateRunOptions({ tuning: { qos_profiles: { batch: { priority: 1, target_latency_p95_ms: 900 } }, decode: { batch_size: 16 } } }).ok).toBe(true);
  });
});
