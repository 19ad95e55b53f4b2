import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { randomInt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { RATE_INTERVAL_MS, type ProgressEvent, type RunOutcome } from '../../src-shared/engine-protocol.ts';
import { KvbenchError } from '../../src-shared/domain/errors.ts';
import { entryBytes, resolveModel, type ModelSpec } from '../../src-shared/domain/models.ts';
import { bufferedLoopMessage, ramBackedMessage } from '../../src-shared/domain/hardware.ts';
import { engineStallReason } from '../../src-shared/domain/engine-stall.ts';
import { GIB, MIB, type TrialStatus } from '../../src-shared/domain/results.ts';
import { validateRunOptions, type RunOptions } from '../../src-shared/domain/run-options.ts';
import { addWorkersBusy, noWorkersBusy, type WorkersBusyNs } from '../../src-shared/domain/worker-busy.ts';
import { MultiTierCache, PlacementError, type CacheTier } from './cache/multi-tier-cache.ts';
import { cpuTierMemoryError } from './config/cpu-tier-memory.ts';
import { AlignedSlab } from './io/aligned-slab.ts';
import { BytePool } from './io/byte-workers.ts';
import { EntryFileStore, IoCancelledError } from './io/entry-file-store.ts';
import type { HugePageAdvice } from './io/huge-pages.ts';
import { PayloadPool } from './io/payload.ts';
import { DeviceStatsSampler } from './metrics/device-stats.ts';
import { prepopulatedKeysOf, ragDocuments, runPreparation } from './preparation.ts';
import { assembleRunFacts, runOutcome, type ClosedWindow } from './run-facts.ts';
import { RunRecorder } from './metrics/run-recorder.ts';
import { TimelineSampler } from './metrics/timeline.ts';
import { MemoryPeaks, sampleMemory, type FixedBuffers, type MemorySample } from './metrics/memory-usage.ts';
import type { DirectionStats } from './metrics/tier-stats.ts';
import type { RunFacts, WindowCloser } from './report/results-builder.ts';
import { loadProbeLimits, type ProbeFileLimits } from './report/probe-limits.ts';
import { CpuTier } from './tiers/cpu-tier.ts';
import { StorageTier } from './tiers/storage-tier.ts';
import { prepareStorageTarget, releaseStorageTarget, type StorageTarget } from './tiers/storage-target.ts';
import type { TierAvailability } from './tiers/tier-backend.ts';
import type { GpuTier } from './tiers/gpu/gpu-tier.ts';
import { openGpuTier } from './tiers/gpu/open-gpu-tier.ts';
import { IoTraceLog } from './workload/trace/io-trace-log.ts';
import { NullTier } from './workload/trace/null-tier.ts';
import { EVENT_LOOP_SLICE_MS, withEventLoopTurns } from './workload/event-loop-slice.ts';
import { loadValidationTrace } from './workload/trace/validation-trace.ts';
import { MAX_WORKERS, PREPOPULATED_ENTRY_TOKENS, type QosLevel } from './workload/personas.ts';
import { resolveWorkloadProfile, type WorkloadProfile } from './workload/workload-profile.ts';
import { RequestAbandoned, RequestProcessor } from './workload/request-processor.ts';
import { RequestQueue, Semaphore } from './workload/request-queue.ts';
import { BacklogWatch } from './workload/backlog-watch.ts';
import { createWorkloadSource } from './workload/sources/create-source.ts';
import type { WorkloadSource } from './workload/workload-source.ts';
import { WorkerPool } from './workload/worker-pool.ts';
import { AUTOSCALER_WRITE_P95_THRESHOLD_MS, Autoscaler, noPeakFoundReason } from './workload/autoscaler.ts';
import { isoTimeOrNull } from '../../src-shared/domain/iso-time.ts';

export type LogFn = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

export interface EngineContext {
  onProgress: (p: ProgressEvent) => void;
  onLog: LogFn;
  signal: AbortSignal;
  /** The open loop's backlog cap (OPEN_LOOP_BACKLOG_CAP unless a test sets a small one to reach it). */
  backlogCapRequests?: number;
  /** Requests the raw latency lists keep (RAW_LATENCY_SAMPLE_REQUESTS unless a test sets a small one). */
  rawLatencySampleRequests?: number;
}

/** Byte-worker threads: CPU work (payload fill, copies, verification) off the event loop. */
const MAX_BYTE_THREADS = 4;
const PROGRESS_INTERVAL_MS = 100;
const TIMELINE_INTERVAL_MS = RATE_INTERVAL_MS;
const LAG_RESOLUTION_MS = 5;
/** Storage read P95 that the qos autoscaler treats as full saturation (the latency profile's read criterion). */
const AUTOSCALER_READ_P95_THRESHOLD_MS = 200;
/** What a run that a full disk or a storage error stopped in its warm-up (aborted) says it measured. */
const NOTHING_MEASURED_IN_WARM_UP = 'during the warm-up, before the measured window opened: nothing was measured';

/** Features of the reference this build does not have yet: refused with a clear error, never ignored. */
function unsupportedFeatures(o: RunOptions): string[] {
  const out: string[] = [];
  const later = 'is not available in this kvbench build yet';
  if (o.enableLatencyTracing) out.push(`--enable-latency-tracing (bpftrace) ${later}`);
  return out;
}

/** Largest entry the configured workload can write, so the storage target can be checked up front. */
function largestEntryBytes(model: ModelSpec, o: RunOptions, profile: WorkloadProfile): number {
  const maxContext = Math.max(...profile.personas.map((p) => p.contextTokens[1]), PREPOPULATED_ENTRY_TOKENS);
  return entryBytes(model, maxContext, o.tensorParallel);
}

/**
 * Runs one benchmark: the engine. Validates, sets up the tiers, runs any preparatory phase
 * (RAG ingestion, decode-only pre-population, preconditioning), then the measured phase, then
 * removes every file it created and returns the results. Never imports electron or the store.
 */
export async function runBenchmark(rawOptions: unknown, ctx: EngineContext): Promise<RunOutcome> {
  const v = validateRunOptions(rawOptions);
  if (!v.ok) throw new KvbenchError('VALIDATION', `Invalid arguments:\n  ${v.errors.join('\n  ')}`);
  const o = v.options;
  const unsupported = unsupportedFeatures(o);
  if (unsupported.length > 0) throw new KvbenchError('VALIDATION', unsupported.join('\n'));
  const resolved = resolveModel(o.model, o.customModels);
  if (!resolved.ok) throw new KvbenchError('VALIDATION', resolved.error);
  const model = resolved.model;
  const log = ctx.onLog;
  const { profile, notApplied } = resolveWorkloadProfile(o.tuning);
  if (notApplied.length > 0) log('warn', `config keys kvbench does not act on (recorded in the results): ${notApplied.join(', ')}`);

  const traceMode = o.ioTraceLog !== null;
  if (traceMode && o.verify) throw new KvbenchError('VALIDATION', '--verify checks bytes read back, and --io-trace-log (trace-only mode) moves none');
  if (traceMode && o.probeResult !== null) throw new KvbenchError('VALIDATION', '--probe-result states storage efficiency, and --io-trace-log (trace-only mode) moves no bytes');
  // Checked before anything is written: a wrong probe file costs nothing.
  const probeLimits = o.probeResult === null ? null : loadProbeLimits(o.probeResult);
  const cpuBudgetBytes = Math.floor(o.cpuMemGb * GIB);
  const memory = traceMode ? null : cpuTierMemoryError(o.cpuMemGb, os.totalmem());
  if (memory !== null) throw new KvbenchError('VALIDATION', memory);
  const gpu: TierAvailability = {
    name: 'gpu',
    present: false,
    budgetBytes: Math.floor(o.gpuMemGb * o.numGpus * GIB),
    reason: o.gpuMemGb > 0 ? null : '--gpu-mem-gb 0 disables the GPU tier',
  };

  const seed = o.seed ?? randomInt(0, 2 ** 31 - 1);
  const entrySizeBytes = (tokens: number): number => entryBytes(model, tokens, o.tensorParallel);
  const chunkBytes = o.ioChunkMib * MIB;
  const byteThreads = Math.max(1, Math.min(MAX_BYTE_THREADS, os.availableParallelism()));

  // A malformed validation trace fails before anything is written.
  const validationTrace = o.validationTrace ? await loadValidationTrace(o.validationTrace) : null;
  const target = await prepareStorageTarget({
    cacheDir: o.cacheDir,
    storageCapacityGb: o.storageCapacityGb,
    largestEntryBytes: largestEntryBytes(model, o, profile),
    // Ranks on shared storage each take their share of its free space, or together they would fill it
    // (trace-only mode writes nothing, so its simulated capacity is not shared).
    sharedBy: o.rank !== null && o.ioTraceLog === null ? (o.worldSize ?? 1) : 1,
    rankSubdir: o.rank !== null,
  });
  if (target.removedRunDirs.length > 0) log('info', `removed run directories left by ended kvbench processes: ${target.removedRunDirs.join(', ')}`);

  let bytes: BytePool | null = null;
  let cache: MultiTierCache | null = null;
  let store: EntryFileStore | null = null;
  let gpuTier: GpuTier | null = null;
  let traceLog: IoTraceLog | null = null;
  try {
    // One chunk long, so storage writes restamp buffers that hold the pool instead of copying it.
    const pool = PayloadPool.create(seed, chunkBytes);
    bytes = await BytePool.start({ threads: byteThreads, pool });
    const fixedBuffers: FixedBuffers = { cpuTierArenaBytes: 0, storageIoBuffersBytes: 0, cpuReadStagingBytes: 0, payloadPoolBytes: pool.sizeBytes, gpuStagingBytes: 0, gpuStagingPinned: null };
    const tiers: CacheTier[] = [];
    let storageIo: { directIo: boolean; reason: string | null; hugePages: HugePageAdvice | null };
    if (traceMode) {
      traceLog = await IoTraceLog.open(o.ioTraceLog!);
      log('info', `Trace mode active: I/O operations will be logged to ${traceLog.path} (no real hardware I/O)`);
      // Operations that complete at once would otherwise hold the event loop for as long as a backlog lasts.
      const room = { waitForRoom: withEventLoopTurns(() => traceLog!.waitForRoom()) };
      // As in the reference, trace mode always has a GPU tier when a GPU budget is given.
      if (gpu.budgetBytes > 0) {
        tiers.push({ backend: new NullTier('gpu', room), budgetBytes: gpu.budgetBytes });
        gpu.present = true;
        gpu.reason = 'trace-only mode: simulated, no GPU I/O';
      }
      if (cpuBudgetBytes > 0) tiers.push({ backend: new NullTier('cpu', room), budgetBytes: cpuBudgetBytes });
      tiers.push({ backend: new NullTier('storage', room), budgetBytes: target.capacityBytes });
      storageIo = { directIo: false, reason: 'trace-only mode (--io-trace-log): no storage I/O at all', hugePages: null };
    } else {
      const slab = new AlignedSlab(chunkBytes, o.ioDepth);
      fixedBuffers.storageIoBuffersBytes = slab.slotBytes * slab.slotCount;
      store = await EntryFileStore.open({
        dir: target.runDir,
        directIo: o.directIo,
        chunkBytes,
        perEntryDepth: Math.min(o.ioDepth, 4),
        slab,
        bytes,
        fsync: o.fsyncPolicy,
      });
      storageIo = { directIo: store.directIo.enabled, reason: store.directIo.reason, hugePages: slab.hugePages };
      if (!store.directIo.enabled) log('warn', `storage tier uses buffered I/O: ${store.directIo.reason}`);
      if (!slab.hugePages.advised) log('info', `storage I/O buffers in small pages (more kernel CPU per direct I/O): ${slab.hugePages.reason}`);
      if (target.ramBackingChain !== null) log('warn', `--cache-dir ${target.baseDir} is on a ${ramBackedMessage(target.ramBackingChain)}; storage results will describe RAM`);
      else if (target.bufferedLoops.length > 0) log('warn', `--cache-dir ${target.baseDir} is on a ${bufferedLoopMessage(target.bufferedLoops)}; storage reads will be flagged`);
    }
    if (!traceMode && o.gpuMemGb > 0) {
      const r = await openGpuTier({ numGpus: o.numGpus, perDeviceBudgetBytes: Math.floor(o.gpuMemGb * GIB), chunkBytes, copyThreads: 2, stagingSlots: 8 });
      if (r.ok) {
        gpuTier = r.tier;
        const rep = gpuTier.report();
        gpu.present = true;
        gpu.budgetBytes = gpuTier.budgetBytes;
        gpu.reason = rep.shortfallReason;
        if (rep.shortfallReason) log('warn', `GPU tier smaller than asked: ${rep.shortfallReason}`);
        if (!rep.stagingPinned && rep.stagingReason) log('warn', rep.stagingReason);
        fixedBuffers.gpuStagingBytes = rep.stagingBytes;
        fixedBuffers.gpuStagingPinned = rep.stagingPinned;
        tiers.push({ backend: gpuTier, budgetBytes: gpuTier.budgetBytes });
      } else {
        gpu.reason = r.reason;
        log('warn', `${r.reason}; entries start in the ${cpuBudgetBytes > 0 ? 'CPU' : 'storage'} tier`);
      }
    }
    let cpuTier: CpuTier | null = null;
    if (store && cpuBudgetBytes > 0) {
      const staging = new AlignedSlab(chunkBytes, byteThreads * 2);
      cpuTier = new CpuTier({ chunkBytes, bytes, staging, budgetBytes: cpuBudgetBytes, depth: byteThreads * 2 });
      fixedBuffers.cpuReadStagingBytes = staging.slotBytes * staging.slotCount;
      fixedBuffers.cpuTierArenaBytes = cpuTier.arenaBytes;
      tiers.push({ backend: cpuTier, budgetBytes: cpuBudgetBytes });
    }
    if (store) tiers.push({ backend: new StorageTier(store), budgetBytes: target.capacityBytes });
    cache = new MultiTierCache(tiers, {
      fillTarget: profile.tierFillTarget,
      entrySizeCap: profile.tierEntrySizeCap,
      promotion: o.promotion,
      ioChunkBytes: chunkBytes,
      ...(traceLog ? { observer: traceLog } : {}),
    });

    const outcome = await measure({ o, ctx, model, seed, entrySizeBytes, cache, bytes, store, storageIo, target, gpu, gpuTier, cpuTier, cpuBudgetBytes, chunkBytes, profile, notApplied, traceLog, validationTrace, probeLimits, fixedBuffers });
    return outcome;
  } finally {
    if (cache) await cache.clear().catch((err) => log('error', `cleanup: ${(err as Error).message}`));
    if (gpuTier) await gpuTier.close().catch((err) => log('error', `cleanup: ${(err as Error).message}`));
    // Reached first only when the run threw: its trace is not a whole one.
    if (traceLog) await traceLog.close('failed').catch(() => undefined);
    if (store) await store.removeAll().catch((err) => log('error', `cleanup: ${(err as Error).message}`));
    if (bytes) await bytes.close().catch(() => undefined);
    await releaseStorageTarget(target);
  }
}

/** Why a window in which no request completed measured nothing, and what to change. */
function emptyWindowReason(windowNs: number, closed: ClosedWindow, failed: number, end: { closedBy: WindowCloser; reason: string | null }): string {
  const what =
    `no request completed in the ${(windowNs / 1e9).toFixed(1)} s measured window ` +
    `(${closed.requestsInFlight} in flight, ${closed.queued} queued when it closed${failed > 0 ? `, ${failed} failed` : ''})`;
  if (end.closedBy === 'workload-end') return `${what}: ${end.reason ?? 'the workload ended'} before any request completed in the window; shorten --warm-up or replay more`;
  if (failed > 0 && closed.requestsInFlight === 0) return `${what}: every request in it failed`;
  return `${what}: lengthen --duration or lower the load`;
}

/** Why the run was cancelled: the abort's reason (the host's words, or the signal the engine got). */
function cancelReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  // A bare abort() carries a DOMException that says only "This operation was aborted".
  if (reason instanceof Error && !(reason instanceof DOMException)) return reason.message;
  return typeof reason === 'string' && reason !== '' ? reason : 'no reason given';
}

/**
 * A complete window in which the engine stalled becomes partial (excluded from reports by default):
 * its rates divide the device's work by seconds in which nothing was asked of the device.
 */
function unlessStalled(
  end: { status: TrialStatus; reason: string | null },
  window: { plannedNs: number; elapsedNs: number; lagMaxNs: number },
  log: LogFn,
): { status: TrialStatus; reason: string | null } {
  const stall = end.status === 'complete' ? engineStallReason(window) : null;
  if (stall === null) return end;
  log('warn', stall);
  return { status: 'partial', reason: stall };
}

/** Wall-clock time in ns since the Unix epoch (to a few hundred ns: a double holds no more at this size). */
function unixNowNs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1e6);
}

/**
 * Waits for --start-at, so the ranks of a multi-host run start their workloads together however
 * long each took to prepare. A time already past starts at once, with a warning: the ranks' windows
 * then overlap less, and kvbench merge measures over the overlap.
 */
async function waitUntilStartAt(startAtS: number, signal: AbortSignal, log: EngineContext['onLog']): Promise<void> {
  const waitMs = startAtS * 1000 - Date.now();
  if (waitMs < 0) {
    log('warn', `--start-at ${startAtS} passed ${(-waitMs / 1000).toFixed(1)} s before this run was ready: it starts now, later than the ranks that were ready in time`);
    return;
  }
  log('info', `waiting ${(waitMs / 1000).toFixed(1)} s for --start-at ${startAtS} (${isoTimeOrNull(startAtS * 1000) ?? 'past any date'})`);
  await sleep(waitMs, undefined, { signal }).catch(() => undefined);
}

interface MeasureArgs {
  o: RunOptions;
  ctx: EngineContext;
  model: ModelSpec;
  seed: number;
  entrySizeBytes: (tokens: number) => number;
  cache: MultiTierCache;
  bytes: BytePool;
  /** The storage tier's files (null in trace-only mode): cancelled when the window closes. */
  store: EntryFileStore | null;
  storageIo: { directIo: boolean; reason: string | null; hugePages: HugePageAdvice | null };
  target: StorageTarget;
  gpu: TierAvailability;
  gpuTier: GpuTier | null;
  cpuTier: CpuTier | null;
  cpuBudgetBytes: number;
  chunkBytes: number;
  fixedBuffers: FixedBuffers;
  profile: WorkloadProfile;
  notApplied: string[];
  traceLog: IoTraceLog | null;
  validationTrace: Awaited<ReturnType<typeof loadValidationTrace>> | null;
  probeLimits: ProbeFileLimits | null;
}

async function measure(a: MeasureArgs): Promise<RunOutcome> {
  const { o, ctx, cache, bytes } = a;
  const log = ctx.onLog;
  const startedAt = new Date().toISOString();
  const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  // The histogram holds whole timer intervals; lag is what exceeds the resolution.
  const lagNs = (v: number): number => Math.max(0, v - LAG_RESOLUTION_MS * 1e6);
  lag.enable();
  const qosTargets = Object.fromEntries(a.profile.qos.map((q) => [q.level, q.targetP95Ms])) as Record<QosLevel, number>;
  let recorder = new RunRecorder(qosTargets);
  const stop = new AbortController();
  const end: { status: TrialStatus; reason: string | null; fatal: unknown; closedBy: WindowCloser } = { status: 'complete', reason: null, fatal: null, closedBy: 'duration' };
  // Set once the measured phase starts: freezes every measurement at the moment the run ends.
  /** `finishedWorkers`: callers whose request just ended (a worker still counted busy until it returns). */
  let closeWindow: ((finishedWorkers: number) => void) | null = null;
  /** `fromFinishedRequest`: called by the worker whose request just completed or failed: not in flight. */
  const endRun = (s: TrialStatus, reason: string | null, closedBy: WindowCloser, fromFinishedRequest = false): void => {
    if (stop.signal.aborted) return;
    end.status = s;
    end.reason = reason;
    end.closedBy = closedBy;
    closeWindow?.(fromFinishedRequest ? 1 : 0);
    stop.abort();
  };
  // Set when the measured window opens: before it (preparation, the --start-at wait, the warm-up)
  // a cancel leaves nothing measured, so the run is aborted, not partial.
  let windowOpened = false;
  // The reason says who asked: the user through the host, a time limit, the engine's own SIGTERM.
  const onCancel = (): void =>
    windowOpened
      ? endRun('partial', `cancelled before the planned end: ${cancelReason(ctx.signal)}`, 'cancel')
      : endRun('aborted', `cancelled before the measured window opened: ${cancelReason(ctx.signal)}`, 'cancel');
  ctx.signal.addEventListener('abort', onCancel, { once: true });
  // Trace-only mode measures in order to write the trace: once it cannot be written, the run stops.
  a.traceLog?.onFailure((reason) => endRun('partial', reason, 'error'));

  const processor = new RequestProcessor({
    cache,
    bytes,
    recorder,
    seed: a.seed,
    entrySizeBytes: a.entrySizeBytes,
    modelBytesPerToken: entryBytes(a.model, 1, 1),
    allocations: new Semaphore(o.maxConcurrentAllocs),
    generationSecondsPerToken: a.profile.generationSecondsPerToken[o.generationMode],
    decodeBatchTokens: a.profile.decodeBatchTokens,
    verify: o.verify,
    stopSignal: stop.signal,
  });

  // The engine's memory and the backlog as they stand, on every progress event once the workload runs.
  let liveFacts = (): Pick<ProgressEvent, 'memory' | 'backlog'> => ({});
  const progress = (phase: ProgressEvent['phase'], extra: Partial<ProgressEvent> = {}): void => {
    ctx.onProgress({
      phase,
      elapsedNs: 0,
      durationNs: o.duration * 1e9,
      requestsCompleted: 0,
      generatedTokens: 0,
      storageReadBytes: 0,
      storageWriteBytes: 0,
      maxRequests: o.maxRequests > 0 ? o.maxRequests : null,
      activeUsers: 0,
      queueDepth: 0,
      generatedTokensPerSec: 0,
      storageReadBytesPerSec: 0,
      storageWriteBytesPerSec: 0,
      cpuReadBytesPerSec: 0,
      cpuWriteBytesPerSec: 0,
      e2eLatencyP95Ns: null,
      storageReadP95Ns: null,
      eventLoopLagP99Ns: null,
      ...liveFacts(),
      ...extra,
    });
  };

  // ---- the request source first: a malformed dataset fails before any preparatory I/O ----
  progress('starting');
  const docs = ragDocuments(a.model, o, a.seed, a.profile);
  const prepopulatedKeys = prepopulatedKeysOf(o);
  const workload: WorkloadSource = await createWorkloadSource({
    options: o,
    seed: a.seed,
    profile: a.profile,
    ragDocuments: docs,
    prepopulatedKeys,
    log,
  });
  if (o.enableAutoscaling && !workload.addUsers) {
    throw new KvbenchError('VALIDATION', `--enable-autoscaling needs simulated users; the ${workload.kind} workload replays a file`);
  }

  // ---- preparatory phases (their I/O is excluded from the measured statistics, and reported apart) ----
  const preparation = await runPreparation({
    o,
    processor,
    docs,
    prepopulatedKeys,
    cacheDir: a.target.baseDir,
    storageCapacityBytes: a.target.capacityBytes,
    signal: ctx.signal,
    log,
    onPreconditioning: () => progress('preconditioning'),
  });
  if (o.startAt !== null) await waitUntilStartAt(o.startAt, ctx.signal, log);
  if (ctx.signal.aborted) endRun('aborted', `cancelled before the measured window opened: ${cancelReason(ctx.signal)}`, 'cancel');
  recorder = new RunRecorder(qosTargets, ctx.rawLatencySampleRequests);
  processor.setRecorder(recorder);

  // ---- the workload (and, after the warm-up, the measured window) ----
  const queue = new RequestQueue();
  // An open loop's backlog: said when it outgrows the workers (the run then measures queueing), capped.
  const generation = { mode: o.generationMode, nsPerToken: a.profile.generationSecondsPerToken[o.generationMode] * 1e9 };
  const backlog = new BacklogWatch(workload.paced, log, ctx.backlogCapRequests, a.traceLog !== null, generation);
  // The block device behind the cache directory, counted over exactly the measured window, so the
  // results can show what the device moved beside what the storage tier says it moved; below a loop
  // device, the disk holding its backing file (the loop's own counters count page-cache hits too).
  const device = a.traceLog ? null : DeviceStatsSampler.forDirectory(a.target.runDir, {}, a.target.servedBy);
  const t0 = process.hrtime.bigint();
  // The workload's clock (arrivals) runs from its start; the window's from when it opens.
  const sinceStartNs = (): number => Number(process.hrtime.bigint() - t0);
  // Latencies run from each request's scheduled arrival on that clock (an unpaced replay's from its issue).
  processor.arrivalsFrom(workload.paced ? t0 : null);
  const warmUpNs = o.warmUp * 1e9;
  let windowStartNs: number | null = null;
  let windowStartUnixNs = 0;
  const elapsedNs = (): number => (windowStartNs === null ? 0 : sinceStartNs() - windowStartNs);
  const durationNs = o.duration * 1e9;
  const load = (): { activeUsers: number; queueDepth: number } => ({ activeUsers: workload.activeUsers, queueDepth: queue.depth });
  // The storage tier's bytes on the progress clock, as generatedTokens counts tokens: in the measured
  // window its counters (zeroed when it opens, frozen when it closes: the results' tier_bytes); in a
  // warm-up, those since the workload started, the preparatory phases' I/O apart.
  const storageBytesNow = (): { storageReadBytes: number; storageWriteBytes: number } => {
    const st = cache.tierStats.get('storage');
    return { storageReadBytes: st?.read.bytes ?? 0, storageWriteBytes: st?.write.bytes ?? 0 };
  };
  const beforeWorkload = storageBytesNow();
  const storageBytesOnClock = (): { storageReadBytes: number; storageWriteBytes: number } => {
    const now = storageBytesNow();
    if (windowStartNs !== null) return now;
    return { storageReadBytes: now.storageReadBytes - beforeWorkload.storageReadBytes, storageWriteBytes: now.storageWriteBytes - beforeWorkload.storageWriteBytes };
  };
  // Memory with every timeline point; the byte workers' heaps are asked for asynchronously, so each
  // point carries the latest answer.
  let workersHeapUsedBytes: number | null = null;
  let lastMemory: MemorySample | null = null;
  const memory = { sample: () => (lastMemory = sampleMemory(workersHeapUsedBytes)), peaks: new MemoryPeaks() };
  let timeline = new TimelineSampler(cache, recorder, load, memory);
  // Opens the measured window: after --warm-up (fio's ramp_time), so requests already in flight at
  // the open balance those cut off at the close; at once without one (the reference's behaviour).
  // Requests completed in the warm-up: the live queueing rule counts them with the window's (BacklogWatch.observe).
  let completedInWarmUp = 0;
  // And their workers' busy time, for the live warning's and the live view's split (the results' is the window's).
  let busyInWarmUp = noWorkersBusy();
  const busySinceStart = (): WorkersBusyNs => addWorkersBusy(busyInWarmUp, recorder.busy);
  const openWindow = (): void => {
    if (windowStartNs !== null) return;
    cache.openWindow();
    a.gpuTier?.resetCopyStats();
    completedInWarmUp = recorder.requestsCompleted;
    busyInWarmUp = addWorkersBusy(noWorkersBusy(), recorder.busy);
    recorder.reset();
    lag.reset();
    device?.start();
    windowStartNs = sinceStartNs();
    windowOpened = true;
    windowStartUnixNs = unixNowNs();
    timeline = new TimelineSampler(cache, recorder, load, memory);
  };
  if (warmUpNs === 0) openWindow();
  else log('info', `warming up for ${o.warmUp} s before the measured window opens`);
  // A replay has ended once its source has nothing left and every request it issued has completed or
  // failed: the window closes then, after the last request, not when the last one arrived.
  // `finishing`: callers whose request just ended (a worker is counted busy until it returns).
  const endIfReplayed = (finishing: number): boolean => {
    if (workload.peekArrivalNs() !== Number.POSITIVE_INFINITY || queue.depth > 0 || pool.busy > finishing) return false;
    // A replay whose stream stopped early (the file changed, a parse error) is not a complete one.
    const early = workload.stoppedEarly ?? null;
    endRun(
      early === null ? 'complete' : 'partial',
      early ?? (workload.kind === 'synthetic' ? null : `the ${workload.kind} workload was replayed to its end`),
      'workload-end',
      finishing > 0,
    );
    return true;
  };
  const pool = new WorkerPool(async (req) => {
    // Handed over before the run ended: the pool counted it busy then, so the results count it in
    // flight at the close.
    if (stop.signal.aborted) return;
    // The conversation's next turn waits in the queue until this request has written its own entry
    // (the processor says when) or has ended without writing it.
    const released = (): void => queue.release(req);
    try {
      await processor.process(req, process.hrtime.bigint(), released);
      if (o.maxRequests > 0 && windowStartNs !== null && recorder.requestsCompleted >= o.maxRequests) endRun('complete', null, 'max-requests', true);
    } catch (err) {
      // Once the window has closed, a request still running is abandoned, whatever stopped it
      // (the stop itself, or I/O cancelled under it).
      if (err instanceof RequestAbandoned || stop.signal.aborted) {
        if (!(err instanceof RequestAbandoned || err instanceof IoCancelledError)) log('debug', `after the measured window: ${(err as Error).message}`);
        return;
      }
      recorder.requestsFailed++;
      if (err instanceof PlacementError) {
        // A replayed request larger than every tier: that request fails, the run goes on (counted).
        if (cache.placementFailures === 1) log('warn', `${err.message}; such requests are counted as failed`);
        return;
      }
      if (!end.fatal) end.fatal = err;
      const code = (err as NodeJS.ErrnoException).code;
      // In the warm-up the window never opened: nothing was measured, so the run is aborted (as a
      // cancel then), not a partial trial of nothing that --include-incomplete would count; and the
      // recorder's counts there are the warm-up's, not the window's.
      const warmingUp = windowStartNs === null;
      endRun(
        warmingUp ? 'aborted' : 'partial',
        code === 'ENOSPC'
          ? `disk full (ENOSPC) on ${a.target.baseDir}${warmingUp ? ` ${NOTHING_MEASURED_IN_WARM_UP}` : `: stopped after ${recorder.requestsCompleted} completed requests`}`
          : `storage error: ${(err as Error).message}${warmingUp ? ` (${NOTHING_MEASURED_IN_WARM_UP})` : ''}`,
        'error',
        true,
      );
    } finally {
      released();
      endIfReplayed(1);
    }
  }, queue);
  pool.resize(Math.min(o.numUsers, MAX_WORKERS));
  // The measured window once closed (closeWindow, below).
  const window: { closed: ClosedWindow | null } = { closed: null };
  liveFacts = () => {
    const b = backlog.facts();
    const live = backlog.live();
    // Until the window closes, the rule at the latest tick; from then on (the 'finishing' event), the close's verdict the results store.
    const atClose = window.closed !== null;
    return {
      memory: lastMemory,
      backlog: {
        queueingBound: atClose ? b.queueingBound : live.queueingNow,
        atClose,
        queueingFirstMet: live.firstMet,
        traceOnly: b.traceOnly,
        capReached: b.capReached,
        capRequests: b.capRequests,
        queuedRequests: window.closed?.queued ?? queue.depth,
        workers: b.workersAtClose ?? pool.size,
        issueLatenessMaxNs: b.issueLatenessMaxNs,
        // Since the workload started until the close, then the window's (the results' and the note's).
        workersBusy: atClose ? b.workersBusy : busySinceStart(),
        generation,
      },
    };
  };

  // The measured window, like fio's time_based runtime: it closes at the deadline (or when the run
  // ends otherwise) and everything is frozen then. Operations in flight are cancelled at their next
  // chunk and not counted; the chunks they completed inside the window are (in bytes and bandwidth).
  closeWindow = (finishedWorkers: number): void => {
    if (window.closed !== null) return;
    // A run that ends during its warm-up has an empty window.
    openWindow();
    const endNs = elapsedNs();
    cache.closeWindow();
    // With the cache's: the GPU tier's copy counters count the chunks its tier bytes count.
    a.gpuTier?.stopCopyStats();
    timeline.sample(endNs);
    backlog.close({ queued: queue.depth, workers: pool.size, completed: recorder.requestsCompleted, busy: addWorkersBusy(noWorkersBusy(), recorder.busy) });
    window.closed = {
      endNs,
      requestsInFlight: Math.max(0, pool.busy - finishedWorkers),
      queued: queue.depth,
      deviceIo: device?.stop() ?? null,
      lagNs: { p50: lagNs(lag.percentile(50)), p99: lagNs(lag.percentile(99)), max: lagNs(lag.max) },
    };
    lag.disable();
    a.store?.cancelInFlight();
  };

  const scheduler = (async () => {
    while (!stop.signal.aborted) {
      const now = sinceStartNs();
      if (windowStartNs === null && now >= warmUpNs) openWindow();
      if (windowStartNs !== null && now - windowStartNs >= durationNs) {
        endRun('complete', null, 'duration');
        break;
      }
      // An unpaced replay (--trace-speedup 0) keeps only a bounded backlog, so memory stays flat; an open
      // loop's is capped far higher (arrivals past the cap are issued late, in order).
      const maxQueued = backlog.maxQueued(pool.size);
      // A tick issues for one slice at most: behind an overloaded engine, thousands of arrivals can be
      // due at once, and generating them all in one go would hold the event loop (the rest next tick).
      const tickEndMs = performance.now() + EVENT_LOOP_SLICE_MS;
      while (workload.peekArrivalNs() <= now && queue.depth < maxQueued && performance.now() < tickEndMs) {
        // --max-requests: the window ends when that many have completed in it (the reference's meaning),
        // so no more are issued than could complete it; a request that fails frees its place for
        // another. Only completions in the window count: the warm-up does not use the limit up.
        if (o.maxRequests > 0 && windowStartNs !== null && recorder.requestsCompleted + pool.busy + queue.depth >= o.maxRequests) break;
        const req = workload.nextQueued?.() ?? workload.next();
        req.submitNs = process.hrtime.bigint();
        backlog.issued(req.arrivalNs, now);
        queue.push(req);
      }
      backlog.observe({
        depth: queue.depth,
        workers: pool.size,
        issued: workload.issued,
        completed: completedInWarmUp + recorder.requestsCompleted,
        heldBack: queue.depth >= maxQueued && workload.peekArrivalNs() <= now,
        busy: busySinceStart(),
      });
      if (endIfReplayed(0)) break;
      const nextNs = workload.peekArrivalNs();
      const deadlineNs = windowStartNs === null ? warmUpNs : windowStartNs + durationNs;
      const waitMs = Math.max(1, Math.min(50, (Math.min(nextNs, deadlineNs) - sinceStartNs()) / 1e6));
      await sleep(waitMs, undefined, { signal: stop.signal }).catch(() => undefined);
    }
    queue.close();
  })();

  const autoscaler = o.enableAutoscaling ? newAutoscaler(o) : null;
  let autoscaleTokens = 0;
  let autoscaleAtNs = 0;
  const autoscaleTimer = autoscaler
    ? setInterval(() => {
        const now = elapsedNs();
        const storage = cache.tierStats.get('storage');
        const readP95 = storage && storage.read.windowLatency.count > 0 ? storage.read.windowLatency.percentileNs(95) : null;
        const writeP95 = storage && storage.write.windowLatency.count > 0 ? storage.write.windowLatency.percentileNs(95) : null;
        storage?.read.windowLatency.reset();
        storage?.write.windowLatency.reset();
        const nowHrNs = process.hrtime.bigint();
        const inFlightNs = (d: DirectionStats | undefined): number | null => {
          const startNs = d?.oldestInFlightStartNs() ?? null;
          return startNs === null ? null : Number(nowHrNs - startNs);
        };
        const decision = autoscaler.step({
          elapsedNs: now,
          intervalNs: now - autoscaleAtNs,
          generatedTokens: recorder.tokensGenerated - autoscaleTokens,
          storageReadP95Ns: readP95,
          storageWriteP95Ns: writeP95,
          storageReadInFlightNs: inFlightNs(storage?.read),
          storageWriteInFlightNs: inFlightNs(storage?.write),
        });
        autoscaleTokens = recorder.tokensGenerated;
        autoscaleAtNs = now;
        const change = decision.users - workload.activeUsers;
        if (change > 0) workload.addUsers?.(change, sinceStartNs());
        if (change < 0) workload.removeUsers?.(-change);
        pool.resize(Math.min(decision.users, MAX_WORKERS));
        if (decision.stop) {
          const peak = autoscaler.peak;
          endRun('complete', `autoscaler (capacity): peak found, ${peak.throughputTokensPerSec.toFixed(1)} tokens/s at ${peak.users} users`, 'autoscaler');
        }
      }, o.autoscalerInterval * 1000)
    : null;

  const progressTimer = setInterval(() => {
    const t = timeline.current();
    const warming = windowStartNs === null;
    progress(stop.signal.aborted ? 'draining' : warming ? 'warming-up' : 'running', {
      // Past the window's close the counts are final: its clock stops with them, or the averages
      // shown while the last requests drain would fall below what the trial stores.
      elapsedNs: warming ? sinceStartNs() : (window.closed?.endNs ?? elapsedNs()),
      durationNs: warming ? warmUpNs : durationNs,
      requestsCompleted: recorder.requestsCompleted,
      generatedTokens: recorder.tokensGenerated,
      ...storageBytesOnClock(),
      activeUsers: workload.activeUsers,
      queueDepth: queue.depth,
      generatedTokensPerSec: t.generatedTokensPerSec,
      storageReadBytesPerSec: t.storageReadBytesPerSec,
      storageWriteBytesPerSec: t.storageWriteBytesPerSec,
      cpuReadBytesPerSec: t.cpuReadBytesPerSec,
      cpuWriteBytesPerSec: t.cpuWriteBytesPerSec,
      e2eLatencyP95Ns: recorder.endToEnd.count > 0 ? recorder.endToEnd.percentileNs(95) : null,
      storageReadP95Ns: t.storageReadP95Ns,
      eventLoopLagP99Ns: lagNs(lag.percentile(99)),
    });
  }, PROGRESS_INTERVAL_MS);
  const timelineTimer = setInterval(() => {
    if (window.closed === null) timeline.sample(elapsedNs());
    bytes.workersHeapUsedBytes().then(
      (n) => (workersHeapUsedBytes = n),
      () => undefined,
    );
  }, TIMELINE_INTERVAL_MS);

  await scheduler;
  closeWindow(0);
  const closed = window.closed!;
  if (autoscaleTimer) clearInterval(autoscaleTimer);
  clearInterval(timelineTimer);
  // Requests in flight end at their next chunk; their results are not part of the measurement.
  await pool.drain();
  const drainNs = elapsedNs() - closed.endNs;
  clearInterval(progressTimer);
  ctx.signal.removeEventListener('abort', onCancel);
  const endNs = closed.endNs;

  const { fatal } = end;
  let { status, reason: statusReason } = unlessStalled(end, { plannedNs: durationNs, elapsedNs: endNs, lagMaxNs: closed.lagNs.max }, log);
  if (status === 'complete' && recorder.requestsCompleted === 0) {
    // Nothing was measured: every rate would read 0 and every latency list would be empty, which a
    // report must not average in as a real trial.
    status = 'partial';
    statusReason = emptyWindowReason(endNs, closed, recorder.requestsFailed, end);
  }
  if (status === 'complete' && statusReason === null && autoscaler && o.autoscalerMode === 'capacity' && !autoscaler.stopped) {
    // The duration closed the window before the autoscaler saw a peak: the trial is complete, but
    // its "peak" is only the highest throughput seen, which its reason must say.
    statusReason = `autoscaler (capacity): ${noPeakFoundReason(endNs / 1e9, autoscaler.peak)}`;
  }
  // A disk that fills (or a storage error) ends the run partial with its reason even before the first
  // request completed (aborted in the warm-up): what it wrote, the device's counters and its
  // configuration are still results, and a report leaves such a trial out (docs/metrics.md).
  if (fatal) log('error', statusReason ?? String(fatal));
  progress('finishing', { elapsedNs: endNs, requestsCompleted: recorder.requestsCompleted, generatedTokens: recorder.tokensGenerated, ...storageBytesOnClock() });
  // Closed before the results are built: a trace that could not be written (a full disk) makes the
  // run partial, its reason saying so, with the results still returned.
  const trace = a.traceLog ? await a.traceLog.close(status === 'aborted' ? 'was aborted before it measured anything' : null) : null;
  if (trace?.incomplete && statusReason !== trace.incomplete) {
    if (status === 'complete') status = 'partial';
    statusReason = statusReason === null ? trace.incomplete : `${statusReason}; ${trace.incomplete}`;
  }

  const facts = assembleRunFacts(a, {
    startedAt,
    status,
    statusReason,
    workload,
    recorder,
    timeline,
    closed,
    window: { plannedNs: durationNs, warmUpNs, startedUnixNs: windowStartUnixNs, closedBy: end.closedBy, drainNs },
    processor,
    docs,
    preparation,
    queue,
    backlog: backlog.facts(),
    autoscaling: autoscaler ? autoscalingFacts(autoscaler, o) : null,
    memoryPeak: memory.peaks.peak,
  });
  return runOutcome(facts, { profile: a.profile, trace, validationTrace: a.validationTrace, log });
}

/** The autoscaling block of the results: its events and timeline, and how the scaling ended. */
function autoscalingFacts(autoscaler: Autoscaler, o: RunOptions): NonNullable<RunFacts['autoscaling']> {
  return {
    events: autoscaler.events,
    timeline: autoscaler.timeline,
    summary: {
      initial_users: o.numUsers,
      final_users: autoscaler.users,
      total_scale_events: autoscaler.events.filter((e) => e.action !== 'hold').length,
      ...(o.autoscalerMode === 'capacity'
        ? { peak_user_count: autoscaler.peak.users, peak_throughput_tokens_per_sec: autoscaler.peak.throughputTokensPerSec, peak_found: autoscaler.stopped }
        : qosTargetSummary(autoscaler, o)),
    },
  };
}

/**
 * Whether the qos autoscaler's latency target held at the end: the storage P95 within its threshold
 * (saturation ≤ 1) in the last interval that measured it; target_met null when none did. Not
 * target_saturation (0.8 by default), which is where the autoscaler aims: target_met_means says so
 * beside it, so the JSON cannot be read as "saturation ≤ 0.8".
 */
function qosTargetSummary(autoscaler: Autoscaler, o: RunOptions): Record<string, unknown> {
  const judged = autoscaler.targetJudgement;
  const e = judged?.event;
  return {
    target_saturation: o.targetSaturation,
    read_latency_p95_threshold_ms: readThresholdMs(o),
    write_latency_p95_threshold_ms: AUTOSCALER_WRITE_P95_THRESHOLD_MS,
    target_met: judged ? judged.met : null,
    // Beside target_saturation, target_met reads as "at most that level"; it is the thresholds' test.
    target_met_means: `storage read P95 ≤ ${readThresholdMs(o)} ms and write P95 ≤ ${AUTOSCALER_WRITE_P95_THRESHOLD_MS} ms (saturation ≤ 1) in the last interval that measured them; not saturation ≤ target_saturation, the level the autoscaler steers toward`,
    target_judged_interval: e
      ? {
          elapsed_s: e.elapsed_s,
          saturation_level: e.saturation_level,
          read_latency_p95_ms: e.read_latency_p95_ms,
          write_latency_p95_ms: e.write_latency_p95_ms,
          read_in_flight_oldest_ms: e.read_in_flight_oldest_ms,
          write_in_flight_oldest_ms: e.write_in_flight_oldest_ms,
        }
      : null,
  };
}

const readThresholdMs = (o: RunOptions): number => o.tuning.saturation_detection?.read_latency_p95_threshold_ms ?? AUTOSCALER_READ_P95_THRESHOLD_MS;

function newAutoscaler(o: RunOptions): Autoscaler {
  const t = o.tuning.autoscaler ?? {};
  return new Autoscaler({
    mode: o.autoscalerMode,
    initialUsers: o.numUsers,
    targetSaturation: o.targetSaturation,
    readLatencyThresholdMs: readThresholdMs(o),
    minUsers: t.min_users ?? 1,
    maxUsers: t.max_users ?? MAX_WORKERS,
    scaleUpFactor: t.scale_up_factor ?? 1.2,
    scaleDownFactor: t.scale_down_factor ?? 0.8,
    consecutiveSamplesRequired: t.consecutive_samples_required ?? 2,
  });
}

