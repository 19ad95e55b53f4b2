/**
 * The `--config` YAML file: strict keys, typed values, errors that name the file and the line.
 *
 * Layout (every section optional):
 *
 *   run:                 # kvbench: any `kvbench run` flag, as its snake_case name (argparse's dest)
 *     num_users: 200     #   --num-users 200
 *     cpu_mem_gb: 4      #   --cpu-mem-gb 4
 *     cache_dir: ./kv    #   relative paths are relative to this file's directory
 *   model_configs:       # the reference's section: add models, or override fields of built-in ones
 *     my-model: { num_layers: 40, hidden_dim: 5120, num_heads: 40, kv_heads: 8 }
 *   custom_models: {}    # kvbench's name for the same thing (a model may appear in only one of the two)
 *   qos_profiles: …      # and every other section of the reference's config.yaml (user_templates,
 *                        # generation_timing, qos_distribution, eviction, gpu_backend, prefix_cache, rag,
 *                        # conversation, autoscaler, decode, sharegpt, saturation_detection,
 *                        # validation_limits), with the reference's keys; kept verbatim in `tuning`
 *
 * Precedence: built-in defaults < values from this file < flags given explicitly on the command line.
 * (A flag that was not typed never overrides the file, even where its default differs.)
 *
 * Differences from the reference, on purpose: unknown keys inside `model_configs` entries are errors
 * (the reference accepts anything there); YAML syntax errors and duplicate keys name file and line;
 * every problem is reported, not just the first.
 *
 * Reading the file is the only I/O; nothing is written.
 */
import { printable } from '../../../src-shared/domain/label-text.ts';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LineCounter, parseDocument, isMap, isScalar, type Document, type Node as YamlNode } from 'yaml';
import { z } from 'zod';
import { ModelConfigEntrySchema, type CustomModels } from '../../../src-shared/domain/models.ts';
import { RunOptionsFieldSchemas, TuningSchema, TUNING_SECTIONS, type Tuning } from '../../../src-shared/domain/run-options.ts';
import { DEFAULT_WORKLOAD_PROFILE } from '../workload/workload-profile.ts';
import { CONFIG_RUN_FLAGS, closest, configKeyOf, type FlagSpec } from './flags.ts';

/** Values a config file sets, before command-line flags are applied. */
export interface LoadedConfig {
  /** Absolute path of the file. */
  readonly file: string;
  /** Run options it sets (camelCase keys); relative paths already resolved against the file's directory. */
  readonly run: Readonly<Record<string, unknown>>;
  readonly customModels: CustomModels;
  readonly tuning: Tuning;
}

export type LoadConfigResult = { ok: true; config: LoadedConfig } | { ok: false; errors: string[] };

const MODEL_SECTIONS = ['model_configs', 'custom_models'] as const;
export const CONFIG_TOP_LEVEL_KEYS: readonly string[] = Object.freeze(['run', ...MODEL_SECTIONS, ...TUNING_SECTIONS]);

/**
 * Read and validate a config file. Never throws. Each error is one line, escaped (printable): it names
 * the user's path and may quote the file (a YAML parser's snippet), neither of which may break the
 * line or reach the terminal as control characters.
 */
export function loadConfigFile(file: string): LoadConfigResult {
  const result = readConfigFile(file);
  return result.ok ? result : { ok: false, errors: result.errors.map(printable) };
}

function readConfigFile(file: string): LoadConfigResult {
  const abs = resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, errors: [`Config file not found: ${abs}`] };
    if (code === 'EISDIR') return { ok: false, errors: [`--config is a directory, not a file: ${abs}`] };
    return { ok: false, errors: [`Cannot read config file ${abs}: ${(e as Error).message}`] };
  }
  return parseConfigText(text, abs);
}

/** Validate config text; `file` names it in messages and anchors its relative paths. Pure apart from path arithmetic. */
export function parseConfigText(text: string, file: string): LoadConfigResult {
  const lineCounter = new LineCounter();
  // merge: YAML 1.1 merge keys (`<<: *anchor`), which PyYAML, and so the reference's configs, support.
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, strict: true, merge: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      errors: doc.errors.map((err) => {
        const pos = lineCounter.linePos(err.pos[0]);
        const where = `${file}:${pos.line}:${pos.col}`;
        return `${where}: malformed YAML: ${firstLine(err.message)}`;
      }),
    };
  }

  const errors: string[] = [];
  const at = (path: readonly (string | number)[]): string => {
    const line = lineOf(doc, lineCounter, path);
    return line ? `${file}:${line}` : file;
  };

  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // Aliases that expand past the limit (a "billion laughs" document), or one that points nowhere.
    return { ok: false, errors: [`${file}: the YAML cannot be expanded: ${firstLine((err as Error).message)}`] };
  }
  if (root === null || root === undefined) return { ok: true, config: { file, run: {}, customModels: {}, tuning: {} } };
  if (!isPlainObject(root)) {
    return { ok: false, errors: [`${file}: the top level must be a mapping of sections, got ${describe(root)}`] };
  }

  const run: Record<string, unknown> = {};
  const customModels: Record<string, unknown> = {};
  const tuningInput: Record<string, unknown> = {};

  for (const [key, value] of Object.entries(root)) {
    if (key === 'run') continue;
    if ((MODEL_SECTIONS as readonly string[]).includes(key)) continue;
    if (TUNING_SECTIONS.includes(key)) {
      tuningInput[key] = value;
      continue;
    }
    const hint = key === 'config' ? ' (a config file cannot name another one)' : didYouMean(key, CONFIG_TOP_LEVEL_KEYS, (k) => `'${k}'`);
    errors.push(`${at([key])}: Unknown configuration key: '${key}'${hint}. Valid keys at this level: ${CONFIG_TOP_LEVEL_KEYS.join(', ')}`);
  }

  // --- run: ---
  if ('run' in root && root.run !== null) {
    if (!isPlainObject(root.run)) {
      errors.push(`${at(['run'])}: Config key 'run' must be a mapping of flag names to values, got ${describe(root.run)}`);
    } else {
      for (const [key, value] of Object.entries(root.run)) {
        const spec = CONFIG_RUN_FLAGS.get(key);
        if (!spec) {
          errors.push(`${at(['run', key])}: Unknown configuration key: 'run.${key}'${runKeyHint(key)}`);
          continue;
        }
        const checked = RunOptionsFieldSchemas[spec.key].safeParse(value);
        if (!checked.success) {
          for (const issue of checked.error.issues) errors.push(`${at(['run', key])}: run.${key}: ${issue.message}`);
          continue;
        }
        let v: unknown = checked.data;
        if (spec.kind === 'path' && typeof v === 'string') v = resolve(dirname(file), v);
        run[spec.key] = v;
      }
    }
  }

  // --- model_configs / custom_models ---
  for (const section of MODEL_SECTIONS) {
    if (!(section in root) || root[section] === null) continue;
    const value = root[section];
    if (!isPlainObject(value)) {
      errors.push(`${at([section])}: Config key '${section}' must be a mapping of model names to definitions, got ${describe(value)}`);
      continue;
    }
    for (const [name, entry] of Object.entries(value)) {
      if (Object.hasOwn(customModels, name)) {
        errors.push(`${at([section, name])}: model '${name}' is defined in both model_configs and custom_models`);
        continue;
      }
      const checked = ModelConfigEntrySchema.safeParse(entry ?? {});
      if (!checked.success) {
        errors.push(...issuesToMessages(checked.error.issues, [section, name], ModelConfigEntrySchema, at));
        continue;
      }
      customModels[name] = checked.data;
    }
  }

  // --- the reference's tuning sections ---
  const tuning = TuningSchema.safeParse(tuningInput);
  if (!tuning.success) errors.push(...issuesToMessages(tuning.error.issues, [], TuningSchema, at));
  else errors.push(...ragRangeErrors(tuning.data, at));

  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, config: { file, run, customModels: customModels as CustomModels, tuning: tuning.success ? tuning.data : {} } };
}

// ---------------------------------------------------------------------------------------------

/**
 * The rag section's document sizes are [min, max] ranges split over two keys, so the schema cannot
 * check them as it checks `context_range`: min <= max, with the built-in value standing in for a key
 * that is not given (a min above the built-in max is as broken as one above a given max).
 */
function ragRangeErrors(tuning: Tuning, at: (path: readonly (string | number)[]) => string): string[] {
  const rag = tuning.rag;
  if (!rag) return [];
  const builtIn = DEFAULT_WORKLOAD_PROFILE.rag;
  const ranges = [
    ['large_model_doc_tokens_min', 'large_model_doc_tokens_max', builtIn.largeModelDocTokens],
    ['small_model_doc_tokens_min', 'small_model_doc_tokens_max', builtIn.smallModelDocTokens],
  ] as const;
  const errors: string[] = [];
  for (const [minKey, maxKey, [builtInMin, builtInMax]] of ranges) {
    const min = rag[minKey] ?? builtInMin;
    const max = rag[maxKey] ?? builtInMax;
    if (min <= max) continue;
    const shown = (key: string, v: number, given: boolean) => `rag.${key} (${v}${given ? '' : ', the built-in value'})`;
    const minGiven = rag[minKey] !== undefined;
    errors.push(`${at(['rag', minGiven ? minKey : maxKey])}: ${shown(minKey, min, minGiven)} must be <= ${shown(maxKey, max, rag[maxKey] !== undefined)}`);
  }
  return errors;
}

function runKeyHint(key: string): string {
  const keys = [...CONFIG_RUN_FLAGS.keys()];
  if (key === 'config') return ' (a config file cannot name another one)';
  if (key === 'custom_models' || key === 'model_configs') return ` (${key} is a top-level section, not a run option)`;
  // Flag spelled as on the command line, in camelCase, or an alias.
  const normalised = key.replace(/^--/, '').replaceAll('-', '_').replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  if (CONFIG_RUN_FLAGS.has(normalised)) return ` (did you mean '${normalised}'?)`;
  const viaAlias = [...CONFIG_RUN_FLAGS.values()].find((s: FlagSpec) => s.aliases.some((a) => a.slice(2).replaceAll('-', '_') === normalised));
  if (viaAlias) return ` (did you mean '${configKeyOf(viaAlias)}'?)`;
  return didYouMean(key, keys, (k) => `'${k}'`);
}

function didYouMean(key: string, candidates: Iterable<string>, show: (k: string) => string): string {
  const c = closest(key, candidates);
  return c ? ` (did you mean ${show(c)}?)` : '';
}

function issuesToMessages(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly (string | number)[],
  schema: z.ZodType,
  at: (path: readonly (string | number)[]) => string,
): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...(issue.path as (string | number)[])];
    if (issue.code === 'unrecognized_keys') {
      const valid = validKeysAt(schema, issue.path as (string | number)[]);
      for (const k of issue.keys) {
        const full = [...path, k].join('.');
        const hint = valid ? didYouMean(k, valid, (x) => `'${x}'`) : '';
        out.push(`${at([...path, k])}: Unknown configuration key: '${full}'${hint}.${valid ? ` Valid keys at this level: ${valid.join(', ')}` : ''}`);
      }
    } else {
      out.push(`${at(path)}: ${path.join('.')}: ${issue.message}`);
    }
  }
  return out;
}

/** Keys an object schema accepts at `path` (through optional/default wrappers), for error hints. */
function validKeysAt(schema: z.ZodType, path: readonly (string | number)[]): string[] | undefined {
  let s: unknown = schema;
  const unwrap = () => {
    for (;;) {
      const def = (s as { _zod?: { def?: { type?: string; innerType?: unknown } } })._zod?.def;
      if (def && (def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) s = def.innerType;
      else return;
    }
  };
  for (const seg of path) {
    unwrap();
    const shape = (s as { shape?: Record<string, unknown> }).shape;
    if (!shape || typeof seg !== 'string' || !(seg in shape)) return undefined;
    s = shape[seg];
  }
  unwrap();
  const shape = (s as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : undefined;
}

/** 1-based line of the key at `path` (or of the closest ancestor that exists). */
function lineOf(doc: Document, lc: LineCounter, path: readonly (string | number)[]): number | undefined {
  let node: unknown = doc.contents;
  let offset: number | undefined = (node as YamlNode | null)?.range?.[0];
  for (const seg of path) {
    if (!isMap(node)) break;
    const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg));
    if (!pair) break;
    offset = isScalar(pair.key) && pair.key.range ? pair.key.range[0] : offset;
    node = pair.value;
  }
  return offset === undefined ? undefined : lc.linePos(offset).line;
}

/** A YAML mapping: not a list, nor what a tag makes (!!binary bytes, a !!timestamp date, !!set, !!omap). */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function describe(v: unknown): string {
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return 'binary data (a !!binary value)';
  if (v instanceof Date) return 'a date (a !!timestamp value)';
  if (v instanceof Set) return 'a set (a !!set value)';
  if (v instanceof Map) return 'an ordered mapping (a !!omap or !!pairs value)';
  return `a ${typeof v}`;
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}
