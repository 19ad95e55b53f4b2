// The layout docs/app.md promises ("laid out for 1280×800 and up", usable down to the window's
// minimum, 1024×680) with what a lab really stores: labels without spaces (a drive's part number and
// firmware, a label at the form's 200-character limit) and a report over several systems. Every
// column and button stays in view, without scrolling sideways. The trials are imported reference
// results (no engine run needed).
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceResultsNew } from '../unit/store/fixtures.ts';
import { HAS_CHROMIUM, launchChromium, openPlanStep, screenshot, startServe, watchPage, type Served } from './harness.ts';

const PART_NUMBER_LABEL = 'PM9A3_7.68TB_MZQL27T6HBLA-00A07_fw-GDC5902Q_xfs-noatime_nvme0n1_qd32';
const LONGEST_LABEL = `${'L'.repeat(100)}${'X'.repeat(100)}`;
const FLAGS = '--model tiny-1b --num-users 4 --duration 3 --gpu-mem-gb 0 --cpu-mem-gb 0.125 --generation-mode fast --seed 42';

/** How far the page and the named table's scrolling frame stick out sideways (0: they fit). */
interface Overflow {
  pagePx: number;
  tablePx: number | null;
  /** The table's cells, and the page head's title and buttons, whose right edge is out of view. */
  outOfView: string[];
}

async function overflowOf(page: Page, table: string | null): Promise<Overflow> {
  return page.evaluate((name) => {
    const doc = document.documentElement;
    const outOfView: string[] = [];
    let tablePx: number | null = null;
    const t = name === null ? null : document.querySelector<HTMLElement>(`table[data-test=${name}]`);
    if (t) {
      const wrap = t.closest<HTMLElement>('.table-wrap')!;
      tablePx = wrap.scrollWidth - wrap.clientWidth;
      const frame = wrap.getBoundingClientRect();
      for (const cell of t.querySelectorAll<HTMLElement>('th, td')) {
        if (cell.getBoundingClientRect().right > frame.right + 1) outOfView.push(`${name}: ${cell.textContent!.trim().slice(0, 30)}`);
      }
    }
    for (const e of document.querySelectorAll<HTMLElement>('.page-head button, .page-head h1, .page-head h2')) {
      if (e.getBoundingClientRect().right > doc.clientWidth) outOfView.push(`page head: ${e.textContent!.trim().slice(0, 30)}`);
    }
    return { pagePx: doc.scrollWidth - doc.clientWidth, tablePx, outOfView };
  }, table);
}

/**
 * The form controls (`selector`) narrower than what they show: an input's value, a select's chosen
 * option, or with `everyOption` the widest of its options (each one a person can choose).
 */
async function clippedControls(page: Page, selector: string, everyOption = false): Promise<string[]> {
  return page.evaluate(
    ([sel, every]) => {
      const out: string[] = [];
      for (const el of document.querySelectorAll<HTMLInputElement | HTMLSelectElement>(sel)) {
        const texts = el instanceof HTMLSelectElement ? (every ? [...el.options].map((o) => o.text) : [el.selectedOptions[0]?.text ?? '']) : [el.value];
        for (const text of texts) {
          const probe = el.cloneNode(false) as HTMLInputElement | HTMLSelectElement;
          if (probe instanceof HTMLSelectElement) probe.append(new Option(text));
          else probe.value = text;
          Object.assign(probe.style, { width: 'auto', position: 'absolute', visibility: 'hidden' });
          el.parentElement!.append(probe);
          const needs = probe.getBoundingClientRect().width;
          probe.remove();
          const has = el.getBoundingClientRect().width;
          if (has + 0.5 < needs) out.push(`${el.name} "${text}": ${Math.round(has)} px of ${Math.round(needs)} px`);
        }
      }
      return out;
    },
    [selector, everyOption] as const,
  );
}

/** The lines an element's text is laid out on, as a person reads them (where the browser broke it). */
async function linesOf(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluate((el) => {
    const lines: { top: number; text: string }[] = [];
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent ?? '';
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect || rect.width === 0) continue; // a collapsed space
        const top = Math.round(rect.top);
        const line = lines.find((l) => Math.abs(l.top - top) < 3);
        if (line) line.text += text[i];
        else lines.push({ top, text: text[i] });
      }
    }
    return lines.map((l) => l.text.trim());
  });
}

/**
 * How much darker than the white panel a table's scrolling frame is at its left and right edge (0:
 * white; in grey levels 0–255), with its text and cell borders made transparent so only what is drawn behind
 * them counts.
 */
async function edgeShades(page: Page, table: string): Promise<{ left: number; right: number }> {
  const wrap = page.locator(`table[data-test=${table}]`).locator('xpath=ancestor::div[contains(@class, "table-wrap")][1]');
  // (The page's CSP refuses a style sheet from here; the elements' own style properties are allowed.)
  await page.locator(`table[data-test=${table}]`).evaluate((t) => {
    for (const e of t.querySelectorAll<HTMLElement>('*')) Object.assign(e.style, { color: 'transparent', borderColor: 'transparent' });
  });
  const box = (await wrap.boundingBox())!;
  const head = (await page.locator(`table[data-test=${table}] thead`).boundingBox())!;
  // A band of body rows (below the header, which has a background of its own), 10 px wide, inside the frame's 1 px border.
  const band = { y: head.y + head.height + 4, height: Math.min(40, box.y + box.height - head.y - head.height - 8) };
  const shots = await Promise.all([
    page.screenshot({ clip: { x: box.x + 2, width: 10, ...band } }),
    page.screenshot({ clip: { x: box.x + box.width - 12, width: 10, ...band } }),
  ]);
  const blank = await page.context().newPage();
  try {
    const [left, right] = await blank.evaluate(async (pngs) => {
      const shade = async (b64: string): Promise<number> => {
        const img = new Image();
        img.src = `data:image/png;base64,${b64}`;
        await img.decode();
        const canvas = document.createElement('canvas');
        canvas.width = img.width;
        canvas.height = img.height;
        const ctx = canvas.getContext('2d')!;
        ctx.drawImage(img, 0, 0);
        const { data } = ctx.getImageData(0, 0, img.width, img.height);
        let darkest = 0;
        for (let i = 0; i < data.length; i += 4) darkest = Math.max(darkest, 255 - (data[i] + data[i + 1] + data[i + 2]) / 3);
        return Math.round(darkest);
      };
      return [await shade(pngs[0]), await shade(pngs[1])];
    }, shots.map((b) => b.toString('base64')));
    return { left, right };
  } finally {
    await blank.close();
  }
}

describe.skipIf(!HAS_CHROMIUM)('the layout with long labels and several systems', () => {
  let served: Served;
  let browser: Browser;
  let problems: string[];
  const suites: Record<string, number> = {};

  async function importAs(systemLabel: string, driveLabel: string, label: string, tokPerS: number): Promise<number> {
    const files = [1, 2].map((i) => ({ name: `${systemLabel.slice(0, 20)}_${i}.json`, text: JSON.stringify(referenceResultsNew({ tokPerS: tokPerS * (1 + i / 100), storageTokPerS: tokPerS / 2 })) }));
    const r = await fetch(`${served.origin}/api/invoke/import.results`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${served.token}` },
      body: JSON.stringify({ files, systemLabel, driveLabel, scenarioId: 'storage-only', runFlags: FLAGS, label }),
    });
    const body = (await r.json()) as { ok: boolean; value: { suiteId: number; imported: unknown[] } };
    expect(body.value.imported, JSON.stringify(body)).toHaveLength(2);
    return body.value.suiteId;
  }

  beforeAll(async () => {
    served = await startServe();
    browser = await launchChromium();
    suites.partNumber = await importAs('lab-nvme-a', 'Samsung PM9A3 7.68TB (nvme0n1)', PART_NUMBER_LABEL, 12345.6);
    suites.longest = await importAs('lab-nvme-b', 'Micron 7450 PRO 3.84TB (nvme1n1, serial …4411)', LONGEST_LABEL, 2412.3);
    suites.third = await importAs('gpu-box-with-a-long-hostname.lab.example.org', 'KIOXIA CM7-R 7.68TB (nvme2n1)', 'third', 987.4);
  });

  afterAll(async () => {
    await browser?.close();
    await served?.stop();
    if (served) fs.rmSync(served.dir, { recursive: true, force: true });
  });

  /**
   * A page at this size; report.build's rows get the widest values a real suite shows (imports store
   * no tier latencies, bandwidths or efficiencies), or the tier row values given; latencies in the unit given.
   */
  async function open(width: number, height: number, opts: { latencyUnit?: 'ms' | 'us'; tierRow?: Record<string, number>; status?: () => unknown } = {}): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width, height } })).newPage();
    problems = watchPage(page);
    // A suite the backend says is running (its status snapshot), for the Run step without an engine.
    if (opts.status) {
      const status = opts.status;
      await page.route('**/api/invoke/suite.status', (route) => route.fulfill({ json: { ok: true, value: status() } }));
    }
    await page.route('**/api/invoke/report.build', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { ok: true; value: { tiers: { rows: Record<string, unknown>[] } } };
      for (const row of body.value.tiers.rows) {
        Object.assign(row, { cpuReadP95Ms: 99.6, storageReadP95Ms: 1391.2, storageWriteP95Ms: 2093.5, gpuMemGb: 0.125, cpuMemGb: 0.125 }, opts.tierRow);
        Object.assign(row, { storageReadBytesPerS: 999_600_000, storageWriteBytesPerS: 999_700_000, storageReadEfficiency: 0.564, storageWriteEfficiency: 0.136, cpuReadEfficiency: 0.119, gpuReadBusyEfficiency: 0.841, gpuWriteBusyEfficiency: 0.331, bytesRead: 999_600_000_000, bytesWritten: 999_700_000_000 });
      }
      await route.fulfill({ response, json: body });
    });
    // The unit chosen in Settings, for this page only (the server's settings stay as the other tests find them).
    if (opts.latencyUnit) {
      const latencyUnit = opts.latencyUnit;
      await page.route('**/api/invoke/app.info', async (route) => {
        const response = await route.fetch();
        const body = (await response.json()) as { ok: true; value: { settings: Record<string, unknown> } };
        Object.assign(body.value.settings, { latencyUnit });
        await route.fulfill({ response, json: body });
      });
    }
    await page.goto(served.url);
    return page;
  }

  for (const [width, height] of [
    [1280, 800],
    [1920, 1080],
  ]) {
    it(`lays the Suites table and the head of a long-labelled suite's report out for ${width}×${height}: labels wrap, nothing scrolls sideways`, async () => {
      const page = await open(width, height);
      await page.click('[data-nav=history]');
      await page.click('[data-test=suites-tab]');
      await page.locator('[data-test=suites-table]').waitFor();
      await screenshot(page, `layout-${width}-suites`);
      expect(await overflowOf(page, 'suites-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });

      for (const which of ['partNumber', 'longest'] as const) {
        await page.goto(`${served.origin}/#/report?suite=${suites[which]}`);
        await page.locator('[data-test=report-title]', { hasText: `Suite ${suites[which]} ·` }).waitFor();
        await page.locator('[data-export=csv]').waitFor();
        expect(await page.locator('[data-test=report-title]').innerText()).toContain(which === 'longest' ? LONGEST_LABEL : PART_NUMBER_LABEL);
        await screenshot(page, `layout-${width}-report-${which}`);
        expect(await overflowOf(page, null)).toEqual({ pagePx: 0, tablePx: null, outOfView: [] });
      }
      expect(problems, problems.join('\n')).toEqual([]);
    });
  }

  for (const [width, height] of [
    [1024, 680],
    [1280, 800],
  ]) it(`at ${width}×${height}${width === 1024 ? ' (the window\'s minimum)' : ''}, History shows its filters whole and every column of the trials with the note; Compare every column and button`, async () => {
    const page = await open(width, height);
    // A trial with a reason to read, as a failed one has (imports store none), on a long drive name.
    const reason = 'INSUFFICIENT_SPACE: the storage tier capacity (2.00 GiB) exceeds the free space on /mnt/x/kv (20.0 MiB)';
    await page.route('**/api/invoke/history.list', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { ok: true; value: { trials: Record<string, unknown>[] } };
      Object.assign(body.value.trials[0], { status: 'failed', statusReason: reason, metrics: {} });
      await route.fulfill({ response, json: body });
    });
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table] .badge.failed').waitFor();
    await screenshot(page, `layout-${width}-history`);
    expect.soft(await overflowOf(page, 'history-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
    expect(await page.locator('[data-test=history-table] .reason').first().innerText()).toBe(reason);
    const drive = await page.locator('select[name=drive] option', { hasText: 'Samsung PM9A3' }).getAttribute('value');
    await page.selectOption('select[name=drive]', drive!);
    await page.fill('input[name=since]', '2026-11-24');
    await page.waitForFunction(() => document.querySelectorAll('[data-test=history-table] tr[data-trial]').length === 2);
    await screenshot(page, `layout-${width}-history-filtered`);
    // Each filter at least as wide as what it shows: a date's day, month and year, a drive's whole name.
    expect.soft(await clippedControls(page, 'form.filters select, form.filters input')).toEqual([]);

    await page.click('[data-nav=compare]');
    await page.click('[data-test=compare]');
    await page.locator('[data-test=compare-table]').waitFor();
    await screenshot(page, `layout-${width}-compare`);
    expect(await overflowOf(page, 'compare-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
    const buttons = await page.locator('[data-test=compare-table] button', { hasText: 'per config' }).evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right <= document.documentElement.clientWidth));
    expect(buttons.length).toBeGreaterThan(0);
    expect(buttons.every(Boolean)).toBe(true);
    // rev12 L2: at 1024 "Ratio A ÷ B" wrapped to three lines beside the chart's legend. Each card's
    // heading is one line (a text node wraps into one client rect per line).
    const wrappedHeadings = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('.card h3')].filter((h) => {
        const range = document.createRange();
        range.selectNodeContents(h);
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
      }).map((h) => h.textContent!.trim()),
    );
    expect.soft(wrappedHeadings).toEqual([]);
    // The group tables (every metric's verdict per CPU-tier size and per model) fit their cards too.
    expect.soft(await overflowOf(page, 'compare-groups')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
    expect.soft(await overflowOf(page, 'compare-groups-model')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });

    // Suite labels: a label at the form's limit, without spaces, is cut short in A and B (the whole
    // label in the select's tooltip), which stay within their card.
    await page.click('[data-test=compare-labels]');
    await page.locator('select[name=a] option', { hasText: LONGEST_LABEL }).waitFor({ state: 'attached' });
    await page.selectOption('select[name=a]', LONGEST_LABEL);
    await screenshot(page, `layout-${width}-compare-labels`);
    expect(await overflowOf(page, null)).toEqual({ pagePx: 0, tablePx: null, outOfView: [] });
    const outOfCard = await page.evaluate(() => {
      const card = document.querySelector<HTMLElement>('form.card')!.getBoundingClientRect();
      return [...document.querySelectorAll<HTMLElement>('form.card select, form.card button')].filter((e) => e.getBoundingClientRect().right > card.right + 0.5).map((e) => e.getAttribute('name') ?? e.textContent!.trim());
    });
    expect(outOfCard).toEqual([]);
    expect(await page.getAttribute('select[name=a]', 'title')).toContain(LONGEST_LABEL);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  for (const [width, height] of [
    [1024, 680],
    [1280, 800],
    [1440, 900],
  ]) it(`at ${width}×${height}, the Plan step shows every model the Model select offers whole, and its fields within their card`, async () => {
    const page = await open(width, height);
    await openPlanStep(page, path.join(served.dir, 'cache'));
    await screenshot(page, `layout-${width}-plan`);
    expect.soft(await overflowOf(page, null)).toEqual({ pagePx: 0, tablePx: null, outOfView: [] });
    // The longest model name ("llama3.1-70b-instruct") and the default's "(default)" among them.
    expect(await page.locator('select[name=model] option').count()).toBeGreaterThan(5);
    expect.soft(await clippedControls(page, 'select[name=model]', true)).toEqual([]);
    const outOfCard = await page.evaluate(() => {
      const card = document.querySelector<HTMLElement>('select[name=model]')!.closest<HTMLElement>('.card')!.getBoundingClientRect();
      return [...document.querySelectorAll<HTMLElement>('.card label.field input, .card label.field select')]
        .filter((e) => e.closest('.card') === document.querySelector('select[name=model]')!.closest('.card') && e.getBoundingClientRect().right > card.right + 0.5)
        .map((e) => e.getAttribute('name'));
    });
    expect(outOfCard).toEqual([]);
    // "What will run": every column in view, "Derived from" too, without scrolling sideways.
    expect.soft(await overflowOf(page, 'plan-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
    // Also with each run's derivation open ("how"), the MLPerf options' longer model names, and each
    // trial ending after a count of requests ("300 or 1000 req" in the Seconds column).
    await page.fill('input[name=maxRequests]', '1000');
    await page.locator('input[name=maxRequests]').dispatchEvent('change');
    await page.locator('[data-test=plan-max-requests]', { hasText: 'or 1000 req' }).first().waitFor();
    await page.check('input[name=extras]');
    await page.locator('[data-test=plan-table] tr[data-run=mlperf-large-model]').waitFor();
    for (const how of await page.locator('[data-test=plan-table] button.derivation-toggle').all()) await how.click();
    await screenshot(page, `layout-${width}-plan-derivations`);
    expect.soft(await overflowOf(page, 'plan-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
    // Each run's derivation a readable paragraph across the table, not a column a few words wide.
    const derivations = await page.locator('[data-test=plan-table] [data-test=derivation] ul').evaluateAll((uls) => uls.map((u) => Math.round(u.getBoundingClientRect().width)));
    expect(derivations.length).toBeGreaterThan(6);
    expect.soft(Math.min(...derivations), 'the narrowest derivation').toBeGreaterThanOrEqual(500);
    // Each model name whole in the table: "llama3.1-8b", never "llama3.1-" over "8b" (a hyphen is no place to break a name).
    const models = await page.locator('[data-test=plan-table] tbody tr[data-run] td:nth-child(2)').evaluateAll((tds) =>
      tds.map((td) => {
        const range = document.createRange();
        range.selectNodeContents(td);
        return { model: td.textContent!.trim(), lines: new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size };
      }),
    );
    expect(models.length).toBeGreaterThan(6);
    expect.soft(models.filter((m) => m.lines !== 1)).toEqual([]);
    // The estimate's time on one line ("10 min 39 s"), not "10 min 39" over "s".
    expect.soft(await linesOf(page, '[data-test=plan-time]')).toHaveLength(1);
    // The database path in the navigation breaks only after a "/", never inside a name ("kvbenc" / "h.db").
    const pathLines = await linesOf(page, '[data-test=db-path]');
    expect.soft(pathLines.join(''), JSON.stringify(pathLines)).toBe(path.join(served.dir, 'kvbench.db'));
    expect.soft(pathLines.slice(0, -1).filter((l) => !l.endsWith('/')), JSON.stringify(pathLines)).toEqual([]);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  for (const [width, height] of [
    [1024, 680],
    [1280, 800],
  ]) it(`shows every column of the tier comparison and the efficiency at ${width}×${height}, of one suite and over three systems`, async () => {
    const page = await open(width, height);
    for (const ids of [[suites.partNumber], Object.values(suites)]) {
      await page.goto(`${served.origin}/#/report?suite=${ids.join(',')}`);
      await page.waitForFunction((n) => document.querySelectorAll('[data-test=tier-table] tbody tr').length === n, ids.length);
      await screenshot(page, `layout-${width}-tiers-${ids.length}`);
      expect.soft(await overflowOf(page, 'tier-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
      expect.soft(await overflowOf(page, 'efficiency-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
      // The drive datasheet form: its two fields on the form's first line, its help a readable
      // paragraph (at least 20em = 280 px wide), not a narrow column beside them that pushes them down.
      const form = await page.locator('[data-test=stated-bandwidth]').evaluate((f) => {
        const top = f.getBoundingClientRect().top;
        return {
          fieldsDownPx: Math.max(...[...f.querySelectorAll('input')].map((i) => Math.round(i.getBoundingClientRect().top - top))),
          helpPx: Math.round(f.querySelector('#stated-help')!.getBoundingClientRect().width),
        };
      });
      expect.soft(form.fieldsDownPx, 'the datasheet fields are this far below the top of their form').toBeLessThan(60);
      expect.soft(form.helpPx, "the datasheet help's width").toBeGreaterThanOrEqual(280);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('gives a table too wide for its card a shade at the edge it scrolls to, and none once it is scrolled there', async () => {
    const page = await open(1024, 680);
    await page.goto(`${served.origin}/#/report?suite=${Object.values(suites).join(',')}`);
    await page.waitForFunction(() => document.querySelectorAll('[data-test=tier-table] tbody tr').length === 3);
    // A table that fits has no shade.
    expect(await edgeShades(page, 'tier-table')).toEqual({ left: 0, right: 0 });
    // Narrowed (as a table of wider values than any tested would be), it must scroll sideways.
    await page.locator('[data-test=tier-table]').evaluate((t) => ((t.closest('.table-wrap') as HTMLElement).style.width = '420px'));
    expect((await overflowOf(page, 'tier-table')).tablePx).toBeGreaterThan(100);
    const atStart = await edgeShades(page, 'tier-table');
    expect.soft(atStart.left, 'left edge, scrolled to the start').toBe(0);
    expect.soft(atStart.right, 'right edge, scrolled to the start').toBeGreaterThan(20);
    await page.locator('[data-test=tier-table]').evaluate((t) => (t.closest('.table-wrap') as HTMLElement).scrollTo({ left: 10_000 }));
    const atEnd = await edgeShades(page, 'tier-table');
    expect.soft(atEnd.left, 'left edge, scrolled to the end').toBeGreaterThan(20);
    expect.soft(atEnd.right, 'right edge, scrolled to the end').toBe(0);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  // The widest P95s a tier row can realistically show in each unit of Settings: a storage write that
  // waited tens of seconds (a drive far past its queue), "98,765 ms" or "98,765,400 µs"; a CPU read
  // of seconds, "9,877 ms" or "9,876,500 µs", and a GPU read as long (the H200's GPU + CPU + storage
  // trial read its GPU tier in 2,468 ms at P95), in the GPU column every row with a GPU tier gets; and
  // a speedup against a baseline of other users, "1.00× vs 128 users".
  const WIDEST_TIER_ROW = { gpuReadP95Ms: 9_876.5, cpuReadP95Ms: 9_876.5, storageReadP95Ms: 23_456.7, storageWriteP95Ms: 98_765.4, speedupBaselineUsers: 128 };
  for (const latencyUnit of ['ms', 'us'] as const) {
    for (const [width, height] of [
      [1024, 680],
      [1280, 800],
    ]) it(`shows every column of the tier comparison at ${width}×${height} with the widest P95s in ${latencyUnit === 'us' ? 'µs' : 'ms'}, of one suite and over three systems`, async () => {
      const page = await open(width, height, { latencyUnit, tierRow: WIDEST_TIER_ROW });
      for (const ids of [[suites.partNumber], Object.values(suites)]) {
        await page.goto(`${served.origin}/#/report?suite=${ids.join(',')}`);
        await page.waitForFunction((n) => document.querySelectorAll('[data-test=tier-table] tbody tr').length === n, ids.length);
        const tier = await page.locator('[data-test=tier-table]').innerText();
        expect(tier).toContain(latencyUnit === 'us' ? '98,765,400 µs' : '98,765 ms');
        expect(tier).toContain('vs 128 users');
        await screenshot(page, `layout-${width}-tiers-${ids.length}-${latencyUnit}`);
        expect.soft(await overflowOf(page, 'tier-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
      }
      expect(problems, problems.join('\n')).toEqual([]);
    });
  }

  /**
   * A running suite as suite.status answers (the page attaches to it on load): its first CPU-only
   * trial 2 s into its measured window and spilling to the drive, with the widest times the tiles
   * show: the suite started 59 min 58 s ago, and about 59 min 59 s are left ("≈ 59 min 59 s").
   * `maxRequests`: each trial also ends after that many requests; the current one has completed one
   * in its window's 2 s, a pace that would need longer than its cap leaves (1,788 s), and the other
   * has shown none, so it counts at its cap: "≤ 59 min 48 s", the widest such figure.
   */
  const runningSuite = (maxRequests = 0) => {
    const now = Date.now();
    const ref = { suiteId: 99, trialId: 999, scenarioId: 'cpu-only', label: 'CPU only', trialIndex: 0, trialsPerScenario: 2, ordinal: 1, total: 2 };
    const options = { model: 'llama3.1-8b', numUsers: 50, gpuMemGb: 0, cpuMemGb: 11, duration: 1790, storageCapacityGb: 16, maxRequests };
    const plan = {
      version: 1, profile: 'standard', trials: 2, model: 'llama3.1-8b', cacheDir: path.join(served.dir, 'cache'), systemId: 'sys', driveId: 'drv', createdAt: new Date(now).toISOString(),
      runs: [{ position: 0, scenarioId: 'cpu-only', label: 'CPU only', options, trials: 2, uvThreadpoolSize: 20, estimatedSecondsPerTrial: 1800, diskBytesEstimate: 16 * 2 ** 30, diskBytesRequired: 16 * 2 ** 30, derivation: ['d'] }],
      skipped: [], estimate: { trialCount: 2, totalSeconds: 3600, peakDiskBytes: 16 * 2 ** 30, requiredDiskBytes: 16 * 2 ** 30, freeBytes: null, fits: true, problems: [] }, notes: [],
    };
    const progress = {
      phase: 'running', elapsedNs: 2e9, durationNs: 1790e9, requestsCompleted: maxRequests > 0 ? 1 : 123_456, maxRequests: maxRequests > 0 ? maxRequests : null, activeUsers: 300, queueDepth: 1234, generatedTokens: 987_654_321, storageReadBytes: 987_654_321_000, storageWriteBytes: 987_654_321_000,
      generatedTokensPerSec: 98_765.4, storageReadBytesPerSec: 9.87e9, storageWriteBytesPerSec: 9.87e9, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, e2eLatencyP95Ns: 98_765e6, storageReadP95Ns: 98_765e6, eventLoopLagP99Ns: null,
      // The engine's memory tile at its widest, and a queue that outgrew its workers (its alert above the tiles).
      memory: { rssBytes: 98.7e9, heapUsedBytes: 9.87e9, externalBytes: 88.7e9, arrayBuffersBytes: 88.7e9, byteWorkersHeapUsedBytes: 1.23e9 },
      backlog: { queueingBound: true, atClose: false, queueingFirstMet: { queuedRequests: 640, workers: 64 }, traceOnly: false, capReached: true, capRequests: 500_000, queuedRequests: 3000, workers: 64, issueLatenessMaxNs: 1234.5e9 },
    };
    return {
      state: 'running', suiteId: 99, request: null, plan, startedAt: new Date(now - 3598_000).toISOString(),
      events: [
        { type: 'suite.started', suiteId: 99, resumed: false, total: 2, estimatedSeconds: 3600 },
        { type: 'suite.trialStarted', enginePid: 1, startedAtMs: now - 1_000, ...ref },
        { type: 'suite.trialProgressed', ...ref, progress },
      ],
    };
  };

  for (const [width, height] of [
    [1024, 680],
    [1440, 900],
  ]) it(`at ${width}×${height}, the Run step's tiles keep each value on one line within its tile, the widest times too`, async () => {
    const page = await open(width, height, { status: runningSuite });
    await page.locator('[data-test=eta]').waitFor();
    await page.locator('[data-test=spill-mark]').waitFor();
    await page.locator('[data-test=queueing-mark]').waitFor();
    await screenshot(page, `layout-${width}-run`);
    expect(await page.locator('[data-test=eta]').innerText()).toMatch(/^≈ 59 min 5\d s$/);
    expect.soft(await overflowOf(page, 'trial-table')).toEqual({ pagePx: 0, tablePx: 0, outOfView: [] });
    // Every tile's value on one line, and nothing of a tile (value or sub) past its edge.
    const tiles = await page.locator('.stat').evaluateAll((stats) =>
      stats.map((st) => {
        const box = st.getBoundingClientRect();
        const value = st.querySelector<HTMLElement>('.value')!;
        const lineHeight = parseFloat(getComputedStyle(value).lineHeight);
        const past = [...st.querySelectorAll<HTMLElement>('*')].filter((e) => e.getBoundingClientRect().right > box.right + 0.5 || e.scrollWidth > e.clientWidth + 1);
        return { tile: `${st.querySelector('.label')?.textContent?.trim()}: ${value.textContent?.trim()}`, lines: Math.round(value.getBoundingClientRect().height / lineHeight), past: past.map((e) => e.className || e.tagName) };
      }),
    );
    // The suite's four, the trial's five (throughput, storage, latency, users, engine memory).
    expect(tiles.length).toBe(9);
    for (const t of tiles) expect.soft(t, t.tile).toMatchObject({ lines: 1, past: [] });
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('at 1024×680, a suite whose trials end after N requests: its time left is a bound ("≤") while a scenario has shown no pace, on one line, and says why', async () => {
    const page = await open(1024, 680, { status: () => runningSuite(1000) });
    await page.locator('[data-test=eta]').waitFor();
    await screenshot(page, 'layout-1024-run-max-requests');
    // The running trial at its cap's 1,788 s left (its pace would need 1,998), the queued one at its 1,800.
    expect(await page.locator('[data-test=eta]').innerText()).toBe('≤ 59 min 48 s');
    expect(await page.locator('.nav-run').innerText()).toBe('Suite 99: 0/2 trials, up to 59 min 48 s left');
    expect(await page.locator('[data-test=trial-table] tbody tr').nth(1).innerText()).toContain('≤ 30 min 00 s');
    expect(await page.locator('[data-test=eta-basis]').innerText()).toBe('1,000-request trials counted at their duration cap');
    const eta = await page.locator('[data-test=eta]').evaluate((v) => ({ lines: Math.round(v.getBoundingClientRect().height / parseFloat(getComputedStyle(v).lineHeight)), past: v.scrollWidth > v.clientWidth + 1 }));
    expect(eta).toEqual({ lines: 1, past: false });
    const basis = await page.locator('[data-test=eta-basis]').evaluate((v) => v.getBoundingClientRect().right <= v.closest('.stat')!.getBoundingClientRect().right + 0.5);
    expect(basis).toBe(true);
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
