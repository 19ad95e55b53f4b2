// GPU trials in the store and the report, with the results of kvbench's first runs on a real GPU (an
// NVIDIA H200, test/fixtures/gpu-h200-*.json) imported into a real database.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
import { extractMetrics } from '../../../src-main/store/results-ingest.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { h200Results } from '../store/gpu-results.ts';
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
