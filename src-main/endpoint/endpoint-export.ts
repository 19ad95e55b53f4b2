// Exports of endpoint runs, as for storage trials: CSV (one row per run — or per request with
// `requests`), XLSX (Runs, Requests, By context, Server metrics, Comparison when two labels are
// exported, About) and JSON (everything). Every run row carries its full configuration.
import path from 'node:path';
import ExcelJS from 'exceljs';
import {
  ENDPOINT_METRICS,
  legacyRatesText,
  SERVER_METRIC_BY_KEY,
  SPAN_RATE_KEYS,
  THROUGHPUT_METHOD,
  serverMetricCaveats,
  serverMetricNotes,
  type EndpointComparison,
  type EndpointRequestSample,
  type EndpointRunRecord,
  type EndpointRunStatus,
} from '../../src-shared/domain/endpoint.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { NOISE_RULE } from '../../src-shared/domain/statistics.ts';
import { csvTable } from '../export/csv.ts';
import { cellText } from '../engine/report/xlsx-export.ts';
import { jsonText } from '../../src-shared/domain/label-text.ts';
import { writeFileAtomic } from '../util/write-file-atomic.ts';
import { compareEndpointRuns, endpointRunSummary, pickCompareRuns, type EndpointRunSummary } from './endpoint-compare.ts';
import type { EndpointStore } from './endpoint-store.ts';

export const ENDPOINT_EXPORT_FORMATS = ['csv', 'xlsx', 'json'] as const;
export type EndpointExportFormat = (typeof ENDPOINT_EXPORT_FORMATS)[number];

export type Cell = string | number | boolean | null;

export interface EndpointExportModel {
  runs: EndpointRunRecord[];
  requests: Map<number, EndpointRequestSample[]>;
  /** Present when exactly two labels were exported. */
  comparison: EndpointComparison | null;
  filter: Record<string, unknown>;
}

/** Which runs an export holds (none given: every run). */
export interface EndpointExportFilter {
  labels?: readonly string[];
  runIds?: readonly number[];
  statuses?: readonly EndpointRunStatus[];
}

/**
 * The runs of a filter with their requests, oldest first, and — when they come from exactly two
 * labels — the comparison of those labels (the XLSX Comparison sheet), made as `kvbench endpoint
 * compare` makes it: A and B in the order the labels (or run ids) were given; with run ids, exactly
 * those runs; else each label's complete runs chosen by pickCompareRuns (the same requests as A's
 * newest). Unknown run ids are a StoreError NOT_FOUND.
 */
export function buildEndpointExportModel(s: EndpointStore, f: EndpointExportFilter): EndpointExportModel {
  const { labels, runIds, statuses } = f;
  let runs = runIds ? runIds.map((id) => s.requireRun(id)) : s.listRuns({ ...(labels ? { labels } : {}), ...(statuses ? { statuses } : {}), order: 'asc' });
  if (runIds && statuses) runs = runs.filter((r) => statuses.includes(r.status));
  const requests = new Map(runs.map((r) => [r.id, s.requests(r.id)]));
  const present = new Set(runs.map((r) => r.systemLabel));
  // The user's order: labels as given, else the labels of the run ids as given (the app exports A's runs first).
  const order = [...new Set([...(labels ?? []), ...runs.map((r) => r.systemLabel)])].filter((l) => present.has(l));
  let comparison = null;
  if (order.length === 2) {
    const [labelA, labelB] = order;
    const newestFirst = (l: string): EndpointRunSummary[] =>
      runs
        .filter((r) => r.systemLabel === l && (runIds !== undefined || r.status === 'complete'))
        .sort((x, y) => y.startedAt.localeCompare(x.startedAt) || y.id - x.id)
        .map(endpointRunSummary);
    const picked = runIds ? { a: newestFirst(labelA), b: newestFirst(labelB) } : pickCompareRuns(newestFirst(labelA), newestFirst(labelB));
    comparison = compareEndpointRuns(labelA, picked.a, labelB, picked.b);
  }
  const filter = { ...(labels ? { labels } : {}), ...(runIds ? { runIds } : {}), ...(statuses ? { statuses } : {}) };
  return { runs, requests, comparison, filter };
}

const CONFIG_KEYS = [
  'baseUrl',
  'model',
  'api',
  'systemLabel',
  'notes',
  'workloadFile',
  'workloadDigest',
  'requestsDigest',
  'temperature',
  'topP',
  'maxTokens',
  'ignoreEos',
  'streamUsage',
  'requestTimeoutS',
  'idleTimeoutS',
  'metricsUrls',
  'promptSalt',
  'promptTokenizer',
  'maxBatches',
  'stopAfterDeadBatches',
] as const;

const RUN_COLUMNS = [
  'run_id',
  'system_label',
  'status',
  'status_reason',
  'started_at',
  'finished_at',
  'wall_ms',
  // The wall clock the rates are not over (they are over duration_s, the batches' own times).
  'span_s',
  'client_host',
  'kvbench_version',
  // Runs stored before 0.5.0 took duration_s and the rates over the span: `recomputed` from their
  // stored requests, or kept as stored (`span_based`, with why); `measured` for later runs. The
  // span-based values as stored beside them.
  'rates_source',
  'rates_note',
  ...SPAN_RATE_KEYS.map((k) => `span_based_${k}` as const),
  // The metric columns hold Δs; these say which of them may not be the run's own share, and why.
  'server_metric_caveats',
  'server_metrics_notes',
] as const;

export function runColumns(): string[] {
  return [...RUN_COLUMNS, ...CONFIG_KEYS.map((k) => `config.${k}`), ...ENDPOINT_METRICS.map((m) => m.key)];
}

function cell(v: unknown): Cell {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  return JSON.stringify(v);
}

export function runRow(r: EndpointRunRecord): Cell[] {
  const cfg = r.config as unknown as Record<string, unknown>;
  return [
    r.id,
    r.systemLabel,
    r.status,
    r.statusReason,
    r.startedAt,
    r.finishedAt,
    Math.round(r.wallMs),
    // Runs before 0.5.0 that could not be recomputed have no spanS: their duration_s is the span.
    r.aggregates.spanS ?? r.aggregates.durationS,
    r.clientHost,
    r.kvbenchVersion,
    r.legacyRates === undefined ? 'measured' : r.legacyRates.recomputedBy !== null ? 'recomputed' : 'span_based',
    r.legacyRates === undefined ? null : legacyRatesText(r.legacyRates),
    ...SPAN_RATE_KEYS.map((k) => r.legacyRates?.stored[k] ?? null),
    Object.entries(serverMetricCaveats(r.serverMetrics)).map(([k, why]) => `${k}: ${why}`).join('; ') || null,
    serverMetricNotes(r.serverMetrics).join(' | ') || null,
    ...CONFIG_KEYS.map((k) => cell(cfg[k])),
    ...ENDPOINT_METRICS.map((m) => (m.key in r.metrics ? r.metrics[m.key] : null)),
  ];
}

export const REQUEST_COLUMNS = [
  'run_id',
  'system_label',
  'seq',
  'request_id',
  'batch_index',
  'prompt_id',
  'reused',
  'context_tokens',
  'prompt_chars',
  'max_tokens',
  'status',
  'http_status',
  'error',
  'sent_offset_ms',
  'ttft_ms',
  'e2e_ms',
  'tpot_ms',
  'output_tokens',
  'output_chunks',
  'token_count_source',
  'prompt_tokens',
  'cached_prompt_tokens',
  'finish_reason',
] as const;

export function requestRow(r: EndpointRunRecord, s: EndpointRequestSample): Cell[] {
  return [
    r.id,
    r.systemLabel,
    s.seq,
    s.requestId,
    s.batchIndex,
    s.promptId,
    s.reused,
    s.contextTokens,
    s.promptChars,
    s.maxTokens,
    s.status,
    s.httpStatus,
    s.error,
    cell(s.sentOffsetMs),
    cell(s.ttftMs),
    cell(s.e2eMs),
    cell(s.tpotMs),
    s.outputTokens,
    s.outputChunks,
    s.tokenCountSource,
    s.promptTokens,
    s.cachedPromptTokens,
    s.finishReason,
  ];
}

/**
 * CSV through the exports' one writer (src-main/export/csv.ts): RFC 4180, CRLF, a UTF-8 BOM, and text
 * a spreadsheet would run as a formula (a label, notes or a server's error message starting with
 * = + - @) prefixed with '. One row per run, or one per request.
 */
export function toCsv(model: EndpointExportModel, opts: { requests?: boolean } = {}): string {
  if (opts.requests) {
    const rows: Cell[][] = [];
    for (const r of model.runs) for (const s of model.requests.get(r.id) ?? []) rows.push(requestRow(r, s));
    return csvTable(REQUEST_COLUMNS, rows);
  }
  return csvTable(runColumns(), model.runs.map(runRow));
}

export function toJson(model: EndpointExportModel): string {
  // jsonText: a stored label's controls as JSON's \u escapes (read back exactly; nothing for a terminal to act on).
  return `${jsonText(
    {
      format: 'kvbench-endpoint-export',
      version: 1,
      kvbenchVersion: KVBENCH_VERSION,
      exportedAt: new Date().toISOString(),
      filter: model.filter,
      units: 'names carry their unit: _ms milliseconds, _s seconds, _per_s per second; server token/block/byte counters are the run\'s deltas, except those in a run\'s serverMetricCaveats',
      metrics: ENDPOINT_METRICS,
      runs: model.runs.map((r) => ({ ...r, serverMetricCaveats: serverMetricCaveats(r.serverMetrics), requests: model.requests.get(r.id) ?? [] })),
      comparison: model.comparison,
    },
    2,
  )}\n`;
}

/** One row per warning of the comparison (`comparison warning`, its text), or one saying there are none; then its notes. */
function comparisonWarningRows(c: EndpointComparison): Cell[][] {
  return [...(c.warnings.length > 0 ? c.warnings.map((w) => ['comparison warning', w]) : [['comparison warnings', 'none']]), ...c.notes.map((n) => ['comparison note', n])];
}

export async function toXlsxBuffer(model: EndpointExportModel): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  wb.creator = `kvbench ${KVBENCH_VERSION}`;
  // Text as a cell shows it: controls and bidirectional controls in a stored label escaped, long text cut.
  const shown = (r: readonly Cell[]): Cell[] => r.map((c) => (typeof c === 'string' ? cellText(c, 'the JSON export has it whole') : c));
  /** A sheet: `above` (rows a reader must see first), then the table under a bold, frozen header. */
  const add = (name: string, columns: readonly string[], rows: readonly Cell[][], above: readonly Cell[][] = []): void => {
    const ws = wb.addWorksheet(name);
    for (const r of above) ws.addRow(shown(r));
    if (above.length > 0) ws.addRow([]);
    const header = ws.addRow(shown(columns));
    header.font = { bold: true };
    for (const r of rows) ws.addRow(shown(r));
    ws.views = [{ state: 'frozen', ySplit: header.number }];
  };
  add('Runs', runColumns(), model.runs.map(runRow));
  const reqRows: Cell[][] = [];
  for (const r of model.runs) for (const s of model.requests.get(r.id) ?? []) reqRows.push(requestRow(r, s));
  add('Requests', REQUEST_COLUMNS, reqRows);
  const ctxRows: Cell[][] = [];
  for (const r of model.runs) {
    for (const c of r.aggregates.byContext) {
      ctxRows.push([r.id, r.systemLabel, c.contextTokens, c.requests, c.ok, c.ttftMs.p50, c.ttftMs.p95, c.e2eMs.p50, c.e2eMs.p95, c.ttftReusedMs.p50, c.ttftFreshMs.p50]);
    }
  }
  add('By context', ['run_id', 'system_label', 'context_tokens', 'requests', 'ok', 'ttft_p50_ms', 'ttft_p95_ms', 'latency_p50_ms', 'latency_p95_ms', 'ttft_reused_p50_ms', 'ttft_fresh_p50_ms'], ctxRows);
  const smRows: Cell[][] = [];
  for (const r of model.runs) {
    const caveats = serverMetricCaveats(r.serverMetrics);
    for (const v of r.serverMetrics.values) {
      const def = SERVER_METRIC_BY_KEY[v.key];
      smRows.push([r.id, r.systemLabel, v.key, def?.label ?? v.key, def?.unit ?? null, def?.kind ?? null, v.source, v.before, v.after, v.delta, v.reset, v.sinceServerStart, caveats[`server.${v.key}`] ?? null]);
    }
    for (const [k, v] of Object.entries(r.serverMetrics.derived)) smRows.push([r.id, r.systemLabel, k, k, null, 'derived', null, null, null, v, false, false, caveats[`server.${k}`] ?? null]);
  }
  add('Server metrics', ['run_id', 'system_label', 'key', 'label', 'unit', 'kind', 'source', 'before', 'after', 'delta', 'counter_reset', 'since_server_start', 'caveat'], smRows);
  if (model.comparison) {
    const c = model.comparison;
    add(
      'Comparison',
      ['metric', 'label', 'unit', `${c.labelA} (A)`, `${c.labelB} (B)`, 'runs_a', 'runs_b', 'min_a', 'max_a', 'cv_a', 'min_b', 'max_b', 'cv_b', 'ratio_a_over_b', 'noise', 'p_value', 'better_value', 'better', 'flagged_runs_a', 'flagged_runs_b', 'recomputed_runs_a', 'recomputed_runs_b', 'span_based_runs_a', 'span_based_runs_b'],
      c.rows.map((x) => {
        const side = (s: 'a' | 'b' | null): string | null => (s === 'a' ? c.labelA : s === 'b' ? c.labelB : null);
        return [
          x.metric.key, x.metric.label, x.metric.unit, x.a, x.b, x.nA, x.nB,
          x.spreadA?.min ?? null, x.spreadA?.max ?? null, x.spreadA?.cv ?? null, x.spreadB?.min ?? null, x.spreadB?.max ?? null, x.spreadB?.cv ?? null,
          x.ratio, x.noise, x.pValue, side(x.leader), side(x.better), x.flaggedA.join(', ') || null, x.flaggedB.join(', ') || null,
          x.recomputedA.join(', ') || null, x.recomputedB.join(', ') || null, x.spanBasedA.join(', ') || null, x.spanBasedB.join(', ') || null,
        ];
      }),
      // compare's warnings qualify every verdict below them: a reader of the sheet sees them first.
      [...comparisonWarningRows(c), ['method', c.method]],
    );
  }
  add(
    'About',
    ['item', 'value'],
    [
      ['kvbench version', KVBENCH_VERSION],
      ['exported at', new Date().toISOString()],
      ['filter', JSON.stringify(model.filter)],
      ['percentiles', 'per-request values, linear interpolation between closest ranks; inter-token latency pooled over requests in an HDR histogram'],
      ['throughput', THROUGHPUT_METHOD],
      ['rates_source (Runs)', "measured: by kvbench 0.5.0 or later; recomputed: a run stored before 0.5.0, its duration_s and rates recomputed from its stored requests as today, the values it stored in span_based_*; span_based: such a run whose requests could not reproduce it, kept as stored (rates_note says why), not comparable with the others' rates"],
      ['server metrics', 'counters: after − before the run (the run\'s share), except where server_metric_caveats (Runs) or caveat (Server metrics) says otherwise; gauges: the value after the run'],
      ...(model.comparison
        ? [
            ['comparison', model.comparison.method] as Cell[],
            [
              'comparison columns',
              `min/max/cv: each side's spread over its runs; noise: beyond, within, or unknown (one run on a side, or a 0: no logarithm), by ${NOISE_RULE}; p_value: that test's; better_value: the side with the better value; better: that side where the difference is beyond noise; ` +
                "recomputed_runs: runs stored before kvbench 0.5.0 whose value was recomputed from their stored requests (today's definition); span_based_runs: such runs whose value is kept as stored, over the span",
            ] as Cell[],
            ...comparisonWarningRows(model.comparison),
          ]
        : []),
      ...ENDPOINT_METRICS.map((m): Cell[] => [m.key, `${m.label} [${m.unit}]${m.better ? `, ${m.better} is better` : ''}`]),
    ],
  );
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** The file's bytes in one of the formats (what the CLI writes and the app hands the page to save). */
export async function renderEndpointExport(model: EndpointExportModel, format: EndpointExportFormat, opts: { requests?: boolean } = {}): Promise<Buffer> {
  if (format === 'csv') return Buffer.from(toCsv(model, opts));
  if (format === 'json') return Buffer.from(toJson(model));
  return toXlsxBuffer(model);
}

export async function writeEndpointExport(model: EndpointExportModel, format: EndpointExportFormat, file: string, opts: { requests?: boolean } = {}): Promise<void> {
  await writeFileAtomic(file, await renderEndpointExport(model, format, opts));
}

export function endpointFormatFromPath(file: string): EndpointExportFormat | null {
  const ext = path.extname(file).toLowerCase().slice(1);
  return (ENDPOINT_EXPORT_FORMATS as readonly string[]).includes(ext) ? (ext as EndpointExportFormat) : null;
}
