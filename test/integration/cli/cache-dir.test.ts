// A --cache-dir that does not exist yet: kvbench creates it for the run and, having created it,
// removes it again, so the file system looks as it did before.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TINY_RUN_FLAGS, explain, makeTempDir, readResults, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

async function shortRun(cacheDir: string, tmp: string): Promise<void> {
  const output = path.join(tmp, 'results.json');
  const r = await runCli(
    ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '5', '--max-requests', '3', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '5', '--output', output],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  const res = readResults(output);
  expect(res.kvbench.tiers.storage.dir).toBe(cacheDir);
  expect(res.kvbench.tier_bytes.storage.write_bytes, 'the run did use the directory').toBeGreaterThan(0);
}

describe('kvbench run --cache-dir <new directory>', () => {
  it('removes a cache directory it had to create', async () => {
    const tmp = makeTempDir();
    await shortRun(path.join(tmp, 'new-cache'), tmp);
    expect(fs.readdirSync(tmp)).toEqual(['results.json']);
  });

  it('removes every level of a nested cache directory it had to create', async () => {
    const tmp = makeTempDir();
    await shortRun(path.join(tmp, 'a', 'b', 'c'), tmp);
    expect(fs.readdirSync(tmp), 'a/b/ left behind').toEqual(['results.json']);
  });
});
