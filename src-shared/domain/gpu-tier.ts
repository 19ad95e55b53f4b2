/**
 * What a trial's GPU tier was, beside what its configuration asked for: the facts a stored trial
 * keeps (trial metrics, read by the report's flags and its group header) and, for the app's trial
 * details, the fuller account its stored results give (the GPUs, the driver, why it fell short).
 * A run whose GPU tier did not open goes on in the tiers below, and one whose reservation fell short
 * runs with less: only these facts tell such a trial from one that had the tier it asked for.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import { z } from 'zod';
import type { HardwareProfile } from './hardware.ts';

const GIB = 1024 ** 3;
const bytes = z.number().nonnegative();
const count = z.number().int().nonnegative();

/**
 * The trial metrics that keep a GPU tier's facts, stored where a GPU tier was asked for (kvbench
 * results, not trace-only): trials stored before this build kept them have none, and get no flag.
 */
export const GPU_TIER_FACT_KEYS = ['gpu_tier_requested_bytes', 'gpu_tier_reserved_bytes', 'gpu_tier_present', 'gpu_staging_pinned'] as const;

/** "136.0 of 136.0 GiB": a GPU tier's reserved bytes of those asked for, in GiB as --gpu-mem-gb gives them. */
export const reservedOfAskedText = (reservedBytes: number, askedBytes: number): string => `${(reservedBytes / GIB).toFixed(1)} of ${(askedBytes / GIB).toFixed(1)} GiB`;

/** The GPUs of a hardware snapshot as the GPU tier opens them, with the driver: "NVIDIA H200 (driver 580.159.04, supports CUDA 13.0)"; null without one. */
export function gpuDevicesText(hw: Pick<HardwareProfile, 'gpus' | 'cuda'> | null, numGpus = 1): string | null {
  if (hw === null) return null;
  const cuda = hw.cuda?.available ? hw.cuda : null;
  const names = cuda !== null ? cuda.devices.slice(0, Math.max(1, numGpus)).map((d) => d.name) : hw.gpus.filter((g) => g.compute).map((g) => g.model ?? g.vendor ?? 'GPU');
  if (names.length === 0) return null;
  const driver = cuda?.driverVersion ?? hw.gpus.find((g) => g.compute)?.driverVersion ?? null;
  return devicesText(names, driver, cuda?.cudaVersion ?? null);
}

/** "2 × NVIDIA H200 (driver 580.159.04, supports CUDA 13.0)": models, each once with its count, and the driver where known. */
function devicesText(models: readonly string[], driver: string | null, cuda: string | null): string {
  const counts = new Map<string, number>();
  for (const m of models) counts.set(m, (counts.get(m) ?? 0) + 1);
  const names = [...counts].map(([m, n]) => (n > 1 ? `${n} × ${m}` : m)).join(', ');
  const versions = [driver === null ? null : `driver ${driver}`, cuda === null ? null : `supports CUDA ${cuda}`].filter((v) => v !== null);
  return versions.length === 0 ? names : `${names} (${versions.join(', ')})`;
}

// ---------------------------------------------------------------------------------------------
// A report group's GPU tier (ScenarioSummary.gpuTier)

export const GpuTierSummarySchema = z.object({
  /** The group's aggregated trials with the GPU tier's facts (a GPU tier asked for, stored by a kvbench that keeps them). */
  trials: count,
  /** What their configuration asked for (one configuration: one size). */
  requestedBytes: bytes,
  /** The least and most device memory reserved by those whose tier opened; null where none did. */
  reservedMinBytes: bytes.nullable(),
  reservedMaxBytes: bytes.nullable(),
  /** Trials whose GPU tier did not open, that opened smaller than asked, and whose staging was not pinned (pinned: known pinned). */
  absentTrials: count,
  smallerTrials: count,
  unpinnedTrials: count,
  pinnedTrials: count,
  /** The GPUs and driver from the newest such trial's hardware snapshot ("NVIDIA H200 (driver 580.159.04, supports CUDA 13.0)"); null where it has none. */
  devices: z.string().nullable(),
});
export type GpuTierSummary = z.infer<typeof GpuTierSummarySchema>;

/**
 * A group's GPU tier over its trials' stored facts (their metrics); null where none has them. `devices`
 * names the GPUs where the caller knows them (a hardware snapshot).
 */
export function gpuTierSummaryOf(metrics: readonly Readonly<Record<string, number | undefined>>[], devices: string | null = null): GpuTierSummary | null {
  const withFacts = metrics.filter((m) => m.gpu_tier_requested_bytes !== undefined && m.gpu_tier_present !== undefined);
  if (withFacts.length === 0) return null;
  const opened = withFacts.filter((m) => m.gpu_tier_present === 1 && m.gpu_tier_reserved_bytes !== undefined);
  const reserved = opened.map((m) => m.gpu_tier_reserved_bytes!);
  return {
    trials: withFacts.length,
    requestedBytes: Math.max(...withFacts.map((m) => m.gpu_tier_requested_bytes!)),
    reservedMinBytes: reserved.length === 0 ? null : Math.min(...reserved),
    reservedMaxBytes: reserved.length === 0 ? null : Math.max(...reserved),
    absentTrials: withFacts.filter((m) => m.gpu_tier_present === 0).length,
    smallerTrials: opened.filter((m) => m.gpu_tier_reserved_bytes! < m.gpu_tier_requested_bytes!).length,
    unpinnedTrials: opened.filter((m) => m.gpu_staging_pinned === 0).length,
    pinnedTrials: opened.filter((m) => m.gpu_staging_pinned === 1).length,
    devices,
  };
}

/** Bytes in GiB to one decimal, as --gpu-mem-gb gives a GPU tier's size: "136.0 GiB". */
const gibText = (b: number): string => `${(b / GIB).toFixed(1)} GiB`;

/**
 * A group's GPU tier in words, for the text report's and the app's group header, sizes in the
 * caller's units (`sizeText`; GiB by default): "NVIDIA H200 (driver 580.159.04, supports CUDA 13.0), 136.0 GiB
 * of 136.0 GiB reserved, staging pinned"; what fell short is counted ("smaller than asked in 1 of 3
 * trials", "absent in 1 of 1 trial"). Without a hardware snapshot (an import) the GPUs go unnamed.
 */
export function gpuTierSummaryText(g: GpuTierSummary, sizeText: (bytes: number) => string = gibText): string {
  const of = (n: number): string => `${n} of ${g.trials} trial${g.trials === 1 ? '' : 's'}`;
  const parts: string[] = g.devices === null ? [] : [g.devices];
  if (g.reservedMinBytes !== null && g.reservedMaxBytes !== null) {
    const reserved = g.reservedMinBytes === g.reservedMaxBytes ? sizeText(g.reservedMinBytes) : `${sizeText(g.reservedMinBytes)}–${sizeText(g.reservedMaxBytes)}`;
    parts.push(`${reserved} of ${sizeText(g.requestedBytes)} reserved${g.smallerTrials > 0 ? ` (smaller than asked in ${of(g.smallerTrials)})` : ''}`);
  }
  if (g.absentTrials > 0) parts.push(`absent in ${of(g.absentTrials)} (${sizeText(g.requestedBytes)} asked)`);
  if (g.unpinnedTrials > 0) parts.push(`staging not pinned in ${of(g.unpinnedTrials)}`);
  else if (g.pinnedTrials > 0) parts.push('staging pinned');
  return parts.join(', ');
}

// ---------------------------------------------------------------------------------------------
// One trial's GPU tier from its stored results (the app's trial details)

export const TrialGpuSchema = z.object({
  /** Whether the tier opened; when not, `reason` says why (the run went on in the tiers below). */
  present: z.boolean(),
  reason: z.string().nullable(),
  /** What the run asked for (--gpu-mem-gb × GPUs) and what the tier reserved (0 when absent). */
  requestedBytes: bytes,
  reservedBytes: bytes,
  /** The GPUs the tier used, each with what fell short of its reservation (null: nothing). */
  devices: z.array(z.object({ model: z.string(), reservedBytes: bytes, shortfall: z.string().nullable() })),
  driverVersion: z.string().nullable(),
  cudaVersion: z.string().nullable(),
  /** Whether its host staging was page-locked, and why not; null when the tier did not open. */
  stagingPinned: z.boolean().nullable(),
  stagingReason: z.string().nullable(),
});
export type TrialGpu = z.infer<typeof TrialGpuSchema>;

const record = (v: unknown): Record<string, unknown> | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/**
 * What a GPU tier asked for was, from a results file's `kvbench` section: the bytes asked for (the
 * tier's own `requested_bytes`, else --gpu-mem-gb × GPUs from the run options), with the section; null
 * where no GPU tier was asked for, or only simulated (trace-only mode), or the file says nothing of it.
 */
export function askedGpuTier(results: unknown): { requestedBytes: number; gpu: Record<string, unknown> } | null {
  const kv = record(record(results)?.kvbench);
  const gpu = record(record(kv?.tiers)?.gpu);
  if (gpu === null || typeof gpu.present !== 'boolean') return null;
  const options = record(kv?.run_options) ?? {};
  if (options.ioTraceLog !== undefined && options.ioTraceLog !== null) return null;
  const perGpuGib = num(options.gpuMemGb);
  const fromOptions = perGpuGib !== null && perGpuGib > 0 ? Math.floor(perGpuGib * GIB) * (num(options.numGpus) ?? 1) : null;
  const requestedBytes = num(gpu.requested_bytes) ?? fromOptions;
  return requestedBytes === null || requestedBytes <= 0 ? null : { requestedBytes, gpu };
}

/** A trial's GPU tier as its stored results describe it; null where it asked for none (askedGpuTier). */
export function trialGpuOf(results: unknown): TrialGpu | null {
  const asked = askedGpuTier(results);
  if (asked === null) return null;
  const { gpu, requestedBytes } = asked;
  const devices = (Array.isArray(gpu.devices) ? gpu.devices : []).map(record).filter((d) => d !== null);
  return {
    present: gpu.present === true,
    reason: str(gpu.reason),
    requestedBytes,
    reservedBytes: gpuReservedBytes(gpu),
    devices: devices.map((d) => ({ model: str(d.model) ?? 'GPU', reservedBytes: num(d.reserved_bytes) ?? 0, shortfall: str(d.shortfall) })),
    driverVersion: str(gpu.driver_version),
    cudaVersion: str(gpu.cuda_version),
    stagingPinned: gpu.present === true && typeof gpu.staging_pinned === 'boolean' ? gpu.staging_pinned : null,
    stagingReason: str(gpu.staging_reason),
  };
}

/** Device memory a results file's GPU tier reserved: its devices' reservations, else its budget; 0 when it did not open. */
export function gpuReservedBytes(gpu: Record<string, unknown>): number {
  if (gpu.present !== true) return 0;
  const devices = (Array.isArray(gpu.devices) ? gpu.devices : []).map(record).filter((d) => d !== null);
  return devices.length > 0 ? devices.reduce((sum, d) => sum + (num(d.reserved_bytes) ?? 0), 0) : (num(gpu.budget_bytes) ?? 0);
}

/**
 * A trial's GPU tier in words, sizes in the caller's units (`sizeText`): "NVIDIA H200 (driver
 * 580.159.04, supports CUDA 13.0): 64 GiB reserved of 64 GiB asked, staging pinned"; what fell short with why.
 */
export function trialGpuText(g: TrialGpu, sizeText: (bytes: number) => string): string {
  if (!g.present) return `absent though ${sizeText(g.requestedBytes)} was asked for${g.reason === null ? '' : `: ${g.reason}`}; the run went on in the tiers below`;
  const devices = devicesText(
    g.devices.map((d) => d.model),
    g.driverVersion,
    g.cudaVersion,
  );
  const shortfalls = g.devices.flatMap((d) => (d.shortfall === null ? [] : [d.shortfall]));
  const smaller = g.reservedBytes < g.requestedBytes ? ` (smaller than asked${shortfalls.length > 0 ? `: ${shortfalls.join('; ')}` : ''})` : '';
  const staging = g.stagingPinned === null ? '' : g.stagingPinned ? ', staging pinned' : `, staging not pinned${g.stagingReason === null ? '' : ` (${g.stagingReason})`}`;
  return `${g.devices.length > 0 ? devices : 'GPU'}: ${sizeText(g.reservedBytes)} reserved of ${sizeText(g.requestedBytes)} asked${smaller}${staging}`;
}
