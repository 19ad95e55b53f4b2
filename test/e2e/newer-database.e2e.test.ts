// End to end: `kvbench serve` on a database a newer kvbench (9.1.0) wrote and marked readable by this
// build, in Debian's Chromium. The app showed two notices that said nearly the same: the dismissible
// note of the open ("… was written by kvbench 9.1.0 …, and reads it read-only, as it is.") and the
// lasting read-only notice (the same facts, with the refusal in the CLI's words). Now one lasting
// notice says all of it: which kvbench wrote it, that writes are refused and what still works, and
// what to do; the file is never written.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../src-main/store/open-store.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { newerDatabase, sha } from '../support/damaged-file.ts';
import { HAS_CHROMIUM, openServedPage, screenshot, type ServedPage } from './harness.ts';

describe.skipIf(!HAS_CHROMIUM)('the app on a newer kvbench database it may only read', () => {
  let opened: ServedPage | undefined;
  let page: Page;
  let problems: string[];
  let db: string;
  let before: string;

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-e2e-newer-'));
    // Where `kvbench serve --db` of the harness looks: DIR/kvbench.db.
    db = path.join(dir, 'kvbench.db');
    fs.renameSync(newerDatabase(dir, LATEST_SCHEMA_VERSION), db);
    before = sha(db);
    opened = await openServedPage({ dir });
    ({ page, problems } = opened);
  });

  afterAll(async () => {
    await opened?.close(); // removes the directory with the served one
  });

  it('shows one notice: which kvbench wrote it, that writes are refused and what still works, and what to do', async () => {
    const notice = page.locator('[data-test=database-read-only-notice]');
    await notice.waitFor({ timeout: 30_000 });
    // The one notice: no second, dismissible note of the open saying the same.
    expect(await page.locator('[data-test=database-notes]').count()).toBe(0);
    expect(await page.getByText('was written by kvbench 9.1.0').count()).toBe(1);
    const text = await notice.innerText();
    expect(text).toContain('The database was written by a newer kvbench and is shown read-only.');
    expect(text).toContain(`${db} was written by kvbench 9.1.0 (schema ${LATEST_SCHEMA_VERSION + 2}); this build, kvbench ${KVBENCH_VERSION}, knows schema ${LATEST_SCHEMA_VERSION} and older`);
    expect(text).toContain('writing to it needs kvbench 9.1.0 or newer.');
    expect(text).toContain('New suite, Resume, Import and Delete are off while it is open; the file is never written.');
    expect(text).toContain('Upgrade kvbench, or choose another database in Settings.');
    // In the app's words: its screens, not the CLI's commands.
    expect(text).toContain('it reads the file read-only (History, reports, Compare and exports)');
    expect(text).not.toContain('kvbench history');
    await screenshot(page, 'newer-database-notice');
    // Lasting: on History too, where the disabled Import points at it.
    await page.click('[data-nav=history]');
    await notice.waitFor();
    const importButton = page.locator('[data-test=open-import]');
    await importButton.waitFor({ timeout: 30_000 });
    expect(await importButton.isDisabled()).toBe(true);
    expect(await importButton.getAttribute('aria-describedby')).toBe(await notice.getAttribute('id'));
    expect(await page.getByText('was written by kvbench 9.1.0').count()).toBe(1);
  });

  it('its button leads to Settings, and the file is never written', async () => {
    await page.locator('[data-test=database-read-only-notice]').getByRole('button', { name: 'Choose another database in Settings' }).click();
    await page.locator('[data-nav=settings][aria-current=page]').waitFor();
    expect(sha(db)).toBe(before);
    expect(problems).toEqual([]);
  });
});
