// End to end, through `kvbench serve` in Debian's Chromium: what Settings hold is checked when it is
// read, not only when it is saved. A default cache directory an older kvbench saved, which Settings
// would refuse now, is said at the server's start, under the wizard's field and under Settings' own,
// and kept as saved. And a reload or a closed tab with Settings changes not saved asks first.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Dialog, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';

const SAVED = 'relative/cache';
const REFUSED = 'the default cache directory must be an absolute path (starting with /): relative/cache would be taken relative to the folder kvbench was started in';

describe.skipIf(!HAS_CHROMIUM)('settings as they are read', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];
  let settingsFile: string;
  const written = `${JSON.stringify({ defaultCacheDir: SAVED }, null, 2)}\n`;

  beforeAll(async () => {
    // The settings file an older kvbench left: it saved any default cache directory.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-e2e-'));
    settingsFile = path.join(dir, 'settings.json');
    fs.writeFileSync(settingsFile, written);
    opened = await openServedPage({ dir });
    ({ served, page, problems } = opened);
  });

  afterAll(async () => {
    await opened?.close();
  });

  /** What describes `selector`'s field, when it is marked invalid; null when it is not. */
  const problemOf = (selector: string): Promise<string | null> =>
    page.locator(selector).evaluate((el) => {
      if (el.getAttribute('aria-invalid') !== 'true') return null;
      return (el.getAttribute('aria-describedby') ?? '')
        .split(' ')
        .map((id) => document.getElementById(id)?.textContent ?? '')
        .join(' ');
    });

  it('says a refused saved default cache directory at the start, under the wizard field and under Settings, and keeps it', async () => {
    expect(served.output()).toContain(`kvbench serve: warn: the settings file ${settingsFile} holds a default cache directory Settings would refuse now: ${REFUSED}.`);
    // The wizard opens on it, as saved, marked with why and where to change it; nothing was detected.
    const field = page.locator('input[name=cacheDir]');
    expect(await field.inputValue()).toBe(SAVED);
    const wizardSays = await problemOf('input[name=cacheDir]');
    expect(wizardSays).toContain(REFUSED);
    expect(wizardSays).toContain('change the default in Settings');
    expect(await page.getByText('Detection failed').count()).toBe(0);
    await screenshot(page, 'settings-load-wizard');

    await page.click('[data-test=default-cache-dir-settings]');
    await page.locator('input[name=defaultCacheDir]').waitFor();
    expect(await page.locator('input[name=defaultCacheDir]').inputValue()).toBe(SAVED);
    expect(await problemOf('input[name=defaultCacheDir]')).toContain(REFUSED);
    await screenshot(page, 'settings-load-settings');
    expect(fs.readFileSync(settingsFile, 'utf8')).toBe(written);
    expect(problems).toEqual([]);
  });

  it('asks before a reload drops Settings changes not saved, and only then', async () => {
    await page.click('[data-nav=settings]');
    const dialogs: Dialog[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d);
      void d.dismiss(); // stay
    });
    // Nothing changed: a reload asks nothing.
    await page.reload();
    await page.getByText('Live', { exact: true }).waitFor();
    expect(dialogs).toHaveLength(0);

    await page.click('[data-nav=settings]');
    await page.check('input[name=latencyUnit][value=us]'); // a click: the page has had a user's gesture, as a browser requires before it asks
    await page.getByText('Not saved yet').waitFor();
    // Staying: the reload does not happen, and the change is still there.
    void page.reload({ timeout: 5_000 }).catch(() => undefined);
    await expect.poll(() => dialogs.length, { timeout: 10_000 }).toBe(1);
    expect(dialogs[0].type()).toBe('beforeunload');
    expect(await page.locator('input[name=latencyUnit][value=us]').isChecked()).toBe(true);
    await page.getByText('Not saved yet').waitFor();

    // Still asked after another screen was shown (the change is kept there), and by closing the tab.
    await page.click('[data-nav=history]');
    await page.locator('h1', { hasText: 'History' }).waitFor();
    await page.close({ runBeforeUnload: true });
    await expect.poll(() => dialogs.length, { timeout: 10_000 }).toBe(2);
    expect(dialogs[1].type()).toBe('beforeunload');
    expect(page.isClosed()).toBe(false);
    expect(problems).toEqual([]);
  });
});
