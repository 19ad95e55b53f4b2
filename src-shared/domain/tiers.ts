/**
 * The KV-cache tiers, fastest first. Every tier list in results files, stored metrics, reports and
 * the UI follows this order, so tables and JSON keys line up across them.
 */
export const TIER_NAMES = ['gpu', 'cpu', 'storage'] as const;
export type TierName = (typeof TIER_NAMES)[number];

/** A tier's name inside a sentence: "the CPU tier", "the storage tier". */
export const TIER_WORDS: Readonly<Record<TierName, string>> = { gpu: 'GPU', cpu: 'CPU', storage: 'storage' };

/** Tiers inside a sentence: "CPU tier", "GPU and CPU tiers". */
export const tiersText = (tiers: readonly TierName[]): string => `${tiers.map((t) => TIER_WORDS[t]).join(' and ')} tier${tiers.length > 1 ? 's' : ''}`;

/**
 * Whether any of these tier-comparison rows had a GPU tier (a budget above 0 GiB, or a GPU read
 * latency): the tables give the GPU's read P95 a column then, and leave it out of CPU and storage
 * suites, whose every cell would read —.
 */
export const anyGpuTier = (rows: readonly { gpuMemGb: number | null; gpuReadP95Ms: number | null }[]): boolean =>
  rows.some((r) => (r.gpuMemGb ?? 0) > 0 || r.gpuReadP95Ms !== null);
