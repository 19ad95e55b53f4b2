// GPU trials in the store and the report, with the results of kvbench's first runs on a real GPU (an
// NVIDIA H200, test/fixtures/gpu-h200-*.json) imported into a real database.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
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
