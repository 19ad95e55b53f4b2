import { describe, expect, it } from 'vitest';
import {
  BUILTIN_MODEL_KEYS,
  BUILTIN_MODELS,
  ModelConfigEntrySchema,
  availableModelNames,
  bytesPerToken,
  elementsPerToken,
  entryBytes,
  resolveModel,
  type ModelSpec,
} from '../../../src-shared/domain/models.ts';

// reference-behaviour.md §2 (and the reference's kv_cache/models.py).
const TABLE: [key: string, layers: number, hidden: number, qHeads: number, kvHeads: number, headDim: number, bytesPerToken: number][] = [
  ['tiny-1b', 12, 1024, 8, 4, 128, 24_576],
  ['mistral-7b', 32, 4096, 32, 8, 128, 131_072],
  ['llama2-7b', 32, 4096, 32, 32, 128, 524_288],
  ['llama3.1-8b', 32, 4096, 32, 8, 128, 131_072],
  ['llama3.1-70b-instruct', 80, 8192, 64, 8, 128, 327_680],
  ['deepseek-v3', 61, 7168, 128, 128, 56, 70_272],
  ['qwen3-32b', 64, 5120, 64, 8, 128, 262_144],
  ['gpt-oss-120b', 36, 2880, 64, 8, 64, 73_728],
  ['gpt-oss-20b', 24, 2880, 64, 8, 64, 49_152],
];

function model(key: string): ModelSpec {
  const r = resolveModel(key);
  if (!r.ok) throw new Error(r.error);
  return r.model;
}

describe('built-in models', () => {
  it('has exactly the nine reference models', () => {
    expect([...BUILTIN_MODEL_KEYS].sort()).toEqual(TABLE.map((r) => r[0]).sort());
  });

  it.each(TABLE)('%s: geometry and bytes per token', (key, layers, hidden, qHeads, kvHeads, headDim, bpt) => {
    const m = model(key);
    expect(m).toMatchObject({ key, layers, hiddenSize: hidden, queryHeads: qHeads, kvHeads, headDim, dtype: 'float16', dtypeBytes: 2 });
    expect(bytesPerToken(m)).toBe(bpt);
    expect(bytesPerToken(m, 1)).toBe(bpt);
    expect(entryBytes(m, 1)).toBe(bpt);
    expect(entryBytes(m, 1000)).toBe(bpt * 1000);
  });

  it('deepseek-v3 is MLA: layers × (kv_lora_rank + rope) × 2, no K/V doubling', () => {
    const m = model('deepseek-v3');
    expect(m).toMatchObject({ attention: 'mla', kvLoraRank: 512, qkRopeHeadDim: 64 });
    expect(elementsPerToken(m)).toBe(61 * (512 + 64));
    expect(bytesPerToken(m)).toBe(61 * 576 * 2);
  });

  it('an 8,192-token llama3.1-8b context is exactly 1 GiB', () => {
    expect(entryBytes(model('llama3.1-8b'), 8192)).toBe(1024 ** 3);
  });

  it('resolveModel returns the shared built-in spec', () => {
    expect(resolveModel('mistral-7b')).toEqual({ ok: true, model: BUILTIN_MODELS['mistral-7b'] });
  });
});

describe('tensor-parallel sharding', () => {
  it.each(TABLE)('%s: each rank holds exactly 1/TP of an entry for TP = 2, 4, 8', (key, ...rest) => {
    const bpt = rest[5];
    const m = model(key);
    for (const tp of [2, 4, 8]) {
      expect(bytesPerToken(m, tp)).toBe(bpt / tp);
      expect(entryBytes(m, 2048, tp) * tp).toBe(entryBytes(m, 2048));
    }
  });

  it('rounds like the reference: floor over the whole entry, in elements', () => {
    // 3 layers × 1 kv head × 1 dim × 2 = 6 elements per token; TP 4.
    const r = resolveModel('odd', { odd: { num_layers: 3, hidden_dim: 1, num_heads: 1, kv_heads: 1 } });
    if (!r.ok) throw new Error(r.error);
    expect(elementsPerToken(r.model)).toBe(6);
    expect(bytesPerToken(r.model, 4)).toBe(Math.floor(6 / 4) * 2); // 2
    expect(entryBytes(r.model, 3, 4)).toBe(Math.floor(18 / 4) * 2); // 8, not 3 × 2
    expect(entryBytes(r.model, 10, 4)).toBe(Math.floor(60 / 4) * 2); // 30
  });

  it('refuses a TP below 1 or fractional, and negative token counts', () => {
    const m = model('tiny-1b');
    expect(() => bytesPerToken(m, 0)).toThrow(RangeError);
    expect(() => bytesPerToken(m, 1.5)).toThrow(RangeError);
    expect(() => entryBytes(m, -1)).toThrow(RangeError);
  });
});

describe('resolveModel and user-added models', () => {
  it('an unknown model lists every available model, sorted (reference text)', () => {
    const r = resolveModel('gpt-5');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toBe(
      "Unknown model 'gpt-5'. Available models: deepseek-v3, gpt-oss-120b, gpt-oss-20b, llama2-7b, llama3.1-70b-instruct, llama3.1-8b, mistral-7b, qwen3-32b, tiny-1b",
    );
  });

  it('lists user-added models among the available ones', () => {
    const custom = { 'aaa-model': { num_layers: 2, hidden_dim: 64, num_heads: 2, kv_heads: 1 } };
    expect(availableModelNames(custom)[0]).toBe('aaa-model');
    const r = resolveModel('nope', custom);
    expect(!r.ok && r.error.includes('aaa-model, deepseek-v3')).toBe(true);
  });

  it('a new model with all core fields resolves; head dim = hidden ÷ heads (integer division)', () => {
    const r = resolveModel('mine', { mine: { name: 'Mine', num_layers: 40, hidden_dim: 5000, num_heads: 48, kv_heads: 8, dtype: 'bfloat16' } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.model).toMatchObject({ displayName: 'Mine', headDim: 104, dtypeBytes: 2, attention: 'mha' });
    expect(bytesPerToken(r.model)).toBe(40 * 8 * 104 * 2 * 2);
  });

  it('a new model missing core fields is an error naming them', () => {
    const r = resolveModel('half', { half: { num_layers: 4 } });
    expect(r).toEqual({ ok: false, error: "model 'half': missing hidden_dim, num_heads, kv_heads (required for a model that is not built in)" });
  });

  it('an entry for a built-in model overrides only the fields it names (reference merge)', () => {
    const r = resolveModel('llama3.1-8b', { 'llama3.1-8b': { num_layers: 16, dtype: 'float32' } });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.model).toMatchObject({ layers: 16, kvHeads: 8, headDim: 128, dtypeBytes: 4, displayName: 'Llama 3.1 8B' });
    expect(bytesPerToken(r.model)).toBe(16 * 8 * 128 * 2 * 4);
  });

  it('a custom MLA model uses rank + rope; MLA without them is an error', () => {
    const ok = resolveModel('mla', { mla: { num_layers: 10, hidden_dim: 1024, num_heads: 8, kv_heads: 8, attention_type: 'mla', kv_lora_rank: 256, qk_rope_head_dim: 32, dtype: 'int8' } });
    expect(ok.ok && bytesPerToken(ok.model)).toBe(10 * 288 * 1);
    const bad = resolveModel('mla', { mla: { num_layers: 10, hidden_dim: 1024, num_heads: 8, kv_heads: 8, attention_type: 'mla' } });
    expect(bad.ok).toBe(false);
  });

  it('a head dimension of 0 is refused unless kv_dim_per_head is given', () => {
    expect(resolveModel('x', { x: { num_layers: 1, hidden_dim: 4, num_heads: 8, kv_heads: 1 } }).ok).toBe(false);
    expect(resolveModel('x', { x: { num_layers: 1, hidden_dim: 4, num_heads: 8, kv_heads: 1, kv_dim_per_head: 16 } }).ok).toBe(true);
  });

  it('the entry schema is strict and typed', () => {
    expect(ModelConfigEntrySchema.safeParse({ num_layers: 2, layers: 3 }).success).toBe(false);
    expect(ModelConfigEntrySchema.safeParse({ num_layers: 0 }).success).toBe(false);
    expect(ModelConfigEntrySchema.safeParse({ num_layers: 2.5 }).success).toBe(false);
    expect(ModelConfigEntrySchema.safeParse({ dtype: 'fp8' }).success).toBe(false);
    expect(ModelConfigEntrySchema.safeParse({ num_layers: 2, dtype: 'int8', attention_type: 'gqa' }).success).toBe(true);
  });
});
