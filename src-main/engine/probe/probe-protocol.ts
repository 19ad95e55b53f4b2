// Messages between the probe command (host) and the probe's own process, over Node's IPC channel:
//   host → probe: { type: 'start', options } · { type: 'cancel' }
//   probe → host: { type: 'progress', progress } · { type: 'result', result } · { type: 'error', error: { code, message } }
// Validated on receipt on both sides, as every message crossing a process boundary is. The probe's
// result is also a file (`kvbench probe --output`) that `kvbench run --probe-result` reads back: its
// schema here is the one definition of it, for the process boundary and the file alike.

import { z } from 'zod';
import { EngineErrorDataSchema } from '../../../src-shared/engine-protocol.ts';
import { BlockDeviceInfoSchema } from '../metrics/device-stats.ts';
import { PROBE_PHASES } from './probe-options.ts';

/** Counts, bytes, nanoseconds, rates: finite (z.number refuses NaN and ±Infinity) and never negative. */
const amount = z.number().nonnegative();
const whole = z.number().int().nonnegative();

export const ProbeLatencyNsSchema = z.object({
  count: whole,
  mean_ns: amount,
  p50_ns: amount,
  p95_ns: amount,
  p99_ns: amount,
  max_ns: amount,
});
export type ProbeLatencyNs = z.infer<typeof ProbeLatencyNsSchema>;

export const ProbeDeviceIoSchema = z.object({
  name: z.string(),
  read_bytes: amount,
  write_bytes: amount,
  read_ios: amount,
  write_ios: amount,
  /** Share of the phase with at least one I/O in flight on the device (0..1). */
  utilisation: amount,
});
export type ProbeDeviceIo = z.infer<typeof ProbeDeviceIoSchema>;

export const ProbePhaseResultSchema = z.object({
  op: z.enum(PROBE_PHASES),
  bytes: amount,
  ios: amount,
  elapsed_ns: amount,
  bytes_per_sec: amount,
  /** Times the lanes wrapped around their files (0: every byte read or written once). */
  wraps: whole,
  /** One chunk's I/O, submission to completion. */
  io_latency: ProbeLatencyNsSchema,
  /** Only in the write phase: the closing fdatasync of every file (inside elapsed_ns). */
  fdatasync_ns: amount.nullable(),
  cpu_user_ns: amount,
  cpu_system_ns: amount,
  /** (user + system CPU of this process) ÷ (bytes ÷ 10⁹). */
  cpu_seconds_per_gb: amount,
  device: ProbeDeviceIoSchema.nullable(),
  /** Device bytes in this phase's direction ÷ probe bytes (every process's I/O); null without device counters. */
  device_coverage: amount.nullable(),
  /** Read phase: bytes this process made the block layer read (/proc/self/io) ÷ probe bytes; null otherwise or where unreadable. */
  process_read_coverage: amount.nullable(),
  /** Reads the device did not (provably) serve: this phase's rate may be the page cache's. */
  page_cache_suspected: z.boolean(),
  /** Why page_cache_suspected is true. */
  page_cache_reason: z.string().nullable(),
  cancelled: z.boolean(),
});
export type ProbePhaseResult = z.infer<typeof ProbePhaseResultSchema>;

export const ProbeResultSchema = z.object({
  kind: z.literal('kvbench-probe'),
  version: z.string(),
  status: z.enum(['complete', 'cancelled']),
  started_at: z.string(),
  dir: z.string(),
  device: BlockDeviceInfoSchema.nullable(),
  device_reason: z.string().nullable(),
  direct_io: z.boolean(),
  direct_io_reason: z.string().nullable(),
  io_chunk_bytes: z.number().int().positive(),
  io_depth: z.number().int().positive(),
  lanes: z.number().int().positive(),
  file_bytes_per_lane: amount,
  uv_threadpool_size: z.number().int().positive().nullable(),
  phases: z.partialRecord(z.enum(PROBE_PHASES), ProbePhaseResultSchema),
  warnings: z.array(z.string()),
  units: z.string(),
});
export type ProbeResult = z.infer<typeof ProbeResultSchema>;

/**
 * What `kvbench run --probe-result` reads of a probe file, checked as the full result is; what it
 * does not read is not required, so a file written by an earlier kvbench (fewer fields) still serves.
 */
export const ProbeLimitsFileSchema = ProbeResultSchema.pick({ kind: true, status: true, dir: true, started_at: true, io_chunk_bytes: true, io_depth: true }).extend({
  device: z.looseObject({ name: z.string() }).nullable(),
  phases: z.partialRecord(z.enum(PROBE_PHASES), ProbePhaseResultSchema.pick({ bytes_per_sec: true, page_cache_suspected: true }).loose()),
});

export const ProbeProgressSchema = z.object({
  phase: z.enum([...PROBE_PHASES, 'preparing']),
  elapsedNs: amount,
  durationNs: amount,
  bytes: amount,
  bytesPerSec: amount,
});
export type ProbeProgress = z.infer<typeof ProbeProgressSchema>;

export const HostToProbeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), options: z.unknown() }),
  z.object({ type: z.literal('cancel') }),
]);
export type HostToProbe = z.infer<typeof HostToProbeSchema>;

export const ProbeToHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('progress'), progress: ProbeProgressSchema }),
  z.object({ type: z.literal('result'), result: ProbeResultSchema }),
  z.object({ type: z.literal('error'), error: EngineErrorDataSchema }),
]);
export type ProbeToHost = z.infer<typeof ProbeToHostSchema>;
