// Options of the raw-limit probe (`kvbench probe`), validated at every boundary it crosses (the
// command line, the message to the probe process). Block size and concurrency default to the
// engine's own (`--io-chunk-mib`, `--io-depth`), so the probe measures what the engine could get.

import { z } from 'zod';
import { DEFAULT_RUN_OPTIONS, MAX_IO_CHUNK_MIB, MAX_IO_DEPTH } from '../../../src-shared/domain/run-options.ts';

export const PROBE_PHASES = ['write', 'read'] as const;
export type ProbePhaseName = (typeof PROBE_PHASES)[number];

export const MAX_PROBE_DURATION_S = 3600;
/** Default share of the directory's free space the probe's files may take. */
export const DEFAULT_PROBE_FREE_SPACE_SHARE = 0.2;
/** Default ceiling on the files' total size; time, not size, bounds a phase. */
export const DEFAULT_PROBE_MAX_BYTES = 8 * 1024 ** 3;

export const ProbeOptionsSchema = z
  .object({
    /** An existing directory on the device to measure; the probe works in its own subdirectory. */
    dir: z.string().min(1, { error: '--dir is required' }),
    ioChunkMib: z
      .number({ error: '--io-chunk-mib must be a whole number' })
      .int({ error: '--io-chunk-mib must be a whole number' })
      .min(1, { error: `--io-chunk-mib must be between 1 and ${MAX_IO_CHUNK_MIB}` })
      .max(MAX_IO_CHUNK_MIB, { error: `--io-chunk-mib must be between 1 and ${MAX_IO_CHUNK_MIB}` })
      .default(DEFAULT_RUN_OPTIONS.ioChunkMib),
    ioDepth: z
      .number({ error: '--io-depth must be a whole number' })
      .int({ error: '--io-depth must be a whole number' })
      .min(1, { error: `--io-depth must be between 1 and ${MAX_IO_DEPTH}` })
      .max(MAX_IO_DEPTH, { error: `--io-depth must be between 1 and ${MAX_IO_DEPTH}` })
      .default(DEFAULT_RUN_OPTIONS.ioDepth),
    /** Seconds per phase. */
    durationS: z
      .number({ error: '--duration must be a number of seconds' })
      .gt(0, { error: `--duration must be between 0 and ${MAX_PROBE_DURATION_S} seconds` })
      .max(MAX_PROBE_DURATION_S, { error: `--duration must be between 0 and ${MAX_PROBE_DURATION_S} seconds` })
      .default(10),
    /** Total bytes of the probe's files (one per lane); null = min(8 GiB, 20 % of the free space). */
    sizeBytes: z.number().int().positive({ error: '--size-gib must be positive' }).nullable().default(null),
    directIo: z.enum(['auto', 'on', 'off'], { error: '--direct-io must be auto, on or off' }).default('auto'),
    phases: z
      .array(z.enum(PROBE_PHASES))
      .min(1)
      .default([...PROBE_PHASES]),
  })
  .strict();

export type ProbeOptions = z.output<typeof ProbeOptionsSchema>;

export function validateProbeOptions(raw: unknown): { ok: true; options: ProbeOptions } | { ok: false; errors: string[] } {
  const r = ProbeOptionsSchema.safeParse(raw);
  if (r.success) return { ok: true, options: r.data };
  return { ok: false, errors: r.error.issues.map((i) => i.message) };
}
