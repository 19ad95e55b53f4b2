// The comparison of two systems or drives over matched configurations (the analysis of seeds/002,
// automated): ratios, Welch tests on the trials' log values, win rates, and the cautions per side.
import { aggregate, combinedLogTest, formatP, geometricMean, meanLogRatio, mean, median, NOISE_RULE, ratio, welchLogTest, type NoiseTest } from '../../src-shared/domain/statistics.ts';
import { METRIC_BY_KEY, type ComparisonKind, type MetricDefinition, type TrialRecord } from '../../src-shared/domain/store-types.ts';
import { configKey, describeConfig, isUnknownConfigKey, optionValue } from '../store/results-ingest.ts';
import { labelGroupsText, labelsVerdictText, placeKey, placeLabel, quoteLabel } from '../../src-shared/domain/places.ts';
import { compareVersions, MIXED_DEFINITIONS, straddledChanges } from '../../src-shared/domain/metric-changes.ts';
import { attemptStandings } from '../../src-shared/domain/trial-slots.ts';
import { backingsText, countBackings, FLAGGED_EXCLUDED_METHOD, flagKindCountsOf, flagsOnce, scenarioOrder, suiteLabelGroups, type FlagsOf, type RamBackingCount, type SuiteLabelGroup } from './scenario-report.ts';
import { flagKindsText, type FlagKindCounts } from '../../src-shared/domain/trial-flags.ts';
import { differingOptions } from './tier-comparison.ts';
import { optionFlag } from '../engine/config/flags.ts';

export const COMPARISON_METRICS = [
  'decode_bytes_read',
  'wall_clock_throughput_tok_per_s',
  'storage_throughput_tok_per_s',
  'storage_read_bytes_per_s',
  'storage_write_bytes_per_s',
  'requests_per_s',
  'e2e_p95_ms',
  'storage_read_p95_ms',
  'storage_write_p95_ms',
] as const;

/** The metrics whose ability to tell A and B apart is ranked per CPU-tier size (seeds/002). */
const DIFFERENTIATOR_CANDIDATES = ['decode_bytes_read', 'wall_clock_throughput_tok_per_s', 'storage_throughput_tok_per_s', 'storage_read_bytes_per_s'];

export interface Side {
  label: string;
  /** The system's or drive's id; a suite label's is the label itself. */
  id: string;
  /** A drive side's size, where its label states one (TrialRecord.driveSizeBytes); null for other sides. */
  sizeBytes: number | null;
  trials: number;
  /** The suites its trials belong to, ascending: those a suite label pools, whatever their dates. */
  suiteIds: number[];
}

export interface ConfigComparison {
  /** The row's match key: its scenario and configuration (JSON), with each side's drive where a side ran it on several. */
  key: string;
  /** The first of scenarioIds. */
  scenarioId: string;
  /**
   * The scenario whose trials this row counts, as a list of one: a row never pools scenarios, even
   * those that ran the same configuration (the planner keeps them apart; see buildSystemComparison).
   */
  scenarioIds: string[];
  description: string;
  /** The system and drive each side's trials ran on (placeLabel): one each, never a pool of drives. */
  placeA: string;
  placeB: string;
  cpuMemGb: number | null;
  model: string | null;
  numUsers: number | null;
  nA: number;
  nB: number;
  medianA: number | null;
  medianB: number | null;
  /**
   * A ÷ B: the ratio of the sides' geometric means over their trials (exp of logRatio, the quantity
   * the noise test tests); where a value is 0 (no logarithm), medianA ÷ medianB.
   */
  ratio: number | null;
  cvA: number | null;
  cvB: number | null;
  /** Which side is better by the metric's direction (by the ratio); 'tie' at 1; null without both values or without a direction. */
  winner: 'a' | 'b' | 'tie' | null;
  /** mean(ln A) − mean(ln B) over the trials; null where a value is ≤ 0. */
  logRatio: number | null;
  /** The noise test's standard error of logRatio, degrees of freedom and two-sided p-value (NOISE_RULE); null where untestable. */
  standardError: number | null;
  df: number | null;
  pValue: number | null;
  /**
   * The difference may be run-to-run noise: p ≥ 0.05 (identical values always are); null when the
   * test cannot judge it (fewer than 2 trials on a side, or a value ≤ 0).
   */
  withinNoise: boolean | null;
  /** Trials of each side's median that the report flags (trialFlags: RAM-backed, page-cache reads, a stall): counted in it all the same. */
  flaggedA: number;
  flaggedB: number;
  /** With excludeFlagged, each side's flagged trials of this row left out (its n and test are without them); 0 without it. */
  excludedA: number;
  excludedB: number;
  /** The kvbench versions that measured this row's values of the metric, both sides (unknown ones left out), ascending. */
  measuredBy: string[];
  /**
   * The row's own values were measured on both sides of a listed change of the metric's definition
   * (src-shared/domain/metric-changes.ts): its ratio mixes two definitions, so it names no better side.
   */
  mixedDefinitions: boolean;
}

/** A change of a metric's definition that a comparison's trials straddle (see MetricComparison.mixedDefinitions). */
export interface DefinitionChange {
  since: string;
  change: string;
}

export interface MetricComparison {
  metric: MetricDefinition;
  configs: ConfigComparison[];
  compared: number;
  /** Arithmetic mean of per-configuration ratios (seeds/002's "mean ratio"), and the geometric mean. */
  meanRatio: number | null;
  /**
   * The geometric mean of the per-configuration ratios over the configurations the noise test
   * covers (2 or more trials a side; where none has, over every one with a ratio): exp(D), with D the
   * mean of their log ratios, the very quantity the verdict tests, so the bar the app draws and the
   * verdict never point different ways.
   */
  geoMeanRatio: number | null;
  medianRatio: number | null;
  /**
   * A's share of the configurations tested (`tested`: those in the metric's test, 2 or more trials a
   * side and values above 0) that are beyond the run-to-run noise by their own test with A better:
   * winsA ÷ tested. Null where none tested is beyond the noise (or none is tested): a configuration
   * whose noise is unknown never counts, neither as a win nor in the share. One within the noise,
   * or a tie, is in the share as no side's win; undirected metrics have none.
   */
  winRateA: number | null;
  /** The tested configurations beyond the noise by their own test where A, and where B, is better. */
  winsA: number;
  winsB: number;
  /**
   * The side the metric favours, as every reader colours it: one Welch test of D (see geoMeanRatio)
   * over the configurations with 2 or more trials a side, Var(D) = Σ SE_i² ÷ k²: the side D
   * favours where p < 0.05, else 'within-noise'; 'unknown' when no configuration has 2 trials a
   * side (or a logarithm), unless every one is a tie; null without a direction or a ratio.
   */
  verdict: MetricVerdict;
  /** The side the geometric mean favours (the verdict's side, or the one an 'unknown' or a within-noise one leans to); null at 1. */
  leader: 'a' | 'b' | null;
  /** Configurations in the metric's test (2 or more trials a side, positive values), and its standard error, degrees of freedom and p-value. */
  tested: number;
  standardError: number | null;
  df: number | null;
  pValue: number | null;
  /**
   * Why the arithmetic mean ratio, or most configurations beyond the noise, favour the other side
   * than the verdict (or an 'unknown''s leader); null when they agree. The bar cannot disagree: it is
   * the geometric mean the verdict tests. Every reader shows it beside the verdict.
   */
  verdictCaveat: string | null;
  /** Configurations whose difference may be noise. */
  withinNoise: number;
  /** Configurations whose noise is unknown (one trial a side, or a value ≤ 0): neither within the noise nor beyond it. */
  noiseUnknown: number;
  /** Median CV of each side across configurations. */
  medianCvA: number | null;
  medianCvB: number | null;
  /** Compared configurations with a flagged trial on either side (see ConfigComparison.flaggedA): their ratios count, and are marked. */
  flaggedConfigs: number;
  /**
   * The changes of the metric's definition its compared trials straddle (some measured before, some
   * from it on): its ratios mix two definitions, so every reader marks it ("mixed definitions †"), and
   * it has no verdict, leader, p-value or win rate, and is no best differentiator. Empty: one definition.
   */
  mixedDefinitions: DefinitionChange[];
}

/**
 * A side's matched trials (complete trials of the configurations both sides ran) that the report
 * flags, by why (FlagKindCounts: trace-only mode, a RAM-backed cache directory, page-cache reads, a stall, a
 * spill past the tiers its scenario names, a queueing-bound run, a GPU tier absent, smaller than asked or not pinned, an autoscaler short of its
 * peak or target): a trial may be counted under several reasons, and once
 * in `flaggedTrials`.
 */
export interface SideCautions extends FlagKindCounts {
  matchedTrials: number;
  flaggedTrials: number;
  /** The RAM-backed trials (ramBacked) by what held the directory in memory (TrialRecord.storageRamBacking; null: not recorded), most trials first. */
  ramBackings: RamBackingCount[];
}

/**
 * A metric over one group's configurations, by the very rules of its row in the per-metric table
 * (summarise): the geometric mean the verdict tests over the configurations with 2 or more trials a
 * side (a 0 has no logarithm: such a configuration is untested, in noiseUnknown), and A's win rate
 * among those tested. No arithmetic mean: it would average in the 0x of a side that read nothing.
 */
export type GroupMetric = { key: string; label: string } & Pick<
  MetricComparison,
  'compared' | 'tested' | 'noiseUnknown' | 'geoMeanRatio' | 'verdict' | 'leader' | 'pValue' | 'winRateA' | 'winsA' | 'winsB' | 'mixedDefinitions'
>;

export interface GroupComparison {
  group: string;
  configs: number;
  metrics: GroupMetric[];
  /**
   * Of the candidates whose verdict over the group names a side (its test beyond the noise), the
   * one whose side wins the largest share of the configurations tested, then the largest
   * |ln geo-mean|; null where none is beyond the noise. winRate: that side's share (null where no
   * configuration tested is beyond the noise on its own, though their combined test is).
   */
  bestDifferentiator: { key: string; label: string; geoMeanRatio: number; pValue: number | null; tested: number; winRate: number | null; side: 'a' | 'b' } | null;
}

export interface SystemComparison {
  /** What the sides are: two systems, two drives, or two suite labels. */
  kind: ComparisonKind;
  a: Side;
  b: Side;
  match: 'config' | 'scenario';
  matched: number;
  unmatchedA: number;
  unmatchedB: number;
  method: string;
  metrics: MetricComparison[];
  byCpuMem: GroupComparison[];
  byModel: GroupComparison[];
  variance: { users: number; configs: number; medianCvA: number | null; medianCvB: number | null }[];
  /** Each side's matched trials the report flags: the ratios and verdicts count them, so the notes say so (with excludeFlagged, none are left). */
  cautions: { a: SideCautions; b: SideCautions };
  /** Flagged trials were left out of every row, ratio and verdict (`--exclude-flagged`; off by default). */
  excludeFlagged: boolean;
  /**
   * With excludeFlagged, each side's trials so left out, by why: matchedTrials are the complete
   * trials of the configurations both sides ran before the exclusion, flaggedTrials those left out.
   * Null without it.
   */
  excludedFlagged: { a: SideCautions; b: SideCautions } | null;
  /**
   * The suite labels of each side's matched trials, with their suites (suiteLabelGroups). More than
   * one on a side: it counts suites of several labels together (a drive measured under two firmware
   * builds), as comparing two systems or drives means, and a note says so and what compares labels.
   */
  suiteLabels: { a: SuiteLabelGroup[]; b: SuiteLabelGroup[] };
  /**
   * The one suite label both sides of two systems or drives are narrowed to (`--compare A B --label
   * TEXT`: only the trials of suites that carry it); null: every suite of each side counts.
   */
  suiteLabel: string | null;
  notes: string[];
}

/** The side a ratio A ÷ B favours by the metric's direction; null at 1, without one or without a direction. */
function ratioSide(def: MetricDefinition, r: number | null): 'a' | 'b' | null {
  if (r === null || r === 1 || def.better === null) return null;
  return (def.better === 'higher') === r > 1 ? 'a' : 'b';
}

function winner(def: MetricDefinition, r: number | null, a: number | null, b: number | null): ConfigComparison['winner'] {
  if (a === null || b === null || def.better === null) return null;
  if (r !== null) return r === 1 ? 'tie' : ratioSide(def, r);
  if (a === b) return 'tie';
  return (def.better === 'higher') === a > b ? 'a' : 'b';
}

interface MatchedPair {
  key: string;
  a: TrialRecord[];
  b: TrialRecord[];
  /** A side of this configuration spans several drives: the description names each side's. */
  severalPlaces: boolean;
  /** With excludeFlagged, each side's flagged trials of this configuration and drive, left out of a and b. */
  leftOutA: TrialRecord[];
  leftOutB: TrialRecord[];
  /** Of a and b, the trials the report flags: counted once here, read by every metric's row. */
  flaggedA: number;
  flaggedB: number;
}

function compareConfigs(def: MetricDefinition, pairs: readonly MatchedPair[]): ConfigComparison[] {
  return pairs.map(({ key, a, b, severalPlaces, leftOutA, leftOutB, flaggedA, flaggedB }) => {
    const first = a[0] ?? b[0];
    const valuesA = a.map((t) => t.metrics[def.key]);
    const valuesB = b.map((t) => t.metrics[def.key]);
    const ga = aggregate(valuesA);
    const gb = aggregate(valuesB);
    const test = welchLogTest(valuesA, valuesB);
    const meanLog = meanLogRatio(valuesA, valuesB);
    // Where every value on both sides is the same, the test's log ratio is exactly 0: the means of
    // the logs of 3 and of 2 equal values can differ in the last bit, which with no spread on either
    // side the metric's test read as a difference beyond the noise (a 1.00x "B better").
    const logRatio = meanLog !== null && test !== null ? test.logRatio : meanLog;
    const r = logRatio !== null ? Math.exp(logRatio) : ratio(ga.median, gb.median);
    const measuredBy = measuringVersions(def, [...a, ...b]);
    const mixedDefinitions = straddledChanges(measuredBy, [def.key]).length > 0;
    return {
      key,
      scenarioId: first.scenarioId,
      scenarioIds: scenariosOf([...a, ...b]),
      description: `${describeConfig(first.options)}${severalPlaces ? ` — A on ${placeLabel(a[0])}, B on ${placeLabel(b[0])}` : ''}`,
      placeA: placeLabel(a[0]),
      placeB: placeLabel(b[0]),
      cpuMemGb: typeof first.options.cpuMemGb === 'number' ? first.options.cpuMemGb : null,
      model: typeof first.options.model === 'string' ? first.options.model : null,
      numUsers: typeof first.options.numUsers === 'number' ? first.options.numUsers : null,
      nA: ga.n,
      nB: gb.n,
      medianA: ga.median,
      medianB: gb.median,
      ratio: r,
      cvA: ga.cv,
      cvB: gb.cv,
      // A ratio of two definitions' values is no side's win.
      winner: mixedDefinitions ? null : winner(def, r, ga.median, gb.median),
      logRatio,
      standardError: test?.standardError ?? null,
      df: test?.df ?? null,
      pValue: test?.pValue ?? null,
      withinNoise: test === null ? null : !test.beyondNoise,
      flaggedA,
      flaggedB,
      excludedA: leftOutA.length,
      excludedB: leftOutB.length,
      measuredBy,
      mixedDefinitions,
    };
  });
}

/** The kvbench versions that measured these trials' values of the metric, once each, ascending; unknown ones (the reference's) left out. */
function measuringVersions(def: MetricDefinition, trials: readonly TrialRecord[]): string[] {
  const known = trials.filter((t) => t.metrics[def.key] !== undefined && t.measuredByVersion !== null).map((t) => t.measuredByVersion!);
  return [...new Set(known)].sort(compareVersions);
}

/** The changes of the metric's definition that these configurations' values straddle (see MetricComparison.mixedDefinitions). */
function mixedDefinitionsOf(def: MetricDefinition, configs: readonly ConfigComparison[]): DefinitionChange[] {
  return straddledChanges([...new Set(configs.flatMap((c) => c.measuredBy))], [def.key]).map((c) => ({ since: c.since, change: c.change }));
}

/**
 * 'unknown': no configuration has 2 or more trials a side (or a logarithm: a value ≤ 0), so the
 * noise cannot be judged and no side is named (as the endpoint compare names none without 2 runs a
 * side); `leader` says which side the geometric mean leans to.
 */
export type MetricVerdict = 'a' | 'b' | 'within-noise' | 'unknown' | null;

/** A configuration's test as the metric's test combines it; null where it cannot take part (fewer than 2 trials a side). */
function configTest(c: ConfigComparison): NoiseTest | null {
  if (c.nA < 2 || c.nB < 2 || c.logRatio === null || c.standardError === null || c.pValue === null) return null;
  return { logRatio: c.logRatio, standardError: c.standardError, df: c.df, pValue: c.pValue, beyondNoise: c.withinNoise === false };
}

/**
 * The win rate's counts (see MetricComparison.winRateA) over the configurations of the metric's
 * test: a difference nobody could test (one trial on a side, a value of 0) is no win for either.
 */
function winCounts(configs: readonly ConfigComparison[]): { tested: number; winsA: number; winsB: number } {
  const tested = configs.filter((c) => configTest(c) !== null);
  const beyond = tested.filter((c) => c.withinNoise === false);
  return { tested: tested.length, winsA: beyond.filter((c) => c.winner === 'a').length, winsB: beyond.filter((c) => c.winner === 'b').length };
}

/** The metric's test over its configurations and the geometric mean it tests (see MetricComparison). */
function metricTest(configs: readonly ConfigComparison[]): { test: NoiseTest | null; tested: number; geoMeanRatio: number | null } {
  const tests = configs.map(configTest).filter((t): t is NoiseTest => t !== null);
  const test = combinedLogTest(tests);
  if (test !== null) return { test, tested: tests.length, geoMeanRatio: Math.exp(test.logRatio) };
  const logs = configs.map((c) => c.logRatio).filter((l): l is number => l !== null);
  // Untested: the bar is still the geometric mean of the ratios, with a zero where a side had none.
  const geo = logs.length > 0 ? Math.exp(mean(logs)!) : geometricMean(configs.map((c) => c.ratio));
  return { test: null, tested: 0, geoMeanRatio: geo };
}

/** See MetricComparison.verdict. */
export function metricVerdict(def: MetricDefinition, configs: readonly ConfigComparison[]): MetricVerdict {
  const valid = configs.filter((c) => c.ratio !== null);
  // Values of two definitions: whatever the test says, it is the definitions' difference as much as the sides'.
  if (def.better === null || valid.length === 0 || mixedDefinitionsOf(def, valid).length > 0) return null;
  const { test, geoMeanRatio } = metricTest(valid);
  if (test === null) return valid.every((c) => c.withinNoise === true) ? 'within-noise' : 'unknown';
  return test.beyondNoise ? ratioSide(def, geoMeanRatio) : 'within-noise';
}

const fmtX = (r: number | null): string => (r === null ? '—' : `${r.toFixed(2)}x`);

/**
 * See MetricComparison.verdictCaveat. The verdict weighs each configuration's difference by its
 * size on a log scale; the arithmetic mean weighs a ratio above 1 more than its inverse, and the
 * win rate counts configurations whatever the size of their differences. Within the noise, the
 * verdict names no side, but the win rate still counts configurations beyond it: where they favour
 * the other side than the geometric mean leans to, that is said too.
 */
function verdictCaveat(
  def: MetricDefinition,
  verdict: MetricVerdict,
  leader: 'a' | 'b' | null,
  wins: { winsA: number; winsB: number },
  figures: { meanRatio: number | null; geoMeanRatio: number | null; tested: number; pValue: number | null },
): string | null {
  const side = verdict === 'a' || verdict === 'b' ? verdict : verdict === 'unknown' || verdict === 'within-noise' ? leader : null;
  if (side === null) return null;
  const other = side === 'a' ? 'b' : 'a';
  const reasons: string[] = [];
  if (verdict !== 'within-noise' && ratioSide(def, figures.meanRatio) === other) {
    reasons.push(`the arithmetic mean of the ratios, ${fmtX(figures.meanRatio)}, leans ${other.toUpperCase()}: it weighs a ratio above 1 more than its inverse (2x and 0.5x average 1.25x)`);
  }
  const [forSide, forOther] = side === 'a' ? [wins.winsA, wins.winsB] : [wins.winsB, wins.winsA];
  if (forOther > forSide) {
    reasons.push(
      `${forOther} of the ${forSide + forOther} configuration(s) beyond the run-to-run noise favour ${other.toUpperCase()}: ` +
        `the win rate counts configurations, the ${verdict === 'within-noise' ? 'test' : 'verdict'} weighs each difference by its size`,
    );
  }
  if (reasons.length === 0) return null;
  const basis =
    verdict === 'unknown'
      ? `${side.toUpperCase()}? (no side named): the geometric mean, ${fmtX(figures.geoMeanRatio)}, leans ${side.toUpperCase()}, untested (no configuration has 2 trials a side)`
      : verdict === 'within-noise'
        ? `≈ noise: the geometric mean over the ${figures.tested} configuration(s) tested, ${fmtX(figures.geoMeanRatio)}, leans ${side.toUpperCase()}, within the noise (p = ${formatP(figures.pValue)})`
        : `verdict ${side.toUpperCase()}: the geometric mean over the ${figures.tested} configuration(s) tested, ${fmtX(figures.geoMeanRatio)}, is beyond the noise (p = ${formatP(figures.pValue)})`;
  return `${basis}; ${reasons.join('; ')}`;
}

function summarise(def: MetricDefinition, configs: ConfigComparison[]): Omit<MetricComparison, 'flaggedConfigs'> {
  const valid = configs.filter((c) => c.ratio !== null);
  const mixedDefinitions = mixedDefinitionsOf(def, valid);
  const mixed = mixedDefinitions.length > 0;
  // Over two definitions no side is named: no win counted, no test, no lean; the ratios stay, marked.
  const wins = mixed ? { tested: 0, winsA: 0, winsB: 0 } : winCounts(valid);
  const withinNoiseCount = configs.filter((c) => c.withinNoise === true).length;
  const { test: measuredTest, tested, geoMeanRatio } = metricTest(valid);
  const test = mixed ? null : measuredTest;
  const meanRatio = mean(valid.map((c) => c.ratio));
  const verdict = metricVerdict(def, configs);
  const leader = mixed ? null : ratioSide(def, geoMeanRatio);
  return {
    metric: def,
    configs,
    compared: valid.length,
    meanRatio,
    geoMeanRatio,
    medianRatio: median(valid.map((c) => c.ratio)),
    winRateA: wins.winsA + wins.winsB > 0 ? wins.winsA / wins.tested : null,
    winsA: wins.winsA,
    winsB: wins.winsB,
    verdict,
    leader,
    tested,
    standardError: test?.standardError ?? null,
    df: test?.df ?? null,
    pValue: test?.pValue ?? null,
    verdictCaveat: verdictCaveat(def, verdict, leader, wins, { meanRatio, geoMeanRatio, tested, pValue: test?.pValue ?? null }),
    withinNoise: withinNoiseCount,
    noiseUnknown: valid.filter((c) => c.withinNoise === null).length,
    medianCvA: median(configs.map((c) => c.cvA)),
    medianCvB: median(configs.map((c) => c.cvB)),
    mixedDefinitions,
  };
}

function groupComparison(group: string, metrics: MetricComparison[], keep: (c: ConfigComparison) => boolean): GroupComparison {
  const rows = metrics.map((m): GroupMetric => {
    const { compared, tested, noiseUnknown, geoMeanRatio, verdict, leader, pValue, winRateA, winsA, winsB, mixedDefinitions } = summarise(m.metric, m.configs.filter(keep));
    return { key: m.metric.key, label: m.metric.label, compared, tested, noiseUnknown, geoMeanRatio, verdict, leader, pValue, winRateA, winsA, winsB, mixedDefinitions };
  });
  let best: GroupComparison['bestDifferentiator'] = null;
  let bestScore = -Infinity;
  for (const r of rows) {
    // No side is named without a test beyond the noise: an untested lean or a within-noise one is no differentiator.
    // Nor is one whose values mix two definitions of it (it has no verdict anyway: said for the reader).
    if (!DIFFERENTIATOR_CANDIDATES.includes(r.key) || r.mixedDefinitions.length > 0 || (r.verdict !== 'a' && r.verdict !== 'b') || r.geoMeanRatio === null) continue;
    const side = r.verdict;
    const winRate = r.winRateA === null ? null : (side === 'a' ? r.winsA : r.winsB) / r.tested;
    const score = (winRate ?? 0) * 1000 + Math.abs(Math.log(r.geoMeanRatio));
    if (score > bestScore) {
      bestScore = score;
      best = { key: r.key, label: r.label, geoMeanRatio: r.geoMeanRatio, pValue: r.pValue, tested: r.tested, winRate, side };
    }
  }
  const configs = metrics[0] ? metrics[0].configs.filter(keep).length : 0;
  return { group, configs, metrics: rows, bestDifferentiator: best };
}

/**
 * A side's trials of matched configurations that the comparison leaves out, not being complete
 * (partial, failed, aborted, running); an attempt a resume retried to completion is no trial missing.
 */
function leftOutOfMatched(trials: readonly TrialRecord[], matched: (key: string) => boolean, keyOf: (t: TrialRecord) => string): TrialRecord[] {
  const standings = attemptStandings(trials, false);
  return trials.filter((t) => t.status !== 'complete' && standings.get(t)!.supersededBy === null && matched(keyOf(t)));
}

/** "mlperf-large-model 1 partial; storage-only 2 failed": left-out trials counted per scenario and status. */
function describeLeftOut(trials: readonly TrialRecord[]): string {
  const counts = new Map<string, { scenarioId: string; status: string; n: number }>();
  for (const t of trials) {
    const k = `${t.scenarioId}\u0000${t.status}`;
    counts.set(k, { scenarioId: t.scenarioId, status: t.status, n: (counts.get(k)?.n ?? 0) + 1 });
  }
  return [...counts.values()].map((c) => `${c.scenarioId} ${c.n} ${c.status}`).join('; ');
}

/** The scenarios of these trials, once each, in suite order. */
const scenariosOf = (ts: readonly TrialRecord[]): string[] => [...new Set(ts.map((t) => t.scenarioId))].sort((x, y) => scenarioOrder(x) - scenarioOrder(y) || x.localeCompare(y));

/** A side's trials of these rows once each, though a drive of it pairs with several of the other side's (one row each). */
const sideTrials = (rows: readonly { a: readonly TrialRecord[]; b: readonly TrialRecord[] }[], side: 'a' | 'b'): TrialRecord[] => [...new Set(rows.flatMap((r) => r[side]))];

/** See SideCautions. A RAM-backed directory's reads are memory's anyway: counted there, never also as page-cache reads (trialFlags). */
function sideCautions(trials: readonly TrialRecord[], flagsOf: FlagsOf): SideCautions {
  const ramBacked = trials.filter((t) => t.metrics.storage_ram_backed === 1);
  return { matchedTrials: trials.length, flaggedTrials: trials.filter((t) => flagsOf(t).length > 0).length, ...flagKindCountsOf(trials, flagsOf), ramBackings: countBackings(ramBacked.map((t) => ({ backing: t.storageRamBacking, trials: 1 }))) };
}

/** The notes that say what a side's flagged trials are: the comparison counts them like any other. */
function cautionNotes(name: string, label: string, c: SideCautions): string[] {
  const of = (n: number): string => `${n} of its ${c.matchedTrials} matched trial(s)`;
  return [
    c.ramBacked > 0
      ? `${name} (${label}): ${of(c.ramBacked)} ran on a RAM-backed cache directory (${backingsText(c.ramBackings)}): their storage numbers describe memory, not a drive`
      : null,
    c.pageCache > 0 ? `${name} (${label}): in ${of(c.pageCache)} the page cache served storage reads: their storage read numbers describe RAM, not the drive` : null,
    c.stalled > 0 ? `${name} (${label}): in ${of(c.stalled)} the engine stalled (the window closed far past its plan): kvbench, not the drive, may have set their pace` : null,
    c.spilled > 0 ? `${name} (${label}): ${of(c.spilled)} spilled past the tiers their scenario names (CPU only reading the drive): their numbers include a slower tier's` : null,
    c.queueingBound > 0
      ? `${name} (${label}): ${of(c.queueingBound)} were queueing-bound (requests still piling up at the window's close): their end-to-end latency and queue wait measure the queue, not the drive`
      : null,
    c.gpuTier > 0
      ? `${name} (${label}): in ${of(c.gpuTier)} the GPU tier was absent, smaller than asked or its staging not pinned: their numbers are not those of the GPU tier their configuration names`
      : null,
    c.other > 0 ? `${name} (${label}): ${of(c.other)} carry another caution (kvbench report lists it per trial)` : null,
  ].filter((n): n is string => n !== null);
}

/**
 * "cpu-storage (tiny-1b, …) only in B, A ran it as storage-saturation": per scenario of a side
 * unmatched (matching by configuration) whose configuration the other side ran under other
 * scenarios only, what it ran instead.
 */
function otherScenarioOnly(ga: Grouped, gb: Grouped): string[] {
  const byConfig = (g: Grouped): Map<string, Map<string, TrialRecord>> => {
    const m = new Map<string, Map<string, TrialRecord>>();
    for (const places of g.values()) {
      const first = [...places.values()][0][0];
      if (isUnknownConfigKey(first.configKey)) continue;
      let scenarios = m.get(first.configKey);
      if (!scenarios) m.set(first.configKey, (scenarios = new Map()));
      scenarios.set(first.scenarioId, first);
    }
    return m;
  };
  const [ca, cb] = [byConfig(ga), byConfig(gb)];
  const out: string[] = [];
  for (const [name, other, mine, theirs] of [['A', 'B', ca, cb], ['B', 'A', cb, ca]] as const) {
    for (const [config, scenarios] of mine) {
      const elsewhere = theirs.get(config);
      if (!elsewhere) continue;
      for (const [scenarioId, first] of scenarios) {
        if (elsewhere.has(scenarioId)) continue;
        const ran = scenariosOf([...elsewhere.values()]).join(' and ');
        out.push(`${scenarioId} (${describeConfig(first.options)}) only in ${name}, ${other} ran it as ${ran}`);
      }
    }
  }
  return out;
}

/** What the planner derives from each machine (its RAM and GPU memory): the only options `--match scenario` lets differ (storage capacity is no part of a configuration). */
const MACHINE_DERIVED_KEYS: readonly string[] = ['numUsers', 'gpuMemGb', 'cpuMemGb'];

/**
 * What `--match scenario` matches: the scenario, and every option of the configuration key but the
 * user count and tier budgets the planner derives from each machine. So a smoke suite never pools
 * with a standard one, nor a run with a concurrency cap, multi-turn off or another seed's dataset
 * with one without. A trial of unknown configuration (imported without --run-flags) keeps its own
 * key: the defaults are no guess at how it ran.
 */
function scenarioMatchKey(t: TrialRecord): string {
  const ownKey = t.scenarioId === 'imported' || isUnknownConfigKey(t.configKey);
  const workload = Object.fromEntries(Object.entries(t.options).filter(([k]) => !MACHINE_DERIVED_KEYS.includes(k)));
  return JSON.stringify([t.scenarioId, ownKey ? t.configKey : configKey(workload)]);
}

/** "numUsers 4 vs 8" for each machine-derived option whose values differ between the sides (several on a side: "4/8"). */
function derivedDifferences(a: readonly TrialRecord[], b: readonly TrialRecord[]): string[] {
  const values = (ts: readonly TrialRecord[], k: string): string => [...new Set(ts.map((t) => String(optionValue(t.options, k))))].sort().join('/');
  return MACHINE_DERIVED_KEYS.filter((k) => values(a, k) !== values(b, k)).map((k) => `${optionFlag(k)} ${values(a, k)} vs ${values(b, k)}`);
}

/**
 * With `--match scenario`, what a reader cannot see in the rows: per matched scenario, the users and
 * tier budgets that differ between the sides; per scenario both sides ran but that matched nothing,
 * the options in which the other side's nearest configuration differs.
 */
function scenarioMatchNotes(ga: Map<string, Map<string, TrialRecord[]>>, gb: Map<string, Map<string, TrialRecord[]>>): string[] {
  const trialsOf = (g: Map<string, TrialRecord[]>): TrialRecord[] => [...g.values()].flat();
  const notes: string[] = [];
  for (const [k, pa] of ga) {
    const ta = trialsOf(pa);
    const first = ta[0];
    const pb = gb.get(k);
    if (pb) {
      const differ = derivedDifferences(ta, trialsOf(pb));
      if (differ.length > 0) notes.push(`${first.scenarioId} (${describeConfig(first.options)}): matched by scenario, A and B differ in ${differ.join(', ')}`);
      continue;
    }
    if (isUnknownConfigKey(first.configKey)) continue;
    const others = [...gb.entries()].filter(([kb, g]) => !ga.has(kb) && trialsOf(g)[0].scenarioId === first.scenarioId && !isUnknownConfigKey(trialsOf(g)[0].configKey));
    const nearest = others.map(([, g]) => differingOptions(first.options, trialsOf(g)[0].options, MACHINE_DERIVED_KEYS)).sort((x, y) => x.length - y.length)[0];
    if (nearest) notes.push(`${first.scenarioId} (${describeConfig(first.options)}): not matched, B's nearest run of this scenario differs in ${nearest.join(', ')} (--match scenario lets only the users and tier budgets differ)`);
  }
  return notes;
}

/** A comparison of a system, drive or suite label with itself: a VALIDATION error (its ratios would only show the noise of one set of trials split in two). */
export class ComparisonRefused extends Error {
  readonly code = 'VALIDATION';
}

/** How a system comparison is made, as every reader prints it beneath its table. */
export const COMPARISON_METHOD =
  'per scenario, configuration and drive (never pooled across scenarios that ran one configuration; a side that ran a configuration on several drives has one row per drive, never a pool), over each side\'s complete trials: ' +
  'ratio = A ÷ B of the geometric means of the trials (medians shown beside it); ' +
  `beyond noise: ${NOISE_RULE}, per configuration (2 or more trials a side, values above 0; else its noise is unknown); ` +
  'better = the side the geometric mean of the ratios over the configurations so tested favours, where one such test of it (its variance the sum of theirs) gives p < 0.05, ' +
  '≈ noise where p ≥ 0.05, A? or B? (no side named) where no configuration has 2 trials a side; ' +
  'A win rate = A\'s share of the configurations so tested that are beyond the noise by their own test with A better by the metric\'s direction ' +
  '(— where none is; a configuration whose noise is unknown never counts); by CPU-tier size and by model: the same, over each group\'s configurations';

/** One matched configuration and drive pair, with each side's trials (see buildSystemComparison's grouping). */
interface MatchedRow {
  key: string;
  placeA: string;
  placeB: string;
  a: TrialRecord[];
  b: TrialRecord[];
  severalPlaces: boolean;
}

type Grouped = Map<string, Map<string, TrialRecord[]>>;

/** The configurations both sides ran, once per pair of their drives. */
function matchedRows(ga: Grouped, gb: Grouped): MatchedRow[] {
  return [...ga.keys()]
    .filter((k) => gb.has(k))
    .flatMap((key) => {
      const [pa, pb] = [ga.get(key)!, gb.get(key)!];
      const severalPlaces = pa.size > 1 || pb.size > 1;
      return [...pa].flatMap(([placeA, a]) => [...pb].map(([placeB, b]) => ({ key, placeA, placeB, a, b, severalPlaces })));
    });
}

const rowId = (r: MatchedRow): string => `${r.key}\u0000${r.placeA}\u0000${r.placeB}`;

/** "storage-only: tiny-1b, 4 users … (A 1 of 3 trials unflagged, B 3 of 3)": a configuration the exclusion of flagged trials changed. */
function describeExclusion(first: TrialRecord, all: { a: number; b: number }, kept: { a: number; b: number }, places: string | null): string {
  return `${first.scenarioId}: ${describeConfig(first.options)}${places ?? ''} (A ${kept.a} of ${all.a} trial(s) unflagged, B ${kept.b} of ${all.b})`;
}

/**
 * What leaving the flagged trials out did, in notes: per side, how many of its matched trials were
 * left out and why; the configurations that had only flagged trials on a side (no longer compared);
 * those that fell below 2 trials on a side (no longer tested).
 */
function exclusionNotes(
  sides: readonly (readonly [string, string, SideCautions])[],
  before: readonly MatchedRow[],
  after: readonly MatchedPair[],
  afterIds: ReadonlySet<string>,
  flagsOf: FlagsOf,
): string[] {
  const notes: string[] = [];
  for (const [name, label, c] of sides) {
    if (c.flaggedTrials > 0) notes.push(`${name} (${label}): ${c.flaggedTrials} of its ${c.matchedTrials} matched trial(s) left out as flagged (${flagKindsText(c)})`);
  }
  if (sides.every(([, , c]) => c.flaggedTrials === 0)) notes.push('flagged trials excluded: no matched trial is flagged, so none was left out');
  const placesOf = (r: { severalPlaces: boolean; a: readonly TrialRecord[]; b: readonly TrialRecord[] }): string | null =>
    r.severalPlaces ? ` — A on ${placeLabel(r.a[0])}, B on ${placeLabel(r.b[0])}` : null;
  const clean = (ts: readonly TrialRecord[]): number => ts.filter((t) => flagsOf(t).length === 0).length;
  const gone = before.filter((r) => !afterIds.has(rowId(r)));
  if (gone.length > 0) {
    notes.push(
      `${gone.length} matched configuration(s) had only flagged trials on a side, so with those left out they are not compared: ` +
        gone.map((r) => describeExclusion(r.a[0], { a: r.a.length, b: r.b.length }, { a: clean(r.a), b: clean(r.b) }, placesOf(r))).join('; '),
    );
  }
  const belowTwo = (n: number, leftOut: number): boolean => n < 2 && n + leftOut >= 2;
  const untested = after.filter((p) => belowTwo(p.a.length, p.leftOutA.length) || belowTwo(p.b.length, p.leftOutB.length));
  if (untested.length > 0) {
    notes.push(
      `${untested.length} matched configuration(s) fell below 2 trials on a side with the flagged trials left out, so they lose their noise test ` +
        `(their noise is unknown; a verdict counts them only where no configuration has 2 trials a side): ` +
        untested
          .map((p) => describeExclusion(p.a[0], { a: p.a.length + p.leftOutA.length, b: p.b.length + p.leftOutB.length }, { a: p.a.length, b: p.b.length }, placesOf(p)))
          .join('; '),
    );
  }
  return notes;
}

/**
 * Compares two sets of trials (two systems, or two drives) over matched configurations: trials
 * with equal workload options (`config`), or, for suites planned on machines with different RAM,
 * the same scenario (`scenario`). Only complete trials count; with `excludeFlagged`, only those the
 * report does not flag (trialFlags), and the notes say what that left out.
 */
export function buildSystemComparison(
  a: { label: string; id: string; trials: readonly TrialRecord[] },
  b: { label: string; id: string; trials: readonly TrialRecord[] },
  opts: { match?: 'config' | 'scenario'; metrics?: readonly string[]; kind?: ComparisonKind; excludeFlagged?: boolean; suiteLabel?: string | null } = {},
): SystemComparison {
  const kind = opts.kind ?? 'system';
  if (a.id === b.id) {
    throw new ComparisonRefused(
      kind === 'label'
        ? `A and B are the same suite label (${a.label}): compare two different labels`
        : `A and B are the same ${kind} (${a.label}, ${a.id}): compare two different ${kind}s`,
    );
  }
  const match = opts.match ?? 'config';
  // A configuration is matched within its scenario, never across: the planner keeps scenarios that
  // share every workload option apart (cpu-storage and storage-saturation can differ in the storage
  // cap), and a row pooling both gave a ratio that matched neither.
  const keyOf = (t: TrialRecord): string => (match === 'config' ? JSON.stringify([t.scenarioId, t.configKey]) : scenarioMatchKey(t));
  // Per configuration, then per system and drive: a system whose configuration ran on two drives
  // has two measurements of it, and pooling them would hide the drives' difference (3× can come
  // out as a tie). Each drive is compared on its own, as the scenario report keeps them apart.
  const group = (ts: readonly TrialRecord[], counts: (t: TrialRecord) => boolean): Grouped => {
    const m: Grouped = new Map();
    for (const t of ts) {
      if (!counts(t)) continue;
      let byPlace = m.get(keyOf(t));
      if (!byPlace) m.set(keyOf(t), (byPlace = new Map()));
      let g = byPlace.get(placeKey(t));
      if (!g) byPlace.set(placeKey(t), (g = []));
      g.push(t);
    }
    return m;
  };
  const excludeFlagged = opts.excludeFlagged ?? false;
  // Each trial's flags worked out once: whether it counts, each row's and side's flagged counts read them.
  const flagsOf = flagsOnce();
  const isFlagged = (t: TrialRecord): boolean => flagsOf(t).length > 0;
  const complete = (t: TrialRecord): boolean => t.status === 'complete';
  // Every complete trial, and the ones that count: without the exclusion, the same.
  const [allA, allB] = [group(a.trials, complete), group(b.trials, complete)];
  const counted = (t: TrialRecord): boolean => complete(t) && !isFlagged(t);
  const [ga, gb] = excludeFlagged ? [group(a.trials, counted), group(b.trials, counted)] : [allA, allB];
  const leftOut = (all: Grouped, key: string, place: string): TrialRecord[] => (excludeFlagged ? (all.get(key)?.get(place) ?? []).filter(isFlagged) : []);
  const rows = matchedRows(ga, gb);
  const pairs: MatchedPair[] = rows.map((r) => ({
    key: r.severalPlaces ? rowId(r) : r.key,
    a: r.a,
    b: r.b,
    severalPlaces: r.severalPlaces,
    leftOutA: leftOut(allA, r.key, r.placeA),
    leftOutB: leftOut(allB, r.key, r.placeB),
    flaggedA: r.a.filter(isFlagged).length,
    flaggedB: r.b.filter(isFlagged).length,
  }));
  pairs.sort((x, y) => scenarioOrder(scenariosOf([...x.a, ...x.b])[0]) - scenarioOrder(scenariosOf([...y.a, ...y.b])[0]) || x.key.localeCompare(y.key));
  const metricKeys = opts.metrics ?? COMPARISON_METRICS;
  const metrics = metricKeys
    .map((k) => METRIC_BY_KEY[k])
    .filter((d): d is MetricDefinition => d !== undefined)
    .map((def) => summarise(def, compareConfigs(def, pairs)))
    .map((m) => ({ ...m, flaggedConfigs: m.configs.filter((c) => c.ratio !== null && c.flaggedA + c.flaggedB > 0).length }));
  const cpuValues = [...new Set(pairs.map((p) => p.a[0].options.cpuMemGb).filter((v): v is number => typeof v === 'number'))].sort((x, y) => x - y);
  const models = [...new Set(pairs.map((p) => p.a[0].options.model).filter((v): v is string => typeof v === 'string'))].sort();
  const users = [...new Set(pairs.map((p) => p.a[0].options.numUsers).filter((v): v is number => typeof v === 'number'))].sort((x, y) => x - y);
  const tput = metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s');
  const suiteLabel = opts.suiteLabel ?? null;
  const notes: string[] = [];
  // Narrowed to a label, a side may have no trial of it at all: said first, naming the label, and
  // matching by scenario would not help.
  const quotedLabel = suiteLabel === null ? null : quoteLabel(suiteLabel);
  const emptySides = quotedLabel === null ? [] : ([['A', a], ['B', b]] as const).filter(([, side]) => side.trials.length === 0);
  for (const [name, side] of emptySides) notes.push(`${name} (${side.label}): none of its trials is in a suite labelled ${quotedLabel}, so under that label it has nothing to compare`);
  if (pairs.length === 0) {
    const tryScenario = match === 'config' && emptySides.length === 0 ? ' (try --match scenario)' : '';
    notes.push(`no ${match === 'config' ? 'configuration' : 'scenario'} has complete${excludeFlagged ? ' unflagged' : ''} trials on both sides${tryScenario}`);
  }
  // Said before the other notes: what the exclusion left out explains the rows and counts below.
  let excludedFlagged: SystemComparison['excludedFlagged'] = null;
  if (excludeFlagged) {
    const before = matchedRows(allA, allB);
    excludedFlagged = { a: sideCautions(sideTrials(before, 'a'), flagsOf), b: sideCautions(sideTrials(before, 'b'), flagsOf) };
    const sides = [['A', a.label, excludedFlagged.a], ['B', b.label, excludedFlagged.b]] as const;
    notes.push(...exclusionNotes(sides, before, pairs, new Set(rows.map(rowId)), flagsOf));
  }
  const oneTrial = pairs.filter((p) => p.a.length < 2 || p.b.length < 2).length;
  if (oneTrial > 0) {
    notes.push(
      `${oneTrial} matched configuration(s) have fewer than 2 trials on a side: their noise is unknown, so they stay out of each metric's geometric mean and verdict ` +
        'where other configurations have 2 or more, and where none has, no side is named; they never count in a win rate (run 3–5 trials)',
    );
  }
  if (match === 'scenario') notes.push(...scenarioMatchNotes(ga, gb));
  for (const [name, side] of [['A', a], ['B', b]] as const) {
    const left = leftOutOfMatched(side.trials, (k) => ga.has(k) && gb.has(k), keyOf);
    if (left.length > 0) notes.push(`${name} (${side.label}): ${left.length} trial(s) of matched configurations left out, not complete (${describeLeftOut(left)}): only complete trials count`);
  }
  if (match === 'config') {
    const unmatched = otherScenarioOnly(ga, gb);
    if (unmatched.length > 0) {
      notes.push(
        `${unmatched.length} scenario(s) ran a configuration that the other side ran only under another scenario, so they are not matched (a scenario is compared only with the same scenario: ` +
          `scenarios that share a configuration can still differ, e.g. in the storage cap): ${unmatched.join('; ')}`,
      );
    }
  }
  for (const [name, side] of [['A', a], ['B', b]] as const) {
    const unknown = side.trials.filter((t) => t.status === 'complete' && isUnknownConfigKey(t.configKey)).length;
    if (unknown > 0) notes.push(`${name} (${side.label}) has ${unknown} complete trial(s) of unknown configuration (imported without --run-flags): they match nothing`);
  }
  // The versions that measured the trials (the reference's, and those whose stored results could not be read for it, are unknown: left out).
  for (const m of metrics) {
    for (const c of m.mixedDefinitions) {
      notes.push(
        `${m.metric.key} changed definition in kvbench ${c.since} (it ${c.change}), and these trials were measured on both sides of it: its ratios mix the two, ` +
          `so its row is marked "${MIXED_DEFINITIONS}" and names no better side, p-value or win rate, and it is no best differentiator`,
      );
    }
  }
  // Flagged trials stay in the medians: the numbers are what that setup measured (a RAM disk as a
  // ceiling is a fair question), and the caution concerns every throughput of the trial, not one
  // storage metric that could be left out. So they count, and the reader is told which and why.
  const matched = { a: sideTrials(pairs, 'a'), b: sideTrials(pairs, 'b') };
  const cautions = { a: sideCautions(matched.a, flagsOf), b: sideCautions(matched.b, flagsOf) };
  const cautioned = [...cautionNotes('A', a.label, cautions.a), ...cautionNotes('B', b.label, cautions.b)];
  if (cautioned.length > 0) {
    notes.push(
      ...cautioned,
      'the ratios, win rates and verdicts count those trials like any other: a side named better on them may owe it to what flagged them, not to its drive ' +
        '(the flagged column counts the configurations they are in; per configuration, see --per-config)',
    );
  }
  // A side of a system or drive takes every suite of it, whatever their labels: said, never split,
  // since that is what --compare of two systems or drives means; comparing labels is --labels.
  const suiteLabels = { a: suiteLabelGroups(matched.a), b: suiteLabelGroups(matched.b) };
  for (const [name, side, groups] of [['A', a, suiteLabels.a], ['B', b, suiteLabels.b]] as const) {
    if (groups.length < 2) continue;
    notes.push(
      `${name} (${side.label}): its matched trials come from suites of ${groups.length} suite labels (${labelGroupsText(groups)}), counted together as one side; ` +
        labelsVerdictText(groups),
    );
  }
  for (const [name, side, groups] of [['A', a, ga], ['B', b, gb]] as const) {
    const spread = [...groups].filter(([k, places]) => places.size > 1 && ga.has(k) && gb.has(k));
    if (spread.length === 0) continue;
    const drives = [...new Set(spread.flatMap(([, places]) => [...places.values()].map((ts) => placeLabel(ts[0]))))].sort();
    notes.push(
      `${name} (${side.label}) ran ${spread.length} matched configuration(s) on several drives (${drives.join('; ')}): each drive is compared on its own row, never pooled, ` +
        'so those configurations count once per drive in the ratios and win rates (see --per-config; compare drives directly with --drives)',
    );
  }
  const sizeOf = (x: typeof a): number | null => (kind === 'drive' ? (x.trials.find((t) => typeof t.driveSizeBytes === 'number')?.driveSizeBytes ?? null) : null);
  const sideOf = (x: typeof a): Side => ({ label: x.label, id: x.id, sizeBytes: sizeOf(x), trials: x.trials.length, suiteIds: [...new Set(x.trials.map((t) => t.suiteId))].sort((p, q) => p - q) });
  return {
    kind,
    a: sideOf(a),
    b: sideOf(b),
    match,
    matched: pairs.length,
    unmatchedA: [...ga.keys()].filter((k) => !gb.has(k)).length,
    unmatchedB: [...gb.keys()].filter((k) => !ga.has(k)).length,
    method: excludeFlagged ? `${COMPARISON_METHOD}; ${FLAGGED_EXCLUDED_METHOD}` : COMPARISON_METHOD,
    metrics,
    byCpuMem: cpuValues.map((v) => groupComparison(`CPU ${v} GiB`, metrics, (c) => c.cpuMemGb === v)),
    byModel: models.map((v) => groupComparison(v, metrics, (c) => c.model === v)),
    variance: users.map((u) => {
      const cs = tput ? tput.configs.filter((c) => c.numUsers === u) : [];
      return { users: u, configs: cs.length, medianCvA: median(cs.map((c) => c.cvA)), medianCvB: median(cs.map((c) => c.cvB)) };
    }),
    cautions,
    excludeFlagged,
    excludedFlagged,
    suiteLabels,
    suiteLabel,
    notes,
  };
}
