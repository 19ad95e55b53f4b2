// The reference's raw per-request lists are bounded: a run keeps every request's latencies up to a cap,
// then a uniform sample; the histograms (every percentile) count every request. The results file and the
// copy a database stores are the same JSON, so a stored trial stays bounded however many requests the
// run completed; an older results file, whose lists hold every request, still imports whole.
// The real engine in this process (tiny sizes, a fixed seed, trace-only mode so that a loaded machine
// completes requests quickly, a small cap: the engine context's test setting), its results written to a
// file and imported into a real SQLite file.
import fs from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../src-main/engine/benchmark.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const LISTS = ['end_to_end_latencies', 'storage_latencies', 'generation_latencies', 'prefill_latencies', 'decode_latencies'] as const;

describe('the raw latency lists', () => {
  it('keep a bounded sample past the cap, in the file and in the stored trial; older files with every request still import', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvbench-rawlists-'));
    dirs.push(dir);
    const cacheDir = join(dir, 'cache');
    fs.mkdirSync(cacheDir);
    const outcome = await runBenchmark(
      { model: 'tiny-1b', numUsers: 4, duration: 2, cpuMemGb: 0.25, gpuMemGb: 0, storageCapacityGb: 1, generationMode: 'none', seed: 7, cacheDir, ioTraceLog: join(dir, 'io-trace.csv') },
      { onProgress: () => {}, onLog: () => {}, signal: new AbortController().signal, rawLatencySampleRequests: 5 },
    );
    const res = outcome.results as unknown as Record<string, unknown> & { requests_completed: number; kvbench: Record<string, unknown> };
    expect({ status: outcome.status, reason: outcome.reason }).toEqual({ status: 'complete', reason: null });
    expect(res.requests_completed).toBeGreaterThan(5);
    expect(res.kvbench.raw_latency_lists).toEqual({ cap_requests: 5, requests_completed: res.requests_completed, requests_kept: 5, sampled: true });
    for (const key of ['end_to_end_latencies', 'storage_latencies', 'generation_latencies'] as const) expect(res[key], key).toHaveLength(5);
    // Percentiles come from the histograms, which count every request.
    const e2e = (res.kvbench.latency as { end_to_end: { count: number; hdr: string } }).end_to_end;
    expect(e2e.count).toBe(res.requests_completed);
    expect(LatencyHistogram.decode(e2e.hdr, 0).count).toBe(res.requests_completed);

    // Stored as the file is: the database's copy has the same bounded lists.
    const file = join(dir, 'run.json');
    fs.writeFileSync(file, JSON.stringify(res));
    // An older file (before the cap): every request's latencies in the lists, no raw_latency_lists.
    const older = structuredClone(res);
    delete older.kvbench.raw_latency_lists;
    for (const key of LISTS) older[key] = Array.from({ length: 60_000 }, (_, i) => Math.abs(Math.sin(i)));
    const olderFile = join(dir, 'older.json');
    fs.writeFileSync(olderFile, JSON.stringify(older));

    const store = openStore(join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [file, olderFile], { systemLabel: 'lab' });
      expect(r.imported).toHaveLength(2);
      const trials = store.listTrials({});
      expect(trials).toHaveLength(2);
      const isOlder = (id: number): boolean => !('raw_latency_lists' in (store.trialResults(id)!.kvbench as object));
      const bounded = trials.find((t) => !isOlder(t.id))!;
      const full = trials.find((t) => isOlder(t.id))!;
      const storedBounded = store.trialResults(bounded.id)!;
      expect(storedBounded.end_to_end_latencies).toEqual(res.end_to_end_latencies);
      expect(storedBounded.kvbench).toMatchObject({ raw_latency_lists: { sampled: true, requests_kept: 5 } });
      const storedFull = store.trialResults(full.id)!;
      for (const key of LISTS) expect(storedFull[key], key).toHaveLength(60_000);
      expect(full.metrics.requests_completed).toBe(res.requests_completed);
      expect(full.metrics.e2e_latency_p95_ms).toBe(bounded.metrics.e2e_latency_p95_ms);
      const gzipBytes = (id: number): number => (store.db.prepare('SELECT length(results_gzip) AS n FROM trials WHERE id = ?').get(id) as { n: number }).n;
      expect(gzipBytes(full.id)).toBeGreaterThan(10 * gzipBytes(bounded.id));
    } finally {
      store.close();
    }
  });
});
