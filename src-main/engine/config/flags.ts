/**
 * The `kvbench run` flags: one table drives the CLI parser, the `--help` text and the config file's
 * `run:` section (whose keys are the flags' snake_case names, as argparse's `dest`).
 *
 * Names, aliases, defaults and choices follow the reference's `kv_cache/cli.py`. The reference defines
 * no aliases; `--users` and `--cpu-memory-gb` are accepted because the reference's own published
 * invocations (MLPerf v3 recommended invocations, discovery results) use them.
 */
import {
  AUTOSCALER_MODES,
  DIRECT_IO_MODES,
  FSYNC_POLICIES,
  GENERATION_MODES,
  LOG_LEVELS,
  MAX_IO_CHUNK_MIB,
  MAX_IO_DEPTH,
  PERFORMANCE_PROFILES,
  PROMOTION_POLICIES,
  type RunOptionKey,
} from '../../../src-shared/domain/run-options.ts';
import { SYSTEM_DIRECTORIES_TEXT } from './system-directories.ts';

export type FlagKind = 'int' | 'float' | 'string' | 'path' | 'bool' | 'choice';

export interface FlagSpec {
  /** The long flag, e.g. `--num-users`. */
  readonly flag: string;
  /** The RunOptions key: camelCase of the flag. */
  readonly key: Exclude<RunOptionKey, 'customModels' | 'tuning'>;
  /** Other spellings accepted on the command line. */
  readonly aliases: readonly string[];
  readonly kind: FlagKind;
  readonly choices?: readonly string[];
  /** Placeholder in the help text. */
  readonly metavar?: string;
  /** Unit of the value, shown in the help text. */
  readonly unit?: string;
  readonly help: string;
  /** Whether the reference has this flag, or it is kvbench's own. */
  readonly origin: 'reference' | 'kvbench';
  /** What the default means, when the value alone does not say (e.g. "temp dir"). */
  readonly defaultNote?: string;
}

function spec(s: Omit<FlagSpec, 'aliases' | 'origin'> & Partial<Pick<FlagSpec, 'aliases' | 'origin'>>): FlagSpec {
  return Object.freeze({ aliases: [], origin: 'reference', ...s });
}

export const RUN_FLAGS: readonly FlagSpec[] = Object.freeze([
  spec({ flag: '--log-level', key: 'logLevel', kind: 'choice', choices: LOG_LEVELS, metavar: 'LEVEL', help: 'console messages below this level are not printed (errors and the results always are)' }),
  spec({ flag: '--model', key: 'model', kind: 'string', metavar: 'NAME', help: 'model whose KV-cache geometry sizes every entry (built in, or added by --config)' }),
  spec({ flag: '--num-users', key: 'numUsers', aliases: ['--users'], kind: 'int', metavar: 'N', unit: 'users', help: 'concurrent simulated users (1..100000)' }),
  spec({ flag: '--duration', key: 'duration', kind: 'int', metavar: 'S', unit: 's', help: 'benchmark duration (1..86400)' }),
  spec({ flag: '--gpu-mem-gb', key: 'gpuMemGb', kind: 'float', metavar: 'GIB', unit: 'GiB per GPU', help: 'GPU tier budget per GPU; the tier is --num-gpus × this; 0 disables it' }),
  spec({ flag: '--num-gpus', key: 'numGpus', kind: 'int', metavar: 'N', unit: 'GPUs', help: 'GPUs in the tensor-parallel group' }),
  spec({ flag: '--tensor-parallel', key: 'tensorParallel', kind: 'int', metavar: 'TP', help: 'tensor-parallel degree: each entry is 1/TP of its bytes (1 <= TP <= --num-gpus)' }),
  spec({ flag: '--cpu-mem-gb', key: 'cpuMemGb', aliases: ['--cpu-memory-gb'], kind: 'float', metavar: 'GIB', unit: 'GiB', help: "CPU tier budget, held as real bytes in RAM: must fit in this machine's memory less 2 GiB, so below about 34 GiB of RAM pass a smaller value; 0 disables the CPU tier" }),
  spec({ flag: '--cache-dir', key: 'cacheDir', kind: 'path', metavar: 'DIR', help: `storage tier directory; refused, also behind a symbolic link: ${SYSTEM_DIRECTORIES_TEXT}`, defaultNote: 'a new temporary directory' }),
  spec({ flag: '--generation-mode', key: 'generationMode', kind: 'choice', choices: GENERATION_MODES, metavar: 'MODE', help: 'simulated GPU time per generated token: none 0, fast 2 ms, realistic 30 ms' }),
  spec({ flag: '--performance-profile', key: 'performanceProfile', kind: 'choice', choices: PERFORMANCE_PROFILES, metavar: 'PROFILE', help: 'which pass/fail criteria apply (a tool feature, not an MLPerf rule)' }),
  spec({ flag: '--disable-multi-turn', key: 'disableMultiTurn', kind: 'bool', help: 'no multi-turn conversations: every request gets a unique key' }),
  spec({ flag: '--disable-prefix-caching', key: 'disablePrefixCaching', kind: 'bool', help: 'no shared system-prompt prefix entries' }),
  spec({ flag: '--enable-rag', key: 'enableRag', kind: 'bool', help: 'add the RAG workload (document ingest, chunk retrieval)' }),
  spec({ flag: '--rag-num-docs', key: 'ragNumDocs', kind: 'int', metavar: 'N', unit: 'documents', help: 'RAG documents to ingest' }),
  spec({ flag: '--enable-autoscaling', key: 'enableAutoscaling', kind: 'bool', help: 'let the autoscaler add and remove users' }),
  spec({ flag: '--autoscaler-mode', key: 'autoscalerMode', kind: 'choice', choices: AUTOSCALER_MODES, metavar: 'MODE', help: 'autoscaling strategy' }),
  spec({ flag: '--target-saturation', key: 'targetSaturation', kind: 'float', metavar: 'F', unit: 'fraction', help: 'target storage saturation for the qos autoscaler (0.0..1.0)' }),
  spec({ flag: '--use-burst-trace', key: 'useBurstTrace', kind: 'bool', help: 'replay a BurstGPT trace instead of synthetic users' }),
  spec({ flag: '--burst-trace-path', key: 'burstTracePath', kind: 'path', metavar: 'PATH', help: 'BurstGPT CSV file, directory of CSV files, or glob (must exist with --use-burst-trace)' }),
  spec({ flag: '--validation-trace', key: 'validationTrace', kind: 'path', metavar: 'FILE', help: 'trace whose hit rate the run is compared with (must exist)', defaultNote: 'none' }),
  spec({ flag: '--dataset-path', key: 'datasetPath', kind: 'path', metavar: 'FILE', help: 'a dataset or trace to replay, its format told from its content: ShareGPT JSON, Mooncake JSONL, Azure or BurstGPT CSV, or a kvbench workload file (must exist)', defaultNote: 'none: synthetic users' }),
  spec({ flag: '--max-conversations', key: 'maxConversations', kind: 'int', metavar: 'N', unit: 'conversations', help: 'conversations read from the ShareGPT dataset' }),
  spec({ flag: '--output', key: 'output', kind: 'path', metavar: 'FILE', help: 'results JSON', defaultNote: 'benchmark_results_<YYYYmmdd_HHMMSS>.json' }),
  spec({ flag: '--seed', key: 'seed', kind: 'int', metavar: 'N', help: 'seed: the whole run is deterministic (0..4294967295)', defaultNote: 'none: unseeded' }),
  spec({ flag: '--max-concurrent-allocs', key: 'maxConcurrentAllocs', kind: 'int', metavar: 'N', unit: 'allocations', help: 'bound on concurrent allocations (data production + placement + write); 0 = unlimited' }),
  spec({ flag: '--request-rate', key: 'requestRate', kind: 'float', metavar: 'R', unit: 'requests/s', help: 'target arrival rate; 0 = unlimited' }),
  spec({ flag: '--max-requests', key: 'maxRequests', kind: 'int', metavar: 'N', unit: 'requests', help: 'stop after N completed requests; 0 = use --duration only' }),
  spec({ flag: '--xlsx-output', key: 'xlsxOutput', kind: 'path', metavar: 'FILE', help: 'also write an Excel workbook; the name must end in .xlsx (the reference wrote CSV for other names; kvbench refuses them)', defaultNote: 'none' }),
  spec({ flag: '--config', key: 'config', kind: 'path', metavar: 'FILE', help: 'YAML config (strict keys); explicit flags override its values (must exist)', defaultNote: 'none' }),
  spec({ flag: '--storage-capacity-gb', key: 'storageCapacityGb', kind: 'float', metavar: 'GIB', unit: 'GiB', help: 'storage tier capacity; 0 = 95 % of the free space at start (÷ --world-size for the ranks of a multi-host run, which share it)' }),
  spec({ flag: '--precondition', key: 'precondition', kind: 'bool', help: 'fill the storage tier first, then reset statistics' }),
  spec({ flag: '--precondition-size-gb', key: 'preconditionSizeGb', kind: 'float', metavar: 'GIB', unit: 'GiB', help: 'bytes written by preconditioning; 0 = 2 × storage capacity' }),
  spec({ flag: '--precondition-threads', key: 'preconditionThreads', kind: 'int', metavar: 'N', unit: 'threads', help: 'preconditioning writers; 0 = one per CPU' }),
  spec({ flag: '--trace-speedup', key: 'traceSpeedup', kind: 'float', metavar: 'X', unit: '×', help: 'BurstGPT replay speed factor; 0 = no pacing' }),
  spec({ flag: '--replay-cycles', key: 'replayCycles', kind: 'int', metavar: 'N', unit: 'passes', help: 'passes through the trace or dataset; 0 = loop until --duration' }),
  spec({ flag: '--prefill-only', key: 'prefillOnly', kind: 'bool', help: 'disaggregated prefill node: no decode reads, but earlier turns are still reloaded and cached prefixes read, as in the reference; add --disable-multi-turn --disable-prefix-caching for a write-only run of synthetic users (excludes --decode-only)' }),
  spec({ flag: '--decode-only', key: 'decodeOnly', kind: 'bool', help: 'disaggregated decode node: reads of pre-populated entries (excludes --prefill-only)' }),
  spec({ flag: '--io-trace-log', key: 'ioTraceLog', kind: 'path', metavar: 'FILE', help: 'trace-only mode: no I/O; log every logical I/O to this CSV', defaultNote: 'none' }),
  spec({ flag: '--enable-latency-tracing', key: 'enableLatencyTracing', kind: 'bool', help: "the reference's bpftrace device-latency tracing: not implemented in kvbench, so the flag is refused" }),
  // kvbench additions
  spec({ flag: '--io-chunk-mib', key: 'ioChunkMib', kind: 'int', metavar: 'MIB', unit: 'MiB', help: `size of one storage I/O request (1..${MAX_IO_CHUNK_MIB})`, origin: 'kvbench' }),
  spec({ flag: '--io-depth', key: 'ioDepth', kind: 'int', metavar: 'N', unit: 'I/Os', help: `storage I/O requests in flight (1..${MAX_IO_DEPTH})`, origin: 'kvbench' }),
  spec({ flag: '--direct-io', key: 'directIo', kind: 'choice', choices: DIRECT_IO_MODES, metavar: 'MODE', help: 'bypass the page cache: auto = where the filesystem allows (results say when not)', origin: 'kvbench' }),
  spec({ flag: '--verify', key: 'verify', kind: 'bool', help: 'check every entry read back against its deterministic contents', origin: 'kvbench' }),
  spec({ flag: '--fsync-policy', key: 'fsyncPolicy', kind: 'choice', choices: FSYNC_POLICIES, metavar: 'POLICY', help: 'fdatasync each entry after writing it (direct I/O too: flushes allocation metadata and the drive cache), or never', origin: 'kvbench' }),
  spec({ flag: '--autoscaler-interval', key: 'autoscalerInterval', kind: 'float', metavar: 'S', unit: 's', help: 'seconds between autoscaler decisions (the reference: 10)', origin: 'kvbench' }),
  spec({ flag: '--probe-result', key: 'probeResult', kind: 'path', metavar: 'FILE', help: 'a kvbench probe result (kvbench probe --dir DIR --output FILE): the run states its storage bandwidth as a share of the probed limit', defaultNote: 'none', origin: 'kvbench' }),
  spec({ flag: '--warm-up', key: 'warmUp', kind: 'int', metavar: 'S', unit: 's', help: 'run the workload this long before the measured window opens (fio ramp_time), so requests in flight at its start and end balance out; 0 = measure from the first request', origin: 'kvbench' }),
  spec({ flag: '--rank', key: 'rank', kind: 'int', metavar: 'N', help: "this host's rank in a multi-host run: its own cache subdirectory rank-N, seed + N, results file name with .rankN (or {rank} in the name); see kvbench merge", defaultNote: "the launcher's: the first set of OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID, PMIX_RANK, JOB_COMPLETION_INDEX; else one host", origin: 'kvbench' }),
  spec({ flag: '--world-size', key: 'worldSize', kind: 'int', metavar: 'N', unit: 'ranks', help: 'ranks in the multi-host run (kvbench merge checks that all are there)', defaultNote: "the launcher's, else unknown", origin: 'kvbench' }),
  spec({ flag: '--start-at', key: 'startAt', kind: 'float', metavar: 'T', unit: 'Unix s', help: 'wait until this wall-clock time before starting the workload, so every rank starts together (START=$(( $(date +%s) + 60 )) once in the job script)', defaultNote: 'at once', origin: 'kvbench' }),
  spec({ flag: '--promotion', key: 'promotion', kind: 'choice', choices: PROMOTION_POLICIES, metavar: 'POLICY', help: 'on-hit: move a hit entry up to the fastest tier with room (the reference never promotes)', origin: 'kvbench' }),
]);

/** `--num-users` → `num_users`: the key of a flag in the config file's `run:` section. */
export function configKeyOf(s: FlagSpec): string {
  return s.flag.slice(2).replaceAll('-', '_');
}

/** Flags settable from a config file's `run:` section (all but `--config` itself). */
export const CONFIG_RUN_FLAGS: ReadonlyMap<string, FlagSpec> = new Map(
  RUN_FLAGS.filter((s) => s.key !== 'config').map((s) => [configKeyOf(s), s]),
);

/** Every accepted spelling (flag and aliases) → its spec. */
export const FLAG_BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(
  RUN_FLAGS.flatMap((s) => [s.flag, ...s.aliases].map((name) => [name, s] as const)),
);

export const FLAG_BY_KEY: ReadonlyMap<string, FlagSpec> = new Map(RUN_FLAGS.map((s) => [s.key, s]));

/** A run option as the CLI names it, by its flag (`numUsers` → `--num-users`); one without a flag (the config file's `tuning`) by its key. */
export function optionFlag(key: string): string {
  return FLAG_BY_KEY.get(key)?.flag ?? key;
}

/** Levenshtein distance, for "did you mean" hints. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** The closest candidate within a small distance, or undefined. */
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(name.length / 4)) ? best : undefined;
}
