// The engine in an "Electron utility process": the same host and protocol as the CLI through the
// utility-process transport (here the fake utilityProcess forks a Node child of the same entry).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { utilityProcessTransport } from '../../../src-main/app/utility-engine.ts';
import { EngineError, startEngine } from '../../../src-main/host/engine-host.ts';
import { ENGINE_ENTRY_FILE } from '../../../src-main/server/paths.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { planSuite } from '../../../src-main/suite/planner.ts';
import { runSuite } from '../../../src-main/suite/runner.ts';
import { fakeHardware, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { createFakeElectron } from './fake-electron.ts';

const FAKE_ENGINE = path.resolve(import.meta.dirname, '../../fixtures/fake-engine.ts');

afterEach(() => removeTempDirs());

describe('engine in a utility process', () => {
  it('runs a trial through the host protocol, with the thread pool size in its environment', { timeout: 30_000 }, async () => {
    const fake = createFakeElectron();
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE);
    const progress: number[] = [];
    const handle = startEngine({ behaviour: 'complete' }, { transport, env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE }, uvThreadpoolSize: 20, onProgress: (p) => progress.push(p.requestsCompleted) });
    // Like Electron's, the fake utility process knows its pid only once it has spawned.
    expect(handle.pid).toBeUndefined();
    const outcome = await handle.result;
    expect(outcome.status).toBe('complete');
    expect(outcome.results).toMatchObject({ requestsCompleted: 200, uvThreadpoolSize: '20' });
    // The host reads it when asked, so a crashed engine's run directory can be found by its pid.
    expect(handle.pid).toBeGreaterThan(0);
    expect(progress.at(-1)).toBe(200);
    expect(fake.forked).toHaveLength(1);
    expect(fake.forked[0].entry).toBe(ENGINE_ENTRY_FILE);
    expect(fake.forked[0].options).toMatchObject({ serviceName: 'kvbench engine', stdio: 'pipe' });
  });

  it('writes the engine\'s stderr to the app\'s log, line by line (Node\'s own warnings go nowhere else)', { timeout: 30_000 }, async () => {
    const fake = createFakeElectron();
    const logged: string[] = [];
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE, (m) => logged.push(m));
    const handle = startEngine({ behaviour: 'warn-and-complete' }, { transport, env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE } });
    const closed = new Promise((resolve) => fake.forked[0].child.once('close', resolve)); // its stderr read to the end
    expect((await handle.result).status).toBe('complete');
    await closed;
    expect(logged).toContainEqual(expect.stringMatching(new RegExp(`^engine process ${handle.pid}: \\(node:${handle.pid}\\) Warning: fake engine: a warning only stderr carries$`)));
  });

  it('reports a crashed engine as ENGINE_CRASHED with the end of its output', { timeout: 30_000 }, async () => {
    const fake = createFakeElectron();
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE);
    const handle = startEngine({ behaviour: 'crash' }, { transport, env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE } });
    const err = (await handle.result.catch((e: unknown) => e)) as EngineError;
    expect(err).toBeInstanceOf(EngineError);
    expect(err.code).toBe('ENGINE_CRASHED');
    expect(err.message).toMatch(/exited with code 3[\s\S]*crashing on purpose/);
  });

  it('a crashed engine keeps its pid, so the runner removes the run directory it left', { timeout: 30_000 }, async () => {
    const fake = createFakeElectron();
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE);
    const cacheDir = tempDir('kvb-utility-cache-');
    const store = openStore(path.join(tempDir(), 'kvbench.db'));
    try {
      const hw = fakeHardware();
      const plan = planSuite(hw, { profile: 'smoke', cacheDir, trials: 1, scenarios: ['storage-only'] });
      const r = await runSuite(plan, {
        store,
        hardware: hw,
        startEngine: (options, opts) =>
          startEngine({ ...(options as object), behaviour: 'crash-leaving-run-dir' }, { ...opts, transport, env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE } }),
      });
      expect(r.counts.failed).toBe(1);
      expect(r.trials[0].reason).toMatch(/ENGINE_CRASHED/);
      // Electron has cleared the utility process's pid by its 'exit'; the transport remembered it.
      expect(fs.readdirSync(cacheDir)).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('the real engine killed with SIGKILL mid-trial: that trial is recorded failed with the reason, its run directory removed, the next trial runs', { timeout: 120_000 }, async () => {
    // No KVBENCH_ENGINE_MODULE: engine-process.ts runs the real benchmark, as in the app.
    const fake = createFakeElectron();
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE);
    const cacheDir = tempDir('kvb-utility-kill-');
    const db = path.join(tempDir(), 'kvbench.db');
    const store = openStore(db);
    let killedPid: number | null = null;
    let leftAfterFirst: string[] | null = null;
    try {
      const hw = fakeHardware();
      const plan = planSuite(hw, { profile: 'smoke', cacheDir, trials: 2, scenarios: ['storage-only'], durationS: 3 });
      const r = await runSuite(plan, {
        store,
        hardware: hw,
        // Looked at before the next trial's engine starts (it would remove a dead engine's directory too).
        onEvent: (e) => {
          if (e.type === 'suite.trialFinished' && leftAfterFirst === null) leftAfterFirst = fs.readdirSync(cacheDir);
        },
        // The app's composition (main.ts): the host's startEngine over the utility-process transport.
        startEngine: (options, opts) => {
          const handle = startEngine(options, {
            ...opts,
            transport,
            onProgress: (p) => {
              opts.onProgress?.(p);
              // Once the measured phase runs and the run directory carries its owner marker, as faults.test.ts does from outside.
              if (killedPid === null && p.phase === 'running' && fs.readdirSync(cacheDir).some((n) => n.startsWith('kvbench-run-'))) {
                killedPid = handle.pid!;
                process.kill(killedPid, 'SIGKILL');
              }
            },
          });
          return handle;
        },
      });
      expect(killedPid, 'the first trial was killed while it ran').not.toBeNull();
      expect(fake.forked).toHaveLength(2);
      expect(fake.forked[0].child.signalCode).toBe('SIGKILL');
      expect(r.counts).toEqual({ complete: 1, partial: 0, failed: 1, aborted: 0 });
      expect(r.trials.map((t) => t.status)).toEqual(['failed', 'complete']);
      // Electron (and the fake) report an exit code, not the signal: the reason says the engine died
      // before sending its result.
      expect(r.trials[0].reason).toMatch(/^ENGINE_CRASHED: engine process exited with code \d+ before sending a result/);
      const stored = store.listTrials({ order: 'asc' });
      expect(stored.map((t) => [t.trialIndex, t.status])).toEqual([
        [0, 'failed'],
        [1, 'complete'],
      ]);
      expect(stored[0].statusReason).toBe(r.trials[0].reason);
      // Nothing else lost: the second trial's results are stored in full.
      expect(stored[1].metrics.requests_completed).toBeGreaterThan(0);
      expect(leftAfterFirst, "the killed engine's run directory, removed by its pid when its trial ended").toEqual([]);
      expect(fs.readdirSync(cacheDir)).toEqual([]);
    } finally {
      store.close();
    }
  });

  it('kill() ends even an engine that cannot run its SIGTERM handler, and settles only once it has exited', { timeout: 30_000 }, async () => {
    const fake = createFakeElectron();
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE);
    const child = () => fake.forked[0].child;
    let markRunning!: () => void;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    const handle = startEngine({ behaviour: 'spin' }, { transport, env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE }, onProgress: () => markRunning() });
    try {
      await running;
      await new Promise((resolve) => setTimeout(resolve, 400)); // past its last yield: now it spins
      handle.kill();
      const err = (await handle.result.catch((e: unknown) => e)) as EngineError;
      expect(err.code).toBe('CANCELLED');
      // Electron's kill() is a SIGTERM, which a spinning engine never gets to handle.
      expect(child().signalCode).toBe('SIGKILL');
    } finally {
      child().kill('SIGKILL');
    }
  });

  it('an engine that ignores cancel is killed after the grace period, and gone when the trial settles', { timeout: 30_000 }, async () => {
    const fake = createFakeElectron();
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE);
    const child = () => fake.forked[0].child;
    let markRunning!: () => void;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    const handle = startEngine({ behaviour: 'ignore-cancel' }, { transport, env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE }, cancelGraceMs: 300, onProgress: () => markRunning() });
    try {
      await running;
      handle.cancel('stop');
      const err = (await handle.result.catch((e: unknown) => e)) as EngineError;
      expect(err.code).toBe('CANCELLED');
      expect(err.message).toMatch(/did not stop within 300 ms/);
      expect(child().signalCode).toBe('SIGKILL');
    } finally {
      child().kill('SIGKILL');
    }
  });

  it('cancels gracefully: partial results come back', { timeout: 30_000 }, async () => {
    const fake = createFakeElectron();
    const transport = utilityProcessTransport(fake.utilityProcess as never, ENGINE_ENTRY_FILE);
    let markRunning!: () => void;
    const running = new Promise<void>((resolve) => (markRunning = resolve));
    const handle = startEngine({ behaviour: 'hang-until-cancel' }, { transport, env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE }, onProgress: () => markRunning() });
    await running; // a cancel before the engine runs has its own outcome (tested in the host tests)
    handle.cancel('user pressed cancel');
    const outcome = await handle.result;
    expect(outcome).toMatchObject({ status: 'partial', reason: expect.stringContaining('user pressed cancel') });
  });
});
