// Trials measured on both sides of a listed change of a metric's definition (metric-changes.ts) are
// never one median (review rev13-upgrade #3): each report output aggregates the two apart, marks the
// older row "(definition before …)" and says how many trials each side. The trials are imports of
// results files whose kvbench.version is edited, as a lab's old runs would be.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport, SystemComparison, TierComparison } from '../../../src-main/export/report-model.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { parseCsv } from '../../support/csv.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => removeTempDirs());

/** A storage-only run measured by kvbench `version`, whose storage write P95 per MiB is `perMibMs`. */
function resultsOf(version: string, perMibMs: number, tokPerS: number): unknown {
  const r = kvbenchResults({ tokPerS });
  r.kvbench.version = version;
  r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 6, cpuMemGb: 0.125, gpuMemGb: 0, generationMode: 'fast', seed: 1 };
  r.kvbench.latency.tier_write_ns_per_mib.storage!.p95_ns = perMibMs * 1e6;
  return r;
}

/** A database holding imports of these runs (version, write P95 per MiB), all of one system, scenario and configuration. */
async function dbOf(runs: readonly (readonly [string, number])[], system = 'lab', into?: { dir: string; db: string }): Promise<{ dir: string; db: string }> {
  const dir = into?.dir ?? tempDir();
  const db = into?.db ?? path.join(dir, 'k.db');
  const files = runs.map(([version, perMib], i) => writeResults(dir, `${system}-run${i}.json`, resultsOf(version, perMib, 100 + i)));
  const imported = await run(() => importCommand([...files, '--system', system, '--scenario', 'storage-only', '--db', db]));
  expect(imported.code, imported.stderr).toBe(0);
  return { dir, db };
}

async function reportJson(db: string): Promise<{ scenarios: ScenarioReport; tiers: TierComparison }> {
  const r = await run(() => reportCommand(['--db', db, '--json']));
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { scenarios: ScenarioReport; tiers: TierComparison };
}

describe('a metric measured on both sides of a change of its definition', () => {
  it('is aggregated apart, the older row marked, with how many trials each side: text, --json and the report CSV', async () => {
    // 0.7.0 for the newer side: both sides are before 0.8.0's change of the request latencies, so
    // the per-MiB change is the only one they straddle.
    const { dir, db } = await dbOf([
      ['0.6.0', 14.41],
      ['0.6.0', 14.25],
      ['0.7.0', 7.46],
      ['0.7.0', 10.11],
    ]);
    const { scenarios: report } = await reportJson(db);
    expect(report.scenarios).toHaveLength(1);
    const [group] = report.scenarios;
    expect(group.trialIds).toHaveLength(4);
    const rows = group.metrics.filter((m) => m.metric.key === 'storage_write_p95_ms_per_mib');
    // Never one median of the four: the current definition's two, then the older two.
    expect(rows.map((m) => [m.olderDefinition?.since ?? null, m.aggregate.n])).toEqual([
      [null, 2],
      ['0.7.0', 2],
    ]);
    expect(rows[0].aggregate.median).toBeCloseTo((7.46 + 10.11) / 2, 6);
    expect(rows[1].aggregate.median).toBeCloseTo((14.41 + 14.25) / 2, 6);
    expect(group.definitionSplits.filter((d) => d.metric === 'storage_write_p95_ms_per_mib')).toEqual([
      expect.objectContaining({ since: '0.7.0', trialsBefore: 2, trialsSince: 2 }),
    ]);
    // Metrics whose definition did not change stay one aggregate of the four.
    expect(group.metrics.filter((m) => m.metric.key === 'wall_clock_throughput_tok_per_s').map((m) => m.aggregate.n)).toEqual([4]);

    const text = await run(() => reportCommand(['--db', db, '--all-metrics']));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {3}Storage write P95 per MiB \(ms\/MiB\) +2 /m);
    expect(text.stdout).toMatch(/^ {3}Storage write P95 per MiB \(definition before 0\.7\.0\) \(ms\/MiB\) +2 /m);
    expect(text.stdout).toContain(
      'note: Storage write P95 per MiB (storage_write_p95_ms_per_mib) changed definition in kvbench 0.7.0 (from then on it is over entries of at least one I/O chunk',
    );
    expect(text.stdout).toMatch(/2 of these 4 trials were measured before it, 2 from it on, so the two are aggregated apart, never in one median/);
    // The headline table shows no per-MiB row, and no note about it (its end-to-end rows carry 0.8.0's mark).
    const headline = await run(() => reportCommand(['--db', db]));
    expect(headline.stdout).not.toMatch(/per MiB/);

    const csvFile = path.join(dir, 'report.csv');
    const exported = await run(() => exportCommand(['--db', db, '--content', 'report', '--out', csvFile]));
    expect(exported.code, exported.stderr).toBe(0);
    const [header, ...body] = parseCsv(fs.readFileSync(csvFile, 'utf8'));
    const col = (name: string): number => header.indexOf(name);
    const perMib = body.filter((r) => r[col('metric')] === 'storage_write_p95_ms_per_mib');
    expect(perMib.map((r) => [r[col('metric_label')], r[col('n')], r[col('definition_before')]])).toEqual([
      ['Storage write P95 per MiB', '2', ''],
      ['Storage write P95 per MiB (definition before 0.7.0)', '2', '0.7.0'],
    ]);
  });

  it("splits the request latencies at 0.8.0, which times them from the scheduled arrival, and says so in the report's words", async () => {
    const { db } = await dbOf([
      ['0.7.0', 7],
      ['0.7.0', 7],
      [KVBENCH_VERSION, 7],
      [KVBENCH_VERSION, 7],
    ]);
    const { scenarios: report } = await reportJson(db);
    const [group] = report.scenarios;
    for (const key of ['e2e_p50_ms', 'e2e_p95_ms', 'e2e_p99_ms', 'queue_wait_p95_ms']) {
      expect(group.metrics.filter((m) => m.metric.key === key).map((m) => [m.olderDefinition?.since ?? null, m.aggregate.n]), key).toEqual([
        [null, 2],
        ['0.8.0', 2],
      ]);
    }
    // The per-MiB change (0.7.0) is not straddled by these trials.
    expect(group.definitionSplits.map((d) => [d.metric, d.since, d.trialsBefore, d.trialsSince])).toEqual(
      expect.arrayContaining([
        ['e2e_p95_ms', '0.8.0', 2, 2],
        ['queue_wait_p95_ms', '0.8.0', 2, 2],
      ]),
    );
    expect(group.definitionSplits.some((d) => d.since === '0.7.0')).toBe(false);
    const headline = await run(() => reportCommand(['--db', db]));
    expect(headline.code, headline.stderr).toBe(0);
    expect(headline.stdout).toMatch(/^ {3}End-to-end P95 \(definition before 0\.8\.0\) \(ms\) +2 /m);
    expect(headline.stdout).toContain(
      "note: End-to-end P95 (e2e_p95_ms) changed definition in kvbench 0.8.0 (from then on it is timed from the request's scheduled arrival and ends when the request completes, " +
        "so the time the scheduler held the arrival back (the open loop's backlog cap, a late event loop; kvbench.latency.issue_lateness shows how much) is in it; " +
        "an unpaced replay's still from its issue (before 0.8.0 it was timed from when the scheduler issued the request, that time left out)): " +
        '2 of these 4 trials were measured before it, 2 from it on, so the two are aggregated apart, never in one median',
    );
    const all = await run(() => reportCommand(['--db', db, '--all-metrics']));
    expect(all.stdout).toContain('note: Queue wait P95 (queue_wait_p95_ms) changed definition in kvbench 0.8.0 (from then on it is timed from the request\'s scheduled arrival and ends when a worker takes the request');
  });

  it('pools the end-to-end latency per definition (rev18 M2): text, --json, the XLSX and its notes', async () => {
    const { dir, db } = await dbOf([
      ['0.7.0', 7],
      ['0.7.0', 7],
      [KVBENCH_VERSION, 7],
    ]);
    const { scenarios: report } = await reportJson(db);
    const [group] = report.scenarios;
    // Never one merge of both: the current definition's histogram, then the older two trials' apart.
    expect(group.pooled.filter((p) => p.name === 'end_to_end').map((p) => [p.olderDefinition?.since ?? null, p.trials])).toEqual([
      [null, 1],
      ['0.8.0', 2],
    ]);
    // A latency whose definition did not change stays one pool of the three.
    expect(group.pooled.filter((p) => p.name === 'tier_read.storage').map((p) => [p.olderDefinition, p.trials])).toEqual([[null, 3]]);
    const text = await run(() => reportCommand(['--db', db]));
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {5}end_to_end +1 /m);
    expect(text.stdout).toMatch(/^ {5}end_to_end \(definition before 0\.8\.0\) +2 /m);
    expect(text.stdout).toContain('note: end_to_end (definition before 0.8.0): 2 trials were measured before kvbench 0.8.0 changed its definition');
    expect(text.stdout).toContain('so their histograms are pooled apart, never merged with later ones');

    const xlsx = path.join(dir, 'x.xlsx');
    const exported = await run(() => exportCommand(['--db', db, '--out', xlsx]));
    expect(exported.code, exported.stderr).toBe(0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(xlsx);
    const sheet = wb.getWorksheet('Pooled latency')!;
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    const rows: unknown[][] = [];
    sheet.eachRow((row, n) => n > 1 && rows.push((row.values as unknown[]).slice(1)));
    const cell = (r: unknown[], name: string): unknown => r[header.indexOf(name)] ?? null;
    expect(rows.filter((r) => cell(r, 'latency') === 'end_to_end').map((r) => [cell(r, 'trials'), cell(r, 'definition_before')])).toEqual([
      [1, null],
      [2, '0.8.0'],
    ]);
    const notes: unknown[] = [];
    wb.getWorksheet('Notes')!.eachRow((row) => notes.push(row.getCell(1).value === 'pooled latency' ? row.getCell(row.cellCount).value : null));
    expect(notes.filter((n) => n !== null)).toEqual([expect.stringContaining('end_to_end (definition before 0.8.0): 2 trials were measured before kvbench 0.8.0')]);
  });

  it("history marks the e2e P95 measured before 0.8.0, with a legend, and no other (rev18 L6)", async () => {
    const { db } = await dbOf([
      ['0.7.0', 7],
      [KVBENCH_VERSION, 7],
    ]);
    const h = await run(() => historyCommand(['--db', db]));
    expect(h.code, h.stderr).toBe(0);
    const rowOf = (id: number): string => h.stdout.split('\n').find((l) => l.trimStart().startsWith(`${id} `))!;
    expect(rowOf(1)).toMatch(/ 1,500\.0\*$/);
    expect(rowOf(2)).not.toContain('*');
    expect(h.stdout).toContain('*: e2e P95 measured under its definition before 0.8.0 (docs/metrics.md): not comparable with values measured by kvbench 0.8.0 or later');
    // A listing of the current definition only: no mark, no legend.
    const current = await dbOf([[KVBENCH_VERSION, 7]]);
    const now = await run(() => historyCommand(['--db', current.db]));
    expect(now.stdout).toMatch(/ 1,500\.0$/m);
    expect(now.stdout).not.toContain('*');
  });

  it('marks a group measured only before the change, and says so', async () => {
    const { db } = await dbOf([
      ['0.6.0', 14.41],
      ['0.6.0', 14.25],
    ]);
    const { scenarios: report } = await reportJson(db);
    const rows = report.scenarios[0].metrics.filter((m) => m.metric.key === 'storage_write_p95_ms_per_mib');
    expect(rows.map((m) => [m.olderDefinition?.since ?? null, m.aggregate.n])).toEqual([['0.7.0', 2]]);
    const text = await run(() => reportCommand(['--db', db, '--all-metrics']));
    expect(text.stdout).toMatch(/^ {3}Storage write P95 per MiB \(definition before 0\.7\.0\) \(ms\/MiB\) +2 /m);
    expect(text.stdout).toContain(
      'note: Storage write P95 per MiB (storage_write_p95_ms_per_mib): all 2 trials were measured before kvbench 0.7.0 changed its definition',
    );
  });

  it('leaves trials of one side alone: no mark, no note', async () => {
    const { db } = await dbOf([
      [KVBENCH_VERSION, 7.46],
      [KVBENCH_VERSION, 10.11],
    ]);
    const { scenarios: report } = await reportJson(db);
    expect(report.scenarios[0].definitionSplits).toEqual([]);
    expect(report.scenarios[0].metrics.every((m) => m.olderDefinition === null)).toBe(true);
    const text = await run(() => reportCommand(['--db', db, '--all-metrics']));
    expect(text.stdout).not.toMatch(/definition/);
  });
});

describe('a system comparison over two definitions of a metric', () => {
  it('marks the metric and names no better side for it, in the text and --json (rev13-upgrade #7)', async () => {
    const where = await dbOf([['0.2.0', 14], ['0.2.0', 15]], 'old-lab');
    await dbOf([[KVBENCH_VERSION, 7], [KVBENCH_VERSION, 8]], 'new-lab', where);
    const json = await run(() => reportCommand(['--db', where.db, '--compare', 'old-lab', 'new-lab', '--json']));
    expect(json.code, json.stderr).toBe(0);
    const c = JSON.parse(json.stdout) as SystemComparison;
    const decode = c.metrics.find((m) => m.metric.key === 'decode_bytes_read')!;
    expect(decode).toMatchObject({ mixedDefinitions: [{ since: '0.3.0' }], verdict: null, winRateA: null });
    expect(decode.configs[0]).toMatchObject({ measuredBy: ['0.2.0', KVBENCH_VERSION], mixedDefinitions: true, winner: null });
    expect(c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.mixedDefinitions).toEqual([]);
    const text = await run(() => reportCommand(['--db', where.db, '--compare', 'old-lab', 'new-lab']));
    expect(text.stdout).toMatch(/^Decode bytes read \(higher is better\) mixed definitions †\s+1\s+1\.00x\s+—\s/m);
    expect(text.stdout).toContain('mixed definitions †: the metric\'s compared trials were measured on both sides of a change of its definition');
  });
});
