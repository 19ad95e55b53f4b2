// Messages between the probe command (host) and the probe's own process, over Node's IPC channel:
//   host → probe: { type: 'start', options } · { type: 'cancel' }
//   probe → host: { type: 'progress', progress } · { type: 'result', result } · { type: 'error', error: { code, message } }
// Validated on receipt on both sides, as every message crossing a process boundary is.

import { z } from 'zod';
import type { ProbeProgress, ProbeResult } from './raw-limit-probe.ts';

export const HostToProbeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('start'), options: z.unknown() }),
  z.object({ type: z.literal('cancel') }),
]);
export type HostToProbe = z.infer<typeof HostToProbeSchema>;

export const ProbeToHostSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('progress'),
    progress: z.object({
      phase: z.enum(['write', 'read', 'preparing']),
      elapsedNs: z.number(),
      durationNs: z.number(),
      bytes: z.number(),
      bytesPerSec: z.number(),
    }),
  }),
  z.object({
    type: z.literal('result'),
    result: z.looseObject({ kind: z.literal('kvbench-probe'), status: z.enum(['complete', 'cancelled']), phases: z.record(z.string(), z.unknown()) }),
  }),
  z.object({ type: z.literal('error'), error: z.object({ code: z.string(), message: z.string() }) }),
]);

export type ProbeToHost =
  | { type: 'progress'; progress: ProbeProgress }
  | { type: 'result'; result: ProbeResult }
  | { type: 'error'; error: { code: string; message: string } };
