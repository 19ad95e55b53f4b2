// The app's report says what its numbers are in the CLI report's words (review rev12-cli L1, L2, L5):
// the bytes columns' tips, each limit's source, and how many trials a pooled latency pools.
import { describe, expect, it } from 'vitest';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import { REQUEST_LEVEL_BYTES_TEXT } from '../../../src-shared/domain/store-types.ts';
import { EFFICIENCY_DEFINITIONS } from '../../../src-shared/domain/tiers.ts';
import { report } from './fixtures.ts';
import { flush, installFakeApi } from './fake-api.ts';
import { mountPerTest } from './mount-per-test.ts';

const mountIt = mountPerTest();

describe('report: the efficiency card\'s bytes columns (rev12-cli L1)', () => {
  it('tell what they hold in the words of the text report\'s legend', async () => {
    installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const heads = w.findAll('[data-test=efficiency-table] thead th');
    for (const name of ['Bytes read', 'Bytes written']) {
      const th = heads.find((h) => h.text() === name)!;
      expect(th.attributes('title')).toContain(REQUEST_LEVEL_BYTES_TEXT);
    }
  });
});

describe('report: the efficiency card names each limit\'s source (rev12-cli L2)', () => {
  it('with the datasheet figures stated, the drive\'s limits are said to be stated and the memory copy the probe\'s', async () => {
    const r = report();
    const limits = {
      ...r.tiers!.probe, readBytesPerS: 2e9, writeBytesPerS: 1e9, readLimitFrom: 'stated' as const, writeLimitFrom: 'stated' as const,
      source: 'stated by the user (read 2.00 GB/s, write 1.00 GB/s)', measuredAt: null,
      memoryCopyBytesPerS: 4.25e9, memoryCopySource: 'kvbench memory-copy probe (one thread)', memoryCopyMeasuredAt: null,
    };
    r.tiers!.probe = limits;
    r.tiers!.rows[0].limits = limits;
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const card = w.get('section[aria-labelledby=eff-h]');
    const facts = Object.fromEntries(card.findAll('dl.kv dt').map((dt) => [dt.text(), (dt.element.nextElementSibling as HTMLElement).textContent!.trim()]));
    expect(facts['Drive limits from']).toBe('stated by the user (read 2.00 GB/s, write 1.00 GB/s)');
    expect(facts['Memory copy from']).toBe('kvbench memory-copy probe (one thread)');
    expect(Object.keys(facts)).not.toContain('Limits from');
    expect(card.get('[data-test=limits-basis]').text()).toBe("bandwidth reached ÷ the limit. Drive: the datasheet figures you state; memory copy: the probe's measurement");
  });

  it('with one direction stated, the card says which; with none, the probe\'s', async () => {
    const r = report();
    r.tiers!.probe = { ...r.tiers!.probe, readLimitFrom: 'stated', writeLimitFrom: 'probe' };
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.get('[data-test=limits-basis]').text()).toBe(
      "bandwidth reached ÷ the limit. Drive read: the datasheet figure you state; drive write: the probe's measurement; memory copy: the probe's measurement",
    );
    r.tiers!.probe = { ...r.tiers!.probe, readLimitFrom: 'probe', writeLimitFrom: 'probe' };
    const w2 = mountIt(ReportView, { selection: { suiteIds: [8] } });
    await flush();
    expect(w2.get('[data-test=limits-basis]').text()).toBe('bandwidth reached ÷ the limit the probe measured (drive and memory copy)');
  });
});

describe('report: pooled latency says how many of the trials it pools (rev12-cli L5)', () => {
  it('over 1 of the 2 trials, with why the other is not in it, in the text report\'s words', async () => {
    const r = report();
    const s = r.report.scenarios[0];
    s.trialIds = [1, 2];
    s.pooled = [{ name: 'end_to_end', trials: 1, damagedTrials: 0, count: 27, p50Ms: 10, p95Ms: 20, p99Ms: 30, olderDefinition: null }];
    s.withoutHistograms = { trials: 1, referenceImports: 1 };
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const card = w.get('[data-scenario-report=storage-only]');
    expect(card.get('details summary').text()).toBe('Pooled latency percentiles (merged HDR histograms) over 1 of the 2 trials');
    expect(card.get('[data-pooled-without]').text()).toBe('1 of the 2 trials stored no latency histograms (imported from a reference-format results file, which keeps none): left out of these percentiles.');
    expect(card.findAll('details thead th').map((th) => th.text())).toEqual(['Histogram', 'Trials', 'Samples', 'P50', 'P95', 'P99']);
  });

  it('none with histograms: says so where the pooled table would be', async () => {
    const r = report();
    const s = r.report.scenarios[0];
    s.pooled = [];
    s.withoutHistograms = { trials: 3, referenceImports: 3 };
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const card = w.get('[data-scenario-report=storage-only]');
    expect(card.find('details').exists()).toBe(false);
    expect(card.get('[data-pooled-without]').text()).toBe('No pooled latency: none of the 3 trials stored latency histograms (imported from reference-format results files, which keep none).');
  });
});

describe("report: the efficiency card's GPU columns (review gpu-truth M6)", () => {
  it('give a row with a GPU tier its read and write efficiency while the link was busy, named apart from the CPU one over the window', async () => {
    const r = report();
    const base = r.tiers!.rows[0];
    r.tiers!.rows.unshift({
      ...base, scenarioId: 'gpu-only', label: 'GPU only', gpuMemGb: 136, gpuReadP95Ms: 31.97,
      gpuReadBusyEfficiency: 0.8413, gpuWriteBusyEfficiency: null, gpuReadBusyEfficiencyNote: null, gpuWriteBusyEfficiencyNote: 'no GPU copy probe',
    });
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const heads = w.findAll('[data-test=efficiency-table] thead th');
    const head = (name: string) => heads.find((h) => h.text() === name)!;
    expect(head('GPU read eff. (busy)').attributes('title')).toBe(EFFICIENCY_DEFINITIONS.gpu_read_busy_efficiency);
    expect(head('GPU write eff. (busy)').attributes('title')).toBe(EFFICIENCY_DEFINITIONS.gpu_write_busy_efficiency);
    expect(head('CPU read eff. (incl. demotions)').attributes('title')).toBe(EFFICIENCY_DEFINITIONS.cpu_read_efficiency);
    const row = w.findAll('[data-test=efficiency-table] tbody tr').find((x) => x.text().startsWith('GPU only'))!;
    expect(row.get('[data-test=gpu-read-eff]').text()).toBe('84.1 %');
    expect(row.get('[data-test=gpu-write-eff]').text()).toBe('—');
    expect(row.get('[data-test=gpu-write-eff]').attributes('title')).toBe('no GPU copy probe');
    // The storage row beside it: no GPU tier, said as the cell's tip.
    const storage = w.findAll('[data-test=efficiency-table] tbody tr').find((x) => x.text().startsWith('Storage only'))!;
    expect(storage.get('[data-test=gpu-read-eff]').attributes('title')).toBe('no GPU tier');
  });

  it('are left out where no row had a GPU tier', async () => {
    installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.find('[data-test=gpu-read-eff]').exists()).toBe(false);
    expect(w.get('[data-test=efficiency-table] thead').text()).not.toContain('GPU');
  });
});
