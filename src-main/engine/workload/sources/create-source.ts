import type { RunOptions } from '../../../../src-shared/domain/run-options.ts';
import { SyntheticWorkload, type RagDocument } from '../synthetic-workload.ts';
import type { WorkloadProfile } from '../workload-profile.ts';
import type { WorkloadSource } from '../workload-source.ts';

export interface SourceContext {
  options: RunOptions;
  /** The effective seed (--seed, or the one drawn at start). */
  seed: number;
  profile: WorkloadProfile;
  ragDocuments: RagDocument[] | null;
  prepopulatedKeys: string[];
  log: (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;
}

/** Picks the run's request source from the options: synthetic users unless a dataset or trace is given. */
export async function createWorkloadSource(ctx: SourceContext): Promise<WorkloadSource> {
  const o = ctx.options;
  return new SyntheticWorkload({
    seed: ctx.seed,
    numUsers: o.numUsers,
    multiTurn: !o.disableMultiTurn,
    prefixCaching: !o.disablePrefixCaching,
    mode: o.decodeOnly ? 'decode-only' : o.prefillOnly ? 'prefill-only' : 'standard',
    ragDocuments: ctx.ragDocuments,
    prepopulatedKeys: ctx.prepopulatedKeys,
    profile: ctx.profile,
  });
}
