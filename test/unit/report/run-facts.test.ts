// How a run's end becomes its facts and its outcome, over real parts (a cache on memory tiers, a
// recorder, a synthetic workload source), without running the engine.
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveModel } from '../../../src-shared/domain/models.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';
import { validateRunOptions, type RunOptions } from '../../../src-shared/domain/run-options.ts';
import { MultiTierCache } from '../../../src-main/engine/cache/multi-tier-cache.ts';
import { BytePool } from '../../../src-main/engine/io/byte-workers.ts';
import { PayloadPool } from '../../../src-main/engine/io/payload.ts';
import { RunRecorder } from '../../../src-main/engine/metrics/run-recorder.ts';
import { TimelineSampler } from '../../../src-main/engine/metrics/timeline.ts';
import { MemoryPeaks, type MemorySample } from '../../../src-main/engine/metrics/memory-usage.ts';
import type { PreparationFacts } from '../../../src-main/engine/report/results-builder.ts';
import { assembleRunFacts, blockSizeStats, ragFacts, runOutcome, type RunEnd, type RunSetup } from '../../../src-main/engine/run-facts.ts';
import { RequestQueue } from '../../../src-main/engine/workload/request-queue.ts';
import { BacklogWatch } from '../../../src-main/engine/workload/backlog-watch.ts';
import { createWorkloadSource } from '../../../src-main/engine/workload/sources/create-source.ts';
import type { RagDocument } from '../../../src-main/engine/workload/synthetic-workload.ts';
import { IoTraceLog } from '../../../src-main/engine/workload/trace/io-trace-log.ts';
import { NullTier } from '../../../src-main/engine/workload/trace/null-tier.ts';
import { resolveWorkloadProfile } from '../../../src-main/engine/workload/workload-profile.ts';
import { MemoryTier, TerminalMemoryTier } from '../../support/memory-tier.ts';

const { profile } = resolveWorkloadProfile({});
const NO_PREPARATION: PreparationFacts = { ragIngestion: null, decodeOnlyPrepopulation: null, precondition: null };

function options(raw: Record<string, unknown> = {}): RunOptions {
  const v = validateRunOptions({ model: 'tiny-1b', cacheDir: '/mnt/kv', numUsers: 2, duration: 5, seed: 3, ...raw });
  if (!v.ok) throw new Error(v.errors.join('; '));
  return v.options;
}

let bytes: BytePool;
beforeAll(async () => {
  bytes = await BytePool.start({ threads: 0, pool: PayloadPool.create(1, 1024 * 1024) });
});
afterAll(async () => {
  await bytes.close();
});

async function runEnded(o: RunOptions, over: Partial<RunEnd> = {}): Promise<{ setup: RunSetup; end: RunEnd }> {
  const model = resolveModel('tiny-1b');
  if (!model.ok) throw new Error(model.error);
  const cache = new MultiTierCache([
    { backend: new MemoryTier('cpu', 4096), budgetBytes: 1 << 20 },
    { backend: new TerminalMemoryTier('storage', 4096), budgetBytes: 1 << 24 },
  ]);
  const recorder = new RunRecorder({ interactive: 50, responsive: 100, batch: 1000 });
  const workload = await createWorkloadSource({ options: o, seed: 3, profile, ragDocuments: null, prepopulatedKeys: [], log: () => undefined });
  const setup: RunSetup = {
    o,
    model: model.model,
    seed: 3,
    cache,
    bytes,
    storageIo: { directIo: false, reason: 'O_DIRECT is not supported by tmpfs', hugePages: { advised: false, reason: 'the buffer (4096 bytes) is smaller than a huge page' } },
    target: { capacityBytes: 1 << 24, freeBytesAtStart: 1 << 30, baseDir: '/mnt/kv', ramFilesystem: 'tmpfs', ramBackingChain: 'tmpfs', bufferedLoops: [] },
    gpu: { name: 'gpu', present: false, budgetBytes: 0, reason: '--gpu-mem-gb 0 disables the GPU tier' },
    gpuTier: null,
    cpuTier: { peakHeldBytes: 4096, arenaBytes: 8192, overflowSegments: 0 },
    fixedBuffers: { cpuTierArenaBytes: 8192, storageIoBuffersBytes: 1 << 20, cpuReadStagingBytes: 1 << 20, payloadPoolBytes: 1 << 20, gpuStagingBytes: 0, gpuStagingPinned: null },
    cpuBudgetBytes: 1 << 20,
    chunkBytes: 4096,
    notApplied: ['cache.unknown_key'],
    traceLog: null,
    probeLimits: null,
  };
  const end: RunEnd = {
    startedAt: '2026-11-01T00:00:00.000Z',
    status: 'partial',
    statusReason: 'cancelled before the planned end: test',
    workload,
    recorder,
    timeline: new TimelineSampler(cache, recorder, () => ({ activeUsers: 2, queueDepth: 0 })),
    closed: { endNs: 2.5e9, requestsInFlight: 3, queued: 4, deviceIo: null, lagNs: { p50: 1, p99: 2, max: 3 } },
    window: { plannedNs: 5e9, warmUpNs: 0, startedUnixNs: 1_700_000_000e9, closedBy: 'cancel', drainNs: 1e6 },
    processor: { verifyErrorCount: 0, verifyFailures: [], verifiedChunks: {} },
    docs: null,
    preparation: NO_PREPARATION,
    queue: new RequestQueue(),
    backlog: new BacklogWatch(true, () => {}).facts(),
    autoscaling: null,
    memoryPeak: null,
    ...over,
  };
  return { setup, end };
}

describe('the facts of a run', () => {
  it('state the window as it closed, with what was in flight and queued then', async () => {
    const { setup, end } = await runEnded(options());
    const f = assembleRunFacts(setup, end);
    expect(f.elapsedNs).toBe(2.5e9);
    expect(f.window).toEqual({ plannedNs: 5e9, warmUpNs: 0, startedUnixNs: 1_700_000_000e9, closedBy: 'cancel', requestsInFlight: 3, requestsQueued: 4, drainNs: 1e6 });
    expect(f.eventLoopLagNs).toEqual({ p50: 1, p99: 2, max: 3 });
    expect(f).toMatchObject({ status: 'partial', statusReason: 'cancelled before the planned end: test', cpuPeakHeldBytes: 4096, gpuReport: null, configKeysNotApplied: ['cache.unknown_key'] });
    expect(f.workloadSource.kind).toBe('synthetic');
    expect(f.digest).toBe(end.workload.digest());
  });

  it('state what the memory was made of: each timeline point, each kind\'s peak, the buffers reserved at start', async () => {
    const { setup, end } = await runEnded(options());
    const samples: MemorySample[] = [
      { rssBytes: 900, heapUsedBytes: 50, externalBytes: 300, arrayBuffersBytes: 200, byteWorkersHeapUsedBytes: null },
      { rssBytes: 800, heapUsedBytes: 70, externalBytes: 310, arrayBuffersBytes: 190, byteWorkersHeapUsedBytes: 20 },
    ];
    const peaks = new MemoryPeaks();
    const memory = { sample: () => samples.shift()!, peaks };
    const cache = new MultiTierCache([{ backend: new TerminalMemoryTier('storage'), budgetBytes: 1 << 24 }]);
    const timeline = new TimelineSampler(cache, end.recorder, () => ({ activeUsers: 2, queueDepth: 0 }), memory);
    timeline.sample(1e9);
    timeline.sample(2e9);
    const results = runOutcome(assembleRunFacts(setup, { ...end, timeline, memoryPeak: peaks.peak }), { profile, trace: null, validationTrace: null, log: () => undefined }).results as unknown as RunResults;
    const kv = results.kvbench;
    expect(kv.timeline.map((p) => [p.rss_bytes, p.heap_used_bytes, p.external_bytes, p.array_buffers_bytes, p.byte_workers_heap_used_bytes])).toEqual([
      [900, 50, 300, 200, null],
      [800, 70, 310, 190, 20],
    ]);
    expect(kv.engine_health.memory).toEqual({
      sampled_peak: { rss_bytes: 900, heap_used_bytes: 70, external_bytes: 310, array_buffers_bytes: 200, byte_workers_heap_used_bytes: 20 },
      fixed_buffers: {
        cpu_tier_arena_bytes: 8192,
        storage_io_buffers_bytes: 1 << 20,
        cpu_read_staging_bytes: 1 << 20,
        payload_pool_bytes: 1 << 20,
        gpu_staging_bytes: 0,
        gpu_staging_pinned: null,
        total_bytes: 8192 + 3 * (1 << 20),
      },
    });
    expect(kv.tiers.cpu).toMatchObject({ peak_held_bytes: 4096, arena_bytes: 8192, arena_overflow_chunks: 0 });
  });

  it('say the storage tier was in RAM, except in trace-only mode, which keeps no files', async () => {
    const { setup, end } = await runEnded(options());
    expect(assembleRunFacts(setup, end).storage).toEqual({
      capacityBytes: 1 << 24, freeBytesAtStart: 1 << 30, dir: '/mnt/kv', directIo: false, directIoReason: 'O_DIRECT is not supported by tmpfs', fsyncPolicy: 'per-entry', ramFilesystem: 'tmpfs', ramBackingChain: 'tmpfs', bufferedLoops: [],
    });
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'kvbench-run-facts-'));
    const traceLog = await IoTraceLog.open(path.join(dir, 'trace.csv'));
    try {
      expect(assembleRunFacts({ ...setup, traceLog }, end).storage).toMatchObject({ ramFilesystem: null, ramBackingChain: null });
    } finally {
      await traceLog.close();
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('a cache directory on a loop device that reads its file through the page cache (loop/dio 0)', () => {
  const loop = { name: 'loop3', backingFile: '/var/tmp/slow.img', backingFilesystem: 'ext4' };
  const io = (device: string, readBytes: number) => ({ device, readBytes, writeBytes: 0, readIos: 1, writeIos: 0, ioBusyMs: 1, weightedIoMs: 1, flushes: 0, elapsedNs: 2.5e9 });
  // The sampler below a loop: the disk holding its file is judged, the loop's own counters kept beside it.
  const deviceIo = {
    available: true, reason: null, device: { name: 'vda', majorMinor: '254:0', isPartition: false, parent: null, underlying: [], logicalBlockBytes: 512, rotational: true, resolvedVia: 'stat' as const },
    io: io('vda', 0), parentIo: null,
    via: { name: 'loop3', majorMinor: '7:3', isPartition: false, parent: null, underlying: [], logicalBlockBytes: 512, rotational: false, resolvedVia: 'stat' as const },
    viaIo: io('loop3', 5 << 20), processReadBytes: 0, processReason: null,
  };

  it('is named in the results, flags the reads, and the console warns with the fix; the counters are the disk\'s, the loop\'s beside them', async () => {
    const { setup, end } = await runEnded(options());
    const ext4: RunSetup = { ...setup, storageIo: { ...setup.storageIo, directIo: true, reason: null }, target: { ...setup.target, ramFilesystem: null, ramBackingChain: null, bufferedLoops: [loop] } };
    const out = runOutcome(assembleRunFacts(ext4, { ...end, closed: { ...end.closed, deviceIo } }), { profile, trace: null, validationTrace: null, log: () => undefined });
    const kv = (out.results as unknown as RunResults).kvbench;
    expect(kv.tiers.storage).toMatchObject({ direct_io: true, ram_backed: false, buffered_loops: [{ name: 'loop3', backing_file: '/var/tmp/slow.img', backing_filesystem: 'ext4' }], reads_may_hit_page_cache: true });
    expect(kv.device_io).toMatchObject({ device: 'vda', via: { device: 'loop3', read_bytes: 5 << 20, write_bytes: 0, read_ios: 1, write_ios: 0 } });
    expect(out.summaryText).toMatch(/^ {2}Device I\/O \(vda, holding loop3's backing file, \/proc\/diskstats, measured phase, every process\): read 0 B/m);
    expect(out.summaryText).toMatch(/^ {4}through loop3 \(the cache directory's filesystem; it counts page-cache hits of its file too\): read 5\.0 MiB, written 0 B$/m);
    expect(out.summaryText).toContain(
      "  WARNING: the cache directory is on a loop device with buffered I/O on the backing file (loop3 → /var/tmp/slow.img on ext4; loop/dio 0): reads through it may be served by the host's page cache",
    );
    expect(out.summaryText).toContain('(fix: losetup --direct-io=on /dev/loop3);');
    expect(out.summaryText).not.toMatch(/WARNING: storage reads may have been served by the OS page cache/);
  });

  it('is not said in trace-only mode, which keeps no files; a loop with direct I/O on is not listed at all', async () => {
    const { setup, end } = await runEnded(options());
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'kvbench-run-facts-'));
    const traceLog = await IoTraceLog.open(path.join(dir, 'trace.csv'));
    try {
      const traced = assembleRunFacts({ ...setup, traceLog, target: { ...setup.target, ramFilesystem: null, ramBackingChain: null, bufferedLoops: [loop] } }, end);
      expect(traced.storage.bufferedLoops).toEqual([]);
    } finally {
      await traceLog.close();
      await fsp.rm(dir, { recursive: true, force: true });
    }
    const direct: RunSetup = { ...setup, storageIo: { ...setup.storageIo, directIo: true, reason: null }, target: { ...setup.target, ramFilesystem: null, ramBackingChain: null, bufferedLoops: [] } };
    const out = runOutcome(assembleRunFacts(direct, { ...end, closed: { ...end.closed, deviceIo } }), { profile, trace: null, validationTrace: null, log: () => undefined });
    const kv = (out.results as unknown as RunResults).kvbench;
    expect(kv.tiers.storage).toMatchObject({ buffered_loops: [], reads_may_hit_page_cache: false });
    expect(out.summaryText).not.toMatch(/WARNING/);
  });
});

describe('the RAG block', () => {
  const docs: RagDocument[] = [
    { id: 'doc_0000', tokens: 30, chunks: [{ key: 'a', tokens: 20 }, { key: 'b', tokens: 10 }] },
    { id: 'doc_0001', tokens: 5, chunks: [{ key: 'c', tokens: 5 }] },
  ];
  it('counts the documents and chunks, and what ingesting them wrote', () => {
    const ingested = { ...NO_PREPARATION, ragIngestion: { entries: 3, bytes: 560, elapsedNs: 1 } };
    expect(ragFacts(true, docs, ingested)).toEqual({ documents: 2, chunks: 3, ingestedBytes: 560 });
    expect(ragFacts(true, docs, NO_PREPARATION)).toEqual({ documents: 2, chunks: 3, ingestedBytes: 0 });
  });
  it('is absent without RAG', () => {
    expect(ragFacts(false, docs, NO_PREPARATION)).toBeNull();
    expect(ragFacts(true, null, NO_PREPARATION)).toBeNull();
  });
});

describe('the block sizes of the console summary', () => {
  it('are absent when no entry is live', () => {
    expect(blockSizeStats([])).toBeUndefined();
  });
  it('are the least, mean, 95th percentile (nearest rank) and largest, whatever the order', () => {
    const sizes = Array.from({ length: 20 }, (_, i) => (20 - i) * 100); // 2000 … 100
    expect(blockSizeStats(sizes)).toEqual({ entries: 20, minBytes: 100, meanBytes: 1050, p95Bytes: 1900, maxBytes: 2000 });
    expect(blockSizeStats([7])).toEqual({ entries: 1, minBytes: 7, meanBytes: 7, p95Bytes: 7, maxBytes: 7 });
    expect(sizes[0]).toBe(2000); // the caller's list is left as it was
  });
});

describe('the outcome of a run', () => {
  it('carries the status and reason, the results and the summary', async () => {
    const { setup, end } = await runEnded(options());
    const logged: string[] = [];
    const out = runOutcome(assembleRunFacts(setup, end), { profile, trace: null, validationTrace: null, log: (_l, m) => logged.push(m) });
    expect(out.status).toBe('partial');
    expect(out.reason).toBe('cancelled before the planned end: test');
    expect(out.summaryText).toContain('BENCHMARK RESULTS');
    expect(out.summaryText).toContain('I/O buffers: small pages (the buffer (4096 bytes) is smaller than a huge page)');
    expect((out.results as unknown as RunResults).kvbench.engine_health.io_buffer_huge_pages).toEqual({ advised: false, reason: 'the buffer (4096 bytes) is smaller than a huge page' });
    expect((out.results as { kvbench: Record<string, unknown> }).kvbench.io_trace).toBeUndefined();
    expect(out.results).not.toHaveProperty('validation');
    expect(logged).toEqual([]);
  });

  it('names a complete trace, and says why one is not', async () => {
    const { setup, end } = await runEnded(options());
    const facts = assembleRunFacts(setup, end);
    const logged: string[] = [];
    const log = (level: string, m: string): void => void logged.push(`${level}: ${m}`);
    const whole = runOutcome(facts, { profile, trace: { path: '/tmp/t.csv', rows: 1234, compressed: false, incomplete: null }, validationTrace: null, log });
    expect((whole.results as { kvbench: Record<string, unknown> }).kvbench.io_trace).toEqual({ path: '/tmp/t.csv', rows: 1234, compressed: false, complete: true });
    const cut = runOutcome(facts, { profile, trace: { path: '/tmp/t.csv.partial', rows: 10, compressed: false, incomplete: 'the trace could not be written: disk full' }, validationTrace: null, log });
    expect((cut.results as { kvbench: Record<string, unknown> }).kvbench.io_trace).toMatchObject({ complete: false });
    expect(logged).toEqual(['info: IOTracer: closed — 1,234 operations logged to /tmp/t.csv', 'error: the trace could not be written: disk full']);
  });
});

describe('the outcome of a trace-only run (--io-trace-log: no storage I/O at all)', () => {
  /** A trace-only run's end: NullTiers that moved nothing, 2 completed requests. */
  async function traceRunEnded(dir: string): Promise<{ setup: RunSetup; end: RunEnd; traceLog: IoTraceLog }> {
    const o = options({ ioTraceLog: path.join(dir, 'trace.csv'), cpuMemGb: 0, gpuMemGb: 0 });
    const { setup, end } = await runEnded(o);
    const cache = new MultiTierCache([{ backend: new NullTier('storage'), budgetBytes: 1 << 30 }]);
    const entry = { key: 'u0_turn_1', keyHash: 1n, sizeBytes: 24 << 20 };
    await cache.write(entry, async () => undefined);
    for (let i = 0; i < 3; i++) expect((await cache.read(entry.key, 'user')).hit).toBe(true);
    const recorder = new RunRecorder({ interactive: 50, responsive: 100, batch: 1000 });
    for (let i = 0; i < 2; i++) {
      recorder.complete({ qos: 'batch', generationTokens: 10, queueWaitNs: 1000, storageNs: 0, storageNsByTier: { gpu: 0, cpu: 0, storage: 0 }, generationNs: 0, generationSleptNs: 0, serviceNs: 4000, endToEndNs: 5000, prefillNs: 0, decodeNs: 0 });
    }
    const traceLog = await IoTraceLog.open(path.join(dir, 'trace.csv'));
    return {
      setup: { ...setup, cache, traceLog, storageIo: { directIo: false, reason: 'trace-only mode (--io-trace-log): no storage I/O at all', hugePages: null } },
      end: { ...end, status: 'complete', statusReason: null, recorder, closed: { ...end.closed, deviceIo: null } },
      traceLog,
    };
  }

  it('gives no storage verdict, flags no page cache, and says its rates are logical', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'kvbench-trace-outcome-'));
    try {
      const { setup, end, traceLog } = await traceRunEnded(dir);
      const out = runOutcome(assembleRunFacts(setup, end), { profile, trace: await traceLog.close(), validationTrace: null, log: () => undefined });
      const res = out.results as unknown as RunResults;
      expect(res.kvbench.tier_bytes.storage.read_bytes).toBe(3 * (24 << 20));
      // No I/O: nothing to judge. The key stays, as the reference's readers expect it, not assessed.
      expect(res.summary!.cache_stats.storage_health).toEqual({
        overall_status: 'N/A',
        criteria: [],
        passed_count: 0,
        total_count: 0,
        note: 'kvbench tool criteria (the reference tool’s thresholds), not an MLPerf rule',
        not_assessed_reason: 'trace-only mode (--io-trace-log): no storage I/O happened, so there is no latency or bandwidth to judge',
      });
      // Nothing was read, from the page cache or anywhere.
      expect(res.kvbench.tiers.storage.reads_may_hit_page_cache).toBe(false);
      const text = out.summaryText;
      expect(text).toContain('\n### STORAGE PERFORMANCE ASSESSMENT: N/A ###\n');
      expect(text).toContain('  Not assessed: trace-only mode (--io-trace-log): no storage I/O happened, so there is no latency or bandwidth to judge');
      expect(text).not.toMatch(/\[OK\] Storage Tier/);
      expect(text).not.toContain('WARNING: storage reads may have been served by the OS page cache');
      expect(text).toContain('  Storage KV Read Bandwidth (logical: trace-only, no I/O): 0.03 GB/s');
      expect(text).not.toMatch(/^ {2}Storage KV Read Bandwidth: /m);
      expect(text).toMatch(/^ {2}Storage read bandwidth \(logical: trace-only, no I\/O\): /m);
      expect(text).toMatch(/^ {4}Storage read: +not measured \(trace-only mode: no I\/O\), 3 logical operations$/m);
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  });
});
