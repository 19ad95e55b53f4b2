// The backend behind both the Electron app and `kvbench serve`: every channel through `invoke`
// (validation and errors as data), a suite run with its events, history, reports, exports,
// import and comparison, deletes, and settings — over a real SQLite file.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { HardwareProfile } from '../../../src-shared/domain/hardware.ts';
import { MAX_REQUESTS_RULE } from '../../../src-shared/domain/scenarios.ts';
import { CHANNELS } from '../../../src-shared/ipc/channels.ts';
import { AppEventSchema, CONTRACT, type Result } from '../../../src-shared/ipc/contract.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { trialColumns } from '../../../src-main/export/export-trials.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { parseCsv } from '../../support/csv.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { fakeHardware, kvbenchResults, referenceResultsNew, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { DRIVE_RUN_OPTIONS } from '../export/drive-imports.ts';
import { databaseWithUnversionedImports } from '../store/unversioned-imports.ts';
import { testBackend, type TestBackend } from './backend-harness.ts';
import { downloaded } from '../../support/downloaded.ts';

const open: TestBackend[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.backend.close();
  removeTempDirs();
});

async function make(o: Parameters<typeof testBackend>[0] = {}): Promise<TestBackend> {
  const t = await testBackend(o);
  open.push(t);
  return t;
}

/** A backend whose n-th hardware detection (from 1) is `hardwareFor(n)`, after two storage-only smoke suites ran on it. */
async function twoStorageOnlySuites(hardwareFor: (n: number) => HardwareProfile): Promise<{ t: TestBackend; suiteIds: number[] }> {
  let calls = 0;
  const t = await make({
    detect: async (cd) => {
      const hw = hardwareFor(++calls);
      hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
      return hw;
    },
  });
  const suiteIds: number[] = [];
  for (let i = 0; i < 2; i++) {
    suiteIds.push((ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'] })) as { suiteId: number }).suiteId);
    await t.waitFor('suite.finished');
    t.events.splice(0);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { t, suiteIds };
}

function ok<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** The most files one import takes: it spans many turns of the event loop (temporary copies, reads, batches). */
const fiftyResultsFiles = (): { name: string; text: string }[] =>
  Array.from({ length: 50 }, (_, i) => ({ name: `r${i}.json`, text: JSON.stringify(referenceResultsNew({ tokPerS: 10 + i, storageTokPerS: 5 + i })) }));

/** Trials stored in the database file `db`, read by a connection of its own. */
function trialsIn(db: string): number {
  const s = openStore(db, { readonly: true });
  try {
    return s.listTrials().length;
  } finally {
    s.close();
  }
}

const smokeRequest = (cacheDir: string) => ({ cacheDir, profile: 'smoke' as const, trials: 2, scenarios: ['cpu-only', 'storage-only'], probe: false });

describe('backend', () => {
  it('has a handler for every channel of the contract, and validates every request', async () => {
    const t = await make();
    expect(Object.keys(CONTRACT).sort()).toEqual([...CHANNELS].sort());
    expect(t.backend.channels).toEqual(CHANNELS);
    for (const channel of CHANNELS) {
      const r = await t.backend.invoke(channel, { notAField: 1 });
      expect(r, channel).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    }
    expect(await t.backend.invoke('nope.never', {})).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(await t.backend.invoke('trials.get', { id: 'one' })).toMatchObject({ ok: false, error: { code: 'VALIDATION', message: expect.stringContaining('trials.get') } });
  });

  it('says what it is, and returns errors as data', async () => {
    const t = await make();
    const info = ok(await t.backend.invoke('app.info', {})) as { mode: string; databasePath: string; databaseError: unknown; models: string[] };
    expect(info).toMatchObject({ mode: 'browser', databasePath: t.db, databaseError: null });
    expect(info.models).toContain('llama3.1-8b');
    expect(await t.backend.invoke('trials.get', { id: 999 })).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'no trial 999' } });
    expect(await t.backend.invoke('suite.cancel', {})).toEqual({ ok: true, value: { cancelled: false } });
  });

  it('detects hardware with advice, and plans with an estimate', async () => {
    const t = await make();
    const hw = ok(await t.backend.invoke('hardware.detect', { cacheDir: t.cacheDir })) as { advice: { code: string; message: string }[] };
    expect(hw.advice.map((a) => a.code)).toEqual(expect.arrayContaining(['no-gpu', 'system-disk']));
    expect(hw.advice.find((a) => a.code === 'no-gpu')!.message).toMatch(/^No GPU: GPU scenarios skipped/);
    const plan = ok(await t.backend.invoke('suite.plan', smokeRequest(t.cacheDir))) as { plan: { runs: unknown[]; estimate: { trialCount: number; fits: boolean } } };
    expect(plan.plan.runs).toHaveLength(2);
    expect(plan.plan.estimate).toMatchObject({ trialCount: 4, fits: true });
    expect(await t.backend.invoke('suite.plan', { ...smokeRequest(t.cacheDir), scenarios: ['warp-drive'] })).toMatchObject({ ok: false, error: { code: 'VALIDATION', message: expect.stringContaining('warp-drive') } });
    // The storage cap is GiB, and the request says so (review rev7 #12: it was storageCapacityGb);
    // the runs carry it under the reference's --storage-capacity-gb name.
    const capped = ok(await t.backend.invoke('suite.plan', { ...smokeRequest(t.cacheDir), storageCapacityGib: 0.5 })) as { plan: { runs: { options: Record<string, unknown> }[] } };
    expect(capped.plan.runs.map((r) => r.options.storageCapacityGb)).toEqual([0.5, 0.5]);
    expect(await t.backend.invoke('suite.plan', { ...smokeRequest(t.cacheDir), storageCapacityGb: 0.5 })).toMatchObject({ ok: false, error: { code: 'VALIDATION', message: expect.stringContaining('storageCapacityGb') } });
  });

  it('runs a suite in the background with its events, one at a time, and stores every trial', async () => {
    const t = await make();
    const started = ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), label: 'unit' })) as { suiteId: number };
    expect(started.suiteId).toBeGreaterThan(0);
    expect(await t.backend.invoke('suite.start', smokeRequest(t.cacheDir))).toMatchObject({ ok: false, error: { code: 'BUSY' } });
    const status = ok(await t.backend.invoke('suite.status', {})) as { state: string; suiteId: number; plan: unknown };
    expect(status).toMatchObject({ state: 'running', suiteId: started.suiteId });
    expect(status.plan).not.toBeNull();
    await t.waitFor('suite.finished');
    const types = t.events.map((e) => e.type);
    expect(types[0]).toBe('suite.preparationProgressed');
    for (const ty of ['suite.started', 'suite.trialStarted', 'suite.trialProgressed', 'suite.trialFinished', 'history.changed']) expect(types).toContain(ty);
    expect(t.events.filter((e) => e.type === 'suite.trialFinished')).toHaveLength(4);
    // Every event the backend really sent is described whole by the schema the page checks it with.
    for (const e of t.events) expect(AppEventSchema.parse(JSON.parse(JSON.stringify(e))), e.type).toEqual(e);
    await new Promise((r) => setTimeout(r, 20));
    expect(ok(await t.backend.invoke('suite.status', {}))).toMatchObject({ state: 'idle' });
    expect(t.engineCalls.map((o) => o.model)).toEqual(['tiny-1b', 'tiny-1b', 'tiny-1b', 'tiny-1b']);

    const list = ok(await t.backend.invoke('history.list', { selection: { suiteIds: [started.suiteId] }, sort: { key: 'metric:wall_clock_throughput_tok_per_s', dir: 'desc' } })) as {
      trials: { metrics: Record<string, number>; status: string }[];
      total: number;
    };
    expect(list.total).toBe(4);
    const tput = list.trials.map((x) => x.metrics.wall_clock_throughput_tok_per_s);
    expect(tput).toEqual([...tput].sort((a, b) => b - a));
    const page = ok(await t.backend.invoke('history.list', { selection: {}, limit: 3, offset: 3 })) as { trials: unknown[]; total: number };
    expect(page).toMatchObject({ total: 4 });
    expect(page.trials).toHaveLength(1);

    const report = ok(await t.backend.invoke('report.build', { selection: { suiteIds: [started.suiteId] } })) as {
      title: string;
      trialCount: number;
      tiers: { baseline: string; rows: { scenarioId: string; speedupWallClock: number | null }[] };
      report: { scenarios: { scenarioId: string; trialIds: number[] }[] };
    };
    expect(report.title).toBe(`Suite ${started.suiteId} · smoke · unit`);
    expect(report.trialCount).toBe(4);
    expect(report.tiers.baseline).toBe('storage-only');
    expect(report.tiers.rows.find((r) => r.scenarioId === 'storage-only')!.speedupWallClock).toBe(1);
    expect(report.report.scenarios.map((s) => [s.scenarioId, s.trialIds.length])).toEqual([['cpu-only', 2], ['storage-only', 2]]);

    const csv = ok(await t.backend.invoke('export.create', { selection: { suiteIds: [started.suiteId] }, format: 'csv' })) as { fileName: string; mimeType: string; trialCount: number };
    expect(csv).toMatchObject({ mimeType: 'text/csv', trialCount: 4 });
    expect(csv.fileName).toMatch(new RegExp(`^kvbench-suite-${started.suiteId}-\\d{8}-\\d{6}\\.csv$`));
    const lines = downloaded(t.backend, csv).toString('utf8').trimEnd().split('\r\n');
    expect(lines).toHaveLength(5);
    const xlsx = ok(await t.backend.invoke('export.create', { selection: {}, format: 'xlsx' })) as object;
    expect(downloaded(t.backend, xlsx).subarray(0, 2).toString()).toBe('PK');
  });

  it('answers a report or export of a suite that is not in the database with NOT_FOUND, not an empty selection', async () => {
    const t = await make();
    const started = ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'] })) as { suiteId: number };
    await t.waitFor('suite.finished');
    const unknown = started.suiteId + 41;
    expect(await t.backend.invoke('report.build', { selection: { suiteIds: [unknown] } })).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: `Suite ${unknown} not found: deleted, or in another database than the one open (see Settings)` },
    });
    expect(await t.backend.invoke('report.build', { selection: { suiteIds: [started.suiteId, unknown] } })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND', message: expect.stringContaining(`Suite ${unknown} not found`) } });
    for (const format of ['csv', 'xlsx', 'json'] as const) {
      expect(await t.backend.invoke('export.create', { selection: { suiteIds: [unknown] }, format }), format).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    }
    // A suite that exists, and a selection naming none, are reported as before.
    expect(ok(await t.backend.invoke('report.build', { selection: { suiteIds: [started.suiteId] } }))).toMatchObject({ trialCount: 2 });
    expect(ok(await t.backend.invoke('report.build', { selection: { statuses: ['failed'] } }))).toMatchObject({ trialCount: 0 });
    ok(await t.backend.invoke('suites.delete', { id: started.suiteId }));
    expect(await t.backend.invoke('report.build', { selection: { suiteIds: [started.suiteId] } })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('cancels a running suite: the trial keeps its partial results as aborted', async () => {
    const t = await make({ behaviours: ['hang'] });
    const { suiteId } = ok(await t.backend.invoke('suite.start', smokeRequest(t.cacheDir))) as { suiteId: number };
    await t.waitFor('suite.trialProgressed');
    expect(ok(await t.backend.invoke('suite.cancel', {}))).toEqual({ cancelled: true });
    const fin = await t.waitFor('suite.finished');
    expect(fin).toMatchObject({ status: 'cancelled', counts: { aborted: 1 } });
    const trials = ok(await t.backend.invoke('history.list', { selection: { suiteIds: [suiteId] } })) as { trials: { status: string }[] };
    expect(trials.trials.map((x) => x.status)).toEqual(['aborted']);
    const suites = ok(await t.backend.invoke('suites.list', {})) as { id: number; status: string }[];
    expect(suites.find((s) => s.id === suiteId)!.status).toBe('cancelled');
    const [trial] = (ok(await t.backend.invoke('history.list', { selection: { suiteIds: [suiteId] } })) as { trials: { statusReason: string | null }[] }).trials;
    expect(trial.statusReason).toBe('cancelled by the user; partial results kept');
  });

  for (const [mode, cause] of [
    ['browser', 'stopped: kvbench serve shut down'],
    ['electron', 'stopped: the kvbench app was closed'],
  ] as const) {
    it(`${mode === 'browser' ? 'kvbench serve' : 'the app'} shutting down during a trial records that, not a cancel by the user`, async () => {
      const t = await testBackend({ behaviours: ['hang'], mode });
      const { suiteId } = ok(await t.backend.invoke('suite.start', smokeRequest(t.cacheDir))) as { suiteId: number };
      await t.waitFor('suite.trialProgressed');
      await t.backend.close(); // what serve's SIGTERM/SIGINT handler and the app's quit do
      const store = openStore(t.db, { readonly: true });
      try {
        const trials = store.listTrials({ suiteIds: [suiteId] });
        expect(trials.map((x) => [x.status, x.statusReason])).toEqual([['aborted', `${cause}; partial results kept`]]);
        expect(store.getSuite(suiteId)!.status).toBe('cancelled');
      } finally {
        store.close();
      }
    });
  }

  it('refuses the drive probe (hardware.detect with probe) while a suite runs, which it would disturb; plain detection stays allowed', async () => {
    const probes: boolean[] = [];
    const t = await make({
      behaviours: ['hang'],
      detect: async (cd, o) => {
        probes.push(o.probe);
        const hw = fakeHardware({ hostname: 'lab-a', probe: true });
        hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
        return hw;
      },
    });
    ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), probe: false }));
    await t.waitFor('suite.trialProgressed');
    const before = probes.length;
    expect(await t.backend.invoke('hardware.detect', { cacheDir: t.cacheDir, probe: true })).toEqual({
      ok: false,
      error: { code: 'BUSY', message: 'a suite is running: probe the drive after it has finished (detection without the probe is allowed)' },
    });
    expect(probes.slice(before), 'no probe ran').toEqual([]);
    ok(await t.backend.invoke('hardware.detect', { cacheDir: t.cacheDir }));
    expect(probes.slice(before)).toEqual([false]);
    ok(await t.backend.invoke('suite.cancel', {}));
    await t.waitFor('suite.finished');
    // The run is let go just after its last event.
    while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 10));
    ok(await t.backend.invoke('hardware.detect', { cacheDir: t.cacheDir, probe: true }));
    expect(probes.slice(before)).toEqual([false, true]);
  });

  it('resumes a suite probing the drive only as it was planned, and not at all with nothing left to run', async () => {
    const probes: boolean[] = [];
    const t = await make({
      behaviours: ['hang', 'complete'],
      detect: async (cd, o) => {
        probes.push(o.probe);
        const hw = fakeHardware({ hostname: 'lab-a', probe: o.probe });
        hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
        return hw;
      },
    });
    const { suiteId } = ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'] })) as { suiteId: number };
    await t.waitFor('suite.trialProgressed');
    const finished = async (): Promise<void> => {
      await t.waitFor('suite.finished');
      t.events.splice(0);
      while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 5));
    };
    ok(await t.backend.invoke('suite.cancel', {}));
    await finished();
    ok(await t.backend.invoke('suite.resume', { suiteId }));
    await finished();
    ok(await t.backend.invoke('suite.resume', { suiteId })); // nothing left
    await finished();
    expect(probes).toEqual([false, false, false]); // planned with probe: false (smokeRequest)
  });

  it('suite.plan and suite.start take maxRequests as the CLI takes --max-requests: stored in every run of the plan, kept by a resume, another configuration; a bad count refused in the CLI\'s words', async () => {
    const t = await make({ behaviours: ['hang', 'complete'] });
    const request = { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'], maxRequests: 10 };
    const planned = ok(await t.backend.invoke('suite.plan', request)) as { plan: { runs: { options: Record<string, unknown> }[]; notes: string[] } };
    expect(planned.plan.runs.map((r) => [r.options.maxRequests, r.options.duration])).toEqual([[10, 5]]);
    expect(planned.plan.notes).toContain('each trial ends once 10 requests have completed in its measured window, or at its 5 s if that comes first: the estimate is the longest it can take');
    for (const bad of [-1, 2.5, '3', null]) {
      for (const channel of ['suite.plan', 'suite.start'] as const) {
        const r = await t.backend.invoke(channel, { ...request, maxRequests: bad });
        expect(r, `${channel} ${String(bad)}`).toMatchObject({ ok: false, error: { code: 'VALIDATION', message: expect.stringContaining(`${MAX_REQUESTS_RULE}, got ${JSON.stringify(bad)}`) } });
      }
    }
    expect(ok(await t.backend.invoke('suite.status', {}))).toMatchObject({ state: 'idle' });

    const finished = async (): Promise<void> => {
      await t.waitFor('suite.finished');
      t.events.splice(0);
      while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 5));
    };
    const { suiteId } = ok(await t.backend.invoke('suite.start', request)) as { suiteId: number };
    await t.waitFor('suite.trialProgressed');
    ok(await t.backend.invoke('suite.cancel', {}));
    await finished();
    ok(await t.backend.invoke('suite.resume', { suiteId }));
    await finished();
    // The cancelled trial, then the two a resume ran: each engine was told to end after 10 requests.
    expect(t.engineCalls.map((o) => [o.maxRequests, o.duration])).toEqual([[10, 5], [10, 5], [10, 5]]);

    // A suite of the same scenario without it: another configuration, as the CLI's, so its trials never pool with these.
    const plain = ok(await t.backend.invoke('suite.start', { ...request, maxRequests: undefined })) as { suiteId: number };
    await finished();
    expect(t.engineCalls.at(-1)).toMatchObject({ maxRequests: 0 });
    const report = ok(await t.backend.invoke('report.build', { selection: { suiteIds: [suiteId, plain.suiteId] } })) as {
      report: { scenarios: { scenarioId: string; configKey: string; configDescription: string; trialIds: number[] }[] };
    };
    const groups = report.report.scenarios.map((g) => [g.scenarioId, g.trialIds.length, /max 10 requests/.test(g.configDescription)]);
    expect(groups.sort()).toEqual([['storage-only', 2, false], ['storage-only', 2, true]]);
    expect(new Set(report.report.scenarios.map((g) => g.configKey)).size).toBe(2);
  });

  it('a finished suite with a partial trial (a full disk) lists a trial left, and Resume runs just that one, as the CLI does', async () => {
    const t = await make({ behaviours: ['disk-full', 'complete'] });
    const { suiteId } = ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'] })) as { suiteId: number };
    expect(await t.waitFor('suite.finished')).toMatchObject({ status: 'finished', counts: { complete: 1, partial: 1 } });
    t.events.splice(0);
    while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 5));
    const suite = async () => (ok(await t.backend.invoke('suites.list', {})) as { id: number; status: string; trialsLeft: number }[]).find((s) => s.id === suiteId)!;
    expect(await suite()).toMatchObject({ status: 'finished', trialsLeft: 1 });
    ok(await t.backend.invoke('suite.resume', { suiteId }));
    expect(await t.waitFor('suite.started')).toMatchObject({ resumed: true, total: 1 });
    expect(await t.waitFor('suite.finished')).toMatchObject({ counts: { complete: 1, partial: 0 } });
    expect(await suite()).toMatchObject({ trialsLeft: 0 });
    const report = ok(await t.backend.invoke('report.build', { selection: { suiteIds: [suiteId] } })) as { report: { scenarios: { trialIds: number[]; excluded: { supersededBy: unknown }[] }[] } };
    expect(report.report.scenarios[0].trialIds).toHaveLength(2);
    expect(report.report.scenarios[0].excluded).toEqual([expect.objectContaining({ status: 'partial', attempt: 1, supersededBy: expect.objectContaining({ attempt: 2, status: 'complete' }) })]);
  });

  it('runs a deleted trial again through Resume\'s request with rerunDeleted, into the same suite; a plain Resume does not', async () => {
    const t = await make();
    const { suiteId } = ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'] })) as { suiteId: number };
    expect(await t.waitFor('suite.finished')).toMatchObject({ counts: { complete: 2 } });
    const idle = async (): Promise<void> => {
      t.events.splice(0);
      while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 5));
    };
    await idle();
    const suite = async () =>
      (ok(await t.backend.invoke('suites.list', {})) as { id: number; trialsLeft: number; trialsDeleted: number; trialCounts: Record<string, number> }[]).find((x) => x.id === suiteId)!;
    const second = (ok(await t.backend.invoke('history.list', { selection: { suiteIds: [suiteId] }, sort: { key: 'id', dir: 'asc' } })) as { trials: { id: number }[] }).trials[1];
    ok(await t.backend.invoke('trials.delete', { ids: [second.id] }));
    expect(await suite()).toMatchObject({ trialsLeft: 0, trialsDeleted: 1 });

    ok(await t.backend.invoke('suite.resume', { suiteId }));
    expect(await t.waitFor('suite.started')).toMatchObject({ resumed: true, total: 0 });
    await t.waitFor('suite.finished');
    await idle();
    ok(await t.backend.invoke('suite.resume', { suiteId, rerunDeleted: true }));
    expect(await t.waitFor('suite.started')).toMatchObject({ suiteId, resumed: true, total: 1 });
    expect(await t.waitFor('suite.trialFinished')).toMatchObject({ scenarioId: 'storage-only', trialIndex: 1, status: 'complete' });
    expect(await t.waitFor('suite.finished')).toMatchObject({ counts: { complete: 1 } });
    await idle();
    expect(await suite()).toMatchObject({ trialsLeft: 0, trialsDeleted: 0, trialCounts: { complete: 2 } });
  });

  it('reports a plan that does not fit as INSUFFICIENT_SPACE, with a suite.failed event', async () => {
    const t = await make({
      detect: async (cd) => {
        const { fakeHardware } = await import('../store/fixtures.ts');
        const hw = fakeHardware({ freeGiB: 0.5 });
        hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
        return hw;
      },
    });
    const r = await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), profile: 'quick' });
    expect(r).toMatchObject({ ok: false, error: { code: 'INSUFFICIENT_SPACE' } });
    expect((await t.waitFor('suite.failed')) as unknown).toMatchObject({ error: { code: 'INSUFFICIENT_SPACE' } });
    expect(ok(await t.backend.invoke('suite.status', {}))).toMatchObject({ state: 'idle' });
  });

  it('removes the cache directory levels it created when the plan is refused or the start is cancelled before the suite starts, as the CLI does', async () => {
    let detected!: () => void;
    let release: () => void = () => {};
    const t = await make({
      detect: async (cd, o) => {
        detected();
        // The second start waits here until the test has cancelled it.
        if (o.profile === 'smoke') await new Promise<void>((r) => (release = r));
        const hw = fakeHardware({ freeGiB: 0.5 });
        hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
        return hw;
      },
    });
    const fresh = path.join(t.dir, 'new', 'cache');
    let seen = new Promise<void>((r) => (detected = r));
    const refused = await t.backend.invoke('suite.start', { ...smokeRequest(fresh), profile: 'quick' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'INSUFFICIENT_SPACE' } });
    await seen;
    expect(fs.existsSync(path.join(t.dir, 'new')), 'no level of the refused suite\'s cache directory is left').toBe(false);

    seen = new Promise<void>((r) => (detected = r));
    const cancelled = t.backend.invoke('suite.start', smokeRequest(fresh));
    await seen;
    expect(fs.existsSync(fresh), 'created for the detection').toBe(true);
    ok(await t.backend.invoke('suite.cancel', {}));
    release();
    expect(await cancelled).toMatchObject({ ok: false, error: { code: 'CANCELLED' } });
    expect(fs.existsSync(path.join(t.dir, 'new'))).toBe(false);

    // A directory that was there already stays, also when the plan is refused.
    const refusedInExisting = await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), profile: 'quick' });
    expect(refusedInExisting).toMatchObject({ ok: false, error: { code: 'INSUFFICIENT_SPACE' } });
    expect(fs.existsSync(t.cacheDir)).toBe(true);
  });

  it('removes the cache directory levels a suite created when it ends, where empty; a resume creates and removes them again', async () => {
    const t = await make({ behaviours: ['complete', 'disk-full', 'hang', 'complete'] });
    const idle = async (): Promise<void> => {
      await t.waitFor('suite.finished');
      t.events.splice(0);
      while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 5));
    };
    const fresh = path.join(t.dir, 'new', 'sub');
    const { suiteId } = ok(await t.backend.invoke('suite.start', { ...smokeRequest(fresh), scenarios: ['storage-only'] })) as { suiteId: number };
    await idle();
    expect(fs.existsSync(path.join(t.dir, 'new')), 'no level the finished suite created is left').toBe(false);
    // Its partial trial is resumed: the directory is made again for it, and goes again, also when the resume is cancelled.
    ok(await t.backend.invoke('suite.resume', { suiteId }));
    await t.waitFor('suite.trialProgressed');
    expect(fs.existsSync(fresh)).toBe(true);
    ok(await t.backend.invoke('suite.cancel', {}));
    await idle();
    expect(fs.existsSync(path.join(t.dir, 'new'))).toBe(false);
    // Only the levels it created: the existing folder they were made in stays, with what is in it.
    fs.mkdirSync(path.join(t.dir, 'kept'));
    fs.writeFileSync(path.join(t.dir, 'kept', 'notes.txt'), 'mine\n');
    ok(await t.backend.invoke('suite.start', { ...smokeRequest(path.join(t.dir, 'kept', 'sub', 'deeper')), scenarios: ['storage-only'] }));
    await idle();
    expect(fs.readdirSync(path.join(t.dir, 'kept'))).toEqual(['notes.txt']);
    // A directory that was there before the suite stays, empty or not.
    ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'] }));
    await idle();
    expect(fs.existsSync(t.cacheDir)).toBe(true);
  });

  it('refuses a system directory behind a symbolic link before creating anything in it', async () => {
    const t = await make();
    const link = path.join(path.dirname(t.cacheDir), 'shm-link');
    fs.symlinkSync('/dev/shm', link);
    const target = path.join(link, `kvbench-backend-${process.pid}`);
    const r = await t.backend.invoke('suite.start', smokeRequest(target));
    expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION', message: expect.stringContaining('cannot be a system directory: /dev/shm') } });
    expect(fs.existsSync(`/dev/shm/kvbench-backend-${process.pid}`)).toBe(false);
    expect(ok(await t.backend.invoke('suite.status', {}))).toMatchObject({ state: 'idle' });
  });

  it('hardware.detect, suite.plan and suite.resume refuse a system directory before detection writes its probe files there', async () => {
    const detected: string[] = [];
    const t = await make({
      behaviours: ['crash'],
      detect: async (cd) => {
        detected.push(cd);
        const { fakeHardware } = await import('../store/fixtures.ts');
        const hw = fakeHardware({ hostname: 'lab-a', probe: true });
        hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
        return hw;
      },
    });
    const link = path.join(t.dir, 'cache-link');
    fs.symlinkSync('/dev/shm', link);
    for (const cacheDir of ['/etc', '/boot/kvbench', link]) {
      const refused = { ok: false, error: { code: 'VALIDATION', message: expect.stringMatching(/^the cache directory cannot be a system directory: \/(etc|boot|dev)/) } };
      expect(await t.backend.invoke('hardware.detect', { cacheDir, probe: true }), cacheDir).toMatchObject(refused);
      expect(await t.backend.invoke('suite.plan', smokeRequest(cacheDir)), cacheDir).toMatchObject(refused);
    }
    expect(detected).toEqual([]);
    expect(fs.existsSync('/boot/kvbench')).toBe(false);

    // A suite whose directory is a link, repointed at a system directory before it is resumed.
    fs.rmSync(link);
    fs.symlinkSync(t.cacheDir, link);
    const { suiteId } = ok(await t.backend.invoke('suite.start', smokeRequest(link))) as { suiteId: number };
    await t.waitFor('suite.finished');
    while ((ok(await t.backend.invoke('suite.status', {})) as { state: string }).state !== 'idle') await new Promise((r) => setTimeout(r, 5));
    fs.rmSync(link);
    fs.symlinkSync('/dev/shm', link);
    expect(await t.backend.invoke('suite.resume', { suiteId })).toMatchObject({ ok: false, error: { code: 'VALIDATION', message: expect.stringContaining('cannot be a system directory: /dev/shm') } });
    expect(detected).toHaveLength(1);
  });

  it('says a file given as the cache directory is a file, before detection, planning or a suite starts', async () => {
    const detected: string[] = [];
    const { fakeHardware } = await import('../store/fixtures.ts');
    const t = await make({
      detect: async (cd) => {
        detected.push(cd);
        return fakeHardware({ hostname: 'lab-a' });
      },
    });
    const file = path.join(t.dir, 'afile');
    fs.writeFileSync(file, 'not a directory\n');
    const isAFile = { ok: false, error: { code: 'VALIDATION', message: `${file} is a file: the cache directory must be a directory (one that does not exist yet is created)` } };
    expect(await t.backend.invoke('hardware.detect', { cacheDir: file })).toEqual(isAFile);
    expect(await t.backend.invoke('suite.plan', smokeRequest(file))).toEqual(isAFile);
    expect(await t.backend.invoke('suite.start', smokeRequest(file))).toEqual(isAFile);
    expect(await t.backend.invoke('hardware.detect', { cacheDir: path.join(file, 'cache') })).toEqual({
      ok: false,
      error: { code: 'VALIDATION', message: `${file} is a file, so the cache directory ${path.join(file, 'cache')} cannot be created in it` },
    });
    expect(detected).toEqual([]);
    expect(fs.readFileSync(file, 'utf8')).toBe('not a directory\n');
  });

  it('report and export: one group per system, each against the probe stored with its own trials', async () => {
    const { fakeHardware } = await import('../store/fixtures.ts');
    let calls = 0;
    const t = await make({
      detect: async (cd) => {
        // The first suite runs on lab-a (drive 2 GB/s), the second on lab-b (drive 4 GB/s).
        calls += 1;
        const hw = calls === 1 ? fakeHardware({ hostname: 'lab-a', probe: true }) : fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab-b', probe: true });
        if (calls > 1) hw.cacheDir!.bandwidth = { ...hw.cacheDir!.bandwidth!, readBytesPerSec: 4e9 };
        hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
        return hw;
      },
    });
    for (let i = 0; i < 2; i++) {
      ok(await t.backend.invoke('suite.start', { ...smokeRequest(t.cacheDir), scenarios: ['storage-only'] }));
      await t.waitFor('suite.finished');
      t.events.splice(0);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(calls).toBe(2);
    type Row = { systemLabel: string; storageReadBytesPerS: number; storageReadEfficiency: number };
    const own = (rows: Row[]) => rows.map((r) => [r.systemLabel, r.storageReadEfficiency]);
    const expected = (rows: Row[]) => rows.map((r) => [r.systemLabel, r.storageReadBytesPerS / (r.systemLabel === 'lab-a' ? 2e9 : 4e9)]);
    const report = ok(await t.backend.invoke('report.build', { selection: {} })) as { tiers: { rows: Row[] }; report: { scenarios: { systemLabel: string; trialIds: number[] }[] } };
    expect(report.report.scenarios.map((s) => [s.systemLabel, s.trialIds.length])).toEqual([['lab-a', 2], ['lab-b', 2]]);
    expect(own(report.tiers.rows)).toEqual(expected(report.tiers.rows));
    const json = ok(await t.backend.invoke('export.create', { selection: {}, format: 'json' })) as object;
    const rows = (JSON.parse(downloaded(t.backend, json).toString('utf8')) as { report: { tiers: { rows: Row[] } } }).report.tiers.rows;
    expect(rows.map((r) => r.systemLabel)).toEqual(['lab-a', 'lab-b']);
    expect(own(rows)).toEqual(expected(rows));
  });

  it('report and export against a stated (datasheet) bandwidth; refused as data for a selection over several drives', async () => {
    const { fakeHardware } = await import('../store/fixtures.ts');
    // Two suites on two systems (and drives), each probed at read 2 GB/s, write 1.5 GB/s.
    const { t, suiteIds } = await twoStorageOnlySuites((n) =>
      n === 1 ? fakeHardware({ hostname: 'lab-a', probe: true }) : fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab-b', probe: true }),
    );
    type Row = { storageReadBytesPerS: number; storageWriteBytesPerS: number; storageReadEfficiency: number; storageWriteEfficiency: number; limits: { readBytesPerS: number; source: string } };
    type Built = { tiers: { rows: Row[]; probe: { readBytesPerS: number; writeBytesPerS: number; source: string } } };
    const one = { suiteIds: [suiteIds[0]] };

    // Read stated at 8 GB/s: read efficiency against it, write still against the probe's 1.5 GB/s.
    const probed = ok(await t.backend.invoke('report.build', { selection: one })) as Built;
    const built = ok(await t.backend.invoke('report.build', { selection: one, stated: { readBytesPerS: 8e9 } })) as Built;
    const [p, r] = [probed.tiers.rows[0], built.tiers.rows[0]];
    expect(p.storageReadEfficiency).toBeCloseTo(p.storageReadBytesPerS / 2e9, 12);
    expect(r.storageReadEfficiency).toBeCloseTo(r.storageReadBytesPerS / 8e9, 12);
    expect(r.storageReadEfficiency).not.toBeCloseTo(p.storageReadEfficiency, 6);
    expect(r.storageWriteEfficiency).toBeCloseTo(r.storageWriteBytesPerS / 1.5e9, 12);
    expect(built.tiers.probe).toMatchObject({ readBytesPerS: 8e9, writeBytesPerS: 1.5e9 });
    expect(built.tiers.probe.source).toMatch(/^stated by the user \(read 8\.00 GB\/s\); the other direction: kvbench probe/);
    // Both directions stated.
    const both = ok(await t.backend.invoke('report.build', { selection: one, stated: { readBytesPerS: 8e9, writeBytesPerS: 4e9 } })) as Built;
    expect(both.tiers.rows[0].storageWriteEfficiency).toBeCloseTo(both.tiers.rows[0].storageWriteBytesPerS / 4e9, 12);
    expect(both.tiers.probe.source).toBe('stated by the user (read 8.00 GB/s, write 4.00 GB/s)');

    // The export of the same request follows the same stated values (the JSON carries the tier comparison).
    const json = ok(await t.backend.invoke('export.create', { selection: one, format: 'json', stated: { readBytesPerS: 8e9 } })) as object;
    const exported = (JSON.parse(downloaded(t.backend, json).toString('utf8')) as { report: { tiers: Built['tiers'] } }).report.tiers;
    expect(exported.rows[0].storageReadEfficiency).toBe(r.storageReadEfficiency);
    expect(exported.probe.source).toBe(built.tiers.probe.source);

    // Several systems and drives: refused as data (VALIDATION), naming what to do; export likewise.
    expect(await t.backend.invoke('report.build', { selection: {}, stated: { readBytesPerS: 8e9 } })).toEqual({
      ok: false,
      error: { code: 'VALIDATION', message: expect.stringMatching(/stated bandwidth describes one drive.*several systems or drives: open the report of one suite/) },
    });
    // The same refusal, not an EXPORT_FAILED: nothing went wrong making a file, the request was refused.
    expect(await t.backend.invoke('export.create', { selection: {}, format: 'xlsx', stated: { writeBytesPerS: 4e9 } })).toEqual({
      ok: false,
      error: { code: 'VALIDATION', message: expect.stringMatching(/^a stated bandwidth describes one drive.*several systems or drives: open the report of one suite/) },
    });
    expect(await t.backend.invoke('export.create', { selection: { systemIds: ['no-such-system'] }, format: 'csv' })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    // No direction given is no statement: each drive against its own probe, as without it.
    const all = ok(await t.backend.invoke('report.build', { selection: {}, stated: { readBytesPerS: null } })) as Built;
    expect(all.tiers.rows.map((x) => x.limits.readBytesPerS)).toEqual([2e9, 2e9]);

    // Only positive finite bytes/s pass the contract.
    for (const bad of [0, -1e9, '7', Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(await t.backend.invoke('report.build', { selection: one, stated: { readBytesPerS: bad } }), String(bad)).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    }
    expect(await t.backend.invoke('report.build', { selection: one, stated: { readGbps: 7 } })).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
  });

  it('deleting trials and suites leaves no hardware snapshot behind that no trial refers to', async () => {
    const { openStore } = await import('../../../src-main/store/open-store.ts');
    const { fakeHardware } = await import('../store/fixtures.ts');
    const { t, suiteIds: suites } = await twoStorageOnlySuites((n) => fakeHardware({ hostname: `lab-${n}` })); // each suite its own snapshot
    const hostnames = (): string[] => {
      const s = openStore(t.db, { readonly: true });
      try {
        return (s.db.prepare('SELECT profile_json FROM hardware_snapshots').all() as { profile_json: string }[]).map((r) => JSON.parse(r.profile_json).system.hostname).sort();
      } finally {
        s.close();
      }
    };
    expect(hostnames()).toEqual(['lab-1', 'lab-2']);
    ok(await t.backend.invoke('suites.delete', { id: suites[0] }));
    expect(hostnames()).toEqual(['lab-2']);
    const trials = (ok(await t.backend.invoke('history.list', { selection: { suiteIds: [suites[1]] } })) as { trials: { id: number }[] }).trials.map((x) => x.id);
    expect(await t.backend.invoke('trials.delete', { ids: [...trials, 99999] })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(hostnames()).toEqual(['lab-2']);
    expect(ok(await t.backend.invoke('trials.delete', { ids: trials }))).toEqual({ deleted: 2 });
    expect(hostnames()).toEqual([]);
  });

  it('imports reference results as another system, compares, and deletes trials and suites', async () => {
    const t = await make();
    ok(await t.backend.invoke('suite.start', smokeRequest(t.cacheDir)));
    await t.waitFor('suite.finished');
    const modified = Date.UTC(2026, 0, 9, 12, 0, 0);
    const files = [1, 2].map((i) => ({ name: `../../etc/slow_${i}.json`, text: JSON.stringify(referenceResultsNew({ tokPerS: 10 * i, storageTokPerS: 5 * i })), lastModifiedMs: modified }));
    const imp = ok(
      await t.backend.invoke('import.results', {
        files: [...files, { name: 'broken.json', text: '{not json' }],
        systemLabel: 'slow-box',
        scenarioId: 'storage-only',
        runFlags: '--model tiny-1b --num-users 4 --duration 5 --gpu-mem-gb 0 --cpu-mem-gb 0.125 --generation-mode fast --seed 42',
      }),
    ) as { imported: { file: string; status: string; configKnown: boolean }[]; errors: { file: string }[]; systemId: string };
    expect(imp.imported.map((f) => [f.file, f.status, f.configKnown])).toEqual([
      ['../../etc/slow_1.json', 'complete', true],
      ['../../etc/slow_2.json', 'complete', true],
    ]);
    expect(imp.errors.map((e) => e.file)).toEqual(['broken.json']);
    // The trial says where the file came from (its name on the user's machine, and when it was
    // made there), not the temporary copy the server imported it from, which is gone.
    const importedTrial = ok(await t.backend.invoke('trials.get', { id: (imp.imported[0] as unknown as { trialId: number }).trialId })) as { trial: { sourceFile: string | null; startedAt: string } };
    expect(importedTrial.trial.sourceFile).toBe('uploaded: ../../etc/slow_1.json');
    expect(importedTrial.trial.startedAt).toBe(new Date(modified).toISOString());
    expect(await t.backend.invoke('import.results', { files, systemLabel: 'x', runFlags: '--num-users lots' })).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });

    const facets = ok(await t.backend.invoke('history.facets', {})) as { systems: { id: string; label: string }[]; scenarioIds: string[]; models: string[]; trialCount: number };
    expect(facets.systems.map((s) => s.label).sort()).toEqual(['lab-a', 'slow-box']);
    expect(facets.scenarioIds).toEqual(['cpu-only', 'storage-only']);
    expect(facets.trialCount).toBe(6);
    const here = facets.systems.find((s) => s.label === 'lab-a')!.id;
    const cmp = ok(await t.backend.invoke('report.compare', { kind: 'system', a: here, b: 'slow-box' })) as { matched: number; metrics: { metric: { key: string }; winRateA: number | null }[] };
    expect(cmp.matched).toBe(1);
    expect(cmp.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.winRateA).toBe(1);
    // A system against itself is no comparison: refused, not "≈ noise" on every metric.
    expect(await t.backend.invoke('report.compare', { kind: 'system', a: here, b: 'lab-a' })).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION', message: `A and B are the same system (lab-a, ${here}): compare two different systems` },
    });

    const slow = ok(await t.backend.invoke('history.list', { selection: { systemIds: [imp.systemId] } })) as { trials: { id: number; suiteId: number }[] };
    expect(ok(await t.backend.invoke('trials.delete', { ids: [slow.trials[0].id] }))).toEqual({ deleted: 1 });
    expect(await t.backend.invoke('trials.delete', { ids: [slow.trials[0].id] })).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(ok(await t.backend.invoke('suites.delete', { id: slow.trials[1].suiteId }))).toEqual({ deleted: true });
    expect((ok(await t.backend.invoke('history.list', { selection: {} })) as { total: number }).total).toBe(4);
    expect(t.events.filter((e) => e.type === 'history.changed').length).toBeGreaterThanOrEqual(3);
  });

  it('compares, reports and exports with flagged trials left out on request, each answer within the contract; by default they count', async () => {
    const t = await make();
    const results = (tokPerS: number, ramBacked = false): string => {
      const r = kvbenchResults({ tokPerS, durationS: 4 });
      r.kvbench.run_options = { ...DRIVE_RUN_OPTIONS };
      if (ramBacked) r.kvbench.tiers.storage.ram_backed = true;
      return JSON.stringify(r);
    };
    const importDrive = async (drive: string, runs: [number, boolean][]) => {
      const files = runs.map(([tokPerS, ram], i) => ({ name: `${drive}-${i}.json`, text: results(tokPerS, ram) }));
      ok(await t.backend.invoke('import.results', { files, systemLabel: 'rig', driveLabel: drive, scenarioId: 'storage-only' }));
    };
    await importDrive('A-disk', [[100, false], [102, false], [101, false], [300, true]]);
    await importDrive('B-disk', [[90, false], [91, false]]);
    type Compared = { excludeFlagged: boolean; excludedFlagged: { a: { flaggedTrials: number; ramBacked: number } } | null; metrics: { metric: { key: string }; configs: { nA: number; excludedA: number }[] }[] };
    const compare = async (excludeFlagged?: boolean) =>
      ok(await t.backend.invoke('report.compare', { kind: 'drive', a: 'A-disk', b: 'B-disk', ...(excludeFlagged === undefined ? {} : { excludeFlagged }) })) as Compared;
    const tputOf = (c: Compared) => c.metrics.find((m) => m.metric.key === 'wall_clock_throughput_tok_per_s')!.configs[0];
    const on = await compare(true);
    expect(on.excludeFlagged).toBe(true);
    expect(on.excludedFlagged!.a).toMatchObject({ flaggedTrials: 1, ramBacked: 1 });
    expect(tputOf(on)).toMatchObject({ nA: 3, excludedA: 1 });
    const off = await compare();
    expect([off.excludeFlagged, off.excludedFlagged]).toEqual([false, null]);
    expect(tputOf(off)).toMatchObject({ nA: 4, excludedA: 0 });

    const built = ok(await t.backend.invoke('report.build', { selection: {}, excludeFlagged: true })) as {
      report: { excludedFlagged: { trials: number } | null; scenarios: { excluded: { flags: string[] }[] }[] };
      tiers: { excludeFlagged: boolean };
    };
    expect(built.report.excludedFlagged).toMatchObject({ trials: 1 });
    expect(built.report.scenarios.flatMap((x) => x.excluded.map((e) => e.flags))).toEqual([['ram-backed']]);
    expect(built.tiers.excludeFlagged).toBe(true);
    const file = ok(await t.backend.invoke('export.create', { selection: {}, format: 'json', excludeFlagged: true })) as object;
    expect((JSON.parse(downloaded(t.backend, file).toString('utf8')) as { excludeFlagged: boolean }).excludeFlagged).toBe(true);
  });

  it('history.facets, given the selection, counts each filter\'s values under the other filters (rev12-gui L14)', async () => {
    const t = await make();
    const file = (name: string) => ({ name, text: JSON.stringify(kvbenchResults({ tokPerS: name.length, durationS: 4 })) });
    ok(await t.backend.invoke('import.results', { files: [file('a.json')], systemLabel: 'rig', scenarioId: 'storage-only', label: 'revB' }));
    ok(await t.backend.invoke('import.results', { files: [file('bb.json')], systemLabel: 'rig', scenarioId: 'cpu-only', label: 'revA' }));
    const plain = ok(await t.backend.invoke('history.facets', {})) as { scenarioIds: string[]; matching?: unknown };
    expect(plain.scenarioIds).toEqual(['cpu-only', 'storage-only']);
    expect(plain.matching).toBeUndefined();
    const narrowed = ok(await t.backend.invoke('history.facets', { selection: { suiteLabels: ['revB'] } })) as { matching: Record<string, Record<string, number>> };
    expect(narrowed.matching.scenarioIds).toEqual({ 'storage-only': 1 });
    expect(narrowed.matching.suiteLabels).toEqual({ revB: 1, revA: 1 });
  });

  it("export.create: the app's trials CSV has kvbench's export columns, measured_by_version beside kvbench_version (rev13 #6)", async () => {
    const t = await make();
    const old = kvbenchResults({ tokPerS: 100, durationS: 4 });
    old.kvbench.version = '0.2.0';
    ok(await t.backend.invoke('import.results', { files: [{ name: 'old.json', text: JSON.stringify(old) }], systemLabel: 'rig', scenarioId: 'storage-only' }));
    const csv = ok(await t.backend.invoke('export.create', { selection: {}, format: 'csv' })) as object;
    const [header, row] = parseCsv(downloaded(t.backend, csv).toString('utf8').replace(/^\uFEFF/, ''));
    expect(header).toEqual(trialColumns());
    expect([row[header.indexOf('kvbench_version')], row[header.indexOf('measured_by_version')]]).toEqual([KVBENCH_VERSION, '0.2.0']);
  });

  it("import: kvbench's own exports are said for what they are, with the app's way to open their database (rev13 #9)", async () => {
    const t = await make();
    const files = [
      { name: 'exp.json', text: JSON.stringify({ format: 'kvbench-export', version: 1, kvbenchVersion: '0.6.0', trials: [] }) },
      { name: 'exp.csv', text: '\uFEFFtrial_id,suite_id,suite_label\r\n1,1,\r\n' },
    ];
    const r = ok(await t.backend.invoke('import.results', { files, systemLabel: 'rig' })) as { imported: unknown[]; errors: { file: string; message: string }[] };
    expect(r.imported).toEqual([]);
    expect(r.errors.map((e) => [e.file, e.message.split(',')[0]])).toEqual([
      ['exp.json', 'a kvbench export (JSON: kvbench export'],
      ['exp.csv', 'a kvbench trials export (CSV: kvbench export'],
    ]);
    for (const e of r.errors) expect(e.message).toMatch(/or open the database the export came from in Settings$/);
  });

  it("trials.get gives a trial's engine memory timeline and queueing verdict from its stored results, and nothing (not zeros) for results stored before kvbench recorded them", async () => {
    const t = await make();
    const before = kvbenchResults({ tokPerS: 100, durationS: 4 });
    const now = kvbenchResults({ tokPerS: 100, durationS: 4 }) as unknown as { kvbench: Record<string, unknown> & { timeline: Record<string, unknown>[]; engine_health: Record<string, unknown> } };
    const note = 'the queue grew to 12 requests (23 issued, 7 completed): the configuration offers more load than the storage serves';
    now.kvbench.queue = { max_depth: 12, backlog_cap_requests: 12, backlog_cap_reached: true, queueing_bound: false, issue_lateness_max_ns: 3.7e9, note };
    now.kvbench.timeline = [1, 2, 3].map((sec) => ({ ...now.kvbench.timeline[0], elapsed_ns: sec * 1e9, rss_bytes: sec * 100 * 2 ** 20, heap_used_bytes: 2 ** 24, external_bytes: 2 ** 27, array_buffers_bytes: 2 ** 27, byte_workers_heap_used_bytes: null }));
    now.kvbench.engine_health.memory = {
      sampled_peak: { rss_bytes: 300 * 2 ** 20, heap_used_bytes: 2 ** 24, external_bytes: 2 ** 27, array_buffers_bytes: 2 ** 27, byte_workers_heap_used_bytes: null },
      fixed_buffers: { cpu_tier_arena_bytes: 2 ** 28, storage_io_buffers_bytes: 2 ** 25, cpu_read_staging_bytes: 0, payload_pool_bytes: 2 ** 20, total_bytes: 2 ** 28 + 2 ** 25 + 2 ** 20 },
    };
    const files = [{ name: 'before.json', text: JSON.stringify(before) }, { name: 'now.json', text: JSON.stringify(now) }];
    const imp = ok(await t.backend.invoke('import.results', { files, systemLabel: 'rig', scenarioId: 'storage-only' })) as { imported: { file: string; trialId: number }[] };
    const idOf = (file: string): number => imp.imported.find((f) => f.file === file)!.trialId;
    const engineOf = async (file: string): Promise<unknown> => (ok(await t.backend.invoke('trials.get', { id: idOf(file) })) as { engine: unknown }).engine;
    expect(await engineOf('before.json')).toEqual({ memoryTimeline: null, memory: null, queue: null });
    expect(await engineOf('now.json')).toEqual({
      memoryTimeline: {
        elapsedNs: [1e9, 2e9, 3e9],
        rssBytes: [100 * 2 ** 20, 200 * 2 ** 20, 300 * 2 ** 20],
        heapUsedBytes: [2 ** 24, 2 ** 24, 2 ** 24],
        arrayBuffersBytes: [2 ** 27, 2 ** 27, 2 ** 27],
        byteWorkersHeapUsedBytes: [null, null, null],
        samples: 3,
      },
      memory: { sampledPeakRssBytes: 300 * 2 ** 20, fixedBuffersBytes: 2 ** 28 + 2 ** 25 + 2 ** 20, cpuTierArenaBytes: 2 ** 28, storageIoBuffersBytes: 2 ** 25 },
      queue: expect.objectContaining({ engineQueueingBound: false, note, issueLatenessMaxNs: 3.7e9, maxDepth: 12, capRequests: 12, capReached: true }),
    });
  });

  it("trials.get gives the stored trial's queueing verdict (the flag's), not the results' own: a 0.7.0 trial flagged by today's rule reads queueing-bound (rev18 M1)", async () => {
    const t = await make();
    // As kvbench 0.7.0 wrote it: 238 queued for 4 users at the close, 31 completed; its own rule (1,000 queued) said no.
    const old = kvbenchResults({ tokPerS: 100, durationS: 4 }) as unknown as { requests_completed: number; kvbench: Record<string, unknown> & { measured_window: Record<string, unknown>; run_options: Record<string, unknown> } };
    old.kvbench.version = '0.7.0';
    old.requests_completed = 31;
    old.kvbench.measured_window.requests_queued_at_close = 238;
    old.kvbench.run_options.numUsers = 4;
    old.kvbench.queue = { max_depth: 238, backlog_cap_requests: 500_000, backlog_cap_reached: false, queueing_bound: false, issue_lateness_max_ns: 3.9e7, note: null };
    const imp = ok(await t.backend.invoke('import.results', { files: [{ name: 'old.json', text: JSON.stringify(old) }], systemLabel: 'rig', scenarioId: 'storage-only' })) as { imported: { trialId: number }[] };
    const got = ok(await t.backend.invoke('trials.get', { id: imp.imported[0]!.trialId })) as { cautions: string[]; engine: { queue: Record<string, unknown> } };
    expect(got.cautions.some((c) => c.startsWith('queueing-bound'))).toBe(true);
    expect(got.engine.queue).toMatchObject({ queueingBound: true, engineQueueingBound: false, queuedAtClose: 238, requestsCompleted: 31, maxDepth: 238 });
  });

  it('history.list carries the cautions of each flagged trial listed, as the report and kvbench history flag them (rev12-gui M1)', async () => {
    const t = await make();
    const results = (tokPerS: number, ramBacked: boolean): string => {
      const r = kvbenchResults({ tokPerS, durationS: 4 });
      if (ramBacked) r.kvbench.tiers.storage.ram_backed = true;
      return JSON.stringify(r);
    };
    const files = [{ name: 'disk.json', text: results(100, false) }, { name: 'ram.json', text: results(300, true) }];
    const imp = ok(await t.backend.invoke('import.results', { files, systemLabel: 'rig', scenarioId: 'storage-only' })) as { imported: { file: string; trialId: number }[] };
    const ramTrial = imp.imported.find((f) => f.file === 'ram.json')!.trialId;
    const list = ok(await t.backend.invoke('history.list', { selection: {} })) as { trials: { id: number }[]; cautions: { trialId: number; messages: string[] }[] };
    expect(list.trials).toHaveLength(2);
    expect(list.cautions.map((c) => c.trialId)).toEqual([ramTrial]);
    const dialog = ok(await t.backend.invoke('trials.get', { id: ramTrial })) as { cautions: string[] };
    expect(dialog.cautions.length).toBeGreaterThan(0);
    expect(list.cautions[0].messages).toEqual(dialog.cautions);
  });

  it('import: every upload gets a file of its own (no name overwrites another, . and .. stay inside the private directory), and replies name the uploads, never the server\'s temporary copies', async () => {
    const t = await make();
    const results = (i: number): string => JSON.stringify(referenceResultsNew({ tokPerS: 10 * i, storageTokPerS: 5 * i }));
    // "4-a.json" is what the second "a.json" (the 4th file) used to be renamed to: it overwrote the first.
    const files = [
      { name: '4-a.json', text: results(1) },
      { name: 'a.json', text: '{}' },
      { name: 'x.json', text: '{}' },
      { name: 'a.json', text: results(2) },
      { name: '..', text: results(3) },
      { name: '.', text: '{not json' },
      { name: 'again.json', text: results(1) },
    ];
    const imp = ok(await t.backend.invoke('import.results', { files, systemLabel: 'collide' })) as {
      imported: { file: string; trialId: number }[];
      skipped: { file: string; message: string }[];
      errors: { file: string; message: string }[];
    };
    expect(imp.imported.map((f) => f.file)).toEqual(['4-a.json', 'a.json', '..']);
    expect(imp.errors.map((e) => e.file)).toEqual(['a.json', 'x.json', '.']);
    expect(imp.skipped).toEqual([{ file: 'again.json', trialId: null, message: 'the same results as 4-a.json, imported now: not stored twice' }]);
    const said = JSON.stringify(imp);
    expect(said).not.toContain('kvbench-import-');
    expect(said).not.toContain(os.tmpdir());
    // The three imported trials hold three different measurements (none overwritten by another).
    const stored = await Promise.all(imp.imported.map(async (f) => (ok(await t.backend.invoke('trials.get', { id: f.trialId })) as { trial: { metrics: Record<string, number> } }).trial.metrics.wall_clock_throughput_tok_per_s));
    expect(new Set(stored).size).toBe(3);
  });

  it('import: a file time no Date holds (past the year 275760) is refused with the request, not an internal error', async () => {
    // review rev13 #5: lastModifiedMs 9e15 passed the contract and failed at toISOString() ("Invalid time value").
    const t = await make();
    const r = await t.backend.invoke('import.results', { files: [{ name: 'a.json', text: JSON.stringify(referenceResultsNew({ tokPerS: 10, storageTokPerS: 5 })), lastModifiedMs: 9e15 }], systemLabel: 'far' });
    expect(r).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    expect(JSON.stringify(r)).toContain('lastModifiedMs');
    expect(JSON.stringify(r)).not.toContain('Invalid time value');
  });

  it("offers the cache directory of this machine's last suite when Settings name no default, so a reload does not fall back to the system disk", async () => {
    const onThisHost = async (cd: string): Promise<HardwareProfile> => {
      const hw = fakeHardware({ hostname: os.hostname() });
      hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
      return hw;
    };
    const t = await make({ detect: onThisHost });
    const fallback = path.join(os.tmpdir(), 'kvbench-cache');
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ suggestedCacheDir: fallback });
    const used = path.join(t.cacheDir, 'drive-b');
    ok(await t.backend.invoke('suite.start', { ...smokeRequest(used), scenarios: ['storage-only'], trials: 1 }));
    await t.waitFor('suite.finished');
    await new Promise((r) => setTimeout(r, 20));
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ suggestedCacheDir: used });
    // A default chosen in Settings comes first.
    ok(await t.backend.invoke('settings.update', { defaultCacheDir: '/mnt/nvme' }));
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ suggestedCacheDir: '/mnt/nvme' });

    // Another machine's suite (a database copied from it) names a directory of that machine: not offered here.
    const other = await make();
    ok(await other.backend.invoke('suite.start', { ...smokeRequest(other.cacheDir), scenarios: ['storage-only'], trials: 1 }));
    await other.waitFor('suite.finished');
    await new Promise((r) => setTimeout(r, 20));
    expect(ok(await other.backend.invoke('app.info', {}))).toMatchObject({ suggestedCacheDir: fallback });
  });

  it('keeps settings in a file, and refuses a database it must not touch', async () => {
    const t = await make();
    const s = ok(await t.backend.invoke('settings.update', { byteUnits: 'binary', latencyUnit: 'us', defaultCacheDir: '/mnt/nvme' }));
    expect(s).toMatchObject({ byteUnits: 'binary', latencyUnit: 'us', defaultCacheDir: '/mnt/nvme', databasePath: t.db });
    // Only what was chosen is kept: the database path (from the defaults, --db or KVBENCH_DB) is not
    // pinned in the file by a change of units, so a later KVBENCH_DB still takes effect.
    expect(JSON.parse(fs.readFileSync(t.settingsFile, 'utf8'))).toEqual({ byteUnits: 'binary', latencyUnit: 'us', defaultCacheDir: '/mnt/nvme' });
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ suggestedCacheDir: '/mnt/nvme' });

    const foreign = path.join(t.dir, 'not-a-db.sqlite');
    fs.writeFileSync(foreign, 'hello, I am a text file\n');
    expect(await t.backend.invoke('settings.update', { databasePath: foreign })).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT' } });
    expect(fs.readFileSync(foreign, 'utf8')).toBe('hello, I am a text file\n');
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ databasePath: t.db });

    const other = path.join(t.dir, 'other.db');
    expect(ok(await t.backend.invoke('settings.update', { databasePath: other, createDatabase: true }))).toMatchObject({ databasePath: other });
    expect(fs.existsSync(other)).toBe(true);
    expect(JSON.parse(fs.readFileSync(t.settingsFile, 'utf8'))).toMatchObject({ databasePath: other, byteUnits: 'binary' }); // chosen: kept
    expect(t.events.some((e) => e.type === 'settings.changed')).toBe(true);
  });

  it('refuses a relative database path, and opens a path that holds no database only when told to create one', async () => {
    const t = await make();
    ok(await t.backend.invoke('settings.update', { byteUnits: 'binary' }));
    const settingsBefore = fs.readFileSync(t.settingsFile, 'utf8');
    // The server's working directory is not the user's to know: nothing is resolved against it.
    expect(await t.backend.invoke('settings.update', { databasePath: 'relative.db' })).toEqual({
      ok: false,
      error: { code: 'VALIDATION', message: 'the database must be an absolute path (starting with /): relative.db would be taken relative to the folder kvbench was started in' },
    });
    expect(fs.existsSync(path.resolve('relative.db'))).toBe(false);
    // No database there yet: switching would show an empty history, so it is asked for, not done.
    const fresh = path.join(t.dir, 'fresh.db');
    expect(await t.backend.invoke('settings.update', { databasePath: fresh, latencyUnit: 'us' })).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: `no database exists at ${fresh}: switching to it creates a new, empty one` },
    });
    expect(fs.existsSync(fresh)).toBe(false);
    expect(fs.readFileSync(t.settingsFile, 'utf8')).toBe(settingsBefore);
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ databasePath: t.db, settings: { latencyUnit: 'ms' } });
    // Confirmed: created, and the confirmation is not a setting.
    expect(ok(await t.backend.invoke('settings.update', { databasePath: fresh, latencyUnit: 'us', createDatabase: true }))).toEqual({
      databasePath: fresh,
      defaultCacheDir: '',
      byteUnits: 'binary',
      latencyUnit: 'us',
    });
    expect(fs.existsSync(fresh)).toBe(true);
    expect(JSON.parse(fs.readFileSync(t.settingsFile, 'utf8'))).toEqual({ databasePath: fresh, byteUnits: 'binary', latencyUnit: 'us' });
    // An existing database needs no confirmation.
    expect(ok(await t.backend.invoke('settings.update', { databasePath: t.db }))).toMatchObject({ databasePath: t.db });
  });

  it('refuses a default cache directory the wizard would refuse, and saves nothing of that change', async () => {
    const t = await make();
    const aFile = path.join(t.dir, 'a-file');
    fs.writeFileSync(aFile, 'x');
    for (const [defaultCacheDir, message] of [
      ['/etc', 'the default cache directory cannot be a system directory: /etc'],
      ['/etc/kvbench', 'the default cache directory cannot be a system directory: /etc/kvbench'],
      ['relative/cache', 'the default cache directory must be an absolute path (starting with /): relative/cache would be taken relative to the folder kvbench was started in'],
      [aFile, `the default cache directory: ${aFile} is a file: the cache directory must be a directory (one that does not exist yet is created)`],
      [path.join(aFile, 'sub'), `the default cache directory: ${aFile} is a file, so the cache directory ${path.join(aFile, 'sub')} cannot be created in it`],
    ]) {
      expect(await t.backend.invoke('settings.update', { defaultCacheDir, byteUnits: 'binary' }), defaultCacheDir).toEqual({ ok: false, error: { code: 'VALIDATION', message } });
    }
    expect(fs.existsSync(t.settingsFile)).toBe(false);
    expect(ok(await t.backend.invoke('settings.get', {}))).toMatchObject({ defaultCacheDir: '', byteUnits: 'decimal' });
    // One that does not exist yet is fine (a suite creates it), and so is none.
    expect(ok(await t.backend.invoke('settings.update', { defaultCacheDir: path.join(t.dir, 'later', 'cache') }))).toMatchObject({ defaultCacheDir: path.join(t.dir, 'later', 'cache') });
    expect(ok(await t.backend.invoke('settings.update', { defaultCacheDir: '' }))).toMatchObject({ defaultCacheDir: '' });
  });

  it('refuses a relative cache directory for detection, planning and starting: the server has no folder the user knows', async () => {
    const t = await make();
    const message = 'the cache directory must be an absolute path (starting with /): relative/dir would be taken relative to the folder kvbench was started in';
    for (const [channel, request] of [
      ['hardware.detect', { cacheDir: 'relative/dir' }],
      ['suite.plan', { ...smokeRequest('relative/dir') }],
      ['suite.start', { ...smokeRequest('relative/dir') }],
    ] as const) {
      expect(await t.backend.invoke(channel, request), channel).toEqual({ ok: false, error: { code: 'VALIDATION', message } });
    }
    expect(fs.existsSync(path.resolve('relative'))).toBe(false);
  });

  it("tells the page a chosen database's once-only upgrade as it goes, in the log's words, and answers meanwhile", async () => {
    const t = await make();
    const imported = path.join(t.dir, 'imported.db');
    await databaseWithUnversionedImports(imported, 300);
    // At its first line (after the first batch of 16 trials), what else the backend does before the upgrade ends.
    const during: Promise<Result<unknown>>[] = [];
    const answeredBeforeEnd: string[] = [];
    const unsubscribe = t.backend.subscribe((e) => {
      if (e.type !== 'database.upgradeProgressed' || during.length > 0) return;
      for (const [channel, request] of [
        ['app.info', {}],
        ['suite.start', { ...smokeRequest(t.cacheDir), trials: 1 }],
        ['settings.update', { latencyUnit: 'us' }],
      ] as const) {
        const answer = t.backend.invoke(channel, request);
        during.push(answer);
        void answer.then(() => {
          if (!t.events.some((x) => x.type === 'database.upgradeProgressed' && /: upgraded /.test(x.message))) answeredBeforeEnd.push(channel);
        });
      }
    });
    const switched = await t.backend.invoke('settings.update', { databasePath: imported });
    unsubscribe();
    expect(switched).toMatchObject({ ok: true, value: { databasePath: imported } });
    expect(t.events.filter((e) => e.type === 'database.upgradeProgressed')).toEqual([
      { type: 'database.upgradeProgressed', databasePath: imported, message: `database ${imported}: upgrading 300 imported trials' records (once; this database was made by an older kvbench) …` },
      { type: 'database.upgradeProgressed', databasePath: imported, message: `database ${imported}: upgraded 300 imported trials' records` },
    ]);
    const [info, start, units] = await Promise.all(during);
    // The backend answered while it upgraded: the old database is in use until the new one is open.
    expect(answeredBeforeEnd).toContain('app.info');
    expect(info).toMatchObject({ ok: true, value: { databasePath: t.db } });
    // No suite starts on the database about to be closed.
    expect(start).toMatchObject({ ok: false, error: { code: 'BUSY', message: expect.stringContaining(`the database ${imported} is being opened`) } });
    // A change made meanwhile waits for the switch and builds on it.
    expect(units).toMatchObject({ ok: true, value: { databasePath: imported, latencyUnit: 'us' } });
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ databasePath: imported, settings: { latencyUnit: 'us' } });
    expect(JSON.parse(fs.readFileSync(t.settingsFile, 'utf8'))).toMatchObject({ databasePath: imported, latencyUnit: 'us' });
  });

  it('an import running when the database is switched finishes on the database it started on: the switch closes that one only after it', async () => {
    const t = await make();
    const importing = t.backend.invoke('import.results', { files: fiftyResultsFiles(), systemLabel: 'rig' });
    const other = path.join(t.dir, 'other.db');
    const switching = t.backend.invoke('settings.update', { databasePath: other, createDatabase: true });
    const [imported, switched] = await Promise.all([importing, switching]);
    expect(switched).toMatchObject({ ok: true, value: { databasePath: other } });
    expect((ok(imported) as { imported: unknown[]; errors: unknown[] }).errors).toEqual([]);
    expect((ok(imported) as { imported: unknown[] }).imported).toHaveLength(50);
    expect(trialsIn(t.db)).toBe(50);
    expect(trialsIn(other)).toBe(0);
    expect(ok(await t.backend.invoke('history.list', { selection: {} }))).toMatchObject({ total: 0 });
  });

  it('closing the backend (the server or the app going away) lets an import under way finish on its database first', async () => {
    const t = await make();
    const importing = t.backend.invoke('import.results', { files: fiftyResultsFiles(), systemLabel: 'rig' });
    await t.backend.close();
    expect((ok(await importing) as { imported: unknown[] }).imported).toHaveLength(50);
    expect(trialsIn(t.db)).toBe(50);
  });

  it('refuses imports and deletes while another database is being opened: nothing is written to the one it replaces', async () => {
    const t = await make();
    const files = [{ name: 'r.json', text: JSON.stringify(referenceResultsNew({ tokPerS: 10, storageTokPerS: 5 })) }];
    const first = ok(await t.backend.invoke('import.results', { files, systemLabel: 'rig' })) as { suiteId: number; imported: { trialId: number }[] };
    const trialId = first.imported[0].trialId;
    const imported = path.join(t.dir, 'imported.db');
    await databaseWithUnversionedImports(imported, 300);
    // At the upgrade's first line (after its first batch), while the old database is still the open one.
    const during: Promise<Result<unknown>>[] = [];
    const unsubscribe = t.backend.subscribe((e) => {
      if (e.type !== 'database.upgradeProgressed' || during.length > 0) return;
      during.push(
        t.backend.invoke('import.results', { files: [{ name: 's.json', text: JSON.stringify(referenceResultsNew({ tokPerS: 20, storageTokPerS: 6 })) }], systemLabel: 'rig' }),
        t.backend.invoke('trials.delete', { ids: [trialId] }),
        t.backend.invoke('suites.delete', { id: first.suiteId }),
      );
    });
    const switched = await t.backend.invoke('settings.update', { databasePath: imported });
    unsubscribe();
    expect(switched).toMatchObject({ ok: true, value: { databasePath: imported } });
    expect(during).toHaveLength(3);
    const busy = (what: string) => ({ ok: false, error: { code: 'BUSY', message: `the database ${imported} is being opened (Settings): ${what}` } });
    expect(await Promise.all(during)).toEqual([
      busy('import the files once it is open'),
      busy('nothing is deleted from the database it replaces'),
      busy('nothing is deleted from the database it replaces'),
    ]);
    // The database switched away from still holds what it held: one trial, none added.
    const s = openStore(t.db, { readonly: true });
    try {
      expect(s.listTrials().map((x) => x.id)).toEqual([trialId]);
    } finally {
      s.close();
    }
  });

  it('makes a new database, and its -wal and -shm, readable by the owner only; the API creates no folders', async () => {
    const t = await make();
    const modeOf = (f: string): string => (fs.statSync(f).mode & 0o777).toString(8);
    // The database the backend made at start (its folder existed) and one chosen in Settings.
    const chosen = path.join(t.dir, 'chosen.db');
    ok(await t.backend.invoke('settings.update', { databasePath: chosen, createDatabase: true }));
    for (const db of [t.db, chosen]) {
      for (const f of [db, `${db}-wal`, `${db}-shm`].filter((x) => fs.existsSync(x))) expect(modeOf(f), f).toBe('600');
    }
    expect(fs.existsSync(`${chosen}-wal`), 'the open database has its -wal (WAL mode)').toBe(true);

    const missing = path.join(t.dir, 'deep', 'a', 'b');
    expect(await t.backend.invoke('settings.update', { databasePath: path.join(missing, 'new.db') })).toEqual({
      ok: false,
      error: { code: 'VALIDATION', message: `the folder ${missing} does not exist: create it first, or choose a database in an existing folder` },
    });
    expect(fs.existsSync(path.join(t.dir, 'deep'))).toBe(false);
    const aFile = path.join(t.dir, 'a-file');
    fs.writeFileSync(aFile, 'x');
    expect(await t.backend.invoke('settings.update', { databasePath: path.join(aFile, 'new.db') })).toEqual({
      ok: false,
      error: { code: 'VALIDATION', message: `${aFile} is not a folder, so the database ${path.join(aFile, 'new.db')} cannot be created in it` },
    });
    expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ databasePath: chosen, databaseError: null });
  });

  it('refuses a database in a system directory, or an empty file not named like a database, and keeps the settings', async () => {
    const t = await make();
    ok(await t.backend.invoke('settings.update', { byteUnits: 'binary' }));
    const settingsBefore = fs.readFileSync(t.settingsFile, 'utf8');
    const link = path.join(t.dir, 'shm-link');
    fs.symlinkSync('/dev/shm', link);
    const inShm = `/dev/shm/kvbench-settings-${process.pid}.db`;
    const victim = path.join(t.dir, 'victim');
    fs.mkdirSync(victim);
    const emptyConf = path.join(victim, 'empty.conf');
    fs.writeFileSync(emptyConf, '');
    const etcHadIt = fs.existsSync('/etc/kvbench.db'); // these tests may run as root: a regression must not leave files in /etc
    try {
      for (const databasePath of [inShm, path.join(link, path.basename(inShm)), '/etc/kvbench.db']) {
        expect(await t.backend.invoke('settings.update', { databasePath }), databasePath).toMatchObject({
          ok: false,
          error: { code: 'VALIDATION', message: expect.stringMatching(/^the database cannot be in a system directory: \/(dev\/shm|etc)\/kvbench.* is in \/(dev|etc)$/) },
        });
      }
      expect(fs.readdirSync('/dev/shm').filter((n) => n.startsWith(`kvbench-settings-${process.pid}`))).toEqual([]);
      expect(await t.backend.invoke('settings.update', { databasePath: emptyConf })).toMatchObject({
        ok: false,
        error: { code: 'VALIDATION', message: expect.stringContaining(`${emptyConf} is an empty file not named like a database`) },
      });
      expect(fs.readdirSync(victim)).toEqual(['empty.conf']);
      expect(fs.statSync(emptyConf).size).toBe(0);
      expect(fs.readFileSync(t.settingsFile, 'utf8')).toBe(settingsBefore);
      expect(ok(await t.backend.invoke('app.info', {}))).toMatchObject({ databasePath: t.db, databaseError: null });

      // An empty file named like a database is one made for kvbench (`touch kvbench.db`).
      const touched = path.join(t.dir, 'touched.db');
      fs.writeFileSync(touched, '');
      expect(ok(await t.backend.invoke('settings.update', { databasePath: touched }))).toMatchObject({ databasePath: touched });
      expect(fs.statSync(touched).size).toBeGreaterThan(0);
    } finally {
      for (const n of fs.readdirSync('/dev/shm').filter((x) => x.startsWith(`kvbench-settings-${process.pid}`))) fs.rmSync(path.join('/dev/shm', n), { force: true });
      if (!etcHadIt) for (const ext of ['', '-wal', '-shm']) fs.rmSync(`/etc/kvbench.db${ext}`, { force: true });
    }
  });

  it('tells the app\'s users to choose another database in Settings, not with a CLI flag; the CLI keeps its --db', async () => {
    const t = await make();
    const notSqlite = path.join(t.dir, 'notadb.db');
    fs.writeFileSync(notSqlite, 'hello, I am a text file\n');
    const refused = await t.backend.invoke('settings.update', { databasePath: notSqlite });
    expect(refused).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT', message: expect.stringContaining('move it away or choose another database in Settings.') } });
    expect(JSON.stringify(refused)).not.toContain('--db');
    const foreign = path.join(t.dir, 'foreign.db');
    const db = openDatabase(foreign);
    db.exec('CREATE TABLE notes (body TEXT)');
    db.close();
    const other = await t.backend.invoke('settings.update', { databasePath: foreign });
    expect(other).toMatchObject({ ok: false, error: { code: 'DB_FOREIGN', message: expect.stringContaining('choose another database in Settings.') } });
    expect(JSON.stringify(other)).not.toContain('--db');

    await t.backend.close();
    open.splice(0);
    const { createBackend } = await import('../../../src-main/server/backend.ts');
    const b = await createBackend({ mode: 'browser', settingsFile: path.join(t.dir, 's2.json'), defaults: { databasePath: notSqlite, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      const info = ok(await b.invoke('app.info', {})) as { databaseError: { message: string } };
      expect(info.databaseError.message).toContain('in Settings');
      expect(info.databaseError.message).not.toContain('--db');
    } finally {
      await b.close();
    }
    // The same refusal on the command line names the flag.
    expect(() => openStore(notSqlite)).toThrow('move it away or choose another database with --db.');
  });

  describe('a settings file that is partly wrong', () => {
    /** A backend over a real settings file holding `content`, the default database in the same temp directory. */
    async function fromSettingsFile(content: string, databasePath?: string) {
      const dir = tempDir('kvb-settings-');
      const settingsFile = path.join(dir, 'settings.json');
      fs.writeFileSync(settingsFile, content);
      const defaultDb = path.join(dir, 'default.db');
      const logs: string[] = [];
      const { createBackend } = await import('../../../src-main/server/backend.ts');
      const backend = await createBackend({
        mode: 'browser',
        settingsFile,
        databasePath,
        defaults: { databasePath: defaultDb, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
        log: (level, m) => logs.push(`${level}: ${m}`),
      });
      closing.push(backend);
      const fileNow = (): unknown => JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
      return { dir, settingsFile, defaultDb, logs, backend, fileNow };
    }
    const closing: { close(): Promise<void> }[] = [];
    afterEach(async () => {
      for (const b of closing.splice(0)) await b.close();
    });

    it('uses every valid key, names each invalid or unknown one with why, and a save keeps them as written', async () => {
      const chosenDb = path.join(tempDir('kvb-chosen-'), 'chosen.db');
      fs.writeFileSync(chosenDb, ''); // Settings saves a database it has opened: the file names one that exists
      const s = await fromSettingsFile(JSON.stringify({ databasePath: chosenDb, byteUnits: 'Binary', latencyUnit: 'us', colour: 'blue' }));
      expect(s.backend.databasePath).toBe(chosenDb);
      expect(fs.existsSync(s.defaultDb)).toBe(false);
      expect(ok(await s.backend.invoke('settings.get', {}))).toEqual({ databasePath: chosenDb, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'us' });
      const info = ok(await s.backend.invoke('app.info', {})) as { databaseError: unknown; settingsProblems: string[] };
      expect(info.databaseError).toBeNull();
      expect(info.settingsProblems).toEqual([
        `the settings file ${s.settingsFile} has an invalid byteUnits, "Binary" (Invalid option: expected one of "decimal"|"binary"): the default ("decimal") applies, and the value stays in the file until it is chosen in Settings or fixed there`,
        `the settings file ${s.settingsFile} has an unknown setting "colour" (this kvbench knows databasePath, defaultCacheDir, byteUnits, latencyUnit): ignored, and kept in the file`,
      ]);
      expect(s.logs).toEqual(info.settingsProblems.map((m) => `warn: ${m}`));

      // A change of units rewrites the file with nothing the user wrote lost, the invalid value included.
      ok(await s.backend.invoke('settings.update', { latencyUnit: 'ms' }));
      expect(s.fileNow()).toEqual({ databasePath: chosenDb, byteUnits: 'Binary', latencyUnit: 'ms', colour: 'blue' });
      // Choosing the invalid key in Settings replaces it, and the problem goes.
      ok(await s.backend.invoke('settings.update', { byteUnits: 'binary' }));
      expect(s.fileNow()).toEqual({ databasePath: chosenDb, byteUnits: 'binary', latencyUnit: 'ms', colour: 'blue' });
      expect((ok(await s.backend.invoke('app.info', {})) as { settingsProblems: string[] }).settingsProblems).toEqual([info.settingsProblems[1]]);
    });

    it('reads a settings file with a byte-order mark (was "not JSON"), and names a gzip-compressed one as such', async () => {
      const s = await fromSettingsFile(`\uFEFF${JSON.stringify({ latencyUnit: 'us' })}`);
      expect(ok(await s.backend.invoke('settings.get', {}))).toMatchObject({ latencyUnit: 'us' });
      expect((ok(await s.backend.invoke('app.info', {})) as { settingsProblems: string[] }).settingsProblems).toEqual([]);
      const dir = tempDir('kvb-settings-gz-');
      const gz = path.join(dir, 'settings.json');
      fs.writeFileSync(gz, gzipSync('{}'));
      const { loadSettings } = await import('../../../src-main/server/settings.ts');
      const loaded = loadSettings(gz, { databasePath: path.join(dir, 'x.db'), defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' });
      expect(loaded.problems.map((p) => p.message)).toEqual([expect.stringMatching(new RegExp(`^the settings file ${gz} is not usable: the file is gzip-compressed: decompress it first \\(gunzip\\): the default settings apply`))]);
    });

    it('says at the start and in app.info that the saved default cache directory would be refused now, and keeps it as saved', async () => {
      const dir = tempDir('kvb-old-default-');
      const aFile = path.join(dir, 'was-a-folder');
      fs.writeFileSync(aFile, 'x');
      const refusals: [string, string][] = [
        ['relative/cache', 'the default cache directory must be an absolute path (starting with /): relative/cache would be taken relative to the folder kvbench was started in'],
        ['/etc/kvbench', 'the default cache directory cannot be a system directory: /etc/kvbench'],
        [aFile, `the default cache directory: ${aFile} is a file: the cache directory must be a directory (one that does not exist yet is created)`],
      ];
      for (const [saved, problem] of refusals) {
        const s = await fromSettingsFile(JSON.stringify({ defaultCacheDir: saved, latencyUnit: 'us' }));
        const info = ok(await s.backend.invoke('app.info', {}));
        // Still the suggested one, as saved: the wizard's field shows it, with why it is refused.
        expect(info).toMatchObject({ defaultCacheDirProblem: problem, suggestedCacheDir: saved, settings: { defaultCacheDir: saved }, settingsProblems: [] });
        expect(s.logs).toEqual([`warn: the settings file ${s.settingsFile} holds a default cache directory Settings would refuse now: ${problem}. It is kept as saved (the wizard offers it, and refuses it): choose another in Settings`]);
        // Nothing changed it: a change of units writes it back as it was.
        ok(await s.backend.invoke('settings.update', { latencyUnit: 'ms' }));
        expect(s.fileNow()).toEqual({ defaultCacheDir: saved, latencyUnit: 'ms' });
        expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ defaultCacheDirProblem: problem });
      }
      // Checked at each app.info: a good default is fine, until the folder becomes a file.
      const s = await fromSettingsFile(JSON.stringify({ defaultCacheDir: path.join(dir, 'cache') }));
      expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ defaultCacheDirProblem: null });
      expect(s.logs).toEqual([]);
      fs.writeFileSync(path.join(dir, 'cache'), 'x');
      expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ defaultCacheDirProblem: expect.stringContaining('is a file') });
      // Another one chosen in Settings: the problem goes.
      ok(await s.backend.invoke('settings.update', { defaultCacheDir: path.join(dir, 'elsewhere') }));
      expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ defaultCacheDirProblem: null });
    });

    it('opens no default database in place of an invalid databasePath, until one is chosen', async () => {
      const s = await fromSettingsFile(JSON.stringify({ databasePath: 42, latencyUnit: 'us' }));
      const problem = `the settings file ${s.settingsFile} has an invalid databasePath, 42 (Invalid input: expected string, received number): kvbench opens no database in its place, and keeps the value in the file until one is chosen in Settings or the file is fixed`;
      expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ databaseError: { code: 'VALIDATION', message: problem }, settingsProblems: [problem] });
      expect(await s.backend.invoke('history.list', { selection: {} })).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
      ok(await s.backend.invoke('settings.update', { latencyUnit: 'ms' }));
      expect(fs.existsSync(s.defaultDb)).toBe(false);
      expect(s.fileNow()).toEqual({ databasePath: 42, latencyUnit: 'ms' });

      const other = path.join(s.dir, 'other.db');
      expect(ok(await s.backend.invoke('settings.update', { databasePath: other, createDatabase: true }))).toMatchObject({ databasePath: other });
      expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ databasePath: other, databaseError: null, settingsProblems: [] });
      expect(s.fileNow()).toEqual({ databasePath: other, latencyUnit: 'ms' });
      expect(fs.existsSync(s.defaultDb)).toBe(false);
    });

    // A hand-edited typo, a database moved or deleted, a file system not mounted: opening the path would
    // create a new, empty database (and its folders), whose empty history would pass for the user's.
    it('opens no database, and creates none, where the file names one that does not exist or a relative path', async () => {
      const elsewhere = tempDir('kvb-typo-');
      const cases = [
        [path.join(elsewhere, 'kvbnech.db'), 'does not exist (moved, deleted, misspelt, or on a file system that is not mounted?); kvbench creates no database from the settings file'],
        [path.join(elsewhere, 'no', 'such', 'folder', 'kvbench.db'), 'does not exist (moved, deleted, misspelt, or on a file system that is not mounted?); kvbench creates no database from the settings file'],
        // Relative to this process's folder, but into the temp directory: where the old code created it.
        [path.relative(process.cwd(), path.join(elsewhere, 'rel', 'kvbench.db')), 'is not an absolute path (it would name a different file from each folder kvbench is started in)'],
      ] as const;
      for (const [databasePath, why] of cases) {
        const s = await fromSettingsFile(JSON.stringify({ databasePath, latencyUnit: 'us' }));
        const problem = `the settings file ${s.settingsFile} names the database ${JSON.stringify(databasePath)}, which ${why}: kvbench opens no database in its place, and keeps the value in the file until one is chosen in Settings or the file is fixed`;
        expect(ok(await s.backend.invoke('app.info', {})), databasePath).toMatchObject({ databaseError: { code: 'VALIDATION', message: problem }, settingsProblems: [problem] });
        expect(s.logs).toEqual([`warn: ${problem}`]);
        expect(await s.backend.invoke('history.list', { selection: {} })).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
        expect(fs.readdirSync(elsewhere), `${databasePath}: nothing created`).toEqual([]);
        expect(fs.existsSync(s.defaultDb), 'nor the default one in its place').toBe(false);
        // The value stays in the file until a database is chosen in Settings.
        ok(await s.backend.invoke('settings.update', { latencyUnit: 'ms' }));
        expect(s.fileNow()).toEqual({ databasePath, latencyUnit: 'ms' });
      }
      // The database the file names, once there, is opened.
      const there = path.join(elsewhere, 'kvbench.db');
      fs.writeFileSync(there, '');
      const s = await fromSettingsFile(JSON.stringify({ databasePath: there }));
      expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ databasePath: there, databaseError: null, settingsProblems: [] });
    });

    it('refuses from the file what Settings refuses: a system directory, an empty file not named like a database', async () => {
      const victim = tempDir('kvb-victim-');
      const emptyConf = path.join(victim, 'empty.conf');
      fs.writeFileSync(emptyConf, '');
      const inShm = `/dev/shm/kvbench-settings-${process.pid}-file.db`; // tmpfs: a system directory for a database
      fs.writeFileSync(inShm, '');
      try {
        for (const [databasePath, why] of [
          [inShm, `the database cannot be in a system directory: ${inShm} is in /dev`],
          [emptyConf, `${emptyConf} is an empty file not named like a database`],
        ] as const) {
          const s = await fromSettingsFile(JSON.stringify({ databasePath }));
          const info = ok(await s.backend.invoke('app.info', {})) as { databaseError: { code: string; message: string } | null; settingsProblems: string[] };
          expect(info.settingsProblems, databasePath).toEqual([expect.stringContaining(`names the database ${JSON.stringify(databasePath)}, which ${why}`)]);
          expect(info.databaseError).toEqual({ code: 'VALIDATION', message: info.settingsProblems[0] });
        }
        expect(fs.statSync(emptyConf).size).toBe(0);
        expect(fs.statSync(inShm).size).toBe(0);
      } finally {
        for (const ext of ['', '-wal', '-shm']) fs.rmSync(`${inShm}${ext}`, { force: true });
      }
    });

    it('opens --db over an invalid databasePath, and still names the problem', async () => {
      const flagged = path.join(tempDir('kvb-flag-'), 'flagged.db');
      const s = await fromSettingsFile(JSON.stringify({ databasePath: '' }), flagged);
      expect(ok(await s.backend.invoke('app.info', {}))).toMatchObject({ databasePath: flagged, databaseError: null, settingsProblems: [expect.stringContaining('invalid databasePath, ""')] });
    });

    it('refuses to save over a file it could not read as settings, and opens no database from it', async () => {
      const text = '{"databasePath": "/data/lab.db",\n';
      const s = await fromSettingsFile(text);
      const info = ok(await s.backend.invoke('app.info', {})) as { databaseError: { code: string; message: string }; settingsProblems: string[] };
      expect(info.settingsProblems).toEqual([expect.stringMatching(new RegExp(`^the settings file ${s.settingsFile} is not JSON \\(.+\\): the default settings apply, no database is opened from them, and Settings cannot be saved over the file until it is fixed or removed \\(then restart kvbench\\)$`))]);
      expect(info.databaseError).toEqual({ code: 'VALIDATION', message: info.settingsProblems[0] });
      expect(await s.backend.invoke('settings.update', { latencyUnit: 'us' })).toEqual({ ok: false, error: { code: 'VALIDATION', message: info.settingsProblems[0] } });
      expect(fs.readFileSync(s.settingsFile, 'utf8')).toBe(text);
      expect(fs.existsSync(s.defaultDb)).toBe(false);
    });
  });

  it('starts without a usable database and says so, instead of failing', async () => {
    const t = await make();
    await t.backend.close();
    open.splice(0);
    const bad = path.join(t.dir, 'garbage.db');
    fs.writeFileSync(bad, 'garbage');
    const { createBackend } = await import('../../../src-main/server/backend.ts');
    const b = await createBackend({ mode: 'browser', settingsFile: path.join(t.dir, 's2.json'), defaults: { databasePath: bad, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      expect(ok(await b.invoke('app.info', {}))).toMatchObject({ databaseError: { code: 'DB_CORRUPT' } });
      expect(await b.invoke('history.list', { selection: {} })).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT', message: expect.stringContaining('Settings') } });
      // Its message already says where to choose another: said once.
      const start = await b.invoke('suite.start', smokeRequest(path.join(t.dir, 'cache')));
      expect(start).toMatchObject({ ok: false, error: { code: 'DB_CORRUPT', message: expect.stringMatching(/^no database is open: .*garbage\.db is not a SQLite database .*choose another database in Settings\.$/) } });
    } finally {
      await b.close();
    }
    // A truncated copy of a database: its message ends with its own full stop, then one sentence more, never "..".
    // (Its schema is on a page the copy lacks: nothing of it can be read, so no read-only copy of it is shown either.)
    const whole = path.join(t.dir, 'whole.db');
    openStore(whole).close();
    const truncated = path.join(t.dir, 'truncated.db');
    fs.copyFileSync(whole, truncated);
    fs.truncateSync(truncated, 8192);
    const c = await createBackend({ mode: 'browser', settingsFile: path.join(t.dir, 's3.json'), defaults: { databasePath: truncated, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' } });
    try {
      const start = await c.invoke('suite.start', smokeRequest(path.join(t.dir, 'cache')));
      expect(start).toMatchObject({
        ok: false,
        error: { code: 'DB_CORRUPT', message: expect.stringMatching(/^no database is open: .*truncated\.db is damaged and cannot be read \(SQLITE_CORRUPT: .*\): restore a backup, or move it away\. Choose a database in Settings\.$/) },
      });
    } finally {
      await c.close();
    }
  });
});
