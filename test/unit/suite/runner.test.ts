import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EngineError, type EngineHandle, type StartEngineOptions } from '../../../src-main/host/engine-host.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { resumeSuite, runSuite, type StartEngineFn } from '../../../src-main/suite/runner.ts';
import { openStoreAndRecover } from '../../../src-main/suite/services.ts';
import { RESULTS_JSON_BEGIN, RESULTS_JSON_END } from '../../../src-main/util/keep-file.ts';
import { buildScenarioReport } from '../../../src-main/export/report-model.ts';
import { formatScenarioReport } from '../../../src-main/export/render-text.ts';
import type { SuiteEvent } from '../../../src-shared/domain/scenarios.ts';
import type { RunOutcome } from '../../../src-shared/engine-protocol.ts';
import { cancelledOutcome, fakeHardware, kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';

/** `hang` stops when cancelled (partial results); `stuck` never does, and the host kills it as the real one would after its grace. */
type Behaviour = 'complete' | 'crash' | 'hang' | 'stuck' | 'unstarted' | 'invalid' | 'disk-full';

interface FakeEngine {
  start: StartEngineFn;
  calls: { options: Record<string, unknown>; opts: StartEngineOptions }[];
  cancels: string[];
}

/** Stands in for the engine host: each call takes the next behaviour. */
function fakeEngine(behaviours: Behaviour[]): FakeEngine {
  const calls: FakeEngine['calls'] = [];
  const cancels: string[] = [];
  let n = 0;
  const start: StartEngineFn = (options, opts) => {
    const behaviour = behaviours[n++] ?? 'complete';
    calls.push({ options: options as Record<string, unknown>, opts });
    let cancel: (reason: string) => void = () => {};
    const result = new Promise<RunOutcome>((resolve, reject) => {
      const results = kvbenchResults({ tokPerS: 100 * n, durationS: Number((options as { duration: number }).duration) }) as unknown as Record<string, unknown>;
      opts.onProgress?.({
        phase: 'running', elapsedNs: 1e9, durationNs: 3e9, requestsCompleted: 1, maxRequests: null, activeUsers: 4, queueDepth: 0,
        generatedTokens: 0,
        storageReadBytes: 0,
        storageWriteBytes: 0,
        generatedTokensPerSec: 10, storageReadBytesPerSec: 1, storageWriteBytesPerSec: 1, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0,
        e2eLatencyP95Ns: null, storageReadP95Ns: null, eventLoopLagP99Ns: null,
      });
      if (behaviour === 'complete') setTimeout(() => resolve({ status: 'complete', reason: null, results, summaryText: 'ok' }), 5);
      else if (behaviour === 'crash') setTimeout(() => reject(new EngineError('ENGINE_CRASHED', 'engine process was killed by signal SIGKILL before sending a result')), 5);
      else if (behaviour === 'disk-full') setTimeout(() => resolve({ status: 'partial', reason: 'disk full (ENOSPC) under the cache directory: stopped after 19 completed requests', results, summaryText: 'partial' }), 5);
      else if (behaviour === 'invalid') setTimeout(() => reject(new EngineError('VALIDATION', '--cpu-mem-gb 999 is more than this machine can hold')), 5);
      else if (behaviour === 'stuck') cancel = (reason) => setTimeout(() => reject(new EngineError('CANCELLED', `engine did not stop within 20 ms of cancel (${reason}); killed`)), 20);
      // As the host says a cancel that came before the engine's process had started (engine-host.ts).
      else if (behaviour === 'unstarted') cancel = (reason) => setTimeout(() => reject(new EngineError('CANCELLED', `cancelled before the engine started: ${reason}`)), 5);
      else cancel = () => setTimeout(() => resolve(cancelledOutcome(results)), 5);
    });
    const handle: EngineHandle = {
      pid: undefined,
      result,
      cancel: (reason = 'cancelled') => {
        cancels.push(reason);
        cancel(reason);
      },
      kill: () => {},
    };
    return handle;
  };
  return { start, calls, cancels };
}

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  removeTempDirs();
});
function newStore(): Store {
  const s = openStore(path.join(tempDir(), 'kvbench.db'));
  stores.push(s);
  return s;
}

const hw = fakeHardware();
const plan = () => planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 2, scenarios: ['storage-only', 'cpu-storage'] });

describe('runSuite', () => {
  it('runs every trial in its own engine with ioDepth + 4 libuv threads, records them, and emits events', async () => {
    const store = newStore();
    const engine = fakeEngine([]);
    const events: SuiteEvent[] = [];
    const r = await runSuite(plan(), { store, hardware: hw, startEngine: engine.start, onEvent: (e) => events.push(e) });
    expect(r.status).toBe('finished');
    expect(r.counts).toEqual({ complete: 4, partial: 0, failed: 0, aborted: 0 });
    expect(engine.calls).toHaveLength(4);
    expect(engine.calls.map((c) => c.opts.uvThreadpoolSize)).toEqual([20, 20, 20, 20]);
    expect(engine.calls[0].options).toMatchObject({ model: 'tiny-1b', cacheDir: '/mnt/kv', seed: 42 });
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('suite.started');
    expect(types.at(-1)).toBe('suite.finished');
    expect(types.filter((t) => t === 'suite.trialStarted')).toHaveLength(4);
    expect(types.filter((t) => t === 'suite.trialProgressed').length).toBeGreaterThanOrEqual(4);
    const finished = events.filter((e) => e.type === 'suite.trialFinished');
    expect(finished.map((e) => [e.scenarioId, e.trialIndex, e.ordinal, e.total])).toEqual([
      ['storage-only', 0, 1, 4],
      ['storage-only', 1, 2, 4],
      ['cpu-storage', 0, 3, 4],
      ['cpu-storage', 1, 4, 4],
    ]);
    const trials = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(trials.map((t) => t.status)).toEqual(['complete', 'complete', 'complete', 'complete']);
    expect(trials[1].metrics.wall_clock_throughput_tok_per_s).toBe(200);
    expect(store.trialHardware(trials[0].id)).toEqual(hw);
    expect(store.getSuite(r.suiteId)!.status).toBe('finished');
  });

  /** A suite on `dbFile` whose second trial the store cannot take (another process holds the write lock): its error. */
  async function suiteTheStoreRefuses(dbFile: string, engine: FakeEngine, suitePlan = plan()): Promise<{ err: unknown; store: Store }> {
    const store = openStore(dbFile, { busyTimeoutMs: 200 });
    stores.push(store);
    const other = openDatabase(dbFile);
    const onEvent = (e: SuiteEvent): void => {
      if (e.type === 'suite.trialStarted' && e.ordinal === 2) other.exec('BEGIN IMMEDIATE');
    };
    let err: unknown = null;
    try {
      await runSuite(suitePlan, { store, hardware: hw, startEngine: engine.start, onEvent });
    } catch (e) {
      err = e;
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    return { err, store };
  }
  const savedIn = (message: string): string | undefined =>
    /its results are saved in (\S+) \(load them with: kvbench import \S+ --system LABEL --scenario storage-only\)/.exec(message)?.[1];

  it('a trial the database cannot store keeps its results in a file, and the suite stops saying where', async () => {
    const dbFile = path.join(tempDir(), 'kvbench.db');
    const engine = fakeEngine([]);
    const { err, store } = await suiteTheStoreRefuses(dbFile, engine);
    expect(err).toMatchObject({ code: 'DB_WRITE_FAILED' });
    const message = (err as Error).message;
    expect(message).toMatch(/^trial 2\/4 \(Storage only #2\) finished complete, but the database .*kvbench\.db could not store it: /);
    const saved = savedIn(message);
    expect(saved, message).toBeDefined();
    expect(path.dirname(saved!)).toBe(path.join(path.dirname(dbFile), 'unstored-results'));
    // The file holds the engine's whole results (the fake engine's second run: 200 tok/s).
    const results = JSON.parse(fs.readFileSync(saved!, 'utf8')) as { kvbench: unknown; summary: { avg_throughput_tokens_per_sec: number } };
    expect(results.kvbench).toBeDefined();
    expect(results.summary.avg_throughput_tokens_per_sec).toBe(200);
    expect(engine.calls).toHaveLength(2); // the suite stopped: no trial ran into a store that takes nothing
    // The first trial was stored before the lock; the second is left for the next start's recovery.
    const trials = store.listTrials({ order: 'asc' });
    expect(trials.map((t) => t.status)).toEqual(['complete', 'running']);
  });

  it('two databases rescuing the same suite and trial ids never share a file: neither result is overwritten', async () => {
    // Ids restart at 1 in every database; two of them in one directory (or both falling back to the
    // temporary directory) rescue suite 1, trial 2 into the same place.
    const dir = tempDir();
    const first = await suiteTheStoreRefuses(path.join(dir, 'drive-a.db'), fakeEngine([]));
    const second = await suiteTheStoreRefuses(path.join(dir, 'drive-b.db'), fakeEngine([]));
    const [a, b] = [first.err, second.err].map((e) => savedIn((e as Error).message)!);
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(path.dirname(a)).toBe(path.dirname(b));
    expect(a).not.toBe(b);
    expect(fs.readdirSync(path.dirname(a)).filter((n) => n.endsWith('.json')).sort()).toEqual([path.basename(a), path.basename(b)].sort());
    expect(path.basename(a)).toMatch(/^kvbench-unstored-db[0-9a-f]{8}-suite1-trial2-storage-only-2-\d{8}T\d{6}Z-pid\d+\.json$/);
  });

  describe('when neither beside the database nor the temporary directory takes the rescue file', () => {
    const tmpdirBefore = process.env.TMPDIR;
    afterEach(() => {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
      vi.restoreAllMocks();
    });

    /** A database whose `unstored-results` cannot be a folder (a file has its name) and a temporary directory that does not exist. */
    function nowhereButTheCacheDir(): { dbFile: string; base: string } {
      const base = tempDir();
      fs.writeFileSync(path.join(base, 'unstored-results'), 'a file, not a folder');
      process.env.TMPDIR = path.join(base, 'no-tmp');
      return { dbFile: path.join(base, 'kvbench.db'), base };
    }
    const planOn = (cacheDir: string) => planSuite(hw, { profile: 'smoke', cacheDir, trials: 2, scenarios: ['storage-only', 'cpu-storage'] });

    it('keeps the trial in the suite\'s cache directory; the next open marks it failed with that file, not as a crash', async () => {
      const { dbFile, base } = nowhereButTheCacheDir();
      const cacheDir = path.join(base, 'cache');
      fs.mkdirSync(cacheDir);
      const { err, store } = await suiteTheStoreRefuses(dbFile, fakeEngine([]), planOn(cacheDir));
      const message = (err as Error).message;
      const saved = savedIn(message);
      expect(saved, message).toBeDefined();
      expect(path.dirname(saved!)).toBe(cacheDir);
      expect((JSON.parse(fs.readFileSync(saved!, 'utf8')) as { summary: { avg_throughput_tokens_per_sec: number } }).summary.avg_throughput_tokens_per_sec).toBe(200);
      const trial = store.listTrials({ order: 'asc' })[1];
      expect(trial.status, 'the lock refused the note too').toBe('running');
      store.close();

      // The runner goes away with the trial still `running` (its process identity no longer matches).
      const db = openDatabase(dbFile);
      db.prepare('UPDATE trials SET runner_start_ticks = ? WHERE id = ?').run('1', trial.id);
      db.close();
      const opened = await openStoreAndRecover(dbFile);
      stores.push(opened.store);
      expect(opened.unstored).toEqual([{ trialId: trial.id, suiteId: trial.suiteId, scenarioId: 'storage-only', file: saved }]);
      expect(opened.recovered, 'not said to be interrupted by a dead runner').toEqual([]);
      const after = opened.store.getTrial(trial.id)!;
      expect(after.status).toBe('failed');
      expect(after.statusReason).toBe(
        `the engine finished but the database could not store the results (found at the next start; the runner did not crash); its results are saved in ${saved} (load them with: kvbench import ${saved} --system LABEL --scenario storage-only)`,
      );
    });

    it('prints the results on stderr between marker lines when no directory takes them, and says so', async () => {
      const { dbFile, base } = nowhereButTheCacheDir();
      let stderr = '';
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
      const { err } = await suiteTheStoreRefuses(dbFile, fakeEngine([]), planOn(path.join(base, 'gone', 'cache')));
      vi.restoreAllMocks();
      const message = (err as Error).message;
      expect(message).toContain(`no file could take its results (${path.join(base, 'unstored-results')}: `);
      expect(message).toContain(`the results JSON is printed on stderr, between the lines "${RESULTS_JSON_BEGIN}" and "${RESULTS_JSON_END}"`);
      const begin = stderr.indexOf(`${RESULTS_JSON_BEGIN}\n`);
      const end = stderr.indexOf(`${RESULTS_JSON_END}\n`);
      expect(begin, stderr).toBeGreaterThanOrEqual(0);
      expect(end).toBeGreaterThan(begin);
      const printed = JSON.parse(stderr.slice(begin + RESULTS_JSON_BEGIN.length + 1, end)) as { summary: { avg_throughput_tokens_per_sec: number } };
      expect(printed.summary.avg_throughput_tokens_per_sec).toBe(200);
      expect(fs.readdirSync(base).sort(), 'nothing created anywhere').toEqual(['kvbench.db', 'kvbench.db-shm', 'kvbench.db-wal', 'unstored-results']);
    });
  });

  it('a crashed or refused trial is recorded as failed with its reason, and the suite goes on', async () => {
    const store = newStore();
    const engine = fakeEngine(['complete', 'crash', 'invalid', 'complete']);
    const r = await runSuite(plan(), { store, hardware: hw, startEngine: engine.start });
    expect(r.status).toBe('finished');
    expect(r.counts).toEqual({ complete: 2, partial: 0, failed: 2, aborted: 0 });
    const trials = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(trials.map((t) => t.status)).toEqual(['complete', 'failed', 'failed', 'complete']);
    expect(trials[1].statusReason).toBe('ENGINE_CRASHED: engine process was killed by signal SIGKILL before sending a result');
    expect(trials[2].statusReason).toMatch(/^VALIDATION: --cpu-mem-gb 999/);
    expect(trials[1].metrics).toEqual({});
  });

  it('a suite in which no trial completed ends as failed, though stored as finished; a resume that completes one makes it finished', async () => {
    const store = newStore();
    const events: SuiteEvent[] = [];
    const r = await runSuite(plan(), { store, hardware: hw, startEngine: fakeEngine(['crash', 'invalid', 'disk-full', 'crash']).start, onEvent: (e) => events.push(e) });
    expect(r).toMatchObject({ status: 'finished', outcome: 'failed', counts: { complete: 0, partial: 1, failed: 3, aborted: 0 } });
    expect(events.at(-1)).toMatchObject({ type: 'suite.finished', status: 'finished', outcome: 'failed' });
    expect(store.getSuite(r.suiteId)!.status).toBe('finished'); // the stored status keeps its meaning; the outcome is derived

    // A resume whose trials fail again leaves it failed; one that completes a trial, finished.
    const failedAgain = await resumeSuite(r.suiteId, { store, hardware: hw, startEngine: fakeEngine(['crash', 'crash', 'crash', 'crash']).start });
    expect(failedAgain.outcome).toBe('failed');
    const resumed: SuiteEvent[] = [];
    const fixed = await resumeSuite(r.suiteId, { store, hardware: hw, startEngine: fakeEngine(['complete', 'crash', 'crash', 'crash']).start, onEvent: (e) => resumed.push(e) });
    expect(fixed).toMatchObject({ status: 'finished', outcome: 'finished', counts: { complete: 1, failed: 3 } });
    expect(resumed.at(-1)).toMatchObject({ type: 'suite.finished', outcome: 'finished' });
    // A later resume that completes nothing still leaves the suite with its complete trial: finished.
    expect((await resumeSuite(r.suiteId, { store, hardware: hw, startEngine: fakeEngine(['crash', 'crash', 'crash']).start })).outcome).toBe('finished');
  });

  /** Runs the suite on `engine` and aborts it (with `reason`, if given) once trial `ordinal` has started. */
  async function stoppedAt(store: Store, engine: FakeEngine, ordinal: number, reason?: string) {
    const controller = new AbortController();
    return runSuite(plan(), {
      store,
      hardware: hw,
      startEngine: engine.start,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'suite.trialStarted' && e.ordinal === ordinal) setTimeout(() => (reason === undefined ? controller.abort() : controller.abort(reason)), 10);
      },
    });
  }

  it('cancel stops the current trial gracefully (kept, marked aborted) and runs no more; resume finishes the suite', async () => {
    const store = newStore();
    const engine = fakeEngine(['complete', 'hang']);
    const r = await stoppedAt(store, engine, 2);
    expect(r.status).toBe('cancelled');
    expect(engine.cancels).toEqual(['cancelled by the user']);
    expect(engine.calls).toHaveLength(2);
    const trials = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(trials.map((t) => t.status)).toEqual(['complete', 'aborted']);
    expect(trials[1].statusReason).toMatch(/^cancelled by the user; partial results kept/);
    expect(store.trialResults(trials[1].id)).not.toBeNull(); // the partial results are kept
    expect(store.getSuite(r.suiteId)!.status).toBe('cancelled');

    const again = fakeEngine([]);
    const resumed = await resumeSuite(r.suiteId, { store, hardware: hw, startEngine: again.start });
    expect(resumed.status).toBe('finished');
    expect(again.calls).toHaveLength(3); // the aborted trial again, and the two never started
    const all = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(all.map((t) => [t.scenarioId, t.trialIndex, t.attempt, t.status])).toEqual([
      ['storage-only', 0, 1, 'complete'],
      ['storage-only', 1, 1, 'aborted'],
      ['storage-only', 1, 2, 'complete'],
      ['cpu-storage', 0, 1, 'complete'],
      ['cpu-storage', 1, 1, 'complete'],
    ]);
    expect(store.getSuite(r.suiteId)!.status).toBe('finished');
    // Nothing left to resume.
    const none = fakeEngine([]);
    expect((await resumeSuite(r.suiteId, { store, hardware: hw, startEngine: none.start })).trials).toEqual([]);
  });

  it('resume runs again the trials a full disk left partial, as the report counts them, and the report then aggregates every slot once', async () => {
    const store = newStore();
    const first = fakeEngine(['complete', 'disk-full', 'disk-full', 'complete']);
    const r = await runSuite(plan(), { store, hardware: hw, startEngine: first.start });
    expect(r.status).toBe('finished');
    expect(r.counts).toMatchObject({ complete: 2, partial: 2 });
    // Reports leave partial trials out by default: two slots are not aggregated, and resume says so.
    expect(store.getSuite(r.suiteId)!.trialsLeft).toBe(2);
    const before = buildScenarioReport(store.listTrials({ suiteIds: [r.suiteId], order: 'asc' }));
    expect(before.scenarios.map((s) => s.trialIds.length)).toEqual([1, 1]);

    const again = fakeEngine([]);
    const resumed = await resumeSuite(r.suiteId, { store, hardware: hw, startEngine: again.start });
    expect(resumed.trials.map((t) => [t.scenarioId, t.trialIndex, t.status])).toEqual([
      ['storage-only', 1, 'complete'],
      ['cpu-storage', 0, 'complete'],
    ]);
    expect(store.getSuite(r.suiteId)!.trialsLeft).toBe(0);
    const all = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(all.map((t) => [t.scenarioId, t.trialIndex, t.attempt, t.status])).toEqual([
      ['storage-only', 0, 1, 'complete'],
      ['storage-only', 1, 1, 'partial'],
      ['cpu-storage', 0, 1, 'partial'],
      ['cpu-storage', 1, 1, 'complete'],
      ['storage-only', 1, 2, 'complete'],
      ['cpu-storage', 0, 2, 'complete'],
    ]);
    // Every slot aggregated once, with or without the partial attempts; those are superseded by their retry.
    for (const includeIncomplete of [false, true]) {
      const report = buildScenarioReport(all, { includeIncomplete });
      expect(report.scenarios.map((s) => s.trialIds.length)).toEqual([2, 2]);
      expect(report.scenarios.flatMap((s) => s.excluded.map((x) => [x.trialIndex, x.attempt, x.status, x.supersededBy?.attempt, x.supersededBy?.status]))).toEqual([
        [1, 1, 'partial', 2, 'complete'],
        [0, 1, 'partial', 2, 'complete'],
      ]);
    }
    // The report lists the replaced attempts as superseded by their retry, not as missing trials.
    const text = formatScenarioReport(buildScenarioReport(all));
    expect(text).toMatch(/trials: 2 aggregated of 2 \(and 1 superseded attempt\)\n {3}~ trial #2 attempt 1 \(id \d+\) partial, superseded — retried: attempt 2 \(id \d+\) complete; it was: disk full \(ENOSPC\)/);
    expect(text).not.toMatch(/! trial|, excluded:/);
    expect((await resumeSuite(r.suiteId, { store, hardware: hw, startEngine: fakeEngine([]).start })).trials).toEqual([]);
  });

  it('a trial cancelled before its engine started, or whose engine had to be killed, says who cancelled it once (rev12-gui L6)', async () => {
    const store = newStore();
    const r = await stoppedAt(store, fakeEngine(['complete', 'unstarted']), 2);
    const trials = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(trials[1].statusReason).toBe('cancelled by the user: cancelled before the engine started');
    const killed = await stoppedAt(store, fakeEngine(['complete', 'stuck']), 2);
    const killedTrials = store.listTrials({ suiteIds: [killed.suiteId], order: 'asc' });
    expect(killedTrials[1].statusReason).toBe('cancelled by the user: engine did not stop within 20 ms of cancel; killed');
  });

  it('a stop with a cause (SIGTERM, a shutdown) is recorded as that cause, not as the user\'s cancel', async () => {
    const store = newStore();
    const engine = fakeEngine(['hang']);
    const r = await stoppedAt(store, engine, 1, 'stopped: kvbench received SIGTERM');
    expect(r.status).toBe('cancelled');
    expect(engine.cancels).toEqual(['stopped: kvbench received SIGTERM']);
    const [trial] = store.listTrials({ suiteIds: [r.suiteId] });
    expect(trial.status).toBe('aborted');
    // The engine's own words ("cancelled by the user before the planned end") are not the cause here.
    expect(trial.statusReason).toBe('stopped: kvbench received SIGTERM; partial results kept');
  });

  it('refuses a plan that does not fit, and a resume on another machine', async () => {
    const store = newStore();
    const tooBig = planSuite(fakeHardware({ freeGiB: 1 }), { profile: 'smoke', cacheDir: '/mnt/kv' });
    await expect(runSuite(tooBig, { store, hardware: hw, startEngine: fakeEngine([]).start })).rejects.toThrow(/cannot hold this suite/);
    const r = await runSuite(plan(), { store, hardware: hw, startEngine: fakeEngine([]).start });
    await expect(resumeSuite(r.suiteId, { store, hardware: fakeHardware({ systemId: 'sys-ffffffffffffffff' }), startEngine: fakeEngine([]).start })).rejects.toThrow(/belongs to system/);
  });
});

describe('trial time limit', () => {
  it('a trial that runs past its limit times out: stopped and kept as partial; the suite goes on', async () => {
    const store = newStore();
    const engine = fakeEngine(['hang', 'complete']);
    const events: SuiteEvent[] = [];
    const r = await runSuite(planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 2, scenarios: ['storage-only'] }), {
      store,
      hardware: hw,
      startEngine: engine.start,
      trialTimeoutMs: () => 50,
      onEvent: (e) => events.push(e),
    });
    expect(r.status).toBe('finished');
    expect(engine.cancels).toEqual(['the trial timed out after its 0 s wall-clock limit']);
    expect(events.find((e) => e.type === 'suite.trialLogged')).toMatchObject({ level: 'warn', message: 'trial timed out (past its 0 s wall-clock limit): stopping it' });
    const trials = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(trials.map((t) => t.status)).toEqual(['partial', 'complete']);
    expect(trials[0].statusReason).toBe('timed out: stopped at its 0 s wall-clock limit; partial results kept');
  });

  it('a hung engine that does not stop when the trial times out is killed: aborted, with a reason that says it timed out, not that anyone cancelled', async () => {
    const store = newStore();
    const engine = fakeEngine(['stuck', 'complete']);
    const r = await runSuite(planSuite(hw, { profile: 'smoke', cacheDir: '/mnt/kv', trials: 2, scenarios: ['storage-only'] }), {
      store,
      hardware: hw,
      startEngine: engine.start,
      trialTimeoutMs: () => 50,
    });
    expect(r.status).toBe('finished');
    const trials = store.listTrials({ suiteIds: [r.suiteId], order: 'asc' });
    expect(trials.map((t) => t.status)).toEqual(['aborted', 'complete']);
    expect(trials[0].statusReason).toBe('timed out after its 0 s wall-clock limit, no results kept: engine did not stop within 20 ms of cancel; killed');
    expect(trials[0].statusReason).not.toMatch(/cancelled by the user/);
    expect(store.getSuite(r.suiteId)!.trialsLeft).toBe(1); // a resume runs it again
  });
});
