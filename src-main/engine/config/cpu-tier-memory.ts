import { GIB } from '../../../src-shared/domain/results.ts';

/** RAM kept free for the engine itself and the OS when sizing the CPU tier. */
export const CPU_TIER_MEMORY_RESERVE_BYTES = 2 * GIB;

/**
 * Why a CPU tier of `cpuMemGb` cannot run on a machine with `totalMemoryBytes` of RAM, or null: the
 * tier holds its entries' real bytes in RAM. One rule for argument parsing (reported before anything
 * starts) and the engine (which any front end reaches).
 */
export function cpuTierMemoryError(cpuMemGb: number, totalMemoryBytes: number): string | null {
  const usableBytes = totalMemoryBytes - CPU_TIER_MEMORY_RESERVE_BYTES;
  if (Math.floor(cpuMemGb * GIB) <= usableBytes) return null;
  return (
    `--cpu-mem-gb ${cpuMemGb} is more than this machine can hold: the CPU tier keeps real bytes in RAM, and ` +
    `${(totalMemoryBytes / GIB).toFixed(1)} GiB is installed (use at most ${(Math.max(0, usableBytes) / GIB).toFixed(1)})`
  );
}
