import fsp from 'node:fs/promises';
import path from 'node:path';
import { WorkloadGenerateParamsSchema, type WorkloadGenerateParams } from '../../src-shared/domain/workload-file.ts';
import { generateWorkload, warmupRepeats, WORKLOAD_GENERATE_DEFAULTS, type WarmupRepeats } from '../engine/workload/sources/workload-file.ts';
import { argparseInvalidValue } from '../util/number-text.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { emptyValueErrors, intFlag, numberFlag, type NumericFlagOptions } from './command-args.ts';
import { jsonText, printable, shownInput } from '../../src-shared/domain/label-text.ts';

const EXIT_OK = 0;
const EXIT_FAILED = 1;

const WORKLOAD_USAGE = `Usage: kvbench workload generate [options]

Workload files: fixed, replayable request batches for KV-cache offload studies.

Commands:
  generate    write a workload file (replay it with: kvbench run --dataset-path FILE)

Run "kvbench workload generate --help" for its options.
`;

interface FlagDef {
  flag: string;
  key: keyof WorkloadGenerateParams | 'out';
  kind: 'ints' | 'int' | 'float' | 'path';
  metavar: string;
  help: string;
}

const FLAGS: readonly FlagDef[] = [
  { flag: '--contexts', key: 'contexts', kind: 'ints', metavar: 'N [N ...]', help: 'target context sizes in tokens, e.g. 32768 65536 131072 (required)' },
  { flag: '--batches-per-context', key: 'batches_per_context', kind: 'int', metavar: 'N', help: 'batches per context size' },
  { flag: '--batch-sizes', key: 'batch_sizes', kind: 'ints', metavar: 'N [N ...]', help: 'batch sizes to draw from' },
  { flag: '--prompt-pool-size', key: 'prompt_pool_size', kind: 'int', metavar: 'N', help: 'distinct prompts per context size (reused later)' },
  { flag: '--reuse-start-batch', key: 'reuse_start_batch', kind: 'int', metavar: 'N', help: 'from this batch (0-based, per context) on, requests reuse pool prompts' },
  { flag: '--reuse-ratio', key: 'reuse_ratio', kind: 'float', metavar: 'R', help: 'share of reused prompts in the reuse phase (kvbench addition)' },
  { flag: '--delay-ms', key: 'delay_ms', kind: 'float', metavar: 'MS', help: 'milliseconds between batch arrivals' },
  { flag: '--generation-tokens', key: 'generation_tokens', kind: 'int', metavar: 'N', help: 'tokens generated per request (kvbench addition)' },
  { flag: '--seed', key: 'seed', kind: 'int', metavar: 'N', help: 'random seed: the same seed and options give the same file' },
  { flag: '--out', key: 'out', kind: 'path', metavar: 'FILE', help: 'where to write the workload JSON (required)' },
];

export function workloadGenerateHelp(): string {
  const d = WORKLOAD_GENERATE_DEFAULTS as Record<string, unknown>;
  const rows = FLAGS.map((f) => {
    const def = d[f.key];
    const names = `${f.flag} ${f.metavar}`;
    return `  ${names.padEnd(34)}${f.help}${def === undefined ? '' : ` (default: ${Array.isArray(def) ? def.join(' ') : String(def)})`}`;
  });
  return [
    'Usage: kvbench workload generate --contexts N [N ...] --out FILE [options]',
    '',
    'Writes the long-context offload workload of the TensorRT-LLM KV-offload study (its',
    'workload_generator.py): per context size, a pool of distinct prompts; batches whose size is drawn',
    'from --batch-sizes; in the first --reuse-start-batch batches request i of batch b takes pool prompt',
    '(b × max(--batch-sizes) + i) mod --prompt-pool-size, as the reference does — distinct prompts only',
    'while the pool holds --reuse-start-batch × max(--batch-sizes); with a smaller pool the warm-up',
    'resends prompts (a batch larger than the pool sends some twice at once), and generate says so.',
    'Later batches reuse pool prompts (so their KV cache must be reloaded from wherever it was',
    'offloaded) or bring new ones.',
    'Replay it with `kvbench run --dataset-path FILE`; a reused prompt hits the blocks it first wrote.',
    '',
    'Options:',
    ...rows,
    `  ${'-h, --help'.padEnd(34)}show this help and exit`,
    '',
  ].join('\n');
}

type Parsed = { ok: true; params: WorkloadGenerateParams; out: string } | { ok: false; errors: string[] } | { ok: 'help' };

/** Parses `kvbench workload generate` flags (`--flag value`, `--flag=value`, lists as separate words). */
export function parseWorkloadGenerateArgs(argv: readonly string[], cwd = process.cwd()): Parsed {
  const errors: string[] = [];
  const raw: Record<string, unknown> = {};
  const given = new Set<string>();
  const byName = new Map(FLAGS.map((f) => [f.flag, f]));
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i];
    if (tok === '-h' || tok === '--help') return { ok: 'help' };
    const eq = tok.indexOf('=');
    const name = tok.startsWith('--') && eq > 0 ? tok.slice(0, eq) : tok;
    const def = byName.get(name);
    if (!def) {
      errors.push(`unrecognized argument: ${shownInput(tok)}`);
      continue;
    }
    given.add(def.key);
    const values: string[] = [];
    if (eq > 0 && tok.startsWith('--')) values.push(tok.slice(eq + 1));
    else {
      while (i + 1 < argv.length && !/^--?[a-z]/i.test(argv[i + 1])) {
        values.push(argv[++i]);
        if (def.kind !== 'ints') break;
      }
    }
    if (values.length === 0) {
      errors.push(`argument ${def.flag}: expected ${def.kind === 'ints' ? 'one or more values' : 'one value'}`);
      continue;
    }
    if (def.kind === 'path') {
      // An empty path would be the current directory: refused in kvbench run's words.
      if (values[0].trim() === '') errors.push(...emptyValueErrors({ [def.flag.slice(2)]: values[0] }, [def.flag.slice(2)]));
      else raw[def.key] = path.resolve(cwd, values[0]);
      continue;
    }
    // The reference's argparse `type=int` / `type=float`: Python's spelling and argparse's refusal
    // (finite numbers only, see number-text.ts), one line per bad value. Ranges are the schema's below.
    const type = def.kind === 'float' ? 'float' : 'int';
    const options: NumericFlagOptions = { syntax: 'python', refusal: (text) => argparseInvalidValue(def.flag, type, text) };
    const read = def.kind === 'float' ? numberFlag : intFlag;
    const nums = values.map((v) => read(def.flag, v, errors, options));
    if (nums.some((n) => n === undefined)) continue;
    raw[def.key] = def.kind === 'ints' ? nums : nums[0];
  }
  if (!given.has('contexts')) errors.push('the following argument is required: --contexts');
  if (!given.has('out')) errors.push('the following argument is required: --out');
  const { out, ...rest } = raw;
  // A stand-in for a missing or unparsable --contexts, so the other values are still checked.
  const r = WorkloadGenerateParamsSchema.safeParse({ ...WORKLOAD_GENERATE_DEFAULTS, contexts: [1], ...rest });
  if (!r.success) errors.push(...r.error.issues.map((i) => i.message));
  if (errors.length > 0 || !r.success) return { ok: false, errors: [...new Set(errors)] };
  return { ok: true, params: r.data, out: out as string };
}

/**
 * The reference's warm-up formula walks distinct prompts only with a large enough pool; with the
 * study's own parameters (pool 16, batches up to 32) it resends them, which a reader of the file would
 * not guess: those requests are GPU prefix hits, not the fill-then-offload the phase is meant to be.
 */
export function warmupNote(p: WorkloadGenerateParams, w: WarmupRepeats): string | null {
  if (w.repeated === 0 && w.inBatchDuplicates === 0) return null;
  const parts = [`${w.repeated} of ${w.warmupRequests} warm-up request(s) resend a prompt an earlier request already sent`];
  if (w.inBatchDuplicates > 0) parts.push(`${w.inBatchDuplicates} share their prompt with another request of the same batch (sent at the same time)`);
  return (
    `note: the warm-up batches (the first ${p.reuse_start_batch} per context) take pool prompt (b × ${Math.max(...p.batch_sizes)} + i) mod ${p.prompt_pool_size}, ` +
    `as the reference generator does; with --prompt-pool-size ${p.prompt_pool_size}, ${parts.join(', and ')}. ` +
    `For a warm-up of distinct prompts use --prompt-pool-size ${w.distinctPoolSize} or more.`
  );
}

/** `kvbench workload <subcommand>`. Returns the exit code. */
export async function workloadCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    process.stdout.write(WORKLOAD_USAGE);
    return EXIT_OK;
  }
  if (sub !== 'generate') {
    process.stderr.write(`kvbench workload: unknown command '${sub}'\n\n${WORKLOAD_USAGE}`);
    return EXIT_FAILED;
  }
  const parsed = parseWorkloadGenerateArgs(rest);
  if (parsed.ok === 'help') {
    process.stdout.write(workloadGenerateHelp());
    return EXIT_OK;
  }
  if (!parsed.ok) {
    process.stderr.write(`kvbench workload generate: invalid arguments:\n  ${parsed.errors.join('\n  ')}\n`);
    return EXIT_FAILED;
  }
  const workload = generateWorkload(parsed.params);
  try {
    await fsp.mkdir(path.dirname(parsed.out), { recursive: true });
    await writeFileAtomic(parsed.out, `${jsonText(workload, 2)}\n`);
  } catch (err) {
    process.stderr.write(`kvbench workload generate: cannot write ${printable(parsed.out)}: ${printable((err as Error).message)}\n`);
    return EXIT_FAILED;
  }
  const requests = workload.batches.reduce((n, b) => n + b.requests.length, 0);
  const prompts = new Set(workload.batches.flatMap((b) => b.requests.map((r) => r.prompt_id))).size;
  const reused = workload.batches.reduce((n, b) => n + b.requests.filter((r) => r.reused).length, 0);
  process.stdout.write(`wrote ${workload.batches.length} batches (${requests} requests, ${prompts} distinct prompts, ${reused} reused) to ${printable(parsed.out)}\n`);
  const note = warmupNote(parsed.params, warmupRepeats(workload, parsed.params));
  if (note) process.stdout.write(`${note}\n`);
  return EXIT_OK;
}
