// The engine's progress events carry what a live screen needs to show the throughput and storage
// bandwidth a trial will store (review rev8-gui #5): the tokens generated and the storage bytes read
// and written in the window so far, beside the last interval's rates. The real engine in this
// process, on a temp dir, tiny sizes and a fixed seed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src-main/engine/benchmark.ts';
import { averageStorageBytesPerSec, averageTokensPerSec, type ProgressEvent } from '../../../src-shared/engine-protocol.ts';
import type { TierBytes } from '../../../src-shared/domain/results.ts';
import { extractMetrics } from '../../../src-main/store/results-ingest.ts';

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

  it('carry the storage tier\'s bytes so far: the last one\'s are the stored bytes, and ÷ its clock the stored bandwidths', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'kvbench-progress-'));
    dirs.push(cacheDir);
    const events: ProgressEvent[] = [];
    // No CPU or GPU tier: every entry is written to and read from the storage tier, a real file here.
    const outcome = await runBenchmark(
      { model: 'tiny-1b', numUsers: 2, duration: 2, warmUp: 1, cpuMemGb: 0, gpuMemGb: 0, storageCapacityGb: 1, generationMode: 'fast', seed: 42, cacheDir },
      { onProgress: (p) => events.push(p), onLog: () => {}, signal: new AbortController().signal },
    );
    expect(outcome.status).toBe('complete');
    const storage = (outcome.results.kvbench as { tier_bytes: { storage: TierBytes } }).tier_bytes.storage;
    expect(storage.write_bytes).toBeGreaterThan(0);
    expect(storage.read_bytes).toBeGreaterThan(0);
    const last = events.at(-1)!;
    expect(last.phase).toBe('finishing');
    expect(last.storageReadBytes).toBe(storage.read_bytes);
    expect(last.storageWriteBytes).toBe(storage.write_bytes);
    // The same rule as the stored metrics (storage_read_bytes_per_s, storage_write_bytes_per_s), to the bit.
    const stored = extractMetrics(outcome.results);
    expect(averageStorageBytesPerSec(last)).toEqual({ readBytesPerSec: stored.storage_read_bytes_per_s, writeBytesPerSec: stored.storage_write_bytes_per_s });
    // Each clock's counts only grow; the window's start from its own zero, not the warm-up's total.
    for (const phase of ['warming-up', 'running'] as const) {
      const seen = events.filter((e) => e.phase === phase);
      expect(seen.length).toBeGreaterThan(0);
      for (let i = 1; i < seen.length; i++) {
        expect(seen[i].storageReadBytes).toBeGreaterThanOrEqual(seen[i - 1].storageReadBytes);
        expect(seen[i].storageWriteBytes).toBeGreaterThanOrEqual(seen[i - 1].storageWriteBytes);
      }
    }
    for (const e of events.filter((x) => x.phase === 'running' || x.phase === 'draining')) {
      // Events sent while the last requests drain keep the window's clock, so no average falls.
      expect(e.elapsedNs).toBeLessThanOrEqual(last.elapsedNs);
      expect(e.storageReadBytes).toBeLessThanOrEqual(storage.read_bytes);
      expect(e.storageWriteBytes).toBeLessThanOrEqual(storage.write_bytes);
    }
  });
});
