// The wizard's Plan step in Chromium, on a real `kvbench serve` and its planner: a problem of the plan
// that names a field of the form marks that field as the form marks its own problems (the invalid
// border, aria-invalid, described by the problem), and the mark goes with the problem.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, launchChromium, openPlanStep, screenshot, startServe, watchPage, type Served } from './harness.ts';

/** What a person and a screen reader get from a field: its invalid state, its border, and the texts that describe it. */
async function fieldState(page: Page, name: string): Promise<{ invalid: string | null; errBorder: boolean; describedBy: string[] }> {
  return page.evaluate((n) => {
    const el = document.querySelector<HTMLElement>(`[name=${n}]`)!;
    // The form's invalid colour, as the browser resolves it.
    const probe = document.createElement('span');
    probe.style.color = 'var(--err)';
    document.body.append(probe);
    const err = getComputedStyle(probe).color;
    probe.remove();
    const ids = (el.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean);
    return {
      invalid: el.getAttribute('aria-invalid'),
      errBorder: getComputedStyle(el).borderTopColor === err,
      // Each as a screen reader says it: without what is aria-hidden (the notice's "!" icon).
      describedBy: ids.map((id) => {
        const said = document.getElementById(id)?.cloneNode(true) as HTMLElement | undefined;
        said?.querySelectorAll('[aria-hidden=true]').forEach((e) => e.remove());
        return said?.textContent?.trim() ?? `no #${id}`;
      }),
    };
  }, name);
}

describe.skipIf(!HAS_CHROMIUM)('the Plan step', () => {
  let served: Served;
  let browser: Browser;

  beforeAll(async () => {
    served = await startServe();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (served) fs.rmSync(served.dir, { recursive: true, force: true });
  });

  it('marks the storage tier capacity field while the plan says it is too small, and clears the mark when the plan fits', async () => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    const problems = watchPage(page);
    await page.goto(served.url);
    await openPlanStep(page, path.join(served.dir, 'cache'));
    await page.check('[data-profile=smoke] input');
    await page.getByText('The cache directory has room for this suite.').waitFor();
    expect(await fieldState(page, 'storageCapacityGib')).toEqual({ invalid: 'false', errBorder: false, describedBy: [] });

    // A number the form takes (0 or more GiB) but the planner refuses: no KV entry of tiny-1b fits.
    await page.fill('input[name=storageCapacityGib]', '0.0001');
    await page.locator('input[name=storageCapacityGib]').dispatchEvent('change');
    const refusal = page.locator('.notice.error', { hasText: 'cannot hold one KV entry' });
    await refusal.waitFor({ timeout: 30_000 });
    await screenshot(page, 'plan-capacity-too-small');
    const marked = await fieldState(page, 'storageCapacityGib');
    expect(marked).toMatchObject({ invalid: 'true', errBorder: true });
    expect(marked.describedBy).toEqual([expect.stringMatching(/^“Storage tier capacity \(GiB\)” 0\.0001 cannot hold one KV entry of tiny-1b .*: set it to at least 2 GiB, or 0 \(95 % of the free space\)\.$/)]);
    // Only the field the problem names.
    for (const other of ['trials', 'durationS', 'warmUpS', 'model', 'label', 'planCacheDir']) expect(await fieldState(page, other), other).toEqual({ invalid: 'false', errBorder: false, describedBy: [] });

    await page.fill('input[name=storageCapacityGib]', '0');
    await page.locator('input[name=storageCapacityGib]').dispatchEvent('change');
    await page.getByText('The cache directory has room for this suite.').waitFor({ timeout: 30_000 });
    expect(await fieldState(page, 'storageCapacityGib')).toEqual({ invalid: 'false', errBorder: false, describedBy: [] });
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
