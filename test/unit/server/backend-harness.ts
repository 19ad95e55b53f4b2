// Shared by the server and app tests: a backend over a real SQLite file in a temp directory, with
// hardware detection and the engine replaced by fakes (the engine itself is tested elsewhere).
import fs from 'node:fs';
import path from 'node:path';
import type { EngineHandle } from '../../../src-main/host/engine-host.ts';
import { CONTRACT_DROPPED, createBackend, type Backend, type DetectFn } from '../../../src-main/server/backend.ts';
import type { StartEngineFn } from '../../../src-main/suite/runner.ts';
import type { RunOutcome } from '../../../src-shared/engine-protocol.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { cancelledOutcome, fakeHardware, kvbenchResults, tempDir } from '../store/fixtures.ts';

export type EngineBehaviour = 'complete' | 'crash' | 'hang' | 'disk-full';

export interface TestBackend {
  backend: Backend;
  dir: string;
  db: string;
  cacheDir: string;
  settingsFile: string;
  events: AppEvent[];
  engineCalls: Record<string, unknown>[];
  /** Resolves when an event of this type has arrived (now or later). */
  waitFor(type: AppEvent['type'], timeoutMs?: number): Promise<AppEvent>;
}

export function fakeStartEngine(behaviours: EngineBehaviour[], calls: Record<string, unknown>[]): StartEngineFn {
  let n = 0;
  return (options, opts): EngineHandle => {
    const behaviour = behaviours[Math.min(n, behaviours.length - 1)] ?? 'complete';
    n += 1;
    calls.push(options as Record<string, unknown>);
    let cancel: (reason: string) => void = () => {};
    const results = kvbenchResults({ tokPerS: 100 * n }) as unknown as Record<string, unknown>;
    const result = new Promise<RunOutcome>((resolve, reject) => {
      setTimeout(() => {
        opts.onProgress?.({
          phase: 'running', elapsedNs: 5e8, durationNs: 1e9, requestsCompleted: 3, maxRequests: null, activeUsers: 4, queueDepth: 1,
          generatedTokens: 0,
          storageReadBytes: 0,
          storageWriteBytes: 0,
          generatedTokensPerSec: 120, storageReadBytesPerSec: 2e8, storageWriteBytesPerSec: 1e8, cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0,
          e2eLatencyP95Ns: 2e7, storageReadP95Ns: 5e6, eventLoopLagP99Ns: null,
        });
        if (behaviour === 'complete') setTimeout(() => resolve({ status: 'complete', reason: null, results, summaryText: 'ok' }), 5);
        else if (behaviour === 'disk-full') setTimeout(() => resolve({ status: 'partial', reason: 'disk full (ENOSPC): stopped after 3 completed requests', results, summaryText: 'partial' }), 5);
        else if (behaviour === 'crash') setTimeout(() => reject(Object.assign(new Error('engine process was killed by signal SIGKILL'), { code: 'ENGINE_CRASHED' })), 5);
        else cancel = () => setTimeout(() => resolve(cancelledOutcome(results)), 5);
      }, 5);
    });
    return { pid: undefined, result, cancel: (reason = 'cancelled') => cancel(reason), kill: () => {} };
  };
}

export async function testBackend(o: { behaviours?: EngineBehaviour[]; detect?: DetectFn; mode?: 'electron' | 'browser' } = {}): Promise<TestBackend> {
  const dir = tempDir('kvb-backend-');
  const db = path.join(dir, 'kvbench.db');
  const cacheDir = path.join(dir, 'cache');
  fs.mkdirSync(cacheDir);
  const settingsFile = path.join(dir, 'settings.json');
  const engineCalls: Record<string, unknown>[] = [];
  const detect: DetectFn =
    o.detect ??
    (async (cd) => {
      const hw = fakeHardware({ hostname: 'lab-a', probe: true });
      hw.cacheDir = { ...hw.cacheDir!, path: cd, resolvedPath: cd };
      return hw;
    });
  const dropped: string[] = [];
  const backend = await createBackend({
    mode: o.mode ?? 'browser',
    settingsFile,
    defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    startEngine: fakeStartEngine(o.behaviours ?? ['complete'], engineCalls),
    detect,
    cancelGraceMs: 1000,
    log: (_level, message) => {
      if (message.includes(CONTRACT_DROPPED)) dropped.push(message);
    },
  });
  // Every answer of every test is checked whole: a field a handler fills and the contract lacks
  // (dropped on the way to the page) fails the call that returned it.
  const invoke = backend.invoke.bind(backend);
  backend.invoke = async (channel, request) => {
    const result = await invoke(channel, request);
    const drift = dropped.splice(0);
    if (drift.length > 0) throw new Error(`the backend dropped fields the contract lacks: ${drift.join('; ')}`);
    return result;
  };
  const events: AppEvent[] = [];
  const waiters: { type: AppEvent['type']; resolve: (e: AppEvent) => void }[] = [];
  backend.subscribe((e) => {
    events.push(e);
    for (const w of waiters.filter((x) => x.type === e.type)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(e);
    }
  });
  return {
    backend,
    dir,
    db,
    cacheDir,
    settingsFile,
    events,
    engineCalls,
    waitFor(type, timeoutMs = 10_000) {
      const seen = events.find((e) => e.type === type);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} event within ${timeoutMs} ms; got ${events.map((e) => e.type).join(', ')}`)), timeoutMs);
        waiters.push({ type, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
  };
}
