// Endpoint runs and comparisons as terminal text.
import {
  SERVER_METRIC_BY_KEY,
  cacheHitRateOf,
  serverMetricCaveats,
  tokenCountCaveat,
  compareVerdict,
  COMPARE_VERDICT_LEGEND,
  DERIVED_SERVER_METRICS,
  legacyRatesText,
  RECOMPUTED_LEGEND,
  RECOMPUTED_MARK,
  SPAN_BASED_LEGEND,
  SPAN_BASED_MARK,
  spanBasedMixed,
  NO_VERDICT_SPAN_BASED_LEGEND,
  UNSTORED_RUN_ID,
  type Distribution,
  type CompareSpread,
  type EndpointComparison,
  type EndpointMetricUnit,
  type EndpointRunRecord,
  type ServerMetricUnit,
} from '../../src-shared/domain/endpoint.ts';
import { groupedFixed } from '../../src-shared/domain/number-text.ts';
import { formatP } from '../../src-shared/domain/statistics.ts';
import { formatBytesBinary } from '../engine/report/format.ts';
import { table } from '../export/render-text.ts';

/**
 * Sizes and rates in one convention, scaled to the value (a 50 KiB offload is not "0.0 MiB" beside
 * a "1.0 MB/s" rate): binary units for both, said under every table that shows bytes.
 */
export const BYTE_UNITS_NOTE = 'bytes in binary units: KiB = 1024 B, MiB = 1024² B, GiB = 1024³ B; rates are the same units per second';
const BYTE_UNITS: ReadonlySet<string> = new Set(['bytes', 'bytes/s']);

/** A value in its unit, for people. */
export function fmt(v: number | null | undefined, unit: EndpointMetricUnit | ServerMetricUnit | 'x'): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  switch (unit) {
    case 'req/s':
    case 'tok/s':
      return groupedFixed(v, Math.abs(v) >= 100 ? 0 : 2);
    case 'ms':
      return groupedFixed(v, Math.abs(v) >= 100 ? 1 : 2);
    case 's':
    case 'seconds':
      return `${groupedFixed(v, 2)} s`;
    case 'ratio':
      return `${(v * 100).toFixed(1)}%`;
    case 'bytes':
      return formatBytesBinary(v);
    case 'bytes/s':
      return `${formatBytesBinary(v)}/s`;
    case 'x':
      return `${v.toFixed(3)}x`;
    case 'count':
    case 'tokens':
    case 'blocks':
      return groupedFixed(v, Number.isInteger(v) ? 0 : 2);
  }
}

/** A run's mark on its duration and rates: † recomputed from its stored requests, ‡ kept as a kvbench before 0.5.0 stored them, '' otherwise. */
function legacyMark(r: Pick<EndpointRunRecord, 'legacyRates'>): string {
  if (!r.legacyRates) return '';
  return ` ${r.legacyRates.recomputedBy !== null ? RECOMPUTED_MARK : SPAN_BASED_MARK}`;
}

/** Under a list or comparison with marked rates: what each mark means, run by run. */
function legacyLegend(runs: readonly Pick<EndpointRunRecord, 'id' | 'legacyRates'>[]): string[] {
  return runs.flatMap((r) => (r.legacyRates ? [`${legacyMark(r).trim()} run ${r.id}: ${legacyRatesText(r.legacyRates)}`] : []));
}

function distRow(name: string, d: Distribution): string[] {
  return [name, String(d.n), fmt(d.p50, 'ms'), fmt(d.p95, 'ms'), fmt(d.p99, 'ms'), fmt(d.mean, 'ms'), fmt(d.max, 'ms')];
}

export function formatRun(r: EndpointRunRecord): string {
  const a = r.aggregates;
  const c = r.config;
  const out: string[] = [];
  out.push(`Endpoint run ${r.id === UNSTORED_RUN_ID ? '(not stored)' : r.id} — ${r.systemLabel}: ${r.status.toUpperCase()}${r.statusReason ? ` (${r.statusReason})` : ''}`);
  out.push(`  server ${c.baseUrl}  model ${c.model}  api ${c.api}  started ${r.startedAt}`);
  out.push(`  workload ${c.workloadFile ?? '(inline)'}  digest ${c.workloadDigest.slice(0, 12)}  prompts: ${c.promptTokenizer}, salt ${c.promptSalt}`);
  out.push(`  sampling: temperature ${c.temperature}, top_p ${c.topP}, max_tokens ${c.maxTokens ?? 'per request'}${c.ignoreEos ? ', ignore_eos' : ''}`);
  if (c.notes) out.push(`  notes: ${c.notes}`);
  const failures = Object.entries(a.failuresByStatus).map(([k, n]) => `${n} ${k.replace('_', ' ')}`);
  out.push(`  requests ${a.requestsTotal}: ${a.requestsOk} ok${failures.length ? `, ${failures.join(', ')}` : ''}`);
  // Runs stored before 0.5.0 had no span: their duration was the span, pauses included. The store
  // recomputes them from the requests (marked †), or keeps them where it cannot (marked ‡).
  const mark = legacyMark(r);
  const window =
    a.spanS === undefined
      ? `duration ${fmt(a.durationS, 's')}${mark} (first send → last finish, pauses included)`
      : `busy ${fmt(a.durationS, 's')}${mark} (the batches' own times; wall clock ${fmt(a.spanS, 's')} with the pauses)`;
  out.push(`  ${window} · ${fmt(a.requestsPerS, 'req/s')}${mark} req/s · ${fmt(a.outputTokensPerS, 'tok/s')}${mark} output tok/s · ${fmt(a.contextTokensPerS, 'tok/s')}${mark} context tok/s`);
  if (r.legacyRates) out.push(`  ${mark.trim()} ${legacyRatesText(r.legacyRates)}`);
  const tokens = tokenCountCaveat(a.tokenCountSources);
  if (tokens) out.push(`  ! ${tokens}`);
  if (a.promptTokensPerRequested !== null) out.push(`  server prompt tokens ÷ requested context tokens: ${a.promptTokensPerRequested.toFixed(3)} (the prompt builder's accuracy for this server's tokenizer)`);
  if (a.cachedPromptTokensTotal !== null) out.push(`  cached prompt tokens (server usage): ${fmt(a.cachedPromptTokensTotal, 'tokens')}`);
  out.push('');
  out.push(
    table(
      ['latency (ms)', 'n', 'P50', 'P95', 'P99', 'mean', 'max'],
      [
        distRow('TTFT', a.ttftMs),
        distRow('TTFT, reused prompts', a.ttftReusedMs),
        distRow('TTFT, new prompts', a.ttftFreshMs),
        distRow('end-to-end', a.e2eMs),
        distRow('time per output token', a.tpotMs),
        distRow('inter-token (pooled)', a.itlMs),
      ],
      1,
      '  ',
    ),
  );
  const unsplit = a.ttftMs.n - a.ttftReusedMs.n - a.ttftFreshMs.n;
  if (unsplit > 0) out.push(`  ${unsplit} request(s) in neither reused nor new: their prompt was sent twice in one batch, or its earlier sends failed`);
  if (a.byContext.length > 0) {
    out.push('');
    out.push(
      table(
        ['context tokens', 'requests', 'ok', 'TTFT P50', 'TTFT P95', 'reused TTFT P50', 'new TTFT P50', 'e2e P50'],
        a.byContext.map((x) => [
          groupedFixed(x.contextTokens, 0),
          String(x.requests),
          String(x.ok),
          fmt(x.ttftMs.p50, 'ms'),
          fmt(x.ttftMs.p95, 'ms'),
          fmt(x.ttftReusedMs.p50, 'ms'),
          fmt(x.ttftFreshMs.p50, 'ms'),
          fmt(x.e2eMs.p50, 'ms'),
        ]),
        0,
        '  ',
      ),
    );
  }
  out.push('');
  out.push(formatServerMetrics(r));
  return out.join('\n');
}

export function formatServerMetrics(r: EndpointRunRecord): string {
  const s = r.serverMetrics;
  const out: string[] = [];
  if (s.pages.length === 0) return '  server metrics: not scraped (--metrics-url none)';
  out.push('  server metrics (counters: the run\'s delta; gauges: before → after):');
  for (const p of s.pages) {
    out.push(`    ${p.url}: ${p.format === 'unavailable' ? `unavailable (${p.error})` : `${p.format}${p.engines.length ? `, ${p.engines.join(', ')}` : ''}`}`);
    for (const n of p.notes) out.push(`      note: ${n}`);
  }
  const rows: string[][] = [];
  // A value that may not be the run's share is marked *, and why is said under the table (not only
  // in the page's note above), by reason, as compare marks its values: the reasons are sentences,
  // which inside the value column would stretch the table past any terminal.
  const caveats = serverMetricCaveats(s);
  const flaggedBy = new Map<string, string[]>();
  const flag = (key: string, label: string): string => {
    const why = caveats[`server.${key}`];
    if (!why) return '';
    flaggedBy.set(why, [...(flaggedBy.get(why) ?? []), label]);
    return ' *';
  };
  for (const v of s.values) {
    const def = SERVER_METRIC_BY_KEY[v.key];
    if (!def) continue;
    rows.push([
      def.label,
      v.source ?? '—',
      def.kind === 'counter'
        ? v.delta === null && v.after !== null
          ? `— (server total after the run: ${fmt(v.after, def.unit)})`
          : fmt(v.delta, def.unit) + flag(v.key, def.label)
        : `${fmt(v.before, def.unit)} → ${fmt(v.after, def.unit)}`,
    ]);
  }
  let bytes = s.values.some((v) => BYTE_UNITS.has(SERVER_METRIC_BY_KEY[v.key]?.unit ?? ''));
  for (const d of DERIVED_SERVER_METRICS) {
    if (!(d.key in s.derived)) continue;
    rows.push([d.label, d.description, fmt(s.derived[d.key], d.unit) + flag(d.key, d.label)]);
    if (BYTE_UNITS.has(d.unit)) bytes = true;
  }
  if (rows.length === 0) out.push('    none of the supported families was found (see docs/endpoint.md)');
  else out.push(table(['metric', 'source / definition', 'value'], rows, 2, '    '));
  for (const [why, labels] of flaggedBy) out.push(`    * ${labels.join(', ')}: ${why}`);
  if (bytes) out.push(`    ${BYTE_UNITS_NOTE}`);
  return out.join('\n');
}

/** A compared value's marks: † some of its runs' values recomputed from their stored requests, ‡ some kept span-based (the notes and warnings say which). */
const rowLegacyMark = (recomputed: readonly number[], spanBased: readonly number[]): string =>
  (recomputed.length > 0 ? ` ${RECOMPUTED_MARK}` : '') + (spanBased.length > 0 ? ` ${SPAN_BASED_MARK}` : '');

/** A side's spread over its runs: min–max and CV (nothing for one run). */
function spreadText(sp: CompareSpread | null, n: number, unit: EndpointMetricUnit): string {
  if (sp === null || n < 2) return '';
  return `${fmt(sp.min, unit)}–${fmt(sp.max, unit)}${sp.cv === null ? '' : `, CV ${(sp.cv * 100).toFixed(1)}%`}`;
}

export function formatComparison(c: EndpointComparison): string {
  const out: string[] = [];
  out.push(`Endpoint comparison: A = ${c.labelA} (${c.runIdsA.length} run(s): ${c.runIdsA.join(', ') || '—'}) vs B = ${c.labelB} (${c.runIdsB.length} run(s): ${c.runIdsB.join(', ') || '—'})`);
  out.push(`  ${c.method}`);
  for (const w of c.warnings) out.push(`  ! ${w}`);
  for (const n of c.notes) out.push(`  note: ${n}`);
  // The spread columns only where a side has several runs to spread over.
  const spreads = c.rows.some((r) => r.nA > 1 || r.nB > 1);
  const groups: { name: string; key: string }[] = [
    { name: 'Throughput', key: 'throughput' },
    { name: 'Latency', key: 'latency' },
    { name: 'Requests', key: 'requests' },
    { name: 'Server cache metrics', key: 'server' },
  ];
  for (const g of groups) {
    const rows = c.rows.filter((r) => r.metric.group === g.key);
    if (rows.length === 0) continue;
    out.push('');
    out.push(`  ${g.name}`);
    const header = ['metric', 'unit', c.labelA, c.labelB, 'A/B', 'better', 'p'];
    if (spreads) header.push(`${c.labelA} min–max, CV`, `${c.labelB} min–max, CV`);
    out.push(
      table(
        header,
        rows.map((r) => {
          const cells = [
            r.metric.label,
            r.metric.unit,
            fmt(r.a, r.metric.unit) + (r.nA > 1 ? ` (n=${r.nA})` : '') + (r.flaggedA.length > 0 ? ' *' : '') + rowLegacyMark(r.recomputedA, r.spanBasedA),
            fmt(r.b, r.metric.unit) + (r.nB > 1 ? ` (n=${r.nB})` : '') + (r.flaggedB.length > 0 ? ' *' : '') + rowLegacyMark(r.recomputedB, r.spanBasedB),
            fmt(r.ratio, 'x'),
            compareVerdict(r, c.labelA, c.labelB),
            r.pValue === null ? '' : formatP(r.pValue),
          ];
          if (spreads) cells.push(spreadText(r.spreadA, r.nA, r.metric.unit), spreadText(r.spreadB, r.nB, r.metric.unit));
          return cells;
        }),
        [0, 1, 5, 7, 8],
        '  ',
      ),
    );
    if (rows.some((r) => BYTE_UNITS.has(r.metric.unit))) out.push(`  ${BYTE_UNITS_NOTE}`);
  }
  out.push('');
  out.push(`  ${COMPARE_VERDICT_LEGEND}`);
  if (c.rows.some((r) => r.recomputedA.length + r.recomputedB.length > 0)) out.push(`  ${RECOMPUTED_LEGEND}`);
  if (c.rows.some((r) => r.spanBasedA.length + r.spanBasedB.length > 0)) out.push(`  ${SPAN_BASED_LEGEND}`);
  if (c.rows.some(spanBasedMixed)) out.push(`  ${NO_VERDICT_SPAN_BASED_LEGEND}`);
  return out.join('\n');
}

export function formatRunList(runs: readonly EndpointRunRecord[]): string {
  if (runs.length === 0) return 'no endpoint runs stored (kvbench endpoint run … stores one)';
  // A rate from counters that may not be the run's share (serverMetricCaveats) is marked, as compare marks it.
  const flagged = (r: EndpointRunRecord, key: string | null): boolean => key !== null && key in serverMetricCaveats(r.serverMetrics);
  const legend = [
    ...(runs.some((r) => flagged(r, cacheHitRateOf(r.metrics)?.key ?? null)) ? ['* the cache hit rate comes from server counters that may not be the run\'s own share (see kvbench endpoint show ID)'] : []),
    ...legacyLegend(runs),
  ]
    .map((l) => `\n${l}`)
    .join('');
  return table(
    ['id', 'label', 'status', 'started', 'model', 'requests', 'ok', 'req/s', 'out tok/s', 'TTFT P50 ms', 'TTFT P95 ms', 'e2e P95 ms', 'cache hit %'],
    runs.map((r) => {
      const hit = cacheHitRateOf(r.metrics);
      return [
      String(r.id),
      r.systemLabel,
      r.status,
      r.startedAt.replace('T', ' ').slice(0, 19),
      r.config.model,
      String(r.aggregates.requestsTotal),
      String(r.aggregates.requestsOk),
      fmt(r.metrics.requests_per_s, 'req/s') + legacyMark(r),
      fmt(r.metrics.output_tokens_per_s, 'tok/s') + legacyMark(r),
      fmt(r.metrics.ttft_p50_ms, 'ms'),
      fmt(r.metrics.ttft_p95_ms, 'ms'),
      fmt(r.metrics.latency_p95_ms, 'ms'),
      hit === null ? '—' : `${(hit.value * 100).toFixed(1)}${flagged(r, hit.key) ? ' *' : ''}`,
      ];
    }),
    [1, 2, 3, 4],
  ) + legend;
}
