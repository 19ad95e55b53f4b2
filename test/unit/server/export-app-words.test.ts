// What the app's exports say (rev12-gui M7, M8): the report page's CSV has the report's rows, and the
// XLSX's Notes sheet names the app's controls, as the page beside it does; the CLI's files keep the
// CLI's flags (test/unit/export).
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Result } from '../../../src-shared/ipc/contract.ts';
import { fakeHardware, removeTempDirs } from '../store/fixtures.ts';
import { parseCsv } from '../../support/csv.ts';
import { testBackend, type TestBackend } from './backend-harness.ts';
import { downloaded } from '../../support/downloaded.ts';

const open: TestBackend[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.backend.close();
  removeTempDirs();
});

function ok<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** A backend after one smoke suite of cpu-only and storage-only, 2 trials each, on a drive never probed. */
async function oneSuite(): Promise<{ t: TestBackend; suiteId: number }> {
  const t = await testBackend({
    detect: async (cd) => {
      const hw = fakeHardware({ hostname: 'lab-a' });
      hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
      return hw;
    },
  });
  open.push(t);
  const { suiteId } = ok(await t.backend.invoke('suite.start', { cacheDir: t.cacheDir, profile: 'smoke', trials: 2, scenarios: ['cpu-only', 'storage-only'], probe: false })) as { suiteId: number };
  await t.waitFor('suite.finished');
  await new Promise((r) => setTimeout(r, 20));
  return { t, suiteId };
}

type File = { fileName: string; trialCount: number };

describe('export.create: the files the app saves', () => {
  it("the report's CSV is the report: one row per group and metric with median, P95 and CV; the trials' CSV stays one row per trial", async () => {
    const { t, suiteId } = await oneSuite();
    const report = ok(await t.backend.invoke('report.build', { selection: { suiteIds: [suiteId] } })) as {
      report: { scenarios: { scenarioId: string; metrics: { metric: { key: string }; aggregate: { median: number | null; p95: number | null; cv: number | null; n: number } }[] }[] };
    };
    const file = ok(await t.backend.invoke('export.create', { selection: { suiteIds: [suiteId] }, format: 'csv', content: 'report' })) as File;
    expect(file.fileName).toMatch(new RegExp(`^kvbench-suite-${suiteId}-report-\\d{8}-\\d{6}\\.csv$`));
    expect(file.trialCount).toBe(4);
    const [header, ...body] = parseCsv(downloaded(t.backend, file).toString('utf8').replace(/^\uFEFF/, ''));
    for (const c of ['scenario_id', 'scenario', 'configuration', 'metric', 'metric_label', 'unit', 'n', 'median', 'p95', 'cv']) expect(header).toContain(c);
    const rows = body.map((l) => Object.fromEntries(l.map((v, i) => [header[i], v])));
    const expected = report.report.scenarios.flatMap((s) => s.metrics.map((m) => [s.scenarioId, m.metric.key, String(m.aggregate.median ?? ''), String(m.aggregate.n)]));
    expect(rows.map((r) => [r.scenario_id, r.metric, r.median, r.n])).toEqual(expected);
    expect(rows.find((r) => r.scenario_id === 'storage-only' && r.metric === 'wall_clock_throughput_tok_per_s')).toMatchObject({ scenario: 'Storage only', n: '2' });

    // The trials, as before (and as History exports them), when asked for, or by default.
    for (const request of [{ content: 'trials' as const }, {}]) {
      const trials = ok(await t.backend.invoke('export.create', { selection: { suiteIds: [suiteId] }, format: 'csv', ...request })) as File;
      expect(trials.fileName).toMatch(new RegExp(`^kvbench-suite-${suiteId}-\\d{8}-\\d{6}\\.csv$`));
      expect(downloaded(t.backend, trials).toString('utf8').trimEnd().split('\r\n')).toHaveLength(5);
    }
  });

  it("the XLSX's Notes sheet names the app's controls, not the CLI's flags and commands", async () => {
    const { t, suiteId } = await oneSuite();
    const file = ok(await t.backend.invoke('export.create', { selection: { suiteIds: [suiteId] }, format: 'xlsx' })) as File;
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(downloaded(t.backend, file) as unknown as ArrayBuffer);
    const sheet = wb.getWorksheet('Notes')!;
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    const messages: string[] = [];
    sheet.eachRow((row, n) => {
      if (n > 1) messages.push(String(row.getCell(header.indexOf('message') + 1).value));
    });
    // Unprobed: the tier comparison says how to get a storage efficiency, here with the app's controls.
    const probeNote = messages.find((m) => m.startsWith('no bandwidth probe of the drive'));
    expect(probeNote).toBe(
      'no bandwidth probe of the drive: no storage efficiency (run the suite with its probe, the drive probe (“Probe the drive and memory copy first” in New suite), or state the drive\'s bandwidth: “Drive datasheet read, GB/s”)',
    );
    for (const m of messages) expect(m).not.toMatch(/(?<![\w/.-])--[a-z]|kvbench (?:hw|report)\b/);
  });
});
