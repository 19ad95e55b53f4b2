// End to end: stored labels that hold bidirectional controls, in Debian's Chromium. Labels are checked
// when they are given now, but a database can hold older ones: "abc\u202Efdp.exe" (U+202E, the
// right-to-left override) reads "abcexe.pdf" and can reorder the text around it. The app showed them as
// they are. Now every screen that shows a label writes such characters escaped, `\u{202e}`, as the CLI
// prints them, marks them, and isolates the label (<bdi>) from the text around it. A label typed or
// pasted with such a character into the import's or the Plan's fields is refused under the field as
// it is typed, shown so.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src-main/store/sqlite.ts';
import { intactDatabase } from '../support/damaged-file.ts';
import { HAS_CHROMIUM, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';

const SUITE_LABEL = 'abc\u202Efdp.exe';
const SUITE_LABEL_SHOWN = 'abc\\u{202e}fdp.exe';
const SYSTEM_LABEL = 'lab\u2067\u05d0\u05d1 1\u2069';
const SYSTEM_LABEL_SHOWN = 'lab\\u{2067}\u05d0\u05d1 1\\u{2069}';
/** Bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069). */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/;

describe.skipIf(!HAS_CHROMIUM)('stored labels with bidirectional controls in the app', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];
  let suiteIds: number[];

  beforeAll(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-e2e-bidi-'));
    const db = path.join(dir, 'kvbench.db');
    fs.renameSync(intactDatabase(dir), db);
    // As a kvbench from before labels were checked stored them.
    const raw = openDatabase(db);
    suiteIds = (raw.prepare('SELECT id FROM suites ORDER BY id').all() as { id: number }[]).map((r) => r.id);
    raw.prepare('UPDATE suites SET label = ? WHERE id = ?').run(SUITE_LABEL, suiteIds[0]);
    raw.prepare('UPDATE suites SET label = ? WHERE id = ?').run('plain', suiteIds[1]);
    raw.prepare('UPDATE systems SET label = ?').run(SYSTEM_LABEL);
    raw.close();
    opened = await openServedPage({ dir });
    ({ served, page, problems } = opened);
  });

  afterAll(async () => {
    await opened?.close(); // removes the directory with the served one
  });

  /** The page's text, the options of its selects included: no bidirectional control is left in it. */
  async function expectNoBidiControls(): Promise<void> {
    const text = await page.evaluate(() => `${document.body.innerText}\n${[...document.querySelectorAll('option')].map((o) => o.textContent).join('\n')}`);
    expect(text).not.toMatch(BIDI_CONTROLS);
  }

  it('History: the suite and system labels escaped, marked and isolated, in the table and the filters', async () => {
    await page.click('[data-nav=history]');
    const cell = page.locator(`[data-test=history-table] tbody tr[data-trial] [data-test=suite-label]`, { hasText: 'fdp.exe' }).first();
    await cell.waitFor({ timeout: 30_000 });
    expect(await cell.innerText()).toBe(SUITE_LABEL_SHOWN);
    const label = cell.locator('bdi.label-text');
    expect(await label.evaluate((e) => getComputedStyle(e).unicodeBidi)).toBe('isolate');
    expect(await label.locator('[data-test=escaped-char]').allInnerTexts()).toEqual(['\\u{202e}']);
    expect(await label.getAttribute('title')).toContain('U+202E');
    expect(await page.locator('[data-test=history-table] td.cell-system').first().innerText()).toContain(SYSTEM_LABEL_SHOWN);
    expect(await page.locator('select[name=suiteLabel] option').allTextContents()).toContain(`${SUITE_LABEL_SHOWN} (8)`);
    await expectNoBidiControls();
    // Filtering by it still finds its trials: the option's value is the label as stored.
    await page.selectOption('select[name=suiteLabel]', { label: `${SUITE_LABEL_SHOWN} (8)` });
    await page.getByRole('tab', { name: 'Trials (8)' }).waitFor({ timeout: 30_000 });
    await screenshot(page, 'bidi-labels-history');
    await page.click('[data-test=suites-tab]');
    await page.locator('[data-test=suites-table]').waitFor();
    expect(await page.locator(`[data-test=suites-table] tr[data-suite="${suiteIds[0]}"]`).innerText()).toContain(SUITE_LABEL_SHOWN);
    await expectNoBidiControls();
  });

  it('Report: the labels in the labels notice, the groups and the tier rows (which the chart draws) escaped', async () => {
    await page.goto(`${served.origin}/#/report?suite=${suiteIds[0]},${suiteIds[1]}`);
    await page.locator('[data-test=labels-apart]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-test=labels-apart]').innerText()).toContain(SUITE_LABEL_SHOWN);
    expect(await page.locator('[data-test=group-suite-label]').allInnerTexts()).toContain(`label “${SUITE_LABEL_SHOWN}”`);
    // The tier rows' names, which the chart draws too (rowLabel).
    expect((await page.locator('td.cell-tier-label .cell-label').allInnerTexts()).some((t) => t.includes(`label “${SUITE_LABEL_SHOWN}”`))).toBe(true);
    await expectNoBidiControls();
    await screenshot(page, 'bidi-labels-report');
  });

  it('Compare: the suite-label choices and the sides escaped; comparing by them works', async () => {
    await page.click('[data-nav=compare]');
    await page.click('[data-test=compare-labels]');
    await page.waitForFunction(() => document.querySelectorAll('select[name=a] option').length === 3);
    const options = await page.locator('select[name=a] option').allTextContents();
    const bidi = options.find((o) => o.startsWith(SUITE_LABEL_SHOWN))!;
    expect(bidi).toBe(`${SUITE_LABEL_SHOWN} (1 suite, 8 trials)`);
    await page.selectOption('select[name=a]', { label: bidi });
    await page.selectOption('select[name=b]', { label: 'plain (1 suite, 8 trials)' });
    await page.click('[data-test=compare]');
    await page.locator('[data-test=side-a]').waitFor({ timeout: 30_000 });
    expect(await page.locator('[data-test=side-a]').innerText()).toBe(SUITE_LABEL_SHOWN);
    await expectNoBidiControls();
    await screenshot(page, 'bidi-labels-compare');
    expect(problems).toEqual([]);
  });

  it('Import: a bidirectional control pasted into System or Label is refused as typed, escaped and marked under the field; Import waits', async () => {
    await page.click('[data-nav=history]');
    await page.click('[data-test=open-import]');
    await page.focus('input[name=systemLabel]');
    await page.keyboard.insertText(SUITE_LABEL); // as a paste inserts it
    await page.focus('input[name=suiteLabel]');
    await page.keyboard.insertText(SYSTEM_LABEL);
    const shown = page.locator('[data-test=label-problem]');
    await shown.first().waitFor({ timeout: 10_000 });
    expect(await shown.allInnerTexts()).toEqual([
      `System must not hold control characters, line breaks or bidirectional overrides (found U+202E): ${SUITE_LABEL_SHOWN}`,
      `Label must not hold control characters, line breaks or bidirectional overrides (found U+2067, U+2069): ${SYSTEM_LABEL_SHOWN}`,
    ]);
    expect(await shown.first().locator('[data-test=escaped-char]').allInnerTexts()).toEqual(['\\u{202e}']);
    expect(await shown.first().locator('bdi.label-text').evaluate((e) => getComputedStyle(e).unicodeBidi)).toBe('isolate');
    expect(await page.getAttribute('input[name=systemLabel]', 'aria-invalid')).toBe('true');
    expect(await page.locator('[data-test=import-submit]').isDisabled()).toBe(true);
    await expectNoBidiControls();
    await screenshot(page, 'bidi-labels-import-typed');
    await page.fill('input[name=systemLabel]', 'lab box');
    await page.fill('input[name=suiteLabel]', 'fw 2.1');
    await page.locator('[data-test=label-problem]').waitFor({ state: 'detached' });
    await page.keyboard.press('Escape');
  });

  it('Plan: a bidirectional control pasted into Label is refused as typed, escaped and marked under the field; Start waits', { timeout: 120_000 }, async () => {
    const cacheDir = path.join(served.dir, 'cache');
    fs.mkdirSync(cacheDir, { recursive: true });
    await page.click('[data-nav=wizard]');
    await page.fill('input[name=cacheDir]', cacheDir);
    await page.click('button:has-text("Detect")');
    await page.locator('dd.mono', { hasText: cacheDir }).waitFor({ timeout: 60_000 });
    await page.click('[data-test=to-plan]');
    await page.focus('input[name=label]');
    await page.keyboard.insertText(SUITE_LABEL);
    const shown = page.locator('[data-test=label-problem]');
    await shown.waitFor({ timeout: 10_000 });
    expect(await shown.innerText()).toBe(`Label must not hold control characters, line breaks or bidirectional overrides (found U+202E): ${SUITE_LABEL_SHOWN}`);
    expect(await page.getAttribute('input[name=label]', 'aria-describedby')).toBe('planLabel-problem');
    expect(await page.locator('[data-test=start-suite]').isDisabled()).toBe(true);
    await expectNoBidiControls();
    await screenshot(page, 'bidi-labels-plan-typed');
    await page.fill('input[name=label]', 'fw 2.1');
    await shown.waitFor({ state: 'detached' });
    expect(problems).toEqual([]);
  });
});
