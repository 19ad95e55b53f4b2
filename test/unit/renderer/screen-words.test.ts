// The app's screens in the app's words (review rev12-gui M7, M8, L7): no scenario slugs, internal
// option keys, histogram keys, error codes or result-file keys where a user reads, and one meaning
// per "number" (a trial's, a scenario's).
import { describe, expect, it } from 'vitest';
import ErrorBanner from '../../../src-renderer/components/ErrorBanner.vue';
import ExportButtons from '../../../src-renderer/components/ExportButtons.vue';
import LabelText from '../../../src-renderer/components/LabelText.vue';
import { inAppWords } from '../../../src-renderer/app-words.ts';
import { inAppWords as sharedInAppWords } from '../../../src-shared/domain/app-words.ts';
import HistoryView from '../../../src-renderer/views/HistoryView.vue';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import { DOWNLOAD, report, trial } from './fixtures.ts';
import { flush, installFakeApi } from './fake-api.ts';
import { mountPerTest } from './mount-per-test.ts';

const mountIt = mountPerTest();

describe('report: the tier comparison notes (rev12-gui M8)', () => {
  it('name scenarios by their titles and options by their Plan fields, not by slugs and internal keys', async () => {
    const r = report();
    r.tiers!.notes = [
      'autoscale, tiny-1b, 2 users, 3 s, CPU 0.25 GiB: no storage-only run of this configuration (the nearest differs in --num-users 2 vs 4, --enable-autoscaling true vs false, --autoscaler-interval 1 vs 10)',
      'cpu-only: the storage tier read and wrote no bytes: no storage efficiency (—), not 0 %',
    ];
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const notes = w.findAll('ul.notes li').map((li) => li.text());
    expect(notes).toEqual([
      'Autoscaling discovery, tiny-1b, 2 users, 3 s, CPU 0.25 GiB: no Storage only run of this configuration (the nearest differs in “Users” 2 vs 4, “Autoscaling” true vs false, “Autoscaler interval (s)” 1 vs 10)',
      'CPU only: the storage tier read and wrote no bytes: no storage efficiency (—), not 0 %',
    ]);
  });
});

describe('report: pooled latency rows (rev12-gui M8)', () => {
  it("are named as the report's metrics are, the histogram's key kept as the row's tip", async () => {
    const r = report();
    const s = r.report.scenarios[0];
    s.pooled = ['end_to_end', 'storage_io_per_request', 'tier_read.storage', 'tier_write.storage', 'tier_read.cpu', 'tier_write.cpu', 'something_new'].map((name) => ({
      name, trials: 3, damagedTrials: 0, count: 900, p50Ms: 10, p95Ms: 20, p99Ms: 30, olderDefinition: null,
    }));
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const cells = w.findAll('[data-scenario-report=storage-only] details tbody tr td:first-child');
    expect(cells.map((c) => c.text())).toEqual(['End-to-end', 'Cache I/O per request', 'Storage read', 'Storage write', 'CPU read', 'CPU write', 'something_new']);
    expect(cells[1].attributes('title')).toBe('storage_io_per_request');
  });
});

describe('report: a pooled latency of two definitions (rev18 M2)', () => {
  it('shows the older trials\' pool apart, marked as the metric rows are, with a note', async () => {
    const r = report();
    const s = r.report.scenarios[0];
    const change = { since: '0.8.0', change: "is timed from the request's scheduled arrival" };
    s.pooled = [
      { name: 'end_to_end', trials: 1, damagedTrials: 0, count: 300, p50Ms: 10, p95Ms: 20, p99Ms: 30, olderDefinition: null },
      { name: 'end_to_end', trials: 2, damagedTrials: 0, count: 600, p50Ms: 5, p95Ms: 9, p99Ms: 12, olderDefinition: change },
    ];
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const cells = w.findAll('[data-scenario-report=storage-only] details tbody tr td:first-child');
    expect(cells.map((c) => c.text())).toEqual(['End-to-end', 'End-to-end (definition before 0.8.0)']);
    expect(w.get('[data-scenario-report=storage-only] [data-pooled-definition]').text()).toMatch(
      /^End-to-end \(definition before 0\.8\.0\): 2 trials were measured before kvbench 0\.8\.0 changed its definition .* pooled apart, never merged with later ones\.$/,
    );
  });
});

describe('report: the datasheet help (rev12-gui M8)', () => {
  it('explains GB/s without naming the results file\'s keys', async () => {
    installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const help = w.get('#stated-help').text();
    expect(help).not.toMatch(/_gbps|results' /);
    expect(help).toContain('decimal GB/s (10⁹ B/s), not GiB/s');
  });
});

describe('error banners (rev12-gui M8)', () => {
  it('lead with the message; the error code is kept out of the headline, for support in the tip', () => {
    const w = mountIt(ErrorBanner, { error: { code: 'VALIDATION', message: 'the cache directory cannot be a system directory: /etc' }, title: 'Detection failed' });
    expect(w.get('strong').text()).toBe('Detection failed');
    expect(w.text()).not.toContain('VALIDATION');
    expect(w.get('[role=alert]').attributes('title')).toBe('Error code (for support): VALIDATION');
    expect(w.get('[role=alert]').attributes('data-error-code')).toBe('VALIDATION');
    expect(w.text()).toContain('the cache directory cannot be a system directory: /etc');
  });
});

describe('history: a trial\'s number (rev12-gui L7)', () => {
  it('says "trial 2", not "#2" (the Plan step\'s numbers are scenarios\')', async () => {
    installFakeApi({
      'history.list': () => ({ trials: [trial(2)], total: 1 }),
      'history.facets': () => ({ systems: [], drives: [], scenarioIds: ['storage-only'], models: [], suiteLabels: [], trialCount: 1 }),
      'suites.list': () => [],
    });
    const w = mountIt(HistoryView);
    await flush();
    const row = w.get('[data-test=history-table] tbody tr[data-trial]');
    expect(row.text()).toContain('Storage only trial 2');
    expect(row.text()).not.toContain('#');
  });
});

describe("the report page's exports (rev12-gui M7)", () => {
  it('offer the report as CSV (its rows: median, P95, CV) and the trials as CSV, each named so', async () => {
    const fake = installFakeApi({
      'export.create': () => ({ fileName: 'kvbench-suite-7-report.csv', mimeType: 'text/csv', bytes: 0, trialCount: 3, delivery: DOWNLOAD, unreadable: [] }),
    });
    const w = mountIt(ExportButtons, { selection: { suiteIds: [7] }, reportCsv: true });
    await flush();
    expect(w.findAll('button').map((b) => b.text())).toEqual(['Report CSV', 'Trials CSV', 'XLSX', 'JSON']);
    await w.get('[data-export=report-csv]').trigger('click');
    await flush();
    await w.get('[data-export=csv]').trigger('click');
    await flush();
    expect(fake.callsOf('export.create')).toEqual([
      { selection: { suiteIds: [7] }, format: 'csv', includeIncomplete: false, content: 'report' },
      { selection: { suiteIds: [7] }, format: 'csv', includeIncomplete: false },
    ]);
  });

  it('History keeps one CSV, of its trials', async () => {
    installFakeApi({});
    const w = mountIt(ExportButtons, { selection: {} });
    await flush();
    expect(w.findAll('button').map((b) => b.text())).toEqual(['CSV', 'XLSX', 'JSON']);
  });

  it('the report page asks for the report CSV', async () => {
    installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.find('[data-export=report-csv]').exists()).toBe(true);
  });
});

describe('stored labels with control characters or bidirectional overrides, in messages and alone', () => {
  it("a message quoting one shows it escaped, as the CLI prints it; the backend's words (the XLSX export's) keep it as data", () => {
    const message = 'suite 3 ("abc\u202efdp.exe") was started by kvbench 0.6.0:\n\tsee --per-config';
    expect(inAppWords(message)).toBe(`suite 3 ("abc\\u{202e}fdp.exe") was started by kvbench 0.6.0:\n\tsee the “per config” buttons`);
    expect(sharedInAppWords(message)).toContain('abc\u202efdp.exe');
    const w = mountIt(ErrorBanner, { error: { code: 'VALIDATION', message } });
    expect(w.text()).toContain('"abc\\u{202e}fdp.exe"');
    expect(w.text()).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });

  it('LabelText: escaped characters marked one by one, the label isolated, the code points named', () => {
    const w = mountIt(LabelText, { text: 'abc\u202efdp\u2066.exe\u2069' });
    expect(w.element.tagName).toBe('BDI');
    expect(w.text()).toBe('abc\\u{202e}fdp\\u{2066}.exe\\u{2069}');
    expect(w.findAll('[data-test=escaped-char]').map((e) => e.text())).toEqual(['\\u{202e}', '\\u{2066}', '\\u{2069}']);
    expect(w.attributes('title')).toContain('U+202E, U+2066, U+2069');
    // A label typed with a backslash is not marked: only what was escaped is.
    const plain = mountIt(LabelText, { text: 'rig \\u{202e} as typed' });
    expect(plain.findAll('[data-test=escaped-char]')).toHaveLength(0);
    expect(plain.attributes('title')).toBeUndefined();
  });
});
