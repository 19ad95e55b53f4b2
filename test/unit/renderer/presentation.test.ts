// How the app presents what was measured (review rev8-gui #5, #6, #13), against a fake backend:
// the live throughput means what the stored one means, metrics are named after what they count,
// an efficiency of nothing is no 0 %, flags read yes/no, and times are local.
import type { VueWrapper } from '@vue/test-utils';
import { describe, expect, it } from 'vitest';
import LineChart from '../../../src-renderer/components/LineChart.vue';
import TrialDialog from '../../../src-renderer/components/TrialDialog.vue';
import type { LineSeries } from '../../../src-renderer/components/chart-types.ts';
import { useAppStore } from '../../../src-renderer/stores/app.ts';
import { useLiveRunStore } from '../../../src-renderer/stores/live-run.ts';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import RunStep from '../../../src-renderer/views/RunStep.vue';
import type { SuiteTrialRef } from '../../../src-shared/domain/scenarios.ts';
import type { ProgressEvent } from '../../../src-shared/engine-protocol.ts';
import { METRIC_BY_KEY } from '../../../src-shared/domain/store-types.ts';
import { SETTINGS, plan, report, trial } from './fixtures.ts';
import { flush, installFakeApi } from './fake-api.ts';
import { mountPerTest } from './mount-per-test.ts';

const mountIt = mountPerTest();

describe('report: the reference\'s "storage" metrics are named after what they count (rev8-gui #6)', () => {
  it('the tier comparison\'s column and the scenario table say cache I/O, and the column header says what it counts', async () => {
    const r = report();
    const agg = (median: number) => ({ n: 3, median, p95: median, mean: median, min: median, max: median, cv: 0.01 });
    r.report.scenarios[0].metrics.push(
      { metric: METRIC_BY_KEY.storage_throughput_tok_per_s, aggregate: agg(167), olderDefinition: null },
      { metric: METRIC_BY_KEY.storage_io_per_request_p95_ms, aggregate: agg(1251), olderDefinition: null },
    );
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const tier = w.get('[data-test=tier-table]');
    expect(tier.text()).not.toContain('Storage metric');
    const head = tier.get('[data-test=cache-io-tput-head]');
    expect(head.text()).toBe('Cache I/O throughput');
    expect(head.attributes('title')).toMatch(/cache I\/O times: every read and write of a request on whichever tier served it \(GPU, CPU or storage\)/);
    const s = w.get('[data-scenario-report=storage-only]').text();
    expect(s).toContain("Cache I/O throughput");
    expect(s).toContain('Cache I/O per request P95');
    expect(s).not.toMatch(/Storage throughput|Storage I\/O per request/);
  });
});

describe('run step: the live throughput means what the stored one means (rev8-gui #5)', () => {
  const ref: SuiteTrialRef = { suiteId: 7, trialId: 11, scenarioId: 'cpu-only', label: 'CPU only', trialIndex: 1, trialsPerScenario: 2, ordinal: 2, total: 4 };
  const progress = (over: Partial<ProgressEvent>): ProgressEvent => ({
    phase: 'running', elapsedNs: 0, durationNs: 3e9, requestsCompleted: 0, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokensPerSec: 0,
    storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: null, storageReadP95Ns: null, eventLoopLagP99Ns: null, ...over,
  });
  /** The Run step, its suite started and the trial `ref` running. */
  const runStepWithTrial = () => {
    installFakeApi({});
    const run = useLiveRunStore();
    run.runPlan = plan();
    const w = mountIt(RunStep);
    run.handleEvent({ type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 });
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 123, ...ref });
    return { run, w };
  };

  it('shows generated tokens ÷ the window so far, with the last interval\'s rate beside it and named', async () => {
    const { run, w } = runStepWithTrial();
    // The review's moment: 8 requests, 837 tokens in 3.0 s (279 tok/s, what the trial stores), while the
    // last second's rate was 556 tok/s; a second in which no request finished reads 0 there.
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ elapsedNs: 3e9, requestsCompleted: 8, generatedTokens: 837, generatedTokensPerSec: 556 }) });
    await flush();
    expect(w.get('[data-test=live-tput]').text()).toBe('279');
    expect(w.get('[data-test=live-tput-sub]').text()).toBe('tokens/s over the measured window · 8 requests · last 1 s: 556');
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ elapsedNs: 3.1e9, requestsCompleted: 8, generatedTokens: 837, generatedTokensPerSec: 0 }) });
    await flush();
    expect(w.get('[data-test=live-tput]').text()).toBe('270');
    expect(w.get('[data-test=live-tput-sub]').text()).toMatch(/last 1 s:\s+0\.00$/);
    // In a warm-up the average is the warm-up's, and says so.
    run.handleEvent({ type: 'suite.trialStarted', enginePid: 124, ...ref, trialIndex: 0, trialId: 12, ordinal: 3 });
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, trialIndex: 0, trialId: 12, ordinal: 3, progress: progress({ phase: 'warming-up', elapsedNs: 2e9, requestsCompleted: 2, generatedTokens: 100, generatedTokensPerSec: 40 }) });
    await flush();
    expect(w.get('[data-test=live-tput]').text()).toBe('50.0');
    expect(w.get('[data-test=live-tput-sub]').text()).toBe('tokens/s over the warm-up · 2 requests · last 1 s: 40.0');
  });

  it('shows storage read and write as the stored bandwidths: the bytes so far ÷ the window, the last interval\'s rates named beside them, in the chosen units', async () => {
    const { run, w } = runStepWithTrial();
    // 6 GB read and 1 GB written in 4 s of the window (what the trial would store: 1.5 and 0.25 GB/s),
    // while the last second read 1 GB/s and wrote 0.2 GB/s.
    const at4s = progress({ elapsedNs: 4e9, requestsCompleted: 8, generatedTokens: 800, storageReadBytes: 6e9, storageWriteBytes: 1e9, storageReadBytesPerSec: 1e9, storageWriteBytesPerSec: 2e8 });
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: at4s });
    await flush();
    expect(w.get('[data-test=live-storage]').text()).toBe('1.50 GB/s');
    expect(w.get('[data-test=live-storage-sub]').text().replace(/\s+/g, ' ')).toBe('write 250 MB/s over the measured window · last 1 s: read 1.00 GB/s · write 200 MB/s');
    useAppStore().settings = { ...SETTINGS, byteUnits: 'binary' };
    await flush();
    expect(w.get('[data-test=live-storage]').text()).toBe('1.40 GiB/s');
    expect(w.get('[data-test=live-storage-sub]').text().replace(/\s+/g, ' ')).toBe('write 238 MiB/s over the measured window · last 1 s: read 954 MiB/s · write 191 MiB/s');
    // The big number is the read, and its tile says so: "read · write 250 MB/s" read as one combined figure (rev10 D4).
    expect(w.get('[data-test=live-storage-label]').text()).toBe('Storage read so far');
  });

  it('ends on the stored figures: the engine\'s finishing event, not the last running one before the window closed (rev10 D4)', async () => {
    const { run, w } = runStepWithTrial();
    // The review's trial: the last running event at 7.99 s, then the window closed at 8.0013 s with
    // 54 requests and the bytes the trial stores (1,256,674,559 B/s read).
    const readBytes = 1_256_674_559 * 8.0013;
    const writeBytes = 338e6 * 8.0013;
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ elapsedNs: 7.99e9, requestsCompleted: 53, generatedTokens: 5300, storageReadBytes: 1.2526e9 * 7.99, storageWriteBytes: 3.38e8 * 7.99, generatedTokensPerSec: 700, storageReadBytesPerSec: 1.1e9, storageWriteBytesPerSec: 3e8 }) });
    await flush();
    expect(w.get('[data-test=live-storage]').text()).toBe('1.25 GB/s');
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ phase: 'draining', elapsedNs: 8.0013e9, requestsCompleted: 54, generatedTokens: 5400, storageReadBytes: readBytes, storageWriteBytes: writeBytes }) });
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ phase: 'finishing', elapsedNs: 8.0013e9, requestsCompleted: 54, generatedTokens: 5400, storageReadBytes: readBytes, storageWriteBytes: writeBytes }) });
    await flush();
    expect(w.get('[data-test=live-storage]').text()).toBe('1.26 GB/s');
    expect(w.get('[data-test=live-storage-sub]').text().replace(/\s+/g, ' ')).toBe('write 338 MB/s over the measured window · last 1 s: read 1.10 GB/s · write 300 MB/s');
    expect(w.get('[data-test=live-tput]').text()).toBe('675');
    expect(w.get('[data-test=live-tput-sub]').text()).toBe('tokens/s over the measured window · 54 requests · last 1 s: 700');
    // Until the next trial starts, the tile keeps them.
    run.handleEvent({ type: 'suite.trialFinished', ...ref, status: 'complete', wallMs: 9000, wallClockThroughputTokPerS: 675, storageReadBytesPerS: 1_256_674_559, reason: null });
    await flush();
    expect(w.get('[data-test=live-storage]').text()).toBe('1.26 GB/s');
  });

  it('shows no last-interval rate before one whole interval has run, and counts one request in the singular (rev10 D4)', async () => {
    const { run, w } = runStepWithTrial();
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ elapsedNs: 0.4e9, requestsCompleted: 1, generatedTokens: 40, storageWriteBytes: 2.4e8 }) });
    await flush();
    expect(w.get('[data-test=live-tput-sub]').text()).toBe('tokens/s over the measured window · 1 request · last 1 s: —');
    expect(w.get('[data-test=live-storage-sub]').text().replace(/\s+/g, ' ')).toBe('write 600 MB/s over the measured window · last 1 s: read — · write —');
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ elapsedNs: 1e9, requestsCompleted: 2, generatedTokens: 80, storageWriteBytes: 6e8, generatedTokensPerSec: 80, storageWriteBytesPerSec: 6e8 }) });
    await flush();
    expect(w.get('[data-test=live-tput-sub]').text()).toBe('tokens/s over the measured window · 2 requests · last 1 s: 80.0');
    expect(w.get('[data-test=live-storage-sub]').text().replace(/\s+/g, ' ')).toBe('write 600 MB/s over the measured window · last 1 s: read 0 B/s · write 600 MB/s');
  });

  it('labels the live charts\' series as per-interval rates and P95s so far', async () => {
    const { run, w } = runStepWithTrial();
    run.handleEvent({ type: 'suite.trialProgressed', ...ref, progress: progress({ elapsedNs: 1e9, requestsCompleted: 2, generatedTokens: 200, generatedTokensPerSec: 200, storageReadBytesPerSec: 1e9, e2eLatencyP95Ns: 2e7 }) });
    await flush();
    const [tput, lat] = w.findAllComponents(LineChart);
    expect(tput.props('title')).toBe("Throughput of the current trial, each interval's own");
    expect(w.get('[data-test=tput-chart-title]').text()).toBe('Throughput, each 1 s');
    expect(w.get('[data-test=latency-chart-title]').text()).toBe('Latency, P95 so far');
    expect(tput.props('series').map((x: LineSeries) => x.label)).toEqual(['Generated tokens/s, each 1 s', 'Storage read (GB/s), each 1 s', 'Storage write (GB/s), each 1 s']);
    expect(lat.props('series').map((x: LineSeries) => x.label)).toEqual(['End-to-end P95 so far (ms)', 'Storage read P95 so far (ms)']);
  });
});

describe('report: efficiency where a tier moved nothing (rev8-gui #13a)', () => {
  it('reads "—" with the model\'s reason as its tooltip, not 0.0 %', async () => {
    const r = report();
    const base = r.tiers!.rows[0];
    r.tiers!.rows.unshift({
      ...base, scenarioId: 'cpu-only', label: 'CPU only', storageReadBytesPerS: 0, storageWriteBytesPerS: 0, storageReadEfficiency: null, storageWriteEfficiency: null, cpuReadEfficiency: 0.5,
      storageReadEfficiencyNote: 'the storage tier read no bytes (0 B/s): nothing of the drive to measure',
      storageWriteEfficiencyNote: 'the storage tier wrote no bytes (0 B/s): nothing of the drive to measure',
      cpuReadEfficiencyNote: null,
    });
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const row = w.findAll('[data-test=efficiency-table] tbody tr').find((x) => x.text().startsWith('CPU only'))!;
    expect(row.get('[data-test=read-eff]').text()).toBe('—');
    expect(row.get('[data-test=read-eff]').attributes('title')).toBe('the storage tier read no bytes (0 B/s): nothing of the drive to measure');
    expect(row.get('[data-test=write-eff]').attributes('title')).toBe('the storage tier wrote no bytes (0 B/s): nothing of the drive to measure');
    expect(row.get('[data-test=cpu-read-eff]').text()).toBe('50.0 %');
    expect(row.get('[data-test=cpu-read-eff]').attributes('title')).toBeUndefined();
  });
});

describe('trial dialog: yes/no facts (rev8-gui #13b)', () => {
  it('shows the flags stored as 1 or 0 as yes or no, and counts as numbers', async () => {
    const metrics = { wall_clock_throughput_tok_per_s: 279, requests_completed: 8, storage_direct_io: 1, storage_ram_backed: 0, page_cache_flagged: 0, autoscale_peak_found: 1, autoscale_target_met: 0 };
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id, { metrics }), hardware: null, histograms: [], cautions: [], unreadable: [] }) });
    const w = mountIt(TrialDialog, { trialId: 2 });
    await flush();
    const value = (key: string): string => w.get(`[data-metric=${key}]`).text();
    expect(value('storage_direct_io')).toBe('yes');
    expect(value('storage_ram_backed')).toBe('no');
    expect(value('page_cache_flagged')).toBe('no');
    expect(value('autoscale_peak_found')).toBe('yes');
    expect(value('autoscale_target_met')).toBe('no');
    expect(value('requests_completed')).toBe('8');
    expect(w.text()).toMatch(/Storage tier used direct I\/O\s*yes/);
    expect(w.text()).toMatch(/Cache dir on a RAM filesystem\s*no/);
  });
});

describe('report: the tier comparison\'s n agrees with its medians (rev8-gui #13c)', () => {
  it('shows the range of trials the row\'s medians are over, with which as its tooltip', async () => {
    const r = report();
    const note = 'Wall-clock throughput and Storage read P95: medians of 1 of the 2 trials (the other recorded none)';
    Object.assign(r.tiers!.rows[0], { n: 2, fewestTrials: 1, trialsNote: note });
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const n = w.get('[data-test=tier-n]');
    expect(n.text()).toBe('1–2');
    expect(n.attributes('title')).toBe(note);
  });
});

describe('report: the limits\' time in the page\'s local format (rev8-gui #13d)', () => {
  it('shows when the probe ran as the page shows other times, not as a raw ISO timestamp', async () => {
    const r = report();
    r.tiers!.probe = { ...r.tiers!.probe, source: 'kvbench probe (O_DIRECT, 16 MiB × 16) of virtual disk vda (256 GiB)', measuredAt: '2026-11-24T21:13:39.472Z' };
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const d = new Date('2026-11-24T21:13:39.472Z');
    const p = (n: number): string => String(n).padStart(2, '0');
    const local = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
    const text = w.get('[data-test=limits-source]').text();
    expect(text).toBe(`kvbench probe (O_DIRECT, 16 MiB × 16) of virtual disk vda (256 GiB), ${local}`);
    expect(text).not.toContain('T21:13:39');
  });
});

describe("report: the GPU copy probe's limits beside the memory copy's (gpu-truth M6)", () => {
  it('shows them in the units chosen, with their source and local time; says none where a GPU row has no probe, nothing without GPU rows', async () => {
    const r = report();
    r.tiers!.probe = { ...r.tiers!.probe, gpuH2dBytesPerS: 53.38e9, gpuD2hBytesPerS: 53.68e9, gpuCopySource: 'kvbench GPU copy probe (GPU 0, NVIDIA H200: 16 MiB copies through the GPU tier, pinned staging, link busy)', gpuCopyMeasuredAt: '2026-11-25T13:25:47.784Z' };
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.get('[data-test=gpu-copy-limit]').text()).toBe('host→device 53.4 GB/s, device→host 53.7 GB/s');
    const d = new Date('2026-11-25T13:25:47.784Z');
    const p = (n: number): string => String(n).padStart(2, '0');
    expect(w.get('[data-test=gpu-copy-source]').text()).toBe(
      `kvbench GPU copy probe (GPU 0, NVIDIA H200: 16 MiB copies through the GPU tier, pinned staging, link busy), ${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`,
    );

    const gpuRow = report();
    gpuRow.tiers!.rows[0].gpuMemGb = 136;
    gpuRow.tiers!.probe = { ...gpuRow.tiers!.probe, gpuH2dBytesPerS: null, gpuD2hBytesPerS: null, gpuCopySource: 'no GPU copy probe', gpuCopyMeasuredAt: null };
    installFakeApi({ 'report.build': () => gpuRow });
    const w2 = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w2.get('[data-test=gpu-copy-source]').text()).toBe('no GPU copy probe');

    installFakeApi({ 'report.build': () => report() });
    const w3 = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w3.find('[data-test=gpu-copy-limit]').exists()).toBe(false);
  });
});
