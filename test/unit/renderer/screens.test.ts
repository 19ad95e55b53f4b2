// History, report, compare, settings and the shell against a fake backend: empty, loading and
// error states, sorting, deleting with confirmation, units, and the no-token error.
import { mount, type VueWrapper } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import App from '../../../src-renderer/App.vue';
import { useAppStore } from '../../../src-renderer/stores/app.ts';
import CompareView from '../../../src-renderer/views/CompareView.vue';
import HistoryView from '../../../src-renderer/views/HistoryView.vue';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import SettingsView from '../../../src-renderer/views/SettingsView.vue';
import { METRIC_BY_KEY } from '../../../src-shared/domain/store-types.ts';
import type { ResponseOf } from '../../../src-shared/ipc/contract.ts';
import { SETTINGS, appInfo, report, trial } from './fixtures.ts';
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

const facets = (n: number): ResponseOf<'history.facets'> => ({
  systems: [
    { id: 'sys-1', label: 'lab1', hostname: 'lab1', source: 'detected', firstSeenAt: '', lastSeenAt: '', trialCount: n },
    { id: 'imp-2', label: 'slow-box', hostname: 'slow-box', source: 'imported', firstSeenAt: '', lastSeenAt: '', trialCount: 2 },
  ],
  drives: [],
  scenarioIds: ['storage-only'],
  models: ['tiny-1b'],
  trialCount: n,
});

describe('history', () => {
  it('says there is nothing yet, with a way to start', async () => {
    installFakeApi({ 'history.list': () => ({ trials: [], total: 0 }), 'history.facets': () => facets(0), 'suites.list': () => [] });
    const w = mountIt(HistoryView);
    await flush();
    expect(w.text()).toContain('No trials yet');
    expect(w.findAll('button').map((b) => b.text())).toEqual(expect.arrayContaining(['New suite', 'Import results…']));
  });

  it('lists, filters, sorts and deletes with confirmation', async () => {
    let trials = [trial(1), trial(2, { status: 'failed', statusReason: 'ENGINE_CRASHED: gone', metrics: {} }), trial(3)];
    const fake = installFakeApi({
      'history.list': () => ({ trials, total: trials.length }),
      'history.facets': () => facets(trials.length),
      'suites.list': () => [],
      'trials.delete': (r) => {
        trials = trials.filter((t) => !r.ids.includes(t.id));
        return { deleted: r.ids.length };
      },
    });
    const w = mountIt(HistoryView);
    await flush();
    const rows = () => w.findAll('[data-test=history-table] tbody tr');
    expect(rows()).toHaveLength(3);
    expect(rows()[0].text()).toContain('100 tok/s');
    expect(rows()[0].text()).toContain('2.50 GB/s');
    expect(rows()[0].text()).toContain('12.5 ms');
    expect(rows()[1].text()).toContain('ENGINE_CRASHED: gone');

    await w.get('select[name=system]').setValue('imp-2');
    await flush();
    expect(fake.callsOf('history.list').at(-1)).toMatchObject({ selection: { systemIds: ['imp-2'] } });
    await w.get('select[name=status]').setValue('failed');
    await flush();
    expect(fake.callsOf('history.list').at(-1)).toMatchObject({ selection: { systemIds: ['imp-2'], statuses: ['failed'] } });
    await w.get('input[name=since]').setValue('2026-11-02');
    await flush();
    const since = (fake.callsOf('history.list').at(-1) as { selection: { since: string } }).selection.since;
    expect(new Date(since).getDate()).toBe(2); // local midnight of that day
    const clear = w.findAll('button').find((b) => b.text() === 'Clear')!;
    await clear.trigger('click');
    await flush();

    const th = w.findAll('th button.sort').find((b) => b.text().startsWith('Throughput'))!;
    await th.trigger('click');
    await flush();
    expect(fake.callsOf('history.list').at(-1)).toMatchObject({ sort: { key: 'metric:wall_clock_throughput_tok_per_s', dir: 'desc' } });
    expect(w.get('th[aria-sort=descending]').text()).toContain('Throughput');
    await th.trigger('click');
    await flush();
    expect(fake.callsOf('history.list').at(-1)).toMatchObject({ sort: { dir: 'asc' } });

    expect(w.get('[data-test=delete-selected]').attributes('disabled')).toBeDefined();
    await rows()[1].get('input[type=checkbox]').setValue(true);
    await w.get('[data-test=delete-selected]').trigger('click');
    await flush();
    expect(document.body.textContent).toContain('Delete 1 trial(s) with their metrics');
    expect(fake.callsOf('trials.delete')).toEqual([]); // not before confirming
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(fake.callsOf('trials.delete')).toEqual([{ ids: [2] }]);
    expect(rows()).toHaveLength(2);
  });

  it('shows a load error with a retry', async () => {
    let fail = true;
    installFakeApi({
      'history.list': () => (fail ? { error: { code: 'DB_BUSY', message: 'the database is locked' } } : { trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [],
    });
    const w = mountIt(HistoryView);
    await flush();
    expect(w.get('[role=alert]').text()).toContain('the database is locked');
    fail = false;
    await w.findAll('button').find((b) => b.text() === 'Try again')!.trigger('click');
    await flush();
    expect(w.findAll('[data-test=history-table] tbody tr')).toHaveLength(1);
  });
});

describe('report', () => {
  it('shows median and P95 with units, excluded trials, the tier comparison and efficiency', async () => {
    const fake = installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(fake.callsOf('report.build')).toEqual([{ selection: { suiteIds: [7] }, includeIncomplete: false }]);
    const text = w.text();
    expect(text).toContain('Suite 7 · quick');
    expect(text).toContain('3 of 4 trial(s) aggregated');
    expect(text).toContain('Trial 4 excluded');
    expect(text).toContain('ENGINE_CRASHED: killed');
    expect(text).toContain('Trial 2 flagged: the device read 12.0 %');
    const s = w.get('[data-scenario-report=storage-only]').text();
    expect(s).toMatch(/Wall-clock throughput\s*tok\/s\s*1,235 tok\/s\s*1,300 tok\/s\s*2\.0 %\s*3/);
    expect(s).toMatch(/Storage read P95\s*ms\s*4\.25 ms\s*5\.50 ms\s*25\.0 %/);
    expect(s).toContain('2.50 GB/s');
    expect(s).not.toContain('Engine peak RSS'); // headline metrics unless asked
    const tier = w.get('[data-test=tier-table]').text();
    expect(tier).toContain('1.00×');
    expect(w.get('[data-test=efficiency-table]').text()).toContain('35.7 %');
    await w.get('input[name=allMetrics]').setValue(true);
    expect(w.get('[data-scenario-report=storage-only]').text()).toContain('Engine peak RSS');
    await w.get('input[name=includeIncomplete]').setValue(true);
    await flush();
    expect(fake.callsOf('report.build').at(-1)).toMatchObject({ includeIncomplete: true });
  });

  it('switches to binary units and microseconds from the settings', async () => {
    installFakeApi({ 'report.build': () => report() });
    useAppStore().settings = { ...SETTINGS, byteUnits: 'binary', latencyUnit: 'us' };
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const s = w.get('[data-scenario-report=storage-only]').text();
    expect(s).toContain('4,250 µs');
    expect(s).toContain('2.33 GiB/s');
  });

  it('has an empty state for a selection without trials', async () => {
    installFakeApi({ 'report.build': () => ({ ...report(), trialCount: 0, report: { method: '', includeIncomplete: false, scenarios: [] } }) });
    const w = mountIt(ReportView, { selection: {} });
    await flush();
    expect(w.text()).toContain('No trials here');
  });
});

describe('compare', () => {
  it('compares two systems: matched configurations, ratios, win rate and noise', async () => {
    const metric = METRIC_BY_KEY.wall_clock_throughput_tok_per_s;
    const fake = installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': () => ({
        a: { label: 'lab1', id: 'sys-1', trials: 4 },
        b: { label: 'slow-box', id: 'imp-2', trials: 2 },
        match: 'config',
        matched: 1,
        unmatchedA: 1,
        unmatchedB: 0,
        method: 'per configuration …',
        metrics: [
          {
            metric,
            configs: [{ key: 'k', scenarioId: 'storage-only', description: 'tiny-1b, 4u', cpuMemGb: 0.125, model: 'tiny-1b', numUsers: 4, nA: 2, nB: 2, medianA: 300, medianB: 15, ratio: 20, cvA: 0.05, cvB: 0.3, winner: 'a', withinNoise: false }],
            compared: 1,
            meanRatio: 20,
            geoMeanRatio: 20,
            medianRatio: 20,
            winRateA: 1,
            withinNoise: 0,
            medianCvA: 0.05,
            medianCvB: 0.3,
          },
        ],
        byCpuMem: [],
        byModel: [],
        variance: [],
        notes: [],
      }),
    });
    const w = mountIt(CompareView);
    await flush();
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('report.compare').at(-1)).toEqual({ kind: 'system', a: 'sys-1', b: 'imp-2', match: 'config' });
    expect(w.get('[data-test=matched]').text()).toBe('1');
    const cells = w.findAll('[data-test=compare-table] > tbody > tr')[0].findAll('td').map((td) => td.text());
    expect(cells.slice(1, 8)).toEqual(['1', '20.00×', '20.00×', '100 %', '0 of 1', '5.0 %', '30.0 %']);
    expect(cells[0]).toContain('Wall-clock throughput (higher is better)');
    await w.findAll('button').find((b) => b.text() === 'per config')!.trigger('click');
    expect(w.text()).toContain('real');
  });
});

describe('settings and the shell', () => {
  it('saves settings and shows a refused database', async () => {
    const fake = installFakeApi({
      'app.info': () => appInfo(),
      'settings.update': (r) => (r.databasePath === '/etc/passwd' ? { error: { code: 'DB_CORRUPT', message: '/etc/passwd is not a SQLite database' } } : { ...SETTINGS, ...r }),
    });
    const app = useAppStore();
    await app.load();
    const w = mountIt(SettingsView);
    await flush();
    await w.get('input[name=byteUnits][value=binary]').setValue(true);
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('settings.update').at(-1)).toMatchObject({ byteUnits: 'binary', databasePath: '/data/kvbench.db' });
    expect(w.text()).toContain('Saved.');
    await w.get('input[name=databasePath]').setValue('/etc/passwd');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[role=alert]').text()).toContain('/etc/passwd is not a SQLite database');
  });

  it('tells a browser without the token what to do', async () => {
    installFakeApi({ 'app.info': () => ({ error: { code: 'UNAUTHORIZED', message: 'No access token: open the URL that kvbench serve printed (it ends in ?token=…).' } }) });
    const w = mountIt(App);
    await flush(10);
    expect(w.text()).toContain('This page needs its access token');
    expect(w.text()).toContain('open the URL that kvbench serve printed');
  });

  it('opens on the wizard and detects at once; the navigation is keyboard-reachable buttons', async () => {
    const fake = installFakeApi({
      'app.info': () => appInfo(),
      'suite.status': () => ({ state: 'idle', suiteId: null, request: null, plan: null, startedAt: null, events: [] }),
      'hardware.detect': () => ({ error: { code: 'INTERNAL', message: 'no' } }),
    });
    const w = mountIt(App);
    await flush(10);
    expect(fake.callsOf('hardware.detect')).toEqual([{ cacheDir: '/mnt/nvme/kv' }]);
    const nav = w.findAll('nav button.nav-item');
    expect(nav.map((b) => b.text())).toEqual(['New suite', 'History', 'Compare', 'Settings']);
    expect(nav[0].attributes('aria-current')).toBe('page');
    expect(w.text()).toContain('v0.1.0 · served');
  });
});
