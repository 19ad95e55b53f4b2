// What the app shows of a GPU tier (review gpu-truth): its read latency in the tier comparison (M4),
// and what the tier was beside what was asked for, in a report group's header and a trial's details (M3).
import { describe, expect, it } from 'vitest';
import TrialDialog from '../../../src-renderer/components/TrialDialog.vue';
import { useAppStore } from '../../../src-renderer/stores/app.ts';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import type { TrialGpu } from '../../../src-shared/domain/gpu-tier.ts';
import { SETTINGS, hardware, report, trial } from './fixtures.ts';
import { flush, installFakeApi } from './fake-api.ts';
import { mountPerTest } from './mount-per-test.ts';

const mountIt = mountPerTest();

describe('report: the GPU tier in the tier comparison (M4)', () => {
  it('gives the GPU read P95 a column where a row had a GPU tier', async () => {
    const r = report();
    const row = r.tiers.rows[0];
    r.tiers.rows = [row, { ...row, scenarioId: 'gpu-only', label: 'GPU only', configKey: 'g1', gpuMemGb: 136, cpuMemGb: 4, gpuReadP95Ms: 31.97 }];
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const heads = w.findAll('[data-test=tier-table] thead th').map((h) => h.text());
    expect(heads.slice(heads.indexOf('Cache I/O throughput') + 1, heads.indexOf('CPU read P95') + 1)).toEqual(['GPU read P95', 'CPU read P95']);
    expect(w.findAll('[data-test=gpu-read-p95]').map((c) => c.text())).toEqual(['—', '32.0 ms']);
  });

  it('has no GPU column for a suite without a GPU tier', async () => {
    installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.get('[data-test=tier-table]').text()).toContain('CPU read P95');
    expect(w.find('[data-test=gpu-read-p95-head]').exists()).toBe(false);
  });
});

const GIB = 1024 ** 3;

/** The lent H200's snapshot: the GPU as the driver lists it. */
function h200Hardware(): HardwareProfile {
  return {
    ...hardware(),
    gpus: [{ index: 0, vendor: 'NVIDIA', model: 'NVIDIA H200', memoryBytes: 150109880320, driverVersion: '580.159.04', busId: '0000:00:06.0', compute: true, engineUsable: true }],
    cuda: { available: true, reason: null, driverVersion: '580.159.04', cudaVersion: '13.0', devices: [{ index: 0, name: 'NVIDIA H200', totalMemoryBytes: 150109880320, pciBusId: '0000:00:06.0' }] },
  };
}

const H200_TIER: TrialGpu = {
  present: true,
  reason: null,
  requestedBytes: 136 * GIB,
  reservedBytes: 136 * GIB,
  devices: [{ model: 'NVIDIA H200', reservedBytes: 136 * GIB, shortfall: null }],
  driverVersion: '580.159.04',
  cudaVersion: '13.0',
  stagingPinned: true,
  stagingReason: null,
};

describe('trial details: the GPU (M3: the dialog named the CPU, RAM and drive, no GPU)', () => {
  it('names the GPU with the hardware, and the GPU tier: reserved of asked, staging pinned, in the units of Settings', async () => {
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id), hardware: h200Hardware(), histograms: [], cautions: [], unreadable: [], gpu: H200_TIER }) });
    const w = mountIt(TrialDialog, { trialId: 2 });
    await flush();
    expect(w.get('[data-test=trial-hardware-gpus]').text()).toBe('GPU NVIDIA H200 (driver 580.159.04, supports CUDA 13.0)');
    const tier = w.get('[data-test=trial-gpu-tier]');
    expect(tier.text()).toBe('NVIDIA H200 (driver 580.159.04, supports CUDA 13.0): 146 GB reserved of 146 GB asked, staging pinned');
    expect(tier.classes()).not.toContain('warn-text');
    useAppStore().settings = { ...SETTINGS, byteUnits: 'binary' };
    await flush();
    expect(w.get('[data-test=trial-gpu-tier]').text()).toBe('NVIDIA H200 (driver 580.159.04, supports CUDA 13.0): 136 GiB reserved of 136 GiB asked, staging pinned');
  });

  it('says, as a warning, that a GPU tier was absent or smaller than asked, and why', async () => {
    const short: TrialGpu = { ...H200_TIER, reservedBytes: 120 * GIB, devices: [{ model: 'NVIDIA H200', reservedBytes: 120 * GIB, shortfall: 'capped at 128849018880 bytes' }] };
    const absent: TrialGpu = { ...H200_TIER, present: false, reason: 'no NVIDIA driver', reservedBytes: 0, devices: [], stagingPinned: null };
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id), hardware: null, histograms: [], cautions: [], unreadable: [], gpu: r.id === 1 ? short : absent }) });
    const w = mountIt(TrialDialog, { trialId: 1 });
    await flush();
    expect(w.get('[data-test=trial-gpu-tier]').text()).toBe('NVIDIA H200 (driver 580.159.04, supports CUDA 13.0): 129 GB reserved of 146 GB asked (smaller than asked: capped at 128849018880 bytes), staging pinned');
    expect(w.get('[data-test=trial-gpu-tier]').classes()).toContain('warn-text');
    await w.setProps({ trialId: 2 });
    await flush();
    expect(w.get('[data-test=trial-gpu-tier]').text()).toBe('absent though 146 GB was asked for: no NVIDIA driver; the run went on in the tiers below');
    // No snapshot of the machine: no GPU named with it.
    expect(w.find('[data-test=trial-hardware-gpus]').exists()).toBe(false);
  });

  it('has no GPU tier row for a trial that asked for none', async () => {
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id), hardware: hardware(), histograms: [], cautions: [], unreadable: [], gpu: null }) });
    const w = mountIt(TrialDialog, { trialId: 2 });
    await flush();
    expect(w.find('[data-test=trial-gpu-tier]').exists()).toBe(false);
    expect(w.find('[data-test=trial-hardware-gpus]').exists()).toBe(false);
  });
});

describe('report: a group\'s GPU tier in its header (M3: "GPU 136 GiB" was only what was asked for)', () => {
  it('names the GPUs and what the tier reserved of what was asked, in the units of Settings', async () => {
    const r = report();
    r.report.scenarios[0].gpuTier = { trials: 3, requestedBytes: 136 * GIB, reservedMinBytes: 120 * GIB, reservedMaxBytes: 136 * GIB, absentTrials: 0, smallerTrials: 1, unpinnedTrials: 0, pinnedTrials: 3, devices: 'NVIDIA H200 (driver 580.159.04, supports CUDA 13.0)' };
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.get('[data-test=group-gpu-tier]').text()).toBe('GPU tier: NVIDIA H200 (driver 580.159.04, supports CUDA 13.0), 129 GB–146 GB of 146 GB reserved (smaller than asked in 1 of 3 trials), staging pinned');
  });

  it('has none for a group without a GPU tier', async () => {
    installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.find('[data-test=group-gpu-tier]').exists()).toBe(false);
  });
});
