// End to end: `kvbench serve` killed in the middle of a suite, as a crash or an OOM kill ends it, while
// a page follows the run. The run screen says the connection is lost (its numbers frozen, no cancel);
// a restart with the same token reads the suite back as interrupted, with the trial's whole reason in
// view; a restart with a new random token (serve's default) is said on the page instead of retried.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchChromium, screenshot, startServe, watchPage, type Served } from './harness.ts';

describe.skipIf(!HAS_CHROMIUM)('kvbench serve killed while a page follows a suite', () => {
  const servers: Served[] = [];
  let browser: Browser;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    problems = watchPage(page);
  });

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.stop();
    if (servers[0]) fs.rmSync(servers[0].dir, { recursive: true, force: true });
  });

  it('says the connection is lost, reads the suite back as interrupted, and says when the token is no longer accepted', async () => {
    const token = randomBytes(24).toString('hex');
    const first = await startServe({ token, killable: true });
    servers.push(first);
    const port = Number(new URL(first.origin).port);
    await page.goto(first.url);
    await page.getByText('Live', { exact: true }).waitFor();

    const started = await fetch(`${first.origin}/api/invoke/suite.start`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ cacheDir: path.join(first.dir, 'cache'), profile: 'smoke', trials: 2, durationS: 20, scenarios: ['storage-only'], probe: false, label: 'killed' }),
    });
    expect(await started.json()).toMatchObject({ ok: true });
    await page.waitForFunction(() => /\d/.test(document.querySelector('[data-test=live-tput]')?.textContent ?? ''), null, { timeout: 120_000 }); // measuring

    // Killed: the page says so where the run is, and stops counting.
    await first.kill();
    const lost = page.locator('[data-test=connection-lost]');
    await lost.waitFor({ timeout: 30_000 });
    expect(await lost.innerText()).toMatch(/Connection to kvbench serve lost at \d\d:\d\d:\d\d: the numbers below are frozen/);
    expect(await page.locator('[data-test=cancel-suite]').isDisabled()).toBe(true);
    const eta = await page.locator('[data-test=eta]').innerText();
    await page.waitForTimeout(2500);
    expect(await page.locator('[data-test=eta]').innerText()).toBe(eta);
    await screenshot(page, 'restart-1-connection-lost');

    // The same token again: the page reconnects and reads the suite back from the database.
    const second = await startServe({ dir: first.dir, port, token, killable: true });
    servers.push(second);
    const outcome = page.locator('[data-test=outcome]');
    await outcome.waitFor({ timeout: 60_000 });
    expect(await outcome.innerText()).toContain('was interrupted');
    expect(await lost.count()).toBe(0);
    await page.locator('[data-test=open-history]').waitFor();
    // The aborted trial's reason is all in view, wrapped: a keyboard user cannot reach a tooltip.
    const reason = page.locator('[data-test=trial-table] tbody tr').first().locator('.reason');
    expect(await reason.innerText()).toMatch(/^interrupted: .{40,}/);
    const fits = await reason.evaluate((el) => el.scrollWidth <= el.clientWidth && el.scrollHeight <= el.clientHeight);
    expect(fits).toBe(true);
    // Nothing recorded how long it ran before its runner died: unknown, not time until the restart.
    expect(await page.locator('[data-test=trial-table] tbody tr').first().locator('td:nth-child(5)').innerText()).toBe('—');
    await screenshot(page, 'restart-2-interrupted');

    // Killed again and started with a new random token: no reconnecting forever.
    await second.kill();
    const third = await startServe({ dir: first.dir, port, killable: true });
    servers.push(third);
    await page.getByText('it was restarted with a new one').waitFor({ timeout: 60_000 });
    expect(await page.locator('main [role=alert]').innerText()).toContain('This page needs its access token');
    expect(await page.locator('.conn').innerText()).toBe('Token refused');
    await screenshot(page, 'restart-3-token-refused');

    // Its URL opens the app again.
    await page.goto(third.url);
    await page.getByText('Live', { exact: true }).waitFor();
    expect(problems.filter((p) => !/WebSocket|Failed to load resource|ERR_CONNECTION_REFUSED/.test(p))).toEqual([]);
  });
});
