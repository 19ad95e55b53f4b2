// How the app presents what was measured (review rev8-gui #5, #6, #13), against a fake backend:
// the live throughput means what the stored one means, metrics are named after what they count,
// an efficiency of nothing is no 0 %, flags read yes/no, and times are local.
import { mount, type VueWrapper } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import { METRIC_BY_KEY } from '../../../src-shared/domain/store-types.ts';
import { report } from './fixtures.ts';
import { flush, installFakeApi } from './fake-api.ts';

const wrappers: VueWrapper[] = [];
beforeEach(() => {
  setActivePinia(createPinia());
  document.body.innerHTML = '';
});
afterEach(() => {
  for (const w of wrappers.splice(0)) w.unmount();
});
function mountIt(c: unknown, props: Record<string, unknown> = {}): VueWrapper {
  const w = mount(c as never, { attachTo: document.body, props } as never);
  wrappers.push(w);
  return w;
}

describe('report: the reference\'s "storage" metrics are named after what they count (rev8-gui #6)', () => {
  it('the tier comparison\'s column and the scenario table say cache I/O, and the column header says what it counts', async () => {
    const r = report();
    const agg = (median: number) => ({ n: 3, median, p95: median, mean: median, min: median, max: median, cv: 0.01 });
    r.report.scenarios[0].metrics.push(
      { metric: METRIC_BY_KEY.storage_throughput_tok_per_s, aggregate: agg(167) },
      { metric: METRIC_BY_KEY.storage_io_per_request_p95_ms, aggregate: agg(1251) },
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
    expect(s).toContain("Cache I/O throughput (the reference's storage_throughput)");
    expect(s).toContain('Cache I/O per request P95');
    expect(s).not.toMatch(/Storage throughput|Storage I\/O per request/);
  });
});
