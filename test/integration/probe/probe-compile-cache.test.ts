// The probe process turns Node's compile cache on for itself, as the engine does
// (engine-compile-cache.test.ts): the desktop app starts it (a suite's drive probe) without going
// through bin/kvbench.js, so no NODE_COMPILE_CACHE reaches it, and its modules must still be
// compiled into the cache in the user's cache directory.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const PROBE_PROCESS = fileURLToPath(new URL('../../../src-main/engine/probe/probe-process.ts', import.meta.url));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Starts the probe process with `env` as its whole environment and sends it `message`; resolves with what it answered and its exit code. */
function probeAnswers(env: NodeJS.ProcessEnv, message: unknown): Promise<{ answers: unknown[]; code: number | null }> {
  const child = fork(PROBE_PROCESS, [], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
  const answers: unknown[] = [];
  child.on('message', (m) => answers.push(m));
  child.send(message as never);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ answers, code })));
}

describe('a probe process started without NODE_COMPILE_CACHE (as the desktop app starts it)', () => {
  it('compiles its modules into the cache in $XDG_CACHE_HOME/kvbench', async () => {
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-probe-compile-cache-'));
    dirs.push(xdg);
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: xdg };
    delete env.NODE_COMPILE_CACHE;
    delete env.NODE_DISABLE_COMPILE_CACHE;
    // A message it refuses: it loads its modules to read it, answers, and exits, measuring nothing.
    const r = await probeAnswers(env, { type: 'nonsense' });
    expect(r.answers).toEqual([{ type: 'error', error: { code: 'PROTOCOL', message: 'malformed message from the host' } }]);
    expect(r.code).toBe(1);
    const cache = path.join(xdg, 'kvbench', 'node-compile-cache');
    expect(fs.existsSync(cache) ? fs.readdirSync(cache, { recursive: true }).length : 0).toBeGreaterThan(0);
  }, 60_000);
});
