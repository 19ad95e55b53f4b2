// What the report's legends and limits say about the numbers beside them (review rev12-cli L1, L2, L5):
// the bytes columns hold request-level traffic, a stated drive bandwidth is named as the user's while
// the memory copy stays the probe's, and pooled latencies say how many of the trials they pool.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { writeExport } from '../../support/write-export.ts';
import { buildScenarioReport, buildTierComparison } from '../../../src-main/export/report-model.ts';
import { formatScenarioReport, formatTierComparison } from '../../../src-main/export/render-text.ts';
import { METRIC_BY_KEY, REQUEST_LEVEL_BYTES_TEXT, type TrialHistogram, type TrialRecord } from '../../../src-shared/domain/store-types.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { fakeHardware, removeTempDirs, tempDir } from '../store/fixtures.ts';

afterEach(() => removeTempDirs());

let nextId = 1;
function trial(o: { scenario: string; metrics: Record<string, number>; cpuMemGb?: number; index?: number; format?: TrialRecord['resultsFormat'] }): TrialRecord {
  const id = nextId++;
  return {
    id, runId: 1, suiteId: 1, suiteLabel: null, systemId: 'sys-a', systemLabel: 'sys-a', driveId: null, driveLabel: null,
    scenarioId: o.scenario, trialIndex: o.index ?? 0, attempt: 1, status: 'complete', statusReason: null,
    configKey: `${o.scenario}-${o.cpuMemGb ?? 0}`, options: { model: 'tiny-1b', numUsers: 4, cpuMemGb: o.cpuMemGb ?? 0, gpuMemGb: 0, duration: 3, generationMode: 'fast' },
    seed: 42, startedAt: '2026-11-24T21:13:42.000Z', finishedAt: null, wallMs: 5000, resultsFormat: o.format ?? 'kvbench', sourceFile: null, kvbenchVersion: '0.6.0', measuredByVersion: '0.6.0', storageRamBacking: null, metrics: o.metrics,
  };
}

const storageOnly = (): TrialRecord[] => [
  trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 300, storage_read_bytes_per_s: 1.31e9, storage_write_bytes_per_s: 0.5e9, cpu_read_bytes_per_s: 2e9, total_read_bytes: 6.58e9, total_write_bytes: 1.42e9 } }),
];

describe('the tier comparison\'s read/written columns (rev12-cli L1)', () => {
  it('the legend says they are request-level bytes with moves between tiers left out, not "all tiers"', () => {
    const text = formatTierComparison(buildTierComparison(buildScenarioReport(storageOnly()), fakeHardware({ probe: true })));
    expect(REQUEST_LEVEL_BYTES_TEXT).toMatch(/^request-level KV bytes .*moves between tiers \(demotions, promotions\) left out/);
    expect(text).toContain(`read/written: ${REQUEST_LEVEL_BYTES_TEXT}`);
    expect(text).not.toContain('KV bytes of all tiers');
  });

  it('the catalogue describes total_read_bytes / total_write_bytes in the same words', () => {
    for (const key of ['total_read_bytes', 'total_write_bytes']) {
      expect(METRIC_BY_KEY[key].description).toContain(REQUEST_LEVEL_BYTES_TEXT);
      expect(METRIC_BY_KEY[key].description).not.toMatch(/all tiers/);
    }
  });
});

describe('the limits\' sources with a stated drive bandwidth (rev12-cli L2)', () => {
  // fakeHardware's probe: drive read 2 GB/s, write 1.5 GB/s, memory copy 10 GB/s, probed 2026-11-01.
  const tiersWith = (stated: { readBytesPerS: number | null; writeBytesPerS: number | null } | null) =>
    buildTierComparison(buildScenarioReport(storageOnly()), fakeHardware({ probe: true }), stated);

  it('both directions stated: the drive\'s limits are the user\'s, the memory copy stays the probe\'s, and the legend says so', () => {
    const t = tiersWith({ readBytesPerS: 2e9, writeBytesPerS: 1e9 });
    expect(t.probe).toMatchObject({
      readBytesPerS: 2e9, writeBytesPerS: 1e9, readLimitFrom: 'stated', writeLimitFrom: 'stated', measuredAt: null,
      source: 'stated by the user (read 2.00 GB/s, write 1.00 GB/s)',
      memoryCopyBytesPerS: 10e9, memoryCopySource: 'kvbench memory-copy probe (one thread)', memoryCopyMeasuredAt: '2026-11-01T00:00:00.000Z',
    });
    const text = formatTierComparison(t);
    expect(text).toContain(
      'Limits: drive sequential read 2.00 GB/s, write 1.00 GB/s (stated by the user (read 2.00 GB/s, write 1.00 GB/s)); ' +
        'memory copy 10.00 GB/s (kvbench memory-copy probe (one thread), 2026-11-01T00:00:00.000Z)',
    );
    expect(text).toContain("rd/wr eff: storage-tier bandwidth ÷ the drive's sequential bandwidth stated by the user.");
    expect(text).not.toContain("the probe's sequential bandwidth");
  });

  it('one direction stated: each efficiency names its own limit\'s source', () => {
    const t = tiersWith({ readBytesPerS: 2e9, writeBytesPerS: null });
    expect([t.probe.readLimitFrom, t.probe.writeLimitFrom]).toEqual(['stated', 'probe']);
    const text = formatTierComparison(t);
    expect(text).toContain(
      "rd eff: storage-tier read bandwidth ÷ the drive's sequential read bandwidth stated by the user; wr eff: storage-tier write bandwidth ÷ the probe's sequential write bandwidth.",
    );
    expect(text).toMatch(/write 1\.50 GB\/s \(stated by the user \(read 2\.00 GB\/s\); the other direction: kvbench probe .*, 2026-11-01T00:00:00\.000Z\); memory copy 10\.00 GB\/s \(kvbench memory-copy probe \(one thread\), 2026-11-01T00:00:00\.000Z\)$/m);
  });

  it('nothing stated: the probe\'s, as before', () => {
    const t = tiersWith(null);
    expect([t.probe.readLimitFrom, t.probe.writeLimitFrom]).toEqual(['probe', 'probe']);
    expect(formatTierComparison(t)).toContain("rd/wr eff: storage-tier bandwidth ÷ the probe's sequential bandwidth.");
    // No probe at all: no source for either limit.
    const none = buildTierComparison(buildScenarioReport(storageOnly()), null);
    expect(none.probe).toMatchObject({ source: 'none', memoryCopySource: 'none', memoryCopyMeasuredAt: null });
  });

  it('the XLSX tier comparison gives the drive\'s and the memory copy\'s sources in their own columns', async () => {
    const dir = tempDir();
    const report = buildScenarioReport(storageOnly());
    const tiers = buildTierComparison(report, fakeHardware({ probe: true }), { readBytesPerS: 2e9, writeBytesPerS: 1e9 });
    const file = path.join(dir, 'x.xlsx');
    await writeExport({ trials: storageOnly(), hardware: new Map(), report, tiers, filter: {} }, 'xlsx', file);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const ws = wb.getWorksheet('Tier comparison')!;
    const head = (ws.getRow(1).values as unknown[]).slice(1) as string[];
    const row = Object.fromEntries(head.map((h, i) => [h, ws.getRow(2).getCell(i + 1).value]));
    expect(head).not.toContain('limits_source');
    expect(row.drive_limits_source).toBe('stated by the user (read 2.00 GB/s, write 1.00 GB/s)');
    expect(row.memory_copy_source).toBe('kvbench memory-copy probe (one thread), 2026-11-01T00:00:00.000Z');
    expect(fs.existsSync(file)).toBe(true);
  });
});

describe("the GPU tier's copy limit beside the drive's and the memory copy's (gpu-truth M6)", () => {
  const gpuCopy = { device: 0, model: 'NVIDIA H200', h2dBytesPerSec: 53.38e9, d2hBytesPerSec: 53.68e9, chunkBytes: 16 * 1024 ** 2, bytesPerDirection: 4 * 1024 ** 3, copyThreads: 2, stagingPinned: true, measuredAt: '2026-11-25T13:25:47.784Z' };
  const withGpu = (): TrialRecord[] => [...storageOnly(), { ...trial({ scenario: 'gpu-only', metrics: { wall_clock_throughput_tok_per_s: 960, total_read_bytes: 6e11, total_write_bytes: 9e10 } }), options: { model: 'tiny-1b', numUsers: 4, cpuMemGb: 4, gpuMemGb: 136, duration: 3, generationMode: 'fast' } }];

  it('the suite\'s GPU copy probe is a limit of its own, with its source and time, in the Limits line and the XLSX', async () => {
    const hw = { ...fakeHardware({ probe: true }), gpuCopy };
    const report = buildScenarioReport(withGpu());
    const t = buildTierComparison(report, hw);
    expect(t.probe).toMatchObject({
      gpuH2dBytesPerS: 53.38e9, gpuD2hBytesPerS: 53.68e9,
      gpuCopySource: 'kvbench GPU copy probe (GPU 0, NVIDIA H200: 16 MiB copies through the GPU tier, pinned staging, link busy)', gpuCopyMeasuredAt: '2026-11-25T13:25:47.784Z',
    });
    expect(formatTierComparison(t)).toMatch(
      /; GPU copy host→device 53\.38 GB\/s, device→host 53\.68 GB\/s \(kvbench GPU copy probe \(GPU 0, NVIDIA H200: 16 MiB copies through the GPU tier, pinned staging, link busy\), 2026-11-25T13:25:47\.784Z\)$/m,
    );
    const dir = tempDir();
    const file = path.join(dir, 'x.xlsx');
    await writeExport({ trials: withGpu(), hardware: new Map(), report, tiers: t, filter: {} }, 'xlsx', file);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const ws = wb.getWorksheet('Tier comparison')!;
    const head = (ws.getRow(1).values as unknown[]).slice(1) as string[];
    const row = Object.fromEntries(head.map((h, i) => [h, ws.getRow(2).getCell(i + 1).value]));
    expect([row.gpu_h2d_limit_bytes_per_s, row.gpu_d2h_limit_bytes_per_s]).toEqual([53.38e9, 53.68e9]);
    expect(row.gpu_copy_source).toBe('kvbench GPU copy probe (GPU 0, NVIDIA H200: 16 MiB copies through the GPU tier, pinned staging, link busy), 2026-11-25T13:25:47.784Z');
  });

  it('a row with a GPU tier and no GPU copy probe says there is none; rows without a GPU tier and no probe say nothing of it', () => {
    const noProbe = formatTierComparison(buildTierComparison(buildScenarioReport(withGpu()), fakeHardware({ probe: true })));
    expect(noProbe).toMatch(/; GPU copy — \(no GPU copy probe\)$/m);
    expect(formatTierComparison(buildTierComparison(buildScenarioReport(storageOnly()), fakeHardware({ probe: true })))).not.toMatch(/GPU copy/);
  });
});

describe('pooled latency says how many of the trials it pools (rev12-cli L5)', () => {
  const hist = (n: number): TrialHistogram => {
    const h = new LatencyHistogram();
    for (let i = 1; i <= n; i++) h.record(i * 1e6);
    return { name: 'end_to_end', unit: 'ns', count: n, sumNs: h.sumNs, hdr: h.encode() };
  };
  // The same run twice: imported as kvbench results (histograms) and as the reference's file (none).
  const kv = trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 300 } });
  const ref = trial({ scenario: 'storage-only', index: 1, format: 'reference-new', metrics: { wall_clock_throughput_tok_per_s: 301 } });
  const stored = new Map<number, TrialHistogram[]>([[kv.id, [hist(27)]], [ref.id, []]]);

  it('a group with a reference-format import: over 1 of the 2 trials, and why the other is not in it', () => {
    const r = buildScenarioReport([kv, ref], { histogramsOf: (id) => stored.get(id) ?? [] });
    const s = r.scenarios[0];
    expect(s.withoutHistograms).toEqual({ trials: 1, referenceImports: 1 });
    expect(s.pooled).toMatchObject([{ name: 'end_to_end', trials: 1, count: 27 }]);
    const text = formatScenarioReport(r);
    expect(text).toContain('   pooled over 1 of the 2 trials (merged HDR histograms, not averaged):');
    expect(text).not.toContain('pooled over the trials');
    expect(text).toMatch(/^ {5}latency +trials +samples +P50 ms/m);
    // Its trial was measured by kvbench 0.6.0: its end-to-end latency is of the definition before 0.8.0, and marked so.
    expect(text).toMatch(/^ {5}end_to_end \(definition before 0\.8\.0\) +1 +27 /m);
    expect(text).toContain('     1 of the 2 trials stored no latency histograms (imported from a reference-format results file, which keeps none): left out of these percentiles');
  });

  it('every trial with histograms: over the trials, as before; none with any: said instead of an empty table', () => {
    const kv2 = trial({ scenario: 'storage-only', index: 2, metrics: { wall_clock_throughput_tok_per_s: 302 } });
    stored.set(kv2.id, [hist(10)]);
    const all = formatScenarioReport(buildScenarioReport([kv, kv2], { histogramsOf: (id) => stored.get(id) ?? [] }));
    expect(all).toContain('   pooled over the trials (merged HDR histograms, not averaged):');
    expect(all).not.toContain('stored no latency histograms');
    const ref2 = trial({ scenario: 'storage-only', index: 3, format: 'reference-mid', metrics: { wall_clock_throughput_tok_per_s: 303 } });
    const none = buildScenarioReport([ref, ref2], { histogramsOf: () => [] });
    expect(none.scenarios[0].pooled).toEqual([]);
    expect(formatScenarioReport(none)).toContain('   no pooled latency: none of the 2 trials stored latency histograms (imported from reference-format results files, which keep none)');
    const one = buildScenarioReport([ref], { histogramsOf: () => [] });
    expect(formatScenarioReport(one)).toContain('   no pooled latency: the one trial stored no latency histograms (imported from a reference-format results file, which keeps none)');
  });
});
