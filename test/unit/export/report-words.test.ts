// What the report's legends and limits say about the numbers beside them (review rev12-cli L1, L2, L5):
// the bytes columns hold request-level traffic, a stated drive bandwidth is named as the user's while
// the memory copy stays the probe's, and pooled latencies say how many of the trials they pool.
import { describe, expect, it } from 'vitest';
import { buildScenarioReport, buildTierComparison } from '../../../src-main/export/report-model.ts';
import { formatScenarioReport, formatTierComparison } from '../../../src-main/export/render-text.ts';
import { METRIC_BY_KEY, REQUEST_LEVEL_BYTES_TEXT, type TrialHistogram, type TrialRecord } from '../../../src-shared/domain/store-types.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { fakeHardware } from '../store/fixtures.ts';

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
