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
