// `kvbench endpoint`: the real-engine benchmark. Replays a workload file against an OpenAI-compatible
// serving endpoint (vLLM, TensorRT-LLM's trtllm-serve, SGLang), stores the run under a system label,
// compares two systems side by side, exports runs. See docs/endpoint.md.
import { jsonText, labelTextProblem, printable, printableLines } from '../../src-shared/domain/label-text.ts';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  ENDPOINT_RUN_STATUSES,
  EndpointRunConfigSchema,
  UNSTORED_RUN_ID,
  endpointRunLimitIssues,
  type EndpointRequestSample,
  type EndpointRunConfig,
  type EndpointRunRecord,
  type EndpointRunStatus,
} from '../../src-shared/domain/endpoint.ts';
import { readWorkloadFile } from '../engine/workload/sources/workload-file.ts';
import { compareLabels } from '../endpoint/endpoint-compare.ts';
import { EndpointStore } from '../endpoint/endpoint-store.ts';
import { askedFileFolder, fileNameTime, keepInFirstDirectory, printResultsJson } from '../util/keep-file.ts';
import { FileWriteError, outputFileProblem } from '../util/write-file-atomic.ts';
import { ENDPOINT_EXPORT_FORMATS, buildEndpointExportModel, endpointFormatFromPath, writeEndpointExport, type EndpointExportFormat } from '../endpoint/endpoint-export.ts';
import { loadPromptTokenizer, randomSalt } from '../endpoint/prompt-builder.ts';
import { formatComparison, formatRun, formatRunList } from '../endpoint/render.ts';
import { appendResultsFile, checkResultsFileTarget, resultsFileText } from '../endpoint/results-file.ts';
import { batchesToReplay, maxTokensOf, workloadDigest } from '../endpoint/replay-plan.ts';
import { normalizeBaseUrl, runEndpointBenchmark, type BatchProgress } from '../endpoint/runner.ts';
import { getPage } from '../endpoint/http-get.ts';
import { defaultMetricsUrls } from '../endpoint/server-metrics.ts';
import { resolveDatabasePath } from '../store/data-dir.ts';
import type { Store } from '../store/store.ts';
import { openStoreAndRecover } from '../suite/services.ts';
import { emptyValueErrors, intFlag, intListFlag, numberFlag, parseCommandArgs } from './command-args.ts';
import { backfillOnStderr, withCommandStore } from './command-store.ts';
import { databaseOutputError } from './database-output.ts';
import { abandonsStop, signalExitCode, watchStopSignals, type StopSignal } from './stop-signals.ts';

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_PARTIAL = 3;

export const ENDPOINT_USAGE = `Usage: kvbench endpoint <command> [options]

The real-engine benchmark: replay a workload file against an OpenAI-compatible serving endpoint
(vLLM, TensorRT-LLM's trtllm-serve, SGLang …), store the run under a system label, compare systems.

Commands:
  run        replay a workload against a server and store the run (see kvbench endpoint run --help)
  compare    two system labels side by side, with ratios: kvbench endpoint compare A B
  list       stored endpoint runs
  show ID    one run in full (--requests: every request)
  export     runs to CSV, XLSX or JSON (--out FILE)
  delete ID  remove a stored run

Every command takes --db PATH (default: $KVBENCH_DB, else the user data directory).
`;

export const ENDPOINT_RUN_USAGE = `Usage: kvbench endpoint run --url URL --model NAME --workload FILE --system-label LABEL [options]

Replays the workload's batches in order against URL's OpenAI API: a batch's requests are sent
together (concurrency = the batch size), streamed, and measured (TTFT, inter-token latency,
end-to-end, tokens); the next batch goes delay_ms after the previous one finished. Prompts are built
to each request's context size; a reused prompt id gets the identical text, so the server's prefix
cache and its offload path are exercised. The server's /metrics are scraped before and after.

Required:
  --url URL                  the server, e.g. http://localhost:8000 (…/v1 is added when missing)
  --model NAME               the served model name (as in GET /v1/models)
  --workload FILE            a workload file (kvbench workload generate … --out FILE)
  --system-label LABEL       the system this run measures, e.g. pcie or c2c

Options:
  --notes TEXT               free-form notes stored with the run
  --api completions|chat     /v1/completions (default: the prompt sent as is) or /v1/chat/completions
  --temperature T            sampling temperature (default: 0)
  --top-p P                  nucleus sampling (default: 1)
  --max-tokens N             tokens to generate per request (default: each request's generation_tokens)
  --no-ignore-eos            do not send ignore_eos (for servers that reject it; outputs may end early)
  --no-stream-usage          do not send stream_options.include_usage (tokens are then counted as chunks)
  --request-timeout-s S      a request taking longer is aborted and recorded as a timeout (default: 600;
                             at most 2147483, as for --idle-timeout-s)
  --idle-timeout-s S         a stream silent this long after its first token is aborted (default:
                             120; the wait for the first token is bounded by --request-timeout-s)
  --metrics-url URL          a metrics page to scrape before and after (repeatable; default: <server>/metrics
                             and <server>/prometheus/metrics, whichever answers; "none": no scraping)
  --prompt-salt S            mixed into every prompt (default: random per run, so each run starts with
                             a cold server cache; give the same salt to replay identical texts)
  --max-batches N            replay only the first N batches
  --stop-after-dead-batches N  stop when N consecutive batches got no answer at all (default: 2)
  --output FILE              also add the run to FILE, a results JSON grouping runs by system label
  --db PATH                  the database

The API key, if the server needs one, is read from $KVBENCH_API_KEY (else $OPENAI_API_KEY) and never
stored. Exit codes: 0 complete; 3 partial (some requests failed; the run is stored); 1 failed or
invalid input; 130 interrupted by Ctrl-C (SIGINT), 143 by SIGTERM, 129 by SIGHUP (what finished is stored as
partial).
`;

function err(msg: string): number {
  process.stderr.write(`kvbench endpoint: ${printableLines(msg)}\n`);
  return EXIT_FAILED;
}

/** A failure of `endpoint run`, prefixed as the run's other lines are. */
function runErr(msg: string): number {
  process.stderr.write(`kvbench endpoint run: ${msg}\n`);
  return EXIT_FAILED;
}

/** The database for `run`, which writes: created when missing (a first run starts one). */
async function withStore<T>(dbFlag: string | undefined, fn: (s: EndpointStore, store: Store) => Promise<T> | T): Promise<T> {
  const { store } = await openStoreAndRecover(resolveDatabasePath(dbFlag), { onBackfill: backfillOnStderr('endpoint run') });
  for (const n of store.openNotes) process.stderr.write(`kvbench endpoint run: ${n}\n`);
  try {
    return await fn(new EndpointStore(store), store);
  } finally {
    store.close();
  }
}

/**
 * The database for the commands that only read it (list, show, compare, export), opened as history,
 * report and export open theirs: an explicit --db naming no file is refused as the typo it is, instead
 * of silently creating an empty database there and reporting that nothing is stored.
 */
function withReadStore(sub: string, dbFlag: string | undefined, fn: (s: EndpointStore) => Promise<number> | number): Promise<number> {
  return withCommandStore(`endpoint ${sub}`, dbFlag, { readOnly: true, listing: sub === 'list' }, (store) => fn(new EndpointStore(store)));
}

const PREFLIGHT_TIMEOUT_MS = 15_000;
/** GET /v1/models, as far as the preflight reads it. */
type ModelList = { data?: { id?: unknown; max_model_len?: unknown }[] };
/** A model list is a few KiB; a server listing thousands of models still fits. */
const MODEL_LIST_MAX_BYTES = 16 * 1024 * 1024;

/**
 * What a server says about itself before the run: reachability, the API key, the model's name, and
 * its context limit where the server lists one (vLLM's and SGLang's `max_model_len`): a request
 * longer than that is refused with HTTP 400.
 */
async function preflight(baseUrl: string, model: string, headers: Record<string, string>, longest: { tokens: number; context: number; generated: number }): Promise<{ fatal: string | null; warnings: string[] }> {
  const warnings: string[] = [];
  const got = await getPage(`${baseUrl}/models`, { headers, timeoutMs: PREFLIGHT_TIMEOUT_MS, maxBytes: MODEL_LIST_MAX_BYTES });
  if (got.kind === 'failed') {
    const why = got.timedOut ? `no answer within ${PREFLIGHT_TIMEOUT_MS / 1000} s` : got.error;
    return { fatal: `cannot reach ${baseUrl} (${why}): is the server running? Nothing was stored.`, warnings };
  }
  if (got.kind === 'status' && (got.status === 401 || got.status === 403)) {
    return { fatal: `${baseUrl}/models answered HTTP ${got.status}: the server needs an API key ($KVBENCH_API_KEY or $OPENAI_API_KEY)`, warnings };
  }
  if (got.kind !== 'page') {
    warnings.push(`${baseUrl}/models answered ${got.kind === 'status' ? `HTTP ${got.status}` : 'with a page too long to read'}: the model name is not checked`);
    return { fatal: null, warnings };
  }
  let j: ModelList | null = null;
  try {
    j = JSON.parse(got.body) as ModelList;
  } catch {
    // Not JSON: nothing listed, nothing checked (as for an empty list).
  }
  const listed = Array.isArray(j?.data) ? j!.data! : [];
  const ids = listed.map((m) => m.id).filter((x): x is string => typeof x === 'string');
  if (ids.length > 0 && !ids.includes(model)) warnings.push(`the server lists the model(s) ${ids.join(', ')}, not '${model}': requests may fail`);
  const limit = listed.find((m) => m.id === model)?.max_model_len;
  if (typeof limit === 'number' && longest.tokens > limit) {
    warnings.push(
      `the server's max_model_len for '${model}' is ${limit} tokens, but the workload's longest request is ${longest.tokens} (context ${longest.context} + ${longest.generated} generated, before any chat template): ` +
        'such requests will be refused (HTTP 400); start the server with a longer context or generate a workload with smaller contexts',
    );
  }
  return { fatal: null, warnings };
}

async function runSub(argv: string[]): Promise<number> {
  const flags = parseCommandArgs('endpoint run', ENDPOINT_RUN_USAGE, {
    args: argv,
    allowNegative: true,
    options: {
      url: { type: 'string' },
      model: { type: 'string' },
      workload: { type: 'string' },
      'system-label': { type: 'string' },
      notes: { type: 'string' },
      api: { type: 'string', default: 'completions' },
      temperature: { type: 'string' },
      'top-p': { type: 'string' },
      'max-tokens': { type: 'string' },
      'ignore-eos': { type: 'boolean', default: true },
      'stream-usage': { type: 'boolean', default: true },
      'request-timeout-s': { type: 'string' },
      'idle-timeout-s': { type: 'string' },
      'metrics-url': { type: 'string', multiple: true },
      'prompt-salt': { type: 'string' },
      'max-batches': { type: 'string' },
      'stop-after-dead-batches': { type: 'string' },
      output: { type: 'string' },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (typeof flags === 'number') return flags;
  const a = flags.values;
  const errors: string[] = [];
  for (const f of ['url', 'model', 'workload', 'system-label'] as const) if (a[f] === undefined) errors.push(`the following argument is required: --${f}`);
  // Given but empty: refused once, in the words of the schema's own checks (the list is de-duplicated).
  errors.push(...emptyValueErrors(a, ['url', 'model', 'workload', 'system-label', 'output', 'db']));
  // A control character or a bidirectional override: refused in the words every label's check uses
  // (the endpoint's own rule below, ASCII only, would refuse it too, less plainly).
  const labelProblem = a['system-label'] ? labelTextProblem('--system-label', a['system-label']) : null;
  if (labelProblem !== null) errors.push(labelProblem);
  let baseUrl = '';
  if (a.url) {
    try {
      baseUrl = normalizeBaseUrl(a.url);
    } catch (e) {
      errors.push(`--url: ${(e as Error).message}`);
    }
  }
  const temperature = numberFlag('--temperature', a.temperature, errors) ?? 0;
  const topP = numberFlag('--top-p', a['top-p'], errors) ?? 1;
  const maxTokens = intFlag('--max-tokens', a['max-tokens'], errors) ?? null;
  const requestTimeoutS = numberFlag('--request-timeout-s', a['request-timeout-s'], errors) ?? 600;
  const idleTimeoutS = numberFlag('--idle-timeout-s', a['idle-timeout-s'], errors) ?? 120;
  const maxBatches = intFlag('--max-batches', a['max-batches'], errors) ?? null;
  const stopAfterDeadBatches = intFlag('--stop-after-dead-batches', a['stop-after-dead-batches'], errors) ?? 2;
  const metricsFlag = a['metrics-url'] ?? [];
  const metricsDefaults = metricsFlag.length === 0;
  let metricsUrls: string[] = [];
  if (metricsFlag.some((u) => u === 'none')) metricsUrls = [];
  else if (metricsDefaults) metricsUrls = baseUrl ? defaultMetricsUrls(baseUrl) : [];
  else {
    for (const u of metricsFlag) {
      try {
        const x = new URL(u);
        if (x.protocol !== 'http:' && x.protocol !== 'https:') throw new Error('scheme');
        metricsUrls.push(x.toString());
      } catch {
        errors.push(`--metrics-url: not an http(s) URL: '${u}'`);
      }
    }
  }

  const tokenizer = await loadPromptTokenizer();
  const workloadFile = a.workload ? path.resolve(a.workload) : null;
  const candidate = {
    baseUrl: baseUrl || 'http://invalid/v1',
    model: a.model || 'x',
    api: a.api,
    systemLabel: a['system-label'] || 'x',
    notes: a.notes ?? null,
    workloadFile,
    workloadDigest: 'pending',
    requestsDigest: 'pending',
    temperature,
    topP,
    maxTokens,
    ignoreEos: a['ignore-eos'],
    streamUsage: a['stream-usage'],
    requestTimeoutS,
    idleTimeoutS,
    metricsUrls,
    promptSalt: a['prompt-salt'] ?? randomSalt(),
    promptTokenizer: tokenizer.name,
    maxBatches,
    stopAfterDeadBatches,
  };
  const parsed = EndpointRunConfigSchema.safeParse(candidate);
  if (!parsed.success) errors.push(...parsed.error.issues.filter((i) => labelProblem === null || i.path[0] !== 'systemLabel').map((i) => i.message));
  errors.push(...endpointRunLimitIssues(candidate));
  let workload;
  if (workloadFile) {
    try {
      workload = await readWorkloadFile(workloadFile);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  if (a.output) {
    try {
      await checkResultsFileTarget(path.resolve(a.output));
    } catch (e) {
      errors.push(`--output: ${(e as Error).message}`);
    }
  }
  if (errors.length > 0 || !parsed.success || !workload) {
    process.stderr.write(`kvbench endpoint run: invalid arguments:\n  ${[...new Set(errors)].join('\n  ')}\n`);
    return EXIT_FAILED;
  }
  // requestsDigest stays 'pending': the runner computes it from what it sends.
  const config: EndpointRunConfig = { ...parsed.data, workloadDigest: workloadDigest(workload) };
  const apiKey = process.env.KVBENCH_API_KEY || process.env.OPENAI_API_KEY || null;
  const headers: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};

  const toReplay = batchesToReplay(config, workload);
  let longest = { tokens: 0, context: 0, generated: 0 };
  for (const b of toReplay) {
    for (const r of b.requests) {
      const generated = maxTokensOf(config, r);
      if (r.context_tokens + generated > longest.tokens) longest = { tokens: r.context_tokens + generated, context: r.context_tokens, generated };
    }
  }
  const pre = await preflight(config.baseUrl, config.model, headers, longest);
  for (const w of pre.warnings) process.stderr.write(`kvbench endpoint run: warning: ${w}\n`);
  if (pre.fatal) return runErr(pre.fatal);
  // The database is opened (created, upgraded) now, as --output was checked: one it cannot use would
  // otherwise be found only after the last batch.
  try {
    await withStore(a.db, () => undefined);
  } catch (e) {
    // The store's messages may or may not end a sentence: one full stop before the next.
    return runErr(`cannot use the database: ${(e as Error).message.replace(/\.?$/, '.')} Nothing was sent.`);
  }

  const requests = toReplay.reduce((n, b) => n + b.requests.length, 0);
  process.stderr.write(
    `kvbench endpoint run: ${config.systemLabel}: ${toReplay.length} batch(es), ${requests} request(s) → ${config.baseUrl} (${config.api}, model ${config.model}); prompts: ${tokenizer.name === 'words' ? 'one word ≈ one token' : tokenizer.name}, salt ${config.promptSalt}\n`,
  );

  const ctrl = new AbortController();
  // SIGTERM (a batch system's time limit, a container stop) and SIGHUP (the SSH session dropped) are
  // handled as Ctrl-C is: what finished is stored as partial; the exit code names the signal, as
  // kvbench run's does.
  let interrupted: StopSignal | null = null;
  const signals = watchStopSignals({
    onStop: (signal) => {
      interrupted = signal;
      const again = !abandonsStop(signal) ? '' : signal === 'SIGINT' ? ' (Ctrl-C again to quit at once)' : ` (send ${signal} again to quit at once)`;
    process.stderr.write(`\nkvbench endpoint run: interrupted by ${signal}: cancelling the requests in flight and storing what finished${again}\n`);
    // The runner puts a string reason into the run's status reason; Ctrl-C keeps its "by the user".
      if (signal === 'SIGINT') ctrl.abort();
      else ctrl.abort(`by ${signal}`);
    },
    onAbandon: (signal) => process.exit(signalExitCode(signal)),
  });
  let outcome;
  try {
    outcome = await runEndpointBenchmark({
      config,
      workload,
      apiKey,
      tokenizer,
      signal: ctrl.signal,
      metricsUrlsAreDefaults: metricsDefaults && metricsUrls.length > 0,
      onNote: (m) => process.stderr.write(`  ${m}\n`),
      onBatch: (p: BatchProgress) =>
        process.stderr.write(
          `  batch ${p.batchIndex + 1}/${p.batches} (context ${p.contextTokens}, ${p.requests} request(s)): ${p.ok} ok${p.failed ? `, ${p.failed} failed (${p.firstError ?? '?'})` : ''}` +
            `${p.ttftP50Ms !== null ? `, TTFT P50 ${p.ttftP50Ms.toFixed(1)} ms` : ''}, ${(p.wallMs / 1000).toFixed(2)} s\n`,
        ),
    });
  } finally {
    signals.dispose();
  }
  if (interrupted && outcome.status === 'complete') outcome.status = 'partial';

  let id: number;
  let record;
  try {
    ({ id, record } = await withStore(a.db, (s) => {
      const rid = s.insertRun(outcome);
      return { id: rid, record: s.requireRun(rid) };
    }));
  } catch (e) {
    // Opened before the run, refused now (the disk filled, the file was replaced …): the run is still
    // shown, and kept in --output or a file of its own, before the command fails.
    process.stderr.write(`kvbench endpoint run: the run finished but could not be stored: ${(e as Error).message}\n`);
    const { samples, ...rest } = outcome;
    const unstored = { ...rest, id: UNSTORED_RUN_ID };
    process.stdout.write(`${formatRun(unstored)}\n`);
    await keepUnstoredRun(unstored, samples, a.output);
    return EXIT_FAILED;
  }
  process.stdout.write(`${formatRun(record)}\n`);
  process.stderr.write(`kvbench endpoint run: stored as endpoint run ${id} under '${config.systemLabel}'\n`);
  if (a.output) {
    try {
      await appendResultsFile(path.resolve(a.output), record, outcome.samples);
      process.stderr.write(`kvbench endpoint run: added to ${printable(a.output)}\n`);
    } catch (e) {
      return runErr(`cannot write --output: ${printable((e as Error).message)}`);
    }
  }
  if (interrupted) return signalExitCode(interrupted);
  return outcome.status === 'complete' ? EXIT_OK : outcome.status === 'partial' ? EXIT_PARTIAL : EXIT_FAILED;
}

/**
 * A run the database refused: added to --output when given, else (or when that fails too) saved as a
 * results file of its own in the first directory that takes it, else printed on stderr.
 */
async function keepUnstoredRun(record: EndpointRunRecord, samples: readonly EndpointRequestSample[], output: string | undefined): Promise<void> {
  if (output) {
    try {
      await appendResultsFile(path.resolve(output), record, samples);
      process.stderr.write(`kvbench endpoint run: the run is in ${printable(output)} (not in the database)\n`);
      return;
    } catch (e) {
      process.stderr.write(`kvbench endpoint run: cannot write --output: ${printable((e as Error).message)}\n`);
    }
  }
  const kept = await keepInFirstDirectory(output ? askedFileFolder(path.resolve(output)) : [], `kvbench-endpoint-run-${fileNameTime()}.json`, (file) => appendResultsFile(file, record, samples));
  if (kept !== null) process.stderr.write(`kvbench endpoint run: the run is saved in ${kept} (a results file, as --output writes; not in the database)\n`);
  else printResultsJson(resultsFileText(record, samples));
}

/** Run ids from `--runs-a 3,4 --runs-b 7`: whole positive numbers through the shared flag parser (`0x5` and `1e1` are refused). */
function idList(values: readonly string[] | undefined, flag: string): number[] | undefined {
  if (!values || values.length === 0) return undefined;
  const errors: string[] = [];
  const ids = intListFlag(flag, values, errors, { min: 1 });
  if (ids === undefined) throw new Error(errors.join('; ') || `${flag} takes run ids (positive integers)`);
  return ids;
}

async function compareSub(argv: string[]): Promise<number> {
  let p;
  try {
    p = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        'include-partial': { type: 'boolean', default: false },
        latest: { type: 'boolean', default: false },
        'runs-a': { type: 'string', multiple: true },
        'runs-b': { type: 'string', multiple: true },
        json: { type: 'boolean', default: false },
        db: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    });
  } catch (e) {
    return err(`compare: ${(e as Error).message}`);
  }
  const a = p.values;
  if (a.help) {
    process.stdout.write(`Usage: kvbench endpoint compare LABEL_A LABEL_B [options]

Both systems side by side, every aggregate and server cache metric, with the ratio A ÷ B and which is
better. Per label: every complete run that sent the same requests (the same batches, max_tokens, API,
ignore_eos, temperature and top_p: equal requests digests) as A's newest run (the median of their
values; one run: its value). Warnings name what differs between the runs.

  --latest             only the newest run of each label
  --include-partial    partial runs count too
  --runs-a IDS, --runs-b IDS   exactly these runs (comma-separated ids), runs of LABEL_A and LABEL_B
  --json               the comparison as JSON
  --db PATH            the database
`);
    return EXIT_OK;
  }
  if (p.positionals.length !== 2) return err('compare: give two system labels: kvbench endpoint compare LABEL_A LABEL_B');
  if (p.positionals.some((label) => label.trim() === '')) return err('compare: LABEL_A and LABEL_B must not be empty');
  const [labelA, labelB] = p.positionals;
  let runsA: number[] | undefined;
  let runsB: number[] | undefined;
  try {
    runsA = idList(a['runs-a'], '--runs-a');
    runsB = idList(a['runs-b'], '--runs-b');
  } catch (e) {
    return err(`compare: ${(e as Error).message}`);
  }
  try {
    return await withReadStore('compare', a.db, (s) => {
      const c = compareLabels(s, labelA, labelB, { includePartial: a['include-partial'], latestOnly: a.latest, runIdsA: runsA, runIdsB: runsB });
      process.stdout.write(a.json ? `${jsonText(c, 2)}\n` : `${printableLines(formatComparison(c))}\n`);
      return EXIT_OK;
    });
  } catch (e) {
    return err(`compare: ${(e as Error).message}`);
  }
}

async function listSub(argv: string[]): Promise<number> {
  let a;
  try {
    a = parseArgs({
      args: argv,
      options: {
        label: { type: 'string', multiple: true },
        limit: { type: 'string' },
        json: { type: 'boolean', default: false },
        db: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    return err(`list: ${(e as Error).message}`);
  }
  if (a.help) {
    process.stdout.write('Usage: kvbench endpoint list [--label L ...] [--limit N] [--json] [--db PATH]\n');
    return EXIT_OK;
  }
  const errors = emptyValueErrors(a, ['label', 'db'], ['label']);
  const limit = intFlag('--limit', a.limit, errors, { min: 1 }) ?? 50;
  if (errors.length > 0) return err(`list: ${errors.join('; ')}`);
  try {
    return await withReadStore('list', a.db, (s) => {
      const runs = s.listRuns({ ...(a.label ? { labels: a.label.flatMap((l) => l.split(',')) } : {}), limit });
      process.stdout.write(a.json ? `${jsonText(runs, 2)}\n` : `${formatRunList(runs)}\n`);
      return EXIT_OK;
    });
  } catch (e) {
    return err(`list: ${(e as Error).message}`);
  }
}

async function showSub(argv: string[]): Promise<number> {
  let p;
  try {
    p = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { requests: { type: 'boolean', default: false }, json: { type: 'boolean', default: false }, db: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
      strict: true,
    });
  } catch (e) {
    return err(`show: ${(e as Error).message}`);
  }
  if (p.values.help) {
    process.stdout.write('Usage: kvbench endpoint show ID [--requests] [--json] [--db PATH]\n');
    return EXIT_OK;
  }
  const id = p.positionals.length === 1 ? intFlag('the run id', p.positionals[0], [], { min: 1 }) : undefined;
  if (id === undefined) return err('show: give one run id (see kvbench endpoint list)');
  try {
    return await withReadStore('show', p.values.db, (s) => {
      const r = s.requireRun(id);
      const reqs = p.values.requests || p.values.json ? s.requests(id) : [];
      if (p.values.json) {
        process.stdout.write(`${jsonText({ ...r, ...(p.values.requests ? { requests: reqs } : {}) }, 2)}\n`);
        return EXIT_OK;
      }
      process.stdout.write(`${printableLines(formatRun(r))}\n`);
      if (p.values.requests) {
        process.stdout.write('\n');
        for (const q of reqs) {
          process.stdout.write(
            `  #${q.seq} ${q.requestId} batch ${q.batchIndex} ${q.promptId}${q.reused ? ' (reused)' : ''} ctx ${q.contextTokens}: ${q.status}` +
              `${q.ttftMs !== null ? ` ttft ${q.ttftMs.toFixed(1)} ms` : ''}${q.e2eMs !== null ? ` e2e ${q.e2eMs.toFixed(1)} ms` : ''}` +
              `${q.outputTokens !== null ? ` ${q.outputTokens} tok (${q.tokenCountSource})` : ''}${q.error ? ` — ${q.error}` : ''}\n`,
          );
        }
      }
      return EXIT_OK;
    });
  } catch (e) {
    return err(`show: ${(e as Error).message}`);
  }
}

async function exportSub(argv: string[]): Promise<number> {
  let a;
  try {
    a = parseArgs({
      args: argv,
      options: {
        out: { type: 'string', short: 'o' },
        format: { type: 'string' },
        label: { type: 'string', multiple: true },
        run: { type: 'string', multiple: true },
        status: { type: 'string', multiple: true },
        requests: { type: 'boolean', default: false },
        db: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
    }).values;
  } catch (e) {
    return err(`export: ${(e as Error).message}`);
  }
  if (a.help) {
    process.stdout.write(`Usage: kvbench endpoint export --out FILE [--format csv|xlsx|json] [filters]

Endpoint runs with their full configuration, aggregates and server metrics: CSV (one row per run, or
one per request with --requests), XLSX (Runs, Requests, By context, Server metrics, a Comparison
sheet when exactly two labels are selected, About) or JSON (everything, requests included).

  --label L ...      only these system labels      --run ID ...    only these runs
  --status S ...     complete, partial, failed     --requests      CSV: one row per request
  --db PATH          the database
`);
    return EXIT_OK;
  }
  const empty = emptyValueErrors(a, ['out', 'format', 'label', 'run', 'status', 'db'], ['label', 'run', 'status']);
  if (empty.length > 0) return err(`export: ${empty.join('; ')}`);
  if (a.out === undefined) return err('export: --out FILE is required');
  const format = (a.format ?? endpointFormatFromPath(a.out)) as EndpointExportFormat | null;
  if (format === null || !(ENDPOINT_EXPORT_FORMATS as readonly string[]).includes(format)) {
    // A folder has no extension to take the format from: what is wrong there is --out, so say that.
    const outProblem = a.format === undefined ? outputFileProblem(a.out) : null;
    return err(outProblem !== null ? `export: cannot write --out ${printable(a.out)}: ${outProblem}` : `export: --format must be ${ENDPOINT_EXPORT_FORMATS.join(', ')} (or use a .csv, .xlsx or .json file name)`);
  }
  const statuses = a.status?.flatMap((x) => x.split(',')) as EndpointRunStatus[] | undefined;
  if (statuses?.some((x) => !ENDPOINT_RUN_STATUSES.includes(x))) return err(`export: --status takes ${ENDPOINT_RUN_STATUSES.join(', ')}`);
  let runIds: number[] | undefined;
  try {
    runIds = idList(a.run, '--run');
  } catch (e) {
    return err(`export: ${(e as Error).message}`);
  }
  const labels = a.label?.flatMap((x) => x.split(','));
  const overwritesDb = databaseOutputError('--out', a.out, resolveDatabasePath(a.db));
  if (overwritesDb !== null) return err(`export: ${overwritesDb}`);
  const outProblem = outputFileProblem(a.out);
  if (outProblem !== null) return err(`export: cannot write --out ${printable(a.out)}: ${outProblem}`);
  try {
    return await withReadStore('export', a.db, async (s) => {
      const model = buildEndpointExportModel(s, { ...(labels ? { labels } : {}), ...(runIds ? { runIds } : {}), ...(statuses ? { statuses } : {}) });
      await writeEndpointExport(model, format, a.out!, { requests: a.requests });
      process.stderr.write(`exported ${model.runs.length} endpoint run(s) to ${printable(a.out!)} (${format}${format === 'csv' && a.requests ? ', one row per request' : ''})\n`);
      return EXIT_OK;
    });
  } catch (e) {
    return err(`export failed (EXPORT_FAILED): ${e instanceof FileWriteError ? `could not write ${printable(a.out)}: ${e.message}` : (e as Error).message}`);
  }
}

async function deleteSub(argv: string[]): Promise<number> {
  let p;
  try {
    p = parseArgs({ args: argv, allowPositionals: true, options: { db: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } }, strict: true });
  } catch (e) {
    return err(`delete: ${(e as Error).message}`);
  }
  if (p.values.help) {
    process.stdout.write('Usage: kvbench endpoint delete ID [--db PATH]\n\nDeletes one stored endpoint run (see kvbench endpoint list) with its requests.\n');
    return EXIT_OK;
  }
  const id = p.positionals.length === 1 ? intFlag('the run id', p.positionals[0], [], { min: 1 }) : undefined;
  if (id === undefined) return err('delete: give one run id');
  // Deleting from a database that is not there is a typo in --db: never create one for it.
  return withCommandStore('endpoint delete', p.values.db, { readOnly: false, mustExist: true }, (store) => {
    try {
      new EndpointStore(store).deleteRun(id);
    } catch (e) {
      return err(`delete: ${(e as Error).message}`);
    }
    process.stderr.write(`deleted endpoint run ${id}\n`);
    return EXIT_OK;
  });
}

/** `kvbench endpoint <subcommand>`. Returns the exit code. */
export async function endpointCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'run':
      return runSub(rest);
    case 'compare':
      return compareSub(rest);
    case 'list':
      return listSub(rest);
    case 'show':
      return showSub(rest);
    case 'export':
      return exportSub(rest);
    case 'delete':
      return deleteSub(rest);
    case undefined:
    case 'help':
    case '-h':
    case '--help':
      process.stdout.write(ENDPOINT_USAGE);
      return EXIT_OK;
    default:
      process.stderr.write(`kvbench endpoint: unknown command '${sub}'\n\n${ENDPOINT_USAGE}`);
      return EXIT_FAILED;
  }
}
