// How the report model and `kvbench report` present what they measured (review rev8-gui #6, #13):
// names that say what a metric counts, no efficiency where a tier moved nothing, a trial count that
// agrees with the medians beside it, and the probe's time apart from its source.
import { describe, expect, it } from 'vitest';
import { buildScenarioReport, buildTierComparison, limitsSourceText } from '../../../src-main/export/report-model.ts';
import { formatScenarioReport, formatTierComparison } from '../../../src-main/export/render-text.ts';
import { METRIC_BY_KEY, type TrialRecord, type TrialRowStatus } from '../../../src-shared/domain/store-types.ts';
import { fakeHardware } from '../store/fixtures.ts';

let nextId = 1;
function trial(o: { scenario: string; status?: TrialRowStatus; reason?: string; metrics: Record<string, number>; cpuMemGb?: number; index?: number }): TrialRecord {
  const id = nextId++;
  return {
    id, runId: 1, suiteId: 1, suiteLabel: null, systemId: 'sys-a', systemLabel: 'sys-a', driveId: null, driveLabel: null,
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
    expect(tput.label).toBe("Cache I/O throughput");
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
    expect(text).toContain("Cache I/O throughput (tok/s)");
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

describe('the tier comparison\'s trial count agrees with the medians beside it (rev8-gui #13c)', () => {
  // Suite 2 of the review, "Count partial trials too": CPU + storage trial 1 was partial with no
  // request completed, so it has bytes, bandwidths and tier latencies but no throughput or request
  // latency. The scenario table said n = 1 for the throughput; the tier comparison said n = 2.
  const complete = trial({ scenario: 'cpu-storage', cpuMemGb: 0.25, index: 1, metrics: {
    wall_clock_throughput_tok_per_s: 147, storage_throughput_tok_per_s: 48.54, cpu_read_p95_ms: 640, storage_read_p95_ms: 1114.9, storage_write_p95_ms: 624,
    total_read_bytes: 968e6, total_write_bytes: 472e6, storage_read_bytes_per_s: 46.1e6, storage_write_bytes_per_s: 122e6, cpu_read_bytes_per_s: 200e6,
  } });
  const partial = trial({ scenario: 'cpu-storage', cpuMemGb: 0.25, index: 0, status: 'partial', reason: 'no request completed in the 3.0 s measured window', metrics: {
    cpu_read_p95_ms: 2091.6, storage_write_p95_ms: 2056.3, storage_read_bytes_per_s: 0, storage_write_bytes_per_s: 48.1e6, cpu_read_bytes_per_s: 129.7e6,
  } });

  it('a row whose medians are over fewer trials than it aggregates says which, over how many, in the row and the text report', () => {
    const r = buildScenarioReport([partial, complete], { includeIncomplete: true });
    const s = r.scenarios[0];
    expect(s.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.aggregate.n).toBe(1);
    const t = buildTierComparison(r, null);
    const row = t.rows[0];
    expect(row.n).toBe(2);
    expect(row.fewestTrials).toBe(1);
    expect(row.trialsNote).toBe(
      "Wall-clock throughput, Cache I/O throughput, Storage read P95, Total bytes read and Total bytes written: medians of 1 of the 2 trials (the other recorded none)",
    );
    const text = formatTierComparison(t);
    expect(text).toMatch(/^cpu-storage\s+4\s+0\s+0\.25\s+1–2\s+147\s/m);
    expect(text).toContain(`note: cpu-storage: n 1–2: ${row.trialsNote}`);
    // Without the partial trial every median is over the row's one trial: nothing to say.
    const only = buildTierComparison(buildScenarioReport([partial, complete]), null).rows[0];
    expect([only.n, only.fewestTrials, only.trialsNote]).toEqual([1, 1, null]);
  });
});

describe('the probe\'s time beside the limits (rev8-gui #13d)', () => {
  it('is apart from the source, for each reader to show in its own format; the text report and exports still give it', () => {
    const ts = [trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 300, storage_read_bytes_per_s: 1e9, storage_write_bytes_per_s: 0.3e9 } })];
    const t = buildTierComparison(buildScenarioReport(ts), fakeHardware({ probe: true }));
    expect(t.probe.source).toBe('kvbench probe (O_DIRECT, 16 MiB × 16) of virtual disk vda (256 GiB)');
    expect(t.probe.measuredAt).toBe('2026-11-01T00:00:00.000Z');
    expect(limitsSourceText(t.probe)).toBe('kvbench probe (O_DIRECT, 16 MiB × 16) of virtual disk vda (256 GiB), 2026-11-01T00:00:00.000Z');
    expect(formatTierComparison(t)).toContain('(kvbench probe (O_DIRECT, 16 MiB × 16) of virtual disk vda (256 GiB), 2026-11-01T00:00:00.000Z)');
    // A stated write keeps the probe's read, and its time; both stated use no probe, so no time.
    const oneStated = buildTierComparison(buildScenarioReport(ts), fakeHardware({ probe: true }), { readBytesPerS: null, writeBytesPerS: 2e9 });
    expect(oneStated.probe.source).toBe('stated by the user (write 2.00 GB/s); the other direction: kvbench probe (O_DIRECT, 16 MiB × 16) of virtual disk vda (256 GiB)');
    expect(oneStated.probe.measuredAt).toBe('2026-11-01T00:00:00.000Z');
    expect(buildTierComparison(buildScenarioReport(ts), fakeHardware({ probe: true }), { readBytesPerS: 7e9, writeBytesPerS: 2e9 }).probe.measuredAt).toBeNull();
  });
});

describe("a drive's size in its name (rev12-gui M4)", () => {
  it('goes with its byte count into the report and the probe\'s source, for the app to restate; the text stays the CLI\'s', () => {
    const gib256 = 256 * 1024 ** 3;
    const hw = fakeHardware({ probe: true });
    hw.cacheDir = { ...hw.cacheDir!, blockDevice: { name: 'vda', disks: ['vda'], model: null, serial: null, wwid: null, rotational: null, logicalBlockBytes: 512, physicalBlockBytes: 512, sizeBytes: gib256, media: 'virtual', backingFile: null } };
    const ts = [{ ...trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 300 } }), driveId: 'drv-vda', driveLabel: 'virtual disk vda (256 GiB)', driveSizeBytes: gib256 }];
    const r = buildScenarioReport(ts);
    expect(r.scenarios[0]).toMatchObject({ driveLabel: 'virtual disk vda (256 GiB)', driveSizeBytes: gib256 });
    const t = buildTierComparison(r, hw);
    expect(t.rows[0]).toMatchObject({ driveLabel: 'virtual disk vda (256 GiB)', driveSizeBytes: gib256 });
    expect(t.probe.source).toBe('kvbench probe (O_DIRECT, 16 MiB × 16) of virtual disk vda (256 GiB)');
    expect(t.probe.sourceSizes).toEqual([{ bytes: gib256, text: '256 GiB' }]);
    // A snapshot whose drive size is not the one its name states: nothing to restate.
    hw.cacheDir.blockDevice!.sizeBytes = 100e9;
    expect(buildTierComparison(r, hw).probe.sourceSizes).toEqual([]);
  });
});
