// Two system labels side by side: which stored runs each side uses, and the comparison of their
// metrics. One choice of runs and one comparison for `kvbench endpoint compare`, the app's
// `endpoint.compare` channel and the XLSX Comparison sheet, so all three pick the same runs and say
// the same thing. The comparison's shape and its words for the page are src-shared's
// (domain/endpoint.ts: EndpointComparison, compareVerdict).
import {
  ENDPOINT_METRIC_BY_KEY,
  ENDPOINT_METRICS,
  legacyRatesText,
  RECOMPUTED_MARK,
  SPAN_BASED_MARK,
  spanBasedMixed,
  SPAN_RATE_KEYS,
  serverMetricCaveats,
  serverMetricNotes,
  tokenCountCaveat,
  type CompareRow,
  type CompareSpread,
  type EndpointAggregates,
  type EndpointComparison,
  type EndpointRunConfig,
  type EndpointRunRecord,
  type EndpointRunStatus,
  type LegacyRates,
  type NoiseVerdict,
  type PromptTokenizer,
} from '../../src-shared/domain/endpoint.ts';
import { compareVersions, straddledChanges, type MetricDefinitionChange } from '../../src-shared/domain/metric-changes.ts';
import { aggregate, NOISE_RULE, ratio, welchLogTest, type NoiseTest } from '../../src-shared/domain/statistics.ts';
import { StoreError } from '../store/store-error.ts';

/** How the comparison is taken, as its `method` says it (the CLI's footer, the exports' About, the app). */
const COMPARE_METHOD =
  'per system: the median of each metric over its selected runs (one run: that run\'s value), with its spread over those runs (min–max, CV); ratio = A ÷ B; ' +
  `percentiles are never averaged across runs; a better side is named only beyond run-to-run noise: ${NOISE_RULE}, over the per-run values (the storage report's rule); ` +
  'that needs 2 or more runs a side and values above 0 (a logarithm), else the noise is unknown; values within 0.5 % are a tie; ' +
  // The storage report's system comparison also gives a win rate: the share of its matched
  // configurations (each tested on its own trials) that A wins beyond the noise. Here both sides
  // replayed one request set, so there is one configuration, and its "win rate" would be 100 %, 0 %
  // or none: the verdict again, not more evidence. Counting run pairs instead would be another
  // statistic, and would count as wins the very run-to-run differences the test weighs as noise.
  "the unit is the run: a side's runs are repeats of one configuration (they sent the same requests; compare warns where they did not), " +
  "and each metric's verdict is one test of A's runs against B's (n a side in the table) — so there is no win rate, which counts " +
  'configurations (kvbench report --compare): over one configuration it would only restate the verdict';

/** The settings that change what a run sent or how it counted: compare names the ones that differ. */
const COMPARED_SETTINGS = ['api', 'maxBatches', 'maxTokens', 'ignoreEos', 'temperature', 'topP', 'streamUsage'] as const;
type ComparedSettings = Pick<EndpointRunConfig, (typeof COMPARED_SETTINGS)[number]>;

export interface EndpointRunSummary {
  id: number;
  systemLabel: string;
  status: EndpointRunStatus;
  startedAt: string;
  /** The workload file's digest. */
  workloadDigest: string;
  /** What the run sent (see EndpointRunConfig.requestsDigest): runs are matched by this. */
  requestsDigest: string;
  model: string;
  /** The server, the prompt salt and how prompts were sized: equal in two runs, the later one replayed the earlier one's texts. */
  baseUrl: string;
  promptSalt: string;
  promptTokenizer: PromptTokenizer;
  settings: ComparedSettings;
  metrics: Record<string, number>;
  /** The kvbench that measured it: metrics whose definition changed between two runs' versions are named. */
  kvbenchVersion: string;
  /** Flat metric keys whose value may not be the run's own share, with why (serverMetricCaveats). */
  metricCaveats: Record<string, string>;
  /** The notes of its metrics pages (serverMetricNotes). */
  serverMetricNotes: string[];
  /** Why its output token counts may be too low (tokenCountCaveat), or null. */
  tokenCountCaveat: string | null;
  /** Stored before kvbench 0.5.0: its span-based values, recomputed or kept (EndpointRunRecord.legacyRates); null for later runs. */
  legacyRates: LegacyRates | null;
}

/** Whether a metric of the run is one its store recomputed from the stored requests (kvbench before 0.5.0 stored it over the span). */
export const isRecomputed = (r: Pick<EndpointRunSummary, 'legacyRates'>, key: string): boolean =>
  r.legacyRates?.recomputedBy != null && (SPAN_RATE_KEYS as readonly string[]).includes(key);

/** Whether a metric of the run is still the span-based value a kvbench before 0.5.0 stored (its requests could not reproduce it). */
export const isSpanBased = (r: Pick<EndpointRunSummary, 'legacyRates'>, key: string): boolean =>
  r.legacyRates != null && r.legacyRates.recomputedBy === null && (SPAN_RATE_KEYS as readonly string[]).includes(key);

/**
 * The kvbench whose definition a metric's value follows: the one that measured the run, except for
 * values recomputed from the stored requests, which follow the recomputing kvbench's.
 */
export const metricDefinitionVersion = (r: Pick<EndpointRunSummary, 'kvbenchVersion' | 'legacyRates'>, key: string): string =>
  isRecomputed(r, key) ? r.legacyRates!.recomputedBy! : r.kvbenchVersion;

/** A stored run as a comparison sees it. */
export function endpointRunSummary(
  r: Pick<EndpointRunRecord, 'id' | 'systemLabel' | 'status' | 'startedAt' | 'config' | 'metrics' | 'serverMetrics' | 'kvbenchVersion' | 'legacyRates'> & {
    aggregates: Pick<EndpointAggregates, 'tokenCountSources'>;
  },
): EndpointRunSummary {
  const c = r.config;
  const settings = Object.fromEntries(COMPARED_SETTINGS.map((k) => [k, c[k]])) as ComparedSettings;
  return {
    id: r.id,
    systemLabel: r.systemLabel,
    status: r.status,
    startedAt: r.startedAt,
    workloadDigest: c.workloadDigest,
    requestsDigest: c.requestsDigest,
    model: c.model,
    baseUrl: c.baseUrl,
    promptSalt: c.promptSalt,
    promptTokenizer: c.promptTokenizer,
    settings,
    metrics: r.metrics,
    kvbenchVersion: r.kvbenchVersion,
    metricCaveats: serverMetricCaveats(r.serverMetrics),
    serverMetricNotes: serverMetricNotes(r.serverMetrics),
    tokenCountCaveat: tokenCountCaveat(r.aggregates.tokenCountSources),
    legacyRates: r.legacyRates ?? null,
  };
}

/** How an endpoint metric is named in METRIC_DEFINITION_CHANGES (apart from the trial metrics, some of which share its key). */
const endpointChangeKey = (metricKey: string): string => `endpoint.${metricKey}`;

const SETTING_NAMES: Record<(typeof COMPARED_SETTINGS)[number], string> = {
  api: 'the API (--api)',
  maxBatches: 'the batches replayed (--max-batches)',
  maxTokens: 'max_tokens (--max-tokens)',
  ignoreEos: 'ignore_eos (--no-ignore-eos)',
  temperature: 'temperature (--temperature)',
  topP: 'top_p (--top-p)',
  streamUsage: 'stream usage (--no-stream-usage): output tokens are the server\'s usage on one side and counted chunks on the other',
};

/** Why runs that should be comparable may not be: what they sent, served and measured. */
function comparabilityWarnings(runs: readonly EndpointRunSummary[]): string[] {
  const warnings: string[] = [];
  const distinct = <T>(f: (r: EndpointRunSummary) => T): T[] => [...new Set(runs.map(f))];
  if (distinct((r) => r.requestsDigest).length > 1) {
    const files = distinct((r) => r.workloadDigest).length > 1;
    warnings.push(`the runs did not send the same requests (requests digests differ${files ? '; different workload files' : ''}): the numbers are not directly comparable`);
    const legacy = runs.filter((r) => r.requestsDigest.startsWith('legacy-')).map((r) => r.id);
    if (legacy.length > 0 && legacy.length < runs.length) {
      warnings.push(`run(s) ${legacy.join(', ')} were stored before kvbench recorded what a run sent (only the workload file's digest): they never match newer runs — re-run them to compare`);
    }
  }
  for (const k of COMPARED_SETTINGS) {
    const values = distinct((r) => JSON.stringify(r.settings[k]));
    if (values.length > 1) warnings.push(`${SETTING_NAMES[k]} differs between the runs (${values.join(' vs ')})`);
  }
  const models = distinct((r) => r.model);
  if (models.length > 1) warnings.push(`the runs served different models (${models.join(', ')})`);
  // Per metric, by the definition each run's value follows: a value recomputed from the stored
  // requests is today's, so it straddles nothing with the runs measured since the change.
  const straddling = new Set(ENDPOINT_METRICS.flatMap((m) => straddledChanges(distinct((r) => metricDefinitionVersion(r, m.key)), [endpointChangeKey(m.key)])));
  // In the list's order (straddledChanges'), every version a value follows.
  const allVersions = [...new Set(runs.flatMap((r) => [r.kvbenchVersion, r.legacyRates?.recomputedBy ?? r.kvbenchVersion]))];
  const changed = straddledChanges(allVersions, ENDPOINT_METRICS.map((m) => endpointChangeKey(m.key))).filter((c) => straddling.has(c));
  const name = (c: MetricDefinitionChange): string => c.metric.slice(endpointChangeKey('').length);
  for (const since of new Set(changed.map((c) => c.since))) {
    const these = changed.filter((c) => c.since === since);
    const versions = [...new Set(these.flatMap((c) => runs.map((r) => metricDefinitionVersion(r, name(c)))))].sort(compareVersions);
    warnings.push(
      `the runs were measured on both sides of kvbench ${since} (kvbench ${versions.join(', ')}), which changed ${these.map(name).join(', ')}: ` +
        these.map((c) => `${name(c)} ${c.change}`).join('; '),
    );
  }
  for (const r of runs) {
    if (r.legacyRates && r.legacyRates.recomputedBy === null) warnings.push(`run ${r.id} (${r.systemLabel}), values marked ${SPAN_BASED_MARK}: ${legacyRatesText(r.legacyRates)}`);
  }
  // The requests digest leaves the salt out on purpose, so repeat runs with one --prompt-salt on one
  // server are medianed together though every run after the first found the texts already cached.
  const sameTexts = new Map<string, EndpointRunSummary[]>();
  for (const r of runs) {
    const key = JSON.stringify([r.baseUrl, r.model, r.promptSalt, r.promptTokenizer]);
    sameTexts.set(key, [...(sameTexts.get(key) ?? []), r]);
  }
  for (const group of sameTexts.values()) {
    if (group.length < 2) continue;
    const [first, ...later] = [...group].sort((x, y) => x.startedAt.localeCompare(y.startedAt) || x.id - y.id);
    const name = (r: EndpointRunSummary): string => `run ${r.id} (${r.systemLabel})`;
    warnings.push(
      `${[first, ...later].map(name).join(', ')} sent the same prompt texts (--prompt-salt ${first.promptSalt}) to one server (${first.baseUrl}, model ${first.model}): ` +
        `${later.map(name).join(', ')} started with the ${later.length === 1 ? 'earlier run\'s' : 'earlier runs\''} prompts possibly still cached (a warm start, unlike ${name(first)}) — ` +
        'give each run its own salt (the default) unless a warm cache is what is measured',
    );
  }
  for (const r of runs) {
    if (r.tokenCountCaveat) warnings.push(`run ${r.id} (${r.systemLabel}): ${r.tokenCountCaveat}`);
    for (const n of r.serverMetricNotes) warnings.push(`run ${r.id} (${r.systemLabel}), ${n}`);
    const byReason = new Map<string, string[]>();
    for (const [key, why] of Object.entries(r.metricCaveats)) byReason.set(why, [...(byReason.get(why) ?? []), ENDPOINT_METRIC_BY_KEY[key]?.label ?? key]);
    if (byReason.size > 0) {
      const parts = [...byReason].map(([why, labels]) => `${labels.join(', ')}: ${why}`);
      warnings.push(`run ${r.id} (${r.systemLabel}): values marked * may not be the run's own share, so no side is named better on them — ${parts.join('; ')}`);
    }
  }
  return warnings;
}

/** Values within 0.5 % of each other are a tie: no side is named better on a 1.00x ratio. */
const TIE_BAND = 0.005;

/** The difference against the noise (COMPARE_METHOD), by the test every comparison uses. */
function noiseVerdict(a: readonly (number | undefined)[], b: readonly (number | undefined)[], test: NoiseTest | null): NoiseVerdict | null {
  if (!a.some((v) => v !== undefined) || !b.some((v) => v !== undefined)) return null;
  if (test === null) return 'unknown';
  return test.beyondNoise ? 'beyond' : 'within';
}

/** Compares two sets of runs metric by metric: medians and spreads per system, A ÷ B, who is better beyond noise. */
export function compareEndpointRuns(labelA: string, runsA: readonly EndpointRunSummary[], labelB: string, runsB: readonly EndpointRunSummary[]): EndpointComparison {
  const warnings: string[] = [];
  if (runsA.length === 0) warnings.push(`no runs for ${labelA}`);
  if (runsB.length === 0) warnings.push(`no runs for ${labelB}`);
  warnings.push(...comparabilityWarnings([...runsA, ...runsB]));
  for (const r of [...runsA, ...runsB]) if (r.status !== 'complete') warnings.push(`run ${r.id} (${r.systemLabel}) is ${r.status}: its failed requests are not in its latencies`);
  const rows: CompareRow[] = [];
  const spread = (g: ReturnType<typeof aggregate>): CompareSpread | null => (g.n === 0 ? null : { min: g.min!, max: g.max!, cv: g.cv });
  for (const metric of ENDPOINT_METRICS) {
    const ga = aggregate(runsA.map((r) => r.metrics[metric.key]));
    const gb = aggregate(runsB.map((r) => r.metrics[metric.key]));
    if (ga.n === 0 && gb.n === 0) continue;
    const a = ga.median;
    const b = gb.median;
    let leader: CompareRow['leader'] = null;
    const tie = a !== null && b !== null && Math.abs(a - b) <= TIE_BAND * Math.max(Math.abs(a), Math.abs(b));
    if (metric.better && a !== null && b !== null && !tie) leader = (metric.better === 'higher') === a > b ? 'a' : 'b';
    const valuesA = runsA.map((r) => r.metrics[metric.key]);
    const valuesB = runsB.map((r) => r.metrics[metric.key]);
    const test = welchLogTest(valuesA, valuesB);
    const noise = noiseVerdict(valuesA, valuesB, test);
    // The test's side (its geometric means) and the medians' agree but for odd spreads; where they
    // do not, no side is named better.
    const testSide = test === null || test.logRatio === 0 || !metric.better ? null : (metric.better === 'higher') === test.logRatio > 0 ? 'a' : 'b';
    const flagged = (runs: readonly EndpointRunSummary[]): number[] => runs.filter((r) => metric.key in r.metricCaveats && metric.key in r.metrics).map((r) => r.id);
    const flaggedA = flagged(runsA);
    const flaggedB = flagged(runsB);
    const trusted = flaggedA.length === 0 && flaggedB.length === 0;
    const marked = (runs: readonly EndpointRunSummary[], is: (r: EndpointRunSummary, key: string) => boolean): number[] =>
      runs.filter((r) => metric.key in r.metrics && is(r, metric.key)).map((r) => r.id);
    const legacy = { recomputedA: marked(runsA, isRecomputed), recomputedB: marked(runsB, isRecomputed), spanBasedA: marked(runsA, isSpanBased), spanBasedB: marked(runsB, isSpanBased) };
    // Span-based values beside today's do not measure the same thing: neither a better side nor a better value.
    if (spanBasedMixed({ nA: ga.n, nB: gb.n, ...legacy })) leader = null;
    rows.push({
      metric, a, b, nA: ga.n, nB: gb.n, spreadA: spread(ga), spreadB: spread(gb), ratio: ratio(a, b), noise, pValue: test?.pValue ?? null, leader,
      better: noise === 'beyond' && trusted && leader !== null && leader === testSide ? leader : null, flaggedA, flaggedB, ...legacy,
    });
  }
  const unjudged = rows.filter(spanBasedMixed);
  if (unjudged.length > 0) {
    const ids = [...new Set(unjudged.flatMap((r) => [...r.spanBasedA, ...r.spanBasedB]))].sort((x, y) => x - y);
    warnings.push(
      `no verdict on ${unjudged.map((r) => r.metric.label).join(', ')}: the values of run(s) ${ids.join(', ')} (marked ${SPAN_BASED_MARK}) are taken over the span, pauses included, ` +
        "as a kvbench before 0.5.0 stored them, the others' over the batches' own times — they do not measure the same thing, so no side is named better on them",
    );
  }
  const notes: string[] = [];
  const single = [runsA.length === 1 ? labelA : null, runsB.length === 1 ? labelB : null].filter((l): l is string => l !== null);
  if (single.length > 0) {
    notes.push(
      `one run of ${single.join(' and one of ')}: no noise estimate is possible, so no side is named better (the better value is marked "?") — run each system 3 or more times`,
    );
  }
  for (const r of [...runsA, ...runsB]) {
    if (r.legacyRates?.recomputedBy != null) notes.push(`run ${r.id} (${r.systemLabel}), values marked ${RECOMPUTED_MARK}: ${legacyRatesText(r.legacyRates)}`);
  }
  return { method: COMPARE_METHOD, labelA, labelB, runIdsA: runsA.map((r) => r.id), runIdsB: runsB.map((r) => r.id), warnings, notes, rows };
}

export interface CompareLabelsOptions {
  /** Partial runs count too (their failed requests are not in their latencies). */
  includePartial?: boolean;
  /** Only the newest run of each label. */
  latestOnly?: boolean;
  /** Exactly these runs for A (or B), instead of choosing by label. */
  runIdsA?: readonly number[];
  runIdsB?: readonly number[];
}

/** One side's runs from its candidates (newest first): those that sent the same requests as the newest, or as `preferDigest` where any did. */
function pickSide(candidates: readonly EndpointRunSummary[], latestOnly: boolean, preferDigest?: string): EndpointRunSummary[] {
  const same = preferDigest === undefined ? [] : candidates.filter((r) => r.requestsDigest === preferDigest);
  const chosen = same.length > 0 ? same : candidates.filter((r) => r.requestsDigest === candidates[0]?.requestsDigest);
  return latestOnly ? chosen.slice(0, 1) : chosen;
}

/**
 * The runs of each side from each label's candidates (newest first): A's runs that sent the same
 * requests (equal requests digests) as A's newest; B's runs that sent A's requests where B has such
 * runs, else those of B's newest (and compare warns that the requests differ).
 */
export function pickCompareRuns(
  candidatesA: readonly EndpointRunSummary[],
  candidatesB: readonly EndpointRunSummary[],
  latestOnly = false,
): { a: EndpointRunSummary[]; b: EndpointRunSummary[] } {
  const a = pickSide(candidatesA, latestOnly);
  return { a, b: pickSide(candidatesB, latestOnly, a[0]?.requestsDigest) };
}

/**
 * What compareLabels reads of the store: EndpointStore's own methods. Named here rather than imported
 * so that this file reaches no SQLite, and stays as free of Node as the shared code (the renderer's
 * tests build their comparisons with compareEndpointRuns, type-checked without Node's types).
 */
export interface CompareRunSource {
  requireRun(id: number): EndpointRunRecord;
  compareCandidates(label: string, opts: { includePartial: boolean }): EndpointRunSummary[];
  labels(): readonly { systemLabel: string; runs: number; complete: number }[];
}

/**
 * Per label, every complete run (partial ones too with `includePartial`) chosen by pickCompareRuns,
 * or exactly the runs given, which must be runs of that side's label (else a StoreError VALIDATION).
 * A side without runs is a StoreError NOT_FOUND that names the labels the
 * store does have.
 */
export function compareLabels(s: CompareRunSource, labelA: string, labelB: string, opts: CompareLabelsOptions = {}): EndpointComparison {
  // A run of another label would be printed under this side's label (the systems swapped or mixed
  // without a word), so it is refused rather than relabelled.
  const given = (side: 'A' | 'B', label: string, ids: readonly number[]): EndpointRunSummary[] =>
    ids.map((id) => {
      const r = s.requireRun(id);
      if (r.systemLabel !== label) throw new StoreError('VALIDATION', `run ${id} is a run of ${r.systemLabel}, not ${label}: the runs of side ${side} must be runs of its label (${label})`);
      return endpointRunSummary(r);
    });
  const candidates = (label: string): EndpointRunSummary[] => s.compareCandidates(label, { includePartial: opts.includePartial ?? false });
  const latest = opts.latestOnly ?? false;
  const A = opts.runIdsA ? given('A', labelA, opts.runIdsA) : pickSide(candidates(labelA), latest);
  // B follows A's requests however A was chosen.
  const B = opts.runIdsB ? given('B', labelB, opts.runIdsB) : pickSide(candidates(labelB), latest, A[0]?.requestsDigest);
  if (A.length === 0 || B.length === 0) {
    const known = s.labels().map((l) => `${l.systemLabel} (${l.complete}/${l.runs} complete)`);
    const missing = [A.length === 0 ? labelA : null, B.length === 0 ? labelB : null].filter(Boolean).join(' and ');
    throw new StoreError('NOT_FOUND', `no ${opts.includePartial ? 'complete or partial' : 'complete'} runs for ${missing}${known.length ? `; stored labels: ${known.join(', ')}` : ''}`);
  }
  return compareEndpointRuns(labelA, A, labelB, B);
}
