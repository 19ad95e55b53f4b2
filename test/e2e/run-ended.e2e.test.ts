// End to end: the Run step once its suite has ended. The last trial's card (its tiles: throughput,
// storage read and write, latency, users) stays, marked as ended, with the figures the trial stored,
// until the user leaves the step; a cancelled suite and a killed engine say so rather than look
// like a success. `kvbench serve` with the real engine, the built renderer in Debian's Chromium.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, invoke as invokeServed, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';

describe.skipIf(!HAS_CHROMIUM)('the Run step after its suite ended', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    opened = await openServedPage();
    ({ served, page, problems } = opened);
  });

  afterAll(async () => {
    await opened?.close();
  });

  const invoke = (channel: string, body: unknown) => invokeServed(served, channel, body);
  /**
   * A storage-only smoke suite, started as another tab (or Resume) would: the page follows it. With
   * `maxRequests`, each trial ends after that many completed requests, `durationS` only its cap.
   */
  const startSuite = async (trials: number, durationS: number, maxRequests?: number): Promise<void> => {
    const r = await invoke('suite.start', { cacheDir: path.join(served.dir, 'cache'), profile: 'smoke', trials, durationS, maxRequests, scenarios: ['storage-only'], probe: false, label: 'ended' });
    expect(r).toMatchObject({ ok: true });
  };
  /** Waits until the page shows a throughput above zero: requests have completed in the measured window. */
  const measuring = () => page.waitForFunction(() => /[1-9]/.test(document.querySelector('[data-test=live-tput]')?.textContent ?? ''), null, { timeout: 120_000 });
  const cell = async (col: number): Promise<string> => (await page.locator('[data-test=trial-table] tbody tr').last().locator(`td:nth-child(${col})`).innerText()).trim();

  it("keeps the last trial's card after the suite finished, with the figures the trial stored, until the user leaves the step", async () => {
    // It must end complete, with requests measured: after its 10th request, not in a fixed window that a
    // loaded machine can close with too few (a PARTIAL trial).
    await startSuite(1, 120, 10);
    await page.locator('[data-test=current-trial]').waitFor({ timeout: 60_000 });
    await measuring();
    await page.locator('[data-test=outcome]').waitFor({ timeout: 180_000 });
    const head = page.locator('[data-test=last-trial-head]');
    await head.waitFor();
    const m = /^Suite finished — last trial: Storage only \(trial 1 of 1\), stored as trial (\d+)$/.exec((await head.innerText()).trim());
    expect(m, await head.innerText()).not.toBeNull();
    expect(await page.locator('[data-test=last-trial]').getAttribute('class')).toContain('ok');
    expect((await page.locator('[data-test=live-tput-label]').textContent())?.trim()).toBe('Throughput as stored');
    expect(await page.locator('[data-test=last-trial-unstored]').count()).toBe(0);

    // The tiles end on what the trial stored: the trial table's figures are the stored record's.
    const stored = await invoke('history.list', { selection: {}, sort: { key: 'id', dir: 'desc' }, limit: 1 });
    const trial = (stored.value as { trials: { id: number; metrics: Record<string, number>; options: Record<string, unknown> }[] }).trials[0];
    expect(Number(m![1])).toBe(trial.id);
    expect(trial.options).toMatchObject({ maxRequests: 10, duration: 120 });
    expect(trial.metrics.wall_clock_throughput_tok_per_s).toBeGreaterThan(0);
    expect(`${(await page.locator('[data-test=live-tput]').innerText()).trim()} tok/s`).toBe(await cell(6));
    expect((await page.locator('[data-test=live-storage]').innerText()).trim()).toBe(await cell(7));
    // The trial's four charts (throughput, latency, users, engine memory) stay with its card, as they were drawn.
    expect(await page.locator('[data-test=latency-chart-title]').innerText()).toBe('Latency, P95 over its window');
    expect(await page.locator('.live-charts canvas').count()).toBe(4);
    await screenshot(page, 'run-ended-1-finished');

    // Seen: leaving the step (the report, and back) clears it and its charts; the suite's outcome stays.
    await page.click('[data-step=report]');
    await page.click('[data-step=run]');
    await page.locator('[data-test=outcome]').waitFor();
    expect(await page.locator('[data-test=trial-card]').count()).toBe(0);
    expect(await page.locator('.live-charts canvas').count()).toBe(0);
  });

  it("says a cancelled suite's last trial was stopped, with its partial results kept", async () => {
    await startSuite(2, 30);
    // A new suite: the previous one's card is gone at its start.
    await page.locator('[data-test=current-trial]').waitFor({ timeout: 60_000 });
    await measuring();
    expect(await invoke('suite.cancel', {})).toMatchObject({ ok: true, value: { cancelled: true } });
    await page.locator('[data-test=outcome]').waitFor({ timeout: 60_000 });
    const head = (await page.locator('[data-test=last-trial-head]').innerText()).trim();
    expect(head).toMatch(/^Suite cancelled — last trial: Storage only \(trial 1 of 2\), stopped, its partial results stored as trial \d+ \(aborted\)$/);
    const card = page.locator('[data-test=last-trial]');
    expect(await card.getAttribute('class')).toContain('warn');
    expect(await card.locator('.badge').innerText()).toBe('aborted');
    expect(await page.locator('[data-test=last-trial-reason]').innerText()).toMatch(/cancelled by the user/);
    await screenshot(page, 'run-ended-2-cancelled');
  });

  it("says a killed engine's trial stored nothing, and that its numbers are only the last seen live", async () => {
    await startSuite(1, 30);
    await page.locator('[data-test=current-trial]').waitFor({ timeout: 60_000 });
    await measuring();
    const status = (await invoke('suite.status', {})).value as { events: { type: string; enginePid?: number | null }[] };
    const enginePid = status.events.find((e) => e.type === 'suite.trialStarted')?.enginePid;
    expect(enginePid).toBeGreaterThan(0);
    process.kill(enginePid!, 'SIGKILL');
    await page.locator('[data-test=outcome]').waitFor({ timeout: 60_000 });
    const head = (await page.locator('[data-test=last-trial-head]').innerText()).trim();
    expect(head).toMatch(/^Suite failed — last trial: Storage only \(trial 1 of 1\), failed: nothing of it stored \(trial \d+\)$/);
    const card = page.locator('[data-test=last-trial]');
    expect(await card.getAttribute('class')).toContain('error');
    expect(await card.locator('.badge').innerText()).toBe('failed');
    expect(await page.locator('[data-test=last-trial-reason]').innerText()).toMatch(/ENGINE_CRASHED/);
    expect(await page.locator('[data-test=last-trial-unstored]').innerText()).toBe('The numbers below are the last ones seen live: the trial stored none of them.');
    expect((await page.locator('[data-test=live-tput-label]').textContent())?.trim()).toBe('Throughput last seen live');
    expect(await page.locator('[data-test=live-tput]').innerText()).toMatch(/[1-9]/);
    await screenshot(page, 'run-ended-3-engine-killed');
    expect(problems).toEqual([]);
  });
});
