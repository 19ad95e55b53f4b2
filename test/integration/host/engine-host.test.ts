// The host against real engine processes (engine-process.ts running the fake engine).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EngineError, startEngine, type EngineHandle, type StartEngineOptions } from '../../../src-main/host/engine-host.ts';
import type { ProgressEvent } from '../../../src-shared/engine-protocol.ts';
import { COMPLETE_PROGRESS_EVENTS, type FakeBehaviour } from '../../fixtures/fake-engine.ts';
import { isAlive } from '../cli/cli-harness.ts';

const FAKE_ENGINE_PATH = fileURLToPath(new URL('../../fixtures/fake-engine.ts', import.meta.url));

interface Started {
  handle: EngineHandle;
  /** Resolves on the first progress event, i.e. once the run is under way. */
  running: Promise<void>;
}

function start(behaviour: FakeBehaviour, opts: StartEngineOptions = {}): Started {
  let markRunning!: () => void;
  const running = new Promise<void>((resolve) => (markRunning = resolve));
  const handle = startEngine(
    { behaviour },
    {
      ...opts,
      env: { KVBENCH_ENGINE_MODULE: FAKE_ENGINE_PATH, ...opts.env },
      onProgress: (p) => {
        markRunning();
        opts.onProgress?.(p);
      },
    },
  );
  return { handle, running };
}

async function engineError(promise: Promise<unknown>): Promise<EngineError> {
  const err = await promise.then(
    () => expect.fail('expected the result to reject'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EngineError);
  return err as EngineError;
}

describe('startEngine with a forked engine process', () => {
  it('delivers the result, and the engine logs', async () => {
    const logs: string[] = [];
    const { handle } = start('complete', { onLog: (level, message) => logs.push(`${level}: ${message}`) });
    expect(handle.pid).toBeTypeOf('number');
    const outcome = await handle.result;
    expect(outcome.status).toBe('complete');
    expect(outcome.results.requestsCompleted).toBe(COMPLETE_PROGRESS_EVENTS);
    expect(outcome.summaryText).toContain('complete');
    expect(logs).toContain('info: fake engine: complete');
  });

  it('throttles progress to about 10 per second, the last one before the result', async () => {
    const events: { kind: 'progress' | 'result'; atMs: number; progress?: ProgressEvent }[] = [];
    const startedMs = performance.now();
    const { handle } = start('complete', {
      onProgress: (progress) => events.push({ kind: 'progress', atMs: performance.now(), progress }),
    });
    await handle.result;
    events.push({ kind: 'result', atMs: performance.now() });
    const elapsedMs = performance.now() - startedMs;

    const progress = events.filter((e) => e.kind === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    // Far fewer than the 201 the engine emitted: ≤ one per 100 ms, plus the leading and final ones.
    expect(progress.length).toBeLessThanOrEqual(Math.ceil(elapsedMs / 100) + 2);
    const gapsMs = progress.slice(1, -1).map((e, i) => e.atMs - progress[i].atMs);
    for (const gapMs of gapsMs) expect(gapMs).toBeGreaterThanOrEqual(90);

    expect(events.at(-1)?.kind).toBe('result');
    expect(events.at(-2)?.progress?.requestsCompleted).toBe(COMPLETE_PROGRESS_EVENTS);
  });

  it('sets UV_THREADPOOL_SIZE in the engine environment at spawn', async () => {
    const { handle } = start('complete', { uvThreadpoolSize: 7 });
    expect((await handle.result).results.uvThreadpoolSize).toBe('7');
  });

  it('reports an engine that exits without a result as ENGINE_CRASHED with its exit code and output', async () => {
    const { handle } = start('crash');
    const err = await engineError(handle.result);
    expect(err.code).toBe('ENGINE_CRASHED');
    expect(err.message).toContain('exited with code 3');
    expect(err.message).toContain('crashing on purpose');
  });

  it('reports an engine killed from outside as ENGINE_CRASHED naming the signal', async () => {
    const { handle, running } = start('hang-until-cancel');
    await running;
    process.kill(handle.pid!, 'SIGKILL');
    const err = await engineError(handle.result);
    expect(err.code).toBe('ENGINE_CRASHED');
    expect(err.message).toContain('SIGKILL');
  });

  it('reports an engine that SIGKILLs itself as ENGINE_CRASHED', async () => {
    const err = await engineError(start('sigkill-self').handle.result);
    expect(err.code).toBe('ENGINE_CRASHED');
    expect(err.message).toContain('signal SIGKILL');
  });

  it('keeps the code of an error the engine throws', async () => {
    const err = await engineError(start('throw').handle.result);
    expect(err.code).toBe('INSUFFICIENT_SPACE');
    expect(err.message).toBe('target has 1 GiB free, run needs 8 GiB');
  });

  it('cancel makes the engine stop gracefully with a partial outcome', async () => {
    const { handle, running } = start('hang-until-cancel');
    await running;
    handle.cancel('user pressed stop');
    const outcome = await handle.result;
    expect(outcome.status).toBe('partial');
    expect(outcome.reason).toBe('user pressed stop');
  });

  it('a first SIGINT to the engine stops it gracefully', async () => {
    const { handle, running } = start('hang-until-cancel');
    await running;
    process.kill(handle.pid!, 'SIGINT');
    const outcome = await handle.result;
    expect(outcome.status).toBe('partial');
    expect(outcome.reason).toBe('the engine received SIGINT');
  });

  it('a second SIGINT makes the engine exit at once with code 130', async () => {
    let markAbortSeen!: () => void;
    const abortSeen = new Promise<void>((resolve) => (markAbortSeen = resolve));
    const { handle, running } = start('ignore-cancel', { onLog: (_level, m) => m.includes('abort seen') && markAbortSeen() });
    await running;
    process.kill(handle.pid!, 'SIGINT');
    await abortSeen; // the first signal was handled: the second cannot merge with it
    process.kill(handle.pid!, 'SIGINT');
    const err = await engineError(handle.result);
    expect(err.code).toBe('ENGINE_CRASHED');
    expect(err.message).toContain('exited with code 130');
  });

  it('kills an engine that ignores cancel after the grace period, with CANCELLED', async () => {
    const { handle, running } = start('ignore-cancel', { cancelGraceMs: 300 });
    await running;
    const cancelledMs = performance.now();
    handle.cancel();
    const err = await engineError(handle.result);
    expect(err.code).toBe('CANCELLED');
    expect(performance.now() - cancelledMs).toBeGreaterThanOrEqual(290);
    await expect.poll(() => isAlive(handle.pid!)).toBe(false);
  });

  it('kill() ends the engine at once with CANCELLED', async () => {
    const { handle, running } = start('ignore-cancel');
    await running;
    handle.kill();
    expect((await engineError(handle.result)).code).toBe('CANCELLED');
    await expect.poll(() => isAlive(handle.pid!)).toBe(false);
  });

  it('kills an engine that sends an invalid message, with PROTOCOL', async () => {
    const { handle } = start('invalid-message');
    const err = await engineError(handle.result);
    expect(err.code).toBe('PROTOCOL');
    expect(err.message).toContain('phase');
    await expect.poll(() => isAlive(handle.pid!)).toBe(false);
  });
});
