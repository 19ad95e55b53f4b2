// An engine must not outlive its host, even wedged (its main thread spinning, so that cancel,
// signals and the IPC disconnect never reach it): the host kills its engines when it exits, and
// when the host itself is SIGKILLed the engine's watchdog thread ends the engine.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../cli/cli-harness.ts';

const PARENT = fileURLToPath(new URL('../../fixtures/engine-parent.ts', import.meta.url));
const started: number[] = [];

/** Runs the parent fixture; resolves with the engine's pid and how long after the parent's end the engine was gone. */
async function orphan(how: 'exit' | 'sigkill'): Promise<{ enginePid: number; goneAfterMs: number }> {
  const parent = spawn(process.execPath, [PARENT, how], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  parent.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  await new Promise<void>((resolve) => parent.once('close', () => resolve()));
  const parentEndMs = performance.now();
  const enginePid = Number(/engine (\d+)/.exec(out)?.[1]);
  expect(enginePid, `parent printed: ${out}`).toBeGreaterThan(0);
  started.push(enginePid);
  while (isAlive(enginePid) && performance.now() - parentEndMs < 20_000) await new Promise((r) => setTimeout(r, 50));
  return { enginePid, goneAfterMs: performance.now() - parentEndMs };
}

afterEach(() => {
  for (const pid of started.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
});

describe('a wedged engine does not outlive its host', () => {
  it('the host kills it when the host exits through process.exit', async () => {
    const { enginePid, goneAfterMs } = await orphan('exit');
    expect(isAlive(enginePid)).toBe(false);
    // At once, from the host's exit hook: well inside the engine watchdog's own 7 s.
    expect(goneAfterMs).toBeLessThan(5_000);
  });

  it("its watchdog thread kills it when the host is SIGKILLed (the engine's event loop never runs again)", async () => {
    const { enginePid, goneAfterMs } = await orphan('sigkill');
    expect(isAlive(enginePid)).toBe(false);
    expect(goneAfterMs).toBeGreaterThan(5_000); // the grace the main thread would get to clean up
  }, 30_000);
});
