import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_TOP_LEVEL_KEYS, loadConfigFile, parseConfigText } from '../../../src-main/engine/config/load-config.ts';
import { parseRunArgs } from '../../../src-main/engine/config/parse-run-args.ts';
import { bytesPerToken, resolveModel } from '../../../src-shared/domain/models.ts';
import type { RunOptions } from '../../../src-shared/domain/run-options.ts';

let dir: string;
let n = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kvbench-config-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Write a config file and return its path. */
function cfg(text: string): string {
  const f = join(dir, `c${n++}.yaml`);
  writeFileSync(f, text);
  return f;
}
function errorsOf(text: string): string[] {
  const r = parseConfigText(text, '/cfg/kv.yaml');
  return r.ok ? [] : r.errors;
}
function run(argv: string[]): RunOptions {
  const r = parseRunArgs(argv, { cwd: dir });
  if (r.ok !== true) throw new Error(JSON.stringify(r));
  return r.options;
}

describe('strictness', () => {
  it('an unknown top-level key is an error naming the key, the file and the line', () => {
    expect(errorsOf('run:\n  num_users: 5\nqos_profile:\n  batch: {}\n')).toEqual([
      `/cfg/kv.yaml:3: Unknown configuration key: 'qos_profile' (did you mean 'qos_profiles'?). Valid keys at this level: ${CONFIG_TOP_LEVEL_KEYS.join(', ')}`,
    ]);
  });

  it('an unknown run option names the key and suggests the right spelling', () => {
    expect(errorsOf('run:\n  num_user: 5\n  cpuMemGb: 1\n  cpu-memory-gb: 1\n  users: 3\n  config: x.yaml\n')).toEqual([
      "/cfg/kv.yaml:2: Unknown configuration key: 'run.num_user' (did you mean 'num_users'?)",
      "/cfg/kv.yaml:3: Unknown configuration key: 'run.cpuMemGb' (did you mean 'cpu_mem_gb'?)",
      "/cfg/kv.yaml:4: Unknown configuration key: 'run.cpu-memory-gb' (did you mean 'cpu_mem_gb'?)",
      "/cfg/kv.yaml:5: Unknown configuration key: 'run.users' (did you mean 'num_users'?)",
      "/cfg/kv.yaml:6: Unknown configuration key: 'run.config' (a config file cannot name another one)",
    ]);
  });

  it('unknown keys nested in the reference sections and in model entries are errors', () => {
    const e = errorsOf('qos_profiles:\n  interactive:\n    target_latency_p95: 40\nmodel_configs:\n  m:\n    num_layer: 3\n');
    expect(e).toHaveLength(2);
    expect(e[0]).toMatch(/^\/cfg\/kv\.yaml:6: Unknown configuration key: 'model_configs\.m\.num_layer' \(did you mean 'num_layers'\?\)/);
    expect(e[1]).toMatch(/^\/cfg\/kv\.yaml:3: Unknown configuration key: 'qos_profiles\.interactive\.target_latency_p95' \(did you mean 'target_latency_p95_ms'\?\)/);
  });

  it('types are checked, with the flag named for run options', () => {
    expect(errorsOf('run:\n  num_users: many\n  duration: 0\n  enable_rag: yes\n  generation_mode: slow\n')).toEqual([
      '/cfg/kv.yaml:2: run.num_users: --num-users must be a number',
      '/cfg/kv.yaml:3: run.duration: --duration must be positive, got 0',
      '/cfg/kv.yaml:4: run.enable_rag: --enable-rag must be true or false',
      "/cfg/kv.yaml:5: run.generation_mode: argument --generation-mode: invalid choice: 'slow' (choose from 'none', 'fast', 'realistic')",
    ]);
    expect(errorsOf('decode:\n  batch_size: 2.5\n')).toEqual(['/cfg/kv.yaml:2: decode.batch_size: Invalid input: expected int, received number']);
    expect(errorsOf('run: 5\n')).toEqual(["/cfg/kv.yaml:1: Config key 'run' must be a mapping of flag names to values, got a number"]);
    expect(errorsOf('- a\n')).toEqual(['/cfg/kv.yaml: the top level must be a mapping of sections, got a list']);
  });

  it('a !!binary or !!timestamp value is said as such, not read as a mapping of its bytes', () => {
    // `run: !!binary aGVsbG8=` gave "Unknown configuration key: 'run.0'" … 'run.4'.
    expect(errorsOf('run: !!binary aGVsbG8=\n')).toEqual(["/cfg/kv.yaml:1: Config key 'run' must be a mapping of flag names to values, got binary data (a !!binary value)"]);
    expect(errorsOf('run: !!timestamp 2001-12-14\n')).toEqual(["/cfg/kv.yaml:1: Config key 'run' must be a mapping of flag names to values, got a date (a !!timestamp value)"]);
    expect(errorsOf('!!binary aGVsbG8=\n')).toEqual(['/cfg/kv.yaml: the top level must be a mapping of sections, got binary data (a !!binary value)']);
  });

  it('YAML merge keys (<<: *anchor), as PyYAML reads them, build a model from another', () => {
    const text = 'model_configs:\n  small: &small\n    num_layers: 2\n    hidden_dim: 128\n    num_heads: 2\n    kv_heads: 1\n  small-wide:\n    <<: *small\n    hidden_dim: 256\n';
    const r = parseConfigText(text, '/cfg/kv.yaml');
    expect(r.ok, JSON.stringify(r)).toBe(true);
    if (r.ok) expect(r.config.customModels).toMatchObject({ 'small-wide': { num_layers: 2, hidden_dim: 256, num_heads: 2, kv_heads: 1 } });
  });

  it('a document whose aliases expand without bound is refused with the file named, not a crash', () => {
    const row = (name: string, of: string) => `${name}: &${name} [${Array(9).fill(of).join(', ')}]`;
    const bomb = [row('a', 'x'), row('b', '*a'), row('c', '*b'), row('d', '*c'), row('e', '*d')].join('\n');
    expect(errorsOf(bomb)).toEqual([expect.stringMatching(/^\/cfg\/kv\.yaml: the YAML cannot be expanded: Excessive alias count/)]);
  });

  it('malformed YAML and duplicate keys name file and line', () => {
    expect(errorsOf('run:\n  num_users: 5\n  bad: [\n')).toEqual([
      '/cfg/kv.yaml:4:1: malformed YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
    ]);
    expect(errorsOf('run:\n  num_users: 5\n  num_users: 6\n')).toEqual(['/cfg/kv.yaml:3:3: malformed YAML: Map keys must be unique']);
  });

  it('a model may not be defined in both model sections', () => {
    expect(errorsOf('model_configs:\n  x: {num_layers: 2}\ncustom_models:\n  x: {num_layers: 3}\n')).toEqual([
      "/cfg/kv.yaml:4: model 'x' is defined in both model_configs and custom_models",
    ]);
  });

  it('reports every problem in the file at once', () => {
    expect(errorsOf('foo: 1\nrun:\n  bar: 2\n  num_users: 0\nrag:\n  top_k_chunks: -1\n')).toHaveLength(4);
  });

  it('refuses rag document sizes with min above max, also against the built-in value of the key not given', () => {
    expect(errorsOf('rag:\n  large_model_doc_tokens_min: 5000\n  large_model_doc_tokens_max: 2000\n')).toEqual([
      '/cfg/kv.yaml:2: rag.large_model_doc_tokens_min (5000) must be <= rag.large_model_doc_tokens_max (2000)',
    ]);
    expect(errorsOf('rag:\n  small_model_doc_tokens_min: 20000\n')).toEqual([
      '/cfg/kv.yaml:2: rag.small_model_doc_tokens_min (20000) must be <= rag.small_model_doc_tokens_max (12000, the built-in value)',
    ]);
    expect(errorsOf('rag:\n  large_model_doc_tokens_min: 3000\n  large_model_doc_tokens_max: 3000\n')).toEqual([]);
  });

  it('an empty file is an empty config', () => {
    expect(parseConfigText('', '/cfg/kv.yaml')).toEqual({ ok: true, config: { file: '/cfg/kv.yaml', run: {}, customModels: {}, tuning: {} } });
    expect(parseConfigText('# nothing\n', '/cfg/kv.yaml').ok).toBe(true);
  });

  it('a missing file is reported with its path', () => {
    expect(loadConfigFile(join(dir, 'absent.yaml'))).toEqual({ ok: false, errors: [`Config file not found: ${join(dir, 'absent.yaml')}`] });
  });
});

describe('what a config gives', () => {
  it("accepts every section of the reference's config.yaml, kept verbatim as tuning", () => {
    const text = [
      'user_templates:', '  chatbot: {context_range: [512, 4096], generation_range: [50, 200], think_time_range: [0.1, 0.5]}',
      'generation_timing: {none: 0, fast: 0.002, realistic: 0.03}',
      'qos_profiles:', '  interactive: {target_latency_p95_ms: 50, target_latency_p99_ms: 100, target_latency_p999_ms: 150, target_latency_p9999_ms: 200, priority: 3}',
      'qos_distribution: {interactive_probability: 0.15, responsive_threshold: 0.5}',
      'eviction: {max_recursion_depth: 10, target_usage_ratio: 0.8, large_entry_limit_ratio: 0.95, max_evictions_hard_cap: 5000, max_evictions_min: 1000}',
      'gpu_backend: {memory_fraction: 0.8, max_eviction_attempts: 100, free_memory_threshold: 0.1}',
      'prefix_cache: {min_prefix_length: 50, max_prefix_entries: 1000, system_prompt_hit_probability: 0.2}',
      'rag: {chunk_size_tokens: 512, top_k_chunks: 5, max_chunk_bytes: 268435456, request_probability: 0.1, retrieval_distribution: zipfian, max_documents: 100,',
      '      large_model_doc_tokens_min: 1024, large_model_doc_tokens_max: 4096, small_model_doc_tokens_min: 4000, small_model_doc_tokens_max: 12000}',
      'conversation: {max_conversations: 1000, max_turns_per_conv: 50, end_conversation_probability: 0.2}',
      'autoscaler: {min_users: 1, max_users: 10000, scale_up_factor: 1.2, scale_down_factor: 0.8, consecutive_samples_required: 2}',
      'decode: {batch_size: 32}',
      'sharegpt: {max_context_tokens: 16384, max_generation_tokens: 2048, chars_per_token_estimate: 4}',
      'saturation_detection: {read_latency_p95_threshold_ms: 100, write_latency_p95_threshold_ms: 50, queue_depth_threshold: 100, history_window_size: 10}',
      'validation_limits: {max_users: 100000, max_duration_seconds: 86400, max_gpu_memory_gb: 65536, max_cpu_memory_gb: 131072}',
      '',
    ].join('\n');
    const r = parseConfigText(text, '/cfg/kv.yaml');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.tuning.decode).toEqual({ batch_size: 32 });
    expect(r.config.tuning.qos_profiles?.interactive?.target_latency_p95_ms).toBe(50);
    expect(r.config.tuning.rag?.retrieval_distribution).toBe('zipfian');
    expect(Object.keys(r.config.tuning)).toHaveLength(14);
  });

  it('config values override the defaults', () => {
    const f = cfg('run:\n  num_users: 42\n  cpu_mem_gb: 4\n  generation_mode: none\n  direct_io: off\n  io_depth: 64\n');
    expect(run(['--config', f])).toMatchObject({ numUsers: 42, cpuMemGb: 4, generationMode: 'none', directIo: 'off', ioDepth: 64, duration: 60, config: f });
  });

  it('flags typed on the command line override the config, aliases included', () => {
    const f = cfg('run:\n  num_users: 42\n  cpu_mem_gb: 4\n  duration: 10\n  enable_rag: true\n');
    const o = run(['--users', '7', '--config', f, '--cpu-memory-gb', '0']);
    expect(o).toMatchObject({ numUsers: 7, cpuMemGb: 0, duration: 10, enableRag: true });
  });

  it('cross-field rules see the merged values', () => {
    const f = cfg('run:\n  num_gpus: 8\n  tensor_parallel: 8\n');
    expect(run(['--config', f])).toMatchObject({ numGpus: 8, tensorParallel: 8 });
    const r = parseRunArgs(['--config', f, '--num-gpus', '4'], { cwd: dir });
    expect(r).toEqual({ ok: false, errors: ['--tensor-parallel (8) cannot exceed --num-gpus (4)'] });
  });

  it('relative paths in the config are relative to its directory', () => {
    const sub = join(dir, 'sub');
    mkdirSync(sub, { recursive: true });
    const f = join(sub, 'kv.yaml');
    writeFileSync(f, 'run:\n  cache_dir: kv-cache\n  output: out/results.json\n');
    expect(run(['--config', f])).toMatchObject({ cacheDir: join(sub, 'kv-cache'), output: join(sub, 'out/results.json') });
    // ...while a command-line path is relative to the working directory.
    expect(run(['--config', f, '--output', 'r.json']).output).toBe(join(dir, 'r.json'));
  });

  it('a custom model from the config is usable with --model', () => {
    const f = cfg('custom_models:\n  my-13b:\n    name: My 13B\n    num_layers: 40\n    hidden_dim: 5120\n    num_heads: 40\n    kv_heads: 40\n');
    const o = run(['--config', f, '--model', 'my-13b']);
    expect(o.model).toBe('my-13b');
    const m = resolveModel(o.model, o.customModels);
    expect(m.ok && bytesPerToken(m.model)).toBe(40 * 40 * 128 * 2 * 2);
    expect(m.ok && m.model.displayName).toBe('My 13B');
  });

  it("the reference's model_configs works too, including overriding a built-in model's fields", () => {
    const f = cfg('model_configs:\n  llama3.1-8b:\n    kv_heads: 32\n  tiny-x: {num_layers: 2, hidden_dim: 256, num_heads: 4, kv_heads: 2, dtype: float32}\n');
    const o = run(['--config', f]);
    const m = resolveModel(o.model, o.customModels);
    expect(m.ok && bytesPerToken(m.model)).toBe(32 * 32 * 128 * 2 * 2);
    const tiny = resolveModel('tiny-x', o.customModels);
    expect(tiny.ok && bytesPerToken(tiny.model)).toBe(2 * 2 * 64 * 2 * 4);
  });

  it('without the config the custom model is unknown, and the error lists the available models', () => {
    const r = parseRunArgs(['--model', 'my-13b'], { cwd: dir });
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.errors[0]).toMatch(/^Unknown model 'my-13b'\. Available models: deepseek-v3, gpt-oss-120b/);
  });

  it('an incomplete new model is reported', () => {
    const f = cfg('custom_models:\n  half: {num_layers: 4}\n');
    expect(parseRunArgs(['--config', f], { cwd: dir })).toEqual({
      ok: false,
      errors: ["model 'half': missing hidden_dim, num_heads, kv_heads (required for a model that is not built in)"],
    });
  });

  it("validation_limits from the config apply to the command line's values", () => {
    const f = cfg('validation_limits:\n  max_users: 500000\n');
    expect(run(['--config', f, '--num-users', '200000']).numUsers).toBe(200000);
    expect(parseRunArgs(['--num-users', '200000'], { cwd: dir }).ok).toBe(false);
  });

  it('config errors and command-line errors are reported together', () => {
    const f = cfg('run:\n  bogus: 1\n');
    const r = parseRunArgs(['--config', f, '--num-users', '0', '--nope'], { cwd: dir });
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.errors).toEqual([
      'unrecognized arguments: --nope',
      `${f}:2: Unknown configuration key: 'run.bogus'`,
      '--num-users must be positive, got 0',
    ]);
  });
});
