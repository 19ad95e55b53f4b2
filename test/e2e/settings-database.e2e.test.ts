// End to end: another database chosen in Settings, through `kvbench serve` in Debian's Chromium.
// One made by an older kvbench (thousands of imported trials without their measuring version) is
// upgraded once as it opens, which takes seconds: the Settings page says so while it runs, in the
// words the app's first open puts in its window title. A switch that fails says why, and that the
// previous database is still the one in use.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseWithUnversionedImports } from '../unit/store/unversioned-imports.ts';
import { HAS_CHROMIUM, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';

/** Imported trials well past the notice's threshold (BACKFILL_NOTICE_MIN_TRIALS): an open of a second or more. */
const TRIALS = 3000;

declare global {
  interface Window {
    /** Each text the page's database progress showed, and whether the save was still under way then. */
    seenProgress?: { text: string; saving: boolean }[];
  }
}

describe.skipIf(!HAS_CHROMIUM)('switching the database in Settings', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    opened = await openServedPage();
    ({ served, page, problems } = opened);
    await page.click('[data-nav=settings]');
    await page.locator('input[name=databasePath]').waitFor();
  });

  afterAll(async () => {
    await opened?.close();
  });

  const aboutDatabase = async (): Promise<string> => (await page.locator('dl.kv dd.mono').last().innerText()).trim();

  it("shows the once-only upgrade of the chosen database on the page while it runs, in the first open's words", async () => {
    const imported = path.join(served.dir, 'imported.db');
    await databaseWithUnversionedImports(imported, TRIALS);
    await page.evaluate(() => {
      const seen: { text: string; saving: boolean }[] = [];
      window.seenProgress = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-test=database-progress]')?.textContent?.trim();
        const saving = document.querySelector('.settings-form button[type=submit]')?.textContent?.trim() === 'Opening the database …';
        if (text && seen.at(-1)?.text !== text) seen.push({ text, saving });
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.fill('input[name=databasePath]', imported);
    await page.click('.settings-form button[type=submit]');
    await page.getByText('Saved.').waitFor({ timeout: 120_000 });
    const seen = (await page.evaluate(() => window.seenProgress))!;
    // While the save waited: what the app's window title says at its first open (backfillNotice).
    expect(seen[0]).toEqual({ text: `database ${imported}: upgrading ${TRIALS} imported trials' records (once; this database was made by an older kvbench) …`, saving: true });
    // And what it did, once it is done.
    expect((await page.locator('[data-test=database-progress]').innerText()).trim()).toBe(`database ${imported}: upgraded ${TRIALS} imported trials' records`);
    expect(await aboutDatabase()).toBe(imported);
    await screenshot(page, 'settings-database-upgraded');
  });

  it('refuses a relative path under its field, and asks before making a new, empty database', async () => {
    const before = await aboutDatabase();
    const field = page.locator('input[name=databasePath]');
    await field.fill('relative.db');
    await page.click('.settings-form button[type=submit]');
    const problem = page.locator('#databasePath-problem');
    await problem.waitFor({ timeout: 30_000 });
    expect(await problem.innerText()).toContain('the database must be an absolute path (starting with /): relative.db would be taken relative to the folder kvbench was started in');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(fs.existsSync(path.join(served.dir, 'relative.db'))).toBe(false); // the server's working directory
    await screenshot(page, 'settings-database-relative');

    const fresh = path.join(served.dir, 'fresh.db');
    await field.fill(fresh);
    await page.click('.settings-form button[type=submit]');
    const dialog = page.locator('dialog[open]');
    await dialog.waitFor({ timeout: 30_000 });
    expect(await dialog.innerText()).toContain(`No database exists at ${fresh}. Create a new, empty database there?`);
    await screenshot(page, 'settings-database-create');
    await dialog.getByRole('button', { name: 'Keep' }).click();
    expect(fs.existsSync(fresh)).toBe(false);
    expect(await aboutDatabase()).toBe(before);
    await page.click('.settings-form button[type=submit]');
    await dialog.getByRole('button', { name: 'Create it' }).click();
    await page.getByText('Saved.').waitFor({ timeout: 30_000 });
    expect(fs.existsSync(fresh)).toBe(true);
    expect(await aboutDatabase()).toBe(fresh);
    // Back to the one in use before, for the next test: it exists, so no question.
    await field.fill(before);
    await page.click('.settings-form button[type=submit]');
    await page.waitForFunction((db) => [...document.querySelectorAll('dl.kv dd.mono')].at(-1)?.textContent?.trim() === db, before, { timeout: 30_000 });
    expect(problems).toEqual([]);
  });

  it('says a switch that failed, and that the previous database is still in use', async () => {
    const before = await aboutDatabase();
    const notes = path.join(served.dir, 'notes.db');
    fs.writeFileSync(notes, 'hello, I am a text file\n');
    await page.fill('input[name=databasePath]', notes);
    await page.click('.settings-form button[type=submit]');
    const alert = page.locator('.settings-form [role=alert]');
    await alert.waitFor({ timeout: 30_000 });
    const text = await alert.innerText();
    expect(text).toContain('The database was not switched');
    expect(text).toContain(notes);
    expect((await page.locator('[data-test=database-kept]').innerText()).trim()).toBe(`Still using ${before}: nothing was changed.`);
    expect(await aboutDatabase()).toBe(before);
    expect(await page.locator('[data-test=database-progress]').count()).toBe(0);
    await screenshot(page, 'settings-database-refused');
    // The database in use still answers.
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table]').waitFor();
    await page.click('[data-nav=settings]');
    expect(fs.readFileSync(notes, 'utf8')).toBe('hello, I am a text file\n');
    expect(problems).toEqual([]);
  });
});
