// End to end: a trial that measures queueing, not storage, and the engine's memory, as a lab engineer
// sees them in the app. The Run step shows the engine's RSS beside its tiles and charts it, and says
// prominently, in the app's words, that the trial measures the queue once the engine says so; the
// trial's details then chart its memory timeline and give the stored trial's queueing verdict (a
// backlog at its cap, not queueing-bound at the close) and the issue lateness. `kvbench serve` with the real engine (made to queue in seconds by
// test/fixtures/queueing-engine.ts: realistic generation and a backlog cap of 12 requests), the built
// renderer in Debian's Chromium.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, invoke as invokeServed, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';

const QUEUEING_ENGINE = fileURLToPath(new URL('../fixtures/queueing-engine.ts', import.meta.url));

describe.skipIf(!HAS_CHROMIUM)('a queueing-bound trial and the engine memory', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    opened = await openServedPage({ engineModule: QUEUEING_ENGINE });
    ({ served, page, problems } = opened);
  });

  afterAll(async () => {
    await opened?.close();
  });

  const invoke = (channel: string, body: unknown) => invokeServed(served, channel, body);

  it('warns live that the trial measures queueing, shows the RSS, and charts the memory and gives the verdict in the trial', async () => {
    const r = await invoke('suite.start', { cacheDir: path.join(served.dir, 'cache'), profile: 'smoke', trials: 1, durationS: 6, scenarios: ['storage-only'], probe: false, label: 'queueing' });
    expect(r).toMatchObject({ ok: true });
    await page.locator('[data-test=current-trial]').waitFor({ timeout: 60_000 });

    // Live: the warning, in the app's words, above the tiles; the RSS tile and the memory chart.
    const mark = page.locator('[data-test=queueing-mark]');
    await mark.waitFor({ timeout: 60_000 });
    expect(await mark.getAttribute('role')).toBe('alert');
    expect(await page.locator('[data-test=queueing-head]').innerText()).toMatch(/^Queueing-bound: this trial measures its request queue, not the storage$/);
    expect(await mark.innerText()).toMatch(/cap of 12 requests/);
    await page.waitForFunction(() => /\d+(\.\d+)? MB$/.test(document.querySelector('[data-test=live-memory]')?.textContent?.trim() ?? ''), null, { timeout: 30_000 });
    expect((await page.locator('[data-test=live-memory-label]').textContent())?.trim()).toMatch(/^Engine memory \(RSS\) (now|last seen)$/);
    expect(await page.locator('[data-test=memory-chart-title]').innerText()).toBe('Engine memory');
    await screenshot(page, 'queueing-1-live');

    // Stored: the trial's details chart its memory timeline and give the verdict and the lateness.
    await page.locator('[data-test=outcome]').waitFor({ timeout: 180_000 });
    // The queueing warning stays with the ended trial's card, in the close's words: 12 queued for its
    // workers is not queueing-bound at the close (10 per worker), so the stored trial is not flagged.
    expect(await page.locator('[data-test=queueing-mark]').count()).toBe(1);
    expect(await page.locator('[data-test=queueing-head]').innerText()).toBe('Its queue reached its cap, but not queueing-bound at the close: not stored as queueing-bound');
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table] tbody tr[data-trial]').first().locator('button[aria-label^="Open trial"]').click();
    const verdict = page.locator('[data-test=trial-queueing]');
    await verdict.waitFor({ timeout: 30_000 });
    // The details give the stored verdict (the flag's), and the cap the engine's note names.
    expect(await verdict.innerText()).toMatch(/^Not queueing-bound at the window's close \(12 requests still queued, \d+ completed\), but its backlog reached its cap of 12 requests/);
    expect(await page.locator('[data-test=trial-lateness]').innerText()).toMatch(/^\d+(\.\d+)? (ms|s)( behind schedule)?/);
    expect(await page.locator('[data-test=trial-memory-chart] canvas').count()).toBe(1);
    expect(await page.locator('[data-test=trial-memory-chart-title]').innerText()).toMatch(/^Engine memory over the measured window \(MB\)$/);
    await screenshot(page, 'queueing-2-trial');
    expect(problems).toEqual([]);
  });
});
