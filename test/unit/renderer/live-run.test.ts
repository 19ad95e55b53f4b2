// The whole page while a suite runs: the sidebar's summary and the run screen read one state (the
// store's time left), and both say when the event stream is down, against a fake backend.
import { mount, type VueWrapper } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../../../src-renderer/App.vue';
import type { SuiteTrialRef } from '../../../src-shared/domain/scenarios.ts';
import type { ResponseOf } from '../../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { appInfo, plan } from './fixtures.ts';
import { flush, installFakeApi, type FakeHandlers } from './fake-api.ts';

const wrappers: VueWrapper[] = [];
beforeEach(() => {
  setActivePinia(createPinia());
  document.body.innerHTML = '';
  window.history.replaceState(null, '', '/');
});
afterEach(() => {
  for (const w of wrappers.splice(0)) w.unmount();
  vi.useRealTimers();
});

const ref0: SuiteTrialRef = { suiteId: 7, trialId: 11, scenarioId: 'cpu-only', label: 'CPU only', trialIndex: 0, trialsPerScenario: 2, ordinal: 1, total: 4 };

/**
 * Suite 7 of plan() running its first trial, which started `trialRanS` ago; the engine's measured
 * window has run only `windowS` of it (start-up and warm-up come first).
 */
function runningStatus(trialRanS: number, windowS: number): ResponseOf<'suite.status'> {
  const now = Date.now();
  const events: AppEvent[] = [
    { type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 },
    { type: 'suite.trialStarted', enginePid: 123, startedAtMs: now - trialRanS * 1000, ...ref0 },
    {
      type: 'suite.trialProgressed',
      ...ref0,
      progress: {
        phase: 'running', elapsedNs: windowS * 1e9, durationNs: 3e9, requestsCompleted: 3, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokens: 0, storageReadBytes: 0, storageWriteBytes: 0, generatedTokensPerSec: 300,
        storageReadBytesPerSec: 1e9, storageWriteBytesPerSec: 1e8, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: 2e7, storageReadP95Ns: 4e6, eventLoopLagP99Ns: null,
      },
    },
  ];
  return { state: 'running', suiteId: 7, request: null, plan: plan(), startedAt: new Date(now - 60_000).toISOString(), events };
}

async function mountApp(handlers: FakeHandlers) {
  const fake = installFakeApi({ 'app.info': () => appInfo(), ...handlers });
  const w = mount(App as never, { attachTo: document.body });
  wrappers.push(w);
  await flush(10);
  return { fake, w };
}

describe('the page while a suite runs', () => {
  it('states one time left: the sidebar says what the run card says', async () => {
    // 4 s into a trial whose window has run 1 s: the card counted 4 s, the sidebar 1 s.
    const { w } = await mountApp({ 'suite.status': () => runningStatus(4, 1) });
    const card = w.get('[data-test=eta]').text();
    const sidebar = w.get('.nav-run').text();
    expect(card).toMatch(/^≈ \d+ s$/);
    expect(sidebar).toContain(`Suite 7: 0/4 trials, ${card.slice(2)} left`);
  });

  it('says on the run screen when the event stream is down: the numbers frozen as of then, no countdown, no cancel; a refused token is said, not retried', async () => {
    // The clock's ticks and the time of day are the test's: nothing here waits for real time.
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const { fake, w } = await mountApp({ 'suite.status': () => runningStatus(4, 1), 'suite.cancel': () => ({ cancelled: true }) });
    const eta = (): string => w.get('[data-test=eta]').text();
    const cancel = () => w.get('[data-test=cancel-suite]');
    expect(w.find('[data-test=connection-lost]').exists()).toBe(false);
    expect(cancel().attributes('disabled')).toBeUndefined();
    const before = eta();
    vi.advanceTimersByTime(3000);
    await flush();
    expect(eta()).not.toBe(before); // live: it counts down

    fake.setConnection('disconnected');
    await flush();
    const banner = w.get('[data-test=connection-lost]');
    expect(banner.attributes('role')).toBe('alert');
    expect(banner.text()).toMatch(/^!Connection to kvbench serve lost at \d\d:\d\d:\d\d: the numbers below are frozen/);
    expect(cancel().attributes('disabled')).toBeDefined();
    expect(w.get('.nav-run').text()).toContain('Suite 7: 0/4 trials, connection lost');
    const frozen = eta();
    const elapsed = w.findAll('.stat .value')[1].text();
    vi.advanceTimersByTime(30_000);
    await flush();
    expect(eta()).toBe(frozen);
    expect(w.findAll('.stat .value')[1].text()).toBe(elapsed);
    await cancel().trigger('click');
    await flush();
    expect(fake.callsOf('suite.cancel')).toEqual([]);

    // Back: the state is read again, and the page is live once more.
    const statusCalls = fake.callsOf('suite.status').length;
    fake.setConnection('connected');
    await flush();
    expect(fake.callsOf('suite.status')).toHaveLength(statusCalls + 1);
    expect(w.find('[data-test=connection-lost]').exists()).toBe(false);
    expect(cancel().attributes('disabled')).toBeUndefined();
    expect(w.get('.nav-run').text()).toMatch(/\d+ s left/);

    // Restarted with a new token: no run screen that reads "running", the token's problem instead.
    fake.setConnection('disconnected');
    fake.setConnection('unauthorized');
    await flush();
    expect(w.find('[data-test=eta]').exists()).toBe(false);
    const alert = w.get('main [role=alert]').text();
    expect(alert).toContain('This page needs its access token');
    expect(alert).toContain('it was restarted with a new one. Open the URL it printed');
    expect(w.get('.conn').text()).toBe('Token refused');
  });
});

describe('a trial spilling past the tiers its scenario names', () => {
  const progress = (phase: 'warming-up' | 'running' | 'finishing', over: Partial<{ storageReadBytes: number; storageWriteBytes: number }> = {}) => ({
    phase, elapsedNs: 2e9, durationNs: 3e9, requestsCompleted: 3, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokens: 600, storageReadBytes: 0, storageWriteBytes: 0,
    generatedTokensPerSec: 300, storageReadBytesPerSec: 0, storageWriteBytesPerSec: 0, cpuReadBytesPerSec: 1e9, cpuWriteBytesPerSec: 1e9, e2eLatencyP95Ns: 2e7, storageReadP95Ns: null, eventLoopLagP99Ns: null,
    ...over,
  });
  const storageOnly: SuiteTrialRef = { ...ref0, trialId: 13, scenarioId: 'storage-only', label: 'Storage only', ordinal: 3 };

  it('marks CPU only reaching the drive on the Run step while it happens, says what it means, and marks its row; the warm-up alone marks no row', async () => {
    const { fake, w } = await mountApp({ 'suite.status': () => runningStatus(4, 1) });
    const mark = () => w.find('[data-test=spill-mark]');
    expect(mark().exists()).toBe(false); // its window has moved nothing to the drive

    // The warm-up spills: said, as not measured yet; the row is not marked (the flag counts the window only).
    fake.emit({ type: 'suite.trialProgressed', ...ref0, progress: progress('warming-up', { storageWriteBytes: 3e8 }) });
    await flush();
    expect(mark().text()).toContain('Spilling to the drive in the warm-up');
    expect(mark().text()).toContain('The warm-up is not measured; if the measured window spills too, the trial is stored flagged “spilled”');
    expect(w.find('[data-test=row-spilled]').exists()).toBe(false);

    // The measured window: the drive's bytes, the CPU tier's size from the plan (1 GiB), what it means.
    fake.emit({ type: 'suite.trialProgressed', ...ref0, progress: progress('running', { storageWriteBytes: 1.5e9, storageReadBytes: 5e8 }) });
    await flush();
    expect(mark().get('[data-test=spill-head]').text()).toBe('Spilling to the drive: “CPU only” is measuring the drive too');
    expect(mark().text()).toContain('Its CPU tier (1.07 GB) is full, so the cache moves entries down to the drive: 1.50 GB written to the drive and 500 MB read back so far in the measured window.');
    expect(mark().text()).toContain("This trial's throughput and latencies include the drive, not only the CPU tier; it will be stored flagged “spilled”");
    expect(w.findAll('[data-test=row-spilled]')).toHaveLength(1);
    expect(w.get('[data-test=trial-table] tbody tr').text()).toContain('spilled');

    // A scenario that names the storage tier never spills, whatever it moves there.
    fake.emit({ type: 'suite.trialFinished', ...ref0, status: 'complete', reason: null, wallMs: 5000, wallClockThroughputTokPerS: 300, storageReadBytesPerS: 1e8 });
    fake.emit({ type: 'suite.trialStarted', enginePid: 124, ...storageOnly });
    fake.emit({ type: 'suite.trialProgressed', ...storageOnly, progress: progress('running', { storageWriteBytes: 9e9, storageReadBytes: 9e9 }) });
    await flush();
    expect(mark().exists()).toBe(false);
    expect(w.findAll('[data-test=row-spilled]')).toHaveLength(1); // CPU only's row keeps its mark
  });
});
