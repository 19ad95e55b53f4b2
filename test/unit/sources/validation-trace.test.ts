import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compareWithTrace, DEFAULT_VALIDATION_TRACE_STATS, loadValidationTrace } from '../../../src-main/engine/workload/trace/validation-trace.ts';
import { removeTempDirs, tempDir, writeFile } from './helpers.ts';

afterEach(removeTempDirs);

const rec = (i: number, hit: boolean) => ({
  timestamp: 1000 + i,
  request_id: `r${i}`,
  user_id: 'u',
  context_tokens: 1000 + i,
  generation_tokens: 100,
  phase: 'decode',
  cache_hit: hit,
  cache_tier: hit ? 'cpu' : null,
  read_bytes: hit ? 3000 : 0,
  write_bytes: 1000,
  read_latency_ms: 1,
  write_latency_ms: 2,
  model_name: 'llama3.1-8b',
});

describe('validation trace', () => {
  it('computes the trace statistics and the comparison (reference formulas)', async () => {
    const file = writeFile(tempDir(), 'v.json', JSON.stringify([rec(0, true), rec(1, true), rec(2, false), { ...rec(3, true), turn_number: 2, conversation_id: 'c', prefix_cached: false }], null, 2));
    const { stats, source } = await loadValidationTrace(file);
    expect(source).toBe('file');
    expect(stats).toEqual({ total_requests: 4, cache_hit_rate: 0.75, read_write_ratio: 9000 / 4000, context_tokens_mean: 1001.5, generation_tokens_mean: 100 });
    // As the engine does: the trace is loaded before the run, compared with the run's hit rate after it.
    const v = compareWithTrace(0.72, stats, source);
    expect(v.comparison.cache_hit_rate.benchmark).toBe(0.72);
    expect(v.comparison.cache_hit_rate.error_pct).toBeCloseTo(4, 9);
    expect(v).toMatchObject({ passed: true, comparison: { cache_hit_rate: { trace: 0.75, within_5pct: true } } });
    expect(v.avg_error_pct).toBeCloseTo(4, 9);
    expect(v.trace_source).toBe('file');
    expect(compareWithTrace(0.5, stats, source).passed).toBe(false);
  });

  // The CLI refuses a missing file with the other flags; this is the reference's fallback for a file
  // gone between that check and the load.
  it('uses the reference defaults when the file does not exist', async () => {
    const { stats, source } = await loadValidationTrace(path.join(tempDir(), 'missing.json'));
    const v = compareWithTrace(0, stats, source);
    expect(v.trace_stats).toEqual(DEFAULT_VALIDATION_TRACE_STATS);
    expect(v.trace_source).toBe('default (file not found)');
    expect(v.comparison.cache_hit_rate).toEqual({ benchmark: 0, trace: 0.65, error_pct: 100, within_5pct: false });
  });

  it('does not divide by a zero trace hit rate', () => {
    const stats = { ...DEFAULT_VALIDATION_TRACE_STATS, cache_hit_rate: 0 };
    expect(compareWithTrace(0, stats, 'file')).toMatchObject({ passed: true, avg_error_pct: 0 });
    expect(compareWithTrace(0.1, stats, 'file')).toMatchObject({ passed: false, avg_error_pct: null, comparison: { cache_hit_rate: { error_pct: null, within_5pct: false } } });
  });

  it('refuses unknown keys, wrong types and empty traces with the file and line', async () => {
    const dir = tempDir();
    const unknown = writeFile(dir, 'u.json', `[\n${JSON.stringify(rec(0, true))},\n${JSON.stringify({ ...rec(1, true), extra: 1 })}\n]`);
    await expect(loadValidationTrace(unknown)).rejects.toThrow(/u\.json, line 3: validation-trace record 2: unknown key\(s\) extra/);
    const typed = writeFile(dir, 't.json', JSON.stringify([{ ...rec(0, true), cache_hit: 'yes' }]));
    await expect(loadValidationTrace(typed)).rejects.toThrow(/t\.json, line 1: validation-trace record 1: cache_hit/);
    await expect(loadValidationTrace(writeFile(dir, 'e.json', '[]'))).rejects.toThrow(/has no records/);
    const { request_id: _gone, ...withoutId } = rec(0, true);
    const missing = writeFile(dir, 'm.json', JSON.stringify([withoutId]));
    await expect(loadValidationTrace(missing)).rejects.toThrow(/m\.json, line 1: validation-trace record 1: the required key request_id is missing/);
  });
});
