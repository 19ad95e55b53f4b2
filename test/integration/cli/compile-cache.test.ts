// Every kvbench process strips and compiles its TypeScript at start unless Node's compile cache is
// on: about 0.75 CPU-s for the CLI of `kvbench run` and as much for the engine and its workers, which
// engine-vs-fio counts in kvbench's CPU per GB. bin/kvbench.js turns it on for itself and, through
// NODE_COMPILE_CACHE, for the processes and threads it starts.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TINY_RUN_FLAGS, explain, makeTempDir, removeTempDirs, runCli } from './cli-harness.ts';

const ENGINE = fileURLToPath(new URL('../../fixtures/compile-cache-engine.ts', import.meta.url));

afterEach(removeTempDirs);

async function reported(env: Record<string, string>): Promise<{ engineCompileCacheDir: unknown; workerCompileCacheDir: unknown }> {
  const tmp = makeTempDir();
  const output = path.join(tmp, 'results.json');
  const r = await runCli(['run', ...TINY_RUN_FLAGS, '--duration', '1', '--cpu-mem-gb', '0', '--cache-dir', path.join(tmp, 'cache'), '--output', output], {
    cwd: tmp,
    env: { KVBENCH_ENGINE_MODULE: ENGINE, ...env },
  });
  expect(r.code, explain(r)).toBe(0);
  return JSON.parse(fs.readFileSync(output, 'utf8'));
}

describe('kvbench and Node’s compile cache', () => {
  it('runs the engine process and its worker threads with the compile cache', async (ctx) => {
    if (process.env.NODE_COMPILE_CACHE !== undefined) ctx.skip('NODE_COMPILE_CACHE is set for the tests themselves: it would reach the engine without kvbench');
    const r = await reported({});
    expect(r.engineCompileCacheDir).toEqual(expect.any(String));
    expect(r.workerCompileCacheDir).toBe(r.engineCompileCacheDir);
  }, 60_000);

  it('keeps it in the user\'s cache directory ($XDG_CACHE_HOME/kvbench), never in $TMPDIR (a run\'s temp dir gets nothing it did not ask for)', async (ctx) => {
    if (process.env.NODE_COMPILE_CACHE !== undefined) ctx.skip('NODE_COMPILE_CACHE is set for the tests themselves: it would reach the engine without kvbench');
    const xdg = makeTempDir();
    const tmpDir = makeTempDir();
    const r = await reported({ XDG_CACHE_HOME: xdg, TMPDIR: tmpDir });
    expect(r.engineCompileCacheDir).toEqual(expect.stringContaining(path.join(xdg, 'kvbench', 'node-compile-cache')));
    expect(fs.readdirSync(tmpDir)).toEqual([]);
  }, 60_000);

  it('leaves it off when NODE_DISABLE_COMPILE_CACHE says so', async () => {
    const r = await reported({ NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(r).toEqual({ engineCompileCacheDir: null, workerCompileCacheDir: null });
  }, 60_000);
});
