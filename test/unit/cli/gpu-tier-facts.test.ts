// A trial's GPU tier as stored and flagged (review gpu-truth M3). A run whose GPU tier did not open goes
// on in the tiers below, and one whose reservation fell short runs with less: the store kept neither
// fact, so "GPU 136 GiB" in a report was only what had been asked for, and a GPU-only trial whose tier
// failed read as "spilled past the GPU tier". Now import keeps the tier's facts from the results, and
// the report flags it (gpu-tier) wherever the other flags go. The H200's own results, in a real database.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { buildScenarioReport, type ScenarioReport } from '../../../src-main/export/report-model.ts';
import { formatScenarioReport } from '../../../src-main/export/render-text.ts';
import type { TrialRecord } from '../../../src-shared/domain/store-types.ts';
import { extractMetrics } from '../../../src-main/store/results-ingest.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { trialGpuOf, trialGpuText } from '../../../src-shared/domain/gpu-tier.ts';
import { parseCsv } from '../../support/csv.ts';
import { fakeHardware, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { h200Results } from '../store/gpu-results.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => removeTempDirs());

const GIB = 1024 ** 3;
const SHORTFALL = 'capped at 51539607552 bytes: 53687091200 free of 150109880320, less 2147483648 left to the driver and other processes';
const NO_DRIVER = 'libcuda.so.1 could not be loaded: no NVIDIA driver is installed';

/** The H200's GPU-only run (64 GiB asked) as it was, and as it would read had its tier fallen short in each way. */
function variants() {
  const ok = h200Results('gpu-only');
  const smaller = h200Results('gpu-only');
  Object.assign(smaller.kvbench.tiers.gpu, { budget_bytes: 48 * GIB, reason: SHORTFALL });
  Object.assign(smaller.kvbench.tiers.gpu.devices[0], { reserved_bytes: 48 * GIB, shortfall: SHORTFALL });
  const absent = h200Results('gpu-only');
  absent.kvbench.tiers.gpu = { present: false, budget_bytes: 64 * GIB, reason: NO_DRIVER };
  const unpinned = h200Results('gpu-only');
  Object.assign(unpinned.kvbench.tiers.gpu, { staging_pinned: false, staging_reason: 'cuMemHostRegister failed: CUDA_ERROR_NOT_SUPPORTED' });
  return { ok, smaller, absent, unpinned };
}

/** The GPU tier's cautions (a GPU-only trial's spill caution names the GPU tier too). */
const GPU_CAUTION = /^its GPU tier/;

describe("a trial's GPU tier facts", () => {
  it('are read from the results where a GPU tier was asked for: reserved of asked, present, staging pinned', () => {
    const v = variants();
    expect(extractMetrics(v.ok)).toMatchObject({ gpu_tier_requested_bytes: 64 * GIB, gpu_tier_reserved_bytes: 64 * GIB, gpu_tier_present: 1, gpu_staging_pinned: 1 });
    expect(extractMetrics(v.smaller)).toMatchObject({ gpu_tier_requested_bytes: 64 * GIB, gpu_tier_reserved_bytes: 48 * GIB, gpu_tier_present: 1 });
    const absent = extractMetrics(v.absent);
    expect(absent).toMatchObject({ gpu_tier_requested_bytes: 64 * GIB, gpu_tier_reserved_bytes: 0, gpu_tier_present: 0 });
    expect(absent).not.toHaveProperty('gpu_staging_pinned');
    expect(extractMetrics(v.unpinned).gpu_staging_pinned).toBe(0);
    // No GPU tier asked for, or only simulated (trace-only mode): no facts.
    const none = h200Results('gpu-only');
    none.kvbench.run_options.gpuMemGb = 0;
    none.kvbench.tiers.gpu = { present: false, budget_bytes: 0, reason: '--gpu-mem-gb 0 disables the GPU tier' };
    expect(extractMetrics(none)).not.toHaveProperty('gpu_tier_present');
    const traced = h200Results('gpu-only');
    traced.kvbench.run_options.ioTraceLog = '/tmp/trace.csv';
    traced.kvbench.tiers.gpu = { present: true, budget_bytes: 64 * GIB, reason: 'trace-only mode: simulated, no GPU I/O' };
    expect(extractMetrics(traced)).not.toHaveProperty('gpu_tier_present');
  });

  it('are flagged by import, history, report, --exclude-flagged and the exports: absent, smaller than asked (X of Y GiB), staging not pinned', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const files = Object.entries(variants()).map(([name, r]) => writeResults(dir, `${name}.json`, r));
    const imported = await run(() => importCommand([...files, '--system', 'h200', '--scenario', 'gpu-only', '--db', db]));
    expect(imported.code, imported.stderr).toBe(0);
    const flaggedAfter = (name: string): string[] => {
      const lines = imported.stdout.split('\n');
      const at = lines.findIndex((l) => new RegExp(`^imported .*${name}\\.json: trial \\d+`).test(l));
      const out: string[] = [];
      for (let i = at + 1; i < lines.length && lines[i].startsWith('  flagged: '); i++) out.push(lines[i].slice('  flagged: '.length));
      return out.filter((m) => GPU_CAUTION.test(m));
    };
    expect(flaggedAfter('ok')).toEqual([]);
    expect(flaggedAfter('smaller')).toEqual(['its GPU tier was smaller than asked (48.0 of 64.0 GiB reserved): it held less and moved entries down sooner than its configuration says']);
    expect(flaggedAfter('absent')).toEqual([
      "its GPU tier was absent though 64.0 GiB was asked for (it did not open; the trial's results say why): the run went on in the tiers below, so its numbers describe no GPU tier",
    ]);
    expect(flaggedAfter('unpinned')).toEqual(["its GPU tier's staging was not pinned (page-locked): its copies went through pageable memory, slower than the GPU's link allows"]);

    const history = await run(() => historyCommand(['--db', db, '--json']));
    const rows = JSON.parse(history.stdout) as { sourceFile: string; cautions: string[] }[];
    expect(rows.map((t) => [path.basename(t.sourceFile), t.cautions.filter((c) => GPU_CAUTION.test(c)).length]).sort()).toEqual([
      ['absent.json', 1],
      ['ok.json', 0],
      ['smaller.json', 1],
      ['unpinned.json', 1],
    ]);

    const text = await run(() => reportCommand(['--db', db]));
    // The group header says what the tier was, beside what the configuration asked for (an import has no hardware snapshot to name the GPUs by).
    expect(text.stdout).toContain('   GPU tier: 48.0 GiB–64.0 GiB of 64.0 GiB reserved (smaller than asked in 1 of 4 trials), absent in 1 of 4 trials (64.0 GiB asked), staging not pinned in 1 of 4 trials');
    const excluding = await run(() => reportCommand(['--db', db, '--json', '--exclude-flagged']));
    const ex = (JSON.parse(excluding.stdout) as { scenarios: ScenarioReport }).scenarios;
    // Every trial is queueing-bound and spilled as well (the run's own), so all four are left out; three for their GPU tier.
    expect(ex.excludedFlagged).toMatchObject({ trials: 4, gpuTier: 3 });
    expect(ex.scenarios[0].excluded.filter((x) => x.flags.includes('gpu-tier'))).toHaveLength(3);

    const csv = path.join(dir, 'trials.csv');
    expect((await run(() => exportCommand(['--db', db, '--out', csv]))).code).toBe(0);
    const [header, ...data] = parseCsv(readFileSync(csv, 'utf8').replace(/^\uFEFF/, ''));
    const col = (k: string): string[] => data.map((r) => r[header.indexOf(k)]).sort();
    expect(col('gpu_tier_present')).toEqual(['0', '1', '1', '1']);
    expect(col('gpu_staging_pinned')).toEqual(['', '0', '1', '1']);
    expect(col('gpu_tier_reserved_bytes')).toEqual(['0', String(48 * GIB), String(64 * GIB), String(64 * GIB)]);
  });

  it('a trial stored before the facts were kept gets no GPU flag: unknown, never a wrong one', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    expect((await run(() => importCommand([writeResults(dir, 'absent.json', variants().absent), '--system', 'h200', '--scenario', 'gpu-only', '--db', db]))).code).toBe(0);
    // As an older kvbench stored it: no GPU tier facts.
    const raw = openDatabase(db);
    raw.exec("DELETE FROM trial_metrics WHERE key LIKE 'gpu_tier_%' OR key = 'gpu_staging_pinned'");
    raw.close();
    const history = await run(() => historyCommand(['--db', db, '--json']));
    expect((JSON.parse(history.stdout) as { cautions: string[] }[])[0].cautions.filter((c) => GPU_CAUTION.test(c))).toEqual([]);
    const json = await run(() => reportCommand(['--db', db, '--json']));
    expect((JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios.scenarios[0].gpuTier).toBeNull();
  });

  it("the trial's details read it from its results: the GPUs, the driver, reserved of asked, pinned, and why it fell short", () => {
    const v = variants();
    const gib = (b: number): string => `${b / GIB} GiB`;
    expect(trialGpuText(trialGpuOf(v.ok)!, gib)).toBe('NVIDIA H200 (driver 580.159.04, supports CUDA 13.0): 64 GiB reserved of 64 GiB asked, staging pinned');
    expect(trialGpuText(trialGpuOf(v.smaller)!, gib)).toBe(`NVIDIA H200 (driver 580.159.04, supports CUDA 13.0): 48 GiB reserved of 64 GiB asked (smaller than asked: ${SHORTFALL}), staging pinned`);
    expect(trialGpuText(trialGpuOf(v.absent)!, gib)).toBe(`absent though 64 GiB was asked for: ${NO_DRIVER}; the run went on in the tiers below`);
    expect(trialGpuText(trialGpuOf(v.unpinned)!, gib)).toBe('NVIDIA H200 (driver 580.159.04, supports CUDA 13.0): 64 GiB reserved of 64 GiB asked, staging not pinned (cuMemHostRegister failed: CUDA_ERROR_NOT_SUPPORTED)');
    expect(trialGpuOf({ kvbench: { tiers: { gpu: { present: false, budget_bytes: 0 } }, run_options: { gpuMemGb: 0 } } })).toBeNull();
  });
});

describe("a report group's GPU tier", () => {
  it('names the GPUs from the hardware snapshot of a suite\'s trial, and what the tier reserved of what was asked', () => {
    const trials: TrialRecord[] = [1, 2].map((id) => ({
      id, runId: 1, suiteId: 1, suiteLabel: null, systemId: 'sys-a', systemLabel: 'gpu-box', driveId: null, driveLabel: null, scenarioId: 'gpu-only', trialIndex: id - 1, attempt: 1,
      status: 'complete', statusReason: null, configKey: 'k', options: { model: 'llama3.1-8b', numUsers: 50, gpuMemGb: 136, cpuMemGb: 4, duration: 30 }, seed: 1,
      startedAt: `2026-11-25T10:00:0${id}.000Z`, finishedAt: null, wallMs: 1, resultsFormat: 'kvbench', sourceFile: null, kvbenchVersion: '0.8.1', measuredByVersion: '0.8.1', storageRamBacking: null,
      metrics: { wall_clock_throughput_tok_per_s: 900, gpu_tier_requested_bytes: 136 * GIB, gpu_tier_reserved_bytes: 136 * GIB, gpu_tier_present: 1, gpu_staging_pinned: 1 },
    }));
    const report = buildScenarioReport(trials, { hardwareOf: () => fakeHardware({ gpuGiB: 80 }) });
    expect(report.scenarios[0].gpuTier).toEqual({ trials: 2, requestedBytes: 136 * GIB, reservedMinBytes: 136 * GIB, reservedMaxBytes: 136 * GIB, absentTrials: 0, smallerTrials: 0, unpinnedTrials: 0, pinnedTrials: 2, devices: 'H100 (driver 580, supports CUDA 13.0)' });
    expect(formatScenarioReport(report)).toContain('   GPU tier: H100 (driver 580, supports CUDA 13.0), 136.0 GiB of 136.0 GiB reserved, staging pinned\n');
    expect(report.scenarios[0].cautions).toEqual([]);
  });
});
