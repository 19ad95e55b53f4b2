import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { configKey, describeConfig, detectFormat, extractHistograms, extractMetrics, statusFromResults } from '../../../src-main/store/results-ingest.ts';
import { mergeRanks } from '../../../src-main/export/merge-ranks.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { mergedResultsFile } from '../../../src-main/export/merged-results-file.ts';
import { importResultsFiles, parseImportRunFlags } from '../../../src-main/store/import-results.ts';
import { openDatabase, type SqlParams } from '../../../src-main/store/sqlite.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { parseRunArgs } from '../../../src-main/engine/config/parse-run-args.ts';
import { DEFAULT_RUN_OPTIONS } from '../../../src-shared/domain/run-options.ts';
import { CONFIG_MATCH_KEYS } from '../../../src-shared/domain/store-types.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { kvbenchResults, referenceResultsMid, referenceResultsNew, removeTempDirs, tempDir, writeResults } from './fixtures.ts';

const GIB = 1024 ** 3;
afterEach(() => removeTempDirs());

describe('results formats', () => {
  it('reads the reference (NEW) keys with their units: GiB → bytes, GiB/s → bytes/s, ms stays ms', () => {
    const r = referenceResultsNew({ tokPerS: 490, storageTokPerS: 263, readGiB: 90 });
    expect(detectFormat(r)).toBe('reference-new');
    const m = extractMetrics(r);
    expect(m.wall_clock_throughput_tok_per_s).toBe(490);
    expect(m.storage_throughput_tok_per_s).toBe(263);
    expect(m.storage_read_p95_ms).toBe(358.2);
    expect(m.storage_read_device_p95_ms).toBe(300);
    expect(m.storage_read_bytes).toBe(90 * GIB);
    expect(m.storage_read_bytes_per_s).toBeCloseTo((90 * GIB) / 300, 6);
    expect(m.total_read_bytes).toBe(90 * GIB);
    expect(m.e2e_p95_ms).toBe(2000);
    expect(m.cache_hit_rate).toBe(0.93);
    // The reference has no decode-bytes key in NEW and no kvbench-only metrics: absent, never 0.
    expect(m.decode_bytes_read).toBeUndefined();
    expect(m.queue_wait_p95_ms).toBeUndefined();
    expect(extractHistograms(r)).toEqual([]);
    expect(statusFromResults(r, 'reference-new')).toEqual({ status: 'complete', reason: null });
  });

  it('reads the MID build (seeds/003 trial files): nvme_* keys, decode bytes, storage throughput from the raw totals', () => {
    const r = referenceResultsMid({ tokens: 146_900, storageS: 86.83, requests: 438, decodeGiB: 94.4 });
    expect(detectFormat(r)).toBe('reference-mid');
    const m = extractMetrics(r);
    expect(m.storage_throughput_tok_per_s).toBeCloseTo(1691.8, 1); // 146,900 / 86.83 s, as 003 computes it
    expect(m.decode_bytes_read).toBeCloseTo(94.4 * GIB, 0);
    expect(m.storage_read_p95_ms).toBe(358.2);
    expect(m.storage_read_device_p95_ms).toBe(0.3);
    // 003: "Trial 1 only completed 438/549 requests" → incomplete, with the numbers.
    expect(statusFromResults(r, 'reference-mid', 549)).toEqual({ status: 'partial', reason: 'completed 438 of 549 requests (--max-requests)' });
  });

  it('a reference run where nothing completed is failed', () => {
    const r = { requests_completed: 0, total_tokens_generated: 0 };
    expect(statusFromResults(r, detectFormat(r))).toMatchObject({ status: 'failed' });
  });

  it("reads kvbench's own results, with the engine's status and the HDR histograms", () => {
    const r = kvbenchResults({ tokPerS: 1234, readBytesPerS: 2e9, decodeBytes: 5 * GIB, status: 'partial' }) as unknown as Record<string, unknown>;
    expect(detectFormat(r)).toBe('kvbench');
    const m = extractMetrics(r);
    expect(m).toMatchObject({ wall_clock_throughput_tok_per_s: 1234, storage_read_bytes_per_s: 2e9, decode_bytes_read: 5 * GIB });
    expect(m.queue_wait_p95_ms).toBeGreaterThan(0);
    expect(statusFromResults(r, 'kvbench')).toEqual({ status: 'partial', reason: 'disk full' });
    const names = extractHistograms(r).map((h) => h.name);
    expect(names).toEqual(expect.arrayContaining(['end_to_end', 'queue_wait', 'tier_read.storage', 'tier_read_ns_per_mib.storage']));
    expect(extractHistograms(r).find((h) => h.name === 'tier_read_ns_per_mib.storage')!.unit).toBe('ns/MiB');
  });

  it("keeps the GPU tier's measured copy bandwidth, and leaves it absent when there was no GPU tier", () => {
    const withGpu = kvbenchResults({ tokPerS: 100 });
    withGpu.kvbench.tiers.gpu = { ...withGpu.kvbench.tiers.gpu, present: true, h2d_copy_bandwidth_bytes_per_sec: 48.5e9, d2h_copy_bandwidth_bytes_per_sec: 51.2e9 };
    expect(extractMetrics(withGpu as unknown as Record<string, unknown>)).toMatchObject({ gpu_h2d_copy_bytes_per_s: 48.5e9, gpu_d2h_copy_bytes_per_s: 51.2e9 });
    const noGpu = extractMetrics(kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown>);
    expect(noGpu.gpu_h2d_copy_bytes_per_s).toBeUndefined();
    expect(noGpu.gpu_d2h_copy_bytes_per_s).toBeUndefined();
  });
});

describe('autoscaler metrics', () => {
  it('keeps whether a capacity run found its peak: kvbench says so, the reference found it when a step stopped the run', () => {
    const withSummary = (autoscaling_summary: unknown, autoscaling_stats: unknown[] = []): Record<string, unknown> => {
      const r = kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown>;
      return { ...r, summary: { ...(r.summary as object), autoscaling_summary, autoscaling_stats } };
    };
    const capacity = { initial_users: 2, final_users: 17, total_scale_events: 3, peak_user_count: 12, peak_throughput_tokens_per_sec: 568.1 };
    expect(extractMetrics(withSummary({ ...capacity, peak_found: false }))).toMatchObject({ autoscale_peak_found: 0, autoscale_peak_users: 12 });
    expect(extractMetrics(withSummary({ ...capacity, peak_found: true }))).toMatchObject({ autoscale_peak_found: 1 });
    const ref = referenceResultsNew({ tokPerS: 490, storageTokPerS: 263, readGiB: 90 });
    const refCapacity = (steps: unknown[]): Record<string, unknown> => ({ ...ref, summary: { ...(ref.summary as object), autoscaling_summary: capacity, autoscaling_stats: steps } });
    expect(extractMetrics(refCapacity([{ action: 'scale_up' }, { action: 'stop' }])).autoscale_peak_found).toBe(1);
    expect(extractMetrics(refCapacity([{ action: 'scale_up' }])).autoscale_peak_found).toBe(0);
    // A qos run has no peak to find.
    expect(extractMetrics(withSummary({ initial_users: 20, final_users: 24, total_scale_events: 1 }))).not.toHaveProperty('autoscale_peak_found');
  });

  it('keeps whether a qos run met its latency target at the end; nothing when no interval measured it', () => {
    const withSummary = (autoscaling_summary: unknown): Record<string, unknown> => {
      const r = kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown>;
      return { ...r, summary: { ...(r.summary as object), autoscaling_summary } };
    };
    const qos = { initial_users: 2, final_users: 2, total_scale_events: 4 };
    expect(extractMetrics(withSummary({ ...qos, target_met: false })).autoscale_target_met).toBe(0);
    expect(extractMetrics(withSummary({ ...qos, target_met: true })).autoscale_target_met).toBe(1);
    expect(extractMetrics(withSummary({ ...qos, target_met: null }))).not.toHaveProperty('autoscale_target_met');
  });
});

describe('configuration key', () => {
  it('ignores where files go and the seed, but not the workload', () => {
    const base = DEFAULT_RUN_OPTIONS as unknown as Record<string, unknown>;
    const k = configKey(base);
    expect(configKey({ ...base, cacheDir: '/elsewhere', output: 'x.json', seed: 7, storageCapacityGb: 100 })).toBe(k);
    expect(configKey({ model: DEFAULT_RUN_OPTIONS.model })).toBe(k); // missing keys take their defaults
    expect(configKey({ ...base, numUsers: 200 })).not.toBe(k);
    expect(configKey({ ...base, cpuMemGb: 0 })).not.toBe(k);
  });

  it("kvbench's I/O and window options separate trials only where set, so older trials keep their keys", () => {
    const base = DEFAULT_RUN_OPTIONS as unknown as Record<string, unknown>;
    const k = configKey(base);
    // A key stored by kvbench 0.1 (before these options joined it), recomputed the old way.
    const legacy = createHash('sha256').update(JSON.stringify(CONFIG_MATCH_KEYS.map((key) => [key, base[key]]))).digest('hex').slice(0, 16);
    expect(k).toBe(legacy);
    expect(configKey({ ...base, warmUp: 0, ioDepth: 16, directIo: 'auto', fsyncPolicy: 'per-entry' })).toBe(k);
    const changed = [{ warmUp: 30 }, { ioDepth: 64 }, { ioChunkMib: 4 }, { directIo: 'off' }, { fsyncPolicy: 'none' }, { promotion: 'on-hit' }, { verify: true }];
    const keys = changed.map((c) => configKey({ ...base, ...c }));
    for (const key of keys) expect(key).not.toBe(k);
    expect(new Set(keys).size).toBe(changed.length);
  });

  it('workload options that joined later separate trials only where set: tuning, replay, the autoscaler interval, a redefined model, trace-only', () => {
    const base = DEFAULT_RUN_OPTIONS as unknown as Record<string, unknown>;
    const k = configKey(base);
    expect(configKey({ ...base, tuning: {}, customModels: {}, traceSpeedup: 1, autoscalerInterval: 10 })).toBe(k);
    const slowTokens = { generation_timing: { realistic: 0.5 } };
    const burst = { useBurstTrace: true };
    const dataset = { datasetPath: '/data/sharegpt.json' };
    // Options that act only with another do not split trials without it (a suite sets the interval everywhere).
    expect(configKey({ ...base, autoscalerInterval: 1, traceSpeedup: 10, replayCycles: 3, maxConversations: 5, burstTracePath: '/x.csv' })).toBe(k);
    const changed = [
      { tuning: slowTokens },
      { ...burst, traceSpeedup: 10 },
      { ...dataset, replayCycles: 3 },
      { ...dataset, maxConversations: 5 },
      { enableAutoscaling: true, autoscalerInterval: 60 },
      { ...burst, burstTracePath: '/data/BurstGPT_2.csv' },
      { customModels: { [DEFAULT_RUN_OPTIONS.model]: { num_layers: 2 } } },
      { ioTraceLog: '/tmp/trace.csv' },
    ];
    const keys = changed.map((c) => configKey({ ...base, ...c }));
    for (const key of keys) expect(key).not.toBe(k);
    expect(new Set(keys).size).toBe(changed.length);
    expect(configKey({ ...base, ...burst, traceSpeedup: 10 })).not.toBe(configKey({ ...base, ...burst }));
    expect(configKey({ ...base, ...dataset, maxConversations: 5 })).not.toBe(configKey({ ...base, ...dataset }));
    expect(configKey({ ...base, enableAutoscaling: true, autoscalerInterval: 60 })).not.toBe(configKey({ ...base, enableAutoscaling: true }));
    // The same tuning written in another key order is the same configuration; so is a model added but unused.
    const reordered = { tuning: { b: 1, a: { y: 2, x: 1 } } };
    expect(configKey({ ...base, ...reordered })).toBe(configKey({ ...base, tuning: { a: { x: 1, y: 2 }, b: 1 } }));
    expect(configKey({ ...base, customModels: { 'my-model': { num_layers: 2 } } })).toBe(k);
    expect(configKey({ ...base, ioTraceLog: '/a.csv' })).toBe(configKey({ ...base, ioTraceLog: '/b.csv' }));
  });
});

/**
 * What the store reads while its write lock is held: every row a statement returned inside a
 * transaction. Counted rows, not seconds: a test never gates on timing.
 */
function readsInsideTransactions(store: Store): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  const prepare = store.db.prepare.bind(store.db);
  vi.spyOn(store.db, 'prepare').mockImplementation((sql: string) => {
    const stmt = prepare(sql);
    const record = (out: unknown): void => {
      if (!store.db.inTransaction) return;
      if (Array.isArray(out)) rows.push(...(out as Record<string, unknown>[]));
      else if (out !== undefined) rows.push(out as Record<string, unknown>);
    };
    return {
      run: (...p: SqlParams) => stmt.run(...p),
      get: (...p: SqlParams) => {
        const out = stmt.get(...p);
        record(out);
        return out;
      },
      all: (...p: SqlParams) => {
        const out = stmt.all(...p);
        record(out);
        return out;
      },
    };
  });
  return rows;
}

describe('configuration description', () => {
  it('names each part in words a reader knows (users, seconds, GiB, generation), not shorthand; the configuration key is unchanged', () => {
    const options = { model: 'tiny-1b', numUsers: 2, duration: 3, cpuMemGb: 0.25, gpuMemGb: 0, generationMode: 'none', warmUp: 1, storageCapacityGb: 1 };
    expect(describeConfig(options)).toBe('tiny-1b, 2 users, 3 s, CPU 0.25 GiB, GPU 0 GiB, generation none, storage 1 GiB, warm-up 1');
    expect(describeConfig({ ...options, numUsers: 1, generationMode: 'realistic' })).toBe('tiny-1b, 1 user, 3 s, CPU 0.25 GiB, GPU 0 GiB, generation realistic, storage 1 GiB, warm-up 1');
    expect(describeConfig({ ...options, maxConcurrentAllocs: 16, enableAutoscaling: true, autoscalerMode: 'qos', maxRequests: 100, worldSize: 2 })).toBe(
      'tiny-1b, 2 users, 3 s, CPU 0.25 GiB, GPU 0 GiB, generation none, × 2 hosts, storage 1 GiB, max-concurrent-allocs 16, autoscaling qos, max 100 requests, warm-up 1',
    );
    // Stored trials match by the key, which the wording never enters: the same as before it changed.
    expect(configKey(options)).toBe('570cae4ad3fb3ead');
  });
});

describe('import', () => {
  it('holds the write lock for a fixed amount of reading per file, and never reads a stored results blob', async () => {
    // review (fault) #3: every file listed every trial of the new suite, results blobs and metrics
    // included, inside the one write transaction: O(n²), 2000 files held the lock for > 57 s and a
    // suite in another process failed storing its trial.
    const importOf = async (n: number): Promise<Record<string, unknown>[]> => {
      const dir = tempDir();
      // Without run flags each file is its own configuration: a run per file, the most the import adds.
      const files = Array.from({ length: n }, (_, i) => writeResults(dir, `r${i}.json`, referenceResultsNew({ tokPerS: 100 + i, storageTokPerS: 50 + i })));
      const store = openStore(path.join(dir, 'kvbench.db'));
      try {
        const reads = readsInsideTransactions(store);
        const r = await importResultsFiles(store, files, { systemLabel: 'lab' });
        // The checks below read in transactions of their own (a listing is one snapshot), not the import's.
        vi.restoreAllMocks();
        expect(r.imported).toHaveLength(n);
        expect(store.listTrials({}).map((t) => t.trialIndex)).toEqual(Array(n).fill(0));
        expect(store.listRuns(r.suiteId).map((x) => x.position)).toEqual([...Array(n).keys()]);
        return reads;
      } finally {
        vi.restoreAllMocks();
        store.close();
      }
    };
    const few = await importOf(8);
    const many = await importOf(32);
    for (const reads of [few, many]) {
      expect(reads.filter((row) => Object.values(row).some((v) => Buffer.isBuffer(v)))).toEqual([]);
      expect(reads.filter((row) => 'options_json' in row || 'summary_text' in row)).toEqual([]);
    }
    // Linear: the 24 more files read at most what 8 files cost each, set-up included (quadratic reads 4× more per file).
    expect(many.length - few.length).toBeLessThanOrEqual(((32 - 8) * few.length) / 8);
  });

  it('numbers the trials of one configuration 0, 1, 2 … in file order, from 0 again in the next import', async () => {
    const dir = tempDir();
    const parsed = parseImportRunFlags('--model llama3.1-8b --num-users 10 --duration 60');
    if (!parsed.ok) throw new Error('flags');
    const fileOf = (i: number): string => writeResults(dir, `k${i}.json`, referenceResultsNew({ tokPerS: 10 + i, storageTokPerS: 5 + i }));
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const flags = { systemLabel: 'lab', options: parsed.options, givenOptionKeys: parsed.given };
      const first = await importResultsFiles(store, [2, 0, 1].map(fileOf), flags);
      const second = await importResultsFiles(store, [3, 4].map(fileOf), flags);
      for (const [r, expected] of [
        [first, [['k0.json', 0], ['k1.json', 1], ['k2.json', 2]]],
        [second, [['k3.json', 0], ['k4.json', 1]]],
      ] as const) {
        expect(store.listRuns(r.suiteId).map((x) => x.position)).toEqual([0]);
        // Listed by start time, which is each file's time here: sorted by name to compare.
        expect(store.listTrials({ suiteIds: [r.suiteId] }).map((t) => [path.basename(t.sourceFile!), t.trialIndex]).sort()).toEqual(expected);
      }
    } finally {
      store.close();
    }
  });

  it('stores the run flags\' paths as given, the BurstGPT default as a suite stores it, not resolved against the directory the import ran in (rev10 D8)', async () => {
    const dir = tempDir();
    const elsewhere = tempDir();
    // The import runs in some directory of this machine; the run whose files these are ran elsewhere.
    const cwd = vi.spyOn(process, 'cwd').mockReturnValue(elsewhere);
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const options = (flags: string): Promise<Record<string, unknown>> => {
        const parsed = parseImportRunFlags(flags);
        if (!parsed.ok) throw new Error(parsed.errors.join('; '));
        return importResultsFiles(store, [writeResults(dir, `${flags.length}.json`, referenceResultsNew({ tokPerS: flags.length, storageTokPerS: 5 }))], {
          systemLabel: 'lab', options: parsed.options, givenOptionKeys: parsed.given,
        }).then((r) => store.getTrial(r.imported[0].trialId)!.options);
      };
      expect((await options('--model llama3.1-8b --num-users 10')).burstTracePath).toBe(DEFAULT_RUN_OPTIONS.burstTracePath);
      expect((await options('--model llama3.1-8b --num-users 10 --burst-trace-path traces/b.csv')).burstTracePath).toBe('traces/b.csv');
    } finally {
      store.close();
      cwd.mockRestore();
    }
  });

  it('stores reference files under a named system with the run flags as their configuration', async () => {
    const dir = tempDir();
    const files = [1, 2, 3].map((i) => {
      const f = path.join(dir, `mlperf_stress_slow_trial${i}.json`);
      fs.writeFileSync(f, JSON.stringify(referenceResultsNew({ tokPerS: 400 + i, storageTokPerS: 200 + i })));
      return f;
    });
    const bad = path.join(dir, 'notes.json');
    fs.writeFileSync(bad, JSON.stringify({ hello: 'world' }));
    const parsed = parseRunArgs(['--model', 'llama3.1-8b', '--cpu-mem-gb', '0', '--max-concurrent-allocs', '16', '--num-users', '200', '--duration', '300', '--generation-mode', 'none']);
    if (parsed.ok !== true) throw new Error('flags');
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [...files, bad], {
        systemLabel: 'slow',
        scenarioId: 'mlperf-storage-stress',
        options: parsed.options as unknown as Record<string, unknown>,
      });
      expect(r.errors).toEqual([{ file: bad, message: expect.stringMatching(/not a kvbench or MLPerf KV-cache results file/) }]);
      expect(r.imported.map((f) => [f.format, f.status, f.configKnown])).toEqual([
        ['reference-new', 'complete', true],
        ['reference-new', 'complete', true],
        ['reference-new', 'complete', true],
      ]);
      const trials = store.listTrials({ systemIds: [r.systemId!], order: 'asc' });
      expect(trials.map((t) => t.trialIndex)).toEqual([0, 1, 2]);
      expect(trials[0]).toMatchObject({ systemLabel: 'slow', scenarioId: 'mlperf-storage-stress', resultsFormat: 'reference-new', sourceFile: files[0] });
      expect(trials[0].options).toMatchObject({ model: 'llama3.1-8b', numUsers: 200, cpuMemGb: 0, maxConcurrentAllocs: 16 });
      expect(trials[0].configKey).toBe(configKey(parsed.options as unknown as Record<string, unknown>));
      expect(store.trialResults(trials[0].id)).toEqual(JSON.parse(fs.readFileSync(files[0], 'utf8')));
      expect(store.getSystem(r.systemId!)!.source).toBe('imported');
      expect(store.getSuite(r.suiteId)).toMatchObject({ source: 'import', status: 'finished' });
    } finally {
      store.close();
    }
  });

  it('writes nothing when no file can be imported, and all or nothing when the database fails midway', async () => {
    const dir = tempDir();
    const bad = path.join(dir, 'notes.json');
    fs.writeFileSync(bad, '{"hello": "world"}');
    const dbFile = path.join(dir, 'kvbench.db');
    const store = openStore(dbFile, { busyTimeoutMs: 100 });
    try {
      const none = await importResultsFiles(store, [bad], { systemLabel: 'nobody' });
      expect(none).toMatchObject({ suiteId: -1, systemId: null, imported: [] });
      expect(store.listSystems().map((s) => s.label)).not.toContain('nobody');
      // The database refuses writes (another process holds the lock): no part of the import lands.
      const files = [1, 2, 3].map((i) => {
        const f = path.join(dir, `r${i}.json`);
        fs.writeFileSync(f, JSON.stringify(referenceResultsNew({ tokPerS: i, storageTokPerS: i })));
        return f;
      });
      const other = openDatabase(dbFile);
      other.exec('BEGIN IMMEDIATE');
      try {
        await expect(importResultsFiles(store, files, { systemLabel: 'locked-out' })).rejects.toThrow(/locked|busy/i);
      } finally {
        other.exec('ROLLBACK');
        other.close();
      }
      expect(store.listSystems().map((s) => s.label)).not.toContain('locked-out');
      expect(store.listTrials({}).length).toBe(0);
      // Once the database takes writes again, the same import goes in whole, once.
      const r = await importResultsFiles(store, files, { systemLabel: 'locked-out' });
      expect(r.imported).toHaveLength(3);
      expect(store.listTrials({}).length).toBe(3);
    } finally {
      store.close();
    }
  });

  it('stores a start time the file states as a UTC instant, and refuses one that is no time rather than dating the trial by the file', async () => {
    const dir = tempDir();
    const results = (startedAt: string) => {
      const r = referenceResultsNew({ tokPerS: 1, storageTokPerS: 1 }) as Record<string, unknown>;
      return { ...r, kvbench: { ...(r.kvbench as object), started_at: startedAt } };
    };
    const zoned = path.join(dir, 'zoned.json');
    fs.writeFileSync(zoned, JSON.stringify(results('2026-11-24T10:00:00+09:00')));
    const vague = path.join(dir, 'vague.json');
    fs.writeFileSync(vague, JSON.stringify(results('yesterday')));
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [zoned, vague], { systemLabel: 'x' });
      const byFile = Object.fromEntries(r.imported.map((f) => [path.basename(f.file), store.getTrial(f.trialId)!.startedAt]));
      // review rev13 #11: 'yesterday' was stored as the file's modification time, passed off as the start.
      expect(byFile).toEqual({ 'zoned.json': '2026-11-24T01:00:00.000Z' });
      expect(r.errors.map((e) => [path.basename(e.file), e.message])).toEqual([
        ['vague.json', 'kvbench.started_at is "yesterday", not a time (ISO 8601, as 2026-11-25T04:58:42.395Z), and the trial is dated by it: not stored (a damaged or edited file)'],
      ]);
    } finally {
      store.close();
    }
  });

  it('refuses one rank of a multi-host run, and imports a world of one like any run', async () => {
    const dir = tempDir();
    const rankFile = (rank: number, worldSize: number) => {
      const r = kvbenchResults({ tokPerS: 10 });
      r.kvbench.rank = { rank, world_size: worldSize, host: 'h' };
      const f = path.join(dir, `r${rank}of${worldSize}.json`);
      fs.writeFileSync(f, JSON.stringify(r));
      return f;
    };
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [rankFile(1, 4), rankFile(0, 1)], { systemLabel: 'x' });
      expect(r.imported.map((f) => path.basename(f.file))).toEqual(['r0of1.json']);
      expect(r.errors).toEqual([{ file: path.join(dir, 'r1of4.json'), message: expect.stringMatching(/^rank 1 of 4 of a multi-host run: one host's share, not a trial of the system; combine the ranks with kvbench merge/) }]);
    } finally {
      store.close();
    }
  });

  it('stores a kvbench merge result as one trial of its own scenario and configuration, with its status, metrics and merged histograms', async () => {
    const dir = tempDir();
    const rank = (n: number, status: 'complete' | 'partial' = 'complete') => {
      const r = kvbenchResults({ tokPerS: 10, status });
      r.kvbench.rank = { rank: n, world_size: 2, host: `h${n}` };
      r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 60, cpuMemGb: 0, gpuMemGb: 0, seed: 42 + n, rank: n, worldSize: 2, cacheDir: `/shared/rank-${n}` };
      return { file: `r.rank${n}.json`, results: r };
    };
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const complete = writeResults(dir, 'merged.json', mergedResultsFile(mergeRanks([rank(0), rank(1)])));
      const partial = writeResults(dir, 'merged-partial.json', mergedResultsFile(mergeRanks([rank(0), rank(1, 'partial')])));
      // The app's "no scenario" is 'imported': a merged result still goes under multi-host.
      const r = await importResultsFiles(store, [complete, partial], { systemLabel: 'cluster', scenarioId: 'imported' });
      expect(r.errors).toEqual([]);
      expect(r.imported.map((f) => [path.basename(f.file), f.format, f.status, f.reason])).toEqual([
        ['merged-partial.json', 'kvbench', 'partial', 'rank 1 partial: disk full'],
        ['merged.json', 'kvbench', 'complete', null],
      ]);
      const t = store.getTrial(r.imported[1].trialId)!;
      expect(t.scenarioId).toBe('multi-host');
      expect(t.options).toMatchObject({ worldSize: 2, rank: null, seed: 42, cacheDir: '/shared' });
      // Two hosts of 4 users are not one host of 4: the configuration keys differ, and say so.
      const oneHost = { model: 'tiny-1b', numUsers: 4, duration: 60, cpuMemGb: 0, gpuMemGb: 0 };
      expect(t.configKey).toBe(configKey({ ...oneHost, worldSize: 2 }));
      expect(t.configKey).not.toBe(configKey(oneHost));
      expect(configKey({ ...oneHost, worldSize: 1 })).toBe(configKey(oneHost));
      expect(describeConfig(t.options)).toContain('× 2 hosts');
      // The fixture's ranks: 6534 hits each, 3 failed requests each, queue wait recorded.
      expect(t.metrics.cache_hit_rate).toBeCloseTo(kvbenchResults({ tokPerS: 10 }).summary!.cache_stats.cache_hit_rate as number, 12);
      expect(t.metrics.requests_failed).toBe(6);
      expect(t.metrics.requests_completed).toBe(2 * kvbenchResults({ tokPerS: 10 }).requests_completed);
      expect(t.metrics.queue_wait_p95_ms).toBeGreaterThan(0);
      const histograms = store.trialHistograms(t.id);
      const rankEndToEnd = kvbenchResults({ tokPerS: 10 }).kvbench.latency.end_to_end;
      expect(histograms.find((h) => h.name === 'end_to_end')?.count).toBe(2 * LatencyHistogram.decode(rankEndToEnd.hdr, rankEndToEnd.sum_ns).count);
      // The merged file itself is kept as the trial's results.
      expect(store.trialResults(t.id)).toHaveProperty('kvbench_merge.world_size', 2);
      // A merged file from before the reference keys is refused with what to do.
      const old = writeResults(dir, 'old-merged.json', { kvbench_merge: (JSON.parse(fs.readFileSync(complete, 'utf8')) as { kvbench_merge: unknown }).kvbench_merge });
      const again = await importResultsFiles(store, [old], { systemLabel: 'cluster' });
      expect(again.errors[0].message).toMatch(/^a kvbench merge result written by an older kvbench .*: merge the rank files again with this version$/);
    } finally {
      store.close();
    }
  });

  it("stores a merged trial as measured by its ranks' kvbench, not the merging one; an older merged file by its kvbench_merge.version as before", async () => {
    // review rev13 #5: ranks of 0.4.0 merged by this kvbench were stored as measured by this kvbench.
    const dir = tempDir();
    const rank = (n: number) => {
      const r = kvbenchResults({ tokPerS: 10 });
      r.kvbench.version = '0.4.0';
      r.kvbench.rank = { rank: n, world_size: 2, host: `h${n}` };
      r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 60, cpuMemGb: 0, gpuMemGb: 0, seed: 42 + n, rank: n, worldSize: 2, cacheDir: `/shared/rank-${n}` };
      return { file: `r.rank${n}.json`, results: r };
    };
    const merged = mergedResultsFile(mergeRanks([rank(0), rank(1)]));
    // As kvbench 0.7.0 wrote it: no merged_by_version, no rank versions, its own version as the merge's.
    const older = structuredClone(merged) as { kvbench_merge: Record<string, unknown> & { ranks: Record<string, unknown>[] }; total_tokens_generated: number };
    older.kvbench_merge.version = '0.6.0';
    delete older.kvbench_merge.merged_by_version;
    for (const r of older.kvbench_merge.ranks) delete r.version;
    older.total_tokens_generated += 1; // another file's content, not a duplicate
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [writeResults(dir, 'merged.json', merged), writeResults(dir, 'older.json', older)], { systemLabel: 'cluster' });
      expect(r.errors).toEqual([]);
      const byFile = new Map(r.imported.map((f) => [path.basename(f.file), store.getTrial(f.trialId)!]));
      expect(byFile.get('merged.json')).toMatchObject({ measuredByVersion: '0.4.0', kvbenchVersion: KVBENCH_VERSION });
      expect(byFile.get('older.json')).toMatchObject({ measuredByVersion: '0.6.0', kvbenchVersion: KVBENCH_VERSION });
    } finally {
      store.close();
    }
  });

  it('stores a merged trial under the configuration key kvbench merge reports, also when --world-size supplied the size', async () => {
    // review rev6 #8: ranks that recorded no world size, merged with --world-size 3, reported rank 0's
    // one-host key while the trial was stored under the key with the world size.
    const dir = tempDir();
    const rank = (n: number) => {
      const r = kvbenchResults({ tokPerS: 10 });
      r.kvbench.rank = { rank: n, world_size: null, host: `h${n}` };
      r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 60, seed: 42 + n, rank: n, worldSize: null, cacheDir: `/shared/rank-${n}` };
      return { file: `r.rank${n}.json`, results: r };
    };
    const merged = mergeRanks([rank(0), rank(1), rank(2)], { worldSize: 3 });
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [writeResults(dir, 'merged.json', mergedResultsFile(merged))], { systemLabel: 'cluster' });
      expect(r.errors).toEqual([]);
      const t = store.getTrial(r.imported[0].trialId)!;
      expect(t.configKey).toBe(merged.config_key);
      expect(merged.config_key).toBe(configKey({ model: 'tiny-1b', numUsers: 4, duration: 60, worldSize: 3 }));
    } finally {
      store.close();
    }
  });

  it('never stores the same results twice: a re-run import, an identical file in the batch, or the results a suite stored', async () => {
    // review #4: re-running an import after fixing one bad file stored the good ones again (n 5 of 3 results).
    const dir = tempDir();
    const write = (name: string, r: unknown): string => writeResults(dir, name, r);
    const t4 = write('t4.json', kvbenchResults({ tokPerS: 100 }));
    const t5 = write('t5.json', kvbenchResults({ tokPerS: 110 }));
    const bad = write('bad.json', '{bad');
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const first = await importResultsFiles(store, [t4, t5, bad], { systemLabel: 'D', scenarioId: 'storage-only' });
      expect(first.imported).toHaveLength(2);
      expect(first.errors).toHaveLength(1);
      // The user fixes the bad file and runs the same command again: only it goes in.
      write('bad.json', kvbenchResults({ tokPerS: 120 }));
      const again = await importResultsFiles(store, [t4, t5, bad], { systemLabel: 'D', scenarioId: 'storage-only' });
      expect(again.imported.map((f) => path.basename(f.file))).toEqual(['bad.json']);
      expect(again.skipped).toEqual([
        { file: t4, trialId: first.imported[0].trialId, message: expect.stringMatching(/^already stored as trial \d+ \(system D, suite \d+\): not imported again/) },
        { file: t5, trialId: first.imported[1].trialId, message: expect.stringMatching(/^already stored as trial/) },
      ]);
      expect(store.listTrials({}).length).toBe(3);
      // Re-indented, it is the same content; all of it stored already: nothing is written, not even a suite.
      const suites = store.listSuites().length;
      const copy = write('copy.json', JSON.stringify(JSON.parse(fs.readFileSync(t4, 'utf8')), null, 4));
      const none = await importResultsFiles(store, [copy], { systemLabel: 'elsewhere' });
      expect(none).toMatchObject({ suiteId: -1, systemId: null, imported: [], skipped: [{ file: copy, trialId: first.imported[0].trialId }] });
      expect(store.listSuites().length).toBe(suites);
      expect(store.listSystems().map((x) => x.label)).not.toContain('elsewhere');
      // Two identical files in one import: the first goes in, the second is named as its twin.
      const a = write('a.json', referenceResultsNew({ tokPerS: 7, storageTokPerS: 7 }));
      const b = write('b.json', referenceResultsNew({ tokPerS: 7, storageTokPerS: 7 }));
      const twins = await importResultsFiles(store, [b, a], { systemLabel: 'D' });
      expect(twins.imported.map((f) => f.file)).toEqual([a]);
      expect(twins.skipped).toEqual([{ file: b, trialId: null, message: `the same results as ${a}, imported now: not stored twice` }]);
    } finally {
      store.close();
    }
  });

  it('recognises results a suite stored, also in trials stored before the digest was kept', async () => {
    const dir = tempDir();
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const results = kvbenchResults({ tokPerS: 321 });
      const suiteId = store.createSuite({ systemId: store.upsertImportedSystem('lab').id, driveId: null, profile: 'smoke', label: null, source: 'suite', plan: null, cacheDir: null, runner: null, status: 'finished' });
      const runId = store.ensureRun(suiteId, 'storage-only', 'Storage only', 'k', {});
      const trialId = store.startTrial({ runId, suiteId, systemId: store.upsertImportedSystem('lab').id, driveId: null, hardwareSnapshotId: null, scenarioId: 'storage-only', trialIndex: 0, options: {}, configKey: 'k', runner: { pid: process.pid, host: 'h', startTicks: null }, cacheDir: null });
      store.finishTrial(trialId, { status: 'complete', reason: null, wallMs: 1, results: results as unknown as Record<string, unknown> });
      // As a database of schema 2 left it: no digest stored.
      store.db.prepare('UPDATE trials SET results_digest = NULL').run();
      const file = path.join(dir, 'dumped.json');
      fs.writeFileSync(file, JSON.stringify(store.trialResults(trialId), null, 2));
      const r = await importResultsFiles(store, [file], { systemLabel: 'lab' });
      expect(r.imported).toEqual([]);
      expect(r.skipped).toEqual([{ file, trialId, message: expect.stringMatching(/^already stored as trial/) }]);
      // An old trial whose stored results cannot be read does not make every later import fail.
      store.db.prepare('UPDATE trials SET results_digest = NULL, results_gzip = ? WHERE id = ?').run(Buffer.from('not gzip'), trialId);
      const other = path.join(dir, 'other.json');
      fs.writeFileSync(other, JSON.stringify(kvbenchResults({ tokPerS: 654 })));
      const again = await importResultsFiles(store, [other], { systemLabel: 'lab' });
      expect(again.errors).toEqual([]);
      expect(again.imported).toHaveLength(1);
      expect(store.db.prepare('SELECT count(*) AS n FROM trials WHERE results_digest IS NULL').get()).toEqual({ n: 0 });
    } finally {
      store.close();
    }
  });

  it('run flags never override what a kvbench file records: a contradiction refuses the file and names the options; flags only fill in what it leaves out', async () => {
    // review #5: "--model llama3.1-70b-instruct --num-users 999" silently replaced the file's tiny-1b, 4 users.
    const dir = tempDir();
    const recorded = { model: 'tiny-1b', numUsers: 4, duration: 3, cpuMemGb: 0, gpuMemGb: 0, generationMode: 'fast', output: '/elsewhere/r.json' };
    const file = (name: string, tokPerS: number): string => {
      const r = kvbenchResults({ tokPerS });
      r.kvbench.run_options = { ...recorded };
      const f = path.join(dir, name);
      fs.writeFileSync(f, JSON.stringify(r));
      return f;
    };
    const flags = (text: string) => {
      const r = parseImportRunFlags(text);
      if (!r.ok) throw new Error(r.errors.join('; '));
      return { options: r.options, givenOptionKeys: r.given };
    };
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const wrong = file('wrong.json', 1);
      const r = await importResultsFiles(store, [wrong], { systemLabel: 'RF', ...flags('--model llama3.1-70b-instruct --num-users 999 --duration 3 --cpu-mem-gb 0 --gpu-mem-gb 0') });
      expect(r.imported).toEqual([]);
      expect(r.errors).toEqual([{
        file: wrong,
        message: '--run-flags contradict the run options this kvbench file records: --model llama3.1-70b-instruct (the file: tiny-1b), --num-users 999 (the file: 4); drop those flags: the file\'s own options are used',
      }]);
      // Flags that agree, and one the file does not record (--io-depth): the file's options, completed.
      const right = file('right.json', 2);
      const ok = await importResultsFiles(store, [right], { systemLabel: 'RF', ...flags('--model tiny-1b --num-users 4 --io-depth 8 --output /here/x.json') });
      expect(ok.errors).toEqual([]);
      const t = store.getTrial(ok.imported[0].trialId)!;
      expect(t.options).toEqual({ ...recorded, ioDepth: 8 });
      expect(t.configKey).toBe(configKey({ ...recorded, ioDepth: 8 }));
      // Without flags: the file's own options, as always.
      const plain = await importResultsFiles(store, [file('plain.json', 3)], { systemLabel: 'RF' });
      expect(store.getTrial(plain.imported[0].trialId)!.options).toEqual(recorded);
    } finally {
      store.close();
    }
  });

  it('refuses impossible or mistyped values, and a "complete" file with no usable metric; a failed run is still kept', async () => {
    // review #6: a negative throughput, a 750 % hit rate and a string throughput were stored as complete trials.
    const dir = tempDir();
    const write = (name: string, r: unknown): string => writeResults(dir, name, r);
    const impossible = write('mal1.json', {
      requests_completed: 10,
      total_tokens_generated: 500,
      summary: { avg_throughput_tokens_per_sec: -250, requests_per_second: -3, elapsed_time: -20, cache_stats: { cache_hit_rate: 7.5, storage_read_p95_ms: -12, tier_storage_read_bandwidth_gbps: -1 } },
    });
    const mistyped = write('mal3.json', { requests_completed: 10, total_tokens_generated: 500, summary: { avg_throughput_tokens_per_sec: 'fast' } });
    const nested = kvbenchResults({ tokPerS: 5 });
    nested.kvbench.latency.tier_read.storage!.p95_ns = -1;
    const badLatency = write('lat.json', nested);
    // review rev7 #6: a histogram that does not decode was stored, and the report then dropped that latency unsaid.
    const damaged = kvbenchResults({ tokPerS: 5 });
    damaged.kvbench.latency.end_to_end.hdr = 'abc';
    const truncated = kvbenchResults({ tokPerS: 5 });
    const storageRead = truncated.kvbench.latency.tier_read.storage!;
    storageRead.hdr = storageRead.hdr.slice(0, -8);
    const badHistograms = write('hdr.json', damaged);
    const cutHistogram = write('hdr-cut.json', truncated);
    const empty = write('empty.json', { requests_completed: 10, total_tokens_generated: 500, summary: {} });
    const failed = write('failed.json', { requests_completed: 0, total_tokens_generated: 0 });
    const good = write('good.json', referenceResultsNew({ tokPerS: 3, storageTokPerS: 3 }));
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [impossible, mistyped, badLatency, badHistograms, cutHistogram, empty, failed, good], { systemLabel: 'M' });
      const errors = Object.fromEntries(r.errors.map((e) => [path.basename(e.file), e.message]));
      expect(Object.keys(errors).sort()).toEqual(['empty.json', 'hdr-cut.json', 'hdr.json', 'lat.json', 'mal1.json', 'mal3.json']);
      expect(errors['hdr.json']).toMatch(/: kvbench\.latency\.end_to_end\.hdr: "abc" \(not a decodable HDR histogram: Invalid string\. Length must be a multiple of 4\)$/);
      // The base64 of a long histogram is cut in the message; the path and the reason are what matter.
      expect(errors['hdr-cut.json']).toMatch(/: kvbench\.latency\.tier_read\.storage\.hdr: "[^"]{56}… \(not a decodable HDR histogram: unexpected end of file\)$/);
      expect(errors['mal1.json']).toMatch(/^values no run can produce \(a wrong type, a negative amount, a hit rate outside 0–1, a damaged histogram\): summary\.avg_throughput_tokens_per_sec is -250, below 0; summary\.requests_per_second is -3, below 0; /);
      expect(errors['mal1.json']).toMatch(/; and 2 more$/);
      expect(errors['mal3.json']).toMatch(/summary\.avg_throughput_tokens_per_sec is "fast", not a number/);
      expect(errors['lat.json']).toMatch(/kvbench\.latency\.tier_read/);
      expect(errors['empty.json']).toMatch(/^no metric kvbench can use/);
      expect(r.imported.map((f) => [path.basename(f.file), f.status])).toEqual([['failed.json', 'failed'], ['good.json', 'complete']]);
      // A hit rate within 0–1 and device coverage above 1 (other processes read the drive too) are fine.
      const edge = kvbenchResults({ tokPerS: 6 });
      edge.summary!.cache_stats.cache_hit_rate = 1;
      edge.kvbench.device_io.read_coverage = 2.08;
      const ok = await importResultsFiles(store, [write('edge.json', edge)], { systemLabel: 'M' });
      expect(ok.errors).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('without run flags the trial is kept but matches no configuration', async () => {
    const dir = tempDir();
    const f = path.join(dir, 'r.json');
    fs.writeFileSync(f, JSON.stringify(referenceResultsNew({ tokPerS: 1, storageTokPerS: 1 })));
    const store = openStore(path.join(dir, 'kvbench.db'));
    try {
      const r = await importResultsFiles(store, [f], { systemLabel: 'x' });
      expect(r.imported[0].configKnown).toBe(false);
      expect(store.getTrial(r.imported[0].trialId)!.configKey).toMatch(/^unknown-/);
    } finally {
      store.close();
    }
  });
});
