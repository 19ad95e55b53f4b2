/**
 * XLSX export of one run, laid out like the reference's `--xlsx-output` workbook: the same sheets,
 * the same column names (the GiB/GiB/s label variant, because the values are GiB), the same row
 * order, plus a `kvbench` sheet with our own measurements in bytes, nanoseconds and bytes/s.
 *
 * `buildXlsxRows` holds all the decisions; `writeResultsXlsx` only lays the rows into a workbook and
 * writes it atomically (temp file in the target folder, fsync, rename), so a reader never sees half
 * a file and a failed export never replaces a good one.
 */

import ExcelJS from 'exceljs';
import type { KvbenchSection, RunResults, RunSummary } from '../../../src-shared/domain/results.ts';
import { writeFileAtomic } from '../../util/write-file-atomic.ts';
import { printableCell } from '../../../src-shared/domain/label-text.ts';

export type XlsxCell = string | number | boolean | null;

export interface XlsxSheet {
  name: string;
  columns: string[];
  rows: XlsxCell[][];
}

export const SHEET_SUMMARY = 'Summary';
export const SHEET_RUN_PARAMETERS = 'Run Parameters';
export const SHEET_PERFORMANCE_METRICS = 'Performance Metrics';
export const SHEET_QOS_METRICS = 'QoS Metrics';
export const SHEET_KVBENCH = 'kvbench';
export const QOS_NOT_APPLICABLE = 'N/A (throughput mode)';

const PERCENTILE_SUFFIXES: readonly (readonly [string, string])[] = [
  ['P50', 'p50'],
  ['P95', 'p95'],
  ['P99', 'p99'],
  ['P99.9', 'p999'],
  ['P99.99', 'p9999'],
];

/** The reference's metric columns, in its order, with the values from `summary` (null when missing). */
export function buildPerformanceMetrics(summary: RunSummary | undefined): [string, XlsxCell][] {
  const s = (summary ?? {}) as Partial<RunSummary>;
  const cs = (s.cache_stats ?? {}) as Record<string, unknown>;
  const rows: [string, XlsxCell][] = [];
  const add = (name: string, v: unknown): void => {
    rows.push([name, toCell(v)]);
  };

  add('Total Requests', s.total_requests);
  add('Total Tokens', s.total_tokens);
  add('Elapsed Time (s)', s.elapsed_time);
  add('Avg Throughput (tok/s)', s.avg_throughput_tokens_per_sec);
  add('Storage Throughput (tok/s)', s.storage_throughput_tokens_per_sec);
  add('Requests/sec', s.requests_per_second);

  const latencyBlock = (label: string, obj: Record<string, number> | undefined, deep: boolean): void => {
    add(`${label} Mean (ms)`, obj?.mean);
    for (const [suffix, key] of deep ? PERCENTILE_SUFFIXES : PERCENTILE_SUFFIXES.slice(0, 3)) {
      add(`${label} ${suffix} (ms)`, obj?.[key]);
    }
  };
  latencyBlock('E2E Latency', s.end_to_end_latency_ms as Record<string, number> | undefined, true);
  latencyBlock('Storage Latency', s.storage_io_latency_ms as Record<string, number> | undefined, true);
  latencyBlock('Gen Latency', s.generation_latency_ms as Record<string, number> | undefined, false);

  for (const part of ['', 'device_', 'host_'] as const) {
    const label = part === '' ? 'Total' : part === 'device_' ? 'Device' : 'Host';
    for (const op of ['read', 'write'] as const) {
      for (const [suffix, key] of PERCENTILE_SUFFIXES) {
        add(`Storage Tier ${op === 'read' ? 'Read' : 'Write'} ${label} ${suffix} (ms)`, cs[`storage_${op}_${part}${key}_ms`]);
      }
    }
  }

  add('Cache Hit Rate', cs.cache_hit_rate);
  add('Read/Write Ratio', cs.read_write_ratio);
  add('Total Read (GiB)', cs.total_read_gb);
  add('Total Write (GiB)', cs.total_write_gb);
  for (const dir of ['written', 'read'] as const) {
    for (const [tier, label] of [
      ['gpu', 'GPU'],
      ['cpu', 'CPU'],
      ['storage', 'Storage'],
    ] as const) {
      add(`Tier ${label} KV Bytes ${dir === 'written' ? 'Written' : 'Read'} (GiB)`, cs[`tier_${tier}_kv_bytes_${dir}_gb`]);
    }
  }
  for (const [tier, label] of [
    ['gpu', 'GPU'],
    ['cpu', 'CPU'],
    ['storage', 'Storage'],
  ] as const) {
    add(`Tier ${label} Read Bandwidth (GiB/s)`, cs[`tier_${tier}_read_bandwidth_gbps`]);
    add(`Tier ${label} Write Bandwidth (GiB/s)`, cs[`tier_${tier}_write_bandwidth_gbps`]);
  }
  add('GPU Entries', cs.gpu_entries);
  add('CPU Entries', cs.cpu_entries);
  add('Storage Entries', cs.storage_entries);
  add('Multi-turn Hit Rate', s.multi_turn_stats?.hit_rate);
  return rows;
}

/**
 * The QoS rows (levels with data only). The throughput profile (read from the run parameter
 * `Performance Profile`, as the reference reads its argument) writes `N/A (throughput mode)` in both
 * SLA columns.
 */
export function buildQosRows(summary: RunSummary | undefined, throughputProfile: boolean): XlsxCell[][] {
  const rows: XlsxCell[][] = [];
  for (const [level, data] of Object.entries(summary?.qos_metrics ?? {})) {
    if (!data || typeof data !== 'object' || ('no_data' in data && data.no_data)) continue;
    const m = data as Exclude<typeof data, { no_data: true }>;
    rows.push([
      level,
      toCell(m.total_requests),
      toCell(m.latency_ms?.p95),
      toCell(m.latency_ms?.p99),
      throughputProfile ? QOS_NOT_APPLICABLE : toCell(m.sla?.met),
      throughputProfile ? QOS_NOT_APPLICABLE : toCell(m.sla?.compliance),
    ]);
  }
  return rows;
}

/**
 * The kvbench section as (Metric, Value, Unit) rows: dotted paths, units read from the key names.
 * The HDR histograms (base64) and the timeline are left out: the first is not for reading, and the
 * second is a time series that the JSON holds in full.
 */
export function flattenKvbench(kv: KvbenchSection): XlsxCell[][] {
  const rows: XlsxCell[][] = [];
  const walk = (value: unknown, path: string[]): void => {
    const key = path[path.length - 1] ?? '';
    if (key === 'hdr' || (path.length === 1 && key === 'timeline') || (path.length === 1 && key === 'units')) return;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(v, [...path, k]);
      return;
    }
    if (Array.isArray(value)) {
      rows.push([path.join('.'), cellText(JSON.stringify(value)), 'JSON']);
      return;
    }
    rows.push([path.join('.'), toCell(value), unitForPath(path, value)]);
  };
  walk(kv, []);
  return rows;
}

const COUNT_KEYS = new Set([
  'count',
  'entries_at_end',
  'max_depth',
  'threads',
  'placement_failures',
  'system_prompt_writes',
  'documents',
  'chunks',
  'retrievals',
  'chunk_reads',
  'corrupt_chunks',
  'checked_chunks',
  'io_depth',
  'uv_threadpool_size',
  'tensor_parallel',
  'busy_requests',
  'copy_threads',
  'staging_slots',
  'staging_slot_acquisitions',
  'staging_slot_waits',
]);

/** The unit of a flattened kvbench value, from the names on its path (they carry their units). */
export function unitForPath(path: readonly string[], value: unknown): string {
  if (typeof value !== 'number') return '';
  const key = path[path.length - 1] ?? '';
  if (path.some((part) => part.endsWith('_ns_per_mib'))) return key === 'count' ? 'count' : 'ns/MiB';
  if (COUNT_KEYS.has(key) || key.endsWith('_ops') || key.endsWith('_copies') || key.endsWith('_entries') || key.startsWith('requests_')) {
    return 'count';
  }
  // A tier's share of a byte count (verification.checked_bytes_by_tier.gpu).
  if ((path[path.length - 2] ?? '').endsWith('_bytes_by_tier')) return 'bytes';
  if (key.endsWith('_bytes_per_sec')) return 'bytes/s';
  if (key.endsWith('_tokens_per_sec')) return 'tokens/s';
  if (key.endsWith('_per_sec')) return '1/s';
  if (key.endsWith('_bytes_per_token')) return 'bytes/token';
  if (key === 'bytes_per_token') return 'bytes/token';
  // Under a name ending _ns, however deep (workers.busy_ns.cache_io_by_tier.gpu).
  if (key.endsWith('_ns') || path.slice(0, -1).some((part) => part.endsWith('_ns'))) return 'ns';
  // After the rates above: any other name with a "bytes" word (read_bytes, decode_bytes_read, bytes).
  if (/(^|_)bytes(_|$)/.test(key)) return 'bytes';
  if (key === 'utilisation') return 'ratio (0-1)';
  return '';
}

/** All sheets, in workbook order, as plain rows: what the workbook will hold, testable without Excel. */
export function buildXlsxRows(
  results: RunResults,
  runParams: Record<string, string | number | boolean | null>,
): XlsxSheet[] {
  const paramEntries = Object.entries(runParams).map(([k, v]) => [k, toCell(v)] as [string, XlsxCell]);
  const metrics = buildPerformanceMetrics(results.summary);

  const sheets: XlsxSheet[] = [
    {
      name: SHEET_SUMMARY,
      columns: [...paramEntries.map(([k]) => k), ...metrics.map(([k]) => k)],
      rows: [[...paramEntries.map(([, v]) => v), ...metrics.map(([, v]) => v)]],
    },
    { name: SHEET_RUN_PARAMETERS, columns: ['Parameter', 'Value'], rows: paramEntries.map(([k, v]) => [k, v]) },
    { name: SHEET_PERFORMANCE_METRICS, columns: ['Metric', 'Value'], rows: metrics.map(([k, v]) => [k, v]) },
  ];

  const throughputProfile = runParams['Performance Profile'] === 'throughput';
  const qosRows = buildQosRows(results.summary, throughputProfile);
  if (qosRows.length > 0) {
    sheets.push({
      name: SHEET_QOS_METRICS,
      columns: ['QoS Level', 'Total Requests', 'Latency P95 (ms)', 'Latency P99 (ms)', 'SLA Met', 'SLA Compliance'],
      rows: qosRows,
    });
  }

  sheets.push({ name: SHEET_KVBENCH, columns: ['Metric', 'Value', 'Unit'], rows: flattenKvbench(results.kvbench) });
  return sheets;
}

/** Writes the workbook to `path` atomically: a temp file beside it, fsync, then rename over. */
export async function writeResultsXlsx(
  results: RunResults,
  runParams: Record<string, string | number | boolean | null>,
  path: string,
): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  workbook.creator = 'kvbench';
  for (const sheet of buildXlsxRows(results, runParams)) {
    const ws = workbook.addWorksheet(sheet.name);
    ws.addRow(sheet.columns);
    ws.getRow(1).font = { bold: true };
    for (const row of sheet.rows) ws.addRow(row);
    sheet.columns.forEach((name, i) => {
      const longest = Math.max(name.length, ...sheet.rows.map((r) => cellWidth(r[i])));
      ws.getColumn(i + 1).width = Math.min(60, Math.max(10, longest + 2));
    });
    ws.views = [{ state: 'frozen', ySplit: 1 }];
  }
  const buffer = Buffer.from(await workbook.xlsx.writeBuffer());

  await writeFileAtomic(path, buffer);
}

function toCell(v: unknown): XlsxCell {
  if (v === undefined || v === null) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string') return cellText(v);
  if (typeof v === 'boolean') return v;
  return cellText(JSON.stringify(v));
}

/** Excel holds at most 32,767 characters in a cell; longer text would make the file unreadable. */
const MAX_CELL_CHARS = 32_000;

/**
 * `text` as a cell shows it: controls and bidirectional controls escaped (printableCell, as the CSV
 * writes them), then cut to what a cell holds, saying where the whole of it is.
 */
export function cellText(text: string, whole = 'see the results JSON'): string {
  const shown = printableCell(text);
  return shown.length <= MAX_CELL_CHARS ? shown : `${shown.slice(0, MAX_CELL_CHARS)}…(truncated; ${whole})`;
}

function cellWidth(v: XlsxCell | undefined): number {
  if (v === null || v === undefined) return 0;
  return String(v).length;
}
