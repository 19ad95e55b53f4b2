/**
 * `kvbench run …`: command-line flags → validated {@link RunOptions}.
 *
 * Accepts the reference's command line unchanged (`python kv-cache.py --model llama3.1-8b --users 200 …`
 * → `kvbench run --model llama3.1-8b --users 200 …`): every flag of `kv_cache/cli.py`, `--flag value`
 * and `--flag=value`, unique prefixes of flags as argparse allows them (`--gen none`), negative numbers
 * as values (so they reach the range checks), the last of repeated flags wins. Unlike argparse, which
 * stops at the first problem, every problem is collected and returned together.
 *
 * Order of precedence: defaults < `--config` file < flags typed on the command line.
 * Relative paths are made absolute (command-line ones against `env.cwd`, config ones against the config
 * file's directory), so the options mean the same in an engine process started elsewhere.
 *
 * Parsing reads the file system (config file, existence of input files, the cache directory's real path
 * and its parent's permissions) and never writes to it.
 */
import { accessSync, constants as fsConstants, globSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { printable, shownInput } from '../../../src-shared/domain/label-text.ts';
import { availableModelNames } from '../../../src-shared/domain/models.ts';
import { DEFAULT_RUN_OPTIONS, MAX_SEED, RUN_OPTION_KEYS, RunOptionsFieldSchemas, validateRunOptions, type RunOptions } from '../../../src-shared/domain/run-options.ts';
import { FLAG_BY_KEY, FLAG_BY_NAME, RUN_FLAGS, closest, type FlagSpec } from './flags.ts';
import { cpuTierMemoryError } from './cpu-tier-memory.ts';
import { loadConfigFile } from './load-config.ts';
import { RANK_PLACEHOLDER, launcherVariableWarnings, rankCacheDirName, rankedFileName, resolveRank, type RankInfo } from './ranks.ts';
import { isSameFile, resolveRealPath, systemDirectoryOf } from './system-directories.ts';
import { nearestExisting } from '../../hardware/linux-storage.ts';
import { isoTimeOrNull } from '../../../src-shared/domain/iso-time.ts';
import { argparseInvalidValue, numberText } from '../../util/number-text.ts';
import { outputFileProblem, resolveOutputTarget } from '../../util/write-file-atomic.ts';

export interface ParseRunArgsEnv {
  /** Directory that relative command-line paths are resolved against. Default: `process.cwd()`. */
  readonly cwd?: string;
  /** Clock for the default `--output` name. Default: the current time. */
  readonly now?: () => Date;
  /**
   * The machine the run is about to execute on (`kvbench run`), for the checks that only hold there:
   * the CPU tier fits in its RAM, and no feature kvbench lacks is asked for. Absent when the flags
   * describe a run made elsewhere (`kvbench import --run-flags`): that run happened, whatever this
   * machine or this build could do.
   */
  readonly runsHere?: { readonly totalMemoryBytes: number };
  /**
   * Keep paths as the flags wrote them, and the BurstGPT default as the option's own default, not
   * resolved against `cwd`: flags that describe a run made elsewhere (`kvbench import --run-flags`),
   * whose relative paths were that run's, not the importing directory's. The checks of the files
   * still look them up from this process's directory.
   */
  readonly pathsAsGiven?: boolean;
  /**
   * The process environment, where a launcher (mpirun, Slurm, Kubernetes) may have set this
   * process's rank. Absent: only --rank and --world-size say.
   */
  readonly launcherEnv?: NodeJS.ProcessEnv;
}

export type ParseRunArgsResult =
  /**
   * `rank`: this process's place in a multi-host run (its options already made its own); null on one host.
   * `given`: the options the command line or its config file set; the rest of `options` are defaults.
   */
  | { ok: true; options: RunOptions; warnings: string[]; rank: RankInfo | null; given: string[] }
  | { ok: false; errors: string[] }
  /** `--help`/`-h` was given: print `text` and exit successfully. */
  | { ok: 'help'; text: string };

const HELP_NAMES = new Set(['-h', '--help']);
/** Further than this, --start-at is a mistake (milliseconds for seconds, a wrong date), not a plan. */
const MAX_START_AT_WAIT_MS = 24 * 3600 * 1000;

/** Parse and validate `kvbench run` arguments (without the `run` word). Never throws. */
export function parseRunArgs(argv: readonly string[], env: ParseRunArgsEnv = {}): ParseRunArgsResult {
  return parseRunArgsInto(argv, env, {});
}

/**
 * {@link parseRunArgs}, also filling `merged` with the options the command line and its config file
 * set (absolute paths, before defaults and validation), whatever the outcome: for the checks that read
 * the input files' contents (`run-input-files.ts`), so their problems join the others.
 */
export function parseRunArgsInto(argv: readonly string[], env: ParseRunArgsEnv, merged: Record<string, unknown>): ParseRunArgsResult {
  const cwd = resolve(env.cwd ?? process.cwd());
  const now = env.now ?? (() => new Date());
  const errors: string[] = [];
  const warnings: string[] = [];
  const cli: Record<string, unknown> = {};
  // Options whose value is unknown: typed but refused (`--cpu-mem-gb ''`), or perhaps set by a config
  // file that could not be read. No later check judges the default standing in for them, so each bad
  // value gets its own error and no follow-on one.
  const refused = new Set<string>();

  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    if (HELP_NAMES.has(tok)) return { ok: 'help', text: runHelpText() };
    if (tok === '--') {
      if (i + 1 < argv.length) errors.push(`unrecognized arguments: ${argv.slice(i + 1).map(shownInput).join(' ')}`);
      break;
    }
    if (!looksLikeOption(tok)) {
      errors.push(`unrecognized arguments: ${shownInput(tok)}`);
      continue;
    }
    const eq = tok.indexOf('=');
    const name = eq >= 0 ? tok.slice(0, eq) : tok;
    const inline = eq >= 0 ? tok.slice(eq + 1) : undefined;

    const found = lookupFlag(name);
    if (found === 'help') return { ok: 'help', text: runHelpText() };
    if ('ambiguous' in found || 'unknown' in found) {
      // Take the flag's value with it (argparse reports "--foo 5" together), so the value is not
      // reported again as a stray argument.
      const next = argv[i + 1];
      const shown = inline === undefined && next !== undefined && !looksLikeOption(next) ? `${shownInput(tok)} ${shownInput(argv[++i])}` : shownInput(tok);
      errors.push('ambiguous' in found ? found.ambiguous : `unrecognized arguments: ${shown}${hint(name)}`);
      continue;
    }

    const spec = found.spec;
    if (spec.kind === 'bool') {
      if (inline !== undefined) errors.push(`argument ${spec.flag}: ignored explicit argument '${inline}'`);
      else cli[spec.key] = true;
      continue;
    }
    let raw = inline;
    if (raw === undefined && i + 1 < argv.length && !looksLikeOption(argv[i + 1])) raw = argv[++i];
    if (raw === undefined) {
      errors.push(`argument ${spec.flag}: expected one argument`);
      continue;
    }
    const converted = convert(spec, raw);
    if (!converted.ok) {
      errors.push(converted.error);
      refused.add(spec.key);
      continue;
    }
    refused.delete(spec.key); // the last of repeated flags wins
    cli[spec.key] = spec.kind === 'path' && !env.pathsAsGiven ? resolve(cwd, converted.value as string) : converted.value;
  }

  // --config first, so that flags typed on the command line override it.
  if (typeof cli.config === 'string') {
    const loaded = loadConfigFile(cli.config);
    if (loaded.ok) {
      Object.assign(merged, loaded.config.run);
      merged.customModels = loaded.config.customModels;
      merged.tuning = loaded.config.tuning;
    } else {
      errors.push(...loaded.errors);
      for (const key of RUN_OPTION_KEYS) if (!(key in cli)) refused.add(key);
    }
  }
  Object.assign(merged, cli);
  const given = Object.keys(merged);
  merged.output ??= resolve(cwd, defaultOutputName(now()));
  merged.burstTracePath ??= env.pathsAsGiven ? DEFAULT_RUN_OPTIONS.burstTracePath : resolve(cwd, DEFAULT_RUN_OPTIONS.burstTracePath);
  const rank = resolveRank(
    { rank: typeof merged.rank === 'number' ? merged.rank : null, worldSize: typeof merged.worldSize === 'number' ? merged.worldSize : null },
    env.launcherEnv ?? {},
  );
  if (typeof merged.rank !== 'number' && env.launcherEnv) warnings.push(...launcherVariableWarnings(env.launcherEnv));
  // Without a rank, every host would plan on all of the free space and write the same results file.
  // Only where the launcher's environment was read: imported flags (`import --run-flags`) leave it out.
  if (!rank && env.launcherEnv && typeof merged.worldSize === 'number' && merged.worldSize > 1) {
    errors.push(
      `--world-size ${merged.worldSize} but no rank: give each host --rank N, or start the hosts with a launcher that sets ` +
        'the rank (mpirun, srun, a Kubernetes Indexed Job; see docs/multi-host.md)',
    );
  }
  // `{rank}` names a file per rank; with no rank, every host would write the one literal name.
  if (!rank && env.launcherEnv) {
    for (const key of RANK_OWN_FILES) {
      const file = merged[key];
      if (typeof file === 'string' && file.includes(RANK_PLACEHOLDER)) {
        errors.push(
          `${FLAG_BY_KEY.get(key)!.flag} ${printable(file)} has ${RANK_PLACEHOLDER}, but this run is not a rank of a multi-host run ` +
            '(no --rank, and no launcher started several processes): give --rank N --world-size W, or leave it out',
        );
      }
    }
  }
  // A rank outside its world is refused with the other options (run-options' cross-field rules); one
  // that is no rank at all (`--rank -1`) by its own check, with nothing said of its world.
  if (rank && RunOptionsFieldSchemas.rank.safeParse(rank.rank).success) {
    Object.assign(merged, rankOwnOptions(merged, rank));
    const autoCapacity = !(typeof merged.storageCapacityGb === 'number' && merged.storageCapacityGb > 0);
    if (rank.worldSize === null && autoCapacity && typeof merged.ioTraceLog !== 'string') {
      errors.push(
        `rank ${rank.rank} (from ${rank.source}) has no world size: give --world-size, so that the ranks share the free space ` +
          'of the shared storage instead of each planning on 95 % of it, or give each rank --storage-capacity-gb',
      );
    }
  }

  const validated = validateRunOptions(merged, [...refused]);
  if (!validated.ok) errors.push(...validated.errors);
  errors.push(...fileSystemErrors(merged));
  errors.push(...sameOutputFileErrors(merged));
  // With the defaults: the default --cpu-mem-gb must fit too.
  if (env.runsHere) errors.push(...runsHereErrors(withDefaults(merged, refused), env.runsHere));
  if (env.runsHere && typeof merged.startAt === 'number' && merged.startAt * 1000 - now().getTime() > MAX_START_AT_WAIT_MS) {
    // A time past any date (milliseconds or nanoseconds given for seconds) is said without one.
    const when = isoTimeOrNull(merged.startAt * 1000);
    errors.push(
      `--start-at ${merged.startAt} is ${when !== null ? `${when}, more than a day away` : 'more than a day away (past the year 275760)'}: ` +
        'give a Unix time in seconds, e.g. START=$(( $(date +%s) + 60 ))',
    );
  }
  warnings.push(...runWarnings(merged));

  if (errors.length > 0 || !validated.ok) return { ok: false, errors: dedupe(errors) };
  return { ok: true, options: validated.options, warnings, rank, given };
}

// ---------------------------------------------------------------------------------------------
// Tokens

/** An option, as argparse sees it: starts with '-' and is not a negative number. */
function looksLikeOption(tok: string): boolean {
  return tok.length > 1 && tok.startsWith('-') && !/^-(\d|\.\d)/.test(tok);
}

const REFERENCE_FLAGS = RUN_FLAGS.filter((s) => s.origin === 'reference');

type Lookup = { spec: FlagSpec } | { unknown: true } | { ambiguous: string } | 'help';

/** Find a flag by name or, as argparse allows, by a unique prefix. */
function lookupFlag(name: string): Lookup {
  const exact = FLAG_BY_NAME.get(name);
  if (exact) return { spec: exact };
  if (!name.startsWith('--') || name.length < 3) return { unknown: true };
  if ('--help'.startsWith(name) && ![...FLAG_BY_NAME.keys()].some((n) => n.startsWith(name))) return 'help';
  // The reference's own flags first, so a prefix that was unique there stays unique with kvbench's additions.
  const ref = REFERENCE_FLAGS.filter((s) => s.flag.startsWith(name));
  if (ref.length === 1) return { spec: ref[0] };
  const matches = new Map<FlagSpec, string>();
  for (const [n, s] of FLAG_BY_NAME) if (n.startsWith(name) && !matches.has(s)) matches.set(s, n);
  if (matches.size === 1) return { spec: [...matches.keys()][0] };
  if (matches.size > 1) return { ambiguous: `ambiguous option: ${name} could match ${[...matches.values()].join(', ')}` };
  return { unknown: true };
}

function hint(name: string): string {
  const c = closest(name, FLAG_BY_NAME.keys());
  return c ? ` (did you mean ${c}?)` : '';
}

type Converted = { ok: true; value: unknown } | { ok: false; error: string };

/** Python's int()/float() on a flag value, as argparse's `type=`; finite values only. */
function convert(spec: FlagSpec, raw: string): Converted {
  if (spec.kind === 'int' || spec.kind === 'float') {
    // Given empty (a script's unset variable), said as every other flag given empty is said.
    if (raw.trim() === '') return { ok: false, error: `${spec.flag} must not be empty` };
    const v = numberText(spec.kind === 'int' ? 'integer' : 'decimal', 'python').safeParse(raw);
    if (!v.success) return { ok: false, error: argparseInvalidValue(spec.flag, spec.kind, raw) };
    return { ok: true, value: v.data };
  }
  // An empty path would resolve to the current directory: `--cache-dir ""` would quietly make it the storage tier.
  if (spec.kind === 'path' && raw === '') return { ok: false, error: `${spec.flag} must not be empty` };
  // Choices are checked by the schema, with argparse's "invalid choice" text.
  return { ok: true, value: raw };
}

/** The files each rank writes under its own name (`.rankN`, or `{rank}` in the name). */
const RANK_OWN_FILES = ['output', 'xlsxOutput', 'ioTraceLog'] as const;

/**
 * What a rank keeps to itself: its own cache subdirectory, seed + rank (the reference's rule), and
 * its own output files, so ranks on shared storage neither delete nor overwrite each other's.
 */
function rankOwnOptions(o: Record<string, unknown>, r: RankInfo): Record<string, unknown> {
  const own: Record<string, unknown> = { rank: r.rank, worldSize: r.worldSize };
  // Wrapped into the seed's range, so a seed that works on one host works on every rank.
  if (typeof o.seed === 'number') own.seed = (o.seed + r.rank) % (MAX_SEED + 1);
  if (typeof o.cacheDir === 'string' && o.cacheDir.length > 0) own.cacheDir = join(o.cacheDir, rankCacheDirName(r.rank));
  for (const key of RANK_OWN_FILES) {
    const file = o[key];
    if (typeof file !== 'string' || file.length === 0) continue;
    // A pipe or device (`--output /dev/stdout`) is each host's own already: a ranked name beside
    // it would be a new file among the devices.
    if (!file.includes(RANK_PLACEHOLDER) && resolveOutputTarget(file).kind !== 'replace') continue;
    own[key] = rankedFileName(file, r.rank);
  }
  return own;
}

/** The reference's default output name, `benchmark_results_YYYYmmdd_HHMMSS.json`, in local time. */
export function defaultOutputName(at: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${at.getFullYear()}${p(at.getMonth() + 1)}${p(at.getDate())}_${p(at.getHours())}${p(at.getMinutes())}${p(at.getSeconds())}`;
  return `benchmark_results_${stamp}.json`;
}

// ---------------------------------------------------------------------------------------------
// File-system checks (read-only)

function fileSystemErrors(o: Record<string, unknown>): string[] {
  const errors: string[] = [];

  if (typeof o.cacheDir === 'string' && o.cacheDir.length > 0) {
    const real = resolveRealPath(o.cacheDir);
    if (systemDirectoryOf(real)) {
      errors.push(`--cache-dir cannot be a system directory: ${printable(real)}`);
    } else {
      const st = statOrUndefined(real);
      if (st && !st.isDirectory()) errors.push(`--cache-dir is not a directory: ${printable(real)}`);
      else if (st && !writable(real)) errors.push(`--cache-dir is not writable: ${printable(real)}`);
      else if (!st) {
        // The run creates it: its nearest existing ancestor must be a writable directory (a path
        // under a file failed in the engine with "ENOTDIR … stat").
        const { resolved: ancestor } = nearestExisting(real);
        if (!statOrUndefined(ancestor)?.isDirectory()) errors.push(`--cache-dir cannot be created: ${printable(real)}: ${printable(ancestor)} is a file, not a directory`);
        else if (!writable(ancestor)) errors.push(`--cache-dir parent is not writable: ${ancestor}`);
      }
    }
  }

  for (const [key, flag] of [['datasetPath', '--dataset-path'], ['validationTrace', '--validation-trace']] as const) {
    const p = o[key];
    if (typeof p !== 'string' || p.length === 0) continue;
    const st = statOrUndefined(p);
    if (!st) errors.push(`${flag} does not exist: ${printable(p)}`);
    else if (!st.isFile()) errors.push(`${flag} is not a file: ${printable(p)}`);
  }

  if (o.useBurstTrace === true && typeof o.burstTracePath === 'string') errors.push(...burstTraceErrors(o.burstTracePath));
  return errors;
}

/** What this machine and this build cannot run: refused here with the other problems, before anything starts. */
function runsHereErrors(o: Record<string, unknown>, machine: { readonly totalMemoryBytes: number }): string[] {
  const errors: string[] = [];
  // Trace-only mode moves no bytes, so any CPU tier size is fine there.
  const memory = typeof o.cpuMemGb === 'number' && typeof o.ioTraceLog !== 'string' ? cpuTierMemoryError(o.cpuMemGb, machine.totalMemoryBytes) : null;
  if (memory !== null) errors.push(memory);
  // The reference wrote a CSV of the summary row for any other name; kvbench writes only workbooks, and
  // an Excel file under a .csv name would mislead whatever reads it next.
  if (typeof o.xlsxOutput === 'string' && !/\.xlsx$/i.test(o.xlsxOutput)) {
    errors.push(`--xlsx-output must name a .xlsx file (kvbench writes only Excel workbooks, not the reference's CSV for other names), got ${shownInput(o.xlsxOutput)}`);
  }
  if (o.enableLatencyTracing === true) {
    errors.push("--enable-latency-tracing (the reference's bpftrace device-latency tracing) is not implemented in kvbench; run without it");
  }
  // Before minutes of benchmarking: what the run writes can be written where asked (a run made
  // elsewhere has written its files already).
  for (const [key, flag] of OUTPUT_FILES) {
    const file = o[key];
    if (typeof file === 'string' && file.length > 0) {
      const problem = outputFileError(file, key);
      if (problem !== null) errors.push(`${flag}: ${problem}`);
    }
  }
  return errors;
}

/**
 * Why the run could not write `file`, judged as the write will go: through links, and into a pipe or
 * device (`--output /dev/stdout`) as it is. The I/O trace is the exception: streamed to NAME.partial
 * beside it and renamed into place, it needs a file name.
 */
function outputFileError(file: string, key: (typeof OUTPUT_FILES)[number][0]): string | null {
  const problem = outputFileProblem(file);
  if (problem !== null) return `cannot write ${printable(file)}: ${problem}`;
  if (key === 'ioTraceLog' && resolveOutputTarget(file).kind !== 'replace') return `cannot write ${printable(file)}: it exists and is not a regular file (the trace is written beside it, then renamed into place)`;
  return null;
}

/** Files a run writes: two of them on one path would leave only the last written (the results lost). */
const OUTPUT_FILES = [
  ['output', '--output'],
  ['xlsxOutput', '--xlsx-output'],
  ['ioTraceLog', '--io-trace-log'],
] as const;

/** Files a run reads: an output on one of them would replace the input with results. */
const INPUT_FILES = [
  ['config', '--config'],
  ['datasetPath', '--dataset-path'],
  ['validationTrace', '--validation-trace'],
  ['probeResult', '--probe-result'],
  ['burstTracePath', '--burst-trace-path'],
] as const;

function sameOutputFileErrors(o: Record<string, unknown>): string[] {
  const errors: string[] = [];
  const seen = new Map<string, string>();
  for (const [key, flag] of OUTPUT_FILES) {
    const p = o[key];
    if (typeof p !== 'string' || p.length === 0) continue;
    // Real paths: a symbolic link or a `dir/../` spelling is still the same file.
    const real = resolveRealPath(p);
    const earlier = seen.get(real);
    if (earlier) errors.push(`${earlier} and ${flag} name the same file: ${printable(real)}`);
    else seen.set(real, flag);
  }
  for (const [key, inputFlag] of INPUT_FILES) {
    const p = o[key];
    // The BurstGPT path (a default is always set) is read only with --use-burst-trace.
    if (typeof p !== 'string' || p.length === 0 || (key === 'burstTracePath' && o.useBurstTrace !== true)) continue;
    for (const [outReal, outputFlag] of seen) {
      if (isSameFile(outReal, p)) errors.push(`${outputFlag} names the ${inputFlag} input file, which the run would overwrite: ${printable(resolveRealPath(p))}`);
    }
  }
  return errors;
}

/** The reference accepts a CSV file, a directory of CSV files, or a glob pattern. */
function burstTraceErrors(p: string): string[] {
  if (/[*?[]/.test(p)) {
    let matches: string[] = [];
    try {
      matches = globSync(p);
    } catch {
      /* an unreadable directory matches nothing */
    }
    return matches.some((m) => statOrUndefined(m)?.isFile()) ? [] : [`--burst-trace-path: no CSV files matched: ${printable(p)}`];
  }
  const st = statOrUndefined(p);
  if (!st) return [`--burst-trace-path does not exist: ${printable(p)}`];
  if (st.isDirectory()) {
    let names: string[] = [];
    try {
      names = readdirSync(p);
    } catch {
      return [`--burst-trace-path is not readable: ${printable(p)}`];
    }
    return names.some((n) => n.endsWith('.csv')) ? [] : [`--burst-trace-path: no CSV files matched: ${printable(join(p, '*.csv'))}`];
  }
  return [];
}

/** Flags that take effect only beside another: given without it they would be ignored silently. */
const ONLY_WITH: readonly { keys: readonly string[]; needs: string; applies: (o: Record<string, unknown>) => boolean }[] = [
  { keys: ['replayCycles', 'traceSpeedup'], needs: '--use-burst-trace or --dataset-path', applies: (o) => o.useBurstTrace === true || typeof o.datasetPath === 'string' },
  { keys: ['maxConversations'], needs: '--dataset-path', applies: (o) => typeof o.datasetPath === 'string' },
  { keys: ['ragNumDocs'], needs: '--enable-rag', applies: (o) => o.enableRag === true },
  { keys: ['autoscalerMode', 'targetSaturation', 'autoscalerInterval'], needs: '--enable-autoscaling', applies: (o) => o.enableAutoscaling === true },
  { keys: ['preconditionSizeGb', 'preconditionThreads'], needs: '--precondition', applies: (o) => o.precondition === true },
];

function runWarnings(o: Record<string, unknown>): string[] {
  const warnings: string[] = [];
  const tp = o.tensorParallel;
  if (typeof tp === 'number' && tp > 1 && (tp & (tp - 1)) !== 0) {
    warnings.push(`--tensor-parallel=${tp} is not a power of 2; uncommon for real deployments but allowed`);
  }
  if (o.useBurstTrace === true && typeof o.datasetPath === 'string') {
    warnings.push('--dataset-path takes precedence over --use-burst-trace: the BurstGPT trace is not replayed');
  }
  for (const rule of ONLY_WITH) {
    if (rule.applies(o)) continue;
    // `o` holds only what the command line and the config file set: defaults are not warned about.
    for (const key of rule.keys) if (o[key] !== undefined) warnings.push(`${FLAG_BY_KEY.get(key)!.flag} has no effect without ${rule.needs}`);
  }
  return warnings;
}

function statOrUndefined(p: string) {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

function writable(p: string): boolean {
  try {
    accessSync(p, fsConstants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** `merged` over the defaults, leaving out the defaults of `refused` options: checks skip what is absent. */
function withDefaults(merged: Record<string, unknown>, refused: ReadonlySet<string>): Record<string, unknown> {
  const defaults: Record<string, unknown> = { ...DEFAULT_RUN_OPTIONS };
  for (const key of refused) delete defaults[key];
  return { ...defaults, ...merged };
}

function dedupe(xs: string[]): string[] {
  return [...new Set(xs)];
}

// ---------------------------------------------------------------------------------------------
// Help

function defaultText(spec: FlagSpec): string {
  const v = (DEFAULT_RUN_OPTIONS as Record<string, unknown>)[spec.key];
  if (spec.defaultNote && (v === null || spec.key === 'output')) return spec.defaultNote;
  if (v === null) return 'none';
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  return String(v);
}

/** `kvbench run --help`: every flag with its default and unit. */
export function runHelpText(): string {
  const rows = (origin: FlagSpec['origin']) =>
    RUN_FLAGS.filter((s) => s.origin === origin).map((s) => {
      const names = [s.flag, ...s.aliases].map((n) => (s.metavar ? `${n} ${s.metavar}` : n)).join(', ');
      const choices = s.choices ? `; one of ${s.choices.join(', ')}` : '';
      const unit = s.unit ? ` [${s.unit}]` : '';
      return { names, text: `${s.help}${choices}${unit} (default: ${defaultText(s)})` };
    });
  const reference = rows('reference');
  const own = [...rows('kvbench'), { names: '-h, --help', text: 'show this help and exit' }];
  const width = Math.max(...[...reference, ...own].map((r) => r.names.length)) + 2;
  const format = (list: { names: string; text: string }[]) => list.map((r) => `  ${r.names.padEnd(width)}${r.text}`).join('\n');
  return [
    'Usage: kvbench run [options]',
    '',
    'Run one KV-cache offload benchmark. Flags, defaults and limits are those of the MLPerf Storage v3',
    'kv-cache.py, so its command lines work unchanged. Memory sizes are GiB (1024³ bytes) although the',
    'flags say "gb", as in the reference. Values from --config apply first; flags typed on the command',
    'line override them. All problems are reported together.',
    '',
    'Options of the reference (kv-cache.py):',
    format(reference),
    '',
    'kvbench options:',
    format(own),
    '',
    `Built-in models: ${availableModelNames().join(', ')}`,
    '',
  ].join('\n');
}
