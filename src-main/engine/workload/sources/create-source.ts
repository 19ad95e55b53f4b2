import { printable } from '../../../../src-shared/domain/label-text.ts';
import { SyntheticWorkload } from '../synthetic-workload.ts';
import type { WorkloadSource } from '../workload-source.ts';
import { createAzureSource } from './azure-source.ts';
import { createBurstGptSource, resolveBurstTraceFiles } from './burstgpt-source.ts';
import { detectDatasetFormat, type DatasetFormat } from './detect-format.ts';
import { createMooncakeSource } from './mooncake-source.ts';
import { createShareGptSource } from './sharegpt-source.ts';
import { runMode, type SourceContext } from './source-context.ts';
import { createWorkloadFileSource } from './workload-file.ts';

export type { SourceContext } from './source-context.ts';

/**
 * Picks the run's request source: `--dataset-path` (its format detected from its content: ShareGPT,
 * Mooncake, Azure, BurstGPT or a kvbench workload file) wins over `--use-burst-trace`, as in the
 * reference; otherwise the synthetic users. A dataset or trace is validated completely here, before
 * the measured phase: bad input is a VALIDATION error naming the file and line.
 */
export async function createWorkloadSource(ctx: SourceContext): Promise<WorkloadSource> {
  const o = ctx.options;
  if (o.datasetPath) {
    const format = await detectDatasetFormat(o.datasetPath);
    warnIgnored(ctx, format);
    ctx.log('info', `--dataset-path ${printable(o.datasetPath)}: ${format} format`);
    switch (format) {
      case 'sharegpt':
        return createShareGptSource(ctx, o.datasetPath);
      case 'mooncake':
        return createMooncakeSource(ctx, o.datasetPath);
      case 'azure':
        return createAzureSource(ctx, o.datasetPath);
      case 'burstgpt':
        return createBurstGptSource(ctx, [o.datasetPath]);
      case 'workload-file':
        return createWorkloadFileSource(ctx, o.datasetPath);
    }
  }
  if (o.useBurstTrace) {
    warnIgnored(ctx, 'burstgpt');
    return createBurstGptSource(ctx, resolveBurstTraceFiles(o.burstTracePath));
  }
  if (o.requestRate > 0) ctx.log('warn', '--request-rate applies to ShareGPT replay only: the synthetic users ignore it (as in the reference)');
  return new SyntheticWorkload({
    seed: ctx.seed,
    numUsers: o.numUsers,
    multiTurn: !o.disableMultiTurn,
    prefixCaching: !o.disablePrefixCaching,
    mode: runMode(o),
    ragDocuments: ctx.ragDocuments,
    prepopulatedKeys: ctx.prepopulatedKeys,
    profile: ctx.profile,
    log: ctx.log,
  });
}

/** Flags that mean nothing for this format: said once, not silently dropped. */
function warnIgnored(ctx: SourceContext, format: DatasetFormat): void {
  const o = ctx.options;
  if (format !== 'sharegpt' && o.requestRate > 0) {
    ctx.log('warn', `--request-rate applies to ShareGPT replay only; the ${format} replay is paced by its timestamps and --trace-speedup`);
  }
  if (format === 'sharegpt' && o.traceSpeedup !== 1) {
    ctx.log('warn', '--trace-speedup does not apply to ShareGPT replay (it has no timestamps); use --request-rate');
  }
}
