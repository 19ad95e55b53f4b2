// GPU trials in the store and the report, with the results of kvbench's first runs on a real GPU (an
// NVIDIA H200, test/fixtures/gpu-h200-*.json) imported into a real database.
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport, TierComparison } from '../../../src-main/export/report-model.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { extractMetrics } from '../../../src-main/store/results-ingest.ts';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { h200Results } from '../store/gpu-results.ts';
import { addSuiteTrials } from '../store/seed-store.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => removeTempDirs());

/** A database with the H200's GPU-only run filed under gpu-only, as `kvbench import` stores it. */
async function gpuOnlyDb(): Promise<string> {
  const dir = tempDir();
  const db = path.join(dir, 'kvbench.db');
  const imported = await run(() => importCommand([writeResults(dir, 'gpu-only.json', h200Results('gpu-only')), '--system', 'h200', '--scenario', 'gpu-only', '--db', db]));
  expect(imported.code, imported.stderr).toBe(0);
  return db;
}

describe('GPU tier latencies in the report (review gpu-truth M4: measured, but shown nowhere)', () => {
  it("the headline metrics give the GPU tier's read and write P95, and its histograms are pooled", async () => {
    const db = await gpuOnlyDb();
    const text = await run(() => reportCommand(['--db', db]));
    expect(text.code, text.stderr).toBe(0);
    // The H200 run's own P95s: 31.97 ms to read a whole entry from the GPU tier, 90.05 ms to write one.
    expect(text.stdout).toMatch(/GPU read P95 \(ms\)\s+1\s+31\.97\s/);
    expect(text.stdout).toMatch(/GPU write P95 \(ms\)\s+1\s+90\.05\s/);
    expect(text.stdout).toMatch(/tier_read\.gpu\s+1\s+1,521\s/);
    expect(text.stdout).toMatch(/tier_write\.gpu\s+1\s/);
    const json = await run(() => reportCommand(['--db', db, '--json']));
    const report = (JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios;
    expect(report.scenarios[0].pooled.map((p) => p.name)).toEqual(expect.arrayContaining(['tier_read.gpu', 'tier_write.gpu']));
  });

  it("the tier comparison gives a GPU read P95 column where a row had a GPU tier, and none for a CPU and storage suite's", async () => {
    const db = await gpuOnlyDb();
    const text = await run(() => reportCommand(['--db', db]));
    const head = text.stdout.split('\n').find((l) => l.startsWith('scenario ') && l.includes('CPU rd P95'))!;
    expect(head).toMatch(/cache I\/O tok\/s\s+speedup\s+GPU rd P95\s+CPU rd P95/);
    const row = text.stdout.split('\n').find((l) => l.startsWith('gpu-only '))!;
    expect(row).toMatch(/\s31\.97\s/);

    const dir = tempDir();
    const plain = path.join(dir, 'kvbench.db');
    expect((await run(() => importCommand([writeResults(dir, 's.json', kvbenchResults({ tokPerS: 100 })), '--system', 's', '--scenario', 'storage-only', '--db', plain]))).code).toBe(0);
    const none = await run(() => reportCommand(['--db', plain]));
    expect(none.stdout).toContain('CPU rd P95');
    expect(none.stdout).not.toContain('GPU rd P95');
  });
});

describe("a spilled tier's hits (review gpu-truth M1: its reads counted the demotions through it)", () => {
  it("stores each tier's hits: the results' own count, else from 0.8.0 without promotion its reads less its demotions out", () => {
    const r = h200Results('gpu-cpu-storage');
    const tb = r.kvbench.tier_bytes;
    const m = extractMetrics(r);
    // 0.8.0 results: the CPU tier read 117.4 GB, 37.5 GB of it demoted on to the drive.
    expect(m.cpu_hit_read_bytes).toBe(tb.cpu.read_bytes - tb.cpu.demoted_out_bytes);
    expect(m.gpu_hit_read_bytes).toBe(tb.gpu.read_bytes - tb.gpu.demoted_out_bytes);
    expect(m.storage_hit_read_bytes).toBe(tb.storage.read_bytes);
    // The tiers' hits are the request-level reads, to the byte.
    expect(m.gpu_hit_read_bytes + m.cpu_hit_read_bytes + m.storage_hit_read_bytes).toBe(m.total_read_bytes);
    // 0.8.1 results say it themselves.
    const own = h200Results('gpu-cpu-storage', '0.8.1');
    own.kvbench.tier_bytes.cpu.hit_read_bytes = 12345;
    expect(extractMetrics(own).cpu_hit_read_bytes).toBe(12345);
    // Where reads less demotions is not the hits: promotions moved bytes too, or demotions were counted whole (before 0.8.0).
    const promoted = h200Results('gpu-cpu-storage');
    promoted.kvbench.promotion.policy = 'on-hit';
    expect(extractMetrics(promoted)).not.toHaveProperty('cpu_hit_read_bytes');
    expect(extractMetrics(h200Results('gpu-cpu-storage', '0.7.0'))).not.toHaveProperty('cpu_hit_read_bytes');
  });

  it("the spill caution gives what the spilled tiers served as hits, and their share of the trial's reads", async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    // The GPU + CPU + storage run filed under GPU only: its CPU and storage tiers are past what that names.
    const imported = await run(() => importCommand([writeResults(dir, 'r.json', h200Results('gpu-cpu-storage')), '--system', 'h200', '--scenario', 'gpu-only', '--db', db]));
    expect(imported.code, imported.stderr).toBe(0);
    const json = await run(() => reportCommand(['--db', db, '--json']));
    const report = (JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios;
    const spill = report.scenarios[0].cautions.map((c) => c.message).find((m) => m.startsWith('spilled'));
    // CPU: 117.4 GB read, 37.5 GB of it demotions, 79.9 GB hits = 27.6 % of the 289.9 GB requests read.
    expect(spill).toBe(
      'spilled past the GPU tier that “GPU only” names: 37.9 GiB written to the CPU tier and 74.4 GiB read back from it by requests (its hits, 27.6 % of the trial\'s reads; ' +
        '35.0 GiB more left it for other tiers (demotions, promotions)); 34.8 GiB written to the storage tier and 14.2 GiB read back from it by requests (its hits, 5.3 % of the trial\'s reads), ' +
        "so its numbers include the CPU tier's or the drive's",
    );
  });
});

describe("GPU efficiency in the tier comparison (review gpu-truth M6: the GPU copy probe's limits had no efficiency against them)", () => {
  // The H200's GPU copy probe (kvbench hw --probe): pinned staging, link busy, each way.
  const gpuCopy = { device: 0, model: 'NVIDIA H200', h2dBytesPerSec: 53.38e9, d2hBytesPerSec: 53.68e9, chunkBytes: 16 * 1024 ** 2, bytesPerDirection: 4 * 1024 ** 3, copyThreads: 2, stagingPinned: true, measuredAt: '2026-11-25T13:25:47.784Z' };
  const h200 = (probe: boolean): HardwareProfile => ({ ...fakeHardware({ probe: true, gpuGiB: 139.8 }), ...(probe ? { gpuCopy } : {}) });

  /** A real database with one suite per entry: a gpu-only trial of these results on this hardware. */
  async function tiersOf(suites: { hw: HardwareProfile; results: Record<string, unknown>; scenario?: string }[]): Promise<{ dir: string; db: string; tiers: TierComparison[] }> {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const store = openStore(db);
    let ids: number[];
    try {
      ids = suites.map((x) => addSuiteTrials(store, x.hw, 1, () => ({ results: x.results }), x.scenario ?? 'gpu-only'));
    } finally {
      store.close();
    }
    const tiers: TierComparison[] = [];
    for (const id of ids) {
      const json = await run(() => reportCommand(['--db', db, '--suite', String(id), '--json']));
      expect(json.code, json.stderr).toBe(0);
      tiers.push((JSON.parse(json.stdout) as { tiers: TierComparison }).tiers);
    }
    return { dir, db, tiers };
  }

  it("is each row's link-busy GPU read (write) rate ÷ the probe's device→host (host→device), named apart from the CPU tier's; a note says why there is none", async () => {
    const results = h200Results('gpu-cpu-storage', '0.8.1');
    const gpu = results.kvbench.tiers.gpu;
    const { tiers } = await tiersOf([
      { hw: h200(true), results },
      { hw: h200(false), results: h200Results('gpu-cpu-storage', '0.8.1') },
      { hw: h200(true), results: h200Results('gpu-cpu-storage', '0.8.0') },
      { hw: h200(true), results: kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown>, scenario: 'storage-only' },
    ]);
    const [probed, unprobed, older, noGpu] = tiers.map((t) => t.rows[0]);
    // 45.16 GB/s of pinned staging reads while the link was busy ÷ 53.68 GB/s = 84.1 %; writes 17.69 ÷ 53.38 = 33.1 %.
    expect(probed.gpuReadBusyEfficiency).toBeCloseTo(gpu.d2h_staging_link_busy_bytes_per_sec / 53.68e9, 9);
    expect(probed.gpuWriteBusyEfficiency).toBeCloseTo(gpu.h2d_link_busy_bytes_per_sec / 53.38e9, 9);
    expect([probed.gpuReadBusyEfficiencyNote, probed.gpuWriteBusyEfficiencyNote]).toEqual([null, null]);
    // Beside it, the CPU tier's: bytes over the whole window, against one thread's memory copy.
    expect(probed.cpuReadEfficiency).toBeCloseTo(results.kvbench.tier_bytes.cpu.read_bytes_per_sec / 10e9, 9);
    expect(unprobed).toMatchObject({ gpuReadBusyEfficiency: null, gpuReadBusyEfficiencyNote: 'no GPU copy probe', gpuWriteBusyEfficiency: null, gpuWriteBusyEfficiencyNote: 'no GPU copy probe' });
    // 0.8.0 timed the copies from hand-off: no link-busy figure stored, so none to divide.
    expect(older).toMatchObject({
      gpuReadBusyEfficiency: null,
      gpuReadBusyEfficiencyNote: 'no GPU link-busy read rate recorded (stored from kvbench 0.8.1 results on)',
      gpuWriteBusyEfficiencyNote: 'no GPU link-busy write rate recorded (stored from kvbench 0.8.1 results on)',
    });
    expect(noGpu).toMatchObject({ gpuReadBusyEfficiency: null, gpuReadBusyEfficiencyNote: 'no GPU tier', gpuWriteBusyEfficiency: null, gpuWriteBusyEfficiencyNote: 'no GPU tier' });
  });

  it('the text tier comparison gives them columns of their own where a row had a GPU tier, with a legend that says they are while busy', async () => {
    const { db } = await tiersOf([{ hw: h200(true), results: h200Results('gpu-cpu-storage', '0.8.1') }]);
    const text = (await run(() => reportCommand(['--db', db]))).stdout;
    const head = text.split('\n').find((l) => l.startsWith('scenario ') && l.includes('rd eff'))!;
    expect(head).toMatch(/rd eff\s+wr eff\s+GPU rd eff \(busy\)\s+GPU wr eff \(busy\)$/);
    expect(text.split('\n').find((l) => l.startsWith('gpu-only '))).toMatch(/\s84\.1%\s+33\.1%$/);
    expect(text).toContain('GPU rd/wr eff (busy): ');
    expect(text).toMatch(/efficiency while busy, not over the window as rd\/wr eff/);
  });

  it('a GPU tier that read nothing gets no read efficiency, not 0 %', async () => {
    const results = h200Results('gpu-cpu-storage', '0.8.1');
    // A write-only run: no staging reads, so no link-busy read rate, and the tier's hits are 0 B.
    delete results.kvbench.tiers.gpu.d2h_staging_link_busy_bytes_per_sec;
    results.kvbench.tier_bytes.gpu.hit_read_bytes = 0;
    const { tiers } = await tiersOf([{ hw: h200(true), results }]);
    expect(tiers[0].rows[0]).toMatchObject({ gpuReadBusyEfficiency: null, gpuReadBusyEfficiencyNote: 'the GPU tier read no bytes (0 B/s): nothing of the GPU link to measure' });
    expect(tiers[0].rows[0].gpuWriteBusyEfficiency).not.toBeNull();
  });

  it('the XLSX tier comparison has both, with the About sheet saying they are while the link was busy, the CPU one over the window', async () => {
    const results = h200Results('gpu-cpu-storage', '0.8.1');
    const { dir, db, tiers } = await tiersOf([{ hw: h200(true), results }]);
    const out = path.join(dir, 'gpu.xlsx');
    const r = await run(() => exportCommand(['--out', out, '--db', db]));
    expect(r.code, r.stderr).toBe(0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    const ws = wb.getWorksheet('Tier comparison')!;
    const head = (ws.getRow(1).values as unknown[]).slice(1) as string[];
    const row = Object.fromEntries(head.map((h, c) => [h, ws.getRow(2).getCell(c + 1).value]));
    expect(row.gpu_read_busy_efficiency).toBeCloseTo(tiers[0].rows[0].gpuReadBusyEfficiency!, 12);
    expect(row.gpu_write_busy_efficiency).toBeCloseTo(tiers[0].rows[0].gpuWriteBusyEfficiency!, 12);
    expect(head.indexOf('gpu_read_busy_efficiency')).toBe(head.indexOf('cpu_read_efficiency') + 1);
    const about = new Map<string, string>();
    wb.getWorksheet('About')!.eachRow((x) => about.set(String(x.getCell(1).value), String(x.getCell(2).value)));
    expect(about.get('gpu_read_busy_efficiency')).toMatch(/kept the link busy \(not the window\).*efficiency while busy/);
    expect(about.get('cpu_read_efficiency')).toMatch(/÷ the measured window/);
  });

  it("the CPU read efficiency beside them is memory bandwidth used: the CPU tier's reads incl. demotions, and says so", async () => {
    // The H200's GPU + CPU + storage run: the CPU tier read 117.4 GB in its 30 s window, 37.5 GB of it
    // demotions on to the drive, each copied out of the tier's memory as a hit is (cpu-tier.ts: the same
    // byte-worker copy), so both count against the memory-copy limit; the hits alone would say 2.66 GB/s.
    const results = h200Results('gpu-cpu-storage', '0.8.1');
    const cpu = results.kvbench.tier_bytes.cpu;
    const { dir, db, tiers } = await tiersOf([{ hw: h200(true), results }]);
    const row = tiers[0].rows[0];
    expect(row.cpuReadEfficiency).toBeCloseTo(cpu.read_bytes_per_sec / 10e9, 9);
    expect(row.cpuReadEfficiency! * 10e9 * 30.001283886).toBeCloseTo(cpu.read_bytes, -3);
    const out = path.join(dir, 'cpu.xlsx');
    expect((await run(() => exportCommand(['--out', out, '--db', db]))).code).toBe(0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    const about = new Map<string, string>();
    wb.getWorksheet('About')!.eachRow((x) => about.set(String(x.getCell(1).value), String(x.getCell(2).value)));
    expect(about.get('cpu_read_efficiency')).toMatch(/^Tier comparison: CPU-tier bytes read, reads incl\. demotions \(/);
    expect(about.get('cpu_read_efficiency')).toMatch(/not the tier's hits alone/);
  });
});
