// End to end: `kvbench serve` on a damaged database file (a page of trials overwritten, as a bad
// sector leaves it), in Debian's Chromium. The app refused it outright ("The database could not be
// opened"), so none of the trials that remained could be looked at or exported. Now every screen
// says it is damaged, what could not be read, that what is shown is a read-only copy and that the
// file is untouched, and what to do; History lists the trials that could be read; what would write
// is disabled, saying why, and refused by the server too; Settings switches to a new database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src-main/store/open-store.ts';
import { damagedTrialsPage, sha } from '../support/damaged-file.ts';
import { HAS_CHROMIUM, openPlanStep, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';


describe.skipIf(!HAS_CHROMIUM)('the app on a damaged database', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];
  let dir: string;
  let damaged: string;
  let before: string;
  let intactIds: number[];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-e2e-damaged-'));
    // Where `kvbench serve --db` of the harness looks: DIR/kvbench.db.
    ({ damaged } = damagedTrialsPage(dir, 'kvbench.db'));
    const intact = openStore(path.join(dir, 'intact.db'), { readonly: true });
    intactIds = intact.listTrials({}).map((t) => t.id);
    intact.close();
    before = sha(damaged);
    opened = await openServedPage({ dir });
    ({ served, page, problems } = opened);
  });

  afterAll(async () => {
    await opened?.close(); // removes `dir` with the served directory
  });

  it('says on every screen that the database is damaged, what could not be read, that it is a read-only copy, and where the untouched file is', async () => {
    const notice = page.locator('[data-test=database-damaged]');
    await notice.waitFor({ timeout: 30_000 });
    const text = await notice.innerText();
    expect(text).toContain('The database is damaged: what you see is a read-only copy of what could be read.');
    expect(text).toMatch(/\nSQLite( quick_check)?: .*\. \d+ trials could be read\./);
    expect(text).toMatch(/\d+ trials could be read\. Some stored rows could not be, each listed below/);
    expect(text).toContain(`The file ${damaged} is untouched: kvbench writes nothing to it.`);
    expect(text).toContain('choose a new database in Settings');
    const lost = await page.locator('[data-test=database-damaged-lost] li').allInnerTexts();
    expect(lost.length).toBeGreaterThan(0);
    for (const line of lost) expect(line).toMatch(/^trials? [0-9–, ]+ in .* could not be read/);
    // Not the refusal of before.
    expect(await page.getByText('The database could not be opened.').count()).toBe(0);
    await screenshot(page, 'damaged-database-notice');
    // It stays: on History and Compare too.
    for (const nav of ['history', 'compare']) {
      await page.click(`[data-nav=${nav}]`);
      await notice.waitFor();
    }
  });

  it('lists the salvaged trials in History, each one of the intact database', async () => {
    await page.click('[data-nav=history]');
    const rows = page.locator('[data-test=history-table] tbody tr[data-trial]');
    await rows.first().waitFor({ timeout: 30_000 });
    const ids = (await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-trial'))))).sort((a, b) => a - b);
    const said = Number(/(\d+) trials could be read/.exec(await page.locator('[data-test=database-damaged]').innerText())![1]);
    expect(ids).toHaveLength(said);
    expect(ids.length).toBeGreaterThanOrEqual(20);
    expect(ids.length).toBeLessThan(intactIds.length);
    expect(ids.every((id) => intactIds.includes(id))).toBe(true);
    expect(await page.getByRole('tab', { name: `Trials (${said})` }).count()).toBe(1);
    await screenshot(page, 'damaged-database-history');
  });

  it('disables what would write, saying why, and the server refuses it too; the file is never written', async () => {
    const reason = /^The database is damaged and shown read-only .*: choose a new database in Settings to run suites, import or delete\.$/;
    const importButton = page.locator('[data-test=open-import]');
    expect(await importButton.isDisabled()).toBe(true);
    expect(await importButton.getAttribute('title')).toMatch(reason);
    expect(await importButton.getAttribute('aria-describedby')).toBe('database-damaged');
    await page.locator('[data-test=history-table] tbody tr[data-trial] input[type=checkbox]').first().check();
    const del = page.locator('[data-test=delete-selected]');
    expect(await del.isDisabled()).toBe(true);
    expect(await del.getAttribute('title')).toMatch(reason);
    await page.click('[data-test=suites-tab]');
    const deleteSuite = page.getByRole('button', { name: /^Delete suite \d+$/ }).first();
    await deleteSuite.waitFor();
    expect(await deleteSuite.isDisabled()).toBe(true);

    // New suite: planned as usual, but not started.
    await page.click('[data-nav=wizard]');
    await openPlanStep(page, path.join(dir, 'cache'));
    const start = page.locator('[data-test=start-suite]');
    expect(await start.isDisabled()).toBe(true);
    expect(await page.locator('[data-test=database-read-only]').innerText()).toContain("The database is damaged and shown read-only, so the suite's trials could not be stored in it.");
    await screenshot(page, 'damaged-database-plan');

    // What the page does not offer, the server refuses as well, in words that say what to do.
    const refused = await page.evaluate(
      async ([origin, token, id]) => {
        const r = await fetch(`${origin}/api/invoke/trials.delete`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ ids: [id] }) });
        return (await r.json()) as unknown;
      },
      [served.origin, served.token, intactIds[0]] as const,
    );
    expect(refused).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT', message: expect.stringMatching(/^Deleting trials is refused: the database .* is damaged, .*choose a new \(or a healthy\) database in Settings\.$/) } });
    expect(sha(damaged)).toBe(before);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('kvbench.db'))).toEqual(['kvbench.db']);
    expect(problems).toEqual([]);
  });

  it('Settings switches to a new database: the notice goes, and writing is offered again', async () => {
    await page.click('[data-nav=settings]');
    const fresh = path.join(dir, 'fresh.db');
    await page.fill('input[name=databasePath]', fresh);
    await page.click('.settings-form button[type=submit]');
    await page.locator('dialog[open]').getByRole('button', { name: 'Create it' }).click();
    await page.getByText('Saved.').waitFor({ timeout: 30_000 });
    await page.locator('[data-test=database-damaged]').waitFor({ state: 'detached' });
    await page.click('[data-nav=history]');
    expect(await page.locator('[data-test=open-import]').isDisabled()).toBe(false);
    expect(sha(damaged)).toBe(before);
    expect(problems).toEqual([]);
  });
});
