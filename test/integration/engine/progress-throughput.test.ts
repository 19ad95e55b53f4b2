// The engine's progress events carry what a live screen needs to show the throughput a trial will
// store (review rev8-gui #5): the tokens generated in the window so far, beside the last interval's
// rate. The real engine in this process, on a temp dir, tiny sizes and a fixed seed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src-main/engine/benchmark.ts';
import { averageTokensPerSec, type ProgressEvent } from '../../../src-shared/engine-protocol.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('progress events', () => {
  it('the last one, at the window\'s close, gives the stored wall-clock throughput; before it the count only grows', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'kvbench-progress-'));
    dirs.push(cacheDir);
    const events: ProgressEvent[] = [];
    const outcome = await runBenchmark(
      { model: 'tiny-1b', numUsers: 2, duration: 2, cpuMemGb: 0.25, gpuMemGb: 0, storageCapacityGb: 1, generationMode: 'fast', seed: 42, cacheDir },
      { onProgress: (p) => events.push(p), onLog: () => {}, signal: new AbortController().signal },
    );
    expect(outcome.status).toBe('complete');
    const summary = outcome.results.summary as { avg_throughput_tokens_per_sec: number; total_tokens: number };
    const last = events.at(-1)!;
    expect(last.phase).toBe('finishing');
    expect(last.generatedTokens).toBe(summary.total_tokens);
    expect(averageTokensPerSec(last)).toBeCloseTo(summary.avg_throughput_tokens_per_sec, 6);
    const running = events.filter((e) => e.phase === 'running');
    expect(running.length).toBeGreaterThan(0);
    for (let i = 1; i < running.length; i++) expect(running[i].generatedTokens).toBeGreaterThanOrEqual(running[i - 1].generatedTokens);
  });
});
