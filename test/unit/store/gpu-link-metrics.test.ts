// The GPU tier's stored copy bandwidths (review gpu-truth H1). The trial metrics were per-copy figures
// (bytes ÷ summed copy time), which fall as copies overlap, and device→host mixed pinned staging reads
// with pageable demotion copies: the H200's symmetric ~53 GB/s link read "H2D 43.9 / D2H 21.6 GB/s".
// Now each kind's link-busy figure is stored, from results of kvbench 0.8.1 on (the union of the
// copies' own intervals); the per-copy ones stay as diagnostics with no better side.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
import { extractMetrics, ResultsValuesSchema } from '../../../src-main/store/results-ingest.ts';
import { olderDefinitionOf } from '../../../src-shared/domain/metric-changes.ts';
import { METRIC_BY_KEY } from '../../../src-shared/domain/store-types.ts';
import { runInProcess as run } from '../cli/in-process.ts';
import { removeTempDirs, tempDir, writeResults } from './fixtures.ts';
import { h200Results } from './gpu-results.ts';

afterEach(() => removeTempDirs());

const LINK_KEYS = ['gpu_h2d_link_bytes_per_s', 'gpu_d2h_link_bytes_per_s', 'gpu_demotion_d2h_link_bytes_per_s'];

describe("the GPU tier's copy bandwidth as stored", () => {
  it('keeps each kind of copy\'s link-busy figure from 0.8.1 results: pinned staging host→device and device→host, pageable demotions apart', () => {
    const r = h200Results('gpu-cpu-storage', '0.8.1');
    expect(ResultsValuesSchema.safeParse(r).success).toBe(true);
    const gpu = r.kvbench.tiers.gpu;
    expect(extractMetrics(r)).toMatchObject({
      gpu_h2d_link_bytes_per_s: gpu.h2d_link_busy_bytes_per_sec,
      gpu_d2h_link_bytes_per_s: gpu.d2h_staging_link_busy_bytes_per_sec,
      gpu_demotion_d2h_link_bytes_per_s: gpu.demotion_d2h_link_busy_bytes_per_sec,
      // The per-copy figures stay, as diagnostics.
      gpu_h2d_copy_bytes_per_s: gpu.h2d_copy_bandwidth_bytes_per_sec,
      gpu_d2h_copy_bytes_per_s: gpu.d2h_copy_bandwidth_bytes_per_sec,
    });
  });

  it('stores no link figure measured before 0.8.1 (timed from hand-off, not a link rate): the H200 run as 0.8.0 wrote it', () => {
    const m = extractMetrics(h200Results('gpu-only'));
    for (const k of LINK_KEYS) expect(m[k], k).toBeUndefined();
    // Its per-copy host→device 40.4 GB/s read above its "link busy" 29.2 GB/s: no union of the copies can.
    expect(m.gpu_h2d_copy_bytes_per_s).toBeCloseTo(40.389e9, -7);
    const reference = { requests_completed: 1, total_tokens_generated: 1, kvbench: undefined };
    expect(extractMetrics(reference)).not.toHaveProperty('gpu_h2d_link_bytes_per_s');
  });

  it('names the link figures by what they carry, higher is better; the per-copy ones are diagnostics with no better side', () => {
    expect(METRIC_BY_KEY.gpu_h2d_link_bytes_per_s).toMatchObject({ label: 'GPU host→device link bandwidth (pinned staging)', better: 'higher', unit: 'bytes/s' });
    expect(METRIC_BY_KEY.gpu_d2h_link_bytes_per_s).toMatchObject({ label: 'GPU device→host link bandwidth (pinned staging)', better: 'higher' });
    expect(METRIC_BY_KEY.gpu_demotion_d2h_link_bytes_per_s).toMatchObject({ label: 'GPU device→host link bandwidth (pageable demotions)', better: 'higher' });
    expect(METRIC_BY_KEY.gpu_h2d_copy_bytes_per_s.better).toBeNull();
    expect(METRIC_BY_KEY.gpu_d2h_copy_bytes_per_s.better).toBeNull();
    expect(METRIC_BY_KEY.gpu_d2h_copy_bytes_per_s.label).toMatch(/diagnostic/);
  });

  it('lists the change of definition in 0.8.1, for the trial metrics and the results fields alike', () => {
    for (const k of [...LINK_KEYS, 'kvbench.tiers.gpu.h2d_link_busy_bytes_per_sec', 'kvbench.tiers.gpu.d2h_staging_link_busy_bytes_per_sec', 'kvbench.tiers.gpu.demotion_d2h_link_busy_bytes_per_sec']) {
      expect(olderDefinitionOf(k, '0.8.0')?.since, k).toBe('0.8.1');
      expect(olderDefinitionOf(k, '0.8.1'), k).toBeNull();
    }
  });

  it('says both 0.8.1 changes of the busy times: the union of the copies\' own intervals, and the freeze at the window\'s close', () => {
    for (const key of ['h2d_busy_ns', 'd2h_staging_busy_ns', 'demotion_d2h_busy_ns']) {
      const change = olderDefinitionOf(`kvbench.tiers.gpu.${key}`, '0.8.0');
      expect(change?.since, key).toBe('0.8.1');
      expect(change?.change, key).toMatch(/union of the copies' own intervals/);
      expect(change?.change, key).toMatch(/completed inside the measured window/);
    }
  });

  it('an import into a real database keeps them, and the report aggregates them (all metrics)', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    const files = [writeResults(dir, 'new.json', h200Results('gpu-cpu-storage', '0.8.1')), writeResults(dir, 'old.json', h200Results('gpu-cpu-storage', '0.8.0'))];
    // Two files of one content but their version: two trials.
    const imported = await run(() => importCommand([...files, '--system', 'h200', '--scenario', 'gpu-cpu-storage', '--db', db]));
    expect(imported.code, imported.stderr).toBe(0);
    const json = await run(() => reportCommand(['--db', db, '--json']));
    expect(json.code, json.stderr).toBe(0);
    const report = (JSON.parse(json.stdout) as { scenarios: ScenarioReport }).scenarios;
    const rows = report.scenarios[0].metrics.filter((m) => LINK_KEYS.includes(m.metric.key) || m.metric.key === 'gpu_h2d_copy_bytes_per_s');
    // The link figures over the 0.8.1 trial alone, never marked older; the per-copy one over both.
    expect(rows.map((m) => [m.metric.key, m.aggregate.n, m.olderDefinition])).toEqual([
      ['gpu_h2d_link_bytes_per_s', 1, null],
      ['gpu_d2h_link_bytes_per_s', 1, null],
      ['gpu_demotion_d2h_link_bytes_per_s', 1, null],
      ['gpu_h2d_copy_bytes_per_s', 2, null],
    ]);
    expect(rows[1].aggregate.median).toBeCloseTo(45.162e9, -7);
  });
});
