// `kvbench run`'s wall-clock limit, against real engine processes (the fake engine): one that never
// stops is cancelled at the limit and killed after the cancel grace, instead of holding the command
// forever; one that stops on the cancel is kept as partial, with the limit as its reason.
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEngineWithProgress } from '../../../src-main/cli/run-command.ts';
import { DEFAULT_RUN_OPTIONS, type RunOptions } from '../../../src-shared/domain/run-options.ts';
import type { FakeBehaviour } from '../../fixtures/fake-engine.ts';

const FAKE_ENGINE_PATH = fileURLToPath(new URL('../../fixtures/fake-engine.ts', import.meta.url));
const LIMITS = { timeLimitMs: 1_000, cancelGraceMs: 1_000 };

let savedModule: string | undefined;
beforeEach(() => {
  savedModule = process.env.KVBENCH_ENGINE_MODULE;
  process.env.KVBENCH_ENGINE_MODULE = FAKE_ENGINE_PATH; // the engine inherits this process's environment
});
afterEach(() => {
  if (savedModule === undefined) delete process.env.KVBENCH_ENGINE_MODULE;
  else process.env.KVBENCH_ENGINE_MODULE = savedModule;
});

const options = (behaviour: FakeBehaviour): RunOptions => ({ ...DEFAULT_RUN_OPTIONS, logLevel: 'ERROR', behaviour }) as unknown as RunOptions;

describe('kvbench run past its wall-clock limit', () => {
  it('kills a wedged engine after the cancel grace and says it was the limit', async () => {
    const run = await runEngineWithProgress(options('spin'), LIMITS);
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.code).toBe('CANCELLED');
    expect(run.message).toMatch(/^engine did not stop within 1000 ms of cancel \(the run exceeded its 1 s wall-clock limit \(2 × \(--warm-up \+ --duration\) \+ 120 s/);
  }, 30_000);

  it('keeps what an engine that stops returns, as partial with the limit as the reason', async () => {
    const run = await runEngineWithProgress(options('hang-until-cancel'), LIMITS);
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    expect(run.outcome.status).toBe('partial');
    expect(run.outcome.reason).toMatch(/^the run exceeded its 1 s wall-clock limit/);
  }, 30_000);
});
