// End to end: History's "select all matching". The page's checkbox selects the 50 on screen; the page
// then offers every trial the filters match, on every page, as one selection for Report and Delete,
// and Delete says how many before it deletes them. `kvbench serve` on a history of 200 trials built
// through the store, the built renderer in Debian's Chromium.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src-main/store/open-store.ts';
import { seedVariedHistory } from '../unit/store/seed-store.ts';
import { HAS_CHROMIUM, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';

describe.skipIf(!HAS_CHROMIUM)('History: select all matching', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-e2e-select-all-'));
    const store = openStore(path.join(dir, 'kvbench.db'));
    seedVariedHistory(store, 200);
    store.close();
    opened = await openServedPage({ dir });
    ({ served, page, problems } = opened);
  }, 120_000);

  afterAll(async () => {
    await opened?.close();
  });

  const invoke = async <T>(channel: string, body: unknown): Promise<T> => {
    const r = await fetch(`${served.origin}/api/invoke/${channel}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${served.token}` },
      body: JSON.stringify(body),
    });
    const json = (await r.json()) as { ok: boolean; value?: T; error?: unknown };
    if (!json.ok) throw new Error(`${channel}: ${JSON.stringify(json.error)}`);
    return json.value as T;
  };
  const totalOf = async (selection: unknown): Promise<number> => (await invoke<{ total: number }>('history.list', { selection, limit: 1 })).total;
  const rows = () => page.locator('[data-test=history-table] tbody tr[data-trial]');
  const selectedCount = async (): Promise<string> => (await page.locator('[data-test=selected-count]').innerText()).trim();
  const headerBox = () => page.locator('[data-test=history-table] thead input[type=checkbox]');

  it('offers every match after the page\'s 50, reports and deletes them all, saying how many', async () => {
    const all = await totalOf({});
    const complete = await totalOf({ statuses: ['complete'] });
    expect(complete).toBeGreaterThan(100); // three pages

    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table]').waitFor();
    await page.selectOption('select[name=status]', { label: `complete (${complete})` });
    await page.waitForFunction(() => document.querySelector('.pager')?.textContent?.includes('1–50 of'));

    // The page's checkbox: the 50 shown, and an offer of the rest.
    await headerBox().check();
    expect(await selectedCount()).toBe('50 selected');
    const offer = page.locator('[data-test=select-all-matching]');
    expect((await offer.innerText()).trim()).toBe(`Select all ${complete} matching trial(s)`);
    await offer.click();
    expect(await selectedCount()).toBe(`${complete} selected`);
    expect(await page.locator('[data-test=select-matching]').innerText()).toContain(`All ${complete} trial(s) that match the filters are selected, on every page.`);
    await screenshot(page, 'select-all-matching');

    // Another page: still every match, each row checked.
    await page.getByRole('button', { name: 'Next' }).click();
    await page.waitForFunction(() => document.querySelector('.pager')?.textContent?.includes('51–100 of'));
    expect(await selectedCount()).toBe(`${complete} selected`);
    expect(await rows().locator('input[type=checkbox]:checked').count()).toBe(50);

    // One row unchecked: the page's other 49, not the other pages'; checked again, the offer is back.
    await rows().first().locator('input[type=checkbox]').uncheck();
    expect(await selectedCount()).toBe('49 selected');
    await expect.poll(() => page.locator('[data-test=select-matching]').count()).toBe(0);
    await rows().first().locator('input[type=checkbox]').check();
    await page.locator('[data-test=select-all-matching]').click();
    expect(await selectedCount()).toBe(`${complete} selected`);

    // Report of their suites: every suite with a matching trial, not only the page's.
    const { suiteIds } = await invoke<{ suiteIds: number[] }>('history.ids', { selection: { statuses: ['complete'] } });
    await page.click('[data-test=report-selected]');
    await page.waitForFunction(() => window.location.hash.startsWith('#/report'));
    const suites = new URL(`http://x/${page.url().split('#/')[1]}`).searchParams.get('suite')!.split(',').map(Number);
    expect(suites).toEqual(suiteIds);
    expect(suites.length).toBeGreaterThan(new Set((await invoke<{ trials: { suiteId: number }[] }>('history.list', { selection: { statuses: ['complete'] }, limit: 50 })).trials.map((t) => t.suiteId)).size);

    // Back in History the selection holds; a filter changed drops it (other trials match).
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table]').waitFor();
    expect(await selectedCount()).toBe(`${complete} selected`);
    await page.selectOption('select[name=status]', '');
    await page.waitForFunction((n) => document.querySelector('.pager')?.textContent?.includes(`of ${n}`), all);
    expect(await selectedCount()).toBe('0 selected');

    // Delete them all: the confirmation counts them, then they are gone and the other trials stay.
    await page.selectOption('select[name=status]', { label: `complete (${complete})` });
    await page.waitForFunction((n) => document.querySelector('.pager')?.textContent?.includes(`of ${n}`), complete);
    await headerBox().check();
    await page.locator('[data-test=select-all-matching]').click();
    await page.click('[data-test=delete-selected]');
    const dialog = page.getByText(`Delete all ${complete} trial(s) that match the filters, on every page (not only the 50 shown)`);
    await dialog.waitFor();
    await screenshot(page, 'select-all-matching-delete');
    await page.click('[data-test=confirm]');
    await page.getByText('Nothing matches these filters').waitFor({ timeout: 30_000 });
    expect(await totalOf({ statuses: ['complete'] })).toBe(0);
    expect(await totalOf({})).toBe(all - complete);
    expect(problems).toEqual([]);
  });
});
