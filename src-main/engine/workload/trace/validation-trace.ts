import fsp from 'node:fs/promises';
import { z } from 'zod';
import { inputError } from '../sources/input-errors.ts';
import { readJsonArray } from '../sources/json-array-reader.ts';

/**
 * `--validation-trace PATH` (reference `ValidationEngine`): compares the run's cache hit rate with that
 * of a recorded trace. The results get `validation = {passed, avg_error_pct, comparison, trace_stats}`;
 * passed = the average error ≤ 5 %.
 */
export const VALIDATION_TOLERANCE_PCT = 5;

/** The reference's record: exactly these keys (unknown keys are an error there too). */
const TraceRecordSchema = z.strictObject({
  timestamp: z.union([z.number(), z.string()]),
  request_id: z.union([z.string(), z.number()]),
  user_id: z.union([z.string(), z.number()]),
  context_tokens: z.number().nonnegative(),
  generation_tokens: z.number().nonnegative(),
  phase: z.string(),
  cache_hit: z.boolean(),
  cache_tier: z.string().nullable(),
  read_bytes: z.number().nonnegative(),
  write_bytes: z.number().nonnegative(),
  read_latency_ms: z.number().nonnegative(),
  write_latency_ms: z.number().nonnegative(),
  model_name: z.string(),
  conversation_id: z.union([z.string(), z.number()]).nullable().optional(),
  turn_number: z.number().int().nullable().optional(),
  prefix_cached: z.boolean().nullable().optional(),
});

export interface ValidationTraceStats {
  total_requests: number;
  /** Fraction of the trace's requests with cache_hit. */
  cache_hit_rate: number;
  /** Σ read_bytes ÷ max(Σ write_bytes, 1). */
  read_write_ratio: number;
  context_tokens_mean: number;
  generation_tokens_mean: number;
  /** Only in the reference's fallback. */
  duration_seconds?: number;
}

/** What the reference compares with when the trace file does not exist. */
export const DEFAULT_VALIDATION_TRACE_STATS: Readonly<ValidationTraceStats> = Object.freeze({
  total_requests: 1000,
  duration_seconds: 100,
  cache_hit_rate: 0.65,
  read_write_ratio: 10.0,
  context_tokens_mean: 1024,
  generation_tokens_mean: 200,
});

export interface ValidationBlock {
  passed: boolean;
  /** Mean of the metrics' error_pct (one metric: the hit rate); null when it cannot be computed. */
  avg_error_pct: number | null;
  comparison: {
    cache_hit_rate: { benchmark: number; trace: number; error_pct: number | null; within_5pct: boolean };
  };
  trace_stats: ValidationTraceStats;
  /** kvbench: where trace_stats came from. */
  trace_source: 'file' | 'default (file not found)';
}

/**
 * Reads a validation trace (a JSON array of the reference's records, streamed: any size) into its
 * statistics. A missing file gives the reference's built-in defaults; a malformed one is a VALIDATION
 * error naming the file and the record's line.
 */
export async function loadValidationTrace(file: string): Promise<{ stats: ValidationTraceStats; source: ValidationBlock['trace_source'] }> {
  try {
    await fsp.access(file);
  } catch {
    return { stats: { ...DEFAULT_VALIDATION_TRACE_STATS }, source: 'default (file not found)' };
  }
  let n = 0;
  let hits = 0;
  let readBytes = 0;
  let writeBytes = 0;
  let ctx = 0;
  let gen = 0;
  await readJsonArray(file, ({ value, index, lineNo }) => {
    const r = TraceRecordSchema.safeParse(value);
    if (!r.success) {
      const first = r.error.issues[0];
      const field = first.path.join('.') || 'record';
      // An issue at a key's path means the record was an object: the key is either absent or wrong.
      const missing = first.path.length === 1 && !(String(first.path[0]) in (value as object));
      const what =
        first.code === 'unrecognized_keys' ? `unknown key(s) ${first.keys.join(', ')}` : missing ? `the required key ${field} is missing` : `${field}: ${first.message}`;
      throw inputError(file, lineNo, `validation-trace record ${index + 1}: ${what}`);
    }
    n++;
    if (r.data.cache_hit) hits++;
    readBytes += r.data.read_bytes;
    writeBytes += r.data.write_bytes;
    ctx += r.data.context_tokens;
    gen += r.data.generation_tokens;
  });
  if (n === 0) throw inputError(file, null, 'the validation trace has no records');
  return {
    stats: {
      total_requests: n,
      cache_hit_rate: hits / n,
      read_write_ratio: readBytes / Math.max(writeBytes, 1),
      context_tokens_mean: ctx / n,
      generation_tokens_mean: gen / n,
    },
    source: 'file',
  };
}

/**
 * The validation block for a run whose cache hit rate was `benchmarkHitRate`. error_pct = |b − t| ÷ t
 * × 100. Fix: a trace hit rate of 0 (the reference divides by zero) gives 0 % when the run's is 0 too,
 * and null (failed) otherwise.
 */
export function compareWithTrace(benchmarkHitRate: number, stats: ValidationTraceStats, source: ValidationBlock['trace_source']): ValidationBlock {
  const t = stats.cache_hit_rate;
  const b = benchmarkHitRate;
  const errorPct = t !== 0 ? (Math.abs(b - t) / t) * 100 : b === 0 ? 0 : null;
  const within = errorPct !== null && errorPct <= VALIDATION_TOLERANCE_PCT;
  const avg = errorPct;
  return {
    passed: avg !== null && avg <= VALIDATION_TOLERANCE_PCT,
    avg_error_pct: avg,
    comparison: { cache_hit_rate: { benchmark: b, trace: t, error_pct: errorPct, within_5pct: within } },
    trace_stats: stats,
    trace_source: source,
  };
}
