// How the report model and `kvbench report` present what they measured (review rev8-gui #6, #13):
// names that say what a metric counts, no efficiency where a tier moved nothing, a trial count that
// agrees with the medians beside it, and the probe's time apart from its source.
import { describe, expect, it } from 'vitest';
import { buildScenarioReport, buildTierComparison } from '../../../src-main/export/report-model.ts';
import { formatScenarioReport, formatTierComparison } from '../../../src-main/export/render-text.ts';
import { METRIC_BY_KEY, type TrialRecord, type TrialRowStatus } from '../../../src-shared/domain/store-types.ts';
import { fakeHardware } from '../store/fixtures.ts';

let nextId = 1;
function trial(o: { scenario: string; status?: TrialRowStatus; reason?: string; metrics: Record<string, number>; cpuMemGb?: number; index?: number }): TrialRecord {
  const id = nextId++;
  return {
    id, runId: 1, suiteId: 1, systemId: 'sys-a', systemLabel: 'sys-a', driveId: null, driveLabel: null,
    scenarioId: o.scenario, trialIndex: o.index ?? 0, attempt: 1, status: o.status ?? 'complete', statusReason: o.reason ?? null,
    configKey: `${o.scenario}-${o.cpuMemGb ?? 0}`, options: { model: 'tiny-1b', numUsers: 4, cpuMemGb: o.cpuMemGb ?? 0, gpuMemGb: 0, duration: 3, generationMode: 'fast' },
    seed: 42, startedAt: '2026-11-24T21:13:42.000Z', finishedAt: null, wallMs: 5000, resultsFormat: 'kvbench', sourceFile: null, kvbenchVersion: '0.6.0', measuredByVersion: '0.6.0', storageRamBacking: null, metrics: o.metrics,
  };
}

describe('the reference\'s "storage" throughput and per-request I/O are named after what they count', () => {
  // rev8-gui #6: a CPU-only scenario (storage moved 0 bytes) showed "Storage throughput 167 tok/s" and
  // "Storage I/O per request P95 1,251 ms": both count every tier's cache I/O, as the reference's do.
  const cpuOnly = [
    trial({ scenario: 'cpu-only', cpuMemGb: 1, metrics: { wall_clock_throughput_tok_per_s: 279, storage_throughput_tok_per_s: 167, storage_io_per_request_p95_ms: 1251, storage_read_bytes_per_s: 0, storage_write_bytes_per_s: 0 } }),
  ];

  it('the catalogue names them cache I/O and says which tiers they count; the results-file keys stay', () => {
    const tput = METRIC_BY_KEY.storage_throughput_tok_per_s;
    expect(tput.label).toBe("Cache I/O throughput (the reference's storage_throughput)");
    expect(tput.description).toMatch(/every read and write of a request on whichever tier served it \(GPU, CPU or storage\)/);
    expect(tput.description).toContain('storage_throughput_tokens_per_sec');
    const io = METRIC_BY_KEY.storage_io_per_request_p95_ms;
    expect(io.label).toBe('Cache I/O per request P95');
    expect(io.description).toMatch(/on every tier \(GPU, CPU and storage/);
    for (const m of [tput, io]) expect(`${m.label} ${m.description}`).not.toMatch(/storage times|Storage I\/O/);
  });

  it('kvbench report uses those names in the scenario table and the tier comparison', () => {
    const r = buildScenarioReport(cpuOnly);
    const text = formatScenarioReport(r);
    expect(text).toContain("Cache I/O throughput (the reference's storage_throughput) (tok/s)");
    expect(text).toContain('Cache I/O per request P95 (ms)');
    expect(text).not.toMatch(/Storage throughput|Storage I\/O per request/);
    const tiers = formatTierComparison(buildTierComparison(r, null));
    expect(tiers).toMatch(/^scenario\s.*\scache I\/O tok\/s\s/m);
    expect(tiers).not.toContain('stor tok/s');
    expect(tiers).toContain("cache I/O tok/s: the reference's storage throughput (storage_throughput_tokens_per_sec): generated tokens ÷ the summed cache I/O time of every tier");
  });
});

describe('efficiency where a tier moved no bytes (rev8-gui #13a)', () => {
  it('is none, with the reason, rather than a measured-looking 0 %; in the text report too', () => {
    // A CPU-only scenario: the storage tier read and wrote 0 B/s, so 0 ÷ the drive's limit is no measurement of the drive.
    const ts = [
      ...[363, 279].map((v, i) => trial({ scenario: 'cpu-only', cpuMemGb: 1, index: i, metrics: { wall_clock_throughput_tok_per_s: v, storage_read_bytes_per_s: 0, storage_write_bytes_per_s: 0, cpu_read_bytes_per_s: 5e9 } })),
      ...[404, 319].map((v, i) => trial({ scenario: 'storage-only', index: i, metrics: { wall_clock_throughput_tok_per_s: v, storage_read_bytes_per_s: 1e9, storage_write_bytes_per_s: 0.3e9, cpu_read_bytes_per_s: 0 } })),
    ];
    const t = buildTierComparison(buildScenarioReport(ts), fakeHardware({ probe: true }));
    const cpu = t.rows.find((r) => r.scenarioId === 'cpu-only')!;
    const sto = t.rows.find((r) => r.scenarioId === 'storage-only')!;
    expect(cpu.storageReadEfficiency).toBeNull();
    expect(cpu.storageWriteEfficiency).toBeNull();
    expect(cpu.storageReadEfficiencyNote).toBe('the storage tier read no bytes (0 B/s): nothing of the drive to measure');
    expect(cpu.storageWriteEfficiencyNote).toBe('the storage tier wrote no bytes (0 B/s): nothing of the drive to measure');
    expect(cpu.cpuReadEfficiency).toBeCloseTo(0.5, 9);
    expect(cpu.cpuReadEfficiencyNote).toBeNull();
    // A tier that moved bytes keeps its efficiency; one that read none from memory has none either.
    expect(sto.storageReadEfficiency).toBeCloseTo(0.5, 9);
    expect(sto.storageReadEfficiencyNote).toBeNull();
    expect(sto.cpuReadEfficiency).toBeNull();
    expect(sto.cpuReadEfficiencyNote).toBe('the CPU tier read no bytes (0 B/s): nothing of the memory to measure');
    const text = formatTierComparison(t);
    const cpuLine = text.split('\n').find((l) => l.startsWith('cpu-only'))!;
    expect(cpuLine).toMatch(/0\.0 MB\/s\s+—\s+—$/);
    expect(text).not.toMatch(/\s0\.0%/);
    expect(text).toContain('note: cpu-only: the storage tier read and wrote no bytes: no storage efficiency (—), not 0 %');
    const noProbe = buildTierComparison(buildScenarioReport(ts), null);
    expect(noProbe.rows.find((r) => r.scenarioId === 'storage-only')!.storageReadEfficiencyNote).toBe('no bandwidth probe of the drive');
    expect(noProbe.rows.find((r) => r.scenarioId === 'cpu-only')!.storageReadEfficiencyNote).toBe('the storage tier read no bytes (0 B/s): nothing of the drive to measure');
  });
});
