// The drive's limit, for "efficiency against the probe's limit": the raw-limit probe (`kvbench
// probe`: sequential direct writes then reads at the engine's block size and I/O depth, in its own
// process with libuv's pool sized to match), run briefly and reduced to the two rates reports use.
import type { BandwidthProbe } from '../../src-shared/domain/hardware.ts';
import { runProbeProcess } from '../cli/probe-command.ts';
import type { ProbeResult } from '../engine/probe/probe-protocol.ts';
import { validateProbeOptions } from '../engine/probe/probe-options.ts';

export interface DriveProbeOptions {
  /** Seconds per phase (write, then read); default 3. */
  durationS?: number;
  /** Total bytes of the probe's files; default the probe's own (min(8 GiB, 20 % of free space)). */
  sizeBytes?: number | null;
  ioChunkMib?: number;
  ioDepth?: number;
  signal?: AbortSignal;
}

/** Runs the raw-limit probe in `dir`; throws with the probe's message when it fails. */
export async function probeDriveLimit(dir: string, opts: DriveProbeOptions = {}): Promise<BandwidthProbe> {
  const v = validateProbeOptions({
    dir,
    durationS: opts.durationS ?? 3,
    ...(opts.sizeBytes ? { sizeBytes: opts.sizeBytes } : {}),
    ...(opts.ioChunkMib ? { ioChunkMib: opts.ioChunkMib } : {}),
    ...(opts.ioDepth ? { ioDepth: opts.ioDepth } : {}),
  });
  if (!v.ok) throw new Error(v.errors.join('; '));
  const run = await runProbeProcess(v.options, opts.signal ? { cancelSignal: opts.signal } : {});
  if (!run.ok) throw new Error(`${run.code}: ${run.message}`);
  return bandwidthOf(run.result, v.options.durationS);
}

/**
 * The probe's result as the two limits reports divide by. A rate is a limit only when its phase
 * ran to the end of a complete probe and measured the device: a cancelled probe or a phase cut
 * short gives null, and so does a read phase the page cache may have served (as `kvbench run
 * --probe-result` refuses such a probe) — efficiency against a RAM rate would read as a slow drive.
 */
export function bandwidthOf(r: ProbeResult, phaseSeconds: number): BandwidthProbe {
  const read = r.phases.read;
  const write = r.phases.write;
  const measured = (p: typeof read): p is NonNullable<typeof read> => r.status === 'complete' && p !== undefined && !p.cancelled && p.bytes_per_sec > 0;
  return {
    readBytesPerSec: measured(read) && !read.page_cache_suspected ? read.bytes_per_sec : null,
    writeBytesPerSec: measured(write) ? write.bytes_per_sec : null,
    fileBytes: r.lanes * r.file_bytes_per_lane,
    chunkBytes: r.io_chunk_bytes,
    depth: r.io_depth,
    directIo: r.direct_io,
    pageCacheSuspected: Boolean(read?.page_cache_suspected),
    phaseSeconds,
    measuredAt: r.started_at,
  };
}
