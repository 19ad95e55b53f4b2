// The kinds of flag a report puts on a trial whose numbers need a second look. Which trial carries
// which is decided in one place, src-main/export/scenario-report.ts (trialFlags); every reader (the
// scenario report, the tier comparison, the comparison of two systems or drives, the exports, the
// app) takes the kinds from there, and "exclude flagged trials" leaves out exactly those trials.

export const TRIAL_FLAG_KINDS = [
  /** Trace-only mode (--io-trace-log): no storage I/O happened, its storage numbers are logical, not measured. */
  'trace-only',
  /** The cache directory was RAM-backed: the storage numbers describe memory, not a drive. */
  'ram-backed',
  /** The page cache served storage reads (or may have: buffered I/O the device's counters cannot clear). */
  'page-cache',
  /** The engine's window closed far past its plan. */
  'stalled',
  /** A capacity autoscaler's window closed before throughput stopped rising. */
  'no-peak',
  /** A qos autoscaler's final users missed its latency target, or rest on no latency sample. */
  'qos-target',
  /** Bytes went past the tiers its scenario names (CPU only spilling to the drive): its numbers include a slower tier's. */
  'spilled',
  /**
   * The queue was still growing at the window's close (src-shared/domain/queueing-bound.ts): its
   * end-to-end latency and queue wait measure the queue, not the storage.
   */
  'queueing-bound',
  /**
   * The GPU tier was not what its configuration asked for: absent (it failed to open; the run went on
   * in the tiers below), smaller than asked (a reservation shortfall), or its staging not pinned.
   */
  'gpu-tier',
] as const;
export type TrialFlagKind = (typeof TRIAL_FLAG_KINDS)[number];

/** Trials by the kind of flag they carry: a trial may count under several kinds. */
export interface FlagKindCounts {
  traceOnly: number;
  ramBacked: number;
  pageCache: number;
  stalled: number;
  /** Spilled past the tiers its scenario names. */
  spilled: number;
  /** Queueing-bound: their end-to-end latency and queue wait measure the queue. */
  queueingBound: number;
  /** Their GPU tier was absent, smaller than asked or its staging not pinned. */
  gpuTier: number;
  /** Flagged for none of those seven: an autoscaler short of its peak or target (no-peak, qos-target). */
  other: number;
}

/** Counts trials, each given as its flag kinds, by kind. */
export function countFlagKinds(trials: readonly (readonly TrialFlagKind[])[]): FlagKindCounts {
  const has = (kinds: readonly TrialFlagKind[], k: TrialFlagKind): boolean => kinds.includes(k);
  const named = (kinds: readonly TrialFlagKind[]): boolean =>
    has(kinds, 'trace-only') ||
    has(kinds, 'ram-backed') ||
    has(kinds, 'page-cache') ||
    has(kinds, 'stalled') ||
    has(kinds, 'spilled') ||
    has(kinds, 'queueing-bound') ||
    has(kinds, 'gpu-tier');
  return {
    traceOnly: trials.filter((k) => has(k, 'trace-only')).length,
    ramBacked: trials.filter((k) => has(k, 'ram-backed')).length,
    pageCache: trials.filter((k) => has(k, 'page-cache')).length,
    stalled: trials.filter((k) => has(k, 'stalled')).length,
    spilled: trials.filter((k) => has(k, 'spilled')).length,
    queueingBound: trials.filter((k) => has(k, 'queueing-bound')).length,
    gpuTier: trials.filter((k) => has(k, 'gpu-tier')).length,
    other: trials.filter((k) => k.length > 0 && !named(k)).length,
  };
}

/** "2 on a RAM-backed cache directory, 1 with page-cache reads": the kinds a count holds, for a note; '' where none. */
export function flagKindsText(c: FlagKindCounts): string {
  return [
    c.traceOnly > 0 ? `${c.traceOnly} in trace-only mode (no storage I/O)` : null,
    c.ramBacked > 0 ? `${c.ramBacked} on a RAM-backed cache directory` : null,
    c.pageCache > 0 ? `${c.pageCache} with storage reads the page cache served` : null,
    c.stalled > 0 ? `${c.stalled} where the engine stalled` : null,
    c.spilled > 0 ? `${c.spilled} spilled past the tiers their scenario names` : null,
    c.queueingBound > 0 ? `${c.queueingBound} queueing-bound (end-to-end latency and queue wait measure the queue)` : null,
    c.gpuTier > 0 ? `${c.gpuTier} whose GPU tier was absent, smaller than asked or not pinned` : null,
    c.other > 0 ? `${c.other} with an autoscaler short of its peak or target` : null,
  ]
    .filter((s): s is string => s !== null)
    .join(', ');
}
