// One thread's memory-copy bandwidth: the CPU tier's practical ceiling, to judge its efficiency
// against (the drive's limit comes from the raw-limit probe, drive-probe.ts).

const MIB = 1024 * 1024;

/** One thread's Buffer.copy bandwidth (bytes/s) over a buffer larger than the caches; best of a few passes. */
export function probeMemoryCopy(bytes = 256 * MIB, passes = 3): number {
  const src = Buffer.alloc(bytes, 1);
  const dst = Buffer.alloc(bytes);
  let best = 0;
  for (let i = 0; i < passes; i++) {
    const t0 = process.hrtime.bigint();
    src.copy(dst);
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    best = Math.max(best, bytes / s);
  }
  return best;
}
