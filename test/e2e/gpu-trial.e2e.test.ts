// End to end: a trial of a GPU tier as a lab engineer reads it in the app, from the results of kvbench's
// first run on a real GPU (an NVIDIA H200, test/fixtures/gpu-h200-gpu-only.json) imported through
// `kvbench serve`: the tier comparison gives the GPU tier's read P95 beside the CPU's and the
// storage's, with every column in view at the window's minimum size; the group's header and the
// trial's details say what the GPU tier was (the GPU, the driver, reserved of asked, staging pinned).
// The built renderer in Debian's Chromium.
import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { h200Results } from '../unit/store/gpu-results.ts';
import { HAS_CHROMIUM, invoke, launchChromium, screenshot, startServe, watchPage, type Served } from './harness.ts';

describe.skipIf(!HAS_CHROMIUM)('a GPU trial in the app', () => {
  let served: Served;
  let browser: Browser;
  let suiteId: number;

  beforeAll(async () => {
    served = await startServe();
    browser = await launchChromium();
    const files = [{ name: 'run-gpu-only.json', text: JSON.stringify(h200Results('gpu-only')) }];
    const r = (await invoke(served, 'import.results', { files, systemLabel: 'h200', scenarioId: 'gpu-only' })) as { ok: boolean; value: { suiteId: number; imported: unknown[] } };
    expect(r.value?.imported, JSON.stringify(r)).toHaveLength(1);
    suiteId = r.value.suiteId;
  });

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (served) fs.rmSync(served.dir, { recursive: true, force: true });
  });

  async function open(width: number, height: number): Promise<{ page: Page; problems: string[] }> {
    const page = await (await browser.newContext({ viewport: { width, height } })).newPage();
    const problems = watchPage(page);
    await page.goto(served.url);
    return { page, problems };
  }

  it("the tier comparison gives the GPU tier's read P95, every column in view at 1024×680", async () => {
    const { page, problems } = await open(1024, 680);
    await page.goto(`${served.origin}/#/report?suite=${suiteId}`);
    await page.locator('[data-test=tier-table] tbody tr').first().waitFor();
    expect(await page.locator('[data-test=gpu-read-p95-head]').innerText()).toBe('GPU read P95');
    // The H200 run's own: a whole entry read from the GPU tier in 31.97 ms at the 95th percentile.
    expect(await page.locator('[data-test=gpu-read-p95]').innerText()).toBe('32.0 ms');
    await screenshot(page, 'gpu-trial-1-tiers');
    const outOfView = await page.evaluate(() => {
      const t = document.querySelector<HTMLElement>('table[data-test=tier-table]')!;
      const frame = t.closest<HTMLElement>('.table-wrap')!.getBoundingClientRect();
      return [...t.querySelectorAll<HTMLElement>('th, td')].filter((c) => c.getBoundingClientRect().right > frame.right + 1).map((c) => c.textContent!.trim());
    });
    expect(outOfView).toEqual([]);
    // The group's header: what the tier reserved of the 64 GiB asked (an import names no GPU: it has no hardware snapshot).
    expect(await page.locator('[data-test=group-gpu-tier]').innerText()).toBe('GPU tier: 68.7 GB of 68.7 GB reserved, staging pinned');
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it("the trial's details name the GPU tier's GPU and driver, what it reserved of what was asked, and its staging", async () => {
    const { page, problems } = await open(1280, 800);
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table] tbody tr[data-trial]').first().locator('button[aria-label^="Open trial"]').click();
    const tier = page.locator('[data-test=trial-gpu-tier]');
    await tier.waitFor({ timeout: 30_000 });
    expect(await tier.innerText()).toBe('NVIDIA H200 (driver 580.159.04, supports CUDA 13.0): 68.7 GB reserved of 68.7 GB asked, staging pinned');
    await screenshot(page, 'gpu-trial-2-details');
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
