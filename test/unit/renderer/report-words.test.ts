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
