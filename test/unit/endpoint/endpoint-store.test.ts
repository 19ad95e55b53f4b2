import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flattenEndpointMetrics, type EndpointRequestSample, type EndpointRunConfig } from '../../../src-shared/domain/endpoint.ts';
import { aggregateRun } from '../../../src-main/endpoint/aggregate.ts';
import { compareLabels } from '../../../src-main/endpoint/endpoint-compare.ts';
import { EndpointStore } from '../../../src-main/endpoint/endpoint-store.ts';
import { legacyRequestsDigest, requestsDigest, workloadDigest } from '../../../src-main/endpoint/replay-plan.ts';
import { generateWorkload } from '../../../src-main/engine/workload/sources/workload-file.ts';
import { buildEndpointExportModel, runColumns, runRow, toCsv, toJson, toXlsxBuffer, writeEndpointExport } from '../../../src-main/endpoint/endpoint-export.ts';
import { checkResultsFileTarget, resultsEntry } from '../../../src-main/endpoint/results-file.ts';
import type { EndpointRunOutcome } from '../../../src-main/endpoint/runner.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { MIGRATIONS } from '../../../src-main/store/migrations.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import ExcelJS from 'exceljs';
import { endpointConfig } from './fixtures.ts';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function freshStore(): Store {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-ep-store-'));
  dirs.push(d);
  const s = openStore(path.join(d, 'kvbench.db'));
  stores.push(s);
  return s;
}

let salts = 0;
function outcome(label: string, ttfts: number[], digest = 'd1', startedAt = '2026-01-01T00:00:00.000Z'): EndpointRunOutcome {
  const samples: EndpointRequestSample[] = ttfts.map((t, i) => ({
    seq: i,
    requestId: `b0_r${i}`,
    batchIndex: 0,
    promptId: `p${i % 2}`,
    reused: i >= 2,
    contextTokens: 64,
    promptChars: 300,
    maxTokens: 4,
    status: i === 3 ? 'timeout' : 'ok',
    httpStatus: 200,
    error: i === 3 ? 'nothing received for 1 s' : null,
    sentOffsetMs: i,
    ttftMs: i === 3 ? null : t,
    e2eMs: t + 10,
    tpotMs: 3,
    outputTokens: 4,
    outputChunks: 4,
    tokenCountSource: 'usage',
    promptTokens: 64,
    cachedPromptTokens: i >= 2 ? 48 : 0,
    finishReason: 'length',
  }));
  const aggregates = aggregateRun(samples, new LatencyHistogram());
  const serverMetrics = {
    pages: [{ url: 'http://127.0.0.1:1/metrics', format: 'prometheus' as const, engines: ['vllm'], error: null, notes: [] }],
    values: [{ key: 'prefix_cache_hits', source: 'vllm:prefix_cache_hits', before: 0, after: 96, delta: 96, reset: false, sinceServerStart: false }],
    derived: { prefix_cache_hit_rate: 0.375 },
    rawCounterDeltas: { 'vllm:prefix_cache_hits_total': 96 },
  };
  return {
    systemLabel: label,
    status: 'partial',
    statusReason: '1 of 4 request(s) did not succeed',
    // A salt of its own, as `endpoint run` draws by default: every run starts with a cold server cache.
    config: endpointConfig(label, { workloadDigest: digest, requestsDigest: `requests-of-${digest}`, promptSalt: `salt-${++salts}` }),
    startedAt,
    finishedAt: startedAt,
    wallMs: 1234,
    aggregates,
    serverMetrics,
    metrics: flattenEndpointMetrics(aggregates, serverMetrics),
    samples,
    kvbenchVersion: '0.1.0',
    clientHost: 'host',
  };
}

describe('endpoint runs in the trial store', () => {
  it('migration 2 adds the endpoint tables after the trial schema', () => {
    const v2 = MIGRATIONS.find((m) => m.name.startsWith('endpoint runs'));
    expect(v2?.version).toBe(MIGRATIONS.findIndex((m) => m === v2) + 1);
    const s = freshStore();
    const tables = (s.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'endpoint_%' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    expect(tables).toEqual(['endpoint_requests', 'endpoint_run_metrics', 'endpoint_runs']);
  });

  it('stores a run with its configuration, aggregates, server metrics, flat metrics and every request', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const o = outcome('pcie', [40, 50, 5, 0]);
    const id = es.insertRun(o);
    const r = es.requireRun(id);
    expect(r).toMatchObject({ id, systemLabel: 'pcie', status: 'partial', config: o.config, aggregates: o.aggregates, serverMetrics: o.serverMetrics, wallMs: 1234 });
    expect(r.metrics).toEqual(o.metrics);
    expect(r.metrics['server.prefix_cache_hit_rate']).toBe(0.375);
    expect(es.requests(id)).toEqual(o.samples);
    expect(r.aggregates.tokenCountSources).toEqual({ usage: 3, chunks: 0, chunksBelowMaxTokens: 0 });
    // A run stored before the aggregates counted token-count sources: counted from its requests.
    s.db.prepare("UPDATE endpoint_requests SET token_count_source = 'chunks', output_tokens = 2 WHERE run_id = ? AND seq IN (0, 1)").run(id);
    const legacy = JSON.parse(JSON.stringify(o.aggregates)) as Record<string, unknown>;
    delete legacy.tokenCountSources;
    s.db.prepare('UPDATE endpoint_runs SET aggregates_json = ? WHERE id = ?').run(JSON.stringify(legacy), id);
    expect(es.requireRun(id).aggregates.tokenCountSources).toEqual({ usage: 1, chunks: 2, chunksBelowMaxTokens: 2 });
    expect(es.labels()).toEqual([{ systemLabel: 'pcie', runs: 1, complete: 0, latestStartedAt: o.startedAt }]);
    expect(() => es.requireRun(999)).toThrow(/no endpoint run 999/);
    es.deleteRun(id);
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM endpoint_requests').get()).toEqual({ n: 0 });
    expect(s.db.prepare('SELECT COUNT(*) AS n FROM endpoint_run_metrics').get()).toEqual({ n: 0 });
  });

  it('picks the runs a comparison uses: complete ones that sent the newest run\'s requests, or the latest only', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const mk = (label: string, digest: string, at: string, status: 'complete' | 'partial') => es.insertRun({ ...outcome(label, [1, 2, 3, 4], digest, at), status });
    const a1 = mk('a', 'old', '2026-01-01T00:00:00.000Z', 'complete');
    const a2 = mk('a', 'new', '2026-01-02T00:00:00.000Z', 'complete');
    const a3 = mk('a', 'new', '2026-01-03T00:00:00.000Z', 'complete');
    const a4 = mk('a', 'new', '2026-01-04T00:00:00.000Z', 'partial');
    const b1 = mk('b', 'old', '2026-01-01T00:00:00.000Z', 'complete');
    const b2 = mk('b', 'other', '2026-01-05T00:00:00.000Z', 'complete');
    expect(compareLabels(es, 'a', 'b')).toMatchObject({ runIdsA: [a3, a2], runIdsB: [b2] });
    expect(compareLabels(es, 'a', 'b', { latestOnly: true })).toMatchObject({ runIdsA: [a3], runIdsB: [b2] });
    expect(compareLabels(es, 'a', 'b', { includePartial: true }).runIdsA).toEqual([a4, a3, a2]);
    // B follows A's requests where it has runs of them.
    expect(compareLabels(es, 'b', 'a')).toMatchObject({ runIdsA: [b2], runIdsB: [a3, a2] });
    expect(compareLabels(es, 'a', 'b', { runIdsA: [a1] }).runIdsB).toEqual([b1]);
    expect(() => compareLabels(es, 'a', 'nobody')).toThrow(/no complete runs for nobody; stored labels: /);
    // Given runs must be the side's own: a run of b is never shown as a's.
    expect(() => compareLabels(es, 'a', 'b', { runIdsA: [b1], runIdsB: [a1] })).toThrow(`run ${b1} is a run of b, not a: the runs of side A must be runs of its label (a)`);
    expect(() => compareLabels(es, 'a', 'b', { runIdsA: [a1], runIdsB: [a2] })).toThrow(expect.objectContaining({ code: 'VALIDATION', message: expect.stringMatching(new RegExp(`^run ${a2} is a run of a, not b`)) }));
    // One label on both sides, exactly the runs given (the app allows it): runs 1 vs 2 of a.
    expect(compareLabels(es, 'a', 'a', { runIdsA: [a1], runIdsB: [a2] })).toMatchObject({ runIdsA: [a1], runIdsB: [a2] });
  });

  it('runs of one workload file with different --max-batches are not medianed together', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const w = generateWorkload({ contexts: [64], batches_per_context: 3, batch_sizes: [2], prompt_pool_size: 2, reuse_start_batch: 1, reuse_ratio: 0.5, delay_ms: 0, generation_tokens: 4, seed: 1 });
    const at = (label: string, day: number, over: Partial<EndpointRunConfig>) => {
      const config = endpointConfig(label, { workloadDigest: workloadDigest(w), maxBatches: null, promptSalt: `${label}-${day}`, ...over });
      return es.insertRun({ ...outcome(label, [1, 2, 3, 4], config.workloadDigest, `2026-01-0${day}T00:00:00.000Z`), status: 'complete', config: { ...config, requestsDigest: requestsDigest(config, w) } });
    };
    at('a', 1, {});
    const short = at('a', 2, { maxBatches: 1 });
    at('b', 1, {});
    const bShort = at('b', 2, { maxBatches: 1 });
    expect(compareLabels(es, 'a', 'b')).toMatchObject({ runIdsA: [short], runIdsB: [bShort], warnings: [] });
  });

  it('what a run sent: batches, max_tokens, API, ignore_eos and sampling change the requests digest; salt and stream usage do not', () => {
    const w = generateWorkload({ contexts: [64], batches_per_context: 3, batch_sizes: [2], prompt_pool_size: 2, reuse_start_batch: 1, reuse_ratio: 0.5, delay_ms: 0, generation_tokens: 4, seed: 1 });
    const c = endpointConfig('a', { maxBatches: null });
    const d = requestsDigest(c, w);
    for (const over of [{ maxBatches: 2 }, { maxTokens: 8 }, { api: 'chat' as const }, { ignoreEos: false }, { temperature: 0.5 }, { topP: 0.9 }]) {
      expect(requestsDigest({ ...c, ...over }, w), JSON.stringify(over)).not.toBe(d);
    }
    expect(requestsDigest({ ...c, maxBatches: 3 }, w)).toBe(d); // every batch there is
    expect(requestsDigest({ ...c, maxTokens: 4 }, w)).toBe(d); // the workload's own generation_tokens
    expect(requestsDigest({ ...c, promptSalt: 'other', streamUsage: false, model: 'x' } as typeof c, w)).toBe(d);
  });

  it('a run stored before the requests digest existed reads back with one derived from its file digest and flags', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const old = es.insertRun({ ...outcome('a', [1, 2, 3, 4]), status: 'complete' });
    s.db.prepare("UPDATE endpoint_runs SET config_json = json_remove(config_json, '$.requestsDigest') WHERE id = ?").run(old);
    const r = es.requireRun(old);
    expect(r.config.requestsDigest).toBe(legacyRequestsDigest(r.config));
    expect(r.config.requestsDigest).toMatch(/^legacy-[0-9a-f]{64}$/);
    const fresh = es.insertRun({ ...outcome('b', [1, 2, 3, 4]), status: 'complete' });
    const c = compareLabels(es, 'a', 'b');
    expect(c).toMatchObject({ runIdsA: [old], runIdsB: [fresh] });
    expect(c.warnings.join('\n')).toMatch(new RegExp(`run\\(s\\) ${old} were stored before kvbench recorded what a run sent`));
  });

  it('the export\'s Comparison is compare\'s: A and B in the order given, the runs that sent A\'s newest requests', async () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const mk = (label: string, digest: string, day: number, status: 'complete' | 'partial' = 'complete') =>
      es.insertRun({ ...outcome(label, [1, 2, 3, 4], digest, `2026-01-0${day}T00:00:00.000Z`), status });
    const c2c = mk('c2c', 'new', 1); // c2c's run is the oldest of all
    const pcieOld = mk('pcie', 'old', 2);
    const pcie = mk('pcie', 'new', 3);
    const pciePartial = mk('pcie', 'new', 4, 'partial');
    const m = buildEndpointExportModel(es, { labels: ['pcie', 'c2c'] });
    expect(m.comparison).toMatchObject({ labelA: 'pcie', labelB: 'c2c', runIdsA: [pcie], runIdsB: [c2c] });
    expect(m.comparison).toEqual(compareLabels(es, 'pcie', 'c2c'));
    expect(buildEndpointExportModel(es, { labels: ['c2c', 'pcie'] }).comparison).toMatchObject({ labelA: 'c2c', runIdsB: [pcie] });
    // Run ids (the app's "Export these runs"): exactly those runs, A being the first id's label.
    expect(buildEndpointExportModel(es, { runIds: [pciePartial, pcieOld, c2c] }).comparison).toMatchObject({ labelA: 'pcie', runIdsA: [pciePartial, pcieOld], runIdsB: [c2c] });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await toXlsxBuffer(m)) as unknown as ArrayBuffer);
    const cmp = wb.getWorksheet('Comparison')!;
    expect(cmp.getRow(1).values).toEqual([undefined, 'comparison warnings', 'none']);
    expect(cmp.getRow(2).values).toEqual([undefined, 'comparison note', m.comparison!.notes[0]]);
    expect(cmp.getRow(5).values).toEqual(expect.arrayContaining(['pcie (A)', 'c2c (B)', 'min_a', 'cv_b', 'ratio_a_over_b', 'noise', 'better_value', 'better']));
    // compare's warnings go with its verdicts: above the table and in About.
    const mixed = buildEndpointExportModel(es, { runIds: [pciePartial, pcieOld, c2c] });
    expect(mixed.comparison!.warnings.length).toBeGreaterThanOrEqual(2);
    const wb2 = new ExcelJS.Workbook();
    await wb2.xlsx.load((await toXlsxBuffer(mixed)) as unknown as ArrayBuffer);
    const sheetRows = (name: string): unknown[][] => wb2.getWorksheet(name)!.getSheetValues().filter(Boolean).map((r) => (r as unknown[]).slice(1));
    const top = sheetRows('Comparison');
    expect(top.slice(0, mixed.comparison!.warnings.length)).toEqual(mixed.comparison!.warnings.map((w) => ['comparison warning', w]));
    const above = mixed.comparison!.warnings.length + mixed.comparison!.notes.length + 1; // and the method
    expect(top.findIndex((r) => r[0] === 'metric')).toBe(above);
    expect(wb2.getWorksheet('Comparison')!.views[0]).toMatchObject({ state: 'frozen', ySplit: above + 2 });
    expect(sheetRows('About').filter((r) => r[0] === 'comparison warning').map((r) => r[1])).toEqual(mixed.comparison!.warnings);
  });

  it('server counters that are not the run\'s share carry their flag into compare, CSV, XLSX, JSON and --output — runs stored before the flag too', async () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const o = { ...outcome('trt', [1, 2, 3, 4]), status: 'complete' as const };
    const note = 'trtllm-serve returned no iteration statistics before the run (none since the last read): block counters are totals since the server started';
    o.serverMetrics = {
      pages: [{ url: 'http://trt:8000/metrics', format: 'trtllm-iteration-json', engines: ['trtllm'], error: null, notes: [note] }],
      values: [
        { key: 'reused_blocks', source: 'trtllm-json:reusedBlocks', before: null, after: 1209, delta: 1209, reset: false, sinceServerStart: true },
        { key: 'missed_blocks', source: 'trtllm-json:missedBlocks', before: null, after: 403, delta: 403, reset: false, sinceServerStart: true },
      ],
      derived: { block_reuse_rate: 0.75 },
      rawCounterDeltas: {},
    };
    o.metrics = flattenEndpointMetrics(o.aggregates, o.serverMetrics);
    const id = es.insertRun(o);
    // As a run stored before the flag existed: the same JSON without it.
    const legacy = JSON.parse(JSON.stringify(o.serverMetrics)) as { values: Record<string, unknown>[] };
    for (const v of legacy.values) delete v.sinceServerStart;
    s.db.prepare('UPDATE endpoint_runs SET server_metrics_json = ? WHERE id = ?').run(JSON.stringify(legacy), id);
    const r = es.requireRun(id);
    expect(r.serverMetrics.values.map((v) => v.sinceServerStart)).toEqual([true, true]);
    const other = es.insertRun({ ...outcome('trt2', [1, 2, 3, 4]), status: 'complete' });

    const model = buildEndpointExportModel(es, { labels: ['trt', 'trt2'] });
    expect(model.comparison!.warnings).toEqual(expect.arrayContaining([`run ${id} (trt), http://trt:8000/metrics: ${note}`, expect.stringMatching(new RegExp(`^run ${id} \\(trt\\): values marked \\* may not be the run's own share.* — Reused KV blocks \\(Δ\\), Missed KV blocks \\(Δ\\): totals since the server started`))]));
    expect(model.comparison!.rows.find((x) => x.metric.key === 'server.reused_blocks')).toMatchObject({ flaggedA: [id], flaggedB: [] });
    expect(other).toBeGreaterThan(id);

    const csv = toCsv(model).slice(1).trimEnd().split('\r\n');
    const header = csv[0].split(',');
    const trtRow = csv.find((l) => l.startsWith(`${id},trt,`))!;
    expect(header).toEqual(expect.arrayContaining(['server_metric_caveats', 'server_metrics_notes']));
    expect(trtRow).toContain('server.reused_blocks: totals since the server started');
    expect(trtRow).toContain('server.block_reuse_rate: computed from Reused KV blocks and Missed KV blocks');
    expect(trtRow).toContain(`http://trt:8000/metrics: ${note}`);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await toXlsxBuffer(model)) as unknown as ArrayBuffer);
    const sm = wb.getWorksheet('Server metrics')!.getSheetValues().filter(Boolean).map((x) => (x as unknown[]).slice(1));
    const col = (name: string): number => sm[0].indexOf(name);
    const reused = sm.find((x) => x[0] === id && x[2] === 'reused_blocks')!;
    expect(reused[col('since_server_start')]).toBe(true);
    expect(reused[col('caveat')]).toMatch(/^totals since the server started/);
    expect(sm.find((x) => x[0] === id && x[2] === 'block_reuse_rate')![col('caveat')]).toMatch(/^computed from/);

    const json = JSON.parse(toJson(model)) as { runs: { id: number; serverMetricCaveats: Record<string, string> }[] };
    expect(Object.keys(json.runs.find((x) => x.id === id)!.serverMetricCaveats)).toEqual(['server.reused_blocks', 'server.missed_blocks', 'server.block_reuse_rate']);

    const entry = resultsEntry(r, es.requests(id)) as { log_metrics: { reused_blocks: number; caveats: Record<string, string>; server_metrics_notes: string[] } };
    expect(entry.log_metrics.reused_blocks).toBe(1209);
    expect(Object.keys(entry.log_metrics.caveats)).toEqual(['reused_blocks']);
    expect(entry.log_metrics.caveats.reused_blocks).toMatch(/^totals since the server started/);
    expect(entry.log_metrics.server_metrics_notes).toEqual([`http://trt:8000/metrics: ${note}`]);
  });

  it('CSV cells a spreadsheet would run as formulas stay text; numbers stay numbers', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const o = outcome('pcie', [40, 50, 5, 0]);
    o.config = { ...o.config, notes: '=HYPERLINK("http://x","click")' };
    o.statusReason = '@SUM(A1)';
    o.samples[3] = { ...o.samples[3], error: '-1+2 from the server', sentOffsetMs: -3 };
    const id = es.insertRun(o);
    const model = { runs: [es.requireRun(id)], requests: new Map([[id, es.requests(id)]]), comparison: null, filter: {} };
    const runs = toCsv(model);
    expect(runs).toContain(`"'=HYPERLINK(""http://x"",""click"")"`);
    expect(runs).toContain(",'@SUM(A1),");
    const reqs = toCsv(model, { requests: true });
    expect(reqs).toContain(",'-1+2 from the server,");
    expect(reqs).toContain(',-3,');
  });

  it('a stored label\'s bidirectional and control characters: escaped (\\u{202e}) in CSV and XLSX cells, JSON\'s \\u escapes in JSON', async () => {
    // s12 left alone: a label stored before labels were checked went into the cells raw, and a
    // spreadsheet applied the override ("abc\u202Efdp.exe" read "abcexe.pdf").
    const s = freshStore();
    const es = new EndpointStore(s);
    const LABEL = 'abc\u202Efdp.exe';
    const SHOWN = 'abc\\u{202e}fdp.exe';
    const ids = [es.insertRun({ ...outcome('a', [1, 2, 3, 4]), status: 'complete' }), es.insertRun({ ...outcome('plain', [2, 3, 4, 5]), status: 'complete' })];
    s.db.prepare('UPDATE endpoint_runs SET system_label = ?, status_reason = ? WHERE id = ?').run(LABEL, 'server said \u2066\u001b[31mno\u2069', ids[0]);
    const model = buildEndpointExportModel(es, { labels: [LABEL, 'plain'] });
    const BIDI = /[\u202a-\u202e\u2066-\u2069\u001b]/;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-ep-bidi-'));
    dirs.push(dir);
    const files = { csv: path.join(dir, 'runs.csv'), requests: path.join(dir, 'requests.csv'), xlsx: path.join(dir, 'runs.xlsx'), json: path.join(dir, 'runs.json') };
    await writeEndpointExport(model, 'csv', files.csv);
    await writeEndpointExport(model, 'csv', files.requests, { requests: true });
    await writeEndpointExport(model, 'xlsx', files.xlsx);
    await writeEndpointExport(model, 'json', files.json);
    for (const f of [files.csv, files.requests, files.json]) expect(fs.readFileSync(f, 'utf8')).not.toMatch(BIDI);

    const runsCsv = fs.readFileSync(files.csv, 'utf8').slice(1).trimEnd().split('\r\n');
    const row = runsCsv.find((l) => l.startsWith(`${ids[0]},`))!;
    expect(row.startsWith(`${ids[0]},${SHOWN},complete,server said \\u{2066}\\u{1b}[31mno\\u{2069},`)).toBe(true);
    expect(fs.readFileSync(files.requests, 'utf8')).toContain(`${ids[0]},${SHOWN},`);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(files.xlsx);
    const texts: string[] = [];
    wb.eachSheet((ws) => ws.eachRow((r) => r.eachCell((c) => texts.push(String(c.value)))));
    expect(texts.filter((t) => BIDI.test(t))).toEqual([]);
    const values = (name: string): unknown[][] => wb.getWorksheet(name)!.getSheetValues().filter(Boolean).map((x) => (x as unknown[]).slice(1));
    expect(values('Runs').find((r) => r[0] === ids[0])?.[1]).toBe(SHOWN);
    const cmp = values('Comparison');
    expect(cmp.find((r) => r[0] === 'metric')).toEqual(expect.arrayContaining([`${SHOWN} (A)`, 'plain (B)']));
    expect(cmp.some((r) => r.some((c) => typeof c === 'string' && c.includes(SHOWN)))).toBe(true);

    // JSON keeps the exact text: a reader reads back what was stored.
    const json = JSON.parse(fs.readFileSync(files.json, 'utf8')) as { runs: { systemLabel: string }[]; comparison: { labelA: string } };
    expect(json.runs.map((r) => r.systemLabel)).toContain(LABEL);
    expect(json.comparison.labelA).toBe(LABEL);
  });

  it('exports CSV (runs or requests), JSON and XLSX that read back', async () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const ids = [es.insertRun(outcome('pcie', [40, 50, 5, 0])), es.insertRun(outcome('c2c', [20, 25, 3, 0]))];
    const runs = ids.map((id) => es.requireRun(id));
    const model = { runs, requests: new Map(ids.map((id) => [id, es.requests(id)])), comparison: null, filter: {} };
    const csv = toCsv(model);
    expect(csv.startsWith('\uFEFFrun_id,')).toBe(true); // the BOM: Excel reads the file as UTF-8
    const lines = csv.slice(1).trimEnd().split('\r\n');
    expect(lines).toHaveLength(3);
    const header = lines[0].split(',');
    expect(header.slice(0, 3)).toEqual(['run_id', 'system_label', 'status']);
    expect(header).toContain('config.promptSalt');
    expect(header).toContain('ttft_p50_ms');
    expect(header).toContain('server.prefix_cache_hit_rate');
    expect(lines[1]).toContain('"n, with ""quotes"""');
    const reqCsv = toCsv(model, { requests: true }).slice(1).trimEnd().split('\r\n');
    expect(reqCsv).toHaveLength(9);
    expect(reqCsv[4]).toContain('timeout');
    const json = JSON.parse(toJson(model)) as { format: string; runs: { requests: unknown[] }[] };
    expect(json.format).toBe('kvbench-endpoint-export');
    expect(json.runs[1].requests).toHaveLength(4);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await toXlsxBuffer(model)) as unknown as ArrayBuffer);
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Runs', 'Requests', 'By context', 'Server metrics', 'About']);
    expect(wb.getWorksheet('Requests')!.rowCount).toBe(9);
    // The rates are over duration_s (the batches' own times); the wall clock is beside it, and About says so.
    const about = wb.getWorksheet('About')!.getSheetValues().filter(Boolean).map((x) => (x as unknown[]).slice(1));
    expect(about.find((r) => r[0] === 'throughput')?.[1]).toMatch(/^successful requests \(and their output tokens\) ÷ duration_s, the time the server had the batches/);
    const runsSheet = wb.getWorksheet('Runs')!.getSheetValues().filter(Boolean).map((x) => (x as unknown[]).slice(1));
    const spanCol = runsSheet[0].indexOf('span_s');
    expect(runsSheet[0][spanCol + 1]).toBe('client_host');
    expect(runsSheet[1][spanCol]).toBe(runs[0].aggregates.spanS);
    expect(header[header.indexOf('span_s') - 1]).toBe('wall_ms');
    // A run stored before 0.5.0 has no spanS: its duration_s was the span.
    const old = { ...runs[0], aggregates: { ...runs[0].aggregates, durationS: 7.5, spanS: undefined } };
    expect(runRow(old)[runColumns().indexOf('span_s')]).toBe(7.5);
  });

  it('never gives a deleted run’s id again, also after the database is closed and reopened', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const first = es.insertRun(outcome('pcie', [40, 50, 5, 0]));
    const newest = es.insertRun(outcome('pcie', [41, 50, 5, 0]));
    es.deleteRun(newest);
    const next = es.insertRun(outcome('pcie', [42, 50, 5, 0]));
    expect(next).toBeGreaterThan(newest);
    es.deleteRun(next);
    const file = s.path;
    s.close();
    const reopened = openStore(file);
    stores.push(reopened);
    const after = new EndpointStore(reopened).insertRun(outcome('pcie', [43, 50, 5, 0]));
    expect(after).toBeGreaterThan(next);
    expect(first).toBeLessThan(newest);
  });
});

describe('the results file (endpoint run --output)', () => {
  /**
   * A child `node` that checks `target` (as before a run), prints a line, then adds a stored run to
   * it: what `endpoint run --output target` does. A watchdog kills it if it hangs (it waited
   * on a read of a pipe or FIFO), so the test fails rather than the child staying behind.
   */
  function writerScript(): { script: string; dir: string } {
    const s = freshStore();
    const es = new EndpointStore(s);
    const id = es.insertRun(outcome('pcie', [40, 50, 5, 0]));
    const dir = dirs.at(-1)!;
    const run = path.join(dir, 'run.json');
    fs.writeFileSync(run, JSON.stringify({ record: es.requireRun(id), samples: es.requests(id) }));
    const module = new URL('../../../src-main/endpoint/results-file.ts', import.meta.url).href;
    const script = path.join(dir, 'write.mjs');
    fs.writeFileSync(
      script,
      `setTimeout(() => process.kill(process.pid, 'SIGKILL'), 20000).unref();\n` +
        `const { appendResultsFile, checkResultsFileTarget } = await import(${JSON.stringify(module)});\n` +
        `const { record, samples } = JSON.parse(await (await import('node:fs/promises')).readFile(${JSON.stringify(run)}, 'utf8'));\n` +
        `const target = process.argv[2];\nawait checkResultsFileTarget(target);\nprocess.stdout.write('summary\\n');\nawait appendResultsFile(target, record, samples);\n`,
    );
    return { script, dir };
  }
  const runsOf = (json: string): Record<string, unknown[]> => (JSON.parse(json) as { runs: Record<string, unknown[]> }).runs;

  it('writes into /dev/stdout when it is a pipe, after what was printed, never reading it', () => {
    const { script } = writerScript();
    const out = execFileSync('sh', ['-c', '"$0" "$1" /dev/stdout | cat', process.execPath, script], { encoding: 'utf8' });
    expect(out.startsWith('summary\n')).toBe(true);
    expect(Object.keys(runsOf(out.slice('summary\n'.length)))).toEqual(['pcie']);
  });

  it('writes into a FIFO without reading or replacing it', () => {
    const { script, dir } = writerScript();
    const fifo = path.join(dir, 'results.fifo');
    execFileSync('mkfifo', [fifo]);
    // `cat` reads the FIFO; if the writer fails, cat is ended so that nothing stays waiting.
    const out = execFileSync('sh', ['-c', 'cat "$2" & "$0" "$1" "$2" >/dev/null; rc=$?; [ $rc = 0 ] || kill $!; wait; exit $rc', process.execPath, script, fifo], { encoding: 'utf8' });
    expect(runsOf(out).pcie).toHaveLength(1);
    expect(fs.statSync(fifo).isFIFO()).toBe(true);
  });

  it('still adds to a results file that is there, and refuses a file of another kind', async () => {
    const { script, dir } = writerScript();
    const file = path.join(dir, 'results.json');
    execFileSync(process.execPath, [script, file]);
    execFileSync(process.execPath, [script, file]);
    expect(runsOf(fs.readFileSync(file, 'utf8')).pcie).toHaveLength(2);
    const other = path.join(dir, 'other.json');
    fs.writeFileSync(other, '{"x":1}');
    await expect(checkResultsFileTarget(other)).rejects.toThrow(/is not a kvbench endpoint results file: not overwritten/);
    await expect(checkResultsFileTarget(path.join(dir, 'gone', 'r.json'))).rejects.toThrow(/its folder .*gone does not exist/);
  });
});
