/**
 * The guided suite: the nine scenarios of the reference's wrapper script, the MLPerf submission
 * options and capacity discovery as extras, the duration profiles, and the shape of a suite plan.
 *
 * Scenario ids are stable slugs: stored trials and history depend on them. Never rename one; add a
 * new id instead.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';
import { TIER_NAMES, type TierName } from './tiers.ts';
import { LogLevelSchema, ProgressEventSchema, RUN_STATUSES } from '../engine-protocol.ts';

export const NINE_SCENARIO_IDS = [
  'gpu-only',
  'cpu-only',
  'storage-only',
  'gpu-cpu',
  'cpu-storage',
  'gpu-cpu-storage',
  'storage-saturation',
  'production',
  'autoscale',
] as const;

export const EXTRA_SCENARIO_IDS = ['mlperf-storage-stress', 'mlperf-storage-throughput', 'mlperf-large-model', 'capacity-discovery'] as const;

export const SCENARIO_IDS = [...NINE_SCENARIO_IDS, ...EXTRA_SCENARIO_IDS] as const;
export type ScenarioId = (typeof SCENARIO_IDS)[number];
/** Imported results that name no scenario. */
export const IMPORTED_SCENARIO_ID = 'imported';
/** A `kvbench merge` result imported without a scenario: the ranks of one multi-host run, as one trial. */
export const MULTI_HOST_SCENARIO_ID = 'multi-host';


export interface ScenarioDefinition {
  id: ScenarioId;
  /** Test number in the reference's wrapper (1–9); null for the extras. */
  wrapperTest: number | null;
  label: string;
  description: string;
  requiresGpu: boolean;
  /** The tiers this scenario is meant to exercise, in order. */
  tiers: TierName[];
  /** Part of the tier comparison table (throughput and per-tier P95 by tier configuration). */
  inTierComparison: boolean;
  extra: boolean;
}

const def = (d: ScenarioDefinition): ScenarioDefinition => Object.freeze(d);

export const SCENARIOS: Readonly<Record<ScenarioId, ScenarioDefinition>> = Object.freeze({
  'gpu-only': def({
    id: 'gpu-only', wrapperTest: 1, label: 'GPU only', requiresGpu: true, tiers: ['gpu'], inTierComparison: true, extra: false,
    description: 'Baseline for best-case latency: the KV cache in GPU memory, limited by VRAM. What overflows goes to a CPU tier and the drive, as in the reference; a trial that spills there is flagged.',
  }),
  'cpu-only': def({
    id: 'cpu-only', wrapperTest: 2, label: 'CPU only', requiresGpu: false, tiers: ['cpu'], inTierComparison: true, extra: false,
    description: 'The KV cache in system RAM (half the RAM), no GPU tier. The drive takes only what overflows RAM, as in the reference; a trial that spills to it is flagged.',
  }),
  'storage-only': def({
    id: 'storage-only', wrapperTest: 3, label: 'Storage only', requiresGpu: false, tiers: ['storage'], inTierComparison: true, extra: false,
    description: 'Isolates the drive: a tiny CPU tier, everything else on storage. The baseline of the tier comparison.',
  }),
  'gpu-cpu': def({
    id: 'gpu-cpu', wrapperTest: 4, label: 'GPU + CPU', requiresGpu: true, tiers: ['gpu', 'cpu'], inTierComparison: true, extra: false,
    description: 'Two tiers meant to run without storage spill-over: VRAM, then half the RAM. A trial that spills to the drive is flagged.',
  }),
  'cpu-storage': def({
    id: 'cpu-storage', wrapperTest: 5, label: 'CPU + storage', requiresGpu: false, tiers: ['cpu', 'storage'], inTierComparison: true, extra: false,
    description: 'Budget set-up: a small CPU tier (RAM/8) spilling to the drive, with many users.',
  }),
  'gpu-cpu-storage': def({
    id: 'gpu-cpu-storage', wrapperTest: 6, label: 'GPU + CPU + storage', requiresGpu: true, tiers: ['gpu', 'cpu', 'storage'], inTierComparison: true, extra: false,
    description: 'The full three-tier hierarchy with many users.',
  }),
  'storage-saturation': def({
    id: 'storage-saturation', wrapperTest: 7, label: 'Storage saturation', requiresGpu: false, tiers: ['cpu', 'storage'], inTierComparison: false, extra: false,
    description: 'Stress test: a small CPU tier and many users, to find where the drive breaks down.',
  }),
  production: def({
    id: 'production', wrapperTest: 8, label: 'Realistic production', requiresGpu: false, tiers: ['gpu', 'cpu', 'storage'], inTierComparison: false, extra: false,
    description: 'Balanced steady state: the GPU tier if there is one, half the RAM, baseline users.',
  }),
  autoscale: def({
    id: 'autoscale', wrapperTest: 9, label: 'Autoscaling discovery', requiresGpu: false, tiers: ['gpu', 'cpu', 'storage'], inTierComparison: false, extra: false,
    description: 'QoS autoscaler from 20 users (2 in smoke): the most users that keep storage latency under target.',
  }),
  'mlperf-storage-stress': def({
    id: 'mlperf-storage-stress', wrapperTest: null, label: 'MLPerf 1: storage stress (CPU 0)', requiresGpu: false, tiers: ['storage'], inTierComparison: false, extra: true,
    description: 'llama3.1-8b, 200 users, CPU 0 GiB, max 16 concurrent allocations, no generation time. Primary metrics: decode bytes read, wall-clock throughput.',
  }),
  'mlperf-storage-throughput': def({
    id: 'mlperf-storage-throughput', wrapperTest: null, label: 'MLPerf 2: storage throughput (CPU 4 GiB)', requiresGpu: false, tiers: ['cpu', 'storage'], inTierComparison: false, extra: true,
    description: 'llama3.1-8b, 100 users, CPU 4 GiB, max 16 concurrent allocations, no generation time. Primary metric: storage throughput.',
  }),
  'mlperf-large-model': def({
    id: 'mlperf-large-model', wrapperTest: null, label: 'MLPerf 3: large model (70B, CPU 0)', requiresGpu: false, tiers: ['storage'], inTierComparison: false, extra: true,
    description: 'llama3.1-70b-instruct, 70 users, CPU 0 GiB, max 4 concurrent allocations, no generation time.',
  }),
  'capacity-discovery': def({
    id: 'capacity-discovery', wrapperTest: null, label: 'Capacity discovery', requiresGpu: false, tiers: ['cpu', 'storage'], inTierComparison: false, extra: true,
    description: 'Capacity autoscaler: llama3.1-70b-instruct from 10 users, CPU 4 GiB, adds users until throughput stops rising.',
  }),
});

export function isScenarioId(value: unknown): value is ScenarioId {
  return typeof value === 'string' && (SCENARIO_IDS as readonly string[]).includes(value);
}

/**
 * The tiers below the slowest one a scenario names, where its overflow goes (the reference's
 * hierarchy always ends in storage, so CPU only keeps a storage tier): a trial that moves bytes there
 * spilled, and its report flags it. Empty for a scenario that names the storage tier, or an unknown id.
 */
export function tiersPastScenario(id: string): TierName[] {
  if (!isScenarioId(id)) return [];
  const slowest = Math.max(...SCENARIOS[id].tiers.map((t) => TIER_NAMES.indexOf(t)));
  return TIER_NAMES.slice(slowest + 1);
}

/**
 * The tiers past a scenario's (tiersPastScenario) that a trial of it read or wrote bytes on, from its
 * measured window's per-tier bytes (stored metrics `${tier}_read_bytes`, `${tier}_write_bytes`): a
 * trial with any spilled, and is flagged 'spilled'. Missing counts read as 0.
 */
export function spilledTiers(id: string, metrics: Readonly<Record<string, number | null | undefined>>): TierName[] {
  return tiersPastScenario(id).filter((tier) => (metrics[`${tier}_read_bytes`] ?? 0) > 0 || (metrics[`${tier}_write_bytes`] ?? 0) > 0);
}

/**
 * Bytes the tiers a scenario names hold, from its run options (GiB, the GPU tier per GPU), before
 * anything overflows past them; null for a scenario that names the storage tier (it has no such
 * limit), or an unknown id. Options missing count as 0.
 */
export function namedTierBytes(id: string, options: { gpuMemGb?: unknown; numGpus?: unknown; cpuMemGb?: unknown }): number | null {
  if (!isScenarioId(id) || tiersPastScenario(id).length === 0) return null;
  const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
  const gib = 1024 ** 3;
  const bytes: Record<TierName, number> = { gpu: num(options.gpuMemGb, 0) * num(options.numGpus, 1) * gib, cpu: num(options.cpuMemGb, 0) * gib, storage: 0 };
  return SCENARIOS[id].tiers.reduce((sum, t) => sum + bytes[t], 0);
}

/** Label of a scenario id, or the id itself for one this build does not know (imported data). */
export function scenarioLabel(id: string): string {
  return isScenarioId(id) ? SCENARIOS[id].label : id;
}

// ---------------------------------------------------------------------------------------------
// Profiles

export const PROFILE_IDS = ['smoke', 'quick', 'standard', 'mlperf'] as const;
export type ProfileId = (typeof PROFILE_IDS)[number];

export interface ProfileDefinition {
  id: ProfileId;
  label: string;
  description: string;
  /** The sizes the description states, in binary units as the CLI's: the app restates them in its units. */
  descriptionSizes: readonly StatedSize[];
  /** Seconds per trial. */
  durationS: number;
  defaultTrials: number;
  /** Scenarios run when none are named. */
  defaultScenarios: readonly ScenarioId[];
}

export const PROFILES: Readonly<Record<ProfileId, ProfileDefinition>> = Object.freeze({
  smoke: {
    id: 'smoke',
    label: 'Smoke',
    description:
      'Checks that everything works in about two and a half minutes (one with 1 trial per scenario): tiny-1b, a handful of users, 5 s per trial, 2 ms/token generation, 2 GiB storage tier. The numbers mean little.',
    descriptionSizes: [{ bytes: 2 * 1024 ** 3, text: '2 GiB' }],
    // Not 3 s: all users start at once and share the drive and 2 byte threads, so no request of the
    // first round completes before most of the round's bytes are moved (8 users × ~40 MiB of prefill
    // written and fdatasync'd, ~50 MiB read, for cpu-storage). On a loaded 2-core VM that took over
    // 3 s (trial partial: "no request completed in the 3.0 s measured window"); 5 s leaves room.
    durationS: 5,
    defaultTrials: 3,
    defaultScenarios: NINE_SCENARIO_IDS,
  },
  quick: {
    id: 'quick',
    label: 'Quick',
    description: "The parameters of the reference benchmark's suite script (derived from this machine's RAM and GPU) for 30 s per trial, storage tier capped at 16 GiB.",
    descriptionSizes: [{ bytes: 16 * 1024 ** 3, text: '16 GiB' }],
    durationS: 30,
    defaultTrials: 3,
    defaultScenarios: NINE_SCENARIO_IDS,
  },
  standard: {
    id: 'standard',
    label: 'Standard',
    description: "The parameters of the reference benchmark's suite script (derived from this machine's RAM and GPU) for 180 s per trial, as its ~30-minute suite, storage tier capped at 64 GiB.",
    descriptionSizes: [{ bytes: 64 * 1024 ** 3, text: '64 GiB' }],
    durationS: 180,
    defaultTrials: 3,
    defaultScenarios: NINE_SCENARIO_IDS,
  },
  mlperf: {
    id: 'mlperf',
    label: 'MLPerf',
    description: 'The three MLPerf Storage submission options with the reference parameters: 300 s × 3 trials, no generation time, storage capacity as the reference (95 % of free space).',
    descriptionSizes: [],
    durationS: 300,
    defaultTrials: 3,
    defaultScenarios: ['mlperf-storage-stress', 'mlperf-storage-throughput', 'mlperf-large-model'],
  },
});

/**
 * A suite's `--max-requests` (the app's "End each trial after N requests"): each trial ends once N
 * requests have completed in its measured window, or at its duration if that comes first; 0: the
 * duration alone. The rule both surfaces refuse a bad count with, in the CLI's words.
 */
export const MAX_REQUESTS_RULE = '--max-requests must be an integer ≥ 0 (0 = the duration alone)';

export function isProfileId(value: unknown): value is ProfileId {
  return typeof value === 'string' && (PROFILE_IDS as readonly string[]).includes(value);
}

// ---------------------------------------------------------------------------------------------
// The plan: what a suite will run. Stored with the suite (JSON), so a resumed suite runs exactly it.

export const SUITE_PLAN_VERSION = 1;

export const PlannedRunSchema = z.object({
  /** Order in the suite (0-based); a resumed suite keeps it. */
  position: z.number().int().nonnegative(),
  scenarioId: z.string(),
  label: z.string(),
  /** The complete, validated run options given to the engine (RunOptions as JSON). */
  options: z.record(z.string(), z.unknown()),
  trials: z.number().int().positive(),
  /** libuv thread pool of the engine process: ioDepth + 4. */
  uvThreadpoolSize: z.number().int().positive(),
  /** Wall-clock seconds of one trial: duration plus engine start-up and clean-up. */
  estimatedSecondsPerTrial: z.number().nonnegative(),
  /** Upper bound of the bytes this run keeps on the cache directory's filesystem at once. */
  diskBytesEstimate: z.number().nonnegative(),
  /** Bytes that must be free for the run to start at all. */
  diskBytesRequired: z.number().nonnegative(),
  /** How each parameter was derived from the hardware, for people. */
  derivation: z.array(z.string()),
  /**
   * A scenario meant to stay off the drive whose users' first requests alone are expected to overflow
   * the tiers it names (the planner's expectedSpill): its trials will spill and be flagged. Absent: not
   * expected (or a plan of an older version).
   */
  expectedSpill: z.object({ firstRoundBytes: z.number().nonnegative(), namedTierBytes: z.number().nonnegative() }).optional(),
});
export type PlannedRun = z.infer<typeof PlannedRunSchema>;

export const SkippedScenarioSchema = z.object({
  scenarioId: z.string(),
  label: z.string(),
  reason: z.string(),
});
export type SkippedScenario = z.infer<typeof SkippedScenarioSchema>;

/** A size a backend message states, and how it states it there (in binary units, for the CLI), so the app can state it in the units chosen in Settings. */
export const StatedSizeSchema = z.object({ bytes: z.number().nonnegative(), text: z.string() });
export type StatedSize = z.infer<typeof StatedSizeSchema>;

export const SuiteEstimateSchema = z.object({
  trialCount: z.number().int().nonnegative(),
  totalSeconds: z.number().nonnegative(),
  /** Largest disk footprint of any one run (runs are sequential and clean up after themselves). */
  peakDiskBytes: z.number().nonnegative(),
  requiredDiskBytes: z.number().nonnegative(),
  freeBytes: z.number().nonnegative().nullable(),
  fits: z.boolean(),
  /** Written once for the CLI and the app: a size in one is in binary units. */
  problems: z.array(z.string()),
  /** For each problem, in the same order, the sizes its text states, in any order (fmtStatedSizes); absent in plans of older versions. */
  problemSizes: z.array(z.array(StatedSizeSchema)).optional(),
});
export type SuiteEstimate = z.infer<typeof SuiteEstimateSchema>;

export const SuitePlanSchema = z.object({
  version: z.literal(SUITE_PLAN_VERSION),
  profile: z.enum(PROFILE_IDS),
  trials: z.number().int().positive(),
  model: z.string(),
  cacheDir: z.string(),
  systemId: z.string(),
  driveId: z.string(),
  createdAt: z.string(),
  runs: z.array(PlannedRunSchema),
  skipped: z.array(SkippedScenarioSchema),
  estimate: SuiteEstimateSchema,
  notes: z.array(z.string()),
  /** For each note, in the same order, the sizes its text states (as problemSizes); absent in plans of older versions. */
  noteSizes: z.array(z.array(StatedSizeSchema)).optional(),
  /**
   * Whether the drive and memory were probed before the trials (`kvbench suite --no-probe`, the app's
   * choice): a resumed suite probes again only if so. Absent in plans stored before it was recorded.
   */
  probe: z.boolean().optional(),
});
export type SuitePlan = z.infer<typeof SuitePlanSchema>;

// ---------------------------------------------------------------------------------------------
// Events of a running suite: plain data, so the CLI, the app (IPC) and the served mode (WebSocket)
// can all consume them. Past tense, `area.verb`.

const id = z.number().int().positive();
const count = z.number().int().nonnegative();
const durationMs = z.number().nonnegative();

export const SuiteTrialRefSchema = z.object({
  suiteId: id,
  trialId: id,
  scenarioId: z.string(),
  label: z.string(),
  /** 0-based trial number within its scenario. */
  trialIndex: count,
  trialsPerScenario: count,
  /** 1-based position of this trial among the trials this invocation runs. */
  ordinal: count,
  total: count,
});
export type SuiteTrialRef = z.infer<typeof SuiteTrialRefSchema>;

export const SuiteEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('suite.started'), suiteId: id, resumed: z.boolean(), total: count, estimatedSeconds: z.number().nonnegative() }),
  SuiteTrialRefSchema.extend({
    type: z.literal('suite.trialStarted'),
    enginePid: z.number().int().nullable(),
    /** Wall-clock time (ms since the epoch) the trial started: a view attaching later keeps its clock. */
    startedAtMs: z.number().optional(),
  }),
  SuiteTrialRefSchema.extend({ type: z.literal('suite.trialProgressed'), progress: ProgressEventSchema }),
  SuiteTrialRefSchema.extend({ type: z.literal('suite.trialLogged'), level: LogLevelSchema, message: z.string() }),
  SuiteTrialRefSchema.extend({
    type: z.literal('suite.trialFinished'),
    status: z.enum(RUN_STATUSES),
    reason: z.string().nullable(),
    wallMs: durationMs,
    wallClockThroughputTokPerS: z.number().nullable(),
    storageReadBytesPerS: z.number().nullable(),
  }),
  z.object({
    type: z.literal('suite.finished'),
    suiteId: id,
    status: z.enum(['finished', 'cancelled']),
    /** The whole suite's outcome as listings show it (suiteOutcome): 'failed' when none of its trials, of any run, completed. */
    outcome: z.enum(['finished', 'failed', 'cancelled']),
    /** This run's trials (a resume's own, not the suite's earlier ones). */
    counts: z.record(z.enum(RUN_STATUSES), count),
    wallMs: durationMs,
  }),
]);
export type SuiteEvent = z.infer<typeof SuiteEventSchema>;
