import type { RunOptions } from '../../../../src-shared/domain/run-options.ts';
import type { RagDocument } from '../synthetic-workload.ts';
import type { WorkloadProfile } from '../workload-profile.ts';
import type { ReplayWorkloadOptions } from './replay-source.ts';

export interface SourceContext {
  options: RunOptions;
  /** The effective seed (--seed, or the one drawn at start). */
  seed: number;
  profile: WorkloadProfile;
  ragDocuments: RagDocument[] | null;
  prepopulatedKeys: string[];
  log: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;
}

export type RunMode = ReplayWorkloadOptions['mode'];

export function runMode(o: RunOptions): RunMode {
  return o.decodeOnly ? 'decode-only' : o.prefillOnly ? 'prefill-only' : 'standard';
}

/** The per-request options every replay shares, from the run's context. */
export function replayOptions(ctx: SourceContext, kind: ReplayWorkloadOptions['kind'], paced: boolean, systemPrompts: boolean): ReplayWorkloadOptions {
  return {
    kind,
    paced,
    seed: ctx.seed,
    profile: ctx.profile,
    mode: runMode(ctx.options),
    systemPrompts: systemPrompts && !ctx.options.disablePrefixCaching,
    ragDocuments: ctx.ragDocuments,
    prepopulatedKeys: ctx.prepopulatedKeys,
    log: ctx.log,
  };
}

/** Users of the trace replays (BurstGPT, Azure, Mooncake): the reference's `trace_user_{i % 1000}`. */
export const TRACE_USERS = 1000;
export const traceUserId = (seq: number): string => `trace_user_${seq % TRACE_USERS}`;
