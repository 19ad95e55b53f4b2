import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildXlsxRows,
  QOS_NOT_APPLICABLE,
  unitForPath,
  writeResultsXlsx,
  type XlsxCell,
  type XlsxSheet,
} from '../../../src-main/engine/report/xlsx-export.ts';
import { FIXTURE_DIGEST, FIXTURE_RUN_PARAMS, makeRunResults } from './results-fixture.ts';

function sheet(sheets: XlsxSheet[], name: string): XlsxSheet {
  const s = sheets.find((x) => x.name === name);
  if (!s) throw new Error(`no sheet ${name}`);
  return s;
}

function valueOf(s: XlsxSheet, metric: string): XlsxCell | undefined {
  return s.rows.find((r) => r[0] === metric)?.[1];
}

describe('buildXlsxRows', () => {
  it('lays out the reference sheets, then kvbench', () => {
    const sheets = buildXlsxRows(makeRunResults(), FIXTURE_RUN_PARAMS);
    expect(sheets.map((s) => s.name)).toEqual(['Summary', 'Run Parameters', 'Performance Metrics', 'QoS Metrics', 'kvbench']);

    const metrics = sheet(sheets, 'Performance Metrics');
    expect(metrics.columns).toEqual(['Metric', 'Value']);
    const names = metrics.rows.map((r) => r[0]);
    expect(names.slice(0, 6)).toEqual([
      'Total Requests',
      'Total Tokens',
      'Elapsed Time (s)',
      'Avg Throughput (tok/s)',
      'Storage Throughput (tok/s)',
      'Requests/sec',
    ]);
    expect(names).toContain('E2E Latency P99.99 (ms)');
    expect(names).toContain('Gen Latency P99 (ms)');
    expect(names).not.toContain('Gen Latency P99.9 (ms)');
    expect(names.indexOf('Storage Tier Write Total P99.99 (ms)')).toBeLessThan(names.indexOf('Storage Tier Read Device P50 (ms)'));
    expect(names.indexOf('Storage Tier Write Device P99.99 (ms)')).toBeLessThan(names.indexOf('Storage Tier Read Host P50 (ms)'));
    expect(names.slice(-4)).toEqual(['GPU Entries', 'CPU Entries', 'Storage Entries', 'Multi-turn Hit Rate']);
    expect(names).toContain('Tier Storage Read Bandwidth (GiB/s)');
    expect(names).toContain('Total Read (GiB)');
    // Overall 6, E2E 6, Storage 6, Gen 4, storage tier 30, cache 4, tier bytes 6, bandwidths 6, entries 3, multi-turn 1.
    expect(names.length).toBe(6 + 6 + 6 + 4 + 30 + 4 + 6 + 6 + 3 + 1);

    expect(valueOf(metrics, 'Total Requests')).toBe(1200);
    expect(valueOf(metrics, 'Storage Tier Read Device P95 (ms)')).toBe(87.5);
    expect(valueOf(metrics, 'Tier Storage KV Bytes Read (GiB)')).toBe(40);
    expect(valueOf(metrics, 'Multi-turn Hit Rate')).toBe(0.762);
    expect(valueOf(metrics, 'Storage Tier Read Total P99.99 (ms)')).toBe(160);
    // Missing keys are empty cells, as in the reference.
    const results = makeRunResults();
    delete results.summary!.cache_stats.storage_read_host_p9999_ms;
    const m2 = sheet(buildXlsxRows(results, FIXTURE_RUN_PARAMS), 'Performance Metrics');
    expect(valueOf(m2, 'Storage Tier Read Host P99.99 (ms)')).toBeNull();

    const summary = sheet(sheets, 'Summary');
    expect(summary.rows).toHaveLength(1);
    expect(summary.columns.slice(0, 2)).toEqual(['Timestamp', 'Model']);
    expect(summary.columns.length).toBe(Object.keys(FIXTURE_RUN_PARAMS).length + metrics.rows.length);
    expect(summary.columns[Object.keys(FIXTURE_RUN_PARAMS).length]).toBe('Total Requests');

    const qos = sheet(sheets, 'QoS Metrics');
    expect(qos.columns).toEqual(['QoS Level', 'Total Requests', 'Latency P95 (ms)', 'Latency P99 (ms)', 'SLA Met', 'SLA Compliance']);
    expect(qos.rows).toEqual([
      ['interactive', 180, 900.5, 1200.25, false, 0.1234],
      ['responsive', 420, 1000, 1300, false, 0.2],
    ]);
  });

  it('writes N/A in the SLA columns in the throughput profile', () => {
    const sheets = buildXlsxRows(makeRunResults(), { ...FIXTURE_RUN_PARAMS, 'Performance Profile': 'throughput' });
    for (const row of sheet(sheets, 'QoS Metrics').rows) {
      expect(row[4]).toBe(QOS_NOT_APPLICABLE);
      expect(row[5]).toBe(QOS_NOT_APPLICABLE);
    }
  });

  it('omits the QoS sheet when no level has data, and leaves metrics empty without a summary', () => {
    const sheets = buildXlsxRows(makeRunResults({ withSummary: false }), FIXTURE_RUN_PARAMS);
    expect(sheets.map((s) => s.name)).toEqual(['Summary', 'Run Parameters', 'Performance Metrics', 'kvbench']);
    expect(sheet(sheets, 'Performance Metrics').rows.every((r) => r[1] === null)).toBe(true);
  });

  it('flattens the kvbench section with units, without histograms or timeline', () => {
    const kv = sheet(buildXlsxRows(makeRunResults(), FIXTURE_RUN_PARAMS), 'kvbench');
    expect(kv.columns).toEqual(['Metric', 'Value', 'Unit']);
    const row = (m: string): XlsxCell[] | undefined => kv.rows.find((r) => r[0] === m);
    expect(row('status')).toEqual(['status', 'complete', '']);
    expect(row('request_stream_digest')?.[1]).toBe(FIXTURE_DIGEST);
    expect(row('tier_bytes.storage.read_bytes')).toEqual(['tier_bytes.storage.read_bytes', 40 * 1024 ** 3, 'bytes']);
    expect(row('tier_bytes.storage.read_bytes_per_sec')?.[2]).toBe('bytes/s');
    expect(row('tier_bytes.storage.read_ops')?.[2]).toBe('count');
    expect(row('latency.queue_wait.p95_ns')).toEqual(['latency.queue_wait.p95_ns', 80.25e6, 'ns']);
    expect(row('latency.tier_read_ns_per_mib.storage.p95_ns')?.[2]).toBe('ns/MiB');
    expect(row('demotions.cpu->storage.bytes')?.[2]).toBe('bytes');
    expect(row('engine_health.event_loop_lag_ns.p99')).toEqual(['engine_health.event_loop_lag_ns.p99', 4_560_000, 'ns']);
    expect(row('engine_health.byte_workers.utilisation')?.[2]).toBe('ratio (0-1)');
    expect(row('tiers.storage.direct_io')?.[1]).toBe(true);
    expect(row('primary.wall_clock_throughput_tokens_per_sec')?.[2]).toBe('tokens/s');
    expect(row('model.bytes_per_token')?.[2]).toBe('bytes/token');
    expect(row('primary.prefill_bytes_written')?.[2]).toBe('bytes');
    expect(row('engine_health.io_chunk_bytes')?.[2]).toBe('bytes');
    expect(row('elapsed_ns')?.[2]).toBe('ns');
    expect(row('effective_seed')?.[2]).toBe('');
    expect(kv.rows.some((r) => String(r[0]).endsWith('.hdr'))).toBe(false);
    expect(kv.rows.some((r) => String(r[0]).startsWith('timeline'))).toBe(false);
    expect(unitForPath(['elapsed_ns'], 1)).toBe('ns');
    // The workers' busy time: ns however deep under busy_ns, its request count a count.
    expect(unitForPath(['workers', 'busy_ns', 'cache_io_by_tier', 'gpu'], 1)).toBe('ns');
    expect(unitForPath(['workers', 'busy_ns', 'generation'], 1)).toBe('ns');
    expect(unitForPath(['workers', 'busy_requests'], 1)).toBe('count');
    // --verify's bytes checked, by the tier that served them; the GPU tier's staging slots and copies, counts.
    expect(unitForPath(['verification', 'checked_bytes_by_tier', 'gpu'], 1)).toBe('bytes');
    expect(unitForPath(['verification', 'checked_chunks'], 1)).toBe('count');
    for (const key of ['staging_slots', 'staging_slot_acquisitions', 'staging_slot_waits', 'h2d_copies', 'd2h_staging_copies', 'demotion_d2h_copies']) {
      expect(unitForPath(['tiers', 'gpu', key], 1), key).toBe('count');
    }
    expect(row('verification.corrupt_chunks')?.[2]).toBe('count');
    const withFailures = sheet(buildXlsxRows(makeRunResults({ corruptChunks: 2 }), FIXTURE_RUN_PARAMS), 'kvbench');
    const failures = withFailures.rows.find((r) => r[0] === 'verification.failures');
    expect(failures?.[2]).toBe('JSON');
    expect(JSON.parse(String(failures?.[1]))).toHaveLength(2);
  });
});

describe('writeResultsXlsx', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kvbench-xlsx-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a workbook that reads back with the same sheets, headers and values', async () => {
    const path = join(dir, 'results.xlsx');
    await writeResultsXlsx(makeRunResults(), FIXTURE_RUN_PARAMS, path);
    // Atomic write: only the final file is left behind.
    expect(await readdir(dir)).toEqual(['results.xlsx']);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Summary', 'Run Parameters', 'Performance Metrics', 'QoS Metrics', 'kvbench']);

    const params = wb.getWorksheet('Run Parameters')!;
    expect(params.getRow(1).values).toEqual([undefined, 'Parameter', 'Value']);
    expect(params.getCell('A3').value).toBe('Model');
    expect(params.getCell('B3').value).toBe('llama3.1-8b');
    const multiTurnRow = Object.keys(FIXTURE_RUN_PARAMS).indexOf('Multi-turn') + 2;
    expect(params.getCell(`B${multiTurnRow}`).value).toBe(true);

    const metrics = wb.getWorksheet('Performance Metrics')!;
    expect(metrics.getCell('A1').value).toBe('Metric');
    const byName = new Map<string, unknown>();
    metrics.eachRow((row, n) => {
      if (n > 1) byName.set(String(row.getCell(1).value), row.getCell(2).value);
    });
    expect(byName.get('Avg Throughput (tok/s)')).toBe(3000);
    expect(byName.get('E2E Latency P95 (ms)')).toBe(1500.75);
    expect(byName.get('Tier CPU Read Bandwidth (GiB/s)')).toBeCloseTo(0.5, 12);

    const summary = wb.getWorksheet('Summary')!;
    expect(summary.rowCount).toBe(2);
    expect(summary.getCell('A1').value).toBe('Timestamp');
    const nParams = Object.keys(FIXTURE_RUN_PARAMS).length;
    expect(summary.getRow(1).getCell(nParams + 1).value).toBe('Total Requests');
    expect(summary.getRow(2).getCell(nParams + 1).value).toBe(1200);

    const qos = wb.getWorksheet('QoS Metrics')!;
    expect(qos.getRow(1).values).toEqual([
      undefined,
      'QoS Level',
      'Total Requests',
      'Latency P95 (ms)',
      'Latency P99 (ms)',
      'SLA Met',
      'SLA Compliance',
    ]);
    expect(qos.getCell('A2').value).toBe('interactive');
    expect(qos.getCell('E2').value).toBe(false);

    const kv = wb.getWorksheet('kvbench')!;
    expect(kv.getRow(1).values).toEqual([undefined, 'Metric', 'Value', 'Unit']);
    let found = false;
    kv.eachRow((row) => {
      if (row.getCell(1).value === 'primary.decode_bytes_read') {
        found = true;
        expect(row.getCell(2).value).toBe(60 * 1024 ** 3);
        expect(row.getCell(3).value).toBe('bytes');
      }
    });
    expect(found).toBe(true);
  });

  it('a parameter holding bidirectional or control characters (a cache path) is written escaped, \\u{202e}, as the CSV writes it', async () => {
    const path = join(dir, 'bidi.xlsx');
    await writeResultsXlsx(makeRunResults(), { ...FIXTURE_RUN_PARAMS, 'Cache Directory': '/mnt/abc\u202Efdp.exe\u001b[2J' }, path);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    const texts: string[] = [];
    wb.eachSheet((ws) => ws.eachRow((row) => row.eachCell((c) => texts.push(String(c.value)))));
    expect(texts.filter((t) => /[\u202a-\u202e\u2066-\u2069\u001b]/.test(t))).toEqual([]);
    expect(texts).toContain('/mnt/abc\\u{202e}fdp.exe\\u{1b}[2J');
  });

  it('replaces an existing file and leaves no temp file when the target folder is missing', async () => {
    const path = join(dir, 'r.xlsx');
    await writeResultsXlsx(makeRunResults(), FIXTURE_RUN_PARAMS, path);
    await writeResultsXlsx(makeRunResults({ withSummary: false }), FIXTURE_RUN_PARAMS, path);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path);
    expect(wb.getWorksheet('QoS Metrics')).toBeUndefined();
    expect(await readdir(dir)).toEqual(['r.xlsx']);

    await expect(writeResultsXlsx(makeRunResults(), FIXTURE_RUN_PARAMS, join(dir, 'missing', 'x.xlsx'))).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['r.xlsx']);
  });
});
