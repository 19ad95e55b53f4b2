// End to end: a complete trial the user deleted is run again from History → Suites ("Run deleted
// trials again" under the suite's "N deleted"): asked first, then the Run step follows it, and the
// suite's tallies say where it stands. `kvbench serve` with the real engine, the built renderer in
// Debian's Chromium.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, openServedPage, screenshot, type Served, type ServedPage } from './harness.ts';

interface TrialRow {
  id: number;
  trialIndex: number;
  status: string;
}
interface SuiteRow {
  id: number;
  trialsLeft: number;
  trialsDeleted: number;
  trialCounts: Record<string, number>;
}

describe.skipIf(!HAS_CHROMIUM)('Run deleted trials again', () => {
  let opened: ServedPage | undefined;
  let served: Served;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    opened = await openServedPage();
    ({ served, page, problems } = opened);
  });

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
  const idle = async (): Promise<void> => {
    const deadline = performance.now() + 180_000;
    while ((await invoke<{ state: string }>('suite.status', {})).state !== 'idle') {
      if (performance.now() > deadline) throw new Error('the suite did not end within 180 s');
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  const trialsOf = async (suiteId: number): Promise<TrialRow[]> =>
    (await invoke<{ trials: TrialRow[] }>('history.list', { selection: { suiteIds: [suiteId] }, sort: { key: 'id', dir: 'asc' } })).trials;
  const suiteRow = async (suiteId: number): Promise<SuiteRow> => (await invoke<SuiteRow[]>('suites.list', {})).find((s) => s.id === suiteId)!;

  it('asks, runs the deleted slot again into its suite through the Run step, and the Suites tab counts it complete', async () => {
    const { suiteId } = await invoke<{ suiteId: number }>('suite.start', { cacheDir: path.join(served.dir, 'cache'), profile: 'smoke', trials: 2, durationS: 5, scenarios: ['storage-only'], probe: false });
    await idle();
    const complete = (await trialsOf(suiteId)).filter((t) => t.status === 'complete');
    expect(complete.length, 'no smoke trial completed a request in its 5 s: the machine is too loaded for this test').toBeGreaterThan(0);
    const deleted = complete.at(-1)!;
    await invoke('trials.delete', { ids: [deleted.id] });
    const before = await suiteRow(suiteId);
    expect(before.trialsDeleted).toBe(1);

    await page.click('[data-nav=history]');
    await page.click('[data-test=suites-tab]');
    const row = page.locator(`tr[data-suite="${suiteId}"]`);
    await row.locator('[data-test=deleted]').waitFor();
    expect((await row.locator('[data-test=deleted]').innerText()).trim()).toBe('1 deleted');
    // At 1280 px the action wraps under "1 deleted": the Suites table does not scroll sideways for it.
    const sideways = (): Promise<number> =>
      page.evaluate(() => {
        const wrap = document.querySelector('table[data-test=suites-table]')!.closest<HTMLElement>('.table-wrap')!;
        return wrap.scrollWidth - wrap.clientWidth;
      });
    expect(await sideways()).toBe(0);
    await row.locator('[data-test=rerun-deleted]').click();
    await page.getByText(`Run suite ${suiteId}'s 1 deleted trial(s) again`).waitFor();
    await screenshot(page, 'rerun-deleted-1-confirm');
    await page.click('[data-test=confirm]');

    // The Run step follows the re-run to its end.
    const outcome = page.locator('[data-test=outcome]');
    await outcome.waitFor({ timeout: 180_000 });
    await idle();
    // The slot had one attempt, the one deleted (SQLite may give the new trial the deleted one's id).
    const rerun = (await trialsOf(suiteId)).filter((t) => t.trialIndex === deleted.trialIndex);
    expect(rerun).toHaveLength(1);
    const text = await outcome.innerText();
    expect(text).toContain(`Suite ${suiteId} finished: this resume ran 1 trial`);
    await screenshot(page, 'rerun-deleted-2-ended');

    // The tallies: a complete re-run clears the slot; one that ended partial (a machine too loaded for
    // 5 s) leaves it deleted, and the Run step points to the action again.
    const after = await suiteRow(suiteId);
    if (rerun[0].status === 'complete') {
      expect(after).toMatchObject({ trialsDeleted: 0, trialCounts: { complete: before.trialCounts.complete + 1 } });
      expect(text).not.toContain('Run deleted trials again');
      await page.click('[data-nav=history]');
      await page.click('[data-test=suites-tab]');
      await row.waitFor();
      expect(await row.locator('[data-test=deleted]').count()).toBe(0);
      expect(await row.locator('[data-test=rerun-deleted]').count()).toBe(0);
    } else {
      expect(after.trialsDeleted).toBe(1);
      expect(text).toContain('Run deleted trials again');
    }
    expect(problems).toEqual([]);
  });
});
