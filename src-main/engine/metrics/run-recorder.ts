import { noWorkersBusy, type WorkersBusyNs } from '../../../src-shared/domain/worker-busy.ts';
import type { TierName } from '../../../src-shared/domain/tiers.ts';
import { LatencyHistogram } from './latency-histogram.ts';
import { RawLatencySample } from './raw-latency-sample.ts';
import type { QosLevel } from '../workload/personas.ts';

export interface CompletedRequest {
  qos: QosLevel;
  generationTokens: number;
  /** Its issue − its scheduled arrival (the scheduler's lateness, inside queueWaitNs); null or absent for an unpaced workload. */
  issueLatenessNs?: number | null;
  /** Dequeue − scheduled arrival. */
  queueWaitNs: number;
  storageNs: number;
  /** storageNs by the tier that served each operation (a write: the tier it was placed in). */
  storageNsByTier: Record<TierName, number>;
  /** The simulated generation's planned time (tokens × time per token), which the reference records. */
  generationNs: number;
  /** The generation sleep as slept (a timer fires at or after its time). */
  generationSleptNs: number;
  /** Complete − dequeue: how long a worker held the request. */
  serviceNs: number;
  /** Complete − scheduled arrival. */
  endToEndNs: number;
  /** Null when the request wrote no prefill entry. */
  prefillNs: number | null;
  /** Null when the request ran no decode step. */
  decodeNs: number | null;
}

export interface QosRecorder {
  latency: LatencyHistogram;
  violations: number;
  targetP95Ms: number;
}

/**
 * Per-request results of the measured phase. Percentiles come from the histograms; the raw lists
 * exist only because the reference's JSON carries them (in seconds), and tools read them: they keep
 * every request up to RAW_LATENCY_SAMPLE_REQUESTS, then a uniform sample ({@link RawLatencySample}).
 */
export class RunRecorder {
  requestsCompleted = 0;
  tokensGenerated = 0;
  requestsFailed = 0;
  storageNsTotal = 0;
  generationNsTotal = 0;
  /**
   * The workers' busy time by phase (src-shared/domain/worker-busy.ts), summed over the completed
   * requests as the histograms count them: a request completed in the window counts whole, the part
   * it spent before the window opened included, as its latencies do. A request abandoned at the
   * close is not in it: its last operation ends after the window (checked on its return) and its
   * generation sleep is cut short there, so its time would be neither the window's nor a whole
   * request's; the split then says the same requests the per-request cache I/O and generation
   * numbers describe (busy.cacheIoNs is storageNsTotal).
   */
  busy: WorkersBusyNs = noWorkersBusy();

  readonly rawLatencies: RawLatencySample;

  readonly endToEnd = new LatencyHistogram();
  readonly queueWait = new LatencyHistogram();
  /** How late the scheduler issued each completed request behind its scheduled arrival (paced workloads only). */
  readonly issueLateness = new LatencyHistogram();
  readonly storageIo = new LatencyHistogram();
  readonly generation = new LatencyHistogram();
  readonly prefill = new LatencyHistogram();
  readonly decode = new LatencyHistogram();
  readonly qos = new Map<QosLevel, QosRecorder>();

  multiTurnHits = 0;
  multiTurnMisses = 0;
  /**
   * The reference's prefix_cache_stats, per completed request: a system prompt detected (hit) or not
   * (miss), and the detected prompts' KV bytes ("saved" whether or not the entry was cached).
   */
  prefixHits = 0;
  prefixMisses = 0;
  prefixBytesSaved = 0;
  /** Lookups of the shared system-prompt entries: found in a tier, or not (then written), and the bytes the hits spared. */
  systemPromptEntryHits = 0;
  systemPromptEntryMisses = 0;
  systemPromptEntryBytesSaved = 0;
  systemPromptWrites = 0;
  prefillWrites = 0;
  decodeReads = 0;
  prefillBytesWritten = 0;
  decodeBytesRead = 0;
  ragRetrievals = 0;
  ragChunkReads = 0;
  /** Shared prefix blocks (Mooncake hash IDs) found cached, written, and the bytes reused by hits. */
  prefixBlockHits = 0;
  prefixBlockMisses = 0;
  prefixBlockBytesReused = 0;

  constructor(qosTargetsMs: Record<QosLevel, number>, rawLatencySampleRequests?: number) {
    this.rawLatencies = new RawLatencySample(rawLatencySampleRequests);
    for (const level of Object.keys(qosTargetsMs) as QosLevel[]) {
      this.qos.set(level, { latency: new LatencyHistogram(), violations: 0, targetP95Ms: qosTargetsMs[level] });
    }
  }

  /**
   * Back to zero in place (the measured window opens after a warm-up): requests already in flight
   * hold this object and record into the window they complete in.
   */
  reset(): void {
    const fresh = new RunRecorder(Object.fromEntries([...this.qos].map(([level, q]) => [level, q.targetP95Ms])) as Record<QosLevel, number>);
    for (const key of Object.keys(fresh) as (keyof RunRecorder)[]) {
      const value = fresh[key];
      if (typeof value === 'number') (this as Record<string, unknown>)[key] = value;
    }
    this.busy = noWorkersBusy();
    this.rawLatencies.reset();
    for (const h of [this.endToEnd, this.queueWait, this.issueLateness, this.storageIo, this.generation, this.prefill, this.decode]) h.reset();
    for (const q of this.qos.values()) {
      q.latency.reset();
      q.violations = 0;
    }
  }

  complete(r: CompletedRequest): void {
    this.requestsCompleted++;
    this.tokensGenerated += r.generationTokens;
    this.storageNsTotal += r.storageNs;
    this.generationNsTotal += r.generationNs;
    const b = this.busy;
    b.requests++;
    b.totalNs += r.serviceNs;
    b.cacheIoNs += r.storageNs;
    for (const tier of Object.keys(b.cacheIoByTierNs) as TierName[]) b.cacheIoByTierNs[tier] += r.storageNsByTier[tier];
    b.generationNs += r.generationSleptNs;
    this.rawLatencies.add(r.endToEndNs / 1e9, r.storageNs / 1e9, r.generationNs / 1e9, r.prefillNs === null ? null : r.prefillNs / 1e9, r.decodeNs === null ? null : r.decodeNs / 1e9);
    this.endToEnd.record(r.endToEndNs);
    this.queueWait.record(r.queueWaitNs);
    if (r.issueLatenessNs != null) this.issueLateness.record(r.issueLatenessNs);
    this.storageIo.record(r.storageNs);
    this.generation.record(r.generationNs);
    if (r.prefillNs !== null) this.prefill.record(r.prefillNs);
    if (r.decodeNs !== null) this.decode.record(r.decodeNs);
    const q = this.qos.get(r.qos)!;
    q.latency.record(r.endToEndNs);
    if (r.endToEndNs / 1e6 > q.targetP95Ms) q.violations++;
  }
}
