// The app's report says what its numbers are in the CLI report's words (review rev12-cli L1, L2, L5):
// the bytes columns' tips, each limit's source, and how many trials a pooled latency pools.
import { describe, expect, it } from 'vitest';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import { REQUEST_LEVEL_BYTES_TEXT } from '../../../src-shared/domain/store-types.ts';
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
