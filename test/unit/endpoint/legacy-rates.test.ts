// Endpoint runs stored before kvbench 0.5.0 took duration_s and their rates over the span, first send
// to last finish with kvbench's own pauses between batches. The store recomputes them on read from
// the stored requests as today's kvbench takes them (in memory, the row untouched), or keeps them,
// marked with why, where the requests cannot reproduce the run; compare counts the recomputed values
// as today's definition; list, show, compare and the exports mark and explain them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { aggregateRun } from '../../../src-main/endpoint/aggregate.ts';
import { compareLabels } from '../../../src-main/endpoint/endpoint-compare.ts';
import { buildEndpointExportModel, runColumns, toCsv, toJson, toXlsxBuffer } from '../../../src-main/endpoint/endpoint-export.ts';
import { EndpointStore } from '../../../src-main/endpoint/endpoint-store.ts';
import { formatComparison, formatRun, formatRunList } from '../../../src-main/endpoint/render.ts';
import type { EndpointRunOutcome } from '../../../src-main/endpoint/runner.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { EndpointRunRowSchema } from '../../../src-shared/ipc/contract.ts';
import { compareVerdict, flattenEndpointMetrics, type EndpointRequestSample, type RequestStatus } from '../../../src-shared/domain/endpoint.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { closeOpenedStores, open } from '../../support/store.ts';
import { endpointConfig } from './fixtures.ts';
import { rollBackTo040 } from './roll-back-040.ts';

const dirs: string[] = [];
afterEach(() => {
  closeOpenedStores();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function freshStore(): Store {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-ep-legacy-'));
  dirs.push(d);
  return open(path.join(d, 'kvbench.db'));
}

/**
 * Three batches a second apart (kvbench's delay_ms pauses between them), the last with a request
 * cancelled by Ctrl-C that ran on after its batch's others: the span holds the pauses and the
 * cancelled request, the batches' own times neither. `slow` stretches every request.
 */
function outcome(label: string, slow = 1, startedAt = '2026-01-01T00:00:00.000Z'): EndpointRunOutcome {
  const req = (seq: number, batchIndex: number, sentOffsetMs: number, e2eMs: number, status: RequestStatus = 'ok'): EndpointRequestSample => ({
    seq,
    requestId: `b${batchIndex}_r${seq}`,
    batchIndex,
    promptId: `p${seq % 3}`,
    reused: seq >= 3,
    contextTokens: 1000 * (batchIndex + 1),
    promptChars: 3000,
    maxTokens: 8,
    status,
    httpStatus: status === 'ok' ? 200 : null,
    error: status === 'ok' ? null : 'interrupted by the user',
    sentOffsetMs,
    ttftMs: status === 'ok' ? 10 * slow : null,
    e2eMs,
    tpotMs: status === 'ok' ? 2 : null,
    outputTokens: status === 'ok' ? 8 : null,
    outputChunks: status === 'ok' ? 8 : 3,
    tokenCountSource: status === 'ok' ? 'usage' : null,
    promptTokens: status === 'ok' ? 1000 : null,
    cachedPromptTokens: status === 'ok' ? 0 : null,
    finishReason: status === 'ok' ? 'length' : null,
  });
  const samples = [
    req(0, 0, 0, 50 * slow),
    req(1, 0, 0.25, 61.5 * slow),
    req(2, 1, 1000.125, 40 * slow),
    req(3, 1, 1000.5, 45.75 * slow),
    req(4, 2, 2000.375, 30 * slow),
    req(5, 2, 2000.5, 500, 'cancelled'),
  ];
  const aggregates = aggregateRun(samples, new LatencyHistogram());
  const serverMetrics = { pages: [], values: [], derived: {}, rawCounterDeltas: {} };
  return {
    systemLabel: label,
    status: 'partial',
    statusReason: 'interrupted by the user',
    config: endpointConfig(label, { promptSalt: `salt-${label}-${startedAt}` }),
    startedAt,
    finishedAt: startedAt,
    wallMs: 2600,
    aggregates,
    serverMetrics,
    metrics: flattenEndpointMetrics(aggregates, serverMetrics),
    samples,
    kvbenchVersion: KVBENCH_VERSION,
    clientHost: 'client',
  };
}

/** What the database holds of a run: the row and its flat metrics, as stored. */
const rowOf = (s: Store, id: number): unknown => [
  s.db.prepare('SELECT * FROM endpoint_runs WHERE id = ?').get(id),
  s.db.prepare('SELECT key, value FROM endpoint_run_metrics WHERE run_id = ? ORDER BY key').all(id),
];

describe('endpoint runs stored before kvbench 0.5.0', () => {
  it('read back with the duration and rates today\'s kvbench stores for the same requests, recomputed from the stored requests, the stored values beside them, the row unchanged', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const o = outcome('old');
    const id = es.insertRun(o);
    const today = es.requireRun(id);
    const stored = rollBackTo040(s, id, o.samples);
    // The fixture is what it says: the pauses and the cancelled request made the span far longer.
    expect(stored.duration_s).toBe(2.5005);
    expect(today.aggregates.durationS).toBeCloseTo(0.137875, 12);
    const before = rowOf(s, id);

    const r = es.requireRun(id);
    expect(r.kvbenchVersion).toBe('0.4.0');
    expect(r.aggregates).toEqual(today.aggregates);
    expect(r.metrics).toEqual(today.metrics);
    expect(r.legacyRates).toEqual({ storedBy: '0.4.0', stored, recomputedBy: KVBENCH_VERSION, notRecomputed: null });
    expect(es.listRuns()).toEqual([r]);
    expect(rowOf(s, id)).toEqual(before);
    // Through the app's contract as listed.
    const { aggregates: _a, serverMetrics, ...listed } = r;
    expect(EndpointRunRowSchema.parse({ ...listed, metricCaveats: {} }).legacyRates).toEqual(r.legacyRates);
  });

  it('where the stored requests cannot reproduce the run (some lost, counts or span not matching), keep the stored values, marked with why', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const breaks: [string, (id: number) => void, RegExp][] = [
      ['lost', (id) => s.db.prepare('DELETE FROM endpoint_requests WHERE run_id = ? AND seq = 2').run(id), /^only 5 of its 6 requests are stored \(the others lost, e\.g\. in a recovery\)/],
      ['counts', (id) => s.db.prepare("UPDATE endpoint_requests SET status = 'timeout' WHERE run_id = ? AND seq = 0").run(id), /^its stored requests do not add up to its stored counts \(4 successful with 32 output tokens in the requests, 5 with 40 stored\)$/],
      ['span', (id) => s.db.prepare('UPDATE endpoint_requests SET e2e_ms = 900 WHERE run_id = ? AND seq = 5').run(id), /^its stored requests span 2\.901 s, not the 2\.501 s it stored$/],
    ];
    for (const [label, breakIt, why] of breaks) {
      const o = outcome(label);
      const id = es.insertRun(o);
      const stored = rollBackTo040(s, id, o.samples);
      breakIt(id);
      const r = es.requireRun(id);
      expect(r.legacyRates, label).toEqual({ storedBy: '0.4.0', stored, recomputedBy: null, notRecomputed: expect.stringMatching(why) });
      expect(r.aggregates.spanS, label).toBeUndefined();
      expect(r.aggregates.durationS, label).toBe(stored.duration_s);
      expect({ duration_s: r.metrics.duration_s, requests_per_s: r.metrics.requests_per_s, output_tokens_per_s: r.metrics.output_tokens_per_s, context_tokens_per_s: r.metrics.context_tokens_per_s }).toEqual(stored);
    }
  });

  it('compare counts recomputed values as today\'s definition: no straddle warning, the values marked and what was stored said; a run kept span-based still straddles, named with why', () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const old = [outcome('old', 1, '2026-01-01T00:00:00.000Z'), outcome('old', 1.25, '2026-01-02T00:00:00.000Z')];
    const oldIds = old.map((o) => es.insertRun(o));
    const stored = old.map((o, i) => rollBackTo040(s, oldIds[i], o.samples));
    const newIds = [outcome('new', 2, '2026-01-03T00:00:00.000Z'), outcome('new', 2.5, '2026-01-04T00:00:00.000Z')].map((o) => es.insertRun(o));

    const c = compareLabels(es, 'old', 'new', { includePartial: true });
    expect(c.warnings.filter((w) => /both sides of kvbench/.test(w))).toEqual([]);
    expect(c.notes).toEqual(
      [...oldIds].reverse().map((id, i) =>
        expect.stringMatching(new RegExp(`^run ${id} \\(old\\), values marked †: stored by kvbench 0\\.4\\.0, which took duration and rates over the span \\(pauses included\\): 2\\.50 s, ${stored[1 - i].requests_per_s.toFixed(2)} req/s, .*; recomputed from the stored requests`)),
      ),
    );
    const row = (k: string) => c.rows.find((x) => x.metric.key === k)!;
    expect(row('requests_per_s')).toMatchObject({ recomputedA: [...oldIds].reverse(), recomputedB: [], spanBasedA: [], spanBasedB: [] });
    expect(row('ttft_p50_ms')).toMatchObject({ recomputedA: [], spanBasedA: [] });
    // Like for like: the old runs, twice as fast, have the better requests/s (on their span-based values, 2 req/s, they were the slower).
    expect(row('requests_per_s')).toMatchObject({ leader: 'a' });
    expect(row('requests_per_s').ratio).toBeCloseTo(2, 1);

    // One old run whose requests were partly lost: its values stay span-based, and straddle.
    s.db.prepare('DELETE FROM endpoint_requests WHERE run_id = ? AND seq = 0').run(oldIds[0]);
    const mixed = compareLabels(es, 'old', 'new', { includePartial: true });
    expect(mixed.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^the runs were measured on both sides of kvbench 0\\.5\\.0 \\(kvbench 0\\.4\\.0, ${KVBENCH_VERSION.replaceAll('.', '\\.')}\\), which changed duration_s, requests_per_s, output_tokens_per_s, context_tokens_per_s: `)),
        expect.stringMatching(new RegExp(`^run ${oldIds[0]} \\(old\\), values marked ‡: stored by kvbench 0\\.4\\.0 over the span \\(pauses included\\): .*kept as stored — not recomputed: only 5 of its 6 requests are stored`)),
      ]),
    );
    expect(mixed.rows.find((x) => x.metric.key === 'requests_per_s')).toMatchObject({ recomputedA: [oldIds[1]], spanBasedA: [oldIds[0]] });
    // Two runs of 0.4.0, one recomputed and one not, straddle too (by the definition each value follows).
    const within = compareLabels(es, 'old', 'old', { runIdsA: [oldIds[0]], runIdsB: [oldIds[1]] });
    expect(within.warnings.some((w) => w.startsWith('the runs were measured on both sides of kvbench 0.5.0'))).toBe(true);
    expect(newIds).toHaveLength(2);
  });

  it('compare names no better side, nor a better value, where span-based values (‡) stand beside today\'s: "no verdict ‡", and why', () => {
    // s12 left alone: a run kept ‡ still had a "better side", only warned about.
    const s = freshStore();
    const es = new EndpointStore(s);
    const keptRuns = [outcome('kept', 1, '2026-01-01T00:00:00.000Z'), outcome('kept', 1.02, '2026-01-02T00:00:00.000Z')];
    const keptIds = keptRuns.map((o) => es.insertRun(o));
    keptRuns.forEach((o, i) => rollBackTo040(s, keptIds[i], o.samples));
    for (const id of keptIds) s.db.prepare('DELETE FROM endpoint_requests WHERE run_id = ? AND seq = 0').run(id);
    const newIds = [outcome('new', 2, '2026-01-03T00:00:00.000Z'), outcome('new', 2.04, '2026-01-04T00:00:00.000Z')].map((o) => es.insertRun(o));

    const c = compareLabels(es, 'kept', 'new', { includePartial: true });
    const row = (k: string) => c.rows.find((x) => x.metric.key === k)!;
    // Span-based requests/s (2 req/s over the pauses) beside today's (12 req/s and more): no side named.
    for (const k of ['requests_per_s', 'output_tokens_per_s', 'context_tokens_per_s', 'duration_s']) {
      expect(row(k)).toMatchObject({ spanBasedA: [...keptIds].reverse(), leader: null, better: null });
      expect(compareVerdict(row(k), 'kept', 'new')).toBe('no verdict ‡');
    }
    // Metrics no kvbench before 0.5.0 took over the span still get their verdict: the kept runs were twice as fast.
    expect(row('ttft_p50_ms')).toMatchObject({ spanBasedA: [], leader: 'a', better: 'a' });
    expect(c.warnings).toContain(
      `no verdict on Requests/s, Output tokens/s, Context tokens/s, Duration: the values of run(s) ${keptIds.join(', ')} (marked ‡) are taken over the span, pauses included, ` +
        "as a kvbench before 0.5.0 stored them, the others' over the batches' own times — they do not measure the same thing, so no side is named better on them",
    );
    const text = formatComparison(c);
    expect(text).toMatch(/Requests\/s +req\/s +[\d.]+ \(n=2\) ‡ +[\d.]+ \(n=2\) +[\d.]+x +no verdict ‡ /);
    expect(text).toContain("  no verdict ‡: no side is named better where some values are ‡ (over the span, pauses included, as a kvbench before 0.5.0 stored them) and others are taken over the batches' own times");
    expect(text).toContain(`  ! no verdict on Requests/s`);

    // Every value span-based: one definition, compared as such.
    const both = compareLabels(es, 'kept', 'kept', { runIdsA: [keptIds[0]], runIdsB: [keptIds[1]] });
    const bothRps = both.rows.find((x) => x.metric.key === 'requests_per_s')!;
    expect(bothRps).toMatchObject({ spanBasedA: [keptIds[0]], spanBasedB: [keptIds[1]] });
    expect(compareVerdict(bothRps, 'A', 'B')).not.toBe('no verdict ‡');
    expect(both.warnings.some((w) => w.startsWith('no verdict'))).toBe(false);
    expect(formatComparison(both)).not.toContain('no verdict');
    expect(newIds).toHaveLength(2);
  });

  it('list, show, compare and the CSV, XLSX and JSON exports mark the recomputed values and say what was stored; kept ones are marked with why', async () => {
    const s = freshStore();
    const es = new EndpointStore(s);
    const a = outcome('old');
    const idA = es.insertRun(a);
    const storedA = rollBackTo040(s, idA, a.samples);
    const b = outcome('kept', 1, '2026-01-02T00:00:00.000Z');
    const idB = es.insertRun(b);
    const storedB = rollBackTo040(s, idB, b.samples);
    s.db.prepare('DELETE FROM endpoint_requests WHERE run_id = ? AND seq = 0').run(idB);
    const idC = es.insertRun(outcome('new', 1, '2026-01-03T00:00:00.000Z'));
    const [ra, rb] = [es.requireRun(idA), es.requireRun(idB)];
    const req = (x: number): string => x.toFixed(2);

    const list = formatRunList(es.listRuns());
    const line = (id: number): string => list.split('\n').find((l) => new RegExp(`^ *${id} `).test(l))!;
    expect(line(idA)).toContain(`${req(ra.metrics.requests_per_s)} †`);
    expect(line(idB)).toContain(`${req(storedB.requests_per_s)} ‡`);
    expect(line(idC)).not.toMatch(/[†‡]/);
    expect(list).toContain(`† run ${idA}: stored by kvbench 0.4.0, which took duration and rates over the span (pauses included): 2.50 s, ${req(storedA.requests_per_s)} req/s, `);
    expect(list).toContain(`‡ run ${idB}: stored by kvbench 0.4.0 over the span (pauses included): 2.50 s, ${req(storedB.requests_per_s)} req/s, `);
    expect(list).toMatch(/kept as stored — not recomputed: only 5 of its 6 requests are stored .*; not comparable with the rates of kvbench 0\.5\.0 and later/);

    const show = formatRun(ra);
    expect(show).toContain(`busy 0.14 s † (the batches' own times; wall clock 2.03 s with the pauses) · ${req(ra.metrics.requests_per_s)} † req/s`);
    expect(show).toContain(`  † stored by kvbench 0.4.0, which took duration and rates over the span (pauses included): 2.50 s, ${req(storedA.requests_per_s)} req/s`);
    expect(formatRun(rb)).toContain(`duration 2.50 s ‡ (first send → last finish, pauses included) · ${req(storedB.requests_per_s)} ‡ req/s`);

    const cmp = formatComparison(compareLabels(es, 'old', 'new', { includePartial: true }));
    expect(cmp).toMatch(/Requests\/s +req\/s +[\d.]+ † /);
    expect(cmp).toContain(`note: run ${idA} (old), values marked †: stored by kvbench 0.4.0`);
    expect(cmp).toContain('†: recomputed from the stored requests of a run stored before kvbench 0.5.0');
    expect(cmp).not.toContain('both sides of kvbench');
    const kept = formatComparison(compareLabels(es, 'kept', 'new', { includePartial: true }));
    expect(kept).toMatch(/Requests\/s +req\/s +[\d.]+ ‡ /);
    expect(kept).toContain('‡: kept as a kvbench before 0.5.0 stored it');

    const model = buildEndpointExportModel(es, { runIds: [idA, idB] });
    const cols = runColumns();
    const csv = toCsv(model).slice(1).trimEnd().split('\r\n');
    expect(csv[0].split(',')).toEqual(cols);
    const at = (id: number, col: string): string => {
      const cells = csv.find((l) => l.startsWith(`${id},`))!.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((c) => c.replace(/,$/, ''));
      return cells[cols.indexOf(col)];
    };
    expect(at(idA, 'rates_source')).toBe('recomputed');
    expect(at(idA, 'rates_note')).toMatch(/^"?stored by kvbench 0\.4\.0, which took duration and rates over the span/);
    expect(Number(at(idA, 'span_based_requests_per_s'))).toBe(storedA.requests_per_s);
    expect(Number(at(idA, 'requests_per_s'))).toBe(ra.metrics.requests_per_s);
    expect(Number(at(idA, 'span_s'))).toBe(ra.aggregates.spanS);
    expect(at(idB, 'rates_source')).toBe('span_based');
    expect(Number(at(idB, 'requests_per_s'))).toBe(storedB.requests_per_s);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await toXlsxBuffer(model)) as unknown as ArrayBuffer);
    const sheet = (name: string): unknown[][] => wb.getWorksheet(name)!.getSheetValues().filter(Boolean).map((r) => (r as unknown[]).slice(1));
    const runs = sheet('Runs');
    expect(runs.find((r) => r[0] === idA)![runs[0].indexOf('span_based_duration_s')]).toBe(storedA.duration_s);
    expect(runs.find((r) => r[0] === idB)![runs[0].indexOf('rates_source')]).toBe('span_based');
    const cmpSheet = sheet('Comparison');
    const head = cmpSheet.findIndex((r) => r[0] === 'metric');
    const rps = cmpSheet.find((r) => r[0] === 'requests_per_s')!;
    expect(rps[cmpSheet[head].indexOf('recomputed_runs_a')]).toBe(String(idA));
    expect(rps[cmpSheet[head].indexOf('span_based_runs_b')]).toBe(String(idB));
    expect(sheet('About').find((r) => r[0] === 'rates_source (Runs)')?.[1]).toMatch(/^measured: by kvbench 0\.5\.0 or later; recomputed: /);

    const json = JSON.parse(toJson(model)) as { runs: { id: number; legacyRates?: unknown }[] };
    expect(json.runs.find((r) => r.id === idA)!.legacyRates).toEqual(ra.legacyRates);
    expect(json.runs.find((r) => r.id === idB)!.legacyRates).toEqual(rb.legacyRates);
  });
});
