// The engine turns Node's compile cache on for itself: the desktop app starts it as an Electron
// utility process, never through bin/kvbench.js (which turns it on for the CLI's engines through
// NODE_COMPILE_CACHE), so an engine started without that variable must still find the cache in the
// user's cache directory, and one whose cache directory cannot be written must still run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startEngine } from '../../../src-main/host/engine-host.ts';

const ENGINE = fileURLToPath(new URL('../../fixtures/compile-cache-engine.ts', import.meta.url));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-compile-cache-'));
  dirs.push(d);
  return d;
};

async function reported(env: Record<string, string>): Promise<{ engineCompileCacheDir: unknown; workerCompileCacheDir: unknown }> {
  const outcome = await startEngine({}, { env: { KVBENCH_ENGINE_MODULE: ENGINE, ...env } }).result;
  expect(outcome.status).toBe('complete');
  return outcome.results as { engineCompileCacheDir: unknown; workerCompileCacheDir: unknown };
}

describe('an engine started without NODE_COMPILE_CACHE (as the desktop app starts it)', () => {
  it('turns the compile cache on for itself and its worker threads, in $XDG_CACHE_HOME/kvbench', async (ctx) => {
    if (process.env.NODE_COMPILE_CACHE !== undefined) ctx.skip('NODE_COMPILE_CACHE is set for the tests themselves: it would reach the engine anyway');
    const xdg = tempDir();
    const r = await reported({ XDG_CACHE_HOME: xdg });
    expect(r.engineCompileCacheDir).toEqual(expect.stringContaining(path.join(xdg, 'kvbench', 'node-compile-cache')));
    expect(r.workerCompileCacheDir).toBe(r.engineCompileCacheDir);
    expect(fs.readdirSync(path.join(xdg, 'kvbench', 'node-compile-cache')).length).toBeGreaterThan(0);
  }, 60_000);

  it('runs without it where the cache directory cannot be made', async (ctx) => {
    if (process.env.NODE_COMPILE_CACHE !== undefined) ctx.skip('NODE_COMPILE_CACHE is set for the tests themselves: it would reach the engine anyway');
    const notADirectory = path.join(tempDir(), 'a-file');
    fs.writeFileSync(notADirectory, '');
    expect(await reported({ XDG_CACHE_HOME: notADirectory })).toEqual({ engineCompileCacheDir: null, workerCompileCacheDir: null });
  }, 60_000);

  it('leaves it off when NODE_DISABLE_COMPILE_CACHE says so', async () => {
    expect(await reported({ NODE_DISABLE_COMPILE_CACHE: '1', XDG_CACHE_HOME: tempDir() })).toEqual({ engineCompileCacheDir: null, workerCompileCacheDir: null });
  }, 60_000);
});
