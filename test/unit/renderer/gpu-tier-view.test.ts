// What the app shows of a GPU tier (review gpu-truth): its read latency in the tier comparison.
import { describe, expect, it } from 'vitest';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import { report } from './fixtures.ts';
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
