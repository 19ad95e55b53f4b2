// The whole page while a suite runs: the sidebar's summary and the run screen read one state (the
// store's time left), against a fake backend.
import { mount, type VueWrapper } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
        phase: 'running', elapsedNs: windowS * 1e9, durationNs: 3e9, requestsCompleted: 3, maxRequests: null, activeUsers: 4, queueDepth: 0, generatedTokensPerSec: 300,
        storageReadBytesPerSec: 1e9, storageWriteBytesPerSec: 1e8, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: 2e7, storageReadP95Ns: 4e6, eventLoopLagP99Ns: null,
      },
    },
  ];
  return { state: 'running', suiteId: 7, request: null, plan: plan(), startedAt: new Date(now - 60_000).toISOString(), events: events as unknown as Record<string, unknown>[] };
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
});
