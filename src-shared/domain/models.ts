/**
 * Model architectures and the KV-cache size of one token.
 *
 * The nine built-in models and their formulas match the reference (`kv_cache/models.py`):
 *   MHA/GQA: layers × kvHeads × headDim × 2 (K and V) × dtypeBytes, headDim = ⌊hidden ÷ queryHeads⌋ unless given
 *   MLA:     layers × (kvLoraRank + qkRopeHeadDim) × dtypeBytes (K and V share one latent: no ×2)
 *
 * Users add or override models through the config file's `model_configs` (the reference's name) or
 * `custom_models` section. Entries use the reference's field names, so a reference config maps 1:1;
 * an entry for a built-in key overrides only the fields it names (reference behaviour).
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';
import { shownInput } from './label-text.ts';

export const DTYPES = ['float32', 'float16', 'bfloat16', 'int8'] as const;
export type Dtype = (typeof DTYPES)[number];

/** Bytes per element, as the reference's `bytes_per_element`. */
export const DTYPE_BYTES: Readonly<Record<Dtype, number>> = {
  float32: 4,
  float16: 2,
  bfloat16: 2,
  int8: 1,
};

export const ATTENTION_TYPES = ['mha', 'gqa', 'mla'] as const;
export type AttentionType = (typeof ATTENTION_TYPES)[number];

/** A fully resolved model: everything the engine needs to size KV entries. */
export interface ModelSpec {
  /** The key users pass to `--model` (e.g. `llama3.1-8b`). */
  readonly key: string;
  readonly displayName: string;
  readonly layers: number;
  readonly hiddenSize: number;
  readonly queryHeads: number;
  readonly kvHeads: number;
  /** Dimension of one K or V head (for MLA models: the reference's nominal value, unused for sizing). */
  readonly headDim: number;
  readonly dtype: Dtype;
  readonly dtypeBytes: number;
  readonly attention: AttentionType;
  /** MLA only: compressed KV latent dimension (d_c); 0 otherwise. */
  readonly kvLoraRank: number;
  /** MLA only: decoupled RoPE key dimension (d_R^h); 0 otherwise. */
  readonly qkRopeHeadDim: number;
}

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().nonnegative();

/**
 * One entry of the config file's `model_configs` / `custom_models` section, in the reference's field
 * names. Every field is optional because an entry for a built-in model overrides only what it names;
 * a new model must give `num_layers`, `hidden_dim`, `num_heads` and `kv_heads` (checked by
 * {@link resolveModel}). Unknown fields are errors (the reference silently ignores them).
 */
export const ModelConfigEntrySchema = z.strictObject({
  name: z.string().min(1).optional(),
  num_layers: positiveInt.optional(),
  hidden_dim: positiveInt.optional(),
  num_heads: positiveInt.optional(),
  kv_heads: positiveInt.optional(),
  dtype: z.enum(DTYPES).optional(),
  /** Head-dimension override (the reference's `kv_dim_per_head`); 0 = hidden ÷ heads. */
  kv_dim_per_head: nonNegativeInt.optional(),
  attention_type: z.enum(ATTENTION_TYPES).optional(),
  kv_lora_rank: nonNegativeInt.optional(),
  qk_rope_head_dim: nonNegativeInt.optional(),
});
export type ModelConfigEntry = z.infer<typeof ModelConfigEntrySchema>;

/** User-added models, keyed by the name passed to `--model`. */
export const CustomModelsSchema = z.record(z.string().min(1), ModelConfigEntrySchema);
export type CustomModels = z.infer<typeof CustomModelsSchema>;

/** The reference's built-in models, in its own field names (values from `_DEFAULT_MODEL_CONFIGS`). */
const BUILTIN_ENTRIES: Readonly<Record<string, Required<Pick<ModelConfigEntry, 'name' | 'num_layers' | 'hidden_dim' | 'num_heads' | 'kv_heads' | 'dtype'>> & ModelConfigEntry>> = {
  'tiny-1b': { name: 'Tiny 1B', num_layers: 12, hidden_dim: 1024, num_heads: 8, kv_heads: 4, dtype: 'float16' },
  'mistral-7b': { name: 'Mistral 7B', num_layers: 32, hidden_dim: 4096, num_heads: 32, kv_heads: 8, dtype: 'float16' },
  'llama2-7b': { name: 'Llama 2 7B', num_layers: 32, hidden_dim: 4096, num_heads: 32, kv_heads: 32, dtype: 'float16' },
  'llama3.1-8b': { name: 'Llama 3.1 8B', num_layers: 32, hidden_dim: 4096, num_heads: 32, kv_heads: 8, dtype: 'float16' },
  'llama3.1-70b-instruct': {
    name: 'Llama 3.1 70B Instruct', num_layers: 80, hidden_dim: 8192, num_heads: 64, kv_heads: 8, dtype: 'float16',
  },
  'deepseek-v3': {
    name: 'DeepSeek V3', num_layers: 61, hidden_dim: 7168, num_heads: 128, kv_heads: 128, dtype: 'float16',
    attention_type: 'mla', kv_lora_rank: 512, qk_rope_head_dim: 64,
  },
  'qwen3-32b': {
    name: 'Qwen3 32B', num_layers: 64, hidden_dim: 5120, num_heads: 64, kv_heads: 8, kv_dim_per_head: 128, dtype: 'float16',
  },
  'gpt-oss-120b': {
    name: 'GPT OSS 120B (MoE)', num_layers: 36, hidden_dim: 2880, num_heads: 64, kv_heads: 8, kv_dim_per_head: 64, dtype: 'float16',
  },
  'gpt-oss-20b': {
    name: 'GPT OSS 20B (MoE)', num_layers: 24, hidden_dim: 2880, num_heads: 64, kv_heads: 8, kv_dim_per_head: 64, dtype: 'float16',
  },
};

export const BUILTIN_MODEL_KEYS: readonly string[] = Object.freeze(Object.keys(BUILTIN_ENTRIES));

export const DEFAULT_MODEL_KEY = 'llama3.1-8b';

type BuildResult = { ok: true; model: ModelSpec } | { ok: false; error: string };

function buildSpec(key: string, entry: ModelConfigEntry): BuildResult {
  const missing = (['num_layers', 'hidden_dim', 'num_heads', 'kv_heads'] as const).filter((f) => entry[f] === undefined);
  if (missing.length > 0) {
    return { ok: false, error: `model '${key}': missing ${missing.join(', ')} (required for a model that is not built in)` };
  }
  const layers = entry.num_layers!;
  const hiddenSize = entry.hidden_dim!;
  const queryHeads = entry.num_heads!;
  const kvHeads = entry.kv_heads!;
  const dtype = entry.dtype ?? 'float16';
  const attention = entry.attention_type ?? 'mha';
  const kvLoraRank = entry.kv_lora_rank ?? 0;
  const qkRopeHeadDim = entry.qk_rope_head_dim ?? 0;
  // Integer division, as the reference's `hidden_dim // num_heads`.
  const headDim = entry.kv_dim_per_head && entry.kv_dim_per_head > 0 ? entry.kv_dim_per_head : Math.floor(hiddenSize / queryHeads);
  if (attention === 'mla') {
    if (kvLoraRank + qkRopeHeadDim <= 0) {
      return { ok: false, error: `model '${key}': attention_type 'mla' needs kv_lora_rank and/or qk_rope_head_dim > 0` };
    }
  } else if (headDim <= 0) {
    return { ok: false, error: `model '${key}': head dimension is 0 (hidden_dim ${hiddenSize} < num_heads ${queryHeads}); give kv_dim_per_head` };
  }
  return {
    ok: true,
    model: Object.freeze({
      key,
      displayName: entry.name ?? key,
      layers,
      hiddenSize,
      queryHeads,
      kvHeads,
      headDim,
      dtype,
      dtypeBytes: DTYPE_BYTES[dtype],
      attention,
      kvLoraRank,
      qkRopeHeadDim,
    }),
  };
}

/** The nine reference models, resolved. */
export const BUILTIN_MODELS: Readonly<Record<string, ModelSpec>> = Object.freeze(
  Object.fromEntries(
    Object.entries(BUILTIN_ENTRIES).map(([key, entry]) => {
      const r = buildSpec(key, entry);
      if (!r.ok) throw new Error(r.error); // a defect in the table above, never user input
      return [key, r.model];
    }),
  ),
);

/** Every model name `--model` accepts, sorted (built-ins plus user-added). */
export function availableModelNames(custom: CustomModels = {}): string[] {
  return [...new Set([...BUILTIN_MODEL_KEYS, ...Object.keys(custom)])].sort();
}

/**
 * Resolve `--model`: a user entry for a built-in key overrides the fields it names; a user entry
 * for a new key must be complete. Unknown names give the reference's message
 * `Unknown model 'x'. Available models: a, b, …` (sorted).
 */
export function resolveModel(name: string, custom: CustomModels = {}): BuildResult {
  const base = Object.hasOwn(BUILTIN_ENTRIES, name) ? BUILTIN_ENTRIES[name] : undefined;
  const user = Object.hasOwn(custom, name) ? custom[name] : undefined;
  if (!base && !user) {
    return { ok: false, error: `Unknown model '${shownInput(name)}'. Available models: ${availableModelNames(custom).join(', ')}` };
  }
  if (base && !user) return { ok: true, model: BUILTIN_MODELS[name] };
  return buildSpec(name, { ...base, ...stripUndefined(user ?? {}) });
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Elements (not bytes) of KV cache per token for the whole model (all ranks). */
export function elementsPerToken(model: ModelSpec): number {
  if (model.attention === 'mla') return model.layers * (model.kvLoraRank + model.qkRopeHeadDim);
  return model.layers * model.kvHeads * model.headDim * 2;
}

function checkTensorParallel(tensorParallel: number): void {
  if (!Number.isInteger(tensorParallel) || tensorParallel < 1) {
    throw new RangeError(`tensorParallel must be an integer >= 1, got ${tensorParallel}`);
  }
}

/**
 * Bytes of KV cache one rank stores for `tokens` tokens under tensor parallelism `tensorParallel`.
 *
 * Rounding (reference behaviour): the reference generates the whole entry, then keeps
 * `data.size // TP` elements, so one rank's entry is ⌊elementsPerToken × tokens ÷ TP⌋ elements ×
 * dtypeBytes — the floor is taken over the whole entry, in elements, never per token or in bytes.
 * (Its trace mode instead floors bytes: ⌊bytesPerToken × tokens ÷ TP⌋; the two differ only when TP
 * does not divide the entry's element count, never for the built-in models at TP = 1, 2, 4, 8.)
 * Always use this for entry sizes, not `bytesPerToken(model, tp) × tokens`.
 */
export function entryBytes(model: ModelSpec, tokens: number, tensorParallel = 1): number {
  checkTensorParallel(tensorParallel);
  if (!Number.isInteger(tokens) || tokens < 0) throw new RangeError(`tokens must be a non-negative integer, got ${tokens}`);
  return Math.floor((elementsPerToken(model) * tokens) / tensorParallel) * model.dtypeBytes;
}

/**
 * KV-cache bytes per token on one rank: the reference's `kv_cache_size_per_token` at TP = 1 and
 * 1/TP of it otherwise, rounded as {@link entryBytes} rounds a one-token entry (whole elements,
 * floor). Exact for every built-in model at any power-of-two TP up to 64.
 */
export function bytesPerToken(model: ModelSpec, tensorParallel = 1): number {
  return entryBytes(model, 1, tensorParallel);
}
