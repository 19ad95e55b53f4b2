// End to end: `kvbench serve` on a damaged database, in Debian's Chromium. The damaged-database
// notice offered only "export, restore a backup, or choose a new database": nothing gave a working
// database back. It now offers "Save what could be read as a new database…": a path (beside the
// damaged file by default), an existing file refused in words, then the new database is written,
// used (the notice goes, writing is offered again), and the app's notes say it was recovered and
// what was lost. The damaged file is never written.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { damagedTrialsPage, sha } from '../support/damaged-file.ts';
import { HAS_CHROMIUM, openServedPage, screenshot, type ServedPage } from './harness.ts';


describe.skipIf(!HAS_CHROMIUM)('saving what a damaged database holds as a new database, from the app', () => {
  let opened: ServedPage | undefined;
  let page: Page;
  let problems: string[];
  let dir: string;
  let damaged: string;
  let before: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-e2e-recover-'));
    ({ damaged } = damagedTrialsPage(dir, 'kvbench.db'));
    before = sha(damaged);
    opened = await openServedPage({ dir });
    ({ page, problems } = opened);
  });

  afterAll(async () => {
    await opened?.close();
  });

  it('asks for a new file, refuses an existing one, then writes it, uses it, and says what was lost', async () => {
    const notice = page.locator('[data-test=database-damaged]');
    await notice.waitFor({ timeout: 30_000 });
    const said = Number(/(\d+) trials could be read/.exec(await notice.innerText())![1]);
    const lost = await page.locator('[data-test=database-damaged-lost] li').allInnerTexts();
    expect(lost.length).toBeGreaterThan(0);

    await page.click('[data-test=recover-database]');
    const input = page.locator('[data-test=recover-form] input[name=recoverPath]');
    expect(await input.inputValue()).toBe(path.join(dir, 'kvbench-recovered.db'));

    // An existing file is refused, and left as it is.
    const taken = path.join(dir, 'intact.db');
    const takenSha = sha(taken);
    await input.fill(taken);
    await page.click('[data-test=recover-form] button[type=submit]');
    const refusal = page.locator('#recover-problem');
    await refusal.waitFor({ timeout: 30_000 });
    expect(await refusal.innerText()).toContain(`Nothing was saved\n${taken} exists already`);
    expect(await input.getAttribute('aria-invalid')).toBe('true');
    expect(sha(taken)).toBe(takenSha);
    await screenshot(page, 'recover-database-refused');

    const out = path.join(dir, 'kvbench-recovered.db');
    await input.fill(out);
    await page.click('[data-test=recover-form] button[type=submit]');
    await notice.waitFor({ state: 'detached', timeout: 30_000 });
    const notes = page.locator('[data-test=database-notes]');
    await notes.waitFor();
    const text = await notes.innerText();
    expect(text).toContain(`${out} holds what was recovered from the damaged ${damaged}`);
    for (const line of lost) expect(text).toContain(line);
    await screenshot(page, 'recover-database-done');

    // The new database is the app's now: its trials listed, writing offered again.
    await page.click('[data-nav=history]');
    await page.getByRole('tab', { name: `Trials (${said})` }).waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-test=open-import]').isDisabled()).toBe(false);
    await page.click('[data-nav=settings]');
    expect(await page.locator('input[name=databasePath]').inputValue()).toBe(out);
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(sha(damaged)).toBe(before);
    expect(problems).toEqual([]);
  });
});
