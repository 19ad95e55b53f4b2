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

/**
 * What the tier comparison's efficiencies divide, in the words every reader (the XLSX's About sheet,
 * the app's column tips, docs/suite.md) gives them. Two kinds: the storage and CPU ones are bytes over
 * the whole measured window ÷ a limit (the bandwidth the run used); the GPU ones are the link's rate
 * while the tier kept it busy ÷ the probe's, measured the same way (how near the link's pace its copies
 * ran, not how much of the window the link was busy), so the GPU's are named "busy" to be read apart.
 */
export const EFFICIENCY_DEFINITIONS = {
  storage_read_efficiency: "storage-tier bytes read ÷ the measured window, ÷ the drive's sequential read bandwidth (the probe's, or the one stated)",
  storage_write_efficiency: "storage-tier bytes written (demotions into it included) ÷ the measured window, ÷ the drive's sequential write bandwidth (the probe's, or the one stated)",
  cpu_read_efficiency:
    "CPU-tier bytes read, reads incl. demotions (what requests read from it and what demotions copied out of it to the tier below, each a copy out of its memory: memory bandwidth used, not the tier's hits alone), ÷ the measured window, ÷ one thread's memory-copy bandwidth (kvbench's probe): averaged over the window",
  gpu_read_busy_efficiency:
    "GPU device→host bytes through pinned staging (the tier's hits; its pageable demotion copies left out) ÷ the time those copies kept the link busy (not the window), ÷ the GPU copy probe's device→host rate, measured the same way: efficiency while busy, how near the link's pace the tier's reads ran",
  gpu_write_busy_efficiency:
    "GPU host→device bytes from pinned staging ÷ the time those copies kept the link busy (not the window), ÷ the GPU copy probe's host→device rate, measured the same way: efficiency while busy, how near the link's pace the tier's writes ran",
} as const;

/** The text tier comparison's legend of its GPU efficiency columns ("GPU rd/wr eff (busy)"). */
export const GPU_BUSY_EFFICIENCY_TEXT =
  "the GPU tier's pinned staging copies' rate while they kept the link busy (reads: its hits; demotions left out) ÷ the GPU copy probe's that way: efficiency while busy, not over the window as rd/wr eff";
