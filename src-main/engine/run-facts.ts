/**
 * What a run returns, once its measured window has closed and drained: the facts it measured
 * (RunFacts, from which the results are built), the results with the trace and validation blocks,
 * and the console summary. No timing happens here: everything was frozen before.
 */
import { entryBytes, type ModelSpec } from '../../src-shared/domain/models.ts';
import type { TrialStatus } from '../../src-shared/domain/results.ts';
import { isTraceOnlyRun, type RunOptions } from '../../src-shared/domain/run-options.ts';
import type { RunOutcome } from '../../src-shared/engine-protocol.ts';
import type { MultiTierCache } from './cache/multi-tier-cache.ts';
import type { BytePool } from './io/byte-workers.ts';
import type { HugePageAdvice } from './io/huge-pages.ts';
import type { DeviceStatsReport } from './metrics/device-stats.ts';
import type { FixedBuffers, MemorySample } from './metrics/memory-usage.ts';
import type { RunRecorder } from './metrics/run-recorder.ts';
import type { TimelineSampler } from './metrics/timeline.ts';
import { formatConsoleSummary, type BlockSizeSummaryBytes } from './report/console-summary.ts';
import type { ProbeFileLimits } from './report/probe-limits.ts';
import { buildResults, type PreparationFacts, type RunFacts } from './report/results-builder.ts';
import type { CpuTier } from './tiers/cpu-tier.ts';
import type { GpuTier } from './tiers/gpu/gpu-tier.ts';
import type { StorageTarget } from './tiers/storage-target.ts';
import type { TierAvailability } from './tiers/tier-backend.ts';
import type { RequestProcessor } from './workload/request-processor.ts';
import type { RequestQueue } from './workload/request-queue.ts';
import type { BacklogFacts } from './workload/backlog-watch.ts';
import type { RagDocument } from './workload/synthetic-workload.ts';
import type { IoTraceLog, IoTraceLogSummary } from './workload/trace/io-trace-log.ts';
import { compareWithTrace, type loadValidationTrace } from './workload/trace/validation-trace.ts';
import type { WorkloadProfile } from './workload/workload-profile.ts';
import type { WorkloadSource } from './workload/workload-source.ts';

/** Everything frozen when the measured window closed. */
export interface ClosedWindow {
  endNs: number;
  requestsInFlight: number;
  queued: number;
  deviceIo: DeviceStatsReport | null;
  lagNs: { p50: number; p99: number; max: number };
}

/** What the run was set up with: the parts of it the results state. */
export interface RunSetup {
  o: RunOptions;
  model: ModelSpec;
  seed: number;
  cache: MultiTierCache;
  bytes: Pick<BytePool, 'utilisation'>;
  storageIo: { directIo: boolean; reason: string | null; hugePages: HugePageAdvice | null };
  target: Pick<StorageTarget, 'capacityBytes' | 'freeBytesAtStart' | 'baseDir' | 'ramFilesystem' | 'ramBackingChain' | 'bufferedLoops'>;
  gpu: TierAvailability;
  gpuTier: Pick<GpuTier, 'report'> | null;
  cpuTier: Pick<CpuTier, 'peakHeldBytes' | 'arenaBytes' | 'overflowSegments'> | null;
  /** Buffers reserved when the run started (engine_health.memory.fixed_buffers). */
  fixedBuffers: FixedBuffers;
  cpuBudgetBytes: number;
  chunkBytes: number;
  notApplied: string[];
  traceLog: IoTraceLog | null;
  probeLimits: ProbeFileLimits | null;
}

/** What the run ended with. */
export interface RunEnd {
  startedAt: string;
  status: TrialStatus;
  statusReason: string | null;
  workload: WorkloadSource;
  recorder: RunRecorder;
  timeline: TimelineSampler;
  closed: ClosedWindow;
  window: Omit<RunFacts['window'], 'requestsInFlight' | 'requestsQueued'>;
  processor: Pick<RequestProcessor, 'verifyErrorCount' | 'verifyFailures' | 'verifiedChunks'>;
  docs: RagDocument[] | null;
  preparation: PreparationFacts;
  queue: Pick<RequestQueue, 'maxDepth'>;
  backlog: BacklogFacts;
  autoscaling: RunFacts['autoscaling'];
  /** Each kind's peak over the timeline's samples; null when none was taken. */
  memoryPeak: MemorySample | null;
}

/** The RAG block of the results: the documents, their chunks, and what ingesting them wrote. */
export function ragFacts(enabled: boolean, docs: readonly RagDocument[] | null, preparation: PreparationFacts): RunFacts['rag'] {
  return enabled && docs ? { documents: docs.length, chunks: docs.reduce((n, d) => n + d.chunks.length, 0), ingestedBytes: preparation.ragIngestion?.bytes ?? 0 } : null;
}

export function assembleRunFacts(a: RunSetup, e: RunEnd): RunFacts {
  const { o } = a;
  return {
    options: o,
    model: a.model,
    seed: a.seed,
    startedAt: e.startedAt,
    elapsedNs: e.closed.endNs,
    status: e.status,
    statusReason: e.statusReason,
    digest: e.workload.digest(),
    requestsIssued: e.workload.issued,
    cache: a.cache,
    recorder: e.recorder,
    timeline: e.timeline.points(),
    gpu: a.gpu,
    gpuReport: a.gpuTier?.report() ?? null,
    cpuBudgetBytes: a.cpuBudgetBytes,
    cpuPeakHeldBytes: a.cpuTier?.peakHeldBytes ?? null,
    cpuArena: a.cpuTier ? { arenaBytes: a.cpuTier.arenaBytes, overflowChunks: a.cpuTier.overflowSegments } : null,
    memory: { peak: e.memoryPeak, fixedBuffers: a.fixedBuffers },
    storage: {
      capacityBytes: a.target.capacityBytes,
      freeBytesAtStart: a.target.freeBytesAtStart,
      dir: a.target.baseDir,
      directIo: a.storageIo.directIo,
      directIoReason: a.storageIo.reason,
      fsyncPolicy: o.fsyncPolicy,
      // Trace-only mode keeps no files there, in RAM or anywhere.
      ramFilesystem: a.traceLog === null ? a.target.ramFilesystem : null,
      ramBackingChain: a.traceLog === null ? a.target.ramBackingChain : null,
      bufferedLoops: a.traceLog === null ? a.target.bufferedLoops : [],
    },
    deviceIo: e.closed.deviceIo,
    probeLimits: a.probeLimits,
    eventLoopLagNs: e.closed.lagNs,
    window: { ...e.window, requestsInFlight: e.closed.requestsInFlight, requestsQueued: e.closed.queued },
    byteWorkers: a.bytes.utilisation(),
    ioBufferHugePages: a.storageIo.hugePages,
    ioDepth: o.ioDepth,
    chunkBytes: a.chunkBytes,
    verify: { enabled: o.verify, errors: e.processor.verifyErrorCount, failures: e.processor.verifyFailures, checked: e.processor.verifiedChunks },
    rag: ragFacts(o.enableRag, e.docs, e.preparation),
    preparation: e.preparation,
    queueMaxDepth: e.queue.maxDepth,
    backlog: e.backlog,
    configKeysNotApplied: a.notApplied,
    autoscaling: e.autoscaling,
    workloadSource: { kind: e.workload.kind, ...e.workload.describe() },
  };
}

/** The sizes of the entries live at the end of the run, for the console summary; undefined when none is. */
export function blockSizeStats(sizes: readonly number[]): BlockSizeSummaryBytes | undefined {
  if (sizes.length === 0) return undefined;
  const sorted = [...sizes].sort((x, y) => x - y);
  return {
    entries: sorted.length,
    minBytes: sorted[0],
    meanBytes: sorted.reduce((n, x) => n + x, 0) / sorted.length,
    p95Bytes: sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)],
    maxBytes: sorted[sorted.length - 1],
  };
}

export interface OutcomeExtras {
  profile: WorkloadProfile;
  /** The closed I/O trace of trace-only mode. */
  trace: IoTraceLogSummary | null;
  validationTrace: Awaited<ReturnType<typeof loadValidationTrace>> | null;
  log: (level: 'info' | 'error', message: string) => void;
}

/** The results built from the facts, with the trace and validation blocks, and the console summary. */
export function runOutcome(facts: RunFacts, x: OutcomeExtras): RunOutcome {
  const o = facts.options;
  const { trace } = x;
  const results = buildResults(facts);
  if (trace) {
    if (trace.incomplete) x.log('error', trace.incomplete);
    else x.log('info', `IOTracer: closed — ${trace.rows.toLocaleString('en-US')} operations logged to ${trace.path}`);
    results.kvbench.io_trace = { path: trace.path, rows: trace.rows, compressed: trace.compressed, complete: trace.incomplete === null };
  }
  if (x.validationTrace) {
    results.validation = { ...compareWithTrace(results.summary?.cache_stats.cache_hit_rate as number ?? 0, x.validationTrace.stats, x.validationTrace.source) };
  }
  const summaryText = formatConsoleSummary(results, {
    generationMode: o.generationMode,
    msPerToken: x.profile.generationSecondsPerToken[o.generationMode] * 1000,
    performanceProfile: o.performanceProfile,
    autoscalerMode: o.enableAutoscaling ? o.autoscalerMode : undefined,
    bytesPerToken: entryBytes(facts.model, 1, o.tensorParallel),
    blockSizes: blockSizeStats(facts.cache.entrySizes()),
    traceOnly: isTraceOnlyRun(o),
  });
  return { status: facts.status, reason: facts.statusReason, results: results as unknown as Record<string, unknown>, summaryText };
}
