// Hardware → suite plan: the nine scenarios of the reference's wrapper script (and the extras) with
// their parameters derived from this machine as the wrapper derived them, every option validated,
// and an estimate of time and disk use checked against the cache directory before anything runs.
//
// The wrapper's derivation (reference-behaviour.md §7): GPU memory from the first GPU; CPU
// "realistic" = RAM/2 and "small" = RAM/8; baseline users 50; high users = RAM(GiB) × 10 clamped to
// 50..300; generation realistic; seed 42. The smoke profile keeps the structure but shrinks
// everything so the whole suite takes a couple of minutes; MLPerf uses the reference's options.
import path from 'node:path';
import { binaryBytesText, bufferedLoopMessage, cacheDirRamBacking, computeGpus, ramBackedMessage, usableGpus, type CacheDirInfo, type HardwareProfile } from '../../src-shared/domain/hardware.ts';
import { shownInput } from '../../src-shared/domain/label-text.ts';
import { entryBytes, resolveModel } from '../../src-shared/domain/models.ts';
import { GIB } from '../../src-shared/domain/results.ts';
import { validateRunOptions, type RunOptions, type RunOptionsInput } from '../../src-shared/domain/run-options.ts';
import {
  NINE_SCENARIO_IDS,
  EXTRA_SCENARIO_IDS,
  MAX_REQUESTS_RULE,
  PROFILES,
  PROFILE_IDS,
  SCENARIOS,
  SUITE_PLAN_VERSION,
  isScenarioId,
  namedTierBytes,
  tiersPastScenario,
  type PlannedRun,
  type ProfileId,
  type ScenarioId,
  type SkippedScenario,
  type StatedSize,
  type SuiteEstimate,
  type SuitePlan,
} from '../../src-shared/domain/scenarios.ts';
import { KvbenchError } from '../../src-shared/domain/errors.ts';
import { GENERATION_SECONDS_PER_TOKEN, MAX_WORKERS, PERSONAS, type GenerationMode } from '../engine/workload/personas.ts';
import { AUTO_CAPACITY_SHARE } from '../engine/tiers/storage-target.ts';
import { defaultProbeBytes } from '../engine/probe/raw-limit-probe.ts';
import { systemDirectoryError } from '../engine/config/system-directories.ts';
import { DEFAULT_GPU_HEADROOM } from '../engine/tiers/gpu/gpu-tier.ts';
import { CPU_TIER_MEMORY_RESERVE_BYTES } from '../engine/config/cpu-tier-memory.ts';
import { TIER_FILL_TARGET } from '../engine/cache/multi-tier-cache.ts';
import { TIER_WORDS, tiersText } from '../../src-shared/domain/tiers.ts';

/** Whether the engine has a GPU tier (through the NVIDIA driver library; see src-main/engine/tiers/gpu/). */
export const ENGINE_HAS_GPU_TIER = true;
/** libuv threads beyond the storage I/Os in flight (opens, closes, unlinks, fsyncs), as `kvbench run`. */
export const UV_THREADS_FOR_METADATA = 4;
/** Engine start-up (Node, modules, byte workers, payload pool) plus drain and clean-up: 1–2 s measured on 2 cores; rounded up. */
export const ENGINE_OVERHEAD_S = 2.5;
/**
 * The drive probe beyond its two timed phases: its process start, laying out its files, the closing
 * fdatasync, and the memory-copy probe: 4–6 s measured on 2 cores.
 */
export const PROBE_OVERHEAD_S = 4;
/** Extra drain time with 30 ms/token generation (requests in flight finish their sleep). */
const REALISTIC_DRAIN_S = 3;
/** Seed of every trial (the wrapper's): each trial offers the same request stream, so the spread between trials is the hardware's. */
export const SUITE_SEED = 42;

export interface PlanOptions {
  profile: ProfileId;
  cacheDir: string;
  /** Trials per scenario; default the profile's. */
  trials?: number;
  /** Model for the nine scenarios (the MLPerf options keep theirs); default llama3.1-8b, tiny-1b for smoke. */
  model?: string;
  /** Scenario ids to run; default the profile's. */
  scenarios?: readonly string[];
  /** Add the MLPerf options and capacity discovery to the profile's scenarios. */
  extras?: boolean;
  /** Override the profile's seconds per trial. */
  durationS?: number;
  /**
   * Seconds each trial runs before its measured window opens (`--warm-up`; default 0, the
   * reference's behaviour). Not applied to the autoscaling scenarios: their ramp is what they measure.
   */
  warmUpS?: number;
  /**
   * End each trial once this many requests have completed in its measured window, or at its duration
   * if that comes first (`--max-requests`; default 0: the duration alone, as the reference).
   */
  maxRequests?: number;
  /** Override the storage tier's capacity (GiB; 0 = 95 % of the free space, as the reference). */
  storageCapacityGb?: number;
  /** Plan GPU scenarios (default: only when a GPU is detected and the engine has a GPU tier). */
  engineHasGpuTier?: boolean;
  /** Bytes the bandwidth probe writes before the trials (0 when not probing). */
  probeBytes?: number;
  /**
   * The drive probe a run of this plan would start with, not run yet (`--plan`): its files count
   * toward the disk the suite needs (unless probeBytes says otherwise) and its seconds toward the time.
   */
  probeRun?: { durationS: number; sizeBytes: number | null };
  /** Whether the drive and memory are probed before the trials: recorded in the plan, for a resume. */
  probe?: boolean;
  now?: Date;
}

interface Derived {
  ramGiB: number;
  vramGiB: number;
  cpuRealisticGiB: number;
  cpuSmallGiB: number;
  cpuTinyGiB: number;
  cpuFixedGiB: number;
  baselineUsers: number;
  highUsers: number;
  autoscaleStartUsers: number;
  model: string;
  generationMode: 'none' | 'fast' | 'realistic';
  durationS: number;
  warmUpS: number;
  maxRequests: number;
  storageCapacityGb: number;
  autoscalerInterval: number | undefined;
  notes: string[];
  /** The rule behind each derived size, as the plan prints it: smoke's caps are not the wrapper's rules. */
  why: Record<'gpu' | 'cpuRealistic' | 'cpuSmall' | 'cpuTiny' | 'cpuFixed' | 'baselineUsers' | 'highUsers', string>;
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));
const round2 = (v: number): number => Math.round(v * 100) / 100;

/** Seconds per trial of the reference's MLPerf options (the mlperf profile's). */
const REFERENCE_MLPERF_DURATION_S = PROFILES.mlperf.durationS;

/**
 * The MLPerf options are the reference's only at its 300 s, without a warm-up, with 95 % of the free
 * space; added to another profile (--extras) they run that profile's duration and storage cap.
 */
function runsReferenceMlperf(d: Pick<Derived, 'durationS' | 'warmUpS' | 'maxRequests' | 'storageCapacityGb'>, profile: ProfileId): boolean {
  return profile !== 'smoke' && d.durationS === REFERENCE_MLPERF_DURATION_S && d.warmUpS === 0 && d.maxRequests === 0 && d.storageCapacityGb === 0;
}

/**
 * Smoke's cap on the tiers of the scenarios meant to stay in RAM or VRAM (cpu-only, gpu-cpu, gpu-only's
 * GPU tier; production shares the RAM/2 size): a 5 s smoke trial of cpu-only writes about 1.05 GiB of
 * KV cache (4 users, tiny-1b; measured with a 3 GiB tier), which 2 GiB holds under its 80 % fill target.
 * With 1 GiB it spilled over a GiB to the drive, under the name "CPU only".
 */
const SMOKE_IN_MEMORY_TIER_GIB = 2;

/** Profile caps on the storage tier (GiB); MLPerf uses the reference's automatic 95 % of free space. */
const STORAGE_CAP_GIB: Record<ProfileId, number> = { smoke: 1, quick: 16, standard: 64, mlperf: 0 };

function largestEntryBytes(model: string): number {
  const r = resolveModel(model);
  if (!r.ok) throw new KvbenchError('VALIDATION', r.error);
  const maxContext = Math.max(...PERSONAS.map((p) => p.contextTokens[1]));
  return entryBytes(r.model, maxContext);
}

/**
 * The KV-cache bytes one request of the suite's synthetic users writes, on average: each request
 * writes a new entry of its context (synthetic-workload.ts: a user's context is uniform in its
 * persona's range, each request's uniform in [¼, 1] of it, personas picked alike), so 5/8 of the
 * personas' mean context.
 */
export function expectedRequestBytes(model: string): number {
  const r = resolveModel(model);
  if (!r.ok) throw new KvbenchError('VALIDATION', r.error);
  const meanUserContext = PERSONAS.reduce((sum, p) => sum + (p.contextTokens[0] + p.contextTokens[1]) / 2, 0) / PERSONAS.length;
  return entryBytes(r.model, Math.round((meanUserContext * 5) / 8));
}

/**
 * A scenario meant to stay off the drive (CPU only, GPU + CPU, GPU only) whose users' first requests
 * alone are expected to write more than its named tiers fill (TIER_FILL_TARGET of their size) before
 * the cache moves entries down: its trials will spill, and be flagged 'spilled'. The first round is a
 * floor: each user sends one request within its first think time (≤ 1.5 s), and every later request
 * writes another entry; a trial that passes this test can still spill later in a long window.
 */
interface ExpectedSpill {
  scenarioId: ScenarioId;
  users: number;
  model: string;
  firstRoundBytes: number;
  namedBytes: number;
}

function expectedSpill(id: ScenarioId, options: RunOptions): ExpectedSpill | null {
  const namedBytes = namedTierBytes(id, options);
  if (namedBytes === null || options.enableAutoscaling) return null;
  const firstRoundBytes = options.numUsers * expectedRequestBytes(options.model);
  return firstRoundBytes > namedBytes * TIER_FILL_TARGET ? { scenarioId: id, users: options.numUsers, model: options.model, firstRoundBytes, namedBytes } : null;
}

/**
 * The plan's estimate of the seconds of simulated generation one request of the suite's synthetic
 * users takes: 5/8 of the personas' mean generation tokens (a request's tokens are drawn as its context
 * is, uniform in [¼, 1] of its user's), each persona weighted alike, at the mode's seconds per token.
 * Not what a run's completed requests average: those weight each persona by how often its users send
 * (one request each think time), so more of the chatbot's short ones (3.5–4.3 s per completed request
 * at 30 ms a token in the H200 runs, beside this 5.78 s).
 */
export function expectedGenerationSeconds(mode: GenerationMode): number {
  const meanUserTokens = PERSONAS.reduce((sum, p) => sum + (p.generationTokens[0] + p.generationTokens[1]) / 2, 0) / PERSONAS.length;
  return ((meanUserTokens * 5) / 8) * GENERATION_SECONDS_PER_TOKEN[mode];
}

/**
 * A scenario whose users' first requests fit its named tiers, but whose later ones can fill them before
 * the trial ends. With realistic generation the workers bound the rate: each request holds one of the
 * trial's workers (one per user, MAX_WORKERS at most) for at least its simulated generation and writes
 * one new entry, so the users write about workers ÷ expectedGenerationSeconds × expectedRequestBytes a
 * second (arrivals, one per user each think time of ≤ 1.5 s, come faster). An estimate, not a bound:
 * a request's cache I/O slows the rate, and the mix of requests the workers complete (not the personas
 * weighted alike, as both means are) moves it either way; a trial the tiers fill in spills, and is
 * flagged. With fast or no generation the cache I/O is what bounds the rate, which the plan cannot
 * know: no note.
 */
interface LaterSpill extends ExpectedSpill {
  workers: number;
  entryBytes: number;
  generationS: number;
  writeBytesPerSec: number;
  fillS: number;
  warmUpS: number;
  durationS: number;
}

function laterSpill(id: ScenarioId, options: RunOptions): LaterSpill | null {
  const namedBytes = namedTierBytes(id, options);
  if (namedBytes === null || options.enableAutoscaling || options.generationMode !== 'realistic' || expectedSpill(id, options) !== null) return null;
  const entryBytes = expectedRequestBytes(options.model);
  const workers = Math.min(options.numUsers, MAX_WORKERS);
  const generationS = expectedGenerationSeconds(options.generationMode);
  const writeBytesPerSec = (workers / generationS) * entryBytes;
  const firstRoundBytes = options.numUsers * entryBytes;
  const fillS = (namedBytes * TIER_FILL_TARGET - firstRoundBytes) / writeBytesPerSec;
  if (fillS >= options.warmUp + options.duration) return null;
  return { scenarioId: id, users: options.numUsers, workers, model: options.model, entryBytes, generationS, writeBytesPerSec, firstRoundBytes, namedBytes, fillS, warmUpS: options.warmUp, durationS: options.duration };
}

/** The tiers a scenario spills to, in words: 'the drive', 'the CPU tier and then the drive'. */
const spillPastText = (id: ScenarioId): string => tiersPastScenario(id).map((t) => (t === 'storage' ? 'the drive' : `the ${TIER_WORDS[t]} tier`)).join(' and then ');

function laterSpillNote(x: LaterSpill): Problem {
  const named = tiersText(SCENARIOS[x.scenarioId].tiers);
  const past = spillPastText(x.scenarioId);
  const trial = x.warmUpS > 0 ? `${x.warmUpS + x.durationS} s (${x.warmUpS} s warm-up, ${x.durationS} s measured)` : `${x.durationS} s`;
  return sizedProblem(
    (size) =>
      `${x.scenarioId} can spill to ${past} later in its trial: by the plan's estimate its ${x.users} users write about ${size(x.writeBytesPerSec)} of ${x.model} KV cache a second ` +
      `(each request writes a new entry, ${size(x.entryBytes)} for the personas' mean context, and holds one of ${x.workers} workers for at least its simulated generation, ` +
      `${x.generationS.toFixed(2)} s for their mean generation tokens at ${GENERATION_SECONDS_PER_TOKEN.realistic * 1000} ms a token, each persona weighted alike), ` +
      `so after their first requests (${size(x.firstRoundBytes)}) ` +
      `the ${TIER_FILL_TARGET * 100} % of its ${size(x.namedBytes)} ${named} filled before entries move down (${size(x.namedBytes * TIER_FILL_TARGET)}) can be reached ` +
      `about ${Math.round(x.fillS)} s in, within the trial's ${trial}, later as the cache I/O slows the requests, sooner or later with the mix of requests served; ` +
      `a trial that spills is flagged spilled, its numbers partly ${past === 'the drive' ? "the drive's" : "the slower tiers'"}`,
  );
}

function expectedSpillNote(x: ExpectedSpill): Problem {
  const named = tiersText(SCENARIOS[x.scenarioId].tiers);
  const past = spillPastText(x.scenarioId);
  return sizedProblem(
    (size) =>
      `${x.scenarioId} is expected to spill to ${past}: its ${x.users} users' first requests alone write about ${size(x.firstRoundBytes)} of ${x.model} KV cache, ` +
      `more than the ${TIER_FILL_TARGET * 100} % of its ${size(x.namedBytes)} ${named} filled before entries move down (${size(x.namedBytes * TIER_FILL_TARGET)}); ` +
      `its trials will be flagged spilled, their numbers partly ${past === 'the drive' ? "the drive's" : "the slower tiers'"} (the tier sizes follow this machine's memory)`,
  );
}

/** What the driver's own context takes on the card before the tier reserves (about 0.5 GiB on an H100), rounded up. */
export const GPU_CONTEXT_ALLOWANCE_BYTES = GIB;

/**
 * The GPU tier a suite plans on a card of `totalBytes`: whole GiB of the memory the tier can
 * reserve, i.e. the total less the headroom the tier leaves free (max(1 GiB, 2 %)) and the driver's
 * context, so that no trial reports a tier "smaller than asked" (139 GiB H200: 136 GiB, not 140).
 * At least 1 GiB on a card of 1 GiB or more (the tier then reports what it could reserve).
 */
export function plannedGpuTierGiB(totalBytes: number): number {
  const planned = Math.floor(gpuTierRoomBytes(totalBytes) / GIB);
  return totalBytes >= GIB ? Math.max(1, planned) : 0;
}

const gpuHeadroomBytes = (totalBytes: number): number => Math.max(DEFAULT_GPU_HEADROOM.minBytes, DEFAULT_GPU_HEADROOM.fractionOfTotal * totalBytes);
const gpuTierRoomBytes = (totalBytes: number): number => totalBytes - gpuHeadroomBytes(totalBytes) - GPU_CONTEXT_ALLOWANCE_BYTES;

/** How plannedGpuTierGiB came to its size, with the numbers: the plan's derivation of a GPU tier. */
function plannedGpuTierWhy(totalBytes: number): string {
  const gib = (b: number): string => `${(b / GIB).toFixed(2)} GiB`;
  const { minBytes, fractionOfTotal } = DEFAULT_GPU_HEADROOM;
  return (
    `first GPU's memory less what the tier leaves to the driver: ${gib(totalBytes)} − ${gib(gpuHeadroomBytes(totalBytes))} headroom ` +
    `(max(${minBytes / GIB} GiB, ${fractionOfTotal * 100} %)) − ${GPU_CONTEXT_ALLOWANCE_BYTES / GIB} GiB for the driver's context = ${gib(gpuTierRoomBytes(totalBytes))}` +
    `${gpuTierRoomBytes(totalBytes) < GIB ? ', at least 1 GiB all the same (the tier then reserves what it can)' : ', rounded down'}`
  );
}

function derive(hw: HardwareProfile, o: PlanOptions, gpuUsable: boolean): Derived {
  const ramGiB = hw.memory.totalBytes / GIB;
  const gpus = usableGpus(hw);
  const vramGiB = gpuUsable && gpus[0]?.memoryBytes ? plannedGpuTierGiB(gpus[0].memoryBytes) : 0;
  const profile = PROFILES[o.profile];
  const durationS = o.durationS ?? profile.durationS;
  const warmUpS = o.warmUpS ?? 0;
  const maxRequests = o.maxRequests ?? 0;
  const notes: string[] = [];
  if (o.profile === 'smoke') {
    const model = o.model ?? 'tiny-1b';
    const cap = Math.max(STORAGE_CAP_GIB.smoke, Math.ceil((2 * largestEntryBytes(model)) / GIB));
    notes.push(`smoke: the structure of the nine scenarios with tiny sizes (${model}, 2–8 users, CPU tiers ≤ ${SMOKE_IN_MEMORY_TIER_GIB} GiB, 2 ms/token): checks the set-up, not the hardware`);
    // Never more than the engine lets a CPU tier hold on this machine (its RAM less a reserve), nor below the 1 GiB smoke planned before.
    const cpuRoomGiB = Math.max(1, ramGiB - CPU_TIER_MEMORY_RESERVE_BYTES / GIB);
    return {
      ramGiB,
      vramGiB: Math.min(vramGiB, SMOKE_IN_MEMORY_TIER_GIB),
      cpuRealisticGiB: round2(Math.min(ramGiB / 2, SMOKE_IN_MEMORY_TIER_GIB, cpuRoomGiB)),
      cpuSmallGiB: round2(Math.min(ramGiB / 8, 0.25)),
      cpuTinyGiB: 0.125,
      cpuFixedGiB: 0.25,
      baselineUsers: 4,
      highUsers: 8,
      autoscaleStartUsers: 2,
      model,
      generationMode: 'fast',
      durationS,
      warmUpS,
      maxRequests,
      storageCapacityGb: o.storageCapacityGb ?? cap,
      autoscalerInterval: 1,
      notes,
      why: {
        gpu: `smoke: at most ${SMOKE_IN_MEMORY_TIER_GIB} GiB of the first GPU's memory`,
        cpuRealistic: `smoke: min(RAM/2, ${SMOKE_IN_MEMORY_TIER_GIB} GiB), room for a ${PROFILES.smoke.durationS} s trial's KV cache`,
        cpuSmall: 'smoke: min(RAM/8, 0.25 GiB)',
        cpuTiny: 'smoke: a tiny CPU tier',
        cpuFixed: "smoke: the reference suite script's fixed 4 GiB, shrunk",
        baselineUsers: 'smoke: baseline',
        highUsers: 'smoke: high',
      },
    };
  }
  const model = o.model ?? 'llama3.1-8b';
  const capGiB = STORAGE_CAP_GIB[o.profile];
  const minCap = Math.ceil((2 * largestEntryBytes(model)) / GIB);
  return {
    ramGiB,
    vramGiB,
    // The wrapper's integer GiB; the engine keeps the CPU tier's bytes really in RAM.
    cpuRealisticGiB: Math.max(1, Math.floor(ramGiB / 2)),
    cpuSmallGiB: Math.max(1, Math.floor(ramGiB / 8)),
    cpuTinyGiB: 0.5,
    cpuFixedGiB: 4,
    baselineUsers: 50,
    highUsers: clamp(Math.floor(ramGiB) * 10, 50, 300),
    autoscaleStartUsers: 20,
    model,
    generationMode: 'realistic',
    durationS,
    warmUpS,
    maxRequests,
    storageCapacityGb: o.storageCapacityGb ?? (capGiB === 0 ? 0 : Math.max(capGiB, minCap)),
    // Keep the reference's 10 s unless the run is too short for more than a couple of decisions.
    autoscalerInterval: durationS < 60 ? Math.max(1, Math.floor(durationS / 6)) : undefined,
    notes,
    why: {
      gpu: gpus[0]?.memoryBytes ? plannedGpuTierWhy(gpus[0].memoryBytes) : "first GPU's memory less what the tier leaves to the driver",
      cpuRealistic: 'RAM/2',
      cpuSmall: 'RAM/8',
      cpuTiny: "a tiny CPU tier: what the reference suite script meant; it passed 4 GiB",
      cpuFixed: "the reference suite script's fixed value",
      baselineUsers: 'baseline',
      highUsers: 'high: RAM GiB × 10, 50..300',
    },
  };
}

interface ScenarioParams {
  options: RunOptionsInput;
  derivation: string[];
}

/** The options of one scenario, and how each was derived. */
function scenarioParams(id: ScenarioId, d: Derived, profile: ProfileId): ScenarioParams {
  const base: RunOptionsInput = {
    model: d.model,
    duration: d.durationS,
    generationMode: d.generationMode,
    seed: SUITE_SEED,
    storageCapacityGb: d.storageCapacityGb,
    warmUp: d.warmUpS,
    maxRequests: d.maxRequests,
  };
  // The autoscaler's ramp is part of what it measures: the engine refuses a warm-up with it.
  const noWarmUp = d.warmUpS > 0 ? ['no warm-up: the autoscaler ramps up as part of what it measures'] : [];
  const users = (n: number, why: string): string => `${n} users (${why})`;
  const cpu = (gib: number, why: string): string => `CPU tier ${gib} GiB (${why})`;
  const gpu = (gib: number): string => `GPU tier ${gib} GiB (${d.why.gpu})`;
  const smoke = profile === 'smoke';
  const reference = runsReferenceMlperf(d, profile);
  const notReference = smoke
    ? 'shrunk for smoke: not the reference option'
    : `not the reference option: this profile's ${d.durationS} s${d.warmUpS > 0 ? ` after a ${d.warmUpS} s warm-up` : ''}${d.maxRequests > 0 ? ` (or ${d.maxRequests} requests)` : ''} and ${d.storageCapacityGb > 0 ? `${d.storageCapacityGb} GiB storage cap` : '95 % of the free space'}; the reference runs ${REFERENCE_MLPERF_DURATION_S} s with 95 % of the free space (--profile mlperf)`;
  const mlperf = (option: number, model: string, numUsers: number, cpuMemGb: number, allocs: number): ScenarioParams => {
    const options = {
      ...base,
      model: smoke ? d.model : model,
      numUsers: smoke ? Math.max(2, Math.round(numUsers / 25)) : numUsers,
      gpuMemGb: 0,
      cpuMemGb: smoke ? Math.min(cpuMemGb, d.cpuSmallGiB) : cpuMemGb,
      maxConcurrentAllocs: allocs,
      generationMode: 'none' as const,
    };
    return {
      options,
      derivation: [
        `MLPerf option ${option}${reference ? '' : "'s workload"}: ${options.model}, ${options.numUsers} users, CPU ${options.cpuMemGb} GiB, max ${allocs} concurrent allocations`,
        `generation none, GPU 0 (${reference ? 'reference MLPerf option' : notReference})`,
      ],
    };
  };
  switch (id) {
    case 'gpu-only':
      return {
        options: { ...base, numUsers: d.baselineUsers, gpuMemGb: d.vramGiB, cpuMemGb: d.cpuFixedGiB },
        derivation: [gpu(d.vramGiB), cpu(d.cpuFixedGiB, d.why.cpuFixed), users(d.baselineUsers, d.why.baselineUsers)],
      };
    case 'cpu-only':
      return {
        options: { ...base, numUsers: d.baselineUsers, gpuMemGb: 0, cpuMemGb: d.cpuRealisticGiB },
        derivation: [cpu(d.cpuRealisticGiB, d.why.cpuRealistic), users(d.baselineUsers, d.why.baselineUsers)],
      };
    case 'storage-only':
      return {
        options: { ...base, numUsers: d.baselineUsers, gpuMemGb: 0, cpuMemGb: d.cpuTinyGiB },
        derivation: [cpu(d.cpuTinyGiB, d.why.cpuTiny), users(d.baselineUsers, d.why.baselineUsers)],
      };
    case 'gpu-cpu':
      return {
        options: { ...base, numUsers: d.baselineUsers, gpuMemGb: d.vramGiB, cpuMemGb: d.cpuRealisticGiB },
        derivation: [gpu(d.vramGiB), cpu(d.cpuRealisticGiB, d.why.cpuRealistic), users(d.baselineUsers, d.why.baselineUsers)],
      };
    case 'cpu-storage':
      return {
        options: { ...base, numUsers: d.highUsers, gpuMemGb: 0, cpuMemGb: d.cpuSmallGiB },
        derivation: [cpu(d.cpuSmallGiB, d.why.cpuSmall), users(d.highUsers, d.why.highUsers)],
      };
    case 'gpu-cpu-storage':
      return {
        options: { ...base, numUsers: d.highUsers, gpuMemGb: d.vramGiB, cpuMemGb: d.cpuSmallGiB },
        derivation: [gpu(d.vramGiB), cpu(d.cpuSmallGiB, d.why.cpuSmall), users(d.highUsers, d.why.highUsers)],
      };
    case 'storage-saturation':
      return {
        options: { ...base, numUsers: d.highUsers, gpuMemGb: 0, cpuMemGb: d.cpuSmallGiB },
        derivation: [cpu(d.cpuSmallGiB, d.why.cpuSmall), users(d.highUsers, d.why.highUsers)],
      };
    case 'production':
      return {
        options: { ...base, numUsers: d.baselineUsers, gpuMemGb: d.vramGiB, cpuMemGb: d.cpuRealisticGiB },
        derivation: [d.vramGiB > 0 ? gpu(d.vramGiB) : 'GPU tier 0 (no usable GPU)', cpu(d.cpuRealisticGiB, d.why.cpuRealistic), users(d.baselineUsers, d.why.baselineUsers)],
      };
    case 'autoscale':
      return {
        options: {
          ...base,
          warmUp: 0,
          numUsers: d.autoscaleStartUsers,
          gpuMemGb: d.vramGiB,
          cpuMemGb: d.cpuSmallGiB,
          enableAutoscaling: true,
          autoscalerMode: 'qos',
          ...(d.autoscalerInterval !== undefined ? { autoscalerInterval: d.autoscalerInterval } : {}),
        },
        derivation: [
          d.vramGiB > 0 ? gpu(d.vramGiB) : 'GPU tier 0 (no usable GPU)',
          cpu(d.cpuSmallGiB, d.why.cpuSmall),
          users(d.autoscaleStartUsers, 'start; the qos autoscaler adds and removes users'),
          ...(d.autoscalerInterval !== undefined ? [`autoscaler decides every ${d.autoscalerInterval} s (short trials; the reference uses 10 s)`] : []),
          ...noWarmUp,
        ],
      };
    case 'mlperf-storage-stress':
      return mlperf(1, 'llama3.1-8b', 200, 0, 16);
    case 'mlperf-storage-throughput':
      return mlperf(2, 'llama3.1-8b', 100, 4, 16);
    case 'mlperf-large-model':
      return mlperf(3, 'llama3.1-70b-instruct', 70, 0, 4);
    case 'capacity-discovery': {
      const options = {
        ...base,
        warmUp: 0,
        model: smoke ? d.model : 'llama3.1-70b-instruct',
        numUsers: smoke ? 2 : 10,
        gpuMemGb: 0,
        cpuMemGb: smoke ? d.cpuSmallGiB : 4,
        generationMode: 'none' as const,
        enableAutoscaling: true,
        autoscalerMode: 'capacity' as const,
        ...(d.autoscalerInterval !== undefined ? { autoscalerInterval: d.autoscalerInterval } : {}),
      };
      return {
        options,
        derivation: [
          `capacity discovery: ${options.model} from ${options.numUsers} users, CPU ${options.cpuMemGb} GiB, generation none (${smoke ? 'shrunk for smoke' : "the reference's workload"}), at this profile's duration and storage tier`,
          ...noWarmUp,
        ],
      };
    }
  }
}

/**
 * For a scenario meant to stay off the drive (CPU only, GPU + CPU, GPU only): the storage tier is
 * there, as in the reference, only for what overflows the tiers it names, and a trial that spills is
 * flagged (the report's 'spilled'); '' for the others.
 */
function overflowOnly(id: ScenarioId): string {
  const past = tiersPastScenario(id);
  if (past.length === 0) return '';
  const alsoPast = past.slice(0, -1);
  return (
    `, only for what overflows the ${tiersText(SCENARIOS[id].tiers)}` +
    (alsoPast.length > 0 ? ` (as does its ${alsoPast.map((t) => TIER_WORDS[t]).join(' and ')} tier): a trial that spills is flagged` : ': a trial that spills to it is flagged')
  );
}

function gpuSkipReason(hw: HardwareProfile, engineHasGpuTier: boolean): string | null {
  const gpus = computeGpus(hw);
  const usable = usableGpus(hw);
  const describe = (g: (typeof gpus)[number]): string => `${g.vendor ?? ''} ${g.model ?? 'GPU'}${g.memoryBytes ? `, ${Number((g.memoryBytes / GIB).toFixed(1))} GiB` : ''}`.replace(/\s+/g, ' ').trim();
  if (gpus.length === 0 && usable.length === 0) return 'no GPU detected';
  if (!engineHasGpuTier) return `this kvbench engine has no GPU tier (detected ${describe(gpus[0])})`;
  if (usable.length === 0) return `the GPU tier cannot use ${describe(gpus[0])}: ${hw.cuda?.reason ?? 'the NVIDIA driver library was not probed'}`;
  // The tier is planned in whole GiB of the first GPU's memory (the wrapper's rounding); below 1 GiB
  // a "GPU" scenario would run without a GPU tier under a GPU label.
  const memoryBytes = usable[0].memoryBytes ?? 0;
  if (memoryBytes < GIB) {
    return `${describe(usable[0])} ${memoryBytes > 0 ? 'has under 1 GiB of memory' : 'reports no memory size'}: the GPU scenarios size their tier in whole GiB of the first GPU's memory`;
  }
  return null;
}

function estimateRun(options: RunOptions, freeBytes: number | null): { seconds: number; diskEstimate: number; diskRequired: number } {
  const seconds = options.warmUp + options.duration + ENGINE_OVERHEAD_S + (options.generationMode === 'realistic' ? REALISTIC_DRAIN_S : 0);
  const largest = largestEntryBytes(options.model);
  if (options.storageCapacityGb > 0) {
    // The storage tier never holds more than its capacity: it deletes LRU entries at 100 %.
    const cap = options.storageCapacityGb * GIB;
    return { seconds, diskEstimate: cap, diskRequired: cap };
  }
  // The reference's automatic capacity: up to 95 % of the free space at start. That share (the
  // engine's rule) must hold two of the largest entries, as a capped tier must.
  return { seconds, diskEstimate: freeBytes === null ? largest : Math.max(largest, freeBytes * AUTO_CAPACITY_SHARE), diskRequired: (2 * largest) / AUTO_CAPACITY_SHARE };
}

/**
 * A size in the plan's messages, in the binary units the advice and the estimate line beside it use
 * (252 MiB, not "0.25 GiB" under "Only 252 MiB free"), so one plan's output has one unit style.
 */
const gib = (b: number): string => binaryBytesText(b);
/** A size compared with the storage tier capacity field (--storage-capacity-gb, "Storage tier capacity (GiB)"): in the field's own unit, whatever the app's units, rounded up. */
const capacityFieldText = (bytes: number): string => `${(Math.ceil((bytes / GIB) * 100) / 100).toFixed(2)} GiB`;

/** A PROBLEM line and the sizes it states, which the app shows in the units chosen in Settings (fmtStatedSizes). */
export interface Problem {
  text: string;
  sizes: StatedSize[];
}

/** A problem whose text states its sizes through `size` (as gib does), each noted with its bytes. */
export function sizedProblem(write: (size: (bytes: number) => string) => string): Problem {
  const sizes: StatedSize[] = [];
  const text = write((bytes) => {
    const said = gib(bytes);
    sizes.push({ bytes, text: said });
    return said;
  });
  return { text, sizes };
}

/**
 * A storage tier capped below one of its model's largest entries: the engine refuses every such trial
 * (INSUFFICIENT_SPACE) after it started, so the plan is refused instead. Only an explicit
 * --storage-capacity-gb can be that small; the planner's own caps hold two entries.
 */
function capacityTooSmallProblems(runs: readonly PlannedRun[]): Problem[] {
  const byModel = new Map<string, { capacityGb: number; largestBytes: number; scenarios: string[] }>();
  for (const r of runs) {
    const capacityGb = Number(r.options.storageCapacityGb);
    const model = String(r.options.model);
    const largestBytes = largestEntryBytes(model);
    if (capacityGb <= 0 || capacityGb * GIB >= largestBytes) continue;
    const entry = byModel.get(model) ?? { capacityGb, largestBytes, scenarios: [] };
    entry.scenarios.push(r.scenarioId);
    byModel.set(model, entry);
  }
  // The field's value, the entry it must hold and the least to give are all in the field's unit (GiB).
  return [...byModel].map(([model, e]) => ({
    text:
      `--storage-capacity-gb ${e.capacityGb} cannot hold one KV entry of ${model} (the largest is ${capacityFieldText(e.largestBytes)}), so ${e.scenarios.join(', ')} would fail: ` +
      `set it to at least ${Math.ceil((2 * e.largestBytes) / GIB)} GiB, or 0 (95 % of the free space)`,
    sizes: [],
  }));
}

/**
 * RAM kept free beside the tiers when the cache directory is RAM-backed: the engine process itself
 * (Node, byte workers, payload pools), the runner, the operating system and whatever else the machine
 * runs. Without swap, going past it brings the OOM killer in the middle of a suite.
 */
export function ramReserveBytes(totalRamBytes: number): number {
  return Math.max(GIB, 0.1 * totalRamBytes);
}

/**
 * What a storage tier of `storageBytes` can add to RAM in a RAM-backed cache directory: all of it on
 * tmpfs, ramfs or a RAM disk; through a loop device, no more than its file's still unallocated part
 * (an image written in full already sits in RAM, and the plan's available RAM already counts it).
 */
function storageRamBytes(storageBytes: number, cacheDir: CacheDirInfo): number {
  const unallocated = cacheDir.blockDevice?.backingFileUnallocatedBytes;
  return typeof unallocated === 'number' ? Math.min(storageBytes, unallocated) : storageBytes;
}

/** A run whose CPU and storage tiers, both in RAM, do not fit in the RAM available. */
interface RamOverrun {
  scenarioId: string;
  cpuBytes: number;
  storageRamBytes: number;
  minCapGb: number;
}

/**
 * One PROBLEM line for the runs whose tiers cannot all sit in RAM beside the reserve: each with the
 * storage it could have, and one --storage-capacity-gb for all of them when there is one that holds
 * two of every such run's largest entries.
 */
function ramOverrunProblem(overruns: readonly RamOverrun[], ram: string, budgetBytes: number, reserveBytes: number, availableBytes: number): Problem {
  const roomGb = (r: RamOverrun): number => Math.max(0, Math.floor((budgetBytes - r.cpuBytes) / GIB));
  const capGb = Math.min(...overruns.map(roomGb));
  const fix =
    capGb >= Math.max(...overruns.map((r) => r.minCapGb))
      ? `Set --storage-capacity-gb to ${capGb} or less, or choose a --cache-dir on a drive`
      : `No one --storage-capacity-gb fits them all and holds two of each one's largest KV entries: choose a --cache-dir on a drive, or plan them apart with --scenarios`;
  return sizedProblem((size) => {
    const each = overruns.map(
      (r) => `${r.scenarioId} (${r.cpuBytes > 0 ? `CPU tier ${size(r.cpuBytes)} + ` : ''}storage tier ${size(r.storageRamBytes)}: room for ${roomGb(r)} GiB of storage)`,
    );
    return (
      `the cache directory is RAM-backed (${ram}): the storage tier lives in RAM beside the CPU tier, and ${size(budgetBytes)} of RAM is there for both ` +
      `(${size(availableBytes)} available less a ${size(reserveBytes)} reserve). Too much for ${each.join(', ')}. ${fix}`
    );
  });
}

/** The scenario ids a plan runs, as given (before their order and GPU skips are applied). */
export function chosenScenarioIds(o: PlanOptions): string[] {
  const ids: string[] = o.scenarios ? [...o.scenarios] : [...PROFILES[o.profile].defaultScenarios];
  if (o.extras) for (const x of EXTRA_SCENARIO_IDS) if (!ids.includes(x)) ids.push(x);
  return ids;
}

/**
 * Everything wrong with the planning options that can be told without the hardware: the front ends
 * check this before they create the cache directory, detect hardware or open the database, so bad
 * input costs nothing and leaves nothing behind. Reads the file system (symbolic links of the cache
 * directory) and never writes to it.
 */
export function planOptionErrors(o: PlanOptions): string[] {
  const errors: string[] = [];
  if (o.cacheDir.trim() === '') {
    errors.push('--cache-dir must not be empty');
  } else {
    // Where the directory really leads: a symbolic link to /dev/shm is /dev/shm.
    const refused = systemDirectoryError(o.cacheDir, '--cache-dir');
    if (refused) errors.push(refused);
  }
  const trials = o.trials ?? PROFILES[o.profile].defaultTrials;
  if (!Number.isInteger(trials) || trials < 1 || trials > 100) errors.push(`--trials must be an integer from 1 to 100, got ${trials}`);
  if (o.durationS !== undefined && (!Number.isInteger(o.durationS) || o.durationS < 1)) {
    errors.push(`--duration must be a positive integer (seconds), got ${o.durationS}`);
  }
  if (o.warmUpS !== undefined && (!Number.isInteger(o.warmUpS) || o.warmUpS < 0 || o.warmUpS > 3600)) {
    errors.push(`--warm-up must be an integer from 0 to 3600 (seconds), got ${o.warmUpS}`);
  }
  if (o.maxRequests !== undefined && (!Number.isInteger(o.maxRequests) || o.maxRequests < 0)) {
    errors.push(`${MAX_REQUESTS_RULE}, got ${o.maxRequests}`);
  }
  if (o.storageCapacityGb !== undefined && !(Number.isFinite(o.storageCapacityGb) && o.storageCapacityGb >= 0)) {
    errors.push(`--storage-capacity-gb must be a number of GiB ≥ 0 (0 = 95 % of the free space), got ${o.storageCapacityGb}`);
  }
  const unknown = chosenScenarioIds(o).filter((id) => !isScenarioId(id));
  if (unknown.length > 0) errors.push(`unknown scenario(s): ${unknown.map(shownInput).join(', ')}. Known: ${[...NINE_SCENARIO_IDS, ...EXTRA_SCENARIO_IDS].join(', ')}`);
  if (o.model !== undefined) {
    const r = resolveModel(o.model);
    if (!r.ok) errors.push(`--model: ${r.error}`);
  }
  return errors;
}

/** What one profile, at its defaults, needs free in a cache directory (profileSpaceNeeds). */
export interface ProfileSpaceNeed {
  profile: ProfileId;
  /** The free bytes below which planSuite refuses the profile's plan there (its estimate's requiredDiskBytes). */
  requiredBytes: number;
  /** The model of the profile's scenarios, and its largest KV entry: no storage tier capacity below it works. */
  model: string;
  largestEntryBytes: number;
}

/**
 * What each profile, with its own defaults, needs free in the cache directory of `hw`, in profile
 * order: the planner's own requirement (the largest storage tier it would plan, or two of the
 * largest KV entries in 95 % of the free space), so advice about the space says what the Plan step
 * then accepts and refuses. A directory the planner refuses outright leaves the list empty.
 */
export function profileSpaceNeeds(hw: HardwareProfile, engineHasGpuTier: boolean): ProfileSpaceNeed[] {
  if (!hw.cacheDir) return [];
  const needs: ProfileSpaceNeed[] = [];
  for (const profile of PROFILE_IDS) {
    const o: PlanOptions = { profile, cacheDir: hw.cacheDir.path, engineHasGpuTier };
    if (planOptionErrors(o).length > 0) return [];
    const plan = planSuite(hw, o);
    needs.push({ profile, requiredBytes: plan.estimate.requiredDiskBytes, model: plan.model, largestEntryBytes: largestEntryBytes(plan.model) });
  }
  return needs;
}

/** Turns a hardware profile into a suite plan. Throws VALIDATION for options {@link planOptionErrors} refuses. */
export function planSuite(hw: HardwareProfile, o: PlanOptions): SuitePlan {
  const errors = planOptionErrors(o);
  if (errors.length > 0) throw new KvbenchError('VALIDATION', errors.join('\n'));
  const trials = o.trials ?? PROFILES[o.profile].defaultTrials;
  let ids = chosenScenarioIds(o);
  ids = [...NINE_SCENARIO_IDS, ...EXTRA_SCENARIO_IDS].filter((id) => ids.includes(id)); // suite order

  const engineHasGpuTier = o.engineHasGpuTier ?? ENGINE_HAS_GPU_TIER;
  const gpuSkip = gpuSkipReason(hw, engineHasGpuTier);
  const d = derive(hw, o, gpuSkip === null);
  const cacheDir = path.resolve(o.cacheDir);
  const freeBytes = hw.cacheDir?.freeBytes ?? null;
  // A RAM-backed cache directory puts the storage tier in RAM beside the CPU tier: both must fit.
  const ram = hw.cacheDir ? cacheDirRamBacking(hw.cacheDir) : null;
  const reserveBytes = ramReserveBytes(hw.memory.totalBytes);
  const ramBudgetBytes = hw.memory.availableBytes - reserveBytes;
  const ramOverruns: RamOverrun[] = [];
  const ramShrunk: string[] = [];

  const runs: PlannedRun[] = [];
  const skipped: SkippedScenario[] = [];
  const spills: ExpectedSpill[] = [];
  const laterSpills: LaterSpill[] = [];
  for (const id of ids as ScenarioId[]) {
    const sc = SCENARIOS[id];
    if (sc.requiresGpu && gpuSkip !== null) {
      skipped.push({ scenarioId: id, label: sc.label, reason: gpuSkip });
      continue;
    }
    const p = scenarioParams(id, d, o.profile);
    // A capped storage tier must hold at least two of the model's largest entries.
    const runModel = p.options.model ?? d.model;
    const minCapGb = Math.ceil((2 * largestEntryBytes(runModel)) / GIB);
    if (o.storageCapacityGb === undefined && (p.options.storageCapacityGb ?? 0) > 0 && p.options.storageCapacityGb! < minCapGb) {
      p.options.storageCapacityGb = minCapGb;
    }
    if (ram !== null && hw.cacheDir) {
      const capGb = p.options.storageCapacityGb ?? 0;
      const cpuBytes = (p.options.cpuMemGb ?? 0) * GIB;
      const storageBytes = capGb > 0 ? capGb * GIB : (freeBytes ?? 0) * AUTO_CAPACITY_SHARE;
      const inRam = storageRamBytes(storageBytes, hw.cacheDir);
      if (cpuBytes + inRam > ramBudgetBytes) {
        // The profile's cap is the planner's to choose: shrink it to what fits, while it still holds
        // two of the model's largest entries. A cap the user gave, or the automatic one, is theirs.
        const fitGb = Math.floor((ramBudgetBytes - cpuBytes) / GIB);
        if (o.storageCapacityGb === undefined && capGb > 0 && fitGb >= minCapGb) {
          p.options.storageCapacityGb = fitGb;
          p.derivation.push(`storage tier shrunk from ${capGb} to ${fitGb} GiB: it lives in RAM (${ram}) beside the CPU tier`);
          ramShrunk.push(`${id} ${fitGb} GiB`);
        } else {
          ramOverruns.push({ scenarioId: id, cpuBytes, storageRamBytes: inRam, minCapGb });
        }
      }
    }
    const v = validateRunOptions({ ...p.options, cacheDir });
    if (!v.ok) throw new KvbenchError('VALIDATION', `scenario ${id}: ${v.errors.join('; ')}`);
    const est = estimateRun(v.options, freeBytes);
    const spill = expectedSpill(id, v.options);
    if (spill !== null) spills.push(spill);
    const later = laterSpill(id, v.options);
    if (later !== null) laterSpills.push(later);
    runs.push({
      position: runs.length,
      scenarioId: id,
      label: sc.label,
      options: v.options as unknown as Record<string, unknown>,
      trials,
      uvThreadpoolSize: v.options.ioDepth + UV_THREADS_FOR_METADATA,
      estimatedSecondsPerTrial: est.seconds,
      diskBytesEstimate: est.diskEstimate,
      diskBytesRequired: est.diskRequired,
      ...(spill !== null ? { expectedSpill: { firstRoundBytes: spill.firstRoundBytes, namedTierBytes: spill.namedBytes } } : {}),
      derivation: [
        `model ${v.options.model}, ${v.options.warmUp > 0 ? `${v.options.warmUp} s warm-up then ` : ''}${v.options.duration} s measured${v.options.maxRequests > 0 ? ` or until ${v.options.maxRequests} requests completed, whichever is first` : ''}, generation ${v.options.generationMode}, seed ${SUITE_SEED}`,
        ...p.derivation,
        `${v.options.storageCapacityGb > 0 ? `storage tier capped at ${v.options.storageCapacityGb} GiB` : 'storage tier: 95 % of the free space (reference)'}${overflowOnly(id)}`],
    });
  }

  const probeBytes = o.probeBytes ?? (o.probeRun ? (o.probeRun.sizeBytes ?? defaultProbeBytes(freeBytes ?? 0)) : 0);
  const probeSeconds = o.probeRun ? 2 * o.probeRun.durationS + PROBE_OVERHEAD_S : 0;
  const peakDisk = Math.max(probeBytes, ...runs.map((r) => r.diskBytesEstimate), 0);
  const required = Math.max(probeBytes, ...runs.map((r) => r.diskBytesRequired), 0);
  const problems: Problem[] = [];
  const plainProblem = (text: string): void => void problems.push({ text, sizes: [] });
  if (runs.length === 0) plainProblem('nothing to run: every chosen scenario was skipped');
  problems.push(...capacityTooSmallProblems(runs));
  if (ram !== null && ramOverruns.length > 0) problems.push(ramOverrunProblem(ramOverruns, ram, ramBudgetBytes, reserveBytes, hw.memory.availableBytes));
  if (hw.cacheDir && !hw.cacheDir.writable) {
    plainProblem(hw.cacheDir.notWritableReason ? `the cache directory cannot be used: ${hw.cacheDir.notWritableReason}` : `the cache directory ${hw.cacheDir.resolvedPath} is not writable`);
  }
  if (freeBytes !== null && required > freeBytes) {
    const worst = runs.reduce((a, r) => (r.diskBytesRequired > a.diskBytesRequired ? r : a), runs[0]);
    problems.push(
      sizedProblem((size) => {
        const why =
          worst === undefined || worst.diskBytesRequired < probeBytes
            ? 'bandwidth probe'
            : Number(worst.options.storageCapacityGb) > 0
              ? `${worst.scenarioId}: storage tier ${Number(worst.options.storageCapacityGb)} GiB`
              : `${worst.scenarioId}: ${AUTO_CAPACITY_SHARE * 100} % of the free space must hold two of ${String(worst.options.model)}'s largest KV entries, 2 × ${size(largestEntryBytes(String(worst.options.model)))}`;
        return (
          `the cache directory cannot hold this suite: it needs ${size(required)} free (${why}) ` +
            `but ${hw.cacheDir?.resolvedPath ?? o.cacheDir} has ${size(freeBytes)} free. Free space, choose another --cache-dir, or set a smaller --storage-capacity-gb`
        );
      }),
    );
  }
  const estimate: SuiteEstimate = {
    trialCount: runs.reduce((n, r) => n + r.trials, 0),
    totalSeconds: probeSeconds + runs.reduce((s, r) => s + r.trials * r.estimatedSecondsPerTrial, 0),
    peakDiskBytes: peakDisk,
    requiredDiskBytes: required,
    freeBytes,
    fits: problems.length === 0,
    problems: problems.map((p) => p.text),
    problemSizes: problems.map((p) => p.sizes),
  };
  const notes = [...d.notes];
  if (d.maxRequests > 0) notes.push(`each trial ends once ${d.maxRequests} requests have completed in its measured window, or at its ${d.durationS} s if that comes first: the estimate is the longest it can take`);
  if (o.probeRun) notes.push(`the estimate includes the drive probe before the trials: about ${probeSeconds} s, with ${gib(probeBytes)} of files in the cache directory, removed after (--no-probe skips it)`);
  if (skipped.length > 0) notes.push(`${skipped.length} scenario(s) skipped: ${skipped.map((s) => s.scenarioId).join(', ')}`);
  if (ram !== null) notes.push(`the cache directory is on a ${ramBackedMessage(ram)}; every storage result describes RAM`);
  const bufferedLoops = hw.cacheDir?.bufferedLoops ?? [];
  if (bufferedLoops.length > 0) notes.push(`the cache directory is on a ${bufferedLoopMessage(bufferedLoops)}; every trial's storage reads will be flagged`);
  if (ramShrunk.length > 0) {
    notes.push(
      `storage tiers shrunk to fit in RAM beside the CPU tier (${gib(hw.memory.availableBytes)} available, ${gib(reserveBytes)} kept in reserve): ${ramShrunk.join(', ')}`,
    );
  }
  const spillNotes = [...spills.map(expectedSpillNote), ...laterSpills.map(laterSpillNote)];
  notes.push(...spillNotes.map((n) => n.text));
  if (hw.cacheDir?.directIo && !hw.cacheDir.directIo.supported) notes.push(`direct I/O is not available in the cache directory (${hw.cacheDir.directIo.reason}): storage reads may be served by the page cache`);
  const shrunkOptions = runsReferenceMlperf(d, o.profile) ? [] : runs.filter((r) => r.scenarioId.startsWith('mlperf-'));
  if (shrunkOptions.length > 0 && o.profile !== 'smoke') {
    notes.push(
      `${shrunkOptions.map((r) => r.scenarioId).join(', ')} run the MLPerf options' workloads at this profile's duration and storage capacity, not the reference options ` +
        `(${REFERENCE_MLPERF_DURATION_S} s, 95 % of the free space: --profile mlperf); their configurations differ, so reports and history keep them apart from reference runs`,
    );
  }
  if (ids.includes('storage-saturation') && ids.includes('cpu-storage')) {
    notes.push('storage-saturation and cpu-storage have the same parameters here (the reference\'s suite description makes the "small" CPU tier RAM/8, with high users); the reference\'s suite script gave storage-saturation a fixed 4 GiB or 0 GiB CPU tier. Both are kept, each under its own id, so stored history stays comparable');
  }
  return {
    version: SUITE_PLAN_VERSION,
    profile: o.profile,
    trials,
    model: d.model,
    cacheDir,
    systemId: hw.system.id,
    driveId: hw.cacheDir?.driveId ?? 'unknown',
    createdAt: (o.now ?? new Date()).toISOString(),
    runs,
    skipped,
    estimate,
    notes,
    noteSizes: notes.map((n) => spillNotes.find((x) => x.text === n)?.sizes ?? []),
    ...(o.probe !== undefined ? { probe: o.probe } : {}),
  };
}
