/**
 * The KV-cache tiers, fastest first. Every tier list in results files, stored metrics, reports and
 * the UI follows this order, so tables and JSON keys line up across them.
 */
export const TIER_NAMES = ['gpu', 'cpu', 'storage'] as const;
export type TierName = (typeof TIER_NAMES)[number];
