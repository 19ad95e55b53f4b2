// History, report, compare, the real-engine view, settings and the shell against a fake backend:
// empty, loading and error states, sorting, deleting with confirmation, units, and the no-token error.
import type { VueWrapper } from '@vue/test-utils';
import { describe, expect, it, vi } from 'vitest';
import App from '../../../src-renderer/App.vue';
import { COLORS } from '../../../src-renderer/charts.ts';
import BarChart from '../../../src-renderer/components/BarChart.vue';
import type { BarSeries } from '../../../src-renderer/components/chart-types.ts';
import ExportButtons from '../../../src-renderer/components/ExportButtons.vue';
import ImportDialog from '../../../src-renderer/components/ImportDialog.vue';
import TrialDialog from '../../../src-renderer/components/TrialDialog.vue';
import LineChart from '../../../src-renderer/components/LineChart.vue';
import { useAppStore } from '../../../src-renderer/stores/app.ts';
import { useHistoryStore } from '../../../src-renderer/stores/history.ts';
import { useLiveRunStore } from '../../../src-renderer/stores/live-run.ts';
import { useWizardStore } from '../../../src-renderer/stores/wizard.ts';
import CompareView from '../../../src-renderer/views/CompareView.vue';
import EndpointView from '../../../src-renderer/views/EndpointView.vue';
import HistoryView from '../../../src-renderer/views/HistoryView.vue';
import ReportView from '../../../src-renderer/views/ReportView.vue';
import SettingsView from '../../../src-renderer/views/SettingsView.vue';
import { METRIC_BY_KEY } from '../../../src-shared/domain/store-types.ts';
import type { IpcError, RequestOf, ResponseOf } from '../../../src-shared/ipc/contract.ts';
import { endpointComparison, endpointDetail, endpointList, endpointRow } from './endpoint-fixtures.ts';
import { DOWNLOAD, SETTINGS, appInfo, report, suiteRecord as suite, trial } from './fixtures.ts';
import { flush, installFakeApi } from './fake-api.ts';
import { mountPerTest } from './mount-per-test.ts';

const mountIt = mountPerTest();

const facets = (n: number): ResponseOf<'history.facets'> => ({
  systems: [
    { id: 'sys-1', label: 'lab1', hostname: 'lab1', source: 'detected', firstSeenAt: '', lastSeenAt: '', trialCount: n },
    { id: 'imp-2', label: 'slow-box', hostname: 'slow-box', source: 'imported', firstSeenAt: '', lastSeenAt: '', trialCount: 2 },
  ],
  drives: [],
  scenarioIds: ['storage-only'],
  models: ['tiny-1b'],
  suiteLabels: [
    { label: 'fw 2.2', suites: 1, trialCount: 2 },
    { label: 'drive A, firmware 2.1', suites: 2, trialCount: 4 },
  ],
  trialCount: n,
});

/** A backend for the history screen over `initial`: listed a page at a time as history.list is, deleted on request. */
function fakeHistoryApi(initial: ReturnType<typeof trial>[]) {
  let trials = initial;
  return installFakeApi({
    'history.list': (r) => ({ trials: trials.slice(r.offset ?? 0, (r.offset ?? 0) + (r.limit ?? 50)), total: trials.length }),
    'history.facets': () => facets(trials.length),
    'suites.list': () => [],
    'trials.delete': (r) => {
      trials = trials.filter((t) => !r.ids.includes(t.id));
      return { deleted: r.ids.length };
    },
  });
}

describe('history', () => {
  it('says there is nothing yet, with a way to start', async () => {
    installFakeApi({ 'history.list': () => ({ trials: [], total: 0 }), 'history.facets': () => facets(0), 'suites.list': () => [] });
    const w = mountIt(HistoryView);
    await flush();
    expect(w.text()).toContain('No trials yet');
    expect(w.findAll('button').map((b) => b.text())).toEqual(expect.arrayContaining(['New suite', 'Import results…']));
  });

  it("marks an e2e P95 measured before 0.8.0 changed its definition, as the report does (rev18 L6)", async () => {
    fakeHistoryApi([trial(1, { measuredByVersion: '0.7.0' }), trial(2, { measuredByVersion: '0.8.0' }), trial(3, { measuredByVersion: null })]);
    const w = mountIt(HistoryView);
    await flush();
    const marks = w.findAll('[data-test=history-table] tbody tr[data-trial]').map((r) => r.find('[data-test=older-definition]'));
    expect(marks.map((m) => m.exists())).toEqual([true, false, false]);
    expect(marks[0].attributes('title')).toMatch(/^Measured under its definition before 0\.8\.0: not comparable with values measured by kvbench 0\.8\.0 or later/);
    expect(marks[0].text()).toBe('* (definition before 0.8.0)');
  });

  it('lists, filters, sorts and deletes with confirmation', async () => {
    const fake = fakeHistoryApi([trial(1), trial(2, { status: 'failed', statusReason: 'ENGINE_CRASHED: gone', metrics: {} }), trial(3)]);
    const w = mountIt(HistoryView);
    await flush();
    const rows = () => w.findAll('[data-test=history-table] tbody tr[data-trial]');
    expect(rows()).toHaveLength(3);
    expect(rows()[0].text()).toContain('100 tok/s');
    expect(rows()[0].text()).toContain('2.50 GB/s');
    expect(rows()[0].text()).toContain('12.5 ms');
    // The note is a line of its own under its trial (the only one with a note).
    expect(w.findAll('[data-test=history-table] tbody tr.note-row').map((r) => [r.attributes('data-note-of'), r.text()])).toEqual([['2', 'Note on trial 2: ENGINE_CRASHED: gone']]);
    expect(rows()[1].element.nextElementSibling).toBe(w.get('[data-note-of="2"]').element);
    // A screen reader's name for the date button includes the date shown (label in name).
    const openButton = rows()[0].get('td:nth-child(2) button');
    expect(openButton.attributes('aria-label')).toMatch(/^Open trial 1, /);
    expect(openButton.attributes('aria-label')).toContain(openButton.text());

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

  it('shows each trial\'s suite label, in its dialog too, filters by label and exports what the filter shows', async () => {
    const label = 'drive A, firmware 2.1';
    const labelled = trial(1, { suiteId: 2, suiteLabel: label });
    const fake = installFakeApi({
      'history.list': (r) => (r.selection.suiteLabels ? { trials: [labelled], total: 1 } : { trials: [labelled, trial(2)], total: 2 }),
      'history.facets': () => facets(2),
      'suites.list': () => [],
      'trials.get': (r) => ({ trial: r.id === 1 ? labelled : trial(r.id), hardware: null, histograms: [], cautions: [], unreadable: [] }),
      'export.create': () => ({ fileName: 'kvbench-trials.csv', mimeType: 'text/csv', bytes: 1, trialCount: 1, delivery: DOWNLOAD }),
    });
    const w = mountIt(HistoryView);
    await flush();
    const rows = () => w.findAll('[data-test=history-table] tbody tr');
    expect(w.get('[data-test=history-table] thead th[title^="The suite\'s number"]').text()).toBe('Suite');
    expect(rows()[0].get('[data-test=suite-label]').text()).toBe(label);
    expect(rows()[1].find('[data-test=suite-label]').exists()).toBe(false);

    // The labels to filter by: each once, with its trials.
    expect(w.findAll('select[name=suiteLabel] option').map((o) => o.text())).toEqual(['All', 'fw 2.2 (2)', `${label} (4)`]);
    await w.get('select[name=suiteLabel]').setValue(label);
    await flush();
    expect(fake.callsOf('history.list').at(-1)).toMatchObject({ selection: { suiteLabels: [label] } });
    expect(rows()).toHaveLength(1);
    await w.get('[data-export=csv]').trigger('click');
    await flush();
    expect(fake.callsOf('export.create').at(-1)).toMatchObject({ selection: { suiteLabels: [label] }, format: 'csv' });

    const dialog = mountIt(TrialDialog, { trialId: 1 });
    await flush();
    expect(dialog.get('[data-test=trial-suite-label]').text()).toBe(label);
    await dialog.setProps({ trialId: 2 });
    await flush();
    expect(dialog.get('[data-test=trial-suite-label]').text()).toBe('— (its suite has none)');
  });

  it('marks the trials the report flags, with why, as kvbench history does (rev12-gui M1)', async () => {
    const why = "the qos autoscaler's latency target was not met at the end (the storage P95 was over its threshold in the last interval that measured it): its final users do not fit under the target";
    installFakeApi({
      'history.list': () => ({ trials: [trial(1), trial(2)], total: 2, cautions: [{ trialId: 2, messages: [why] }] }),
      'history.facets': () => facets(2),
      'suites.list': () => [],
    });
    const w = mountIt(HistoryView);
    await flush();
    const flag = w.get('tr[data-trial="2"] [data-test=flag]');
    expect(flag.text()).toContain('flagged');
    expect(w.find('tr[data-trial="1"] [data-test=flag]').exists()).toBe(false);
    expect(w.get('[data-note-of="2"]').text()).toBe(`Note on trial 2: Flagged: ${why}`);
    expect(w.find('[data-note-of="1"]').exists()).toBe(false);
  });

  it('its filters narrow each other: each value counted under the other filters, those with none disabled (rev12-gui L14)', async () => {
    const fake = installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': (r) => ({
        ...facets(2),
        scenarioIds: ['storage-only', 'cpu-only'],
        matching: {
          systems: { 'sys-1': 1 },
          drives: {},
          suiteLabels: { 'fw 2.2': 1, 'drive A, firmware 2.1': 1 },
          models: { 'tiny-1b': 1 },
          scenarioIds: r.selection?.suiteLabels ? { 'storage-only': 1 } : ({ 'storage-only': 1, 'cpu-only': 1 } as Record<string, number>),
          statuses: { complete: 1 },
        },
      }),
      'suites.list': () => [],
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('select[name=suiteLabel]').setValue('fw 2.2');
    await flush();
    expect(fake.callsOf('history.facets').at(-1)).toEqual({ selection: { suiteLabels: ['fw 2.2'] } });
    const scenarios = w.findAll('select[name=scenario] option').map((o) => [o.text(), (o.element as HTMLOptionElement).disabled]);
    expect(scenarios).toEqual([
      ['All', false],
      ['Storage only (1)', false],
      ['CPU only (0)', true],
    ]);
    expect(w.findAll('select[name=system] option').map((o) => [o.text(), (o.element as HTMLOptionElement).disabled])).toEqual([
      ['All', false],
      ['lab1 (1)', false],
      ['slow-box (0)', true],
    ]);
    expect(w.findAll('select[name=status] option').map((o) => o.text())).toContain('failed (0)');
  });

  it('loads once more when the history changes while a load runs, so the last change is shown', async () => {
    let status: 'running' | 'finished' = 'running';
    const answers: (() => void)[] = [];
    const fake = installFakeApi({
      'history.list': () => new Promise((resolve) => answers.push(() => resolve({ trials: [trial(1)], total: 1 }))),
      'history.facets': () => facets(1),
      'suites.list': () => [suite(status)],
    });
    const h = useHistoryStore();
    const first = h.load();
    answers.shift()!();
    await first;
    h.onEvent({ type: 'history.changed', reason: 'trial 1 finished' });
    await flush();
    status = 'finished'; // the suite finishes just after that load read the list ...
    h.onEvent({ type: 'history.changed', reason: 'suite 7 finished' }); // ... and says so while it runs
    answers.shift()!();
    await flush();
    expect(fake.callsOf('history.list')).toHaveLength(3);
    answers.shift()!();
    await flush();
    expect(h.suites[0].status).toBe('finished');
    expect(h.loading).toBe(false);
  });

  it('offers Resume for every suite with trials left to run, also a finished one a full disk left partial, and for none without', async () => {
    const fake = installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [
        suite('finished', 9, { trialCounts: { running: 0, complete: 3, partial: 1, failed: 0, aborted: 0 }, trialsLeft: 1 }),
        suite('finished', 8, { trialCounts: { running: 0, complete: 4, partial: 0, failed: 1, aborted: 0 }, trialsLeft: 0 }), // its failed trial was retried
        suite('cancelled', 7, { trialsLeft: 0 }), // cancelled after its last trial
        suite('interrupted', 6, { trialsLeft: 2 }),
        suite('finished', 5, { source: 'import', trialsLeft: 0 }),
      ],
      'suite.resume': () => ({ suiteId: 9 }),
      'suite.resumeCheck': () => ({ startedBy: '0.7.0', measuredBy: ['0.7.0'], now: '0.7.0', changes: [], text: null, needsConsent: false }),
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('[data-test=suites-tab]').trigger('click');
    const resumable = w.findAll('tr[data-suite]').filter((r) => r.findAll('button').some((b) => b.text() === 'Resume'));
    expect(resumable.map((r) => r.attributes('data-suite'))).toEqual(['9', '6']);
    await resumable[0].findAll('button').find((b) => b.text() === 'Resume')!.trigger('click');
    await flush();
    // Asked first (rev12-gui L9): what it runs, and where its progress shows.
    expect(fake.callsOf('suite.resume')).toEqual([]);
    expect(document.body.textContent).toContain('Resume suite 9? It runs again its 1 trial(s) without a complete result');
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(fake.callsOf('suite.resume')).toEqual([{ suiteId: 9 }]);
    // ... and the Run step's progress is on screen at once, not after the preparation.
    expect(useAppStore().route.name).toBe('wizard');
    expect(useWizardStore().step).toBe('run');
    expect(useLiveRunStore().phase).toBe('preparing');
  });

  it('offers Run deleted trials again where a suite says N deleted; asks first, then resumes it with the deleted trials through the Run step', async () => {
    const fake = installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [
        suite('finished', 4, { trialCounts: { running: 0, complete: 2, partial: 0, failed: 0, aborted: 0 }, trialsLeft: 0, trialsDeleted: 1 }),
        suite('cancelled', 3, { trialCounts: { running: 0, complete: 1, partial: 0, failed: 0, aborted: 1 }, trialsLeft: 1, trialsDeleted: 2 }),
        suite('finished', 2, { trialsLeft: 0, trialsDeleted: 0 }),
        suite('running', 1, { trialsLeft: 1, trialsDeleted: 1 }), // its runner is at work: nothing to start beside it
      ],
      'suite.resumeCheck': () => ({ startedBy: '0.7.0', measuredBy: ['0.7.0'], now: '0.7.0', changes: [], text: null, needsConsent: false }),
      'suite.resume': () => ({ suiteId: 4 }),
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('[data-test=suites-tab]').trigger('click');
    expect(w.findAll('tr[data-suite]').filter((r) => r.find('[data-test=rerun-deleted]').exists()).map((r) => r.attributes('data-suite'))).toEqual(['4', '3']);
    const button = w.get('tr[data-suite="4"] [data-test=rerun-deleted]');
    expect(button.text()).toBe('Run deleted trials again');
    expect(w.get('tr[data-suite="4"]').findAll('button').map((b) => b.text())).not.toContain('Resume');

    // Asked first; "Not now" runs nothing.
    await w.get('tr[data-suite="3"] [data-test=rerun-deleted]').trigger('click');
    await flush();
    expect(document.body.textContent).toContain("Run suite 3's 2 deleted trial(s) again, and its 1 trial(s) without a complete result, into the same suite, with the plan it was made with?");
    [...document.querySelectorAll('button')].find((b) => b.textContent?.trim() === 'Not now')!.click();
    await flush();
    await button.trigger('click');
    await flush();
    expect(document.body.textContent).toContain("Run suite 4's 1 deleted trial(s) again into the same suite, with the plan it was made with? A deleted trial stays counted as deleted until its new trial completes");
    expect(fake.callsOf('suite.resume')).toEqual([]);
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    // Resume's own request, asking for the deleted slots too; the Run step shows it from its preparation on.
    expect(fake.callsOf('suite.resume')).toEqual([{ suiteId: 4, rerunDeleted: true }]);
    expect(useAppStore().route.name).toBe('wizard');
    expect(useWizardStore().step).toBe('run');
    expect(useLiveRunStore().phase).toBe('preparing');
    expect(useLiveRunStore().preparation).toBe("Running suite 4's deleted trials again …");
  });

  it('asks to resume a suite an older kvbench started in the words the CLI says it, and resumes across versions only so (rev13-upgrade #4)', async () => {
    const text =
      'suite 6 was started by kvbench 0.6.0 (its complete trials were measured by kvbench 0.6.0); the trials left run on kvbench 0.7.0, whose definitions differ for ' +
      'storage_read_p95_ms_per_mib, storage_write_p95_ms_per_mib (changed in 0.7.0): a scenario with trials of both versions gets those metrics in two rows of its report, one per definition, never one median, and a comparison names no better side on them';
    const fake = installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [suite('interrupted', 6, { trialsLeft: 2 })],
      'suite.resumeCheck': () => ({ startedBy: '0.6.0', measuredBy: ['0.6.0'], now: '0.7.0', changes: [{ metric: 'storage_write_p95_ms_per_mib', since: '0.7.0', change: 'is over entries' }], text, needsConsent: true }),
      'suite.resume': () => ({ suiteId: 6 }),
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('[data-test=suites-tab]').trigger('click');
    await w.get('tr[data-suite="6"]').findAll('button').find((b) => b.text() === 'Resume')!.trigger('click');
    await flush();
    expect(fake.callsOf('suite.resumeCheck')).toEqual([{ suiteId: 6 }]);
    expect(document.body.textContent).toContain(`Resume suite 6? It runs again its 2 trial(s) without a complete result, with the plan it was made with; the Run step shows its progress. S${text.slice(1)}. Resume runs them all the same; or start a new suite, so that every trial is measured by kvbench 0.7.0.`);
    const yes = document.querySelector('[data-test=confirm]') as HTMLButtonElement;
    expect(yes.textContent?.trim()).toBe('Resume across versions');
    yes.click();
    await flush();
    expect(fake.callsOf('suite.resume')).toEqual([{ suiteId: 6, acrossVersions: true }]);
  });

  it('asks to run deleted trials again across versions in the words of that action, not of Resume (rev14 #4)', async () => {
    const text =
      'suite 6 was started by kvbench 0.6.0 (its complete trials were measured by kvbench 0.6.0); the trials left run on kvbench 0.7.0, whose definitions differ for ' +
      'storage_write_p95_ms_per_mib (changed in 0.7.0): a scenario with trials of both versions gets those metrics in two rows of its report, one per definition, never one median, and a comparison names no better side on them';
    const fake = installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [suite('finished', 6, { trialsDeleted: 1 })],
      'suite.resumeCheck': () => ({ startedBy: '0.6.0', measuredBy: ['0.6.0'], now: '0.7.0', changes: [{ metric: 'storage_write_p95_ms_per_mib', since: '0.7.0', change: 'is over entries' }], text, needsConsent: true }),
      'suite.resume': () => ({ suiteId: 6 }),
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('[data-test=suites-tab]').trigger('click');
    await w.get('tr[data-suite="6"]').findAll('button').find((b) => b.text() === 'Run deleted trials again')!.trigger('click');
    await flush();
    expect(document.body.textContent).toContain(`S${text.slice(1)}. Run again runs them all the same; or start a new suite, so that every trial is measured by kvbench 0.7.0.`);
    expect(document.body.textContent).not.toContain('Resume runs them');
    const yes = document.querySelector('[data-test=confirm]') as HTMLButtonElement;
    expect(yes.textContent?.trim()).toBe('Run again across versions');
    yes.click();
    await flush();
    expect(fake.callsOf('suite.resume')).toEqual([{ suiteId: 6, rerunDeleted: true, acrossVersions: true }]);
  });

  it('a refused resume is said on the Run step it went to', async () => {
    installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [suite('interrupted', 6, { trialsLeft: 2 })],
      'suite.resume': () => ({ error: { code: 'VALIDATION', message: 'suite 6 was planned on another machine' } }),
      'suite.resumeCheck': () => ({ startedBy: '0.7.0', measuredBy: ['0.7.0'], now: '0.7.0', changes: [], text: null, needsConsent: false }),
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('[data-test=suites-tab]').trigger('click');
    await w.get('tr[data-suite="6"]').findAll('button').find((b) => b.text() === 'Resume')!.trigger('click');
    await flush();
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(useLiveRunStore().phase).toBe('failed');
    expect(useLiveRunStore().runError?.message).toBe('suite 6 was planned on another machine');
  });

  it('lists a finished suite without one complete trial as failed; cancelled and interrupted ones keep their status', async () => {
    installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [
        suite('finished', 9, { trialCounts: { running: 0, complete: 0, partial: 1, failed: 11, aborted: 0 }, trialsLeft: 12 }),
        suite('finished', 8, { trialCounts: { running: 0, complete: 1, partial: 0, failed: 11, aborted: 0 }, trialsLeft: 11 }),
        suite('cancelled', 7, { trialCounts: { running: 0, complete: 0, partial: 0, failed: 0, aborted: 1 }, trialsLeft: 3 }),
        suite('interrupted', 6, { trialCounts: { running: 0, complete: 0, partial: 0, failed: 0, aborted: 1 }, trialsLeft: 3 }),
      ],
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('[data-test=suites-tab]').trigger('click');
    const badges = w.findAll('tr[data-suite]').map((r) => [r.attributes('data-suite'), r.get('.badge').text(), r.get('.badge').classes().includes('failed')]);
    expect(badges).toEqual([
      ['9', 'failed', true],
      ['8', 'finished', false],
      ['7', 'cancelled', false],
      ['6', 'interrupted', false],
    ]);
  });

  it('counts a suite\'s trials not complete by slot, as resume and the report do: a retried attempt once, a planned trial that never ran too', async () => {
    installFakeApi({
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [
        suite('finished', 9, { trialCounts: { running: 0, complete: 3, partial: 2, failed: 0, aborted: 0 }, trialsLeft: 1 }), // one slot partial twice
        suite('finished', 8, { trialCounts: { running: 0, complete: 4, partial: 0, failed: 1, aborted: 0 }, trialsLeft: 0 }), // its failed trial was retried
        suite('cancelled', 7, { trialCounts: { running: 0, complete: 1, partial: 0, failed: 0, aborted: 1 }, trialsLeft: 3 }), // two never ran
        suite('finished', 5, { source: 'import', trialCounts: { running: 0, complete: 2, partial: 1, failed: 0, aborted: 0 }, trialsLeft: 0 }),
        suite('finished', 4, { trialCounts: { running: 0, complete: 3, partial: 0, failed: 0, aborted: 0 }, trialsLeft: 0, trialsDeleted: 1 }), // one complete trial deleted on purpose
      ],
    });
    const w = mountIt(HistoryView);
    await flush();
    await w.get('[data-test=suites-tab]').trigger('click');
    expect(w.get('tr[data-suite="4"] [data-test=deleted]').text()).toBe('1 deleted');
    expect(w.get('tr[data-suite="4"]').findAll('button').map((b) => b.text())).not.toContain('Resume');
    const notComplete = w.findAll('tr[data-suite]').map((r) => [r.attributes('data-suite'), r.get('[data-test=not-complete]').text()]);
    expect(notComplete).toEqual([
      ['9', '1'],
      ['8', '0'],
      ['7', '3'],
      ['5', '1'],
      ['4', '0'],
    ]);
  });

  it('goes back to the last page that has rows when deleting emptied the last one', async () => {
    const fake = fakeHistoryApi(Array.from({ length: 51 }, (_, i) => trial(i + 1)));
    const w = mountIt(HistoryView);
    await flush();
    await w.findAll('.pager button').find((b) => b.text() === 'Next')!.trigger('click');
    await flush();
    expect(w.get('.pager').text()).toContain('51–51 of 51');
    await w.get('[data-test=history-table] tbody tr input[type=checkbox]').setValue(true);
    await w.get('[data-test=delete-selected]').trigger('click');
    await flush();
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(fake.callsOf('history.list').at(-1)).toMatchObject({ offset: 0 });
    expect(w.get('.pager').text()).toContain('1–50 of 50');
    expect(w.findAll('[data-test=history-table] tbody tr')).toHaveLength(50);
  });

  it('says a date range whose From is after its To is inverted, and swaps it on request (rev12-gui L11)', async () => {
    const fake = fakeHistoryApi([trial(1), trial(2)]);
    const w = mountIt(HistoryView);
    await flush();
    await w.get('input[name=since]').setValue('2026-11-05');
    await w.get('input[name=until]').setValue('2026-11-02');
    await flush();
    const note = w.get('[data-test=dates-inverted]');
    expect(note.text()).toContain('From (2026-11-05) is after To (2026-11-02)');
    await note.get('button').trigger('click');
    await flush();
    expect(useHistoryStore().filters).toMatchObject({ since: '2026-11-02', until: '2026-11-05' });
    expect(w.find('[data-test=dates-inverted]').exists()).toBe(false);
    expect(new Date((fake.callsOf('history.list').at(-1) as { selection: { since: string } }).selection.since).getDate()).toBe(2);
  });

  it('while the history cannot be read, its tabs do not count 0 (rev12-gui L12)', async () => {
    const down = { error: { code: 'UNREACHABLE' as const, message: 'the server cannot be reached' } };
    installFakeApi({ 'history.list': () => down, 'history.facets': () => down, 'suites.list': () => down });
    const w = mountIt(HistoryView);
    await flush();
    const tabs = w.findAll('[role=tab]').map((t) => t.text());
    expect(tabs).toEqual(['Trials (?)', 'Suites (?)']);
    expect(w.get('[role=tab]').attributes('title')).toContain('not known');
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

describe('database errors are shown, not empty states', () => {
  const locked = { error: { code: 'DB_BUSY' as const, message: 'the database is locked' } };

  it('history: when the facets or the suites cannot be read', async () => {
    installFakeApi({ 'history.list': () => ({ trials: [], total: 0 }), 'history.facets': () => locked, 'suites.list': () => locked });
    const w = mountIt(HistoryView);
    await flush();
    expect(w.get('[role=alert]').text()).toContain('the database is locked');
    expect(w.text()).not.toContain('No trials yet');
    await w.get('[data-test=suites-tab]').trigger('click');
    expect(w.text()).not.toContain('No suites yet');
  });

  it('history: when the list cannot be read', async () => {
    installFakeApi({ 'history.list': () => locked, 'history.facets': () => facets(0), 'suites.list': () => [] });
    const w = mountIt(HistoryView);
    await flush();
    expect(w.get('[role=alert]').text()).toContain('the database is locked');
    expect(w.text()).not.toContain('No trials yet');
    expect(w.find('[data-test=history-table]').exists()).toBe(false);
  });

  it('compare: when the systems cannot be read, with a retry', async () => {
    let fail = true;
    installFakeApi({ 'history.facets': () => (fail ? locked : facets(4)) });
    const w = mountIt(CompareView);
    await flush();
    expect(w.get('[role=alert]').text()).toContain('the database is locked');
    expect(w.text()).not.toContain('Comparing needs two systems');
    fail = false;
    await w.findAll('button').find((b) => b.text() === 'Try again')!.trigger('click');
    await flush();
    expect(w.find('[role=alert]').exists()).toBe(false);
    expect((w.get('select[name=a]').element as HTMLSelectElement).value).toBe('sys-1');
  });
});

describe('import dialog', () => {
  const choose = async (w: VueWrapper, files: File[]): Promise<void> => {
    const input = w.get('input[name=files]');
    Object.defineProperty(input.element, 'files', { value: files, configurable: true });
    await input.trigger('change');
  };

  it('imports the chosen files once: after the import they are no longer chosen, also when the dialog is opened again', async () => {
    const fake = installFakeApi({
      'import.results': (r) => ({ imported: r.files.map((f, i) => ({ file: f.name, trialId: 20 + i, format: 'reference-new' as const, status: 'complete', reason: null, configKnown: false })), skipped: [], errors: [], systemId: 'imp-1', suiteId: 3 }),
    });
    const w = mountIt(ImportDialog, { open: true });
    await choose(w, [new File(['{}'], 'trial1.json'), new File(['{}'], 'trial2.json')]);
    await w.get('input[name=systemLabel]').setValue('slow-box');
    expect(w.get('[data-test=import-submit]').attributes('disabled')).toBeUndefined();
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('import.results')).toHaveLength(1);
    expect(w.get('[data-test=import-result]').text()).toContain('2 file(s) imported');
    // The same files cannot be sent again by a second click ...
    expect(w.get('[data-test=import-submit]').attributes('disabled')).toBeDefined();
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('import.results')).toHaveLength(1);
    // ... nor after closing and opening the dialog again.
    await w.findAll('button').find((b) => b.text() === 'Done')!.trigger('click');
    await w.setProps({ open: false });
    await w.setProps({ open: true });
    await flush();
    expect(w.text()).not.toContain('trial1.json');
    expect(w.get('[data-test=import-submit]').attributes('disabled')).toBeDefined();
  });

  it('a System, Drive or Label holding a bidirectional or control character is refused as typed: said under its field, escaped and marked; Import waits', async () => {
    const fake = installFakeApi({ 'import.results': () => ({ imported: [], skipped: [], errors: [], systemId: null, suiteId: 3 }) });
    const w = mountIt(ImportDialog, { open: true });
    await choose(w, [new File(['{}'], 'trial1.json')]);
    await w.get('input[name=systemLabel]').setValue('lab\u2067box\u2069');
    await w.get('input[name=driveLabel]').setValue('nvme\u001b[2J');
    await w.get('input[name=suiteLabel]').setValue('ok label');
    const problems = w.findAll('[data-test=label-problem]');
    expect(problems.map((p) => p.text())).toEqual([
      'System must not hold control characters, line breaks or bidirectional overrides (found U+2067, U+2069): lab\\u{2067}box\\u{2069}',
      'Drive must not hold control characters, line breaks or bidirectional overrides (found U+001B): nvme\\u{1b}[2J',
    ]);
    expect(problems[0].findAll('[data-test=escaped-char]')).toHaveLength(2);
    expect(w.get('input[name=systemLabel]').attributes('aria-describedby')).toBe('systemLabel-problem');
    expect(w.get('input[name=suiteLabel]').attributes('aria-invalid')).toBe('false');
    expect(w.get('[data-test=import-submit]').attributes('disabled')).toBeDefined();
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('import.results')).toHaveLength(0);
    await w.get('input[name=systemLabel]').setValue('lab box');
    await w.get('input[name=driveLabel]').setValue('nvme');
    expect(w.find('[data-test=label-problem]').exists()).toBe(false);
    expect(w.get('[data-test=import-submit]').attributes('disabled')).toBeUndefined();
  });

  it('keeps the chosen files when none was imported, so that the import can be tried again (rev12-gui L13)', async () => {
    const fake = installFakeApi({
      'import.results': (r) => ({ imported: [], skipped: [], errors: r.files.map((f) => ({ file: f.name, message: 'not a kvbench or MLPerf KV-cache results file' })), systemId: null, suiteId: 3 }),
    });
    const w = mountIt(ImportDialog, { open: true });
    await choose(w, [new File(['{}'], 'bad.json')]);
    await w.get('input[name=systemLabel]').setValue('slow-box');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[data-test=import-result]').text()).toContain('bad.json: not a kvbench');
    expect(w.text()).toContain('bad.json');
    expect(w.get('[data-test=import-submit]').attributes('disabled')).toBeUndefined();
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('import.results')).toHaveLength(2);
  });

  it('after a partial import keeps only the files that were not imported', async () => {
    const fake = installFakeApi({
      'import.results': (r) => ({
        imported: r.files.filter((f) => f.name !== 'bad.json').map((f, i) => ({ file: f.name, trialId: 20 + i, format: 'reference-new' as const, status: 'complete', reason: null, configKnown: false })),
        skipped: [],
        errors: r.files.filter((f) => f.name === 'bad.json').map((f) => ({ file: f.name, message: 'not a results file' })),
        systemId: 'imp-1',
        suiteId: 3,
      }),
    });
    const w = mountIt(ImportDialog, { open: true });
    await choose(w, [new File(['{}'], 'good.json'), new File(['{}'], 'bad.json')]);
    await w.get('input[name=systemLabel]').setValue('slow-box');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[data-test=import-kept]').text()).toContain('bad.json');
    expect(w.get('[data-test=import-kept]').text()).not.toContain('good.json');
    await w.get('form').trigger('submit');
    await flush();
    expect((fake.callsOf('import.results').at(-1) as { files: { name: string }[] }).files.map((f) => f.name)).toEqual(['bad.json']);
  });

  it('says so when a chosen file can no longer be read, and can be used again', async () => {
    const fake = installFakeApi({});
    const w = mountIt(ImportDialog, { open: true });
    const gone = new File(['{}'], 'gone.json');
    Object.defineProperty(gone, 'text', { value: () => Promise.reject(new Error('NotReadableError')) });
    await choose(w, [gone]);
    await w.get('input[name=systemLabel]').setValue('slow-box');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[role=alert]').text()).toContain('could not read the chosen files: NotReadableError');
    expect(fake.callsOf('import.results')).toEqual([]);
    expect(w.get('[data-test=import-submit]').text()).toBe('Import');
    expect(w.get('[data-test=import-submit]').attributes('disabled')).toBeUndefined();
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

  it('names each group\'s suite label where the selected suites carry several, and says they are apart', async () => {
    const r = report();
    const fw1 = r.report.scenarios[0];
    r.report.suiteLabels = [{ label: 'fw 2.1', suiteIds: [1] }, { label: null, suiteIds: [3] }];
    r.report.scenarios = [{ ...fw1, suiteLabel: 'fw 2.1' }, { ...fw1, suiteLabel: null, trialIds: [9] }];
    r.tiers.rows = [{ ...r.tiers.rows[0], suiteLabel: 'fw 2.1' }, { ...r.tiers.rows[0], suiteLabel: null, n: 1, fewestTrials: 1 }];
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [1, 3] } });
    await flush();
    expect(w.get('[data-test=labels-apart]').text()).toBe(
      'iThese suites carry 2 different suite labels (“fw 2.1”: suite 1; none: suite 3): each label\'s trials are aggregated apart, never pooled into one median. For a verdict between two labels, open Compare → Suite labels.',
    );
    expect(w.findAll('[data-test=group-suite-label]').map((x) => x.text())).toEqual(['label “fw 2.1”', 'no suite label']);
    expect(w.findAll('[data-test=tier-table] tbody .cell-label').map((x) => x.text())).toEqual(['Storage only · label “fw 2.1”', 'Storage only · no suite label']);
  });

  it('tells two configurations of one scenario apart in the chart and the tables, by what differs between them', async () => {
    // The closing note's case: smoke CPU only stored at a 1 GiB and at a 2 GiB CPU tier, two rows both "CPU only".
    const r = report();
    const row = r.tiers.rows[0];
    r.tiers.rows = [
      row,
      { ...row, scenarioId: 'cpu-only', label: 'CPU only', configKey: 'c1', configDescription: 'tiny-1b, 4u, 5s, cpu 1, gpu 0, gen fast, storage 2 GiB', cpuMemGb: 1, numUsers: 4 },
      { ...row, scenarioId: 'cpu-only', label: 'CPU only', configKey: 'c2', configDescription: 'tiny-1b, 4u, 5s, cpu 2, gpu 0, gen fast, storage 2 GiB', cpuMemGb: 2, numUsers: 4 },
      { ...row, scenarioId: 'cpu-storage', label: 'CPU + storage', configKey: 'c3', configDescription: 'tiny-1b, 4u, 5s, cpu 0.25, gpu 0, gen fast', cpuMemGb: 0.25, numUsers: 4 },
      { ...row, scenarioId: 'cpu-storage', label: 'CPU + storage', configKey: 'c4', configDescription: 'tiny-1b, 4u, 10s, cpu 0.25, gpu 0, gen fast', cpuMemGb: 0.25, numUsers: 4 },
    ];
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const spaced = (l: string): string => l.replace(/\s/g, ' '); // the sizes keep their number and unit together
    const expected = ['Storage only', 'CPU only · CPU 1.07 GB (1 GiB)', 'CPU only · CPU 2.15 GB (2 GiB)', 'CPU + storage · 5 s', 'CPU + storage · 10 s'];
    expect((w.findComponent(BarChart).props('labels') as string[]).map(spaced)).toEqual(expected);
    expect(w.findAll('[data-test=tier-table] tbody .cell-label').map((x) => spaced(x.text()))).toEqual(expected);
  });

  it('says nothing of labels for one suite', async () => {
    installFakeApi({ 'report.build': () => report() });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.find('[data-test=labels-apart]').exists()).toBe(false);
    expect(w.find('[data-test=group-suite-label]').exists()).toBe(false);
  });

  it('titles a finished suite without one complete trial as failed', async () => {
    const r = { ...report(), suite: suite('finished', 7, { trialCounts: { running: 0, complete: 0, partial: 0, failed: 4, aborted: 0 }, trialsLeft: 4 }) };
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.get('.page-head .badge').text()).toBe('failed');
  });

  it("shows a capacity run's peak users beside its peak throughput, its final users only with every metric", async () => {
    const r = report();
    const agg = (median: number) => ({ n: 3, median, p95: median, mean: median, min: median, max: median, cv: 0.1 });
    r.report.scenarios[0].metrics.push(
      { metric: METRIC_BY_KEY.autoscale_final_users, aggregate: agg(27), olderDefinition: null },
      { metric: METRIC_BY_KEY.autoscale_peak_users, aggregate: agg(22), olderDefinition: null },
      { metric: METRIC_BY_KEY.autoscale_peak_throughput_tok_per_s, aggregate: agg(671.7), olderDefinition: null },
    );
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const s = w.get('[data-scenario-report=storage-only]');
    expect(s.text()).toMatch(/Autoscaler peak users\s*users\s*22/);
    expect(s.text()).not.toContain('Autoscaler final users');
    expect(s.get('[data-peak-medians]').text()).toBe("Peak throughput and peak users are medians taken apart: the users need not be the median peak's own.");
    await w.get('input[name=allMetrics]').setValue(true);
    expect(w.get('[data-scenario-report=storage-only]').text()).toContain('Autoscaler final users');
  });

  it('shows a metric measured on both sides of a change of its definition as two rows, the older marked, with how many trials each (rev13-upgrade #3)', async () => {
    const r = report();
    const agg = (n: number, median: number) => ({ n, median, p95: median, min: median, max: median, cv: 0.1 });
    const change = 'is over entries of at least one I/O chunk';
    r.report.scenarios[0].metrics.push(
      { metric: METRIC_BY_KEY.storage_write_p95_ms_per_mib, aggregate: agg(2, 8.8), olderDefinition: null },
      { metric: METRIC_BY_KEY.storage_write_p95_ms_per_mib, aggregate: agg(2, 14.3), olderDefinition: { since: '0.7.0', change } },
    );
    r.report.scenarios[0].definitionSplits = [{ metric: 'storage_write_p95_ms_per_mib', label: 'Storage write P95 per MiB', since: '0.7.0', change, trialsBefore: 2, trialsSince: 2 }];
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    // Not a headline metric: neither its rows nor their note until every metric is shown.
    expect(w.findAll('[data-definition-note]')).toHaveLength(0);
    await w.get('input[name=allMetrics]').setValue(true);
    const s = w.get('[data-scenario-report=storage-only]');
    const rows = s.findAll('tr').filter((tr) => tr.text().startsWith('Storage write P95 per MiB'));
    expect(rows.map((tr) => tr.find('td').text())).toEqual(['Storage write P95 per MiB', 'Storage write P95 per MiB (definition before 0.7.0)']);
    expect(rows[1].attributes('data-older-definition')).toBe('0.7.0');
    expect(s.get('[data-definition-note]').text()).toContain('2 of these 4 trials were measured before it, 2 from it on, so the two are aggregated apart, never in one median');
  });

  it('says when a pooled latency leaves out a trial whose stored histogram does not decode', async () => {
    // review rev7 #6: the pooled table dropped such a trial, or the whole latency, without a word.
    installFakeApi({
      'report.build': () => {
        const r = report();
        r.report.scenarios[0].pooled = [
          { name: 'end_to_end', trials: 2, damagedTrials: 1, count: 600, p50Ms: 10, p95Ms: 20, p99Ms: 30, olderDefinition: null },
          { name: 'queue_wait', trials: 0, damagedTrials: 3, count: 0, p50Ms: null, p95Ms: null, p99Ms: null, olderDefinition: null },
        ];
        return r;
      },
    });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.findAll('[data-pooled-damaged]').map((p) => p.text())).toEqual([
      "End-to-end: 1 trial's histogram does not decode (damaged in the database): left out of these percentiles.",
      "Queue wait: 3 trials' histograms do not decode (damaged in the database): left out of these percentiles.",
    ]);
  });

  it('says the tier comparison counts partial trials when asked to, and flags each counted partial trial with its reason', async () => {
    const stalled = 'the engine stalled (its event loop was blocked for 6.1 s at once): its process was stopped';
    installFakeApi({
      'report.build': (req) => {
        const r = report();
        r.report.includeIncomplete = req.includeIncomplete ?? false;
        // As the report model does: a partial trial it counts carries a caution, two of them for one trial here.
        if (req.includeIncomplete) r.report.scenarios[0].cautions.push({ trialId: 2, trialIndex: 1, message: `counted although partial: ${stalled}` });
        return r;
      },
    });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.get('[data-test=tier-method]').text()).toMatch(/^medians across complete trials;/);
    await w.get('input[name=includeIncomplete]').setValue(true);
    await flush();
    expect(w.get('[data-test=tier-method]').text()).toMatch(/^medians across complete and partial trials;/);
    expect(w.findAll('[data-trial-caution]').map((c) => c.text())).toEqual([
      '!Trial 2 flagged: the device read 12.0 % of the bytes the storage tier read: the page cache served the rest',
      `!Trial 2 flagged: counted although partial: ${stalled}`,
    ]);
  });

  it('shows an attempt a resume retried as superseded by its retry, not as a trial left out', async () => {
    const r = report();
    const s = r.report.scenarios[0];
    s.trialsTotal = 4; // trials 1-3 aggregated, one of them a retry of trial 4's slot
    s.excluded = [{ trialId: 4, trialIndex: 1, attempt: 1, status: 'partial', reason: 'disk full (ENOSPC): stopped after 19 completed requests', supersededBy: { trialId: 2, attempt: 2, status: 'complete' }, flags: [] }];
    installFakeApi({ 'report.build': () => r });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const text = w.get('[data-scenario-report=storage-only]').text();
    expect(text).toContain('3 of 3 trial(s) aggregated (and 1 superseded attempt(s))');
    expect(text).not.toContain('excluded');
    expect(w.get('[data-trial-superseded]').text()).toMatch(/^↻\s*Trial 2, attempt 1 \(\s*partial\s*disk full \(ENOSPC\): stopped after 19 completed requests\) superseded: retried, attempt\s+2 complete$/);
  });

  it('a selection over two systems shows one group per system, each named, and a single suite names no drive', async () => {
    const one = report();
    const two: ResponseOf<'report.build'> = {
      ...one,
      report: { ...one.report, scenarios: [...one.report.scenarios, { ...one.report.scenarios[0], systemId: 'sys-2', systemLabel: 'lab2', driveId: 'drv-2', driveLabel: 'Vendor Y', systemLabels: ['lab2'] }] },
      tiers: { ...one.tiers, rows: [...one.tiers.rows, { ...one.tiers.rows[0], systemId: 'sys-2', systemLabel: 'lab2', driveId: 'drv-2', driveLabel: 'Vendor Y', wallClockTokPerS: 99 }] },
    };
    installFakeApi({ 'report.build': () => two });
    const w = mountIt(ReportView, { selection: {} });
    await flush();
    const groups = w.findAll('[data-scenario-report=storage-only]').map((g) => g.text());
    expect(groups).toHaveLength(2);
    expect(groups[0]).toContain('lab1 · Vendor X');
    expect(groups[1]).toContain('lab2 · Vendor Y');
    const tier = w.get('[data-test=tier-table]').findAll('tbody tr').map((r) => r.text());
    expect(tier[0]).toContain('Storage only · lab1 · Vendor X');
    expect(tier[1]).toContain('Storage only · lab2 · Vendor Y');
    installFakeApi({ 'report.build': () => one });
    const single = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(single.get('[data-scenario-report=storage-only]').text()).toContain('lab1');
    expect(single.get('[data-scenario-report=storage-only]').text()).not.toContain('Vendor X');
    expect(single.get('[data-test=tier-table]').text()).not.toContain('lab1');
  });

  it('shows the newest request\'s report when answers arrive out of order, and cannot export while one loads', async () => {
    const pending: { includeIncomplete: boolean; resolve: (v: ResponseOf<'report.build'>) => void }[] = [];
    installFakeApi({ 'report.build': (r) => new Promise((resolve) => pending.push({ includeIncomplete: r.includeIncomplete ?? false, resolve })) });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    pending.shift()!.resolve(report());
    await flush();
    const exportDisabled = (): boolean => w.get('[data-export=csv]').attributes('disabled') !== undefined;
    expect(exportDisabled()).toBe(false);
    await w.get('input[name=includeIncomplete]').setValue(true);
    await flush();
    expect(exportDisabled()).toBe(true);
    await w.get('input[name=includeIncomplete]').setValue(false);
    await flush();
    const [withPartial, withoutPartial] = pending.splice(0);
    expect([withPartial.includeIncomplete, withoutPartial.includeIncomplete]).toEqual([true, false]);
    withoutPartial.resolve({ ...report(), title: 'without partial' });
    await flush();
    withPartial.resolve({ ...report(), title: 'with partial' }); // the older answer, late
    await flush();
    expect(w.get('h2').text()).toBe('without partial');
    expect(exportDisabled()).toBe(false);
  });

  it('measures efficiency against the datasheet bandwidth the user states: applied on change, refused inline, exported alike', async () => {
    // A fake backend that does what report.build does with `stated`: the read limit replaced, the source saying so.
    const built = (r: RequestOf<'report.build'>): ResponseOf<'report.build'> | { error: IpcError } => {
      const base = report();
      const read = r.stated?.readBytesPerS ?? null;
      if (read === null) return base;
      if (!r.selection.suiteIds) return { error: { code: 'VALIDATION', message: 'a stated bandwidth describes one drive, and this selection spans several systems or drives' } };
      const limits = { ...base.tiers.probe, readBytesPerS: read, readLimitFrom: 'stated' as const, source: `stated by the user (read ${(read / 1e9).toFixed(2)} GB/s); the other direction: kvbench probe of Vendor X` };
      const row = { ...base.tiers.rows[0], storageReadEfficiency: base.tiers.rows[0].storageReadBytesPerS! / read, limits };
      return { ...base, tiers: { ...base.tiers, probe: limits, rows: [row] } };
    };
    const fake = installFakeApi({ 'report.build': built, 'export.create': () => ({ fileName: 'kvbench-suite-7.json', mimeType: 'application/json', bytes: 2, trialCount: 3, delivery: DOWNLOAD }) });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    const eff = (): string => w.get('[data-test=efficiency-table] tbody tr').text();
    const source = (): string => w.get('[data-test=limits-source]').text();
    expect(source()).toBe('kvbench probe of Vendor X');
    expect(eff()).toContain('35.7 %');
    expect(w.find('[data-test=stated-error]').exists()).toBe(false);
    // Decimal GB/s, unlike the results' *_gbps (GiB/s): said where the figure is typed.
    expect(w.get('#stated-help').text()).toMatch(/decimal GB\/s \(10⁹ B\/s\), not GiB\/s;/);

    await w.get('input[name=statedReadGbps]').setValue('5');
    await w.get('input[name=statedReadGbps]').trigger('change');
    await flush();
    expect(fake.callsOf('report.build').at(-1)).toEqual({ selection: { suiteIds: [7] }, includeIncomplete: false, stated: { readBytesPerS: 5e9, writeBytesPerS: null } });
    expect(source()).toBe('stated by the user (read 5.00 GB/s); the other direction: kvbench probe of Vendor X');
    expect(eff()).toContain('50.0 %');
    expect(eff()).not.toContain('35.7 %');
    // Enter (the form's submit) after the change that applied it: nothing new to build.
    await w.get('form[data-test=stated-bandwidth]').trigger('submit');
    await flush();
    expect(fake.callsOf('report.build')).toHaveLength(2);

    // Invalid: said next to the fields, nothing sent, the table stays.
    const sent = fake.callsOf('report.build').length;
    for (const bad of ['abc', '0', '-2']) {
      await w.get('input[name=statedWriteGbps]').setValue(bad);
      await w.get('input[name=statedWriteGbps]').trigger('change');
      await flush();
      expect(w.get('[data-test=stated-error]').text()).toContain(`Datasheet write: "${bad}" is not a positive number of GB/s`);
      expect(w.get('input[name=statedWriteGbps]').attributes('aria-invalid')).toBe('true');
    }
    expect(fake.callsOf('report.build')).toHaveLength(sent);
    expect(eff()).toContain('50.0 %');

    // Export follows the statement on screen.
    await w.get('[data-export=json]').trigger('click');
    await flush();
    expect(fake.callsOf('export.create').at(-1)).toMatchObject({ stated: { readBytesPerS: 5e9, writeBytesPerS: null } });

    // Emptied: the probe again, and the error is gone.
    await w.get('input[name=statedWriteGbps]').setValue('');
    await w.get('input[name=statedReadGbps]').setValue(' ');
    await w.get('input[name=statedReadGbps]').trigger('change');
    await flush();
    expect(fake.callsOf('report.build').at(-1)).toEqual({ selection: { suiteIds: [7] }, includeIncomplete: false });
    expect(source()).toBe('kvbench probe of Vendor X');
    expect(eff()).toContain('35.7 %');
    expect(w.find('[data-test=stated-error]').exists()).toBe(false);

    // A selection over several drives: the backend's refusal is shown next to the fields, the report stays.
    const several = mountIt(ReportView, { selection: {} });
    await flush();
    await several.get('input[name=statedReadGbps]').setValue('7');
    await several.get('input[name=statedReadGbps]').trigger('change');
    await flush();
    expect(several.get('[data-test=stated-error]').text()).toContain("Not applied: a stated bandwidth describes one drive, and this selection spans several systems or drives. The table below uses the probe's limits.");
    expect(several.get('[data-test=limits-source]').text()).toBe('kvbench probe of Vendor X');
    expect(several.get('[data-test=efficiency-table]').text()).toContain('35.7 %');
    expect(several.text()).not.toContain('The report could not be built');
  });

  it('"Leave flagged trials out" rebuilds the report without them, lists each with why, and the export asks for the same', async () => {
    const flagged = (): ResponseOf<'report.build'> => {
      const r = report();
      const s = r.report.scenarios[0];
      s.trialIds = [1, 3];
      s.cautions = [];
      s.pageCacheFlagged = 0;
      s.excluded = [...s.excluded, { trialId: 2, trialIndex: 1, attempt: 1, status: 'complete', reason: 'the device read 12.0 % of the bytes the storage tier read: the page cache served the rest', supersededBy: null, flags: ['page-cache'] }];
      return { ...r, report: { ...r.report, excludeFlagged: true, excludedFlagged: { trials: 1, traceOnly: 0, ramBacked: 0, pageCache: 1, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0 } }, tiers: { ...r.tiers, excludeFlagged: true } };
    };
    const fake = installFakeApi({ 'report.build': (r) => (r.excludeFlagged ? flagged() : report()), 'export.create': () => ({ error: { code: 'EXPORT_FAILED', message: 'not here' } }) });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(fake.callsOf('report.build').at(-1)).toEqual({ selection: { suiteIds: [7] }, includeIncomplete: false });
    expect(w.find('[data-trial-flagged-excluded]').exists()).toBe(false);
    await w.get('input[name=excludeFlagged]').setValue(true);
    await flush();
    expect(fake.callsOf('report.build').at(-1)).toEqual({ selection: { suiteIds: [7] }, includeIncomplete: false, excludeFlagged: true });
    expect(w.get('[data-test=flagged-excluded]').text()).toBe('1 left out (1 with storage reads the page cache served)');
    expect(w.get('[data-trial-flagged-excluded]').text()).toBe('Trial 2 excluded, flagged: the device read 12.0 % of the bytes the storage tier read: the page cache served the rest');
    expect(w.find('[data-trial-caution]').exists()).toBe(false);
    expect(w.get('[data-test=tier-method]').text()).toContain('complete trials, flagged ones excluded;');
    await w.get('[data-export=xlsx]').trigger('click');
    await flush();
    expect(fake.callsOf('export.create').at(-1)).toEqual({ selection: { suiteIds: [7] }, format: 'xlsx', includeIncomplete: false, excludeFlagged: true });
  });

  it('keeps an applied datasheet figure when the options change before its report arrives', async () => {
    const pending: { request: RequestOf<'report.build'>; resolve: (v: ResponseOf<'report.build'>) => void }[] = [];
    const fake = installFakeApi({ 'report.build': (r) => new Promise((resolve) => pending.push({ request: r, resolve })) });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    pending.shift()!.resolve(report());
    await flush();
    await w.get('input[name=statedReadGbps]').setValue('5');
    await w.get('input[name=statedReadGbps]').trigger('change');
    await flush();
    // Partial trials ticked before the stated report came back: the newer request still states 5 GB/s.
    await w.get('input[name=includeIncomplete]').setValue(true);
    await flush();
    expect(fake.callsOf('report.build').at(-1)).toEqual({ selection: { suiteIds: [7] }, includeIncomplete: true, stated: { readBytesPerS: 5e9, writeBytesPerS: null } });
    for (const p of pending.splice(0)) p.resolve(report());
    await flush();
  });

  it('says why a RAM-backed selection has no storage efficiency, rather than asking for a probe', async () => {
    const base = report();
    const note = '1 row(s) ran on a RAM-backed cache directory (tmpfs, ramfs, or a loop device or RAM disk whose bytes are in memory): no storage efficiency there';
    const rows = base.tiers.rows.map((r) => ({ ...r, storageReadEfficiency: null, storageWriteEfficiency: null, cpuReadEfficiency: null }));
    installFakeApi({ 'report.build': () => ({ ...base, tiers: { ...base.tiers, rows, notes: [note] } }) });
    const w = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(w.get('[data-test=no-efficiency-ram]').text()).toContain(`No storage efficiency: ${note}`);
    expect(w.text()).not.toContain('No probe of this drive was stored');
  });

  it("states drive and tier sizes in the units chosen in Settings: a drive's stored size from its byte count, a tier's GiB option beside its decimal size", async () => {
    const gib256 = 256 * 1024 ** 3;
    const vda = { driveId: 'drv-vda', driveLabel: 'virtual disk vda (256 GiB)', driveSizeBytes: gib256 };
    const one = report();
    const two: ResponseOf<'report.build'> = {
      ...one,
      report: { ...one.report, scenarios: [...one.report.scenarios, { ...one.report.scenarios[0], systemId: 'sys-2', systemLabel: 'lab2', ...vda, systemLabels: ['lab2'] }] },
      tiers: {
        ...one.tiers,
        probe: { ...one.tiers.probe, source: 'kvbench probe (O_DIRECT, 1 MiB × 16) of virtual disk vda (256 GiB)', sourceSizes: [{ bytes: gib256, text: '256 GiB' }] },
        rows: [...one.tiers.rows, { ...one.tiers.rows[0], systemId: 'sys-2', systemLabel: 'lab2', ...vda, gpuMemGb: 0, cpuMemGb: 1 }],
      },
    };
    for (const [byteUnits, drive, sizes] of [
      ['decimal', 'virtual disk vda (275 GB)', 'GPU none · CPU 1.07 GB (1 GiB)'],
      ['binary', 'virtual disk vda (256 GiB)', 'GPU none · CPU 1.00 GiB'],
    ] as const) {
      installFakeApi({ 'report.build': () => two });
      useAppStore().settings = { ...SETTINGS, byteUnits };
      const w = mountIt(ReportView, { selection: {} });
      await flush();
      expect(w.findAll('[data-scenario-report=storage-only]')[1].text()).toContain(`lab2 · ${drive}`);
      const row = w.get('[data-test=tier-table]').findAll('tbody tr')[1];
      expect(row.get('.cell-label').text()).toBe(`Storage only · lab2 · ${drive}`);
      expect(row.get('[data-test=tier-sizes]').text().replace(/\u00a0/g, ' ')).toBe(sizes); // no break inside a size
      expect(w.get('[data-test=limits-source]').text()).toBe(`kvbench probe (O_DIRECT, 1 MiB × 16) of ${drive}`);

      fakeHistoryApi([trial(1, vda), trial(2)]);
      const h = mountIt(HistoryView);
      await flush();
      expect(h.findAll('[data-test=trial-drive]').map((x) => x.text())).toEqual([drive, 'Vendor X']);
      installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id, vda), hardware: null, histograms: [], cautions: [], unreadable: [] }) });
      const d = mountIt(TrialDialog, { trialId: 1 });
      await flush();
      expect(d.get('[data-test=trial-place]').text()).toBe(`lab1 · ${drive}`);
    }
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

  it('drops an export\'s "cannot reach the server" notice once the page has reconnected; a failure of the server itself stays', async () => {
    let answer: { error: IpcError } = { error: { code: 'UNREACHABLE', message: 'Cannot reach the kvbench server (Failed to fetch). Is kvbench serve still running?' } };
    const fake = installFakeApi({ 'export.create': () => answer });
    const w = mountIt(ExportButtons, { selection: { suiteIds: [7] } });
    await flush();
    fake.setConnection('disconnected');
    await w.get('[data-export=csv]').trigger('click');
    await flush();
    expect(w.get('[role=alert]').attributes('data-error-code')).toBe('UNREACHABLE'); // for support, not in the headline
    expect(w.get('[role=alert]').text()).toContain('Is kvbench serve still running?');
    fake.setConnection('connecting');
    await flush();
    expect(w.find('[role=alert]').exists()).toBe(true);
    fake.setConnection('connected');
    await flush();
    expect(w.find('[role=alert]').exists()).toBe(false);

    answer = { error: { code: 'EXPORT_FAILED', message: 'the XLSX writer failed' } };
    await w.get('[data-export=csv]').trigger('click');
    await flush();
    fake.setConnection('disconnected');
    fake.setConnection('connected');
    await flush();
    expect(w.get('[role=alert]').text()).toContain('the XLSX writer failed');
  });

  it('downloads a served export from its one-time link, says where the desktop app saved one, and says nothing when its save dialog was closed (s14)', async () => {
    let answer: ResponseOf<'export.create'> = { fileName: 'kvbench-suite-7.xlsx', mimeType: 'application/octet-stream', bytes: 2048, trialCount: 3, delivery: DOWNLOAD };
    installFakeApi({ 'export.create': () => answer });
    const clicked: { href: string; download: string }[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      clicked.push({ href: this.getAttribute('href') ?? '', download: this.download });
    });
    try {
      const w = mountIt(ExportButtons, { selection: { suiteIds: [7] } });
      await w.get('[data-export=xlsx]').trigger('click');
      await flush();
      expect(clicked).toEqual([{ href: DOWNLOAD.url, download: 'kvbench-suite-7.xlsx' }]);
      expect(w.get('[data-test=export-done]').text()).toBe('Saved kvbench-suite-7.xlsx: 3 trial(s), 2.05 kB');

      answer = { fileName: 'kvbench-suite-7.xlsx', mimeType: 'application/octet-stream', bytes: 2048, trialCount: 3, delivery: { kind: 'saved', path: '/home/lab/results/week 12.xlsx' } };
      await w.get('[data-export=xlsx]').trigger('click');
      await flush();
      expect(clicked).toHaveLength(1);
      expect(w.get('[data-test=export-done]').text()).toBe('Saved /home/lab/results/week 12.xlsx: 3 trial(s), 2.05 kB');

      answer = { dismissed: true };
      await w.get('[data-export=csv]').trigger('click');
      await flush();
      expect(clicked).toHaveLength(1);
      expect(w.find('[data-test=export-done]').exists()).toBe(false);
      expect(w.find('[role=alert]').exists()).toBe(false);
    } finally {
      click.mockRestore();
    }
  });

  it('states the exported file\'s size in the chosen units', async () => {
    installFakeApi({ 'export.create': () => ({ fileName: 'kvbench-suite-7.csv', mimeType: 'text/csv', bytes: 2 * 1024 * 1024, trialCount: 3, delivery: DOWNLOAD }) });
    useAppStore().settings = { ...SETTINGS, byteUnits: 'binary' };
    const w = mountIt(ExportButtons, { selection: { suiteIds: [7] } });
    await w.get('[data-export=csv]').trigger('click');
    await flush();
    expect(w.get('[data-test=export-done]').text()).toBe('Saved kvbench-suite-7.csv: 3 trial(s), 2.00 MiB');
  });

  it('says which damaged stored rows the history, the report and an export left out, where the trials are missing', async () => {
    // review (ui) 6 #4: the suite held 4 trials, the report read 3, and only the server's log said why.
    const damaged = "trial 2's options in /data/damaged.db cannot be read: the stored JSON is damaged (Expected property name); trial 2 is left out (the other trials are not affected)";
    installFakeApi({
      'history.list': () => ({ trials: [trial(1), trial(3)], total: 2, unreadable: [damaged] }),
      'history.facets': () => facets(3),
      'suites.list': () => [],
      'report.build': () => ({ ...report(), unreadable: [damaged] }),
      'export.create': () => ({ fileName: 'kvbench-suite-7.csv', mimeType: 'text/csv', bytes: 2, trialCount: 3, delivery: DOWNLOAD, unreadable: [damaged] }),
    });
    const notice = (w: VueWrapper) => w.get('[data-test=unreadable]').text();
    const history = mountIt(HistoryView);
    await flush();
    expect(notice(history)).toMatch(/^!A stored row of this database could not be read \(damaged\): what is shown goes without it, as each line says\./);
    expect(notice(history)).toContain(damaged);
    const r = mountIt(ReportView, { selection: { suiteIds: [7] } });
    await flush();
    expect(r.findAll('[data-test=unreadable]')).toHaveLength(1); // said once, not again by its export buttons
    expect(notice(r)).toContain("This report's trial counts leave out the same; History → Suites counts every stored trial.");
    expect(notice(r)).toContain(damaged);
    await r.get('[data-export=csv]').trigger('click');
    await flush();
    // The export's own notice, beside its buttons, above the report's.
    expect(r.findAll('[data-test=unreadable]').map((n) => n.text())).toEqual([
      expect.stringMatching(/^!A stored row of this database could not be read \(damaged\): what is shown goes without it, as each line says\. The exported file leaves out the same\. trial 2's options/),
      expect.stringContaining("This report's trial counts leave out the same"),
    ]);
  });

  it('says when a trial\'s stored hardware snapshot is damaged, instead of showing the trial without its hardware unexplained', async () => {
    const noHardware = 'hardware snapshot 1 in /data/damaged.db cannot be read: the stored JSON is damaged (Unexpected token); trial 4 (and any other trial of that snapshot) is shown without its hardware';
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id), hardware: null, histograms: [], cautions: [], unreadable: r.id === 4 ? [noHardware] : [] }) });
    const w = mountIt(TrialDialog, { trialId: 4 });
    await flush();
    expect(w.get('[data-test=unreadable]').text()).toContain(noHardware);
    expect(w.get('[data-test=hardware-unreadable]').text()).toContain('its stored snapshot is damaged');
    // A trial stored without a snapshot (an import) has nothing to say.
    await w.setProps({ trialId: 3 });
    await flush();
    expect(w.find('[data-test=unreadable]').exists()).toBe(false);
    expect(w.find('[data-test=hardware-unreadable]').exists()).toBe(false);
    expect(w.find('[data-test=trial-caution]').exists()).toBe(false);
  });

  it('names the configuration of a trial as the app does, with the unit of each option (GiB for the tier sizes, as the reference)', async () => {
    const options = { model: 'tiny-1b', numUsers: 4, duration: 30, cpuMemGb: 0.125, gpuMemGb: 0, storageCapacityGb: 2, generationMode: 'fast', notAnOption: 'x' };
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id, { options }), hardware: null, histograms: [], cautions: [], unreadable: [] }) });
    const w = mountIt(TrialDialog, { trialId: 2 });
    await flush();
    const rows = w.findAll('[data-test=trial-options] tr').map((r) => r.findAll('td').map((c) => c.text()));
    expect(rows).toEqual([
      ['Model', 'tiny-1b'],
      ['Users', '4'],
      ['Seconds per trial', '30'],
      ['CPU tier (GiB)', '0.125'],
      ['GPU tier per GPU (GiB)', '0'],
      ['Storage tier capacity (GiB)', '2'],
      ['Generation mode', 'fast'],
      ['notAnOption', 'x'], // a key this version does not know keeps its stored name
    ]);
  });

  it("gives a trial's queueing verdict, issue lateness and engine memory, and for one stored before kvbench recorded them \"—\" and no chart, not zeros", async () => {
    const mib = 1024 ** 2;
    const note = 'the queue grew to 12 requests (23 issued, 7 completed): the configuration offers more load than the storage serves';
    const engine = {
      memoryTimeline: { elapsedNs: [1e9, 2e9], rssBytes: [400 * mib, 420 * mib], heapUsedBytes: [20 * mib, 21 * mib], arrayBuffersBytes: [190 * mib, 190 * mib], byteWorkersHeapUsedBytes: [null, null], samples: 2 },
      memory: { sampledPeakRssBytes: 420 * mib, fixedBuffersBytes: 289 * mib, cpuTierArenaBytes: 256 * mib, storageIoBuffersBytes: 32 * mib },
      queue: { queueingBound: true, engineQueueingBound: true, note, issueLatenessMaxNs: 3.7e9, maxDepth: 12, queuedAtClose: 12, requestsCompleted: 7, capRequests: 12, capReached: true },
    };
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id), hardware: null, histograms: [], cautions: [], unreadable: [], engine: r.id === 2 ? engine : { memoryTimeline: null, memory: null, queue: null } }) });
    const w = mountIt(TrialDialog, { trialId: 2 });
    await flush();
    expect(w.get('[data-test=trial-queueing]').text()).toBe(`Queueing-bound: ${note}`);
    expect(w.get('[data-test=trial-queueing]').classes()).toContain('warn-text');
    expect(w.get('[data-test=trial-lateness]').text()).toMatch(/^3\.7 s at most behind schedule/);
    expect(w.get('[data-test=trial-memory]').text()).toMatch(/^peak RSS 440 MB /);
    expect(w.get('[data-test=trial-memory-chart-title]').text()).toBe('Engine memory over the measured window (MB)');
    expect(w.findComponent(LineChart).props('series')[0].data).toEqual([(400 * mib) / 1e6, (420 * mib) / 1e6]);

    const old = mountIt(TrialDialog, { trialId: 3 });
    await flush();
    expect(old.get('[data-test=trial-queueing]').text()).toMatch(/^— \(not recorded/);
    expect(old.get('[data-test=trial-lateness]').text()).toBe('—');
    expect(old.get('[data-test=trial-memory]').text()).toBe('—');
    expect(old.find('[data-test=trial-memory-chart]').exists()).toBe(false);
  });

  it("reads a trial's stored note, written in the CLI's words, with the app's names for the fields to change", async () => {
    const stored = 'INSUFFICIENT_SPACE: --storage-capacity-gb 2 (2.00 GiB) exceeds the free space on /mnt/x/kv (20.0 MiB)';
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id, { status: 'failed', statusReason: stored }), hardware: null, histograms: [], cautions: [], unreadable: [] }) });
    const w = mountIt(TrialDialog, { trialId: 2 });
    await flush();
    expect(w.text()).toContain('INSUFFICIENT_SPACE: “Storage tier capacity (GiB)” 2 (2.00 GiB) exceeds the free space on /mnt/x/kv (20.0 MiB)');
    expect(w.text()).not.toContain('--storage-capacity-gb');

    fakeHistoryApi([trial(1, { status: 'partial', statusReason: 'no request completed in the 3.0 s measured window (8 in flight, 56 queued when it closed): lengthen --duration or lower the load' })]);
    const h = mountIt(HistoryView);
    await flush();
    expect(h.get('[data-note-of="1"] .reason').text()).toBe('no request completed in the 3.0 s measured window (8 in flight, 56 queued when it closed): lengthen “Seconds per trial” or lower the load');
  });

  it('a flagged trial says why, with what held its RAM-backed cache directory in memory', async () => {
    const caution = 'the cache directory was RAM-backed (loop0 → /dev/shm/d.img on tmpfs): its storage numbers describe memory, not a drive';
    installFakeApi({ 'trials.get': (r) => ({ trial: trial(r.id, { storageRamBacking: 'loop0 → /dev/shm/d.img on tmpfs' }), hardware: null, histograms: [], cautions: [caution], unreadable: [] }) });
    const w = mountIt(TrialDialog, { trialId: 2 });
    await flush();
    expect(w.findAll('[data-test=trial-caution]').map((c) => c.text())).toEqual([caution]);
  });

  it('has an empty state for a selection without trials, and nothing to export', async () => {
    installFakeApi({ 'report.build': () => ({ ...report(), trialCount: 0, report: { method: '', includeIncomplete: false, excludeFlagged: false, excludedFlagged: null, suiteLabels: [], scenarios: [] } }) });
    const w = mountIt(ReportView, { selection: {} });
    await flush();
    expect(w.text()).toContain('No trials here');
    expect(w.find('[data-export]').exists()).toBe(false);
  });

  it('says a suite that is not in the database is not found, with no export, also when its report was on screen', async () => {
    let gone = false;
    const message = 'Suite 1 not found: deleted, or in another database than the one open (see Settings)';
    installFakeApi({ 'report.build': () => (gone ? { error: { code: 'NOT_FOUND', message } } : { ...report(), title: 'Suite 1 · quick' }) });
    const w = mountIt(ReportView, { selection: { suiteIds: [1] }, back: true });
    await flush();
    expect(w.get('[data-test=report-title]').text()).toBe('Suite 1 · quick');
    expect(w.find('[data-export]').exists()).toBe(true);
    gone = true;
    await w.get('input[name=includeIncomplete]').setValue(true); // any reload: the suite was deleted meanwhile
    await flush();
    expect(w.get('[data-test=report-title]').text()).toBe('Suite 1 not found');
    expect(w.text()).toContain(message);
    expect(w.text()).not.toContain('trial(s) of the selection');
    expect(w.find('[data-export]').exists()).toBe(false);
    expect(w.find('[data-test=tier-table]').exists()).toBe(false); // the old report is gone
  });
});

describe('compare', () => {
  const clean = { matchedTrials: 2, flaggedTrials: 0, traceOnly: 0, ramBacked: 0, ramBackings: [], pageCache: 0, stalled: 0, spilled: 0, queueingBound: 0, gpuTier: 0, other: 0 };
  /** lab1 (A) against slow-box (B), matched by configuration; the test gives the metrics. */
  const systemComparison = (n: { trialsA: number; trialsB: number; matched: number; unmatchedA: number }): Omit<ResponseOf<'report.compare'>, 'metrics'> => ({
    kind: 'system',
    a: { label: 'lab1', id: 'sys-1', trials: n.trialsA, suiteIds: [1] },
    b: { label: 'slow-box', id: 'imp-2', trials: n.trialsB, suiteIds: [2] },
    match: 'config',
    matched: n.matched,
    unmatchedA: n.unmatchedA,
    unmatchedB: 0,
    method: 'per configuration …',
    byCpuMem: [],
    byModel: [],
    variance: [],
    cautions: { a: clean, b: clean },
    excludeFlagged: false,
    excludedFlagged: null,
    suiteLabels: { a: [{ label: null, suiteIds: [1] }], b: [{ label: null, suiteIds: [2] }] },
    suiteLabel: null,
    notes: [],
    unreadable: [],
  });
  /** The Compare view after comparing its first two systems. */
  async function comparedView(): Promise<VueWrapper> {
    const w = mountIt(CompareView);
    await flush();
    await w.get('form').trigger('submit');
    await flush();
    return w;
  }

  it("names two drives with their sizes in the units chosen in Settings, in the choices and the result, from the sizes' byte counts", async () => {
    const gib256 = 256 * 1024 ** 3;
    const drive = (id: string, label: string, sizeBytes: number | null) => ({ id, systemId: 'sys-1', label, basis: 'local-device', model: null, serial: null, sizeBytes, trialCount: 2 });
    const drives = [drive('drv-a', 'virtual disk vda (256 GiB)', gib256), drive('drv-b', 'virtual disk vdb (256 GiB)', null)];
    for (const [byteUnits, a] of [
      ['decimal', 'virtual disk vda (275 GB)'],
      ['binary', 'virtual disk vda (256 GiB)'],
    ] as const) {
      installFakeApi({
        'history.facets': () => ({ ...facets(4), drives }),
        'report.compare': () => ({
          ...systemComparison({ trialsA: 2, trialsB: 2, matched: 1, unmatchedA: 0 }),
          kind: 'drive',
          a: { label: drives[0].label, id: 'drv-a', sizeBytes: gib256, trials: 2, suiteIds: [1] },
          b: { label: drives[1].label, id: 'drv-b', sizeBytes: null, trials: 2, suiteIds: [2] },
          metrics: [],
        }),
      });
      useAppStore().settings = { ...SETTINGS, byteUnits };
      const w = mountIt(CompareView);
      await flush();
      await w.get('[data-test=compare-drives]').trigger('click');
      // A size not known keeps the stored name.
      expect(w.findAll('select[name=a] option').map((o) => o.text())).toEqual(['choose…', `${a} (2 trials)`, 'virtual disk vdb (256 GiB) (2 trials)']);
      await w.get('select[name=a]').setValue('drv-a');
      await w.get('select[name=b]').setValue('drv-b');
      await w.get('form').trigger('submit');
      await flush();
      expect([w.get('[data-test=side-a]').text(), w.get('[data-test=side-b]').text()]).toEqual([a, 'virtual disk vdb (256 GiB)']);

      installFakeApi({ 'history.list': () => ({ trials: [], total: 0 }), 'history.facets': () => ({ ...facets(4), drives }), 'suites.list': () => [] });
      const h = mountIt(HistoryView);
      await flush();
      expect(h.findAll('select[name=drive] option').map((o) => o.text())).toContain(`${a} (2)`);
    }
  });

  it('compares two suite labels: the labels to choose from, the request, and the suites each side pools', async () => {
    const fake = installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': (r) => ({
        ...systemComparison({ trialsA: 4, trialsB: 2, matched: 1, unmatchedA: 0 }),
        kind: 'label',
        a: { label: r.a, id: r.a, trials: 4, suiteIds: [3, 5] },
        b: { label: r.b, id: r.b, trials: 2, suiteIds: [6] },
        metrics: [],
      }),
    });
    const w = mountIt(CompareView);
    await flush();
    await w.get('[data-test=compare-labels]').trigger('click');
    expect(w.get('[data-test=compare-labels]').attributes('aria-selected')).toBe('true');
    expect(w.findAll('select[name=a] option').map((o) => o.text())).toEqual(['choose…', 'fw 2.2 (1 suite, 2 trials)', 'drive A, firmware 2.1 (2 suites, 4 trials)']);
    expect(w.text()).toContain('Every suite with the label counts, whatever its date');
    await w.get('select[name=a]').setValue('drive A, firmware 2.1');
    await w.get('select[name=b]').setValue('drive A, firmware 2.1');
    // A label against itself is no comparison: as for systems, Compare stays off.
    expect(w.get('[data-test=compare]').attributes('disabled')).toBeDefined();
    await w.get('select[name=b]').setValue('fw 2.2');
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('report.compare')).toEqual([{ kind: 'label', a: 'drive A, firmware 2.1', b: 'fw 2.2', match: 'config' }]);
    expect(w.get('[data-test=suites-a]').text()).toBe('· suites 3, 5');
    expect(w.get('[data-test=suites-b]').text()).toBe('· suite 6');
  });

  it('narrows two systems to one suite label on request: the labels to choose from, the request, and the result says so', async () => {
    const fake = installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': (r) => ({
        ...systemComparison({ trialsA: 2, trialsB: 2, matched: 1, unmatchedA: 0 }),
        a: { label: 'lab1', id: 'sys-1', trials: 2, suiteIds: [3] },
        b: { label: 'slow-box', id: 'imp-2', trials: 2, suiteIds: [5, 6] },
        suiteLabel: r.suiteLabel ?? null,
        metrics: [],
      }),
    });
    const w = mountIt(CompareView);
    await flush();
    expect(w.findAll('select[name=suiteLabel] option').map((o) => o.text())).toEqual(['every suite', 'fw 2.2', 'drive A, firmware 2.1']);
    await w.get('form').trigger('submit');
    await flush();
    // Every suite by default: no label in the request, and nothing said of one.
    expect(fake.callsOf('report.compare').at(-1)).toEqual({ kind: 'system', a: 'sys-1', b: 'imp-2', match: 'config' });
    expect(w.find('[data-test=compare-suite-label]').exists()).toBe(false);
    expect(w.find('[data-test=suites-a]').exists()).toBe(false);
    await w.get('select[name=suiteLabel]').setValue('drive A, firmware 2.1');
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('report.compare').at(-1)).toEqual({ kind: 'system', a: 'sys-1', b: 'imp-2', match: 'config', suiteLabel: 'drive A, firmware 2.1' });
    expect(w.get('[data-test=compare-suite-label]').text()).toBe('Only the suites labelled “drive A, firmware 2.1”, on both sides.');
    expect(w.get('[data-test=suites-a]').text()).toBe('· suite 3');
    expect(w.get('[data-test=suites-b]').text()).toBe('· suites 5, 6');
    // Two suite labels are compared as they are: no label to narrow them by.
    await w.get('[data-test=compare-labels]').trigger('click');
    expect(w.find('select[name=suiteLabel]').exists()).toBe(false);
  });

  it("says its notes with its own controls' names: the per config buttons, the Drives tab", async () => {
    installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': () => ({
        ...systemComparison({ trialsA: 4, trialsB: 2, matched: 1, unmatchedA: 1 }),
        notes: [
          'the ratios, win rates and verdicts count those trials like any other: a side named better on them may owe it to what flagged them, not to its drive (the flagged column counts the configurations they are in; per configuration, see --per-config)',
          'A (lab1) ran 2 matched configuration(s) on several drives (nvme0n1; vda): each drive is compared on its own row, never pooled, so those configurations count once per drive in the ratios and win rates (see --per-config; compare drives directly with --drives)',
          'B (slow-box): 1 of its 2 matched trial(s) carry another caution (kvbench report lists it per trial)',
          '1 scenario(s) ran a configuration that the other side ran only under another scenario, so they are not matched (a scenario is compared only with the same scenario: scenarios that share a configuration can still differ, e.g. in the storage cap): cpu-storage (tiny-1b, 4 users) only in B, A ran it as storage-saturation',
        ],
        metrics: [],
      }),
    });
    const w = await comparedView();
    expect(w.findAll('[data-test=compare-note]').map((n) => n.text().replace(/^!/, ''))).toEqual([
      'the ratios, win rates and verdicts count those trials like any other: a side named better on them may owe it to what flagged them, not to its drive (the flagged column counts the configurations they are in; per configuration, see the “per config” buttons)',
      'A (lab1) ran 2 matched configuration(s) on several drives (nvme0n1; vda): each drive is compared on its own row, never pooled, so those configurations count once per drive in the ratios and win rates (see the “per config” buttons; compare drives directly with the Drives tab)',
      'B (slow-box): 1 of its 2 matched trial(s) carry another caution (the report lists it per trial)',
      // rev12 M3: scenarios by the names the app shows them under, not their CLI ids.
      '1 scenario(s) ran a configuration that the other side ran only under another scenario, so they are not matched (a scenario is compared only with the same scenario: scenarios that share a configuration can still differ, e.g. in the storage cap): CPU + storage (tiny-1b, 4 users) only in B, A ran it as Storage saturation',
    ]);
    expect(w.findAll('[role=tab]').map((t) => t.text())).toEqual(['Systems', 'Drives', 'Suite labels']);
  });

  it('compares two systems: matched configurations, ratios, win rate and noise', async () => {
    const metric = METRIC_BY_KEY.wall_clock_throughput_tok_per_s;
    const fake = installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': () => ({
        ...systemComparison({ trialsA: 4, trialsB: 2, matched: 1, unmatchedA: 1 }),
        metrics: [
          {
            metric,
            configs: [{ key: 'k', scenarioId: 'storage-only', scenarioIds: ['storage-only'], description: 'tiny-1b, 4 users', placeA: 'lab1', placeB: 'lab2', cpuMemGb: 0.125, model: 'tiny-1b', numUsers: 4, nA: 2, nB: 2, medianA: 300, medianB: 15, ratio: 20, cvA: 0.05, cvB: 0.3, winner: 'a', logRatio: Math.log(20), standardError: 0.2, df: 1.1, pValue: 0.01, withinNoise: false, flaggedA: 0, flaggedB: 0, excludedA: 0, excludedB: 0, measuredBy: [], mixedDefinitions: false }],
            compared: 1,
            meanRatio: 20,
            geoMeanRatio: 20,
            medianRatio: 20,
            winRateA: 1,
            winsA: 1,
            winsB: 0,
            verdict: 'a',
            leader: 'a',
            tested: 1,
            standardError: 0.2,
            df: 1.1,
            pValue: 0.01,
            verdictCaveat: null,
            withinNoise: 0,
            noiseUnknown: 0,
            medianCvA: 0.05,
            medianCvB: 0.3,
            flaggedConfigs: 0, mixedDefinitions: [],
          },
          {
            // review (ui) 6 #11: 1.01× within the noise was green, "A wins 100 %".
            metric: METRIC_BY_KEY.storage_read_bytes_per_s,
            configs: [{ key: 'k', scenarioId: 'storage-only', scenarioIds: ['storage-only'], description: 'tiny-1b, 4 users', placeA: 'lab1', placeB: 'lab2', cpuMemGb: 0.125, model: 'tiny-1b', numUsers: 4, nA: 2, nB: 2, medianA: 1.01e9, medianB: 1e9, ratio: 1.01, cvA: 0.05, cvB: 0.04, winner: 'a', logRatio: Math.log(1.01), standardError: 0.05, df: 1.8, pValue: 0.86, withinNoise: true, flaggedA: 0, flaggedB: 0, excludedA: 0, excludedB: 0, measuredBy: [], mixedDefinitions: false }],
            compared: 1,
            meanRatio: 1.01,
            geoMeanRatio: 1.01,
            medianRatio: 1.01,
            winRateA: null,
            winsA: 0,
            winsB: 0,
            verdict: 'within-noise',
            leader: 'a',
            tested: 1,
            standardError: 0.05,
            df: 1.8,
            pValue: 0.86,
            verdictCaveat: null,
            withinNoise: 1,
            noiseUnknown: 0,
            medianCvA: 0.05,
            medianCvB: 0.04,
            flaggedConfigs: 0, mixedDefinitions: [],
          },
          {
            // One trial on side B: the noise is unknown, which is not a difference beyond it: no side named.
            metric: METRIC_BY_KEY.requests_per_s,
            configs: [{ key: 'k', scenarioId: 'storage-only', scenarioIds: ['storage-only'], description: 'tiny-1b, 4 users', placeA: 'lab1', placeB: 'lab2', cpuMemGb: 0.125, model: 'tiny-1b', numUsers: 4, nA: 2, nB: 1, medianA: 3.15, medianB: 3, ratio: 1.05, cvA: 0.2, cvB: null, winner: 'a', logRatio: Math.log(1.05), standardError: null, df: null, pValue: null, withinNoise: null, flaggedA: 0, flaggedB: 0, excludedA: 0, excludedB: 0, measuredBy: [], mixedDefinitions: false }],
            compared: 1,
            meanRatio: 1.05,
            geoMeanRatio: 1.05,
            medianRatio: 1.05,
            // rev8-gui #1: an untested configuration is no win ("A wins 100 %" was shown here).
            winRateA: null,
            winsA: 0,
            winsB: 0,
            verdict: 'unknown',
            leader: 'a',
            tested: 0,
            standardError: null,
            df: null,
            pValue: null,
            verdictCaveat: null,
            withinNoise: 0,
            noiseUnknown: 1,
            medianCvA: 0.2,
            medianCvB: null,
            flaggedConfigs: 0, mixedDefinitions: [],
          },
        ],
      }),
    });
    const w = await comparedView();
    expect(fake.callsOf('report.compare').at(-1)).toEqual({ kind: 'system', a: 'sys-1', b: 'imp-2', match: 'config' });
    expect(w.find('[data-test=verdict-caveats]').exists()).toBe(false);
    // The rule is said where the verdict is read: the chart's legend and the verdict's tooltip.
    expect(w.get('[data-test=ratio-legend]').text()).toContain("Welch's t-test on log values, two-sided, α = 0.05");
    expect(w.findAll('[data-test=compare-table] > tbody > tr')[0].findAll('td')[2].attributes('title')).toBe(
      "A better beyond the run-to-run noise: p = 0.010 over 1 configuration(s) (Welch's t-test on log values, two-sided, α = 0.05)",
    );
    expect(w.get('[data-test=matched]').text()).toBe('1');
    const cells = w.findAll('[data-test=compare-table] > tbody > tr')[0].findAll('td').map((td) => td.text());
    expect(cells.slice(1, 8)).toEqual(['1', '20.00×', '20.00×', '100 % of 1', '0 of 1', '5.0 %', '30.0 %']);
    // The win rate says what it is a share of, and each side's count beyond the noise.
    expect(w.findAll('[data-test=win-rate]')[0].attributes('title')).toBe('beyond the run-to-run noise: A better in 1, B better in 0 of the 1 configuration(s) tested; the others within it');
    expect(cells[0]).toContain('Wall-clock throughput (higher is better)');
    expect(w.findAll('[data-test=compare-table] > tbody > tr')[0].findAll('td')[2].classes()).toContain('better');
    const noise = w.findAll('[data-test=compare-table] > tbody > tr')[1];
    expect(noise.findAll('td').map((td) => td.text()).slice(2, 6)).toEqual(['≈ 1.01×', '1.01×', '—', '1 of 1']);
    expect(noise.findAll('td')[4].attributes('title')).toBe('beyond the run-to-run noise: A better in 0, B better in 0 of the 1 configuration(s) tested; the others within it');
    expect(noise.findAll('td')[2].classes()).not.toContain('better');
    const unknownNoise = w.findAll('[data-test=compare-table] > tbody > tr')[2].findAll('td');
    expect(unknownNoise[5].text().replace(/\s+/g, ' ')).toBe('0 of 1 (1 unknown)');
    expect(unknownNoise[4].text()).toBe('—');
    expect(unknownNoise[4].attributes('title')).toBe('no configuration has 2 or more trials a side and values above 0: none is tested, so there is no win rate');
    // review rev6 #3: one trial a side named A better (green); the endpoint compare names no side there.
    expect(unknownNoise[2].text()).toBe('A? 1.05×');
    expect(unknownNoise[2].classes()).not.toContain('better');
    expect(unknownNoise[2].attributes('title')).toContain('no configuration has 2 or more trials a side');
    await w.findAll('button').find((b) => b.text() === 'per config')!.trigger('click');
    expect(w.text()).toContain('real (p 0.010)');
    expect(w.findAll('[data-test=compare-table] > tbody > tr')[1].find('tbody td').text()).toBe('Storage only: tiny-1b, 4 users');
  });

  it('a side with flagged trials says how many beside its trials, per configuration, and why in the notes', async () => {
    const note = 'A (lab1): 2 of its 2 matched trial(s) ran on a RAM-backed cache directory (loop0 → /dev/shm/d.img on tmpfs): their storage numbers describe memory, not a drive';
    installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': () => ({
        ...systemComparison({ trialsA: 2, trialsB: 2, matched: 1, unmatchedA: 0 }),
        cautions: { a: { ...clean, flaggedTrials: 2, traceOnly: 0, ramBacked: 2, ramBackings: [{ backing: 'loop0 → /dev/shm/d.img on tmpfs', trials: 2 }] }, b: clean },
        notes: [note],
        metrics: [
          {
            metric: METRIC_BY_KEY.storage_read_bytes_per_s,
            configs: [{ key: 'k', scenarioId: 'storage-only', scenarioIds: ['storage-only'], description: 'tiny-1b, 4 users', placeA: 'lab1', placeB: 'lab2', cpuMemGb: 0, model: 'tiny-1b', numUsers: 4, nA: 2, nB: 2, medianA: 3e9, medianB: 1e9, ratio: 3, cvA: 0.05, cvB: 0.04, winner: 'a', logRatio: Math.log(3), standardError: 0.05, df: 2, pValue: 0.001, withinNoise: false, flaggedA: 2, flaggedB: 0, excludedA: 0, excludedB: 0, measuredBy: [], mixedDefinitions: false }],
            compared: 1, meanRatio: 3, geoMeanRatio: 3, medianRatio: 3, winRateA: 1, winsA: 1, winsB: 0, verdict: 'a', leader: 'a', tested: 1, standardError: 0.05, df: 2, pValue: 0.001, verdictCaveat: null, withinNoise: 0, noiseUnknown: 0, medianCvA: 0.05, medianCvB: 0.04, flaggedConfigs: 1, mixedDefinitions: [],
          },
        ],
      }),
    });
    const w = await comparedView();
    expect(w.get('[data-test=flagged-a]').text()).toBe('· 2 of 2 matched flagged');
    expect(w.find('[data-test=flagged-b]').exists()).toBe(false);
    expect(w.text()).toContain(note);
    await w.findAll('button').find((b) => b.text() === 'per config')!.trigger('click');
    const cells = w.findAll('[data-test=compare-table] > tbody > tr')[1].findAll('tbody td').map((td) => td.text());
    expect(cells.at(-1)).toBe('2 / 0');
  });

  it('"Leave flagged trials out" asks for the exclusion, and the result says per side and per configuration what it left out', async () => {
    const note = 'A (lab1): 2 of its 5 matched trial(s) left out as flagged (2 on a RAM-backed cache directory)';
    const fake = installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': (r) => ({
        ...systemComparison({ trialsA: 5, trialsB: 3, matched: 1, unmatchedA: 0 }),
        cautions: { a: { ...clean, matchedTrials: 3 }, b: { ...clean, matchedTrials: 3 } },
        excludeFlagged: r.excludeFlagged === true,
        excludedFlagged: r.excludeFlagged ? { a: { ...clean, matchedTrials: 5, flaggedTrials: 2, ramBacked: 2 }, b: { ...clean, matchedTrials: 3 } } : null,
        notes: r.excludeFlagged ? [note] : [],
        metrics: [
          {
            metric: METRIC_BY_KEY.wall_clock_throughput_tok_per_s,
            configs: [{ key: 'k', scenarioId: 'storage-only', scenarioIds: ['storage-only'], description: 'tiny-1b, 4 users', placeA: 'lab1', placeB: 'lab2', cpuMemGb: 0, model: 'tiny-1b', numUsers: 4, nA: 3, nB: 3, medianA: 101, medianB: 90, ratio: 1.12, cvA: 0.01, cvB: 0.01, winner: 'a', logRatio: Math.log(1.12), standardError: 0.01, df: 4, pValue: 0.001, withinNoise: false, flaggedA: 0, flaggedB: 0, excludedA: 2, excludedB: 0, measuredBy: [], mixedDefinitions: false }],
            compared: 1, meanRatio: 1.12, geoMeanRatio: 1.12, medianRatio: 1.12, winRateA: 1, winsA: 1, winsB: 0, verdict: 'a', leader: 'a', tested: 1, standardError: 0.01, df: 4, pValue: 0.001, verdictCaveat: null, withinNoise: 0, noiseUnknown: 0, medianCvA: 0.01, medianCvB: 0.01, flaggedConfigs: 0, mixedDefinitions: [],
          },
        ],
      }),
    });
    const w = mountIt(CompareView);
    await flush();
    await w.get('input[name=excludeFlagged]').setValue(true);
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('report.compare').at(-1)).toEqual({ kind: 'system', a: 'sys-1', b: 'imp-2', match: 'config', excludeFlagged: true });
    expect(w.get('[data-test=left-out-a]').text()).toBe('· 2 of 5 matched left out (flagged)');
    expect(w.get('[data-test=left-out-b]').text()).toBe('· 0 of 3 matched left out (flagged)');
    expect(w.find('[data-test=flagged-a]').exists()).toBe(false);
    expect(w.text()).toContain(note);
    await w.findAll('button').find((b) => b.text() === 'per config')!.trigger('click');
    expect(w.get('[data-test=left-out]').text()).toBe('2 / 0');
    // Unticked: the request is as it always was, and nothing is said to be left out.
    await w.get('input[name=excludeFlagged]').setValue(false);
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('report.compare').at(-1)).toEqual({ kind: 'system', a: 'sys-1', b: 'imp-2', match: 'config' });
    expect(w.find('[data-test=left-out-a]').exists()).toBe(false);
  });

  it('by CPU-tier size and by model: each metric\'s verdict, geo-mean and win rate per group, and a differentiator only beyond the noise, as the CLI prints them (rev8-gui #2, rev12 L1)', async () => {
    const row = { key: 'storage_read_bytes_per_s', label: 'Storage read bandwidth', compared: 2, tested: 1, noiseUnknown: 1, geoMeanRatio: 0.53, verdict: 'within-noise' as const, leader: 'b' as const, pValue: 0.39, winRateA: null, winsA: 0, winsB: 0, mixedDefinitions: [] };
    installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': () => ({
        ...systemComparison({ trialsA: 6, trialsB: 6, matched: 3, unmatchedA: 0 }),
        metrics: [],
        byCpuMem: [
          { group: 'CPU 0.25 GiB', configs: 2, metrics: [row], bestDifferentiator: null },
          {
            group: 'CPU 0.5 GiB',
            configs: 1,
            metrics: [{ ...row, compared: 1, noiseUnknown: 0, geoMeanRatio: 2, verdict: 'a', leader: 'a', pValue: 0.0004, winRateA: 1, winsA: 1 }],
            bestDifferentiator: { key: 'storage_read_bytes_per_s', label: 'Storage read bandwidth', geoMeanRatio: 2, pValue: 0.0004, tested: 1, winRate: 1, side: 'a' },
          },
        ],
        byModel: [{ group: 'tiny-1b', configs: 3, metrics: [{ ...row, compared: 3, noiseUnknown: 2 }], bestDifferentiator: null }],
        variance: [{ users: 4, configs: 3, medianCvA: 0.02, medianCvB: 0.05 }],
      }),
    });
    const w = await comparedView();
    const rowsOf = (test: string) => w.findAll(`[data-test=${test}] tbody tr`).map((tr) => tr.findAll('td').map((td) => td.text().replace(/\s+/g, ' ').trim()));
    expect(w.findAll('[data-test=compare-groups] thead th').map((th) => th.text())).toEqual(['Group', 'Configs', 'Storage read bandwidth', 'Best differentiator']);
    // The geo-mean and win rate read "—" wherever no differentiator was named; the CLI printed each metric's.
    expect(rowsOf('compare-groups')).toEqual([
      ['CPU 0.25 GiB', '2', '≈ 0.53× (1 of 2 tested)', '—'],
      ['CPU 0.5 GiB', '1', 'A 2.00× (1 of 1 tested, A wins 100 %)', 'Storage read bandwidth: A better (p <0.001), 2.00×, A wins 100 % of 1 tested'],
    ]);
    expect(w.findAll('[data-test=compare-groups] tbody tr')[1].findAll('td')[2].classes()).toContain('better');
    const best = w.findAll('[data-test=compare-groups] tbody tr').map((tr) => tr.findAll('td').at(-1)!.attributes('title'));
    expect(best[0]).toMatch(/^no candidate metric differs beyond the run-to-run noise/);
    expect(best[1]).toBe("p = <0.001 over 1 configuration(s) (Welch's t-test on log values, two-sided, α = 0.05)");
    // The backend sends them and the CLI prints them: by model, and the spread by user count.
    expect(rowsOf('compare-groups-model')).toEqual([['tiny-1b', '3', '≈ 0.53× (1 of 3 tested)', '—']]);
    expect(rowsOf('compare-variance')).toEqual([['4', '3', '2.0 %', '5.0 %']]);
    expect(w.text()).toContain('By model');
    expect(w.text()).toContain('Run-to-run variation of wall-clock throughput by user count');
  });

  it('the bar is the geometric mean the verdict tests, so it is drawn in the verdict\'s colour; where the mean or the win rate lean the other way, the table\'s mean is amber with the model\'s reason', async () => {
    const caveat = 'verdict B: the geometric mean over the 3 configuration(s) tested, 0.80x, is beyond the noise (p = <0.001); 2 of the 3 configuration(s) beyond the run-to-run noise favour A: the win rate counts configurations, the verdict weighs each difference by its size';
    const config = (k: string, medianA: number, medianB: number) => ({
      key: k, scenarioId: 's', scenarioIds: ['s'], description: k, placeA: 'lab1', placeB: 'lab2', cpuMemGb: 0, model: 'm', numUsers: 1, nA: 3, nB: 3, medianA, medianB, ratio: medianA / medianB, cvA: 0.001, cvB: 0.001, winner: medianA > medianB ? ('a' as const) : ('b' as const),
      logRatio: Math.log(medianA / medianB), standardError: 0.001, df: 4, pValue: 0.0001, withinNoise: false, flaggedA: 0, flaggedB: 0, excludedA: 0, excludedB: 0, measuredBy: [], mixedDefinitions: false,
    });
    const base = { medianRatio: 1.02, withinNoise: 0, noiseUnknown: 0, medianCvA: 0.001, medianCvB: 0.001, tested: 3, standardError: 0.001, df: 8, pValue: 0.0001, flaggedConfigs: 0, mixedDefinitions: [] };
    installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': () => ({
        ...systemComparison({ trialsA: 9, trialsB: 9, matched: 3, unmatchedA: 0 }),
        metrics: [
          { ...base, metric: METRIC_BY_KEY.wall_clock_throughput_tok_per_s, configs: [config('k0', 102, 100), config('k1', 102, 100), config('k2', 50, 100)], compared: 3, meanRatio: 0.85, geoMeanRatio: 0.8, winRateA: 2 / 3, winsA: 2, winsB: 1, verdict: 'b', leader: 'b', verdictCaveat: caveat },
          { ...base, metric: METRIC_BY_KEY.decode_bytes_read, configs: [config('k0', 200, 100)], compared: 1, tested: 1, meanRatio: 2, geoMeanRatio: 2, winRateA: 1, winsA: 1, winsB: 0, verdict: 'a', leader: 'a', verdictCaveat: null },
        ],
      }),
    });
    const w = await comparedView();
    const bars = w.findComponent(BarChart).props('series') as BarSeries[];
    expect(bars[0].data).toEqual([0.8, 2]);
    expect(bars[0].colors).toEqual([COLORS[4], COLORS[2]]);
    const cells = w.findAll('[data-test=compare-table] > tbody > tr')[0].findAll('td');
    const cell = cells[2];
    // rev12 M2: the coloured verdict sat on the arithmetic mean (0.85×) while the bar drew 0.80×:
    // it is on the geometric mean the bar draws and the verdict tests; the mean comes second.
    expect(cell.text()).toBe('B* 0.80×');
    expect(cells[3].text()).toBe('0.85×');
    expect(w.findAll('[data-test=compare-table] > thead th').map((th) => th.text()).slice(2, 4)).toEqual(['Geo-mean A ÷ B', 'Mean A ÷ B']);
    expect(cell.classes()).toContain('mixed');
    expect(cell.classes()).not.toContain('worse');
    expect(cell.attributes('title')).toBe(`B better beyond the run-to-run noise: p = <0.001 over 3 configuration(s) (Welch's t-test on log values, two-sided, α = 0.05); ${caveat}`);
    expect(w.findAll('[data-test=compare-table] > tbody > tr')[1].findAll('td')[2].classes()).toContain('better');
    expect(w.get('[data-test=verdict-caveats]').text()).toBe(`* Wall-clock throughput: ${caveat}.`);
  });

  it('marks a metric compared over two definitions of it, with no verdict or win rate, in the table and the groups (rev13-upgrade #7)', async () => {
    const change = 'counts multi-turn reload and RAG chunk reads too';
    const config = {
      key: 'k', scenarioId: 's', scenarioIds: ['s'], description: 'k', placeA: 'lab1', placeB: 'lab2', cpuMemGb: 0, model: 'm', numUsers: 1, nA: 3, nB: 3, medianA: 100, medianB: 300, ratio: 1 / 3, cvA: 0.01, cvB: 0.01,
      winner: null, logRatio: Math.log(1 / 3), standardError: 0.01, df: 4, pValue: 0.0001, withinNoise: false, flaggedA: 0, flaggedB: 0, excludedA: 0, excludedB: 0, measuredBy: ['0.2.0', '0.3.0'], mixedDefinitions: true,
    };
    const mixed = [{ since: '0.3.0', change }];
    const groupRow = { key: 'decode_bytes_read', label: 'Decode bytes read', compared: 1, tested: 1, noiseUnknown: 0, geoMeanRatio: 1 / 3, verdict: null, leader: null, pValue: null, winRateA: null, winsA: 0, winsB: 0, mixedDefinitions: mixed };
    installFakeApi({
      'history.facets': () => facets(4),
      'report.compare': () => ({
        ...systemComparison({ trialsA: 3, trialsB: 3, matched: 1, unmatchedA: 0 }),
        metrics: [
          {
            metric: METRIC_BY_KEY.decode_bytes_read, configs: [config], compared: 1, meanRatio: 1 / 3, geoMeanRatio: 1 / 3, medianRatio: 1 / 3, winRateA: null, winsA: 0, winsB: 0, verdict: null, leader: null,
            tested: 1, standardError: null, df: null, pValue: null, verdictCaveat: null, withinNoise: 0, noiseUnknown: 0, medianCvA: 0.01, medianCvB: 0.01, flaggedConfigs: 0, mixedDefinitions: mixed,
          },
        ],
        byCpuMem: [{ group: 'CPU 0 GiB', configs: 1, metrics: [groupRow], bestDifferentiator: null }],
      }),
    });
    const w = await comparedView();
    const cells = w.findAll('[data-test=compare-table] > tbody > tr')[0].findAll('td');
    expect(cells[0].get('[data-test=mixed-definitions]').text()).toBe('mixed definitions †');
    expect(cells[0].get('[data-test=mixed-definitions]').attributes('title')).toContain('measured on both sides of kvbench 0.3.0, which changed its definition');
    expect(cells[2].text()).toBe('0.33×');
    expect(cells[2].classes()).not.toContain('worse');
    expect(cells[4].text()).toBe('—');
    expect(w.get('[data-test=mixed-definitions-legend]').text()).toContain('it names no better side, p-value or win rate, and is no best differentiator');
    expect(w.get('[data-test=compare-groups] tbody tr').findAll('td')[2].text()).toBe('mixed definitions † 0.33× (1 compared)');
    await w.findAll('[data-test=compare-table] button').find((b) => b.text().length > 0)!.trigger('click');
    expect(w.get('[data-test=compare-table]').text()).toContain('k (mixed definitions †)');
  });
});

// Newest first, as the store lists them: c2c twice as fast as pcie.
const c2c = endpointRow(3, 'c2c', 1);
const pcie = endpointRow(2, 'pcie', 2);
const pcieOld = endpointRow(1, 'pcie', 2, { status: 'partial', statusReason: '3 failed', metrics: { ...endpointRow(1, 'pcie', 2).metrics, requests_ok: 23, requests_failed: 3 } });
const rows = [c2c, pcie, pcieOld];

describe('the real-engine view', () => {
  it('says that runs are recorded from the CLI, with the command and this app\'s database', async () => {
    installFakeApi({ 'app.info': () => appInfo(), 'endpoint.list': () => ({ labels: [], runs: [] }) });
    await useAppStore().load();
    const w = mountIt(EndpointView);
    await flush();
    const empty = w.get('[data-test=endpoint-empty]').text();
    expect(empty).toContain('No endpoint runs yet');
    expect(empty).toContain('recorded from the command line, not from the app');
    expect(empty).toContain('kvbench endpoint run --url http://localhost:8000 --model MODEL --workload workload.json --system-label pcie --db /data/kvbench.db');
    expect(w.find('[data-test=endpoint-runs]').exists()).toBe(false);
  });

  it('lists the runs grouped by system label, with units, and follows the unit settings', async () => {
    installFakeApi({ 'endpoint.list': () => endpointList(rows) });
    const w = mountIt(EndpointView);
    await flush();
    const groups = w.findAll('[data-test=endpoint-runs] tbody');
    expect(groups.map((g) => g.attributes('data-label'))).toEqual(['c2c', 'pcie']);
    expect(groups[1].get('tr.group').text()).toContain('pcie · 2 run(s), 1 complete');
    const row = w.get('[data-run="3"]').text();
    expect(row).toContain('meta-llama/Llama-3.1-8B-Instruct');
    expect(row).toContain('http://c2c-host:8000/v1');
    expect(row).toContain('26 ok');
    expect(row).toContain('12.5 req/s');
    expect(row).toContain('740 tok/s');
    expect(row).toMatch(/45\.3 ms\s*80\.0 ms\s*95\.0 ms\s*420 ms/); // TTFT P50, P95, P99, E2E P95
    expect(row).toContain('37.5 %'); // 3,000 of 8,000 prompt tokens cached
    expect(w.get('[data-run="3"] td[title]').attributes('title')).toContain('cached ÷ prompt tokens');
    expect(w.get('[data-run="1"]').text()).toContain('3 failed');
    expect(w.get('[data-run="1"]').text()).toContain('partial');
    // The rates' window since 0.5.0: the batches' own times, not first send → last finish.
    expect(w.get('[data-test=endpoint-list-notes]').text()).toContain('Throughput: successful requests (and their output tokens) ÷ duration_s, the time the server had the batches');

    useAppStore().settings = { ...SETTINGS, latencyUnit: 'us' };
    await flush();
    expect(w.get('[data-run="3"]').text()).toContain('45,250 µs');
  });

  it('compares two labels: A, B and A ÷ B per metric with the better side, the warnings, and an export of exactly those runs', async () => {
    const fake = installFakeApi({
      'endpoint.list': () => endpointList(rows),
      'endpoint.compare': (r) => {
        const c = endpointComparison(r.labelA, rows.filter((x) => x.systemLabel === r.labelA && x.status === 'complete'), r.labelB, rows.filter((x) => x.systemLabel === r.labelB && x.status === 'complete'));
        return { ...c, warnings: ['the runs served different models (a, b)'] };
      },
      'endpoint.export': (r) => ({ fileName: 'kvbench-endpoint-pcie-vs-c2c-20261101-100000.xlsx', mimeType: 'application/octet-stream', dataBase64: 'UEs=', bytes: 2, runCount: r.runIds?.length ?? 0 }),
    });
    const w = mountIt(EndpointView);
    await flush();
    // The two most recently measured labels are chosen; pick pcie as A from its group.
    expect((w.get('select[name=labelA]').element as HTMLSelectElement).value).toBe('c2c');
    await w.get('button[aria-label="Compare pcie as A"]').trigger('click');
    expect((w.get('select[name=labelA]').element as HTMLSelectElement).value).toBe('pcie');
    expect((w.get('select[name=labelB]').element as HTMLSelectElement).value).toBe('c2c');
    await w.get('input[name=latest]').setValue(true);
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('endpoint.compare')).toEqual([{ labelA: 'pcie', labelB: 'c2c', latest: true, includePartial: false }]);

    const cmp = w.get('[data-test=endpoint-comparison]').text();
    expect(cmp).toContain('run(s) 2');
    expect(cmp).toContain('the runs served different models');
    const cells = (key: string) => w.get(`[data-metric="${key}"]`).findAll('td').map((td) => td.text());
    // One run a side: c2c has the better values, but no noise estimate says they are beyond noise.
    expect(cells('ttft_p50_ms')).toEqual(['TTFT P50 (lower is better)', '90.5 ms', '45.3 ms', '2.00×', 'c2c?']);
    expect(cells('requests_per_s')).toEqual(['Requests/s (higher is better)', '6.25 req/s', '12.5 req/s', '0.50×', 'c2c?']);
    expect(cells('requests_total')).toEqual(['Requests (no direction)', '26', '26', '1.00×', '']);
    expect(cells('server.reload_bytes')[1]).toBe('2.15 GB'); // decimal units by default
    expect(w.get('[data-metric="ttft_p50_ms"] td:nth-child(4)').classes()).not.toContain('worse');
    expect(w.get('[data-test=cmp-note]').text()).toMatch(/^one run of pcie and one of c2c: no noise estimate is possible/);
    expect(w.findAll('[data-test=endpoint-compare-table] tbody').map((g) => g.attributes('data-group'))).toEqual(['throughput', 'latency', 'requests', 'server']);
    expect(w.find('canvas[aria-label="pcie divided by c2c per metric"]').exists()).toBe(true);

    useAppStore().settings = { ...SETTINGS, byteUnits: 'binary' };
    await flush();
    expect(cells('server.reload_bytes')[1]).toBe('2.00 GiB');

    await w.get('[data-test=endpoint-comparison] [data-export=xlsx]').trigger('click');
    await flush();
    expect(fake.callsOf('endpoint.export')).toEqual([{ runIds: [2, 3], format: 'xlsx' }]);
    expect(w.get('[data-test=endpoint-comparison] [data-test=export-done]').text()).toContain('2 endpoint run(s)');
  });

  it('warnings and notes quoting a stored label, and a run\'s model and notes, are shown escaped as the CLI prints them', async () => {
    const hostile = 'abc\u202efdp';
    const odd = rows.map((r) => (r.id === 2 ? { ...r, config: { ...r.config, model: `m\u202eodel`, notes: `note\u2066x\u2069` } } : r));
    installFakeApi({
      'endpoint.list': () => endpointList(odd),
      'endpoint.compare': (r) => {
        const c = endpointComparison(r.labelA, odd.filter((x) => x.systemLabel === r.labelA && x.status === 'complete'), r.labelB, odd.filter((x) => x.systemLabel === r.labelB && x.status === 'complete'));
        return { ...c, warnings: [`run 2 (${hostile}): a warning`], notes: [`run 2 (${hostile}), values marked †: a note`] };
      },
    });
    const w = mountIt(EndpointView);
    await flush();
    expect(w.get('[data-run="2"]').text()).toContain('m\\u{202e}odel');
    expect(w.get('[data-run="2"]').text()).toContain('note\\u{2066}x\\u{2069}');
    await w.get('form').trigger('submit');
    await flush();
    const cmp = w.get('[data-test=endpoint-comparison]');
    expect(cmp.text()).toContain('run 2 (abc\\u{202e}fdp): a warning');
    expect(w.get('[data-test=cmp-note]').text()).toBe('run 2 (abc\\u{202e}fdp), values marked †: a note');
    expect(cmp.findAll('[data-test=escaped-char]').length).toBeGreaterThanOrEqual(2);
    expect(w.text()).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });

  it('with several runs a side: each side\'s spread, and a better side only beyond noise', async () => {
    const more = [endpointRow(5, 'c2c', 1.02), c2c, endpointRow(4, 'pcie', 2.04), pcie];
    installFakeApi({
      'endpoint.list': () => endpointList(more),
      'endpoint.compare': (r) => endpointComparison(r.labelA, more.filter((x) => x.systemLabel === r.labelA), r.labelB, more.filter((x) => x.systemLabel === r.labelB)),
    });
    const w = mountIt(EndpointView);
    await flush();
    await w.get('button[aria-label="Compare pcie as A"]').trigger('click');
    await w.get('form').trigger('submit');
    await flush();
    const cells = (key: string) => w.get(`[data-metric="${key}"]`).findAll('td').map((td) => td.text());
    // 2 % spread a side, twice as slow: pcie is worse beyond noise.
    expect(cells('ttft_p50_ms')).toEqual(['TTFT P50 (lower is better)', '91.4 ms (n=2, 90.5 ms–92.3 ms, CV 1.4 %)', '45.7 ms (n=2, 45.3 ms–46.2 ms, CV 1.4 %)', '2.00×', 'c2c']);
    expect(w.get('[data-metric="ttft_p50_ms"] td:nth-child(4)').classes()).toContain('worse');
    // Equal counts: within noise.
    expect(cells('requests_ok')[4]).toBe('within noise');
    expect(w.find('[data-test=cmp-note]').exists()).toBe(false);
  });

  it('shows a comparison without runs as the backend\'s NOT_FOUND message', async () => {
    installFakeApi({
      'endpoint.list': () => endpointList(rows),
      'endpoint.compare': () => ({ error: { code: 'NOT_FOUND', message: 'no complete runs for pcie; stored labels: c2c (1/1 complete), pcie (1/2 complete)' } }),
    });
    const w = mountIt(EndpointView);
    await flush();
    await w.get('[data-test=endpoint-compare]').trigger('click');
    await w.get('form').trigger('submit');
    await flush();
    const alert = w.get('[role=alert]').text();
    expect(alert).toContain('The comparison failed');
    expect(w.get('[role=alert]').attributes('data-error-code')).toBe('NOT_FOUND');
    expect(alert).toContain('no complete runs for pcie; stored labels: c2c (1/1 complete)');
    expect(w.find('[data-test=endpoint-compare-table]').exists()).toBe(false);
  });

  it('opens a run: configuration, aggregates, server metric deltas with units, failures by kind, its export', async () => {
    const fake = installFakeApi({
      'endpoint.list': () => endpointList(rows),
      'endpoint.get': (r) => endpointDetail(rows.find((x) => x.id === r.id)!, r.id === 1),
      'endpoint.export': (r) => ({ fileName: 'kvbench-endpoint-run-1.csv', mimeType: 'text/csv', dataBase64: 'YQ==', bytes: 1, runCount: r.runIds?.length ?? 0 }),
    });
    const w = mountIt(EndpointView);
    await flush();
    await w.get('button[aria-label="Open endpoint run 1"]').trigger('click');
    await flush();
    expect(fake.callsOf('endpoint.get')).toEqual([{ id: 1 }]);
    const dialog = document.querySelector('dialog.modal') as HTMLElement;
    const text = dialog.textContent ?? '';
    expect(text).toContain('Endpoint run 1: pcie');
    expect(text).toContain('http://pcie-host:8000/v1 (/completions)');
    expect(text).toContain('pcie notes');
    expect(text).toContain('21 ok');
    expect(text).toContain('12.5 req/s');
    const latency = dialog.querySelector('[data-test=endpoint-latency]')!.textContent!;
    expect(latency).toMatch(/Time to first token\s*26\s*45\.3 ms\s*90\.5 ms\s*136 ms/);
    const server = (key: string) => dialog.querySelector(`[data-server-metric="${key}"]`)!.textContent!;
    expect(server('reload_bytes')).toContain('Δ 2.15 GB');
    expect(server('prefix_cache_hits')).toContain('Δ 3,000 tokens');
    expect(server('kv_cache_usage')).toMatch(/10\.0 %\s*85\.0 %\s*gauge/);
    expect(server('prefix_cache_hit_rate')).toContain('37.5 %');
    expect(server('reload_bandwidth')).toContain('25.0 GB/s');
    const failures = dialog.querySelector('[data-test=endpoint-failures]')!;
    expect(failures.querySelector('[data-failure=http_error]')!.textContent).toMatch(/http error\s*4\s*b1_r0 \(HTTP 503\): HTTP 503: server overloaded/);
    expect(failures.querySelector('[data-failure=incomplete]')!.textContent).toContain('the stream ended without [DONE]');

    (dialog.querySelector('[data-export=csv]') as HTMLButtonElement).click();
    await flush();
    expect(fake.callsOf('endpoint.export')).toEqual([{ runIds: [1], format: 'csv' }]);
    // Nothing in this run is flagged: no marks, no notices.
    expect(dialog.querySelector('[data-test=endpoint-token-caveat]')).toBeNull();
    expect(dialog.querySelector('[data-test=endpoint-hit-rate]')!.textContent).not.toContain('*');
    expect(w.find('[data-test=endpoint-list-flagged]').exists()).toBe(false);
  });

  it('flags, in the list and the run, values from counters that may not be the run\'s share, and tokens counted as chunks', async () => {
    const since = "totals since the server started (no baseline before the run): the run's own share only on a server started just for it";
    // A trtllm-serve run: no usage counts, so its hit rate is the server's own counters', which had no baseline.
    const { cached_prompt_tokens_total: _c, server_prompt_tokens_total: _p, ...serverOnly } = endpointRow(4, 'trt').metrics;
    const trt = endpointRow(4, 'trt', 1, {
      metrics: { ...serverOnly, 'server.prefix_cache_hit_rate': 0.375 },
      metricCaveats: { 'server.prefix_cache_hits': since, 'server.prefix_cache_hit_rate': `computed from Prefix cache hits: ${since}` },
    });
    const detail = endpointDetail(trt);
    detail.run.serverMetrics.values = detail.run.serverMetrics.values.map((v) => (v.key === 'prefix_cache_hits' ? { ...v, sinceServerStart: true } : v));
    detail.run.aggregates.tokenCountSources = { usage: 20, chunks: 6, chunksBelowMaxTokens: 2 };
    installFakeApi({ 'endpoint.list': () => endpointList([trt, c2c]), 'endpoint.get': () => detail });
    const w = mountIt(EndpointView);
    await flush();
    const cell = w.get('[data-run="4"] td[data-flagged]');
    expect(cell.text()).toBe('37.5 % *');
    expect(cell.attributes('title')).toBe(`GPU prefix cache, Δhits ÷ Δqueries (server metrics) — may not be the run's own share: computed from Prefix cache hits: ${since}`);
    expect(w.find('[data-run="3"] td[data-flagged]').exists()).toBe(false);
    expect(w.get('[data-test=endpoint-list-flagged]').text()).toContain("* A cache hit rate from server counters that may not be the run's own share");

    await w.get('button[aria-label="Open endpoint run 4"]').trigger('click');
    await flush();
    const dialog = document.querySelector('dialog.modal') as HTMLElement;
    const tile = dialog.querySelector('[data-test=endpoint-hit-rate]')!.textContent!.replace(/\s+/g, ' ');
    expect(tile).toContain('37.5 % *');
    expect(tile).toContain("may not be the run's own share: computed from Prefix cache hits: totals since the server started");
    // The rate derived from the flagged counter says so, as the counter's own row does.
    const derived = dialog.querySelector('[data-server-metric="prefix_cache_hit_rate"]')!.textContent!;
    expect(derived).toContain('37.5 %');
    expect(derived).toContain(`(computed from Prefix cache hits: ${since})`);
    expect(dialog.querySelector('[data-server-metric="reload_bandwidth"]')!.textContent).not.toContain('computed from');
    expect(dialog.querySelector('[data-test=endpoint-token-caveat]')!.textContent).toContain(
      '* Output tokens: output tokens of 6 of 26 successful request(s) were counted as content chunks (the server sent no usage); 2 of them stopped at max_tokens',
    );
  });

  it('marks the rates of runs stored before kvbench 0.5.0: † recomputed from their stored requests (with what was stored), ‡ kept span-based (with why), in the list, the comparison and the run', async () => {
    const stored = { duration_s: 2.5, requests_per_s: 8.51, output_tokens_per_s: 68.07, context_tokens_per_s: 2178 };
    const why = "only 5 of its 6 requests are stored (the others lost, e.g. in a recovery): the batches' times cannot all be read";
    const old = endpointRow(6, 'old', 1, { kvbenchVersion: '0.4.0', legacyRates: { storedBy: '0.4.0', stored, recomputedBy: '0.7.0', notRecomputed: null } });
    // Four times slower: on its span-based rates (the pauses in them) kept reads the worse.
    const kept = endpointRow(7, 'kept', 4, { kvbenchVersion: '0.4.0', legacyRates: { storedBy: '0.4.0', stored, recomputedBy: null, notRecomputed: why } });
    const now = endpointRow(3, 'c2c', 1, { kvbenchVersion: '0.7.0' });
    const all = [kept, old, now];
    installFakeApi({
      'endpoint.list': () => endpointList(all),
      'endpoint.compare': (r) => endpointComparison(r.labelA, all.filter((x) => x.systemLabel === r.labelA), r.labelB, all.filter((x) => x.systemLabel === r.labelB)),
      'endpoint.get': (r) => endpointDetail(all.find((x) => x.id === r.id)!),
    });
    const w = mountIt(EndpointView);
    await flush();
    const rates = (id: number) => w.get(`[data-run="${id}"] td[data-legacy-rates]`);
    expect(rates(6).attributes('data-legacy-rates')).toBe('†');
    expect(rates(6).text()).toMatch(/^12\.5 req\/s †\s*740 tok\/s †$/);
    expect(rates(6).get('span[title]').attributes('title')).toBe('recomputed from stored requests; stored by kvbench 0.4.0 as 8.51 req/s (over the span, pauses included)');
    expect(rates(7).attributes('data-legacy-rates')).toBe('‡');
    expect(rates(7).get('span[title]').attributes('title')).toBe(
      `stored by kvbench 0.4.0 as 8.51 req/s (over the span, pauses included), kept as stored, not comparable with kvbench 0.5.0 and later: not recomputed, ${why}`,
    );
    expect(w.find('[data-run="3"] td[data-legacy-rates]').exists()).toBe(false);
    const notes = w.findAll('[data-test=endpoint-list-legacy] li').map((li) => li.text());
    expect(notes).toEqual([
      `‡ Run 7: stored by kvbench 0.4.0 over the span (pauses included): 2.50 s, 8.51 req/s, 68.07 output tok/s, 2,178 context tok/s, kept as stored — not recomputed: ${why}; not comparable with the rates of kvbench 0.5.0 and later.`,
      "† Run 6: stored by kvbench 0.4.0, which took duration and rates over the span (pauses included): 2.50 s, 8.51 req/s, 68.07 output tok/s, 2,178 context tok/s; recomputed from the stored requests over the batches' own times, as kvbench 0.5.0 and later take them.",
    ]);

    // Compared with a run of today's kvbench: like for like, no warning about the definitions; the values marked, what was stored in the notes.
    await w.get('button[aria-label="Compare old as A"]').trigger('click');
    await w.get('button[aria-label="Compare c2c as B"]').trigger('click');
    await w.get('form').trigger('submit');
    await flush();
    const cmp = w.get('[data-test=endpoint-comparison]').text();
    expect(cmp).not.toContain('both sides of kvbench');
    expect(w.findAll('[data-test=cmp-note]').map((n) => n.text())).toContain(`run 6 (old), values marked †: ${notes[1].slice('† Run 6: '.length, -1)}`);
    const mark = w.get('[data-metric="requests_per_s"] [data-test=cmp-recomputed]');
    expect(mark.text()).toBe('†');
    expect(mark.attributes('title')).toMatch(/^run\(s\) 6: †: recomputed from the stored requests of a run stored before kvbench 0\.5\.0/);
    expect(w.find('[data-metric="ttft_p50_ms"] [data-test=cmp-recomputed]').exists()).toBe(false);
    expect(w.get('[data-test=cmp-recomputed-legend]').text()).toContain('like for like with later runs');
    expect(w.find('[data-test=cmp-span-based-legend]').exists()).toBe(false);

    // Kept span-based: still a warning about the definitions, the values marked ‡.
    await w.get('button[aria-label="Compare kept as A"]').trigger('click');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[data-test=endpoint-comparison]').text()).toContain('the runs were measured on both sides of kvbench 0.5.0 (kvbench 0.4.0, 0.7.0)');
    expect(w.get('[data-metric="requests_per_s"] [data-test=cmp-span-based]').text()).toBe('‡');
    expect(w.get('[data-test=cmp-span-based-legend]').text()).toContain('not comparable with the rates of kvbench 0.5.0 and later');
    // No side is named on the rates (‡ beside today's): "no verdict ‡", why in its title, the legend and a warning.
    const cells = (key: string) => w.get(`[data-metric="${key}"]`).findAll('td').map((td) => td.text());
    expect(cells('requests_per_s')[4]).toBe('no verdict ‡');
    expect(cells('output_tokens_per_s')[4]).toBe('no verdict ‡');
    expect(w.get('[data-metric="requests_per_s"] [data-test=cmp-no-verdict]').attributes('title')).toMatch(/^no verdict ‡: no side is named better where some values are ‡ \(over the span/);
    expect(w.get('[data-test=cmp-no-verdict-legend]').text()).toContain("and others are taken over the batches' own times: they do not measure the same thing");
    expect(w.get('[data-test=endpoint-comparison]').text()).toContain('no verdict on Requests/s, Output tokens/s: the values of run(s) 7 (marked ‡)');
    // Latencies were never span-based: one run a side, c2c has the better value.
    expect(cells('ttft_p50_ms')[4]).toBe('c2c?');

    await w.get('button[aria-label="Open endpoint run 6"]').trigger('click');
    await flush();
    const dialog = document.querySelector('dialog.modal') as HTMLElement;
    expect(dialog.querySelector('[data-test=endpoint-legacy-rates]')!.textContent).toBe(`† Duration and rates: ${notes[1].slice('† Run 6: '.length)}`);
  });
});

describe('a database shown read-only (a newer kvbench\'s, or damaged)', () => {
  const newer = '/data/kvbench.db was written by kvbench 9.1.0 (schema 9); this build, kvbench 0.1.0, knows schema 7 and older: writing to it needs kvbench 9.1.0 or newer. Upgrade kvbench, or choose another database in Settings.';
  const damaged = { damage: 'SQLite quick_check: Tree 20 page 20 cell 0: invalid page number 99', unreadable: [], allPlaced: true, trialsRead: 2 };
  /** The API of a database with one interrupted suite, app.info answering `info()` at each call. */
  const installFor = (info: () => ReturnType<typeof appInfo>) =>
    installFakeApi({
      'app.info': info,
      'suite.status': () => ({ state: 'idle', suiteId: null, request: null, plan: null, startedAt: null, events: [] }),
      'history.list': () => ({ trials: [trial(1)], total: 1 }),
      'history.facets': () => facets(1),
      'suites.list': () => [suite('interrupted', 1)],
    });
  const shown = async (info: ReturnType<typeof appInfo>) => {
    installFor(() => info);
    const w = mountIt(App);
    await flush();
    useAppStore().navigate('history');
    await flush();
    return w;
  };

  it('a newer one: one lasting notice says why writes are off, and the disabled buttons point at it', async () => {
    // As the backend answers for such a file: the open's note is the notice's to say (databaseNotes empty).
    const w = await shown(appInfo({ databaseReadOnly: newer, databaseNotes: [] }));
    expect(w.find('[data-test=database-notes]').exists()).toBe(false);
    const importButton = w.get('[data-test=open-import]');
    expect(importButton.attributes('disabled')).toBeDefined();
    const notice = document.getElementById(importButton.attributes('aria-describedby')!);
    expect(notice?.textContent).toContain('The database was written by a newer kvbench and is shown read-only');
    expect(notice?.textContent).toContain('writing to it needs kvbench 9.1.0 or newer');
    expect(notice?.textContent).toContain('New suite, Resume, Import and Delete are off while it is open');
    expect(w.find('[data-test=database-damaged]').exists()).toBe(false);
    useAppStore().navigate('wizard');
  });

  it('a damaged one: the buttons point at the damaged notice, which says so in its own words', async () => {
    const w = await shown(appInfo({ databaseDamaged: damaged }));
    const importButton = w.get('[data-test=open-import]');
    const notice = document.getElementById(importButton.attributes('aria-describedby')!);
    expect(notice?.getAttribute('data-test')).toBe('database-damaged');
    expect(notice?.textContent).toContain('The database is damaged: what you see is a read-only copy');
    expect(notice?.textContent).not.toContain('newer kvbench');
    useAppStore().navigate('wizard');
  });

  it('a recovery under way (this tab\'s or another\'s): the damaged notice says how far it is instead of offering another, and takes app.info again when it ends', async () => {
    let info = appInfo({ databaseDamaged: damaged });
    const fake = installFor(() => info);
    const w = mountIt(App);
    await flush();
    expect(w.find('[data-test=recover-database]').exists()).toBe(true);
    expect(w.find('[data-test=recover-progress]').exists()).toBe(false);
    const recovery = { type: 'database.recoveryProgressed', databasePath: '/data/kvbench.db', outPath: '/data/new.db' } as const;
    fake.emit({ ...recovery, message: 'copying trials: 4,000 rows of about 10,000', ended: false });
    await flush();
    const progress = w.get('[data-test=recover-progress]');
    expect(progress.attributes('role')).toBe('status');
    expect(progress.text()).toContain('Saving what could be read as a new database, /data/new.db: copying trials: 4,000 rows of about 10,000…');
    expect(w.find('[data-test=recover-database]').exists()).toBe(false);
    // Over (switched): the notice goes with the damaged database.
    const asked = fake.callsOf('app.info').length;
    info = appInfo({ databasePath: '/data/new.db' });
    fake.emit({ ...recovery, message: 'done', ended: true });
    await flush();
    expect(fake.callsOf('app.info').length).toBe(asked + 1);
    expect(w.find('[data-test=database-damaged]').exists()).toBe(false);
    useAppStore().navigate('wizard');
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
    // Only what changed: a database shown but not changed (from --db, say) is not written to the file.
    expect(fake.callsOf('settings.update').at(-1)).toEqual({ byteUnits: 'binary' });
    expect(w.text()).toContain('Saved.');
    await w.get('input[name=databasePath]').setValue('/etc/passwd');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[role=alert]').text()).toContain('/etc/passwd is not a SQLite database');
  });

  it("does not show an earlier save's error while a database switch is under way", async () => {
    // The earlier save failed (the settings file could not be written); the switch after it waits on the backend.
    let openDatabase: (() => void) | null = null;
    installFakeApi({
      'app.info': () => appInfo(),
      'settings.update': (r) =>
        r.databasePath === undefined
          ? { error: { code: 'VALIDATION', message: 'the settings file /data/settings.json cannot be written: no room' } }
          : new Promise((resolve) => (openDatabase = () => resolve({ ...SETTINGS, ...r }))),
    });
    await useAppStore().load();
    const w = mountIt(SettingsView);
    await flush();
    await w.get('input[name=byteUnits][value=binary]').setValue(true);
    await w.get('form').trigger('submit');
    await flush();
    expect(w.get('[role=alert]').text()).toContain('The settings were not saved');
    await w.get('input[name=databasePath]').setValue('/data/other.db');
    await w.get('form').trigger('submit');
    await flush();
    expect(w.text()).toContain('Opening the database …');
    // Not the earlier error, and not as if this switch had failed ("The database was not switched … Still using").
    expect(w.findAll('[role=alert]')).toHaveLength(0);
    expect(w.text()).not.toContain('cannot be written');
    openDatabase!();
    await flush();
    expect(w.text()).toContain('Saved.');
    expect(w.findAll('[role=alert]')).toHaveLength(0);
  });

  it('asks before switching to a path that holds no database, and creates one only when told to', async () => {
    const created = '/data/fresh.db';
    const fake = installFakeApi({
      'app.info': () => appInfo(),
      'settings.update': (r) =>
        r.databasePath === created && !r.createDatabase
          ? { error: { code: 'NOT_FOUND', message: `no database exists at ${created}: switching to it creates a new, empty one` } }
          : (({ createDatabase: _confirmed, ...chosen }) => ({ ...SETTINGS, ...chosen }))(r),
    });
    await useAppStore().load();
    const w = mountIt(SettingsView);
    await flush();
    await w.get('input[name=databasePath]').setValue(created);
    await w.get('form').trigger('submit');
    await flush();
    const dialog = () => document.querySelector('dialog[open]');
    expect(dialog()?.textContent).toContain(`No database exists at ${created}. Create a new, empty database there?`);
    expect(w.text()).not.toContain('Saved.');
    // Keep: nothing is created, the path stays in the field to be corrected.
    (dialog()!.querySelector('.modal-foot button') as HTMLButtonElement).click();
    await flush();
    expect(dialog()).toBeNull();
    expect(fake.callsOf('settings.update')).toHaveLength(1);
    expect((w.get('input[name=databasePath]').element as HTMLInputElement).value).toBe(created);
    await w.get('form').trigger('submit');
    await flush();
    (document.querySelector('[data-test=confirm]') as HTMLButtonElement).click();
    await flush();
    expect(fake.callsOf('settings.update').at(-1)).toEqual({ databasePath: created, createDatabase: true });
    expect(w.text()).toContain('Saved.');
  });

  it('says a refused path under its own field, and marks the field', async () => {
    const refusals: Record<string, string> = {
      'relative.db': 'the database must be an absolute path (starting with /): relative.db would be taken relative to the folder kvbench was started in',
      '/etc': 'the default cache directory cannot be a system directory: /etc',
    };
    installFakeApi({
      'app.info': () => appInfo(),
      'settings.update': (r) => {
        const refused = refusals[r.databasePath ?? ''] ?? refusals[r.defaultCacheDir ?? ''];
        return refused ? { error: { code: 'VALIDATION', message: refused } } : { ...SETTINGS, ...r };
      },
    });
    await useAppStore().load();
    const w = mountIt(SettingsView);
    await flush();
    const problemOf = (name: string): string | null => {
      const input = w.get(`input[name=${name}]`);
      if (input.attributes('aria-invalid') !== 'true') return null;
      return document.getElementById(input.attributes('aria-describedby') ?? '')?.textContent ?? '';
    };
    await w.get('input[name=defaultCacheDir]').setValue('/etc');
    await w.get('form').trigger('submit');
    await flush();
    expect(problemOf('defaultCacheDir')).toContain(refusals['/etc']);
    expect(problemOf('databasePath')).toBeNull();
    // Under the field: in the field's own label, before the next field.
    expect(w.get('input[name=defaultCacheDir]').element.closest('label')!.textContent).toContain(refusals['/etc']);

    await w.get('input[name=defaultCacheDir]').setValue('');
    await w.get('input[name=databasePath]').setValue('relative.db');
    await w.get('form').trigger('submit');
    await flush();
    expect(problemOf('databasePath')).toContain(refusals['relative.db']);
    expect(problemOf('databasePath')).toContain(`Still using ${SETTINGS.databasePath}: nothing was changed.`);
    expect(problemOf('defaultCacheDir')).toBeNull();
  });

  it('keeps unsaved changes when the page is left and opened again, and says they are not saved', async () => {
    const fake = installFakeApi({ 'app.info': () => appInfo(), 'settings.update': (r) => ({ ...SETTINGS, ...r }) });
    await useAppStore().load();
    let w = mountIt(SettingsView);
    await flush();
    expect(w.find('[data-test=settings-unsaved]').exists()).toBe(false);
    await w.get('input[name=byteUnits][value=binary]').setValue(true);
    await flush();
    expect(w.get('[data-test=settings-unsaved]').text()).toContain('Not saved yet');
    w.unmount();
    w = mountIt(SettingsView);
    await flush();
    expect((w.get('input[name=byteUnits][value=binary]').element as HTMLInputElement).checked).toBe(true);
    expect(w.get('[data-test=settings-unsaved]').text()).toContain('Not saved yet');
    // Discarded: the saved settings again.
    await w.get('[data-test=settings-discard]').trigger('click');
    await flush();
    expect((w.get('input[name=byteUnits][value=decimal]').element as HTMLInputElement).checked).toBe(true);
    expect(w.find('[data-test=settings-unsaved]').exists()).toBe(false);
    // Saved: nothing unsaved is left.
    await w.get('input[name=latencyUnit][value=us]').setValue(true);
    await w.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('settings.update').at(-1)).toEqual({ latencyUnit: 'us' });
    expect(w.find('[data-test=settings-unsaved]').exists()).toBe(false);
  });

  it('lists the settings the file holds wrongly, and with no database open a save names the one to open', async () => {
    const wrongUnits = 'the settings file /data/settings.json has an invalid byteUnits, "Binary" (…): the default ("decimal") applies';
    const wrongDb = 'the settings file /data/settings.json has an invalid databasePath, 42 (…): kvbench opens no database in its place';
    const fake = installFakeApi({
      'app.info': () => appInfo({ settingsProblems: [wrongDb, wrongUnits], databaseError: { code: 'VALIDATION', message: wrongDb } }),
      'suite.status': () => ({ state: 'idle', suiteId: null, request: null, plan: null, startedAt: null, events: [] }),
      'hardware.detect': () => ({ error: { code: 'INTERNAL', message: 'no' } }),
      'settings.update': (r) => ({ ...SETTINGS, ...r }),
    });
    const w = mountIt(App);
    await flush(10);
    // Away from Settings: the database's notice, and one line for the other setting (not the database's twice).
    expect(w.get('[data-test=settings-problems-hint]').text()).toContain('The settings file has a setting kvbench could not use.');
    expect(w.text()).toContain(wrongDb);
    const s = mountIt(SettingsView);
    await flush();
    expect(s.findAll('[data-test=settings-problems] li').map((li) => li.text())).toEqual([wrongDb, wrongUnits]);
    await s.get('input[name=latencyUnit][value=us]').setValue(true);
    await s.get('form').trigger('submit');
    await flush();
    expect(fake.callsOf('settings.update').at(-1)).toEqual({ latencyUnit: 'us', databasePath: '/data/kvbench.db' });
  });

  describe('a default cache directory saved that Settings would refuse now (an older kvbench saved any)', () => {
    const saved = 'relative/cache';
    const refused = 'the default cache directory must be an absolute path (starting with /): relative/cache would be taken relative to the folder kvbench was started in';
    const refusedInfo = () => appInfo({ settings: { ...SETTINGS, defaultCacheDir: saved }, suggestedCacheDir: saved, defaultCacheDirProblem: refused });
    const problemOf = (w: VueWrapper, selector: string): string | null => {
      const input = w.get(selector);
      if (input.attributes('aria-invalid') !== 'true') return null;
      return (input.attributes('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? '').join(' ');
    };

    it('marks the Settings field invalid with why, as soon as the page opens, without changing the value', async () => {
      const fake = installFakeApi({ 'app.info': refusedInfo, 'settings.update': (r) => ({ ...SETTINGS, defaultCacheDir: saved, ...r }) });
      await useAppStore().load();
      const w = mountIt(SettingsView);
      await flush();
      // Settings opened: the saved settings are read (and checked) again.
      expect(fake.callsOf('app.info')).toHaveLength(2);
      expect((w.get('input[name=defaultCacheDir]').element as HTMLInputElement).value).toBe(saved);
      expect(problemOf(w, 'input[name=defaultCacheDir]')).toContain(refused);
      expect(problemOf(w, 'input[name=defaultCacheDir]')).toContain('Saved');
      expect(w.find('[data-test=settings-unsaved]').exists()).toBe(false);
      // A change of units saves the units only: the saved default is not changed behind the user's back.
      await w.get('input[name=latencyUnit][value=us]').setValue(true);
      await w.get('form').trigger('submit');
      await flush();
      expect(fake.callsOf('settings.update').at(-1)).toEqual({ latencyUnit: 'us' });
      // Typing another directory: the field is the user's draft, not the refused value.
      await w.get('input[name=defaultCacheDir]').setValue('/mnt/nvme/kv');
      expect(problemOf(w, 'input[name=defaultCacheDir]')).toBeNull();
    });

    it("marks the wizard's cache directory field with why and where to change it, and detects nothing with it", async () => {
      const fake = installFakeApi({
        'app.info': refusedInfo,
        'suite.status': () => ({ state: 'idle', suiteId: null, request: null, plan: null, startedAt: null, events: [] }),
        'hardware.detect': () => ({ error: { code: 'VALIDATION', message: 'the cache directory must be an absolute path (starting with /): relative/cache would be taken relative to the folder kvbench was started in' } }),
      });
      const w = mountIt(App);
      await flush(10);
      expect((w.get('input[name=cacheDir]').element as HTMLInputElement).value).toBe(saved);
      const said = problemOf(w, 'input[name=cacheDir]');
      expect(said).toContain(refused);
      expect(said).toContain('Settings');
      // The field already says why: no detection of a directory the backend refuses, no second message.
      expect(fake.callsOf('hardware.detect')).toEqual([]);
      await w.get('[data-test=default-cache-dir-settings]').trigger('click');
      await flush();
      expect(useAppStore().route.name).toBe('settings');
      useAppStore().navigate('wizard'); // the address is the page's: the next test's app opens where this one left it
    });
  });

  it('asks before the page is left (reload, closed tab) only while Settings has changes not saved', async () => {
    installFakeApi({
      'app.info': () => appInfo(),
      'suite.status': () => ({ state: 'idle', suiteId: null, request: null, plan: null, startedAt: null, events: [] }),
      'hardware.detect': () => ({ error: { code: 'INTERNAL', message: 'no' } }),
      'settings.update': (r) => ({ ...SETTINGS, ...r }),
    });
    mountIt(App);
    await flush(10);
    const leave = (): boolean => {
      const e = new Event('beforeunload', { cancelable: true });
      window.dispatchEvent(e);
      return e.defaultPrevented;
    };
    expect(leave()).toBe(false);
    const app = useAppStore();
    app.navigate('settings');
    await flush();
    const s = document.querySelector('input[name=byteUnits][value=binary]') as HTMLInputElement;
    s.click();
    await flush();
    expect(app.settingsDraft).toEqual({ byteUnits: 'binary' });
    expect(leave()).toBe(true);
    // Still after going to another screen: the draft is kept there.
    app.navigate('history');
    await flush();
    expect(leave()).toBe(true);
    app.settingsDraft = {};
    expect(leave()).toBe(false);
    app.navigate('wizard'); // the address is the page's: the next test's app opens where this one left it
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
    expect(nav.map((b) => b.text())).toEqual(['New suite', 'History', 'Compare', 'Real engine', 'Settings']);
    expect(nav[0].attributes('aria-current')).toBe('page');
    expect(w.text()).toContain('v0.1.0 · served');
  });
});
