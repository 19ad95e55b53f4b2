// bench/device/gpu-exit-hook.ts, which gpu-check.sh runs on the lent GPU: over the stub libcuda here,
// a tier never closed gives its device memory back from the process-exit hook, on process.exit()
// and on an uncaught exception, and the script's verdict says so (or says it could not measure).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skippedBecause } from '../../support/skip.ts';
import { buildStubLibcuda, hasCc } from './stub-libcuda.ts';

const script = fileURLToPath(new URL('../../../bench/device/gpu-exit-hook.ts', import.meta.url));

function runHook(how: string, env: Record<string, string>) {
  const r = spawnSync(process.execPath, [script, how, '--budget-gib', '1'], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe.skipIf(skippedBecause(!hasCc, 'no C compiler (cc) to build the stub libcuda'))('bench/device/gpu-exit-hook.ts over a stub libcuda', () => {
  let dir: string;
  let lib: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvbench-exit-hook-'));
    lib = buildStubLibcuda(dir);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['exit', 0],
    ['throw', 1],
  ])('the hook gives the memory back while the process still runs (%s)', (how, status) => {
    const r = runHook(how, { KVBENCH_CUDA_LIBRARY: lib, STUB_CUDA_MEMORY_MIB: '4096' });
    expect(r.status, r.out).toBe(status);
    expect(r.out).toContain(
      `EXIT-HOOK ${how}: ok; free device memory 4.00 GiB before the tier opened, 3.00 GiB while it held 1.00 GiB, 4.00 GiB after its exit hook (exit code ${status})`,
    );
  });

  it('says it could not measure where there is no driver', () => {
    const r = runHook('exit', { KVBENCH_CUDA_LIBRARY: path.join(dir, 'no-such-libcuda.so.1') });
    expect(r.status, r.out).toBe(0);
    expect(r.out).toMatch(/^EXIT-HOOK exit: NOT MEASURED \(/m);
  });
});
