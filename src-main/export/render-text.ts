// The report model as terminal tables (kvbench report, kvbench history).
import { PEAK_MEDIANS_NOTE, REQUEST_LEVEL_BYTES_TEXT, headlineMetricKeys, peakMediansApart, pooledOverText, withoutHistogramsText, type MetricUnit } from '../../src-shared/domain/store-types.ts';
import type { SuitePlan } from '../../src-shared/domain/scenarios.ts';
import { binaryBytesText } from '../../src-shared/domain/hardware.ts';
import { anyGpuTier, GPU_BUSY_EFFICIENCY_TEXT } from '../../src-shared/domain/tiers.ts';
import { gpuTierSummaryText } from '../../src-shared/domain/gpu-tier.ts';
import { groupedFixed } from '../../src-shared/domain/number-text.ts';
import { printable } from '../../src-shared/domain/label-text.ts';
import { labelsApartText, labelsVerdictText, placeLabel, quoteLabel, spansSeveralLabels, spansSeveralPlaces, suiteLabelText, suitesText } from '../../src-shared/domain/places.ts';
import type { Advice } from '../../src-shared/ipc/contract.ts';
import { formatAdvice } from '../hardware/format-hardware.ts';
import { flagAggregateText, formatP, NOISE_RULE } from '../../src-shared/domain/statistics.ts';
import { flagKindsText } from '../../src-shared/domain/trial-flags.ts';
import { definitionRowLabel, definitionSplitText, pooledDefinitionText, MIXED_DEFINITIONS, MIXED_DEFINITIONS_LEGEND } from '../../src-shared/domain/metric-changes.ts';
import { efficiencyBasisText, gpuCopySourceText, limitsSourceText, memoryCopySourceText, type MetricVerdict, type PooledLatency, type ProbeLimits, type ScenarioReport, type SystemComparison, type TierComparison } from './report-model.ts';

const GIB = 1024 ** 3;

/**
 * A plain-text table: the first `left` columns (or the listed column indices) left-aligned, the
 * rest right-aligned, every line prefixed by `indent`.
 */
export function table(headers: readonly string[], tableRows: readonly (readonly string[])[], left: number | readonly number[] = 1, indent = ''): string {
  const t = new TextTable(headers, left, indent);
  const rows = tableRows.map((r) => t.measure(printableCells(r)));
  return [t.head(), ...rows.map((r) => t.line(r))].join('\n');
}

/**
 * A row's cells as a table shows them. A cell may quote a stored label (one kept from before labels
 * were checked): a newline in it would forge a row, an ESC sequence drive the terminal.
 */
export function printableCells(row: readonly string[]): string[] {
  return row.map((c) => (c === undefined ? c : printable(c)));
}

/**
 * table(), a row at a time, for tables too long to hold: every row is measured (its printableCells),
 * then the head and each row's line are the text table() gives.
 */
export class TextTable {
  readonly #headers: readonly string[];
  readonly #widths: number[];
  readonly #isLeft: (i: number) => boolean;
  readonly #indent: string;

  constructor(headers: readonly string[], left: number | readonly number[] = 1, indent = '') {
    this.#headers = headers;
    this.#widths = headers.map((h) => h.length);
    this.#isLeft = (i) => (typeof left === 'number' ? i < left : left.includes(i));
    this.#indent = indent;
  }

  /** Widens the columns for these (printable) cells, and gives them back. */
  measure(cells: readonly string[]): readonly string[] {
    for (let i = 0; i < this.#widths.length; i++) this.#widths[i] = Math.max(this.#widths[i]!, (cells[i] ?? '').length);
    return cells;
  }

  /** The header line and its rule. */
  head(): string {
    return `${this.line(this.#headers)}\n${this.#indent}${this.#widths.map((w) => '-'.repeat(w)).join('  ')}`;
  }

  /** One row, padded to the widths measured. */
  line(cells: readonly string[]): string {
    const w = this.#widths;
    const text = cells
      .map((c, i) => (this.#isLeft(i) ? (c ?? '').padEnd(w[i]!) : (c ?? '').padStart(w[i]!)))
      .join('  ')
      .trimEnd();
    return this.#indent + text;
  }
}

/** A value in its unit, for people. GB/s are 10^9 bytes per second; byte counts are GiB/MiB. */
export function fmtValue(v: number | null | undefined, unit: MetricUnit | 'x' | 'pct'): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  switch (unit) {
    case 'tok/s':
    case 'req/s':
      return groupedFixed(v, Math.abs(v) >= 100 ? 0 : 2);
    case 'ms':
    case 'ms/MiB':
      return groupedFixed(v, Math.abs(v) >= 100 ? 1 : 2);
    case 'bytes':
      return Math.abs(v) >= GIB ? `${(v / GIB).toFixed(2)} GiB` : `${(v / 1024 ** 2).toFixed(1)} MiB`;
    case 'bytes/s':
      return Math.abs(v) >= 1e9 ? `${(v / 1e9).toFixed(2)} GB/s` : `${(v / 1e6).toFixed(1)} MB/s`;
    case 'ratio':
    case 'pct':
      return `${(v * 100).toFixed(1)}%`;
    case 'x':
      return `${v.toFixed(2)}x`;
    case 'count':
    case 'users':
      return groupedFixed(v, Number.isInteger(v) ? 0 : 1);
    case 's':
      return v.toFixed(2);
  }
}

const cvText = (cv: number | null): string => (cv === null ? '—' : `${(cv * 100).toFixed(1)}%`);

export function formatScenarioReport(report: ScenarioReport, opts: { allMetrics?: boolean } = {}): string {
  const out: string[] = [];
  out.push(`Per-scenario results: ${report.method}.`);
  out.push(report.includeIncomplete ? 'Partial trials are included; failed and aborted ones never are.' : 'Only complete trials are aggregated; incomplete ones are listed and excluded.');
  const leftOut = report.excludedFlagged;
  if (leftOut !== null) {
    out.push(
      leftOut.trials > 0
        ? `Flagged trials are excluded (--exclude-flagged): ${leftOut.trials} trial(s) left out (${flagKindsText(leftOut)}), each listed with why.`
        : 'Flagged trials are excluded (--exclude-flagged): none of these trials is flagged.',
    );
  }
  const labelsNote = suiteLabelsNote(report);
  if (labelsNote !== null) out.push(labelsNote);
  // One suite runs on one system and drive; a wider selection is grouped by both, and says which.
  const named = spansSeveralPlaces(report.scenarios);
  const labelled = spansSeveralLabels(report.scenarios);
  for (const s of report.scenarios) {
    out.push('');
    out.push(`== ${s.label} [${s.scenarioId}] — ${s.configDescription}${named ? ` — on ${placeLabel(s)}` : ''}${labelled ? ` — ${suiteLabelText(s.suiteLabel)}` : ''}`);
    // A resume's retry stands for its trial: the attempts it replaced are no missing trial.
    const superseded = s.excluded.filter((x) => x.supersededBy !== null).length;
    out.push(`   trials: ${s.trialIds.length} aggregated of ${s.trialsTotal - superseded}${superseded > 0 ? ` (and ${superseded} superseded attempt${superseded > 1 ? 's' : ''})` : ''}`);
    // What the GPU tier was, beside the size its configuration asked for (the heading's "GPU n GiB").
    if (s.gpuTier) out.push(`   GPU tier: ${gpuTierSummaryText(s.gpuTier)}`);
    for (const x of s.excluded) {
      const why = (x.reason ?? 'no reason recorded').split('\n')[0];
      const by = x.supersededBy;
      out.push(
        x.flags.length > 0
          ? `   ! trial #${x.trialIndex + 1} (id ${x.trialId}) FLAGGED, excluded: ${why}`
          : by === null
          ? `   ! trial #${x.trialIndex + 1} (id ${x.trialId}) ${x.status.toUpperCase()}, excluded: ${why}`
          : `   ~ trial #${x.trialIndex + 1} attempt ${x.attempt} (id ${x.trialId}) ${x.status}, superseded — retried: attempt ${by.attempt} (id ${by.trialId}) ${by.status}; it was: ${why}`,
      );
    }
    for (const c of s.cautions) out.push(`   ! trial #${c.trialIndex + 1} (id ${c.trialId}) FLAGGED: ${c.message}`);
    const headline = headlineMetricKeys(s.metrics.map((m) => m.metric.key));
    const shown = opts.allMetrics ? s.metrics : s.metrics.filter((m) => headline.includes(m.metric.key));
    if (shown.length === 0) {
      out.push('   no complete trial: nothing to aggregate');
      continue;
    }
    const rows = shown.map((m) => [
      `${definitionRowLabel(m.metric.label, m.olderDefinition)} (${m.metric.unit})`,
      String(m.aggregate.n),
      m.aggregate.yes !== undefined ? flagAggregateText(m.aggregate) : fmtValue(m.aggregate.median, m.metric.unit),
      fmtValue(m.aggregate.p95, m.metric.unit),
      cvText(m.aggregate.cv),
    ]);
    out.push(table(['metric', 'n', 'median', 'P95', 'CV'], rows, 1, '   '));
    if (peakMediansApart(shown)) out.push(`   (${PEAK_MEDIANS_NOTE})`);
    // A metric measured under two definitions is two rows: said beside them, with how many trials each.
    for (const d of s.definitionSplits) if (shown.some((m) => m.metric.key === d.metric)) out.push(`   note: ${definitionSplitText(d)}`);
    // Trials without histograms (imports of the reference's files) are in no pooled latency: say how many.
    const without = withoutHistogramsText(s.trialIds.length, s.withoutHistograms);
    if (s.pooled.length > 0) {
      out.push(`   pooled over ${pooledOverText(s.trialIds.length, s.withoutHistograms)} (merged HDR histograms, not averaged):`);
      out.push(
        table(
          ['latency', 'trials', 'samples', 'P50 ms', 'P95 ms', 'P99 ms'],
          s.pooled.map((p) => [definitionRowLabel(p.name, p.olderDefinition), String(p.trials), fmtValue(p.count, 'count'), fmtValue(p.p50Ms, 'ms'), fmtValue(p.p95Ms, 'ms'), fmtValue(p.p99Ms, 'ms')]),
          1,
          '     ',
        ),
      );
      for (const p of s.pooled) if (p.damagedTrials > 0) out.push(`     ${pooledDamageNote(p)}`);
      for (const note of s.pooled.map(pooledDefinitionText)) if (note !== null) out.push(`     note: ${note}`);
      if (without !== null) out.push(`     ${without}: left out of these percentiles`);
    } else if (without !== null) {
      out.push(`   no pooled latency: ${without}`);
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * Where the selected suites carry more than one label (unlabelled counting as one): that each label's
 * trials are aggregated apart, which suites each label has, and how to get a verdict between two.
 * Null where they share one.
 */
export function suiteLabelsNote(report: Pick<ScenarioReport, 'suiteLabels'>): string | null {
  const apart = labelsApartText(report.suiteLabels);
  if (apart === null) return null;
  return `${apart}; ${labelsVerdictText(report.suiteLabels)}.`;
}

/** Why a pooled latency counts fewer trials than the group aggregates. */
function pooledDamageNote(p: PooledLatency): string {
  const n = p.damagedTrials;
  return `${p.name}: ${n === 1 ? "1 trial's histogram does" : `${n} trials' histograms do`} not decode (damaged in the database): left out of these percentiles`;
}

/** A tier row's trial count: a range where some of its medians are over fewer trials (its note says which). */
export const trialsText = (r: { n: number; fewestTrials: number }): string => (r.fewestTrials < r.n ? `${r.fewestTrials}–${r.n}` : String(r.n));

export function formatTierComparison(t: TierComparison): string {
  const out: string[] = [];
  out.push(
    `Tier comparison (medians across ${t.includeIncomplete ? 'complete and partial' : 'complete'} trials${t.excludeFlagged ? ', flagged ones excluded' : ''}; ` +
      `speedup against ${t.baseline ?? 'storage-only (missing)'})`,
  );
  // Each limit with its own source: a stated drive bandwidth leaves the memory copy the probe's. The
  // GPU copy where it was probed, or where a row had a GPU tier to want it for.
  const gpuRows = t.rows.some((r) => (r.gpuMemGb ?? 0) > 0);
  const limitsText = (l: ProbeLimits): string =>
    `drive sequential read ${fmtValue(l.readBytesPerS, 'bytes/s')}${l.readNote ? ` (${l.readNote})` : ''}, write ${fmtValue(l.writeBytesPerS, 'bytes/s')} (${limitsSourceText(l)}); ` +
    `memory copy ${fmtValue(l.memoryCopyBytesPerS, 'bytes/s')} (${memoryCopySourceText(l)})` +
    (gpuRows || l.gpuCopyMeasuredAt !== null
      ? l.gpuH2dBytesPerS === null && l.gpuD2hBytesPerS === null
        ? `; GPU copy — (${gpuCopySourceText(l)})`
        : `; GPU copy host→device ${fmtValue(l.gpuH2dBytesPerS, 'bytes/s')}, device→host ${fmtValue(l.gpuD2hBytesPerS, 'bytes/s')} (${gpuCopySourceText(l)})`
      : '');
  // Rows of several systems or drives are each measured against their own probe: list each.
  const perPlace = new Map(t.rows.map((r) => [`${placeLabel(r)}\u0000${JSON.stringify(r.limits)}`, r]));
  if (new Set(t.rows.map((r) => JSON.stringify(r.limits))).size > 1) {
    for (const r of perPlace.values()) out.push(`Limits on ${placeLabel(r)}: ${limitsText(r.limits)}`);
  } else {
    out.push(`Limits: ${limitsText(t.probe)}`);
  }
  const named = spansSeveralPlaces(t.rows);
  // Rows of suites with different labels are apart (never one median): each names its label.
  const labelled = spansSeveralLabels(t.rows);
  // Two rows of one scenario on one place (several suites) differ in their configuration: name it.
  const described = new Set(t.rows.map((r) => `${r.scenarioId}\u0000${placeLabel(r)}\u0000${r.suiteLabel ?? ''}`)).size < t.rows.length;
  const leftColumns = (named ? 1 : 0) + (labelled ? 1 : 0) + 1 + (described ? 1 : 0);
  // The GPU's read P95 where a row had a GPU tier; a CPU and storage suite's column would read — throughout.
  const gpu = anyGpuTier(t.rows);
  out.push(
    table(
      [
        ...(named ? ['system'] : []),
        ...(labelled ? ['suite label'] : []),
        'scenario',
        ...(described ? ['configuration'] : []),
        'users',
        'GPU',
        'CPU',
        'n',
        'tok/s',
        'speedup',
        'cache I/O tok/s',
        'speedup',
        ...(gpu ? ['GPU rd P95'] : []),
        'CPU rd P95',
        'stor rd P95',
        'stor wr P95',
        'read',
        'written',
        'stor rd bw',
        'rd eff',
        'wr eff',
        ...(gpu ? ['GPU rd eff (busy)', 'GPU wr eff (busy)'] : []),
      ],
      t.rows.map((r) => [
        ...(named ? [placeLabel(r)] : []),
        ...(labelled ? [r.suiteLabel ?? '(none)'] : []),
        r.scenarioId,
        ...(described ? [r.configDescription] : []),
        r.numUsers === null ? '—' : r.finalUsers === null ? String(r.numUsers) : `${r.numUsers}→${fmtValue(r.finalUsers, 'users')}`,
        r.gpuMemGb === null ? '—' : String(r.gpuMemGb),
        r.cpuMemGb === null ? '—' : String(r.cpuMemGb),
        trialsText(r),
        fmtValue(r.wallClockTokPerS, 'tok/s'),
        fmtValue(r.speedupWallClock, 'x') + (r.speedupBaselineUsers !== null && r.speedupWallClock !== null ? '†' : ''),
        fmtValue(r.storageTokPerS, 'tok/s'),
        fmtValue(r.speedupStorageMetric, 'x') + (r.speedupBaselineUsers !== null && r.speedupStorageMetric !== null ? '†' : ''),
        ...(gpu ? [fmtValue(r.gpuReadP95Ms, 'ms')] : []),
        fmtValue(r.cpuReadP95Ms, 'ms'),
        fmtValue(r.storageReadP95Ms, 'ms'),
        fmtValue(r.storageWriteP95Ms, 'ms'),
        fmtValue(r.bytesRead, 'bytes'),
        fmtValue(r.bytesWritten, 'bytes'),
        fmtValue(r.storageReadBytesPerS, 'bytes/s'),
        fmtValue(r.storageReadEfficiency, 'pct'),
        fmtValue(r.storageWriteEfficiency, 'pct'),
        ...(gpu ? [fmtValue(r.gpuReadBusyEfficiency, 'pct'), fmtValue(r.gpuWriteBusyEfficiency, 'pct')] : []),
      ]),
      leftColumns,
    ),
  );
  const autoscaled = t.rows.some((r) => r.finalUsers !== null) ? ' (an autoscaled row: at the start → at the end, the median of its trials\' final users)' : '';
  out.push(`users: simulated users${autoscaled}; GPU/CPU: tier budgets in GiB. tok/s: wall-clock throughput; cache I/O tok/s: the reference's storage throughput (storage_throughput_tokens_per_sec): generated tokens ÷ the summed cache I/O time of every tier (GPU, CPU and storage), not the storage tier's alone. P95s in ms are medians of per-trial P95s.`);
  out.push('speedup: against the storage-only run of the same configuration apart from the tier budgets, on the same system and drive and under the same suite label (— where there is none: see the notes); † against a storage-only run at other users (the suite\'s high-user scenarios), so the ratio includes the load difference.');
  out.push(`read/written: ${REQUEST_LEVEL_BYTES_TEXT}. ${efficiencyBasisText(t.probe)}.`);
  if (gpu) out.push(`GPU rd/wr eff (busy): ${GPU_BUSY_EFFICIENCY_TEXT}.`);
  for (const n of t.notes) out.push(`note: ${n}`);
  return `${out.join('\n')}\n`;
}

const pctText = (w: number): string => `${(w * 100).toFixed(0)}%`;
/** A's win rate and what it is a share of: the configurations tested (see MetricComparison.winRateA). */
const winText = (w: number | null, tested: number): string => (w === null ? '—' : `${pctText(w)} of ${tested}`);
const verdictText = (v: MetricVerdict, leader: 'a' | 'b' | null): string =>
  v === null ? '—' : v === 'within-noise' ? '≈ noise' : v === 'unknown' ? `${leader?.toUpperCase() ?? ''}?` : v.toUpperCase();

/** "System comparison: A = lab1 (id), B = …"; suite labels name the suites each pools instead of an id. */
function comparisonHeading(c: SystemComparison): string {
  const suites = (x: SystemComparison['a']): string => suitesText(x.suiteIds);
  if (c.kind === 'label') return `Suite label comparison: A = ${quoteLabel(c.a.label)} (${suites(c.a)}), B = ${quoteLabel(c.b.label)} (${suites(c.b)})`;
  const what = c.kind === 'drive' ? 'Drive' : 'System';
  // Narrowed to one label: which of each side's suites carry it.
  if (c.suiteLabel !== null) return `${what} comparison under suite label ${quoteLabel(c.suiteLabel)}: A = ${c.a.label} (${c.a.id}; ${suites(c.a)}), B = ${c.b.label} (${c.b.id}; ${suites(c.b)})`;
  return `${what} comparison: A = ${c.a.label} (${c.a.id}), B = ${c.b.label} (${c.b.id})`;
}

export function formatComparison(c: SystemComparison, opts: { perConfig?: boolean } = {}): string {
  const out: string[] = [];
  out.push(comparisonHeading(c));
  out.push(`Matched ${c.matched} ${c.match === 'config' ? 'configuration(s)' : 'scenario(s)'} with complete trials on both sides (unmatched: ${c.unmatchedA} only in A, ${c.unmatchedB} only in B).`);
  out.push(`Method: ${c.method}.`);
  const ex = c.excludedFlagged;
  if (ex !== null) {
    const side = (name: string, x: typeof ex.a): string => `${name} ${x.flaggedTrials} of ${x.matchedTrials} matched trial(s) left out${x.flaggedTrials > 0 ? ` (${flagKindsText(x)})` : ''}`;
    out.push(`Flagged trials excluded (--exclude-flagged): ${side('A', ex.a)}; ${side('B', ex.b)}.`);
  }
  out.push('');
  // Only where a side has flagged trials: a clean comparison prints as it always did.
  const flagged = c.cautions.a.flaggedTrials + c.cautions.b.flaggedTrials > 0;
  const leftOut = ex !== null && ex.a.flaggedTrials + ex.b.flaggedTrials > 0;
  out.push(
    table(
      // The geo-mean first, beside the verdict that tests it (and the app's chart draws); the
      // arithmetic mean, which can lean the other way, last.
      ['metric', 'configs', 'geo-mean A/B', 'better', 'p', 'A win rate', 'within noise', 'CV A', 'CV B', 'mean A/B', ...(flagged ? ['flagged'] : [])],
      c.metrics.map((m) => [
        `${m.metric.label} (${m.metric.better === 'lower' ? 'lower is better' : m.metric.better === 'higher' ? 'higher is better' : 'no direction'})${m.mixedDefinitions.length > 0 ? ` ${MIXED_DEFINITIONS}` : ''}`,
        String(m.compared),
        fmtValue(m.geoMeanRatio, 'x'),
        verdictText(m.verdict, m.leader) + (m.verdictCaveat ? '*' : ''),
        formatP(m.pValue),
        winText(m.winRateA, m.tested),
        `${m.withinNoise}/${m.compared}${m.noiseUnknown > 0 ? ` (${m.noiseUnknown} unknown)` : ''}`,
        cvText(m.medianCvA),
        cvText(m.medianCvB),
        fmtValue(m.meanRatio, 'x'),
        ...(flagged ? [`${m.flaggedConfigs}/${m.compared}`] : []),
      ]),
    ),
  );
  out.push(`beyond noise: ${NOISE_RULE} (p: the metric's test of its geo-mean over the configurations with 2 or more trials a side).`);
  out.push("mean A/B: the arithmetic mean of the configurations' ratios, for reference: it weighs a ratio above 1 more than its inverse (2x and 0.5x average 1.25x), so it can lean the other way.");
  out.push(
    "A win rate: A's share of the configurations tested (2 or more trials a side, values above 0: those of p) that are beyond the noise by their own test with A better; " +
      '— where none is. unknown: a side with fewer than 2 trials, or a value of 0 (no logarithm): such a configuration stays out of the geo-mean, the verdict and the win rate.',
  );
  if (c.metrics.some((m) => m.mixedDefinitions.length > 0)) out.push(MIXED_DEFINITIONS_LEGEND);
  if (flagged) out.push('flagged: configurations with a trial the report flags on either side (trace-only mode, a RAM-backed cache directory, page-cache reads, a stall, a spill past the tiers the scenario names, a queueing-bound run, a GPU tier absent, smaller than asked or not pinned, an autoscaler short of its peak or target; see the notes): counted in the ratios all the same.');
  if (c.metrics.some((m) => m.verdict === 'unknown')) {
    out.push('better A? / B?: the side the geo-mean leans to, not named: no configuration has 2 or more trials a side (no spread to judge the noise by; run 2 or more).');
  }
  for (const m of c.metrics) if (m.verdictCaveat) out.push(`* ${m.metric.label}: ${m.verdictCaveat}.`);
  for (const [title, groups] of [['By CPU tier size', c.byCpuMem], ['By model', c.byModel]] as const) {
    if (groups.length === 0) continue;
    out.push('');
    // The per-metric table's rules over each group's configurations: the better side, the geo-mean it tests, A's win rate among those tested.
    out.push(`${title} (better, geo-mean A/B, configurations tested of those compared, A win rate; as above, over each group's configurations):`);
    const keys = c.metrics.map((m) => m.metric.key).slice(0, 4);
    out.push(
      table(
        ['group', 'configs', ...keys.map((k) => c.metrics.find((m) => m.metric.key === k)!.metric.label), 'best differentiator'],
        groups.map((g) => [
          g.group,
          String(g.configs),
          ...keys.map((k) => {
            const r = g.metrics.find((x) => x.key === k)!;
            if (r.compared === 0) return '—';
            // Over two definitions nothing is tested or won: the ratio and how many configurations it is over.
            if (r.mixedDefinitions.length > 0) return `${MIXED_DEFINITIONS} ${fmtValue(r.geoMeanRatio, 'x')} (${r.compared} compared)`;
            const better = r.verdict === null ? '' : `${verdictText(r.verdict, r.leader).replace(' noise', '')} `;
            return `${better}${fmtValue(r.geoMeanRatio, 'x')} (${r.tested} of ${r.compared} tested${r.winRateA === null ? '' : `, A wins ${pctText(r.winRateA)}`})`;
          }),
          g.bestDifferentiator
            ? `${g.bestDifferentiator.label}: ${g.bestDifferentiator.side.toUpperCase()} better (p ${formatP(g.bestDifferentiator.pValue)}), ${fmtValue(g.bestDifferentiator.geoMeanRatio, 'x')}` +
              (g.bestDifferentiator.winRate === null ? '' : `, ${g.bestDifferentiator.side.toUpperCase()} wins ${winText(g.bestDifferentiator.winRate, g.bestDifferentiator.tested)} tested`)
            : '—',
        ]),
      ),
    );
    out.push('best differentiator: of decode bytes read, wall-clock and cache I/O throughput and storage read bandwidth, one whose verdict over the group is beyond the noise, the most configurations won; — where none is.');
  }
  if (c.variance.length > 0) {
    out.push('');
    out.push('Run-to-run variation of wall-clock throughput by user count (median CV across configurations):');
    out.push(table(['users', 'configs', 'CV A', 'CV B'], c.variance.map((v) => [String(v.users), String(v.configs), cvText(v.medianCvA), cvText(v.medianCvB)])));
  }
  if (opts.perConfig) {
    if (leftOut) out.push('', 'left out A/B: each side\'s flagged trials of the configuration, left out of it (nA and nB count the trials without them).');
    for (const m of c.metrics) {
      out.push('');
      out.push(`${m.metric.label} per configuration (${m.metric.unit}):`);
      out.push(
        table(
          ['configuration', 'nA', 'nB', 'median A', 'median B', 'A/B', 'better', 'noise?', 'p', ...(flagged ? ['flagged A/B'] : []), ...(leftOut ? ['left out A/B'] : [])],
          m.configs.map((x) => [
            `${x.scenarioIds.join(' + ')}: ${x.description}${x.mixedDefinitions ? ` (${MIXED_DEFINITIONS}: ${x.measuredBy.join(', ')})` : ''}`,
            String(x.nA),
            String(x.nB),
            fmtValue(x.medianA, m.metric.unit),
            fmtValue(x.medianB, m.metric.unit),
            fmtValue(x.ratio, 'x'),
            x.winner === null ? '—' : x.winner.toUpperCase(),
            x.withinNoise === null ? '?' : x.withinNoise ? 'yes' : 'no',
            formatP(x.pValue),
            ...(flagged ? [`${x.flaggedA}/${x.flaggedB}`] : []),
            ...(leftOut ? [`${x.excludedA}/${x.excludedB}`] : []),
          ]),
        ),
      );
    }
  }
  for (const n of c.notes) out.push(`note: ${n}`);
  return `${out.join('\n')}\n`;
}

/** Hardware advice the plan says itself: its skipped lines, its RAM, buffered-loop and direct-I/O notes, its PROBLEM lines. */
const SAID_BY_PLAN: ReadonlySet<string> = new Set(['no-gpu', 'no-gpu-tier', 'ram-backed', 'buffered-loop', 'no-direct-io', 'not-writable', 'no-cache-dir']);

/**
 * The plan before a suite starts: the hardware advice (the app's, for whoever runs it headless), what
 * runs and how each run's parameters were derived, what is skipped and why, time and disk.
 */
export function formatPlan(plan: SuitePlan, advice: readonly Advice[] = []): string {
  const out: string[] = [];
  const before = formatAdvice(advice, SAID_BY_PLAN);
  if (before !== '') out.push(before.trimEnd());
  // The MLPerf profile runs 8B and 70B options: the header names what the runs really use.
  const models = [...new Set(plan.runs.map((r) => String(r.options.model)))];
  const model = models.length > 1 ? `models ${models.join(', ')}` : `model ${models[0] ?? plan.model}`;
  out.push(`Suite plan: profile ${plan.profile}, ${plan.trials} trial(s) per scenario, ${model}, cache dir ${plan.cacheDir}`);
  out.push(
    table(
      ['scenario', 'users', 'GPU GiB', 'CPU GiB', 'duration', 'gen', 'storage cap', 'trials', 'est. time'],
      plan.runs.map((r) => {
        const o = r.options;
        return [
          r.scenarioId,
          String(o.numUsers),
          String(o.gpuMemGb),
          String(o.cpuMemGb),
          `${Number(o.warmUp) > 0 ? `${o.warmUp} s warm-up + ` : ''}${o.duration} s${Number(o.maxRequests) > 0 ? ` or ${o.maxRequests} req` : ''}`,
          String(o.generationMode),
          Number(o.storageCapacityGb) > 0 ? `${o.storageCapacityGb} GiB` : '95% free',
          String(r.trials),
          `${Math.round(r.trials * r.estimatedSecondsPerTrial)} s`,
        ];
      }),
    ),
  );
  out.push('How each run was derived:');
  for (const r of plan.runs) out.push(`  ${r.scenarioId}: ${r.derivation.join('; ')}`);
  for (const s of plan.skipped) out.push(`skipped ${s.scenarioId}: ${s.reason}`);
  const e = plan.estimate;
  const mins = Math.floor(e.totalSeconds / 60);
  out.push(
    `Estimate: ${e.trialCount} trials, about ${mins > 0 ? `${mins} min ` : ''}${Math.round(e.totalSeconds % 60)} s; ` +
      `disk: at most ${binaryBytesText(e.peakDiskBytes)} at once in the cache directory (needs ${binaryBytesText(e.requiredDiskBytes)} free; ` +
      `${e.freeBytes === null ? 'free space unknown' : `${binaryBytesText(e.freeBytes)} free`}).`,
  );
  for (const n of plan.notes) out.push(`note: ${n}`);
  for (const p of e.problems) out.push(`PROBLEM: ${p}`);
  return `${out.join('\n')}\n`;
}
