// `kvbench import`: results JSON files written by the reference benchmark (any of its versions) or
// by kvbench, stored as trials of a system named by the user. The reference's files carry no run
// options, so the configuration comes from the flags the user ran them with (`--run-flags`);
// kvbench's own files record theirs (`kvbench.run_options`), which the flags may only complete,
// never contradict. Without either, the trial is kept but matches no other configuration.
import fsp from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { IMPORTED_SCENARIO_ID, MULTI_HOST_SCENARIO_ID, scenarioLabel } from '../../src-shared/domain/scenarios.ts';
import type { ResultsFormat, TrialHistogram, TrialMetrics } from '../../src-shared/domain/store-types.ts';
import type { TrialStatus } from '../../src-shared/domain/results.ts';
import {
  configKey,
  detectFormat,
  extractHistograms,
  extractMetrics,
  isMergedResults,
  measuringVersion,
  num,
  obj,
  optionsFromResults,
  ResultsFileSchema,
  ResultsValuesSchema,
  sameJson,
  statusFromResults,
  unknownConfigKey,
  usableMetricKeys,
} from './results-ingest.ts';
import { packResults, type Store } from './store.ts';
import { ImportStaging } from './import-staging.ts';
import { kvbenchDocumentProblem, unparsableDocumentProblem } from './not-results-files.ts';
import { DAMAGED, gapsText, kvbenchFileProblem, shown } from './kvbench-file-checks.ts';
import { parseRunArgs } from '../engine/config/parse-run-args.ts';
import { FLAG_BY_KEY } from '../engine/config/flags.ts';
import { wholeFileText } from '../engine/workload/sources/text-encoding.ts';

export interface ImportOptions {
  /** The system the results belong to (created if new). */
  systemLabel: string;
  /** A drive of that system, for drive comparisons. */
  driveLabel?: string | null;
  /**
   * Scenario id to file them under; default 'imported', and 'multi-host' for a `kvbench merge` result
   * ('imported', the app's "no scenario", leaves a merged result under 'multi-host' too).
   */
  scenarioId?: string;
  /** The run options the files were produced with (validated: parseImportRunFlags). */
  options?: Record<string, unknown> | null;
  /**
   * The keys of `options` the user named (the rest are defaults); default: every key. A kvbench
   * file's recorded options win over defaults, and a named option that contradicts them refuses the file.
   */
  givenOptionKeys?: readonly string[];
  /** The label of the suite the import makes (`--label`): its trials then filter and compare by it with suites that ran. */
  suiteLabel?: string | null;
  /**
   * Where each file came from, when `files` are copies (an upload through the app, written to a
   * temporary directory): recorded as the trial's source instead of the copy's path, and its
   * modification time instead of the copy's. Default: the file itself.
   */
  originOf?: (file: string) => { sourceFile: string; modifiedAt: Date | null };
  /**
   * How a person chooses another database, where a message tells them to (a kvbench export given
   * for a results file): the CLI's "with --db" by default; the app passes its own words.
   */
  chooseDatabase?: string;
}

export interface ImportedFile {
  file: string;
  trialId: number;
  format: ResultsFormat;
  status: TrialStatus;
  reason: string | null;
  configKnown: boolean;
}

/** A file not imported because its results are stored already (an earlier import, a suite, or another file of this batch). */
export interface SkippedFile {
  file: string;
  /** The stored trial with the same results; null when it is another file of this batch. */
  trialId: number | null;
  message: string;
}

export interface ImportResult {
  suiteId: number;
  /** Null when no file could be imported: nothing was written then, not even the system. */
  systemId: string | null;
  imported: ImportedFile[];
  skipped: SkippedFile[];
  errors: { file: string; message: string }[];
}

/** Splits a flag string on whitespace, honouring simple single or double quotes. */
export function splitFlags(s: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/**
 * The run flags of an import (`--run-flags "…"`, the app's field), parsed by `kvbench run`'s parser:
 * the options with where the run wrote its files left out, and which of them the flags named. Paths
 * are stored as the flags give them (the BurstGPT default as a suite stores it): they were the
 * run's, on its machine, and the directory the import runs in says nothing about them.
 */
export function parseImportRunFlags(text: string): { ok: true; options: Record<string, unknown>; given: string[] } | { ok: false; errors: string[] } {
  const r = parseRunArgs(splitFlags(text), { pathsAsGiven: true });
  if (r.ok === 'help') return { ok: false, errors: ['give the flags of the run, not --help'] };
  if (r.ok === false) return r;
  const options: Record<string, unknown> = { ...(r.options as unknown as Record<string, unknown>), ...Object.fromEntries(WHERE_FILES_WENT.map((k) => [k, null])) };
  return { ok: true, options, given: r.given.filter((k) => !WHERE_FILES_WENT.includes(k)) };
}

/** Options that say where a run wrote its results, not what it measured: an import drops them. */
const WHERE_FILES_WENT = ['output', 'xlsxOutput'];

/**
 * A file's options: what a kvbench file records, completed by the options the user named that it
 * does not record; or, for a file that records none (the reference's), the flags' options. Named
 * options that contradict the recorded ones refuse the file: the flags describe some other run.
 */
function optionsFor(results: Record<string, unknown>, opts: ImportOptions): Record<string, unknown> {
  const recorded = optionsFromResults(results);
  const flags = opts.options ?? null;
  if (recorded === null || Object.keys(recorded).length === 0) return flags ?? {};
  if (flags === null) return recorded;
  const given = (opts.givenOptionKeys ?? Object.keys(flags)).filter((k) => !WHERE_FILES_WENT.includes(k));
  const show = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
  const conflicts = given.filter((k) => recorded[k] !== undefined && !sameJson(recorded[k], flags[k]));
  if (conflicts.length > 0) {
    throw new Error(
      `--run-flags contradict the run options this kvbench file records: ${conflicts.map((k) => `${FLAG_BY_KEY.get(k)?.flag ?? k} ${show(flags[k])} (the file: ${show(recorded[k])})`).join(', ')}; ` +
        'drop those flags: the file\'s own options are used',
    );
  }
  return { ...Object.fromEntries(given.filter((k) => recorded[k] === undefined).map((k) => [k, flags[k]])), ...recorded };
}

interface ParsedFile {
  file: string;
  results: Record<string, unknown>;
  /** The run options it is stored with ({} when unknown). */
  options: Record<string, unknown>;
  format: ResultsFormat;
  status: TrialStatus;
  reason: string | null;
  metrics: TrialMetrics;
  histograms: TrialHistogram[];
  text: string;
  mtime: Date;
  /** A `kvbench merge` result: the ranks of one multi-host run as one trial. */
  merged: boolean;
}

/** What an import takes from a merged file's `kvbench_merge`, beside the reference keys every results file has. */
const MergedSectionSchema = z.looseObject({
  version: z.string(),
  status: z.enum(['complete', 'partial']),
  status_reason: z.string().nullish(),
  world_size: z.number().int().positive(),
  started_at: z.string().nullish(),
  run_options: z.record(z.string(), z.unknown()),
});

/** What a zod type check expected, in words: "a number", "an object". */
const EXPECTED_WORDS: Readonly<Record<string, string>> = {
  number: 'a number',
  int: 'a whole number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  record: 'an object',
  array: 'a list',
};

/** What a JSON value is, for "the file holds a list, not an object". */
const kindOf = (v: unknown): string => (Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v} (${shown(v)})`);

/**
 * The first few problems zod found in `json`, in words: "requests_completed is missing (a number)",
 * "summary.cache_stats.cache_hit_rate is 7.5, above 1"; other checks as "path: value (zod's reason)".
 */
function describeIssues(json: unknown, issues: readonly z.core.$ZodIssue[]): string {
  const at = (path: readonly PropertyKey[]): unknown => path.reduce<unknown>((o, k) => (typeof o === 'object' && o !== null ? (o as Record<PropertyKey, unknown>)[k] : undefined), json);
  const inWords = (i: z.core.$ZodIssue): string => {
    const name = i.path.join('.');
    const v = at(i.path);
    if (i.code === 'invalid_type') {
      const expected = EXPECTED_WORDS[i.expected] ?? `a ${i.expected}`;
      if (i.path.length === 0) return `the file holds ${kindOf(v)}, not ${expected}`;
      return v === undefined ? `${name} is missing (${expected})` : `${name} is ${shown(v)}, not ${expected}`;
    }
    if (i.code === 'too_small' && typeof v === 'number') return `${name} is ${shown(v)}, ${i.inclusive ? 'below' : 'not above'} ${String(i.minimum)}`;
    if (i.code === 'too_big' && typeof v === 'number') return `${name} is ${shown(v)}, ${i.inclusive ? 'above' : 'not below'} ${String(i.maximum)}`;
    return `${name}: ${shown(v)} (${i.message})`;
  };
  return gapsText(issues.map(inWords));
}

/** How far a rate may sit from its counts ÷ the elapsed time: rounding to the last digit it gives, or 1 %, whichever is more. */
function roundingAllowance(stated: number, expected: number): number {
  const digits = /\.(\d+)$/.exec(String(stated))?.[1].length ?? 0;
  return Math.max(String(stated).includes('e') ? 0 : 0.5 * 10 ** -digits, 0.01 * Math.abs(expected));
}

/**
 * Why a reference-format file's rates cannot be trusted, or null. The reference writes its rates as
 * counts ÷ `summary.elapsed_time` (avg_throughput_tokens_per_sec = total_tokens_generated ÷ it,
 * requests_per_second = requests_completed ÷ it), and its files carry nothing else to check them by:
 * an elapsed time of 0 with requests completed, or a rate that contradicts its counts beyond rounding,
 * is a damaged or edited file whose numbers would pass for a measurement. (A kvbench file is checked
 * by its own status and measured window.)
 */
function referenceRatesProblem(results: Record<string, unknown>): string | null {
  const summary = obj(results.summary);
  const completed = num(results.requests_completed) ?? 0;
  const elapsedS = num(summary.elapsed_time);
  if (completed === 0 || elapsedS === undefined) return null;
  const tokPerS = num(summary.avg_throughput_tokens_per_sec);
  if (elapsedS === 0) {
    return `summary.elapsed_time is 0 s, yet the file completed ${completed} requests${tokPerS !== undefined ? ` and states ${tokPerS} tok/s` : ''}: no run takes no time, so its rates were not measured over its elapsed time; ${DAMAGED}`;
  }
  const checks = [
    { key: 'avg_throughput_tokens_per_sec', stated: tokPerS, countKey: 'total_tokens_generated', count: num(results.total_tokens_generated) },
    { key: 'requests_per_second', stated: num(summary.requests_per_second), countKey: 'requests_completed', count: completed },
  ];
  for (const c of checks) {
    if (c.stated === undefined || c.count === undefined) continue;
    const expected = c.count / elapsedS;
    if (Math.abs(c.stated - expected) <= roundingAllowance(c.stated, expected)) continue;
    return `summary.${c.key} is ${c.stated}, but ${c.countKey} ÷ summary.elapsed_time is ${c.count} ÷ ${elapsedS} s = ${Number(expected.toPrecision(4))}: the file contradicts itself; ${DAMAGED}`;
  }
  return null;
}

async function readResultsFile(file: string, opts: ImportOptions): Promise<ParsedFile> {
  const bytes = await fsp.readFile(file);
  const chooseDatabase = opts.chooseDatabase ?? 'with --db';
  const decoded = wholeFileText(bytes);
  if (!decoded.ok) {
    // A workbook is a zip: named as kvbench's own export rather than as any archive.
    const workbook = unparsableDocumentProblem(bytes.subarray(0, 4).toString('latin1'), chooseDatabase);
    throw new Error(workbook ?? (decoded.line === null ? decoded.problem : `line ${decoded.line}: ${decoded.problem}`));
  }
  const text = decoded.text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(unparsableDocumentProblem(text, chooseDatabase) ?? `not JSON: ${(err as Error).message}`);
  }
  const document = kvbenchDocumentProblem(json, chooseDatabase);
  if (document !== null) throw new Error(document);
  const mergedSection = typeof json === 'object' && json !== null ? (json as { kvbench_merge?: unknown }).kvbench_merge : undefined;
  if (mergedSection !== undefined && !('requests_completed' in (json as object))) {
    throw new Error('a kvbench merge result written by an older kvbench (no reference keys, so no trial to store): merge the rank files again with this version');
  }
  const r = ResultsFileSchema.safeParse(json);
  if (!r.success) {
    throw new Error(`not a kvbench or MLPerf KV-cache results file: ${describeIssues(json, r.error.issues)}`);
  }
  const values = ResultsValuesSchema.safeParse(json);
  if (!values.success) throw new Error(`values no run can produce (a wrong type, a negative amount, a hit rate outside 0–1, a damaged histogram): ${describeIssues(json, values.error.issues)}`);
  // One host's share of a multi-host run stored as a whole trial would understate the storage N times.
  const rank = (json as { kvbench?: { rank?: { rank?: unknown; world_size?: unknown } | null } }).kvbench?.rank;
  // A world of one is the whole run (--rank 0 --world-size 1), and imports as any other.
  if (rank && typeof rank.rank === 'number' && rank.world_size !== 1) {
    throw new Error(
      `rank ${rank.rank}${typeof rank.world_size === 'number' ? ` of ${rank.world_size}` : ''} of a multi-host run: one host's share, not a trial of the system; ` +
        'combine the ranks with kvbench merge, and import its --output file: the whole run as one trial (docs/multi-host.md)',
    );
  }
  const results = json as Record<string, unknown>;
  const merged = isMergedResults(results);
  if (merged) {
    const m = MergedSectionSchema.safeParse(results.kvbench_merge);
    if (!m.success) throw new Error(`a kvbench merge result without what a trial needs: ${describeIssues(results.kvbench_merge, m.error.issues)} (in kvbench_merge)`);
  }
  const kvbenchProblem = kvbenchFileProblem(results);
  if (kvbenchProblem !== null) throw new Error(kvbenchProblem);
  const options = optionsFor(results, opts);
  const format = detectFormat(results);
  const untrustedRates = format === 'kvbench' ? null : referenceRatesProblem(results);
  if (untrustedRates !== null) throw new Error(untrustedRates);
  const { status, reason } = statusFromResults(results, format, typeof options.maxRequests === 'number' ? options.maxRequests : 0);
  const metrics = extractMetrics(results);
  // A failed run is kept as the record of a failure; a "complete" one that measured nothing is no trial.
  if ((status === 'complete' || status === 'partial') && usableMetricKeys(metrics).length === 0) {
    throw new Error('no metric kvbench can use (no throughput, latency, bytes moved or cache statistics; only the request and token counters): not stored as a trial');
  }
  return { file, results, options, format, status, reason, metrics, histograms: extractHistograms(results), text, mtime: (await fsp.stat(file)).mtime, merged };
}

/** The most files one batch of an import stages. */
export const IMPORT_BATCH_FILES = 200;
/**
 * A batch also ends once it has run this long (one file more at most): between two batches the
 * import gives the event loop a turn, so the app and the served mode go on answering meanwhile.
 */
const IMPORT_BATCH_BUDGET_MS = 250;

/** After each batch of an import has been staged (nothing of it is in the database file yet). */
export interface ImportBatch {
  /** Files this batch looked at (staged, or skipped as stored already). */
  files: number;
  /** Files looked at so far, this batch included, of `total`. */
  done: number;
  total: number;
}

/** How an import is written; the defaults are what users get. */
export interface ImportWriting {
  /** The most files one batch stages (IMPORT_BATCH_FILES). */
  batchFiles?: number;
  /** Called after each batch has been staged, before the next (progress; tests look at the database here). */
  afterBatch?: (batch: ImportBatch) => void | Promise<void>;
}

/**
 * Imports every file; a file that cannot be read or parsed is reported and skipped, the others
 * still go in. A file whose results are already stored (by content: an earlier import of it, the
 * suite that ran it, or an identical file earlier in this import) is skipped and said so: the same
 * measurement twice would raise n and shrink the CV.
 *
 * All or nothing, for every reader of the database whatever its version: reading, checking,
 * compressing and hashing happen first; then the files are staged in batches (at most `batchFiles`
 * files, or what 250 ms allows) into a private in-memory database of this connection
 * (ImportStaging), which takes no lock on the database file and which no other connection sees;
 * then one IMMEDIATE transaction stores the system, drive, suite, runs, trials, metrics and
 * histograms, a few statements that each copy a whole table's rows. That commit is when the import
 * appears, all at once; before it the file holds none of it. If anything fails (a full disk, a lock
 * held past busy_timeout by another process), the commit rolls back and nothing of the import is in
 * the file; if the process dies (killed, a crash), the staged rows die with it. Nothing is left to remove.
 * Duplicates are checked in each batch against the stored trials, and again in the commit, which
 * leaves out a file an import that committed meanwhile stored: of two imports of one file at once,
 * the one that commits second skips it.
 */
export async function importResultsFiles(store: Store, files: readonly string[], opts: ImportOptions & ImportWriting): Promise<ImportResult> {
  const parsed: ParsedFile[] = [];
  const errors: { file: string; message: string }[] = [];
  for (const f of files) {
    try {
      parsed.push(await readResultsFile(f, opts));
    } catch (err) {
      errors.push({ file: f, message: (err as Error).message });
    }
  }
  const imported: ImportedFile[] = [];
  const skipped: SkippedFile[] = [];
  const nothing = (): ImportResult => ({ suiteId: -1, systemId: null, imported, skipped, errors });
  if (parsed.length === 0) return nothing();
  store.removeAbandonedImports(); // what an older kvbench's import left unfinished, where its process is gone
  store.backfillResultsDigests(); // before the duplicate checks: it may read every older trial
  // CPU work per file (compressing, hashing) before the batches.
  const packedFiles = parsed.sort((a, b) => a.file.localeCompare(b.file)).map((p) => ({ ...p, packed: packResults(p.results) }));
  const batchFiles = Math.max(1, opts.batchFiles ?? IMPORT_BATCH_FILES);
  const scenarioOf = (p: ParsedFile): string =>
    p.merged && (opts.scenarioId === undefined || opts.scenarioId === IMPORTED_SCENARIO_ID) ? MULTI_HOST_SCENARIO_ID : (opts.scenarioId ?? IMPORTED_SCENARIO_ID);
  // Across batches: the files of this import by content, and the suite's runs with their trial counts.
  const freshByDigest = new Map<string, string>();
  const runs = new Map<string, { position: number; trials: number }>();
  // Copies of a file of this import, skipped as such: said again if that file turns out stored elsewhere.
  const twinsOf = new Map<string, SkippedFile[]>();
  // The files staged, by their number in the staging database.
  const stagedFiles = new Map<number, Omit<ImportedFile, 'trialId'>>();
  const staging = new ImportStaging(store);

  /** Stages packedFiles[from…] until the batch is full; returns where the next batch starts. */
  const stageBatch = (from: number): number => {
    const startedMs = performance.now();
    let i = from;
    for (; i < packedFiles.length && i - from < batchFiles && (i === from || performance.now() - startedMs < IMPORT_BATCH_BUDGET_MS); i++) {
      const p = packedFiles[i];
      const twin = freshByDigest.get(p.packed.digest);
      const stored = twin !== undefined ? null : store.trialWithResultsDigest(p.packed.digest);
      if (twin !== undefined) {
        const copy = { file: p.file, trialId: null, message: `the same results as ${twin}, imported now: not stored twice` };
        skipped.push(copy);
        twinsOf.set(twin, [...(twinsOf.get(twin) ?? []), copy]);
        continue;
      }
      if (stored) {
        skipped.push({ file: p.file, trialId: stored.trialId, message: alreadyStored(stored) });
        continue;
      }
      freshByDigest.set(p.packed.digest, p.file);
      const { format, options, status, reason } = p;
      const scenarioId = scenarioOf(p);
      const known = Object.keys(options).length > 0;
      const key = known ? configKey(options) : unknownConfigKey(p.text);
      const runKey = `${scenarioId}\u0000${key}`;
      let run = runs.get(runKey);
      if (!run) {
        run = { position: runs.size, trials: 0 };
        staging.addRun(run.position, { scenarioId, label: scenarioLabel(scenarioId), configKey: key, options });
        runs.set(runKey, run);
      }
      const trialIndex = run.trials++;
      const kv = (p.merged ? p.results.kvbench_merge : p.results.kvbench) as Record<string, unknown> | undefined;
      const origin = opts.originOf?.(p.file) ?? { sourceFile: path.resolve(p.file), modifiedAt: p.mtime };
      // The reference's files carry no start time: the file's own modification time is the best clue.
      // Stored as a UTC ISO instant like every other start time, so filters and ordering compare like with like.
      const stated = typeof kv?.started_at === 'string' ? new Date(kv.started_at) : null;
      const startedAt = stated !== null && !Number.isNaN(stated.getTime()) ? stated.toISOString() : (origin.modifiedAt ?? p.mtime).toISOString();
      const staged = staging.addTrial({
        runPosition: run.position,
        scenarioId,
        trialIndex,
        options,
        configKey: key,
        startedAt,
        status,
        reason,
        results: p.results,
        resultsFormat: format,
        packed: p.packed,
        metrics: p.metrics,
        histograms: p.histograms,
        sourceFile: origin.sourceFile,
        // Who measured it, not who imports it: version-gated rules judge the file by its own version.
        measuredByVersion: measuringVersion(p.results),
      });
      stagedFiles.set(staged, { file: p.file, format, status, reason, configKnown: known });
    }
    return i;
  };

  try {
    for (let next = 0; next < packedFiles.length; ) {
      if (next > 0) await new Promise((resolve) => setImmediate(resolve));
      const from = next;
      next = staging.batch(() => stageBatch(from));
      await opts.afterBatch?.({ files: next - from, done: next, total: packedFiles.length });
    }
    if (stagedFiles.size === 0) return nothing();
    // No label made up ("import of 3 file(s)"): suites that carry one label are one series in
    // filters and comparisons, so every unlabelled import would join the others of its size.
    const committed = staging.commit({ systemLabel: opts.systemLabel, driveLabel: opts.driveLabel ?? null, label: opts.suiteLabel ?? null });
    for (const [staged, f] of stagedFiles) {
      const trialId = committed.trialIds.get(staged);
      if (trialId !== undefined) imported.push({ ...f, trialId });
    }
    for (const d of committed.duplicates) {
      // Another import of the same results committed while this one was staging: that one holds them.
      const { file } = stagedFiles.get(d.staged)!;
      skipped.push({ file, trialId: d.heldBy.trialId, message: alreadyStored(d.heldBy) });
      for (const copy of twinsOf.get(file) ?? []) Object.assign(copy, { trialId: d.heldBy.trialId, message: alreadyStored(d.heldBy) });
    }
    return committed.suite === null ? nothing() : { suiteId: committed.suite.suiteId, systemId: committed.suite.systemId, imported, skipped, errors };
  } finally {
    staging.discard();
  }
}

const alreadyStored = (stored: { trialId: number; suiteId: number; systemLabel: string }): string =>
  `already stored as trial ${stored.trialId} (system ${stored.systemLabel}, suite ${stored.suiteId}): not imported again (delete that trial first to file it elsewhere)`;
