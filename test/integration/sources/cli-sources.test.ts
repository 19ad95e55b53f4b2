// One short CLI run per workload source: the run completes, the results name the source, and the
// source's own statistics are there. tiny-1b, a handful of requests, unpaced replay.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TINY_RUN_FLAGS, explain, makeTempDir, readResults, removeTempDirs, runCli } from '../cli/cli-harness.ts';
import { AZURE_CONV, HAVE_TRACES, MOONCAKE_CONVERSATION, NO_TRACES_WHY, conversation, writeBurst } from '../../unit/sources/helpers.ts';
import { skippedBecause } from '../../support/skip.ts';

const noTraces = skippedBecause(!HAVE_TRACES, `${NO_TRACES_WHY}: kvbench run on the real Mooncake and Azure traces does not run`);

afterEach(removeTempDirs);

interface Source {
  kind: string;
  format: string;
  [k: string]: unknown;
}

async function run(tmp: string, extra: string[], maxRequests = 6) {
  const output = path.join(tmp, 'results.json');
  const cacheDir = path.join(tmp, 'cache');
  fs.mkdirSync(cacheDir, { recursive: true });
  const r = await runCli(
    ['run', ...TINY_RUN_FLAGS, '--num-users', '4', '--duration', '40', '--cpu-mem-gb', '1', '--seed', '11', '--max-requests', String(maxRequests), '--cache-dir', cacheDir, '--output', output, ...extra],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  const results = readResults(output);
  expect(results.requests_completed).toBeGreaterThanOrEqual(maxRequests);
  expect(results.kvbench.status).toBe('complete');
  expect(fs.readdirSync(cacheDir)).toEqual([]);
  return { results, source: results.kvbench.workload_source as Source, stderr: r.stderr };
}

describe('kvbench run with each workload source', () => {
  it('ShareGPT (--dataset-path JSON array): multi-turn reloads really hit', async () => {
    const tmp = makeTempDir();
    const convs = Array.from({ length: 12 }, (_, i) => conversation(`c${i}`, Array.from({ length: 3 }, () => [800, 200] as [number, number])));
    const file = path.join(tmp, 'sharegpt.json');
    fs.writeFileSync(file, JSON.stringify(convs));
    const { results, source } = await run(tmp, ['--dataset-path', file], 12);
    expect(source).toMatchObject({ kind: 'sharegpt', format: 'sharegpt-json', conversations_loaded: 12, turns: 36, multi_turn: true });
    expect(results.multi_turn_cache_hits).toBeGreaterThan(0);
    // Unpaced, every turn is due at once and QoS is drawn per request, yet a turn is served only after
    // the turn before it has written its entry: with the tiers holding everything, no reload misses.
    expect(results.multi_turn_cache_misses).toBe(0);
    expect(results.kvbench.tier_bytes.storage.evicted_entries).toBe(0);
  });

  it('BurstGPT (--use-burst-trace)', async () => {
    const tmp = makeTempDir();
    const file = writeBurst(
      tmp,
      Array.from({ length: 20 }, (_, i) => [i * 0.05, 300 + 40 * i, 30 + i] as [number, number, number]),
    );
    const { source } = await run(tmp, ['--use-burst-trace', '--burst-trace-path', file, '--trace-speedup', '0']);
    expect(source).toMatchObject({ kind: 'burstgpt', format: 'burstgpt-csv', trace_requests: 20, pacing: { mode: 'unpaced' } });
  });

  it.skipIf(noTraces)('Mooncake JSONL (detected): shared prefix blocks hit', async () => {
    const { results, source } = await run(makeTempDir(), ['--dataset-path', MOONCAKE_CONVERSATION, '--trace-speedup', '0', '--prefill-only'], 5);
    expect(source).toMatchObject({ kind: 'mooncake', format: 'mooncake-jsonl', trace_requests: 12_031 });
    const pb = results.kvbench.cache.prefix_blocks!;
    expect(pb.hit_rate).toBeGreaterThan(0);
    expect(pb.hits).toBeGreaterThan(0);
  });

  it.skipIf(noTraces)('Azure LLM CSV (detected)', async () => {
    const { source } = await run(makeTempDir(), ['--dataset-path', AZURE_CONV, '--trace-speedup', '0']);
    expect(source).toMatchObject({ kind: 'azure', format: 'azure-llm-csv', trace_requests: 19_366 });
  });

  it('workload file: kvbench workload generate, then replay; reused prompts hit', async () => {
    const tmp = makeTempDir();
    const file = path.join(tmp, 'workload.json');
    const g = await runCli(
      ['workload', 'generate', '--contexts', '1024', '2048', '--batches-per-context', '4', '--batch-sizes', '4', '--prompt-pool-size', '4', '--reuse-start-batch', '1', '--seed', '42', '--out', file],
      { cwd: tmp },
    );
    expect(g.code, explain(g)).toBe(0);
    expect(g.stdout).toMatch(/wrote 8 batches \(32 requests/);
    const again = path.join(tmp, 'again.json');
    await runCli(['workload', 'generate', '--contexts', '1024', '2048', '--batches-per-context', '4', '--batch-sizes', '4', '--prompt-pool-size', '4', '--reuse-start-batch', '1', '--seed', '42', '--out', again], { cwd: tmp });
    expect(fs.readFileSync(again, 'utf8')).toBe(fs.readFileSync(file, 'utf8'));
    const { results, source } = await run(tmp, ['--dataset-path', file, '--replay-cycles', '1'], 16);
    expect(source).toMatchObject({ kind: 'workload-file', format: 'kvbench-workload-json', batches: 8, requests: 32 });
    expect(results.kvbench.cache.prefix_blocks!.hits).toBeGreaterThan(0);
  });

  it('--validation-trace: the results compare the run\'s cache hit rate with the trace\'s', async () => {
    const tmp = makeTempDir();
    const file = path.join(tmp, 'validation.json');
    const rec = (i: number, hit: boolean) => ({
      timestamp: i, request_id: `r${i}`, user_id: 'u', context_tokens: 1000, generation_tokens: 100, phase: 'decode', cache_hit: hit,
      cache_tier: hit ? 'cpu' : null, read_bytes: hit ? 3000 : 0, write_bytes: 1000, read_latency_ms: 1, write_latency_ms: 2, model_name: 'tiny-1b',
    });
    fs.writeFileSync(file, JSON.stringify([rec(0, true), rec(1, false), rec(2, true), rec(3, true)]));
    const { results } = await run(tmp, ['--validation-trace', file]);
    const hitRate = results.summary!.cache_stats.cache_hit_rate as number;
    const errorPct = (Math.abs(hitRate - 0.75) / 0.75) * 100;
    expect(results.validation).toEqual({
      passed: errorPct <= 5,
      avg_error_pct: errorPct,
      comparison: { cache_hit_rate: { benchmark: hitRate, trace: 0.75, error_pct: errorPct, within_5pct: errorPct <= 5 } },
      trace_stats: { total_requests: 4, cache_hit_rate: 0.75, read_write_ratio: 9000 / 4000, context_tokens_mean: 1000, generation_tokens_mean: 100 },
      trace_source: 'file',
    });
  });

  it('a malformed trace is refused before the run, naming the file and line', async () => {
    const tmp = makeTempDir();
    const file = path.join(tmp, 'bad.jsonl');
    fs.writeFileSync(file, '{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [1, 2]}\n{"timestamp": 1, "input_len');
    const output = path.join(tmp, 'results.json');
    const r = await runCli(['run', ...TINY_RUN_FLAGS, '--duration', '5', '--cpu-mem-gb', '0', '--cache-dir', tmp, '--output', output, '--dataset-path', file], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(`${file}, line 2: not valid JSON`);
    expect(r.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(fs.existsSync(output)).toBe(false);
  });
});
