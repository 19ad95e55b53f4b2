// End to end, as a lab engineer on a headless server would use it: `kvbench serve` with a real
// database and the real engine, the built renderer in Debian's Chromium. Run a smoke suite from
// the wizard and watch its progress, read the report (and state the drive's datasheet bandwidth),
// import a second system's reference results, compare, export, browse and delete in the history,
// change the units — and a request without the token is refused. Screenshots of every screen go to out/e2e-screenshots/.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WS_PROTOCOL, WS_TOKEN_PREFIX } from '../../src-shared/ipc/channels.ts';
import { referenceResultsNew } from '../unit/store/fixtures.ts';
import { HAS_CHROMIUM, launchChromium, screenshot, startServe, watchPage, type Served } from './harness.ts';

if (!HAS_CHROMIUM) {
  const line = '!'.repeat(100);
  process.stderr.write(
    `\n${line}\n!! END-TO-END TESTS SKIPPED: /usr/bin/chromium is not installed.\n!! Install it (apt-get install -y chromium) to run the browser tests; CI installs it in .ci/run.\n${line}\n\n`,
  );
}

/** The smoke suite's trials below end after this many completed requests, with this duration as their cap. */
const TRIAL_REQUESTS = 10;
const TRIAL_CAP_S = 120;
/** The storage-only trials of the smoke suite below, as `kvbench run` flags (for the import to match them). */
const STORAGE_ONLY_FLAGS = `--model tiny-1b --num-users 4 --duration ${TRIAL_CAP_S} --max-requests ${TRIAL_REQUESTS} --gpu-mem-gb 0 --cpu-mem-gb 0.125 --generation-mode fast --seed 42`;

describe.skipIf(!HAS_CHROMIUM)('kvbench serve in Chromium', () => {
  let served: Served;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  const timings: Record<string, number> = {};
  let t0 = 0;
  const lap = (name: string): void => {
    timings[name] = Math.round(performance.now() - t0);
    t0 = performance.now();
  };

  beforeAll(async () => {
    t0 = performance.now();
    served = await startServe();
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page = await context.newPage();
    problems = watchPage(page);
    lap('start');
  });

  afterAll(async () => {
    await browser?.close();
    const code = await served?.stop();
    if (served) fs.rmSync(served.dir, { recursive: true, force: true });
    process.stderr.write(`e2e timings (ms): ${JSON.stringify(timings)}; kvbench serve exited with ${code}\n`);
  });

  it('refuses API requests and the event stream without the token', async () => {
    const noToken = await fetch(`${served.origin}/api/invoke/app.info`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    const wrong = await fetch(`${served.origin}/api/invoke/trials.delete`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${'0'.repeat(served.token.length)}` },
      body: JSON.stringify({ ids: [1] }),
    });
    expect(wrong.status).toBe(401);
    const ok = await fetch(`${served.origin}/api/invoke/app.info`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${served.token}` },
      body: '{}',
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ ok: true, value: { mode: 'browser', databasePath: served.db } });

    // A page opened without the token can load, but gets nothing from the backend.
    const anon = await browser.newPage();
    await anon.goto(served.origin);
    await anon.getByText('This page needs its access token').waitFor();
    await anon.getByText('No access token').waitFor();
    const wsRefused = await anon.evaluate(
      (args) =>
        new Promise<boolean>((resolve) => {
          const ws = new WebSocket(`${location.origin.replace('http', 'ws')}/api/events`, [args.protocol, `${args.prefix}nottherighttoken0000000000000000000000`]);
          ws.onopen = () => resolve(false);
          ws.onerror = () => resolve(true);
        }),
      { protocol: WS_PROTOCOL, prefix: WS_TOKEN_PREFIX },
    );
    expect(wsRefused).toBe(true);
    await screenshot(anon, '00-no-token');
    await anon.close();
    lap('token');
  });

  it('runs a smoke suite from the wizard, with live progress, and shows its report', { timeout: 480_000 }, async () => {
    const cacheDir = path.join(served.dir, 'cache');
    await page.goto(served.url);
    // The token left the address bar.
    await page.waitForFunction(() => !location.search.includes('token'));

    // 1. Hardware
    await page.getByText('No GPU: GPU scenarios skipped').waitFor({ timeout: 30_000 });
    await page.getByText('Cache dir on the system disk').waitFor();
    await screenshot(page, '01-hardware');
    await page.fill('input[name=cacheDir]', cacheDir);
    await page.click('button:has-text("Detect")');
    await page.locator('dd.mono', { hasText: cacheDir }).waitFor();
    await page.click('[data-test=to-plan]');

    // 2. Plan: smoke, 2 trials each, CPU only and storage only. Each trial ends after its 10th completed
    // request, the duration only a cap: a fixed window (the profile's 5 s) closes with too few requests, a
    // PARTIAL trial, on a loaded machine, where 10 requests take longer but still complete.
    await page.check('[data-profile=smoke] input');
    await page.fill('input[name=trials]', '2');
    await page.fill('input[name=durationS]', String(TRIAL_CAP_S));
    await page.locator('input[name=durationS]').dispatchEvent('change');
    await page.fill('input[name=maxRequests]', String(TRIAL_REQUESTS));
    await page.locator('input[name=maxRequests]').dispatchEvent('change');
    for (const id of ['cpu-storage', 'storage-saturation', 'production', 'autoscale']) await page.uncheck(`[data-scenario=${id}] input`);
    await page.fill('input[name=label]', 'e2e smoke');
    // Planning detects the hardware again: seconds on a loaded machine (once over 30 s at load ~20).
    await page.waitForFunction(() => document.querySelector('[data-test=trial-count]')?.textContent === '4', null, { timeout: 120_000 });
    await page.locator('[data-run=cpu-only] [data-test=plan-max-requests]', { hasText: `or ${TRIAL_REQUESTS} req` }).waitFor();
    await page.getByText('The cache directory has room for this suite.').waitFor();
    expect(await page.locator('[data-scenario=gpu-only]').textContent()).toContain('Skipped');
    await screenshot(page, '02-plan');
    lap('wizard');

    // 3. Run: live progress, then the end.
    await page.click('[data-test=start-suite]');
    await page.locator('[data-test=current-trial]').waitFor({ timeout: 120_000 });
    await page.waitForFunction(() => document.querySelectorAll('canvas').length >= 3);
    // Live numbers arrive while the trial runs.
    await page.waitForFunction(() => /\d/.test(document.querySelector('[data-test=live-tput]')?.textContent ?? ''), null, { timeout: 60_000 });
    await page.waitForTimeout(300); // a few more points on the charts
    await screenshot(page, '03-run');
    // Then trials finish one by one.
    await page.waitForFunction(() => /^[1-4] \/ 4$/.test(document.querySelector('[data-test=trials-done]')?.textContent?.trim() ?? ''), null, { timeout: 180_000 });
    await page.locator('[data-test=view-report]').waitFor({ timeout: 240_000 });
    expect((await page.locator('[data-test=trials-done]').textContent())?.trim()).toBe('4 / 4');
    expect(await page.getByText('4 complete, 0 partial, 0 failed, 0 aborted').count()).toBe(1);
    await screenshot(page, '04-run-finished');
    lap('suite');

    // 4. Report: median/P95 with units, tier comparison, efficiency.
    await page.click('[data-test=view-report]');
    await page.locator('[data-test=tier-table]').waitFor();
    const tier = await page.locator('[data-test=tier-table]').innerText();
    expect(tier).toContain('CPU only');
    expect(tier).toContain('Storage only');
    expect(tier).toMatch(/1\.00×/); // storage-only is the baseline
    expect(tier).toMatch(/tok\/s/);
    const cpuOnly = await page.locator('[data-scenario-report=cpu-only]').innerText();
    expect(cpuOnly).toMatch(/2 of 2 trial\(s\) aggregated/);
    // Both trials completed requests (a trial that completed none ends PARTIAL), so the metric has n = 2 and a CV.
    expect(cpuOnly).toMatch(/Wall-clock throughput\s+tok\/s\s+[\d,.]+ tok\/s\s+[\d,.]+ tok\/s\s+[\d.]+ %\s+2/);
    await page.locator('[data-test=efficiency-table]').waitFor();
    await screenshot(page, '05-report');

    // The drive's datasheet read bandwidth, stated (far below any drive's, so the value must move):
    // storage efficiency against it, and the limits' source says so.
    const readEfficiency = async (): Promise<string> => (await page.locator('[data-test=efficiency-table] tbody tr', { hasText: 'Storage only' }).locator('td').nth(2).innerText()).trim();
    const probedReadEfficiency = await readEfficiency();
    await page.fill('input[name=statedReadGbps]', '0.1');
    await page.press('input[name=statedReadGbps]', 'Enter');
    await page.locator('[data-test=limits-source]', { hasText: 'stated by the user (read 0.10 GB/s)' }).waitFor();
    expect(await readEfficiency()).toMatch(/%$/);
    expect(await readEfficiency()).not.toBe(probedReadEfficiency);

    // Export from the report: a CSV download with one row per trial.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-export=csv]')]);
    const csvPath = path.join(served.dir, download.suggestedFilename());
    await download.saveAs(csvPath);
    const csvText = fs.readFileSync(csvPath, 'utf8');
    expect(csvText.startsWith('\uFEFF')).toBe(true); // the UTF-8 BOM Windows Excel needs
    const csv = csvText.slice(1).trimEnd().split('\r\n');
    expect(csv[0]).toMatch(/^trial_id,suite_id,suite_label,/);
    expect(csv).toHaveLength(5);
    // The suite's label is in every row (rev8-gui #3: it was in none of the exports).
    expect(csv.slice(1).every((row) => /^\d+,\d+,e2e smoke,/.test(row))).toBe(true);
    expect(download.suggestedFilename()).toMatch(/^kvbench-suite-\d+-\d{8}-\d{6}\.csv$/);
    // Streamed from the server's one-time link (s14), not built in the page from a base64 reply; used once.
    expect(download.url()).toMatch(new RegExp(`^${served.origin}/api/download/[0-9a-f]{48}$`));
    expect((await page.request.get(download.url())).status()).toBe(404);
    // The report itself as CSV (rev12-gui M7): its rows, per scenario and metric the median, P95 and CV.
    expect(await page.locator('[data-export=csv]').textContent()).toBe('Trials CSV');
    const [reportDownload] = await Promise.all([page.waitForEvent('download'), page.click('[data-export=report-csv]')]);
    expect(reportDownload.suggestedFilename()).toMatch(/^kvbench-suite-\d+-report-\d{8}-\d{6}\.csv$/);
    const reportCsvPath = path.join(served.dir, reportDownload.suggestedFilename());
    await reportDownload.saveAs(reportCsvPath);
    const reportCsv = fs.readFileSync(reportCsvPath, 'utf8').slice(1).trimEnd().split('\r\n');
    expect(reportCsv[0]).toMatch(/^scenario_id,scenario,.*,metric,metric_label,unit,n,median,p95,cv,min,max,definition_before,yes$/);
    expect(reportCsv.some((row) => row.startsWith('storage-only,Storage only,') && row.includes(',wall_clock_throughput_tok_per_s,'))).toBe(true);
    lap('report');
  });

  it('imports a second system, compares the two, exports, browses and deletes in the history', { timeout: 120_000 }, async () => {
    const files = [1, 2].map((i) => {
      const f = path.join(served.dir, `slow_trial${i}.json`);
      fs.writeFileSync(f, JSON.stringify(referenceResultsNew({ tokPerS: 10 * i, storageTokPerS: 5 * i })));
      return f;
    });
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table]').waitFor();
    expect(await page.locator('[data-test=history-table] tbody tr[data-trial]').count()).toBe(4);
    await page.click('[data-test=open-import]');
    await page.setInputFiles('input[name=files]', files);
    await page.fill('input[name=systemLabel]', 'slow-box');
    await page.selectOption('select[name=scenarioId]', 'storage-only');
    await page.fill('[name=runFlags]', STORAGE_ONLY_FLAGS);
    await page.fill('input[name=suiteLabel]', 'slow build');
    await screenshot(page, '06-import');
    await page.click('[data-test=import-submit]');
    await page.locator('[data-test=import-result]').waitFor();
    expect(await page.locator('[data-test=import-result]').innerText()).toMatch(/2 file\(s\) imported[\s\S]*reference-new, complete/);
    await page.click('button:has-text("Done")');
    await page.waitForFunction(() => document.querySelectorAll('[data-test=history-table] tbody tr[data-trial]').length === 6);

    // Filter by system and status, sort by throughput.
    await page.selectOption('select[name=system]', { label: 'slow-box (2)' });
    await page.waitForFunction(() => document.querySelectorAll('[data-test=history-table] tbody tr[data-trial]').length === 2);
    await page.selectOption('select[name=system]', '');
    await page.waitForFunction(() => document.querySelectorAll('[data-test=history-table] tbody tr[data-trial]').length === 6);
    // By the suite's label: the wizard's suite, its label under its number.
    await page.selectOption('select[name=suiteLabel]', { label: 'e2e smoke (4)' });
    await page.waitForFunction(() => document.querySelectorAll('[data-test=history-table] tbody tr[data-trial]').length === 4);
    expect(await page.locator('[data-test=history-table] [data-test=suite-label]').allTextContents()).toEqual(Array(4).fill('e2e smoke'));
    await page.selectOption('select[name=suiteLabel]', '');
    await page.waitForFunction(() => document.querySelectorAll('[data-test=history-table] tbody tr[data-trial]').length === 6);
    await page.click('th button:has-text("Throughput")');
    await page.waitForFunction(() => document.querySelector('th[aria-sort=descending]')?.textContent?.includes('Throughput'));
    await screenshot(page, '07-history');

    // A trial's details.
    await page.locator('[data-test=history-table] tbody tr[data-trial]').first().locator('button[aria-label^="Open trial"]').click();
    await page.getByText('Configuration').waitFor();
    await screenshot(page, '08-trial');
    await page.keyboard.press('Escape');
    await page.getByRole('dialog').waitFor({ state: 'hidden' });

    // Compare the two systems.
    await page.click('[data-nav=compare]');
    const selects = page.locator('select[name=a] option');
    await page.waitForFunction(() => document.querySelectorAll('select[name=a] option').length >= 3);
    const labels = await selects.allTextContents();
    const here = labels.find((l) => !l.startsWith('slow-box') && !l.startsWith('choose'))!;
    await page.selectOption('select[name=a]', { label: here });
    await page.selectOption('select[name=b]', { label: labels.find((l) => l.startsWith('slow-box'))! });
    await page.click('[data-test=compare]');
    await page.locator('[data-test=compare-table]').waitFor();
    expect((await page.locator('[data-test=matched]').textContent())?.trim()).toBe('1');
    // The geo-mean carries the verdict's mark (≈ where two trials a side leave the lead within the noise).
    expect(await page.locator('[data-test=compare-table]').innerText()).toMatch(/Wall-clock throughput[^\n]*\n?[^\n]*\s1\s+(?:(?:≈|[AB]\??\*?) )?[\d.]+×/);
    await screenshot(page, '09-compare');

    // The same two sets of trials by their suites' labels.
    await page.click('[data-test=compare-labels]');
    await page.waitForFunction(() => document.querySelectorAll('select[name=a] option').length === 3);
    await page.selectOption('select[name=a]', { label: 'e2e smoke (1 suite, 4 trials)' });
    await page.selectOption('select[name=b]', { label: 'slow build (1 suite, 2 trials)' });
    await page.click('[data-test=compare]');
    await page.locator('[data-test=suites-b]').waitFor();
    expect((await page.locator('[data-test=matched]').textContent())?.trim()).toBe('1');
    await screenshot(page, '09b-compare-labels');

    // Export everything as XLSX and JSON from the history.
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table]').waitFor();
    for (const f of ['xlsx', 'json'] as const) {
      const [d] = await Promise.all([page.waitForEvent('download'), page.click(`[data-export=${f}]`)]);
      const p = path.join(served.dir, d.suggestedFilename());
      await d.saveAs(p);
      const bytes = fs.readFileSync(p);
      if (f === 'xlsx') expect(bytes.subarray(0, 2).toString()).toBe('PK');
      else {
        const trials = JSON.parse(bytes.toString('utf8')).trials as { suiteLabel: string | null }[];
        expect(trials).toHaveLength(6);
        expect(trials.map((t) => t.suiteLabel).sort()).toEqual([...Array(4).fill('e2e smoke'), 'slow build', 'slow build']);
      }
    }

    // Delete one trial, with confirmation.
    await page.locator('[data-test=history-table] tbody tr[data-trial]').first().locator('input[type=checkbox]').check();
    await page.click('[data-test=delete-selected]');
    await page.getByText('Delete 1 trial(s)').waitFor();
    await screenshot(page, '10-delete-confirm');
    await page.click('[data-test=confirm]');
    await page.waitForFunction(() => document.querySelectorAll('[data-test=history-table] tbody tr[data-trial]').length === 5);
    await page.click('[data-test=suites-tab]');
    await page.locator('[data-test=suites-table]').waitFor();
    await screenshot(page, '11-suites');
    lap('history');
  });

  it('lays the history out for 1280×800: a failed trial\'s reason is read in full without scrolling sideways', async () => {
    // The suite above stored no failure: its newest trial is shown as one that crashed, on a long scenario and drive name.
    const reason = 'ENGINE_CRASHED: the engine process ended on SIGKILL after 12.3 s (the kernel OOM killer?); its last output: filling the CPU tier';
    await page.route('**/api/invoke/history.list', async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { ok: true; value: { trials: Record<string, unknown>[] } };
      Object.assign(body.value.trials[0], {
        status: 'failed',
        statusReason: `${reason}\nengine stderr: …`,
        scenarioId: 'mlperf-storage-throughput',
        driveLabel: 'Samsung SSD 990 PRO 2TB (nvme0n1, serial …1234)',
        suiteLabel: 'drive A, firmware 2.1 (rebuilt after the power cut)',
        metrics: {},
      });
      await route.fulfill({ response, json: body });
    });
    try {
      await page.click('[data-nav=compare]');
      await page.click('[data-nav=history]');
      await page.locator('[data-test=history-table] .badge.failed').waitFor();
      const layout = await page.evaluate(() => {
        const table = document.querySelector('[data-test=history-table]')!;
        const wrap = table.closest('.table-wrap')!;
        const note = table.querySelector('.reason')!;
        const box = wrap.getBoundingClientRect();
        const text = note.getBoundingClientRect();
        return {
          overflowPx: wrap.scrollWidth - wrap.clientWidth,
          noteInView: text.left >= box.left && text.right <= box.right,
          noteClipped: note.scrollHeight > note.clientHeight + 1 || note.scrollWidth > note.clientWidth + 1,
          noteText: note.textContent,
        };
      });
      await screenshot(page, '07b-history-failed-trial');
      expect(layout).toEqual({ overflowPx: 0, noteInView: true, noteClipped: false, noteText: reason });
    } finally {
      await page.unroute('**/api/invoke/history.list');
    }
  });

  it('changes the display units in Settings and leaves the page clean', async () => {
    await page.click('[data-nav=settings]');
    await page.check('input[name=byteUnits][value=binary]');
    await page.check('input[name=latencyUnit][value=us]');
    await page.click('button:has-text("Save")');
    await page.getByText('Saved.').waitFor();
    await screenshot(page, '12-settings');
    await page.click('[data-nav=history]');
    await page.locator('[data-test=history-table]').waitFor();
    expect(await page.locator('[data-test=history-table]').innerText()).toMatch(/µs/);
    const settings = JSON.parse(fs.readFileSync(path.join(served.dir, 'settings.json'), 'utf8'));
    expect(settings).toMatchObject({ byteUnits: 'binary', latencyUnit: 'us' });
    expect(problems, problems.join('\n')).toEqual([]);
    lap('settings');
  });
});
