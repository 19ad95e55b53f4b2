import os from 'node:os';
import type { RunOptions } from '../../../src-shared/domain/run-options.ts';
import type { RunResults } from '../../../src-shared/domain/results.ts';

/** The reference's "Run Parameters" (XLSX), in its order; memory sizes are GiB as the values are. */
export function runParameters(o: RunOptions, results: RunResults): Record<string, string | number | boolean | null> {
  const started = new Date(results.kvbench.started_at);
  const pad = (n: number): string => String(n).padStart(2, '0');
  const timestamp = `${started.getFullYear()}-${pad(started.getMonth() + 1)}-${pad(started.getDate())} ${pad(started.getHours())}:${pad(started.getMinutes())}:${pad(started.getSeconds())}`;
  return {
    Timestamp: timestamp,
    Model: o.model,
    'Num Users': o.numUsers,
    'Duration (s)': o.duration,
    'GPU Memory per Card (GiB)': o.gpuMemGb,
    'Num GPUs': o.numGpus,
    'Tensor Parallel': o.tensorParallel,
    'Total GPU Memory (GiB)': o.gpuMemGb * o.numGpus,
    'CPU Memory (GiB)': o.cpuMemGb,
    'Generation Mode': o.generationMode,
    'Performance Profile': o.performanceProfile,
    'Multi-turn': !o.disableMultiTurn,
    'Prefix Caching': !o.disablePrefixCaching,
    'RAG Enabled': o.enableRag,
    Autoscaling: o.enableAutoscaling,
    Seed: o.seed,
    'Max Concurrent Allocs': o.maxConcurrentAllocs,
    'Request Rate': o.requestRate,
    'Max Requests': o.maxRequests,
    'Dataset Path': o.datasetPath ?? 'N/A',
    'Cache Dir': o.cacheDir ?? 'temp',
    'Storage Capacity (GiB)': o.storageCapacityGb,
    Precondition: o.precondition,
    'Precondition Size (GiB)': o.preconditionSizeGb,
    'Precondition Threads': o.preconditionThreads > 0 ? o.preconditionThreads : os.availableParallelism(),
    'Trace Speedup': o.traceSpeedup,
    'Replay Cycles': o.replayCycles,
    'Effective Seed (kvbench)': results.kvbench.effective_seed,
    'Direct I/O (kvbench)': results.kvbench.tiers.storage.direct_io,
    'I/O Chunk (MiB, kvbench)': o.ioChunkMib,
    'I/O Depth (kvbench)': o.ioDepth,
  };
}
