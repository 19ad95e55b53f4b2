import { describe, expect, it } from 'vitest';
import { buildScenarioReport, buildSystemComparison, buildTierComparison, metricOf, pooledLatency } from '../../../src-main/export/report-model.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { formatComparison, formatScenarioReport, formatTierComparison } from '../../../src-main/export/render-text.ts';
import { LatencyHistogram } from '../../../src-main/engine/metrics/latency-histogram.ts';
import { Rng } from '../../../src-main/engine/workload/rng.ts';
import type { TrialRecord, TrialRowStatus } from '../../../src-shared/domain/store-types.ts';
import { fakeHardware } from '../store/fixtures.ts';
import { DEFAULT_RUN_OPTIONS } from '../../../src-shared/domain/run-options.ts';
import { EFFICIENCY_NOISE_CEILING } from '../../../src-shared/domain/results.ts';

let nextId = 1;
function trial(o: { scenario: string; status?: TrialRowStatus; metrics: Record<string, number>; options?: Record<string, unknown>; system?: string; drive?: string; configKey?: string; index?: number; version?: string; sourceFile?: string; measuredBy?: string | null; ramBacking?: string | null }): TrialRecord {
  const id = nextId++;
  return {
    id, runId: 1, suiteId: 1, suiteLabel: null, systemId: o.system ?? 'sys-a', systemLabel: o.system ?? 'sys-a', driveId: o.drive ?? null, driveLabel: o.drive ? `${o.drive} label` : null,
    scenarioId: o.scenario, trialIndex: o.index ?? 0, attempt: 1, status: o.status ?? 'complete', statusReason: o.status && o.status !== 'complete' ? 'engine crashed' : null,
    configKey: o.configKey ?? o.scenario, options: o.options ?? { model: 'llama3.1-8b', numUsers: 50, cpuMemGb: 0, gpuMemGb: 0, duration: 60, generationMode: 'none' },
    seed: 42, startedAt: `2026-11-01T00:00:0${id % 10}.000Z`, finishedAt: null, wallMs: 1000, resultsFormat: 'kvbench', sourceFile: o.sourceFile ?? null, kvbenchVersion: o.version ?? '0.1.0', measuredByVersion: o.measuredBy !== undefined ? o.measuredBy : (o.version ?? '0.1.0'), storageRamBacking: o.ramBacking ?? null, metrics: o.metrics,
  };
}

describe('scenario report', () => {
  it('medians and P95s across complete trials; incomplete ones listed and excluded', () => {
    // 003's GPU+CPU+NVMe: trial 1 incomplete (438/549 requests) must not drag the aggregate.
    const ts = [
      trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 266, storage_read_p95_ms: 350 } }),
      trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 261, storage_read_p95_ms: 360 } }),
      trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 262, storage_read_p95_ms: 370 } }),
      trial({ scenario: 'storage-only', status: 'partial', metrics: { wall_clock_throughput_tok_per_s: 10 } }),
      trial({ scenario: 'storage-only', status: 'failed', metrics: {} }),
      trial({ scenario: 'cpu-only', metrics: { wall_clock_throughput_tok_per_s: 1000 } }),
    ];
    const r = buildScenarioReport(ts);
    expect(r.scenarios.map((s) => s.scenarioId)).toEqual(['cpu-only', 'storage-only']); // suite order
    const s = r.scenarios[1];
    expect(s.trialsTotal).toBe(5);
    expect(s.trialIds).toHaveLength(3);
    expect(s.excluded.map((x) => x.status)).toEqual(['partial', 'failed']);
    const tput = metricOf(s, 'wall_clock_throughput_tok_per_s')!;
    expect(tput).toMatchObject({ n: 3, median: 262 });
    expect(tput.p95).toBeCloseTo(265.6, 9);
    expect(tput.cv).toBeCloseTo(0.01006, 4);
    // A latency percentile is aggregated as a distribution of per-trial P95s, never averaged.
    expect(metricOf(s, 'storage_read_p95_ms')).toMatchObject({ n: 3, median: 360 });
    expect(buildScenarioReport(ts, { includeIncomplete: true }).scenarios[1].trialIds).toHaveLength(4);
    const text = formatScenarioReport(r);
    expect(text).toMatch(/trials: 3 aggregated of 5/);
    expect(text).toMatch(/! trial #1 \(id \d+\) PARTIAL, excluded: engine crashed/);
    expect(text).toMatch(/Wall-clock throughput \(tok\/s\)\s+3\s+262\s+266\s+1\.0%/);
  });

  it('never aggregates trials of different systems or drives together, and names each group when there are several', () => {
    const ts = [
      ...[100, 110, 120].map((v) => trial({ scenario: 'storage-only', system: 'lab1', drive: 'nvme', metrics: { wall_clock_throughput_tok_per_s: v } })),
      ...[1000, 1100].map((v) => trial({ scenario: 'storage-only', system: 'lab2', drive: 'nvme', metrics: { wall_clock_throughput_tok_per_s: v } })),
      trial({ scenario: 'storage-only', system: 'lab1', drive: 'sata', metrics: { wall_clock_throughput_tok_per_s: 10 } }),
    ];
    const r = buildScenarioReport(ts);
    expect(r.scenarios.map((s) => [s.systemLabel, s.driveLabel, s.trialIds.length, metricOf(s, 'wall_clock_throughput_tok_per_s')!.median])).toEqual([
      ['lab1', 'nvme label', 3, 110],
      ['lab1', 'sata label', 1, 10],
      ['lab2', 'nvme label', 2, 1050],
    ]);
    const text = formatScenarioReport(r);
    expect(text).toContain('— on lab1 · nvme label');
    expect(text).toContain('— on lab2 · nvme label');
    const tiers = buildTierComparison(r, null);
    expect(tiers.rows.map((x) => [x.systemLabel, x.driveLabel])).toEqual([['lab1', 'nvme label'], ['lab1', 'sata label'], ['lab2', 'nvme label']]);
    expect(formatTierComparison(tiers)).toMatch(/^system\s+scenario/m);
    expect(formatTierComparison(tiers)).toMatch(/^lab2 · nvme label\s+storage-only/m);
    // One system and drive (one suite): the output is as it always was, nothing named.
    const single = buildScenarioReport(ts.slice(0, 3));
    expect(formatScenarioReport(single)).not.toContain('— on ');
    expect(formatTierComparison(buildTierComparison(single, null))).toMatch(/^scenario\s+users\s+GPU/m);
  });

  it('flags aggregated trials whose storage reads the device did not serve', () => {
    const ts = [
      trial({ scenario: 'storage-only', index: 0, metrics: { wall_clock_throughput_tok_per_s: 266, device_read_coverage: 1.002 } }),
      trial({ scenario: 'storage-only', index: 1, metrics: { wall_clock_throughput_tok_per_s: 900, device_read_coverage: 0.31 } }),
      // Exactly at the threshold passes; a trial without device counters is not accused.
      trial({ scenario: 'storage-only', index: 2, metrics: { wall_clock_throughput_tok_per_s: 262, device_read_coverage: 0.95 } }),
      trial({ scenario: 'storage-only', index: 3, metrics: { wall_clock_throughput_tok_per_s: 262 } }),
      // Another process read the drive too: the device's counters look fine, the engine's own do not.
      trial({ scenario: 'storage-only', index: 4, metrics: { wall_clock_throughput_tok_per_s: 880, device_read_coverage: 1.4, process_read_coverage: 0.02 } }),
      trial({ scenario: 'storage-only', index: 5, metrics: { wall_clock_throughput_tok_per_s: 264, device_read_coverage: 1.4, process_read_coverage: 1.01 } }),
      // On tmpfs there is no block device to count: the trial is flagged by its filesystem, and says
      // what held it in memory; one stored before that was kept says it is not known.
      trial({ scenario: 'storage-only', index: 6, metrics: { wall_clock_throughput_tok_per_s: 5000, storage_ram_backed: 1 }, ramBacking: 'loop0 → /dev/shm/d.img on tmpfs' }),
      trial({ scenario: 'storage-only', index: 7, metrics: { wall_clock_throughput_tok_per_s: 263, storage_ram_backed: 0, device_read_coverage: 1 } }),
      trial({ scenario: 'storage-only', index: 8, metrics: { wall_clock_throughput_tok_per_s: 5000, storage_ram_backed: 1 } }),
    ];
    const s = buildScenarioReport(ts).scenarios[0];
    expect(s.cautions.map((c) => c.trialIndex)).toEqual([1, 4, 6, 8]);
    expect(s.cautions[2].message).toBe('the cache directory was RAM-backed (loop0 → /dev/shm/d.img on tmpfs): its storage numbers describe memory, not a drive');
    expect(s.cautions[3].message).toBe('the cache directory was RAM-backed (backing not recorded by the kvbench that stored it): its storage numbers describe memory, not a drive');
    expect(s.cautions[0].message).toContain('31.0 %');
    expect(s.cautions[1].message).toMatch(/^this process made the block layer read 2\.0 % of the bytes the storage tier reported reading/);
    expect(formatScenarioReport(buildScenarioReport(ts))).toMatch(/! trial #2 \(id \d+\) FLAGGED: the device read 31\.0 %/);
  });

  it('flags trials whose cache directory was on a buffered loop device, whatever the coverage; a loop with direct I/O on is not', () => {
    const ts = [
      // Measured on the disk below the loop: the page cache served nearly everything.
      trial({ scenario: 'storage-only', index: 0, metrics: { wall_clock_throughput_tok_per_s: 900, storage_buffered_loop: 1, page_cache_flagged: 1, storage_direct_io: 1, device_read_coverage: 0.004 } }),
      // The disk's counters include every process's reads: even full coverage does not clear it.
      trial({ scenario: 'storage-only', index: 1, metrics: { wall_clock_throughput_tok_per_s: 300, storage_buffered_loop: 1, page_cache_flagged: 1, storage_direct_io: 1, device_read_coverage: 1.2 } }),
      trial({ scenario: 'storage-only', index: 2, metrics: { wall_clock_throughput_tok_per_s: 264, storage_buffered_loop: 0, page_cache_flagged: 0, storage_direct_io: 1, device_read_coverage: 1.01 } }),
      // RAM-backed says more: one caution, not two.
      trial({ scenario: 'storage-only', index: 3, metrics: { wall_clock_throughput_tok_per_s: 5000, storage_ram_backed: 1, storage_buffered_loop: 0 }, ramBacking: 'tmpfs' }),
    ];
    const s = buildScenarioReport(ts).scenarios[0];
    expect(s.cautions.map((c) => c.trialIndex)).toEqual([0, 1, 3]);
    expect(s.cautions[0].message).toBe(
      "the cache directory was on a loop device with buffered I/O on its backing file (loop/dio 0): the host's page cache may have served its storage reads (device read coverage 0.4 %), " +
        'so its storage read numbers may describe RAM (losetup --direct-io=on avoids it)',
    );
    expect(s.cautions[1].message).toContain('(device read coverage 120.0 %)');
    expect(formatScenarioReport(buildScenarioReport(ts))).toMatch(/! trial #1 \(id \d+\) FLAGGED: the cache directory was on a loop device with buffered I\/O on its backing file \(loop\/dio 0\)/);
  });

  it('flags a trial that spilled past the tiers its scenario names (CPU only reading the drive), and no scenario that names the tier', () => {
    const cpuOnly = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 1, gpuMemGb: 0, duration: 6, generationMode: 'fast' };
    const ts = [
      // The review's smoke trial: a 1 GiB CPU tier, 1.22 GB demoted to the drive and 703 MB read back of 13.3 GB read in all.
      trial({ scenario: 'cpu-only', index: 0, options: cpuOnly, metrics: { wall_clock_throughput_tok_per_s: 555, cpu_read_bytes: 13298343936, cpu_write_bytes: 1991639040, storage_read_bytes: 703389696, storage_write_bytes: 1218584576 } }),
      trial({ scenario: 'cpu-only', index: 1, options: cpuOnly, metrics: { wall_clock_throughput_tok_per_s: 600, cpu_read_bytes: 4.9e9, cpu_write_bytes: 1.1e9, storage_read_bytes: 0, storage_write_bytes: 0 } }),
      // Stored without per-tier bytes: nothing to tell.
      trial({ scenario: 'cpu-only', index: 2, options: cpuOnly, metrics: { wall_clock_throughput_tok_per_s: 610 } }),
      // Storage only has a tiny CPU tier by design, and CPU + storage names the drive: neither spilled.
      trial({ scenario: 'storage-only', index: 0, metrics: { wall_clock_throughput_tok_per_s: 200, cpu_read_bytes: 1e8, storage_read_bytes: 5e9, storage_write_bytes: 1e9 } }),
      trial({ scenario: 'cpu-storage', index: 0, metrics: { wall_clock_throughput_tok_per_s: 300, cpu_read_bytes: 1e9, storage_read_bytes: 5e9, storage_write_bytes: 1e9 } }),
      // GPU only spilling into its CPU tier is as much a spill.
      trial({ scenario: 'gpu-only', index: 0, metrics: { wall_clock_throughput_tok_per_s: 900, gpu_read_bytes: 8e9, gpu_write_bytes: 2e9, cpu_read_bytes: 2e9, cpu_write_bytes: 1e9, storage_read_bytes: 0, storage_write_bytes: 0 } }),
    ];
    const r = buildScenarioReport(ts);
    const cpu = r.scenarios.find((s) => s.scenarioId === 'cpu-only')!;
    expect(cpu.cautions.map((c) => c.trialIndex)).toEqual([0]);
    expect(cpu.cautions[0].message).toBe(
      // Stored without the tier's hits (before 0.8.0, or with --promotion): what moved through it, no share of the reads.
      'spilled past the CPU tier that “CPU only” names: 1.13 GiB written to and 671 MiB read from the storage tier, moved through it (demotions included), so its numbers include the drive\'s',
    );
    expect(cpu.spilledTrials).toBe(1);
    expect(r.scenarios.find((s) => s.scenarioId === 'storage-only')!.cautions).toEqual([]);
    expect(r.scenarios.find((s) => s.scenarioId === 'cpu-storage')!.cautions).toEqual([]);
    const gpu = r.scenarios.find((s) => s.scenarioId === 'gpu-only')!;
    expect(gpu.cautions.map((c) => c.message)).toEqual([
      'spilled past the GPU tier that “GPU only” names: 954 MiB written to and 1.86 GiB read from the CPU tier, moved through it (demotions included), so its numbers include the CPU tier\'s',
    ]);
    expect(formatScenarioReport(r)).toMatch(/! trial #1 \(id \d+\) FLAGGED: spilled past the CPU tier that “CPU only” names/);
    // Excluding flagged trials leaves the spilled one out, counted by its kind.
    const x = buildScenarioReport(ts, { excludeFlagged: true });
    expect(x.excludedFlagged).toMatchObject({ trials: 2, spilled: 2, other: 0 });
    expect(x.scenarios.find((s) => s.scenarioId === 'cpu-only')!.excluded.map((e) => e.flags)).toEqual([['spilled']]);
    // The tier comparison says which row holds the drive's numbers.
    const t = buildTierComparison(r, null);
    expect(t.notes).toContain('cpu-only: 1 of 3 trial(s) spilled past the CPU tier that “CPU only” names: the row\'s numbers include the drive\'s (those trials are flagged)');
  });

  it("says what a spilled tier served by its hits, as a share of the trial's request-level reads, not its reads with the demotions through it", () => {
    // The H200's quick-suite GPU-only trial (review gpu-truth M1): a 4 GiB CPU tier took 26.7 GiB and
    // gave up 24.1 GiB, nearly all of it demoted on to the drive; its hits were at most 0.61 GB of the
    // trial's 684 GB of reads. Before: "24.1 GiB read back from it (3.5 % of the trial's reads)".
    const options = { model: 'llama3.1-8b', numUsers: 50, cpuMemGb: 4, gpuMemGb: 136, duration: 30, generationMode: 'realistic' };
    const metrics = { gpu_read_bytes: 718.37e9, gpu_write_bytes: 96.79e9, cpu_read_bytes: 25.83e9, cpu_write_bytes: 28.66e9, storage_read_bytes: 0, storage_write_bytes: 31.19e9, total_read_bytes: 684.09e9 };
    const hits = { gpu_hit_read_bytes: 683.48e9, cpu_hit_read_bytes: 0.61e9, storage_hit_read_bytes: 0 };
    const s = buildScenarioReport([trial({ scenario: 'gpu-only', options, metrics: { ...metrics, ...hits } })]).scenarios[0];
    expect(s.cautions.map((c) => c.message)).toEqual([
      'spilled past the GPU tier that “GPU only” names: 26.7 GiB written to the CPU tier and 582 MiB read back from it by requests (its hits, 0.09 % of the trial\'s reads; ' +
        '23.5 GiB more left it for other tiers (demotions, promotions)); 29.0 GiB written to the storage tier and 0 B read back from it by requests (its hits, 0.00 % of the trial\'s reads), ' +
        'so its numbers include the CPU tier\'s or the drive\'s',
    ]);
  });

  it('flags capacity trials whose window closed before the autoscaler found a peak', () => {
    const options = { model: 'tiny-1b', numUsers: 2, cpuMemGb: 0, gpuMemGb: 0, duration: 3, generationMode: 'none', enableAutoscaling: true, autoscalerMode: 'capacity' };
    const ts = [
      trial({ scenario: 'capacity-discovery', index: 0, options, metrics: { wall_clock_throughput_tok_per_s: 370, autoscale_peak_throughput_tok_per_s: 568, autoscale_peak_found: 0 } }),
      trial({ scenario: 'capacity-discovery', index: 1, options, metrics: { wall_clock_throughput_tok_per_s: 240, autoscale_peak_throughput_tok_per_s: 672, autoscale_peak_found: 1 } }),
      // Stored before the metric existed: nothing to say.
      trial({ scenario: 'capacity-discovery', index: 2, options, metrics: { wall_clock_throughput_tok_per_s: 250, autoscale_peak_throughput_tok_per_s: 600 } }),
    ];
    const s = buildScenarioReport(ts).scenarios[0];
    expect(s.cautions.map((c) => c.trialIndex)).toEqual([0]);
    expect(formatScenarioReport(buildScenarioReport(ts))).toMatch(
      /! trial #1 \(id \d+\) FLAGGED: the capacity autoscaler found no peak \(the window closed while throughput was still rising\): its peak throughput and users are only the highest seen so far/,
    );
  });

  it('flags qos trials that missed their latency target at the end, or never measured it', () => {
    const options = { model: 'tiny-1b', numUsers: 2, cpuMemGb: 0, gpuMemGb: 0, duration: 10, generationMode: 'none', enableAutoscaling: true, autoscalerMode: 'qos' };
    const ts = [
      trial({ scenario: 'autoscale', index: 0, options, version: '0.6.0', metrics: { wall_clock_throughput_tok_per_s: 100, autoscale_final_users: 2, autoscale_target_met: 0 } }),
      trial({ scenario: 'autoscale', index: 1, options, version: '0.6.0', metrics: { wall_clock_throughput_tok_per_s: 100, autoscale_final_users: 4, autoscale_target_met: 1 } }),
      // From 0.6.0 a qos run without the metric measured no latency in any interval; before, it could not say.
      trial({ scenario: 'autoscale', index: 2, options, version: '0.6.0', metrics: { wall_clock_throughput_tok_per_s: 100, autoscale_final_users: 4 } }),
      trial({ scenario: 'autoscale', index: 3, options, version: '0.5.0', metrics: { wall_clock_throughput_tok_per_s: 100, autoscale_final_users: 4 } }),
    ];
    const s = buildScenarioReport(ts).scenarios[0];
    expect(s.cautions.map((c) => [c.trialIndex, c.message])).toEqual([
      [0, "the qos autoscaler's latency target was not met at the end (the storage P95 was over its threshold in the last interval that measured it): its final users do not fit under the target"],
      [2, 'the qos autoscaler never measured storage latency (in no interval did a storage operation complete or stay in flight past the threshold): its final users rest on no latency sample'],
    ]);
  });

  it('counts a yes/no metric over trials ("2 of 3"): no median of 1s and 0s, no CV (review rev18 L3)', () => {
    const options = { model: 'tiny-1b', numUsers: 2, cpuMemGb: 0, gpuMemGb: 0, duration: 10, generationMode: 'none', enableAutoscaling: true, autoscalerMode: 'qos' };
    const ts = [1, 0, 1].map((met, index) => trial({ scenario: 'autoscale', index, options, version: '0.7.0', metrics: { wall_clock_throughput_tok_per_s: 100, autoscale_target_met: met } }));
    const report = buildScenarioReport(ts);
    const m = report.scenarios[0].metrics.find((x) => x.metric.key === 'autoscale_target_met')!;
    expect(m.aggregate).toEqual({ n: 3, yes: 2, mean: 2 / 3, median: null, p95: null, min: 0, max: 1, cv: null });
    const row = formatScenarioReport(report, { allMetrics: true })
      .split('\n')
      .find((l) => l.includes('Autoscaler latency target met'));
    expect(row).toMatch(/Autoscaler latency target met \(count\)\s+3\s+2 of 3\s+—\s+—\s*$/);
  });

  it("a capacity run's headline is its peak throughput beside the users at that peak, not the overshoot step's final users", () => {
    const capacity = { model: 'tiny-1b', numUsers: 2, cpuMemGb: 0, gpuMemGb: 0, duration: 12, generationMode: 'none', enableAutoscaling: true, autoscalerMode: 'capacity' };
    const qos = { ...capacity, autoscalerMode: 'qos' };
    const ts = [
      ...[[894, 7, 12], [671, 22, 27], [700, 12, 17]].map(([peak, peakUsers, finalUsers], index) =>
        trial({ scenario: 'capacity-discovery', index, options: capacity, version: '0.7.0', metrics: { wall_clock_throughput_tok_per_s: 300, autoscale_peak_throughput_tok_per_s: peak, autoscale_peak_users: peakUsers, autoscale_final_users: finalUsers } }),
      ),
      // Measured by a kvbench of the final users' current definition (from 0.6.0): no "(definition before …)" row.
      trial({ scenario: 'autoscale', options: qos, version: '0.7.0', metrics: { wall_clock_throughput_tok_per_s: 300, autoscale_final_users: 4 } }),
    ];
    const text = formatScenarioReport(buildScenarioReport(ts));
    const [qosPart, capacityPart] = text.split('== Capacity');
    expect(capacityPart).toMatch(/Autoscaler peak users \(users\)\s+3\s+12\s/);
    expect(capacityPart).toMatch(/Autoscaler peak throughput \(tok\/s\)\s+3\s+700\s/);
    expect(capacityPart).not.toContain('Autoscaler final users');
    expect(capacityPart).toContain('(peak throughput and peak users are medians taken apart: the users need not be the median peak\'s own)');
    // A qos run's answer is its final users; with every metric asked for, the capacity run's final users are there too.
    expect(qosPart).toMatch(/Autoscaler final users \(users\)\s+1\s+4\s/);
    expect(qosPart).not.toContain('medians taken apart');
    expect(formatScenarioReport(buildScenarioReport(ts), { allMetrics: true }).split('== Capacity')[1]).toMatch(/Autoscaler final users \(users\)\s+3\s+17\s/);
  });

  it("the tier table gives an autoscaled row's users as at the start → at the end, not the starting count alone", () => {
    const fixed = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 0, gpuMemGb: 0, duration: 4, generationMode: 'none' };
    const qos = { ...fixed, numUsers: 2, enableAutoscaling: true, autoscalerMode: 'qos' };
    const ts = [
      trial({ scenario: 'storage-only', options: fixed, metrics: { wall_clock_throughput_tok_per_s: 600 } }),
      ...[4, 3, 4].map((finalUsers, index) => trial({ scenario: 'autoscale', index, options: qos, metrics: { wall_clock_throughput_tok_per_s: 500, autoscale_final_users: finalUsers } })),
    ];
    const tiers = buildTierComparison(buildScenarioReport(ts), null);
    expect(tiers.rows.map((r) => [r.scenarioId, r.numUsers, r.finalUsers])).toEqual([['storage-only', 4, null], ['autoscale', 2, 4]]);
    const text = formatTierComparison(tiers);
    expect(text).toMatch(/^storage-only\s+4\s/m);
    expect(text).toMatch(/^autoscale\s+2→4\s/m);
    expect(text).toContain("users: simulated users (an autoscaled row: at the start → at the end, the median of its trials' final users);");
    expect(formatTierComparison(buildTierComparison(buildScenarioReport(ts.slice(0, 1)), null))).toContain('users: simulated users; GPU/CPU');
  });

  it('flags stored trials whose measured window closed a stall past its plan', () => {
    // The reviewer's SIGSTOPped trial: 16.9 s for a 4 s plan, stored complete before the engine marked stalls.
    const options = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 0, gpuMemGb: 0, duration: 4, generationMode: 'none' };
    const ts = [
      trial({ scenario: 'storage-only', index: 0, options, version: '0.3.0', metrics: { wall_clock_throughput_tok_per_s: 16.85, elapsed_s: 16.9 } }),
      trial({ scenario: 'storage-only', index: 1, options, version: '0.3.0', metrics: { wall_clock_throughput_tok_per_s: 600, elapsed_s: 4.04 } }),
      // Just under the threshold; and a 0.1.0 window, which drained in-flight requests inside it.
      trial({ scenario: 'storage-only', index: 2, options, version: '0.3.0', metrics: { wall_clock_throughput_tok_per_s: 590, elapsed_s: 8.9 } }),
      trial({ scenario: 'storage-only', index: 3, options, version: '0.1.0', metrics: { wall_clock_throughput_tok_per_s: 580, elapsed_s: 12 } }),
      // Partial (the engine's own verdict), included on request: flagged too.
      trial({ scenario: 'storage-only', index: 4, options, version: '0.3.0', status: 'partial', metrics: { wall_clock_throughput_tok_per_s: 20, elapsed_s: 14 } }),
    ];
    const s = buildScenarioReport(ts, { includeIncomplete: true }).scenarios[0];
    // Trial 4 once for being partial (its reason: the engine crashed) and once for its late window.
    expect(s.cautions.map((c) => c.trialIndex)).toEqual([0, 4, 4]);
    expect(s.cautions[0].message).toMatch(/^the engine stalled \(the measured window closed 12\.9 s after its planned 4\.0 s\)/);
    expect(s.cautions[2].message).toMatch(/^the engine stalled \(the measured window closed 10\.0 s after its planned 4\.0 s\)/);
    expect(buildScenarioReport(ts).scenarios[0].cautions.map((c) => c.trialIndex)).toEqual([0]);
  });

  it('a partial trial counted on request keeps its status and reason beside the medians, and the tier comparison says it counts partial trials', () => {
    // The reviewer's SIGSTOPped engine: its event loop blocked 6.1 s, its window closed on time.
    const options = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 0, gpuMemGb: 0, duration: 12, generationMode: 'none' };
    const stalled = 'the engine stalled (its event loop was blocked for 6.1 s at once): its process was stopped, swapped out, starved of CPU or blocked in the kernel, so the window\'s rates are not the device\'s';
    const ts = [
      { ...trial({ scenario: 'storage-only', index: 0, options, version: '0.3.0', status: 'partial', metrics: { wall_clock_throughput_tok_per_s: 241, elapsed_s: 12.01 } }), statusReason: `${stalled}\nmore detail` },
      trial({ scenario: 'storage-only', index: 1, options, version: '0.3.0', metrics: { wall_clock_throughput_tok_per_s: 477, elapsed_s: 12.01 } }),
    ];
    const counted = buildScenarioReport(ts, { includeIncomplete: true });
    expect(counted.scenarios[0].trialIds).toHaveLength(2);
    // One caution: its own reason already says the engine stalled, so the late-window check adds nothing.
    expect(counted.scenarios[0].cautions).toEqual([{ trialId: ts[0].id, trialIndex: 0, message: `counted although partial: ${stalled}` }]);
    expect(formatScenarioReport(counted)).toContain(`! trial #1 (id ${ts[0].id}) FLAGGED: counted although partial: the engine stalled (its event loop was blocked for 6.1 s at once)`);
    expect(formatTierComparison(buildTierComparison(counted, null))).toMatch(/^Tier comparison \(medians across complete and partial trials;/);
    // Left out by default: listed as excluded, nothing flagged.
    const byDefault = buildScenarioReport(ts);
    expect(byDefault.scenarios[0].cautions).toEqual([]);
    expect(byDefault.scenarios[0].excluded.map((x) => x.trialIndex)).toEqual([0]);
  });

  it('pools latency by merging HDR histograms', () => {
    const a = new LatencyHistogram();
    const b = new LatencyHistogram();
    for (let i = 1; i <= 100; i++) a.record(i * 1e6); // 1..100 ms
    for (let i = 1; i <= 100; i++) b.record(1000e6); // 1 s
    const p = pooledLatency('end_to_end', [
      { name: 'end_to_end', unit: 'ns', count: 100, sumNs: a.sumNs, hdr: a.encode() },
      { name: 'end_to_end', unit: 'ns', count: 100, sumNs: b.sumNs, hdr: b.encode() },
    ])!;
    expect(p.count).toBe(200);
    expect(p.p50Ms).toBeCloseTo(100, 0); // the median of the merged distribution, not the mean of 50 and 1000
    expect(p.p95Ms).toBeCloseTo(1000, -1);
  });

  it('says when a stored histogram does not decode, instead of dropping that latency unsaid', () => {
    // review rev7 #6: a damaged import's histogram vanished from "pooled" with no word.
    const good = new LatencyHistogram();
    for (let i = 1; i <= 100; i++) good.record(i * 1e6);
    const ok = { name: 'end_to_end', unit: 'ns' as const, count: 100, sumNs: good.sumNs, hdr: good.encode() };
    const damaged = { ...ok, hdr: 'abc' };
    // Measured by this kvbench: the current definition of end_to_end, one pool per group.
    const now = (scenario: string, tokPerS: number) => trial({ scenario, version: KVBENCH_VERSION, metrics: { wall_clock_throughput_tok_per_s: tokPerS } });
    const ts = [now('cpu-only', 1), now('cpu-only', 2), now('storage-only', 3)];
    const stored = new Map([[ts[0].id, [ok]], [ts[1].id, [damaged]], [ts[2].id, [damaged]]]);
    const r = buildScenarioReport(ts, { histogramsOf: (id) => stored.get(id) ?? [] });
    expect(r.scenarios.map((x) => x.pooled)).toEqual([
      [{ name: 'end_to_end', trials: 1, damagedTrials: 1, count: 100, p50Ms: expect.closeTo(50, 0), p95Ms: expect.closeTo(95, 0), p99Ms: expect.closeTo(99, 0), olderDefinition: null }],
      [{ name: 'end_to_end', trials: 0, damagedTrials: 1, count: 0, p50Ms: null, p95Ms: null, p99Ms: null, olderDefinition: null }],
    ]);
    const text = formatScenarioReport(r);
    expect(text.match(/end_to_end: 1 trial's histogram does not decode \(damaged in the database\): left out of these percentiles/g)).toHaveLength(2);
    expect(text).toMatch(/end_to_end +0 +0 +— +— +—/); // 0 trials pooled, 0 samples
  });
});

describe('tier comparison', () => {
  it("an autoscaled row's final users are the current definition's median, and the row says what it left out (rev13-upgrade #3)", () => {
    const options = { model: 'tiny-1b', numUsers: 2, cpuMemGb: 0, gpuMemGb: 0, duration: 12, generationMode: 'none', enableAutoscaling: true, autoscalerMode: 'qos' };
    const at = (version: string, users: number, index: number) => trial({ scenario: 'autoscale', index, options, version, metrics: { wall_clock_throughput_tok_per_s: 100, autoscale_final_users: users } });
    const mixed = buildTierComparison(buildScenarioReport([at('0.5.0', 40, 0), at('0.5.0', 44, 1), at('0.6.0', 6, 2), at('0.7.0', 8, 3)]), null);
    expect(mixed.rows[0]).toMatchObject({ finalUsers: 7, n: 4, fewestTrials: 2 });
    expect(mixed.rows[0].trialsNote).toBe('Autoscaler final users: median of the 2 of the 4 trials measured by kvbench 0.6.0 or later (2 measured before it changed the definition are left out of it)');
    const old = buildTierComparison(buildScenarioReport([at('0.5.0', 40, 0), at('0.5.0', 44, 1)]), null);
    expect(old.rows[0]).toMatchObject({ finalUsers: 42, n: 2, fewestTrials: 2, trialsNote: null });
    expect(old.notes.filter((n) => n.startsWith('autoscale: Autoscaler final users (autoscale_final_users): all 2 trials were measured before kvbench 0.6.0 changed its definition'))).toHaveLength(1);
  });

  it('speedup against storage-only and efficiency against the probed limits', () => {
    const ts = [
      ...[1691, 1501, 1879].map((v) => trial({ scenario: 'cpu-only', metrics: { wall_clock_throughput_tok_per_s: v, storage_throughput_tok_per_s: v, cpu_read_p95_ms: 15.7, cpu_read_bytes_per_s: 5e9 } })),
      ...[266, 261, 262].map((v) => trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: v, storage_throughput_tok_per_s: v, storage_read_p95_ms: 358.2, storage_read_bytes_per_s: 1e9, storage_write_bytes_per_s: 0.3e9, total_read_bytes: 94e9 } })),
    ];
    const t = buildTierComparison(buildScenarioReport(ts), fakeHardware({ probe: true }));
    expect(t.baseline).toBe('storage-only');
    const cpu = t.rows.find((r) => r.scenarioId === 'cpu-only')!;
    const sto = t.rows.find((r) => r.scenarioId === 'storage-only')!;
    expect(sto.speedupWallClock).toBe(1);
    expect(cpu.speedupWallClock).toBeCloseTo(1691 / 262, 9);
    expect(cpu.cpuReadEfficiency).toBeCloseTo(0.5, 9); // 5 GB/s of a 10 GB/s memory copy
    expect(sto.storageReadEfficiency).toBeCloseTo(0.5, 9); // 1 GB/s of a 2 GB/s drive
    expect(sto.storageWriteEfficiency).toBeCloseTo(0.2, 9);
    expect(sto.bytesRead).toBe(94e9);
    expect(formatTierComparison(t)).toMatch(/cpu-only .* 6\.45x/);
    const noProbe = buildTierComparison(buildScenarioReport(ts), null);
    expect(noProbe.rows[0].storageReadEfficiency).toBeNull();
    expect(noProbe.notes.join()).toMatch(/no bandwidth probe/);

    // A datasheet's bandwidth instead of the probe: read 4 GB/s stated, write still the probe's.
    const stated = buildTierComparison(buildScenarioReport(ts), fakeHardware({ probe: true }), { readBytesPerS: 4e9, writeBytesPerS: null });
    const st = stated.rows.find((r) => r.scenarioId === 'storage-only')!;
    expect(st.storageReadEfficiency).toBeCloseTo(0.25, 9);
    expect(st.storageWriteEfficiency).toBeCloseTo(0.2, 9);
    expect(stated.probe.source).toMatch(/^stated by the user \(read 4\.00 GB\/s\); the other direction: kvbench probe/);
    // Stated alone, with no probe at all: efficiency exists, and no "no probe" note.
    const statedOnly = buildTierComparison(buildScenarioReport(ts), null, { readBytesPerS: 2e9, writeBytesPerS: 1.5e9 });
    expect(statedOnly.rows.find((r) => r.scenarioId === 'storage-only')!.storageReadEfficiency).toBeCloseTo(0.5, 9);
    expect(statedOnly.notes.join()).not.toMatch(/no bandwidth probe/);
    expect(statedOnly.probe.source).toBe('stated by the user (read 2.00 GB/s, write 1.50 GB/s)');

    // A run faster than its ceiling (a probe taken under other load): the note says the ceiling is off.
    expect(t.notes.join()).not.toMatch(/moved more than the drive's bandwidth/);
    const low = buildTierComparison(buildScenarioReport(ts), null, { readBytesPerS: 0.6e9, writeBytesPerS: null });
    expect(low.rows.find((r) => r.scenarioId === 'storage-only')!.storageReadEfficiency).toBeCloseTo(1e9 / 0.6e9, 9);
    expect(low.notes.join()).toMatch(/1 row\(s\) moved more than the drive's bandwidth the efficiency is measured against \(storage-only: read 167 %, write —\): that ceiling is too low/);
    // The same noise ceiling as the engine's own note (review rev7-code #7): 107 % is noise in both, 111 % in neither.
    const noteAt = (efficiency: number): boolean =>
      buildTierComparison(buildScenarioReport(ts), null, { readBytesPerS: 1e9 / efficiency, writeBytesPerS: null }).notes.some((n) => n.includes('ceiling is too low'));
    expect([noteAt(1.07), noteAt(EFFICIENCY_NOISE_CEILING), noteAt(1.11)]).toEqual([false, false, true]);

    // Trials on tmpfs get no storage efficiency, probe or not; the note names the backing as the trials recorded it (these, none).
    const onRam = ts.map((t) => (t.scenarioId === 'storage-only' ? { ...t, metrics: { ...t.metrics, storage_ram_backed: 1 } } : t));
    const ram = buildTierComparison(buildScenarioReport(onRam), fakeHardware({ probe: true }));
    expect(ram.rows.find((r) => r.scenarioId === 'storage-only')!.storageReadEfficiency).toBeNull();
    expect(ram.notes).toContain('1 row(s) ran on a RAM-backed cache directory (backing not recorded by the kvbench that stored it): no storage efficiency there');
    const onLoop = onRam.map((t) => (t.scenarioId === 'storage-only' ? { ...t, storageRamBacking: 'loop0 → /dev/shm/d.img on tmpfs' } : t));
    expect(buildTierComparison(buildScenarioReport(onLoop), fakeHardware({ probe: true })).notes).toContain('1 row(s) ran on a RAM-backed cache directory (loop0 → /dev/shm/d.img on tmpfs): no storage efficiency there');
  });

  it('refuses a stated bandwidth for rows of several drives: one datasheet describes one drive', () => {
    const ts = [
      trial({ scenario: 'storage-only', drive: 'a', metrics: { wall_clock_throughput_tok_per_s: 100, storage_read_bytes_per_s: 1e9 } }),
      trial({ scenario: 'storage-only', drive: 'b', metrics: { wall_clock_throughput_tok_per_s: 50, storage_read_bytes_per_s: 5e8 } }),
    ];
    expect(() => buildTierComparison(buildScenarioReport(ts), null, { readBytesPerS: 2e9, writeBytesPerS: null })).toThrow(/a stated bandwidth describes one drive/);
  });

  it('over several suites, each row is compared with the storage-only row of its own model, duration and generation mode', () => {
    const smoke = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 1, gpuMemGb: 0, duration: 3, generationMode: 'fast' };
    const standard = { model: 'llama3.1-8b', numUsers: 50, cpuMemGb: 8, gpuMemGb: 0, duration: 180, generationMode: 'realistic' };
    const seventy = { ...standard, model: 'llama3.1-70b-instruct' };
    const ts = [
      trial({ scenario: 'storage-only', configKey: 'smoke-s', options: { ...smoke, cpuMemGb: 0.125 }, metrics: { wall_clock_throughput_tok_per_s: 1000 } }),
      trial({ scenario: 'cpu-only', configKey: 'smoke-c', options: smoke, metrics: { wall_clock_throughput_tok_per_s: 1500 } }),
      trial({ scenario: 'storage-only', configKey: 'std-s', options: { ...standard, cpuMemGb: 0.5 }, metrics: { wall_clock_throughput_tok_per_s: 100 } }),
      trial({ scenario: 'cpu-only', configKey: 'std-c', options: standard, metrics: { wall_clock_throughput_tok_per_s: 500 } }),
      trial({ scenario: 'cpu-only', configKey: '70b-c', options: seventy, metrics: { wall_clock_throughput_tok_per_s: 50 } }),
    ];
    const t = buildTierComparison(buildScenarioReport(ts), null);
    const speedups = Object.fromEntries(t.rows.map((r) => [`${r.scenarioId} ${r.configDescription.split(',')[0]}`, r.speedupWallClock]));
    expect(speedups).toEqual({
      'storage-only tiny-1b': 1,
      'storage-only llama3.1-8b': 1,
      'cpu-only tiny-1b': 1.5,
      'cpu-only llama3.1-8b': 5,
      'cpu-only llama3.1-70b-instruct': null,
    });
    expect(t.notes).toContain('1 row(s) have no storage-only run of the same configuration apart from the tier budgets (users, duration, warm-up, I/O options …): no speedup');
    expect(t.notes.join('\n')).toMatch(/^cpu-only, llama3\.1-70b-instruct, .*: no storage-only run of this configuration \(the nearest differs in --model llama3\.1-70b-instruct vs llama3\.1-8b\)$/m);
    expect(formatTierComparison(t)).toMatch(/^Tier comparison \(medians across complete trials;/);
    const withPartial = buildTierComparison(buildScenarioReport(ts, { includeIncomplete: true }), null);
    expect(formatTierComparison(withPartial)).toMatch(/^Tier comparison \(medians across complete and partial trials;/);
  });

  it("the suite's high-user scenarios are compared with its one storage-only run at other users, and say so", () => {
    const opts = (numUsers: number, cpuMemGb: number) => ({ model: 'tiny-1b', numUsers, cpuMemGb, gpuMemGb: 0, duration: 3, generationMode: 'fast' });
    const suite = [
      trial({ scenario: 'storage-only', configKey: 's4', options: opts(4, 0.125), metrics: { wall_clock_throughput_tok_per_s: 100, storage_throughput_tok_per_s: 50 } }),
      trial({ scenario: 'cpu-storage', configKey: 'cs8', options: opts(8, 0.5), metrics: { wall_clock_throughput_tok_per_s: 300, storage_throughput_tok_per_s: 75 } }),
    ];
    const t = buildTierComparison(buildScenarioReport(suite), null);
    const row = t.rows.find((r) => r.scenarioId === 'cpu-storage')!;
    expect([row.speedupWallClock, row.speedupStorageMetric, row.speedupBaselineUsers]).toEqual([3, 1.5, 4]);
    expect(row.baselineNote).toBe('against storage-only at 4 users (this row: 8): the ratio includes the load difference');
    expect(t.rows.find((r) => r.scenarioId === 'storage-only')!.speedupBaselineUsers).toBeNull();
    expect(t.notes.join('\n')).toMatch(/^cpu-storage, .*: speedup against storage-only at 4 users \(this row: 8\)/m);
    const text = formatTierComparison(t);
    expect(text).toMatch(/^cpu-storage\s+8\s+0\s+0\.5\s+1\s+[\d,.]+\s+3\.00x†/m);
    expect(text).toMatch(/† against a storage-only run at other users/);
    // Two storage-only runs at other users, neither at this row's: no single baseline, no speedup.
    const two = buildTierComparison(
      buildScenarioReport([...suite, trial({ scenario: 'storage-only', configKey: 's16', options: opts(16, 0.125), metrics: { wall_clock_throughput_tok_per_s: 400 } })]),
      null,
    );
    expect(two.rows.find((r) => r.scenarioId === 'cpu-storage')!.speedupWallClock).toBeNull();
  });

  it('each row is measured against the storage-only run of its own configuration apart from the tier budgets: other users or warm-up are no baseline', () => {
    // review #1: two suites on one system differing only in users; the 50-user rows were measured against the 4-user storage-only one.
    const opts = (numUsers: number, cpuMemGb: number, extra: Record<string, unknown> = {}) => ({ model: 'tiny-1b', numUsers, cpuMemGb, gpuMemGb: 0, duration: 3, generationMode: 'fast', ...extra });
    const ts = [
      ...[100, 100].map((v) => trial({ scenario: 'storage-only', configKey: 's4', options: opts(4, 0.125), metrics: { wall_clock_throughput_tok_per_s: v } })),
      ...[200, 200].map((v) => trial({ scenario: 'cpu-only', configKey: 'c4', options: opts(4, 1), metrics: { wall_clock_throughput_tok_per_s: v } })),
      ...[1000, 1000].map((v) => trial({ scenario: 'storage-only', configKey: 's50', options: opts(50, 0.125), metrics: { wall_clock_throughput_tok_per_s: v } })),
      ...[1500, 1500].map((v) => trial({ scenario: 'cpu-only', configKey: 'c50', options: opts(50, 1), metrics: { wall_clock_throughput_tok_per_s: v } })),
      // A suite with a warm-up has no storage-only run of its own here: no speedup, not one against the suites without.
      trial({ scenario: 'cpu-only', configKey: 'c4w', options: opts(4, 1, { warmUp: 30 }), metrics: { wall_clock_throughput_tok_per_s: 300 } }),
      // An import without --run-flags: its configuration is unknown, so it matches no baseline.
      trial({ scenario: 'cpu-only', configKey: 'unknown-abc', options: {}, metrics: { wall_clock_throughput_tok_per_s: 5000 } }),
    ];
    const t = buildTierComparison(buildScenarioReport(ts), null);
    const speedups = t.rows.map((r) => [r.scenarioId, r.numUsers, r.speedupWallClock]);
    expect(speedups).toEqual([
      ['cpu-only', null, null],
      ['cpu-only', 4, 2],
      ['cpu-only', 4, null],
      ['cpu-only', 50, 1.5],
      ['storage-only', 4, 1],
      ['storage-only', 50, 1],
    ]);
    expect(t.rows[0].baselineNote).toMatch(/^configuration unknown \(imported without --run-flags\)/);
    expect(t.rows[2].baselineNote).toBe('no storage-only run of this configuration (the nearest differs in --warm-up 30 vs 0)');
    expect(t.rows[1].baselineNote).toBeNull();
    const text = formatTierComparison(t);
    // The rows of one scenario are told apart: their users and their configuration are shown.
    expect(text).toMatch(/^scenario\s+configuration\s+users\s+GPU\s+CPU/m);
    expect(text).toMatch(/^cpu-only\s+tiny-1b, 50 users, .*\s50\s+0\s+1\s+2\s+1,500\s+1\.50x/m);
    expect(text).toMatch(/^storage-only\s+tiny-1b, 50 users, .*\s50\s+0\s+0\.125\s+2\s+1,000\s+1\.00x/m);
    expect(text).toMatch(/^note: cpu-only, tiny-1b, 4 users, .*: no storage-only run of this configuration \(the nearest differs in --warm-up 30 vs 0\)$/m);
  });

  it('a multi-host result stays out of the tier comparison whatever scenario it was filed under, and a note says so', () => {
    // review rev6 #4: a merged result imported with --scenario storage-only came in as a one-host row.
    const opts = (extra: Record<string, unknown> = {}) => ({ model: 'tiny-1b', numUsers: 2, cpuMemGb: 0, gpuMemGb: 0, duration: 3, generationMode: 'fast', ...extra });
    const ts = [
      trial({ scenario: 'storage-only', configKey: 's1', options: opts(), metrics: { wall_clock_throughput_tok_per_s: 100 } }),
      trial({ scenario: 'storage-only', configKey: 's3', options: opts({ worldSize: 3 }), metrics: { wall_clock_throughput_tok_per_s: 257 } }),
      trial({ scenario: 'multi-host', configKey: 'm3', options: opts({ worldSize: 3, numUsers: 4 }), metrics: { wall_clock_throughput_tok_per_s: 400 } }),
      // A world of one is one host.
      trial({ scenario: 'cpu-only', configKey: 'c1', options: opts({ worldSize: 1, cpuMemGb: 1 }), metrics: { wall_clock_throughput_tok_per_s: 200 } }),
    ];
    const t = buildTierComparison(buildScenarioReport(ts), null);
    expect(t.rows.map((r) => [r.scenarioId, r.wallClockTokPerS])).toEqual([
      ['cpu-only', 200],
      ['storage-only', 100],
    ]);
    const note = t.notes.find((n) => n.startsWith('2 multi-host row(s) left out'));
    expect(note).toMatch(/storage-only, tiny-1b, 2 users, .*× 3 hosts/);
    expect(note).toMatch(/one host's tier layouts$/);
    expect(formatTierComparison(t)).toMatch(/^note: 2 multi-host row\(s\) left out/m);
    // Nothing left out: nothing said.
    expect(buildTierComparison(buildScenarioReport([ts[0]]), null).notes.join('\n')).not.toMatch(/multi-host/);
  });

  it('each row\'s efficiency is against its own trials\' snapshot; the text lists each system\'s limits', () => {
    const ts = [
      trial({ scenario: 'storage-only', system: 'lab1', metrics: { wall_clock_throughput_tok_per_s: 100, storage_read_bytes_per_s: 1e9 } }),
      trial({ scenario: 'storage-only', system: 'lab2', metrics: { wall_clock_throughput_tok_per_s: 100, storage_read_bytes_per_s: 1e9 } }),
      trial({ scenario: 'storage-only', system: 'lab3', metrics: { wall_clock_throughput_tok_per_s: 100, storage_read_bytes_per_s: 1e9 } }),
    ];
    const fast = fakeHardware({ probe: true, hostname: 'lab2' });
    fast.cacheDir!.bandwidth!.readBytesPerSec = 4e9;
    const hw = new Map([[ts[0].id, fakeHardware({ probe: true })], [ts[1].id, fast]]);
    const t = buildTierComparison(buildScenarioReport(ts), (id) => hw.get(id) ?? null);
    expect(t.rows.map((r) => [r.systemLabel, r.storageReadEfficiency])).toEqual([['lab1', 0.5], ['lab2', 0.25], ['lab3', null]]);
    expect(t.probe).toMatchObject({ readBytesPerS: null, source: expect.stringMatching(/^several/) });
    expect(t.notes).toContain('1 row(s) have no bandwidth probe of their drive: no storage efficiency there (run the suite with its probe, or kvbench hw --probe)');
    const text = formatTierComparison(t);
    expect(text).toMatch(/^Limits on lab1: drive sequential read 2\.00 GB\/s/m);
    expect(text).toMatch(/^Limits on lab2: drive sequential read 4\.00 GB\/s/m);
    expect(text).toMatch(/^Limits on lab3: drive sequential read —/m);
  });

  it('a stored probe whose reads the page cache may have served is no read limit: no read efficiency', () => {
    const ts = [trial({ scenario: 'storage-only', metrics: { wall_clock_throughput_tok_per_s: 100, storage_read_bytes_per_s: 1e9, storage_write_bytes_per_s: 0.3e9 } })];
    const hw = fakeHardware({ probe: true });
    hw.cacheDir!.bandwidth = { ...hw.cacheDir!.bandwidth!, readBytesPerSec: 9e9, pageCacheSuspected: true }; // as snapshots stored before the probe refused it
    const t = buildTierComparison(buildScenarioReport(ts), hw);
    expect(t.rows[0]).toMatchObject({ storageReadEfficiency: null, storageWriteEfficiency: 0.2 });
    expect(t.probe.readBytesPerS).toBeNull();
  });

  it('speedup is against the storage-only row of the same system, never another machine\'s', () => {
    const ts = [
      trial({ scenario: 'storage-only', system: 'fast', metrics: { wall_clock_throughput_tok_per_s: 1000 } }),
      trial({ scenario: 'cpu-only', system: 'fast', metrics: { wall_clock_throughput_tok_per_s: 2000 } }),
      trial({ scenario: 'storage-only', system: 'slow', metrics: { wall_clock_throughput_tok_per_s: 100 } }),
      trial({ scenario: 'cpu-only', system: 'slow', metrics: { wall_clock_throughput_tok_per_s: 1000 } }),
    ];
    const t = buildTierComparison(buildScenarioReport(ts), null);
    const speedup = Object.fromEntries(t.rows.map((r) => [`${r.scenarioId}@${r.systemLabel}`, r.speedupWallClock]));
    expect(speedup).toEqual({ 'cpu-only@fast': 2, 'cpu-only@slow': 10, 'storage-only@fast': 1, 'storage-only@slow': 1 });
  });
});

describe('system comparison (seeds/002, automated)', () => {
  /** Two systems over matched configurations; A is ~2.5× faster on decode bytes at CPU 0, storage throughput barely differs there. */
  function twoSystems() {
    const configs = [
      { cpuMemGb: 0, numUsers: 50, decodeA: 250, decodeB: 100, stA: 112, stB: 100, tokA: 243, tokB: 100 },
      { cpuMemGb: 0, numUsers: 100, decodeA: 260, decodeB: 100, stA: 95, stB: 100, tokA: 240, tokB: 100 },
      { cpuMemGb: 4, numUsers: 50, decodeA: 206, decodeB: 100, stA: 223, stB: 100, tokA: 179, tokB: 100 },
    ];
    const a: TrialRecord[] = [];
    const b: TrialRecord[] = [];
    configs.forEach((c, i) => {
      const options = { model: 'llama3.1-8b', numUsers: c.numUsers, cpuMemGb: c.cpuMemGb, gpuMemGb: 0, duration: 300, generationMode: 'none' };
      for (const [k, jitter] of [[0, 1], [1, 1.02], [2, 0.98]] as const) {
        a.push(trial({ scenario: 'mlperf', system: 'fast', configKey: `c${i}`, index: k, options, metrics: { decode_bytes_read: c.decodeA * jitter, storage_throughput_tok_per_s: c.stA * jitter, wall_clock_throughput_tok_per_s: c.tokA * jitter, e2e_p95_ms: 100 / jitter } }));
        b.push(trial({ scenario: 'mlperf', system: 'slow', configKey: `c${i}`, index: k, options, metrics: { decode_bytes_read: c.decodeB * jitter, storage_throughput_tok_per_s: c.stB * jitter, wall_clock_throughput_tok_per_s: c.tokB * jitter, e2e_p95_ms: 300 / jitter } }));
      }
    });
    b.push(trial({ scenario: 'mlperf', system: 'slow', configKey: 'only-b', metrics: { decode_bytes_read: 1 } }));
    return { a, b };
  }

  it('ratio per metric, win rate, noise, and the best differentiator per CPU-tier size', () => {
    const { a, b } = twoSystems();
    const c = buildSystemComparison({ label: 'fast', id: 'sys-a', trials: a }, { label: 'slow', id: 'sys-b', trials: b });
    expect(c.matched).toBe(3);
    expect(c.unmatchedB).toBe(1);
    const decode = c.metrics.find((m) => m.metric.key === 'decode_bytes_read')!;
    expect(decode.meanRatio).toBeCloseTo((2.5 + 2.6 + 2.06) / 3, 9);
    expect(decode.winRateA).toBe(1);
    expect(decode.withinNoise).toBe(0);
    const st = c.metrics.find((m) => m.metric.key === 'storage_throughput_tok_per_s')!;
    expect(st.winRateA).toBeCloseTo(2 / 3, 9);
    // Latency: lower is better, so A (100 ms vs 300 ms) wins although its ratio is < 1.
    const e2e = c.metrics.find((m) => m.metric.key === 'e2e_p95_ms')!;
    expect(e2e.meanRatio).toBeCloseTo(1 / 3, 9);
    expect(e2e.winRateA).toBe(1);
    // At CPU 0 storage throughput barely separates the systems; decode bytes read does (002's finding).
    const cpu0 = c.byCpuMem.find((g) => g.group === 'CPU 0 GiB')!;
    expect(cpu0.configs).toBe(2);
    expect(cpu0.bestDifferentiator).toMatchObject({ key: 'decode_bytes_read', side: 'a', winRate: 1 });
    expect(cpu0.metrics.find((m) => m.key === 'storage_throughput_tok_per_s')!.winRateA).toBe(0.5);
    const cpu4 = c.byCpuMem.find((g) => g.group === 'CPU 4 GiB')!;
    expect(cpu4.bestDifferentiator).toMatchObject({ key: 'storage_throughput_tok_per_s', side: 'a' });
    expect(c.variance.map((v) => v.users)).toEqual([50, 100]);
    expect(c.variance[0].medianCvA).toBeCloseTo(0.02, 2);
    const text = formatComparison(c, { perConfig: true });
    expect(text).toMatch(/A = fast \(sys-a\), B = slow \(sys-b\)/);
    expect(text).toMatch(/Decode bytes read \(higher is better\)\s+3\s+2\.\d\dx\s+A\s.*\s2\.39x$/m);
    expect(text).toMatch(/CPU 0 GiB .* Decode bytes read: A better \(p <0\.001\), 2\.55x, A wins 100% of 2 tested$/m);
  });

  it('says when a compared metric changed definition between the kvbench versions that measured the trials', () => {
    const side = (system: string, version: string, sourceFile?: string, measuredBy?: string | null) =>
      [0, 1].map((i) => trial({ scenario: 's', system, configKey: 'k', index: i, version, sourceFile, measuredBy, metrics: { decode_bytes_read: 100 + i, wall_clock_throughput_tok_per_s: 10 } }));
    const cmp = (a: TrialRecord[], b: TrialRecord[]) => buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { metrics: ['decode_bytes_read', 'wall_clock_throughput_tok_per_s'] });
    const mixed = cmp(side('a', '0.2.0'), side('b', '0.3.0'));
    expect(mixed.notes.filter((n) => n.startsWith('decode_bytes_read changed definition in kvbench 0.3.0'))).toHaveLength(1);
    expect(cmp(side('a', '0.3.0'), side('b', '0.3.1')).notes.join('\n')).not.toMatch(/changed definition/);
    // An import is judged by the version that measured it, not the importer's (review rev7-code #3)…
    expect(cmp(side('a', '0.3.0', '/x/old.json', '0.2.0'), side('b', '0.3.0')).notes.filter((n) => n.startsWith('decode_bytes_read changed definition in kvbench 0.3.0'))).toHaveLength(1);
    // …and one whose measuring version is unknown (the reference's, or stored results that could not be read) says nothing either way.
    expect(cmp(side('a', '0.3.0', '/x/old.json', null), side('b', '0.2.0', '/x/older.json', null)).notes.join('\n')).not.toMatch(/changed definition/);
    // Not compared on that metric: nothing to say.
    expect(buildSystemComparison({ label: 'a', id: 'a', trials: side('a', '0.2.0') }, { label: 'b', id: 'b', trials: side('b', '0.3.0') }, { metrics: ['wall_clock_throughput_tok_per_s'] }).notes.join('\n')).not.toMatch(/changed definition/);
  });

  it('marks a metric compared over two definitions of it, and keeps it out of the verdict, the win rate and the best differentiator (rev13-upgrade #7)', () => {
    const side = (system: string, version: string, decode: number, tput: number) =>
      ['k1', 'k2'].flatMap((configKey, c) =>
        [0, 1, 2].map((i) =>
          trial({ scenario: 's', system, configKey, index: i, version, options: { model: 'm', numUsers: 10 + c, cpuMemGb: 0 }, metrics: { decode_bytes_read: decode + i, wall_clock_throughput_tok_per_s: tput + i } }),
        ),
      );
    const metrics = ['decode_bytes_read', 'wall_clock_throughput_tok_per_s'];
    const c = buildSystemComparison({ label: 'old', id: 'a', trials: side('a', '0.2.0', 100, 100) }, { label: 'new', id: 'b', trials: side('b', '0.3.0', 300, 50) }, { metrics });
    const decode = c.metrics.find((m) => m.metric.key === 'decode_bytes_read')!;
    expect(decode.mixedDefinitions.map((d) => d.since)).toEqual(['0.3.0']);
    expect(decode).toMatchObject({ verdict: null, leader: null, pValue: null, winRateA: null, winsA: 0, winsB: 0, verdictCaveat: null, compared: 2 });
    expect(decode.geoMeanRatio).toBeCloseTo(101 / 301, 2); // the ratio stays, marked
    expect(decode.configs.map((x) => [x.winner, x.mixedDefinitions, x.measuredBy])).toEqual([
      [null, true, ['0.2.0', '0.3.0']],
      [null, true, ['0.2.0', '0.3.0']],
    ]);
    const tput = c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!;
    expect(tput).toMatchObject({ verdict: 'a', mixedDefinitions: [], winsA: 2 });
    const [group] = c.byCpuMem;
    expect(group.metrics.find((m) => m.key === 'decode_bytes_read')).toMatchObject({ verdict: null, winRateA: null, mixedDefinitions: [{ since: '0.3.0' }] });
    // decode bytes read differs more (3x against 2x) but mixes two definitions: never the best differentiator.
    expect(group.bestDifferentiator).toMatchObject({ key: 'wall_clock_throughput_tok_per_s', side: 'a' });
    const text = formatComparison(c, { perConfig: true });
    expect(text).toMatch(/^Decode bytes read \(higher is better\) mixed definitions †\s+2\s+0\.34x\s+—\s+—\s+—\s/m);
    expect(text).toContain('mixed definitions †: the metric\'s compared trials were measured on both sides of a change of its definition');
    expect(text).toMatch(/^CPU 0 GiB\s+2\s+mixed definitions † 0\.34x \(2 compared\)\s+A 1\.98x/m);
    expect(text).toMatch(/^s: .* \(mixed definitions †: 0\.2\.0, 0\.3\.0\)\s+3\s+3\s/m);
    expect(c.notes.filter((n) => n.startsWith('decode_bytes_read changed definition in kvbench 0.3.0') && n.endsWith('names no better side, p-value or win rate, and it is no best differentiator'))).toHaveLength(1);
  });

  it('says that per-MiB latency left out entries under one I/O chunk from 0.7.0 on, where trials straddle that', () => {
    const side = (system: string, version: string) =>
      [0, 1].map((i) => trial({ scenario: 's', system, configKey: 'k', index: i, version, metrics: { storage_write_p95_ms_per_mib: 4 + i, storage_read_p95_ms_per_mib: 2 + i } }));
    const metrics = ['storage_write_p95_ms_per_mib', 'storage_read_p95_ms_per_mib'];
    const notes = buildSystemComparison({ label: 'a', id: 'a', trials: side('a', '0.6.0') }, { label: 'b', id: 'b', trials: side('b', '0.7.0') }, { metrics }).notes;
    for (const m of metrics) {
      expect(notes.filter((n) => n.startsWith(`${m} changed definition in kvbench 0.7.0 (it is over entries of at least one I/O chunk`))).toHaveLength(1);
    }
    expect(buildSystemComparison({ label: 'a', id: 'a', trials: side('a', '0.7.0') }, { label: 'b', id: 'b', trials: side('b', '0.7.0') }, { metrics }).notes.join('\n')).not.toMatch(/changed definition/);
  });

  it('a difference smaller than the run-to-run spread is within the noise, by Welch\'s t-test on the trials\' log values', () => {
    const opts = { model: 'm', numUsers: 1, cpuMemGb: 0 };
    const a = [100, 150, 60].map((v, i) => trial({ scenario: 's', system: 'a', configKey: 'k', index: i, options: opts, metrics: { wall_clock_throughput_tok_per_s: v } }));
    const b = [105, 55, 140].map((v, i) => trial({ scenario: 's', system: 'b', configKey: 'k', index: i, options: opts, metrics: { wall_clock_throughput_tok_per_s: v } }));
    const c = buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { metrics: ['wall_clock_throughput_tok_per_s'] });
    // The ratio is the geometric means' (96.5 ÷ 93.1), the quantity the test tests; the medians stand beside it.
    expect(c.metrics[0].configs[0]).toMatchObject({ medianA: 100, medianB: 105, withinNoise: true, winner: 'a' });
    expect(c.metrics[0].configs[0].ratio).toBeCloseTo(1.036384307361007, 9);
    // scipy.stats.ttest_ind(log a, log b, equal_var=False).pvalue
    expect(c.metrics[0].configs[0].pValue).toBeCloseTo(0.9301291220470226, 9);
    // review (ui) 6 #11: "within noise 1 of 1" came with "A wins 100 %" and a green ratio. A difference
    // within the noise is a tie: no win rate, and no side the metric favours.
    expect(c.metrics[0]).toMatchObject({ compared: 1, tested: 1, withinNoise: 1, winRateA: null, verdict: 'within-noise' });
    expect(c.metrics[0].pValue).toBeCloseTo(0.9301291220470226, 9);
    const text = formatComparison(c);
    expect(text).toMatch(/Wall-clock throughput \(higher is better\)\s+1\s+1\.04x\s+≈ noise\s+0\.93\s+—\s+1\/1\s/);
    expect(text).toContain("beyond noise: Welch's t-test on log values, two-sided, α = 0.05");
    expect(c.method).toContain("Welch's t-test on log values, two-sided, α = 0.05");
  });

  it('a configuration within the noise is a tie in the win rate; the others decide it', () => {
    const opts = (users: number) => ({ model: 'm', numUsers: users, cpuMemGb: 0 });
    const side = (system: string, byConfig: number[][]) =>
      byConfig.flatMap((values, k) => values.map((v, i) => trial({ scenario: 's', system, configKey: `k${k}`, index: i, options: opts(k), metrics: { wall_clock_throughput_tok_per_s: v } })));
    // k0: A 1 % ahead, with 10 % spread (within the noise); k1: B 50 % ahead, with 1 % spread (beyond it).
    const c = buildSystemComparison({ label: 'a', id: 'a', trials: side('a', [[101, 91, 111], [100, 101, 99]]) }, { label: 'b', id: 'b', trials: side('b', [[100, 90, 110], [150, 151.5, 148.5]]) }, {
      metrics: ['wall_clock_throughput_tok_per_s'],
    }).metrics[0];
    expect(c.configs.map((x) => [x.winner, x.withinNoise])).toEqual([['a', true], ['b', false]]);
    expect(c).toMatchObject({ compared: 2, withinNoise: 1, winRateA: 0, verdict: 'b' });
  });

  /** One metric (wall-clock throughput, higher is better) over configurations k0, k1, …: per side, the trial values of each. */
  function cmpConfigs(a: number[][], b: number[][]) {
    const side = (system: string, byConfig: number[][]) =>
      byConfig.flatMap((values, k) =>
        values.map((v, i) => trial({ scenario: 's', system, configKey: `k${k}`, index: i, options: { model: 'm', numUsers: k, cpuMemGb: 0 }, metrics: { wall_clock_throughput_tok_per_s: v } })),
      );
    return buildSystemComparison({ label: 'a', id: 'a', trials: side('a', a) }, { label: 'b', id: 'b', trials: side('b', b) }, { metrics: ['wall_clock_throughput_tok_per_s'] });
  }

  it('the text table leads with the geo-mean and the verdict it carries; the arithmetic mean comes last (rev12 M2)', () => {
    // Two configurations at 2.0x and 0.25x: the arithmetic mean says 1.12x (A), the geometric mean
    // 0.71x (B), the one the verdict tests and the app's chart draws.
    const text = formatComparison(cmpConfigs([[200, 202, 198], [25, 25.25, 24.75]], [[100, 101, 99], [100, 101, 99]]));
    const header = text.split('\n').find((l) => l.startsWith('metric'))!;
    expect(header.split(/\s{2,}/)).toEqual(['metric', 'configs', 'geo-mean A/B', 'better', 'p', 'A win rate', 'within noise', 'CV A', 'CV B', 'mean A/B']);
    expect(text).toMatch(/^Wall-clock throughput \(higher is better\)\s+2\s+0\.71x\s+B\*\s+/m);
    expect(text).toMatch(/\s1\.12x$/m);
  });

  it('the verdict is one test of the geometric mean over the configurations, not a count of those that happened to pass', () => {
    // review rev6 #2: k0, k1 A 4 % ahead with 5 % spread (within the noise); k2 B 5 % ahead with
    // 0.5 % spread (beyond it). The old verdict took B from k2 alone; over all three the difference
    // is no bigger than the noise.
    const withinPulls = cmpConfigs([[104, 99, 109], [104, 99, 109], [95, 95.5, 94.5]], [[100, 95, 105], [100, 95, 105], [100, 100.5, 99.5]]).metrics[0];
    expect(withinPulls.configs.map((x) => [x.winner, x.withinNoise])).toEqual([['a', true], ['a', true], ['b', false]]);
    expect(withinPulls).toMatchObject({ compared: 3, tested: 3, withinNoise: 2, winsA: 0, winsB: 1, winRateA: 0, verdict: 'within-noise', leader: 'a' });
    expect(withinPulls.pValue).toBeGreaterThan(0.05);
    // The geometric mean leans A (within the noise) while the one configuration beyond it is B's: said.
    expect(withinPulls.verdictCaveat).toMatch(/^≈ noise: the geometric mean over the 3 configuration\(s\) tested, 1\.01x, leans A, within the noise \(p = 0\.\d+\); 1 of the 1 configuration\(s\) beyond the run-to-run noise favour B/);
    // Every configuration beyond the noise: two at +2 % for A, one at −50 %. The geometric mean is
    // 0.80x, B; the win rate counts two of three for A, and a footnote says why they differ.
    const c = cmpConfigs([[102, 102.1, 101.9], [102, 102.1, 101.9], [50, 50.1, 49.9]], [[100, 100.1, 99.9], [100, 100.1, 99.9], [100, 100.1, 99.9]]);
    const sizePulls = c.metrics[0];
    expect(sizePulls.geoMeanRatio).toBeCloseTo(Math.cbrt(1.02 * 1.02 * 0.5), 3);
    expect(sizePulls).toMatchObject({ withinNoise: 0, verdict: 'b', leader: 'b' });
    expect(sizePulls.winRateA).toBeCloseTo(2 / 3, 9);
    expect(sizePulls.verdictCaveat).toBe(
      'verdict B: the geometric mean over the 3 configuration(s) tested, 0.80x, is beyond the noise (p = <0.001); 2 of the 3 configuration(s) beyond the run-to-run noise favour A: the win rate counts configurations, the verdict weighs each difference by its size',
    );
    const text = formatComparison(c);
    expect(text).toMatch(/Wall-clock throughput \(higher is better\)\s+3\s+0\.80x\s+B\*\s+<0\.001\s+67% of 3\s+0\/3\s.*\s0\.85x$/m);
    expect(text).toContain('* Wall-clock throughput: verdict B: the geometric mean over the 3 configuration(s) tested, 0.80x, is beyond the noise');
    // The arithmetic mean of the ratios can lean the other way (3x and 0.2x average 1.6x, their geometric mean is 0.77x).
    const meanPulls = cmpConfigs([[300, 300.3, 299.7], [20, 20.02, 19.98]], [[100, 100.1, 99.9], [100, 100.1, 99.9]]).metrics[0];
    expect(meanPulls).toMatchObject({ verdict: 'b', leader: 'b' });
    expect(meanPulls.meanRatio).toBeCloseTo(1.6, 3);
    expect(meanPulls.verdictCaveat).toMatch(/; the arithmetic mean of the ratios, 1\.60x, leans A: it weighs a ratio above 1 more than its inverse \(2x and 0\.5x average 1\.25x\)$/);
    // Where they agree, nothing to explain, and no mark.
    const agree = cmpConfigs([[110, 110.1, 109.9]], [[100, 100.1, 99.9]]);
    expect(agree.metrics[0]).toMatchObject({ verdict: 'a', leader: 'a', verdictCaveat: null });
    expect(formatComparison(agree)).not.toMatch(/\*/);
  });

  it('property: the bar (the geometric mean) always points the verdict\'s way, and the verdict names a side only where its test gives p < 0.05', () => {
    const rng = new Rng(17);
    const draw = (m: number, cv: number) => Math.max(1e-6, m * (1 + cv * (rng.next() + rng.next() + rng.next() - 1.5) * 2));
    let named = 0;
    for (let i = 0; i < 300; i++) {
      const k = 1 + rng.int(0, 5);
      const n = () => rng.int(1, 5);
      // A true ratio for the comparison, each configuration off it by up to ±30 %, each side's own spread.
      const truth = rng.uniform(0.5, 2);
      const scale = Array.from({ length: k }, () => rng.uniform(0.5, 2));
      const m = cmpConfigs(
        scale.map((s) => Array.from({ length: n() }, () => draw(100 * s * truth, rng.uniform(0, 0.2)))),
        scale.map((s) => Array.from({ length: n() }, () => draw(100 * s * rng.uniform(0.7, 1.3), rng.uniform(0, 0.2)))),
      ).metrics[0];
      const barSide = m.geoMeanRatio === null || m.geoMeanRatio === 1 ? null : m.geoMeanRatio > 1 ? 'a' : 'b';
      expect(m.leader).toBe(barSide);
      if (m.verdict === 'a' || m.verdict === 'b') {
        named++;
        expect(barSide).toBe(m.verdict);
        expect(m.pValue).toBeLessThan(0.05);
      }
      if (m.pValue !== null && m.pValue >= 0.05) expect(m.verdict).toBe('within-noise');
      if (m.verdict === 'unknown') expect(m.tested).toBe(0);
    }
    expect(named).toBeGreaterThan(50); // the property was checked on named sides, not only on ties
  });

  it('seeded simulation of rev7 #1: two labels on one drive, 8 configurations of 3 trials, name a side for a metric in ≤ 8 % of comparisons (the old verdict: about 80 %)', () => {
    const rng = new Rng(2026);
    const z = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
    const suites = 400;
    let named = 0;
    for (let i = 0; i < suites; i++) {
      const same = () => Array.from({ length: 8 }, (_, k) => Array.from({ length: 3 }, () => Math.max(1e-6, 100 * (k + 1) * (1 + 0.15 * z()))));
      const v = cmpConfigs(same(), same()).metrics[0].verdict;
      if (v === 'a' || v === 'b') named++;
    }
    // Measured with this seed: 0.048; the old verdict (a side from the configurations that happened to pass) named one in about 80 % (the reviewer's simulation: 0.82).
    expect(named / suites).toBeLessThanOrEqual(0.08);
  });

  it('with no configuration of 2 trials a side, no side is named: A? or B?, as the endpoint compare says', () => {
    // review rev6 #3: 101 vs 100 tok/s, one trial a side, was green "better A", "A wins 100 %".
    const single = cmpConfigs([[101]], [[100]]);
    // rev8-gui #1: it still said "A wins 100 %": an untested configuration is no win.
    expect(single.metrics[0]).toMatchObject({ noiseUnknown: 1, withinNoise: 0, tested: 0, pValue: null, verdict: 'unknown', leader: 'a', winRateA: null, winsA: 0 });
    expect(formatComparison(single)).toMatch(/Wall-clock throughput \(higher is better\)\s+1\s+1\.01x\s+A\?\s+—\s+—\s+0\/1 \(1 unknown\)\s/);
    expect(formatComparison(single)).toMatch(/A\? \/ B\?: the side the geo-mean leans to, not named/);
    expect(cmpConfigs([[100]], [[101]]).metrics[0]).toMatchObject({ verdict: 'unknown', leader: 'b' });
    // One testable configuration decides; the one of unknown noise stays out of the test and the bar.
    const mixed = cmpConfigs([[101, 91, 111], [150]], [[100, 90, 110], [100]]);
    expect(mixed.metrics[0]).toMatchObject({ withinNoise: 1, noiseUnknown: 1, tested: 1, verdict: 'within-noise' });
    expect(mixed.metrics[0].geoMeanRatio).toBeCloseTo(mixed.metrics[0].configs[0].ratio!, 12);
    expect(mixed.notes.join('\n')).toMatch(/1 matched configuration\(s\) have fewer than 2 trials on a side: their noise is unknown, so they stay out of each metric's geometric mean and verdict/);
    // One beyond the noise decides over any of unknown noise, and the win rate counts it alone (0 of 1); the
    // bar is its ratio (0.67x), not one pulled above 1 by the two untested 2x.
    const beyond = cmpConfigs([[100, 100.1, 99.9], [200], [200]], [[150, 150.1, 149.9], [100], [100]]).metrics[0];
    expect(beyond).toMatchObject({ noiseUnknown: 2, tested: 1, verdict: 'b', leader: 'b', winRateA: 0 });
    expect(beyond.geoMeanRatio).toBeCloseTo(2 / 3, 3);
    expect(formatComparison(cmpConfigs([[101, 91, 111]], [[100, 90, 110]]))).not.toMatch(/A\? \/ B\?/);
  });

  it('identical values are a tie within noise, even with no spread on either side; with no spread any other difference is beyond it; a 0 has no logarithm', () => {
    // review #10: ratio 1, CV 0 on both sides came out "TIE, noise? no".
    const opts = { model: 'm', numUsers: 1, cpuMemGb: 0 };
    const side = (system: string, values: number[]) => values.map((v, i) => trial({ scenario: 's', system, configKey: 'k', index: i, options: opts, metrics: { decode_bytes_read: v } }));
    const cmp = (a: number[], b: number[]) => buildSystemComparison({ label: 'a', id: 'a', trials: side('a', a) }, { label: 'b', id: 'b', trials: side('b', b) }, { metrics: ['decode_bytes_read'] }).metrics[0];
    const tie = cmp([7, 7], [7, 7]);
    expect(tie.configs[0]).toMatchObject({ ratio: 1, cvA: 0, cvB: 0, winner: 'tie', withinNoise: true, pValue: 1 });
    expect(tie).toMatchObject({ withinNoise: 1, verdict: 'within-noise' });
    expect(cmp([8, 8], [7, 7]).configs[0]).toMatchObject({ cvA: 0, cvB: 0, winner: 'a', withinNoise: false, pValue: 0 });
    expect(cmp([8, 8], [7, 7])).toMatchObject({ verdict: 'a' });
    // One trial a side: the spread is unknown, but identical values still differ by nothing.
    expect(cmp([7], [7]).configs[0].withinNoise).toBe(true);
    expect(cmp([7], [7]).verdict).toBe('within-noise');
    expect(cmp([8], [7]).configs[0].withinNoise).toBeNull();
    // ...and an unknown noise is counted as unknown, not as a difference beyond the noise (UI review #3).
    expect(cmp([8], [7])).toMatchObject({ compared: 1, withinNoise: 0, noiseUnknown: 1 });
    expect(tie.noiseUnknown).toBe(0);
    // 3 trials against 2 of one value: the means of their logs differ in the last bit (−3.6e-15), which
    // with no spread on either side read as a difference beyond the noise, "B better, p < 0.001", at 1.00x.
    const unevenTie = cmp([53687091200, 53687091200, 53687091200], [53687091200, 53687091200]);
    expect(unevenTie.configs[0]).toMatchObject({ ratio: 1, logRatio: 0, winner: 'tie', withinNoise: true, pValue: 1 });
    expect(unevenTie).toMatchObject({ tested: 1, geoMeanRatio: 1, pValue: 1, verdict: 'within-noise', leader: null });
    expect(formatComparison(buildSystemComparison({ label: 'a', id: 'a', trials: side('a', [8]) }, { label: 'b', id: 'b', trials: side('b', [7]) }, { metrics: ['decode_bytes_read'] })))
      .toMatch(/\s0\/1 \(1 unknown\)\s/);
    // A side that read nothing: the ratio of medians (0), no logarithm, so no test and no geometric-mean share.
    const none = cmp([0, 0, 0], [5, 6, 7]);
    expect(none.configs[0]).toMatchObject({ ratio: 0, logRatio: null, pValue: null, withinNoise: null, winner: 'b' });
    expect(none).toMatchObject({ tested: 0, verdict: 'unknown', leader: 'b', geoMeanRatio: 0 });
    expect(formatComparison(buildSystemComparison({ label: 'a', id: 'a', trials: side('a', [7, 7]) }, { label: 'b', id: 'b', trials: side('b', [7, 7]) }, { metrics: ['decode_bytes_read'] }), { perConfig: true }))
      .toMatch(/s: m, 1 user, .*\s2\s+2\s+0\.0 MiB\s+0\.0 MiB\s+1\.00x\s+TIE\s+yes\s+1\.0$/m);
  });

  it('a tie favours neither side: configurations equal on both (a tier both lack) stay out of the win rate and name no differentiator', () => {
    const opts = (users: number) => ({ model: 'm', numUsers: users, cpuMemGb: 0, gpuMemGb: 0, duration: 60, generationMode: 'none' });
    const a: TrialRecord[] = [];
    const b: TrialRecord[] = [];
    // Four configurations where A reads storage twice as fast, five without a storage tier (0 on both sides); 2 trials each.
    for (let i = 0; i < 9; i++) {
      for (const jitter of [1, 1.01]) {
        const rd = i < 4 ? [2e9 * jitter, 1e9 * jitter] : [0, 0];
        a.push(trial({ scenario: 's', system: 'a', configKey: `k${i}`, options: opts(i), metrics: { storage_read_bytes_per_s: rd[0], decode_bytes_read: 7 } }));
        b.push(trial({ scenario: 's', system: 'b', configKey: `k${i}`, options: opts(i), metrics: { storage_read_bytes_per_s: rd[1], decode_bytes_read: 7 } }));
      }
    }
    const c = buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { metrics: ['storage_read_bytes_per_s', 'decode_bytes_read', 'device_read_bytes'] });
    const rd = c.metrics.find((m) => m.metric.key === 'storage_read_bytes_per_s')!;
    expect(rd).toMatchObject({ compared: 4, tested: 4, winsA: 4, winRateA: 1 });
    const same = c.metrics.find((m) => m.metric.key === 'decode_bytes_read')!;
    expect(same.configs.every((x) => x.winner === 'tie')).toBe(true);
    expect(same.winRateA).toBeNull();
    // A metric with no better direction has no winner at all.
    expect(c.metrics.find((m) => m.metric.key === 'device_read_bytes')!.winRateA).toBeNull();
    const group = c.byModel.find((g) => g.group === 'm')!;
    expect(group.bestDifferentiator?.key).not.toBe('decode_bytes_read');
  });

  // review rev7-tests M2: three mutants of the leader, the differentiator and the CV column survived.
  it('an even split on a lower-is-better metric leans to the side with the lower geometric mean', () => {
    const opts = (i: number) => ({ model: 'm', numUsers: i + 1, cpuMemGb: 0 });
    // One trial a side: untested. A is better by 2x in one configuration, worse by 1.5x in the other.
    const a = [100, 300].map((v, i) => trial({ scenario: 's', system: 'a', configKey: `k${i}`, options: opts(i), metrics: { e2e_p95_ms: v } }));
    const b = [200, 200].map((v, i) => trial({ scenario: 's', system: 'b', configKey: `k${i}`, options: opts(i), metrics: { e2e_p95_ms: v } }));
    const m = buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { metrics: ['e2e_p95_ms'] }).metrics[0];
    // Untested configurations are no one's wins: no win rate.
    expect(m.winRateA).toBeNull();
    expect(m.geoMeanRatio).toBeCloseTo(Math.sqrt(0.5 * 1.5), 12);
    // Lower is better: a geometric mean ratio below 1 is A's lead, not B's.
    expect([m.verdict, m.leader]).toEqual(['unknown', 'a']);
  });

  it('names no best differentiator where the only candidate splits its configurations evenly', () => {
    const opts = (i: number) => ({ model: 'm', numUsers: i + 1, cpuMemGb: 0 });
    // A twice as fast in k0, half as fast in k1, each beyond the noise: the geometric mean is 1.
    const side = (system: string, byConfig: number[]) =>
      byConfig.flatMap((v, i) => [v, v * 1.005].map((x) => trial({ scenario: 's', system, configKey: `k${i}`, options: opts(i), metrics: { wall_clock_throughput_tok_per_s: x } })));
    const [a, b] = [side('a', [200, 100]), side('b', [100, 200])];
    const c = buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { metrics: ['wall_clock_throughput_tok_per_s'] });
    const group = c.byModel.find((g) => g.group === 'm')!;
    expect(group.metrics[0].winRateA).toBe(0.5);
    expect(group.bestDifferentiator).toBeNull();
  });

  it('reports each side\'s own CV in the metric row (the "CV A" and "CV B" columns)', () => {
    const options = { model: 'm', numUsers: 1, cpuMemGb: 0 };
    // A steady (CV 0), B spread (mean 100, sample SD 50: CV 0.5).
    const a = [100, 100, 100].map((v, i) => trial({ scenario: 's', system: 'a', configKey: 'k', index: i, options, metrics: { wall_clock_throughput_tok_per_s: v } }));
    const b = [100, 150, 50].map((v, i) => trial({ scenario: 's', system: 'b', configKey: 'k', index: i, options, metrics: { wall_clock_throughput_tok_per_s: v } }));
    const m = buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { metrics: ['wall_clock_throughput_tok_per_s'] }).metrics[0];
    expect(m.medianCvA).toBe(0);
    expect(m.medianCvB).toBeCloseTo(0.5, 12);
  });

  it('matching by scenario never pools a smoke suite with a standard one on one side', () => {
    const smoke = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 0.125, duration: 3, generationMode: 'fast' };
    const standard = { model: 'llama3.1-8b', numUsers: 50, cpuMemGb: 0.5, duration: 180, generationMode: 'realistic' };
    const a = [
      trial({ scenario: 'storage-only', system: 'a', configKey: 'a-smoke', options: smoke, metrics: { wall_clock_throughput_tok_per_s: 5000 } }),
      trial({ scenario: 'storage-only', system: 'a', configKey: 'a-smoke', options: smoke, metrics: { wall_clock_throughput_tok_per_s: 5000 } }),
      trial({ scenario: 'storage-only', system: 'a', configKey: 'a-std', options: standard, metrics: { wall_clock_throughput_tok_per_s: 100 } }),
    ];
    // B's machine has more RAM: other users and CPU budget, the same suite.
    const b = [trial({ scenario: 'storage-only', system: 'b', configKey: 'b-std', options: { ...standard, numUsers: 80, cpuMemGb: 1 }, metrics: { wall_clock_throughput_tok_per_s: 100 } })];
    const c = buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { match: 'scenario', metrics: ['wall_clock_throughput_tok_per_s'] });
    expect(c.matched).toBe(1);
    expect(c.unmatchedA).toBe(1);
    expect(c.metrics[0].configs[0]).toMatchObject({ nA: 1, nB: 1, ratio: 1 });
  });

  it('never pools a system\'s drives: a configuration A ran on two drives is compared once per drive, and a note says so', () => {
    // review #2: 100 tok/s on one drive and 300 on the other pooled to a median of 200, a "tie" with B's 200.
    const opts = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 0, gpuMemGb: 0, duration: 3, generationMode: 'fast' };
    const a = [
      ...[100, 100].map((v, i) => trial({ scenario: 'storage-only', system: 'SA', drive: 'slowdisk', configKey: 'k', index: i, options: opts, metrics: { wall_clock_throughput_tok_per_s: v } })),
      ...[300, 300].map((v, i) => trial({ scenario: 'storage-only', system: 'SA', drive: 'fastdisk', configKey: 'k', index: i, options: opts, metrics: { wall_clock_throughput_tok_per_s: v } })),
    ];
    const b = [200, 200].map((v, i) => trial({ scenario: 'storage-only', system: 'SB', configKey: 'k', index: i, options: opts, metrics: { wall_clock_throughput_tok_per_s: v } }));
    const c = buildSystemComparison({ label: 'SA', id: 'SA', trials: a }, { label: 'SB', id: 'SB', trials: b }, { metrics: ['wall_clock_throughput_tok_per_s'] });
    const rows = c.metrics[0].configs.map((x) => [x.placeA, x.placeB, x.nA, x.medianA, x.medianB, x.winner]);
    expect(rows).toEqual([
      ['SA · fastdisk label', 'SB', 2, 300, 200, 'a'],
      ['SA · slowdisk label', 'SB', 2, 100, 200, 'b'],
    ]);
    expect(new Set(c.metrics[0].configs.map((x) => x.key)).size).toBe(2);
    expect(c.matched).toBe(2);
    expect(c.notes.join('\n')).toMatch(/^A \(SA\) ran 1 matched configuration\(s\) on several drives \(SA · fastdisk label; SA · slowdisk label\): each drive is compared on its own row, never pooled/m);
    const text = formatComparison(c, { perConfig: true });
    expect(text).toMatch(/storage-only: tiny-1b, 4 users, .* — A on SA · fastdisk label, B on SB\s+2\s+2\s+300\s+200\s+1\.50x\s+A/);
    expect(text).toMatch(/storage-only: tiny-1b, 4 users, .* — A on SA · slowdisk label, B on SB\s+2\s+2\s+100\s+200\s+0\.50x\s+B/);
    // One drive per side, as in a drive comparison: one row, described as before.
    const one = buildSystemComparison({ label: 'SA', id: 'SA', trials: a.slice(0, 2) }, { label: 'SB', id: 'SB', trials: b }, { metrics: ['wall_clock_throughput_tok_per_s'] });
    expect(one.metrics[0].configs.map((x) => [x.key, x.description])).toEqual([[JSON.stringify(['storage-only', 'k']), 'tiny-1b, 4 users, 3 s, CPU 0 GiB, GPU 0 GiB, generation fast']]);
    expect(one.notes.join()).not.toMatch(/several drives/);
  });

  it('counts a side\'s matched trials once each, though its drive pairs with several of the other side\'s drives', () => {
    const opts = { model: 'tiny-1b', numUsers: 4, cpuMemGb: 0, gpuMemGb: 0, duration: 3, generationMode: 'fast' };
    const a = ['slowdisk', 'fastdisk'].flatMap((drive) => [0, 1].map((i) => trial({ scenario: 'storage-only', system: 'SA', drive, configKey: 'k', index: i, options: opts, metrics: { wall_clock_throughput_tok_per_s: 100 } })));
    // B's two trials, one on a RAM disk: each of its rows (one per drive of A) holds both.
    const b = [0, 1].map((i) => trial({ scenario: 'storage-only', system: 'SB', configKey: 'k', index: i, options: opts, metrics: { wall_clock_throughput_tok_per_s: 200, storage_ram_backed: i } }));
    const c = buildSystemComparison({ label: 'SA', id: 'SA', trials: a }, { label: 'SB', id: 'SB', trials: b }, { metrics: ['wall_clock_throughput_tok_per_s'] });
    expect(c.matched).toBe(2);
    expect(c.cautions.b).toEqual({ matchedTrials: 2, flaggedTrials: 1, traceOnly: 0, ramBacked: 1, pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0, ramBackings: [{ backing: null, trials: 1 }] });
    expect(c.cautions.a.matchedTrials).toBe(4);
    expect(c.notes).toContain('B (SB): 1 of its 2 matched trial(s) ran on a RAM-backed cache directory (backing not recorded by the kvbench that stored it): their storage numbers describe memory, not a drive');
  });

  it('matching by scenario never matches a trial of unknown configuration (imported without --run-flags), not even with a run of the default options', () => {
    // review #3: the unknown reference run was matched as if it had run with the defaults.
    const defaults = { model: DEFAULT_RUN_OPTIONS.model, duration: DEFAULT_RUN_OPTIONS.duration, generationMode: DEFAULT_RUN_OPTIONS.generationMode, numUsers: 200, cpuMemGb: 0 };
    const v = [50, 50].map((x, i) => trial({ scenario: 'storage-only', system: 'V', configKey: 'v', index: i, options: defaults, metrics: { wall_clock_throughput_tok_per_s: x } }));
    const r = [400, 400].map((x, i) => trial({ scenario: 'storage-only', system: 'R', configKey: `unknown-00000000000${i}`, index: i, options: {}, metrics: { wall_clock_throughput_tok_per_s: x } }));
    for (const match of ['scenario', 'config'] as const) {
      const c = buildSystemComparison({ label: 'V', id: 'V', trials: v }, { label: 'R', id: 'R', trials: r }, { match, metrics: ['wall_clock_throughput_tok_per_s'] });
      expect(c.matched, match).toBe(0);
      expect(c.notes, match).toContain('B (R) has 2 complete trial(s) of unknown configuration (imported without --run-flags): they match nothing');
    }
  });

  it('matching by scenario compares suites planned on machines with different RAM', () => {
    const a = [trial({ scenario: 'cpu-only', system: 'a', configKey: 'ka', metrics: { wall_clock_throughput_tok_per_s: 2 } })];
    const b = [trial({ scenario: 'cpu-only', system: 'b', configKey: 'kb', metrics: { wall_clock_throughput_tok_per_s: 1 } })];
    expect(buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }).matched).toBe(0);
    const c = buildSystemComparison({ label: 'a', id: 'a', trials: a }, { label: 'b', id: 'b', trials: b }, { match: 'scenario' });
    expect(c.matched).toBe(1);
    expect(c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.meanRatio).toBe(2);
  });
});
