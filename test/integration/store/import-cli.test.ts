// `kvbench import` as a user runs it: the real command on a real database in a temp directory.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kvbenchResults, writeResults } from '../../unit/store/fixtures.ts';
import { explain, makeTempDir, removeTempDirs, runCli } from '../cli/cli-harness.ts';

afterEach(() => removeTempDirs());

describe('kvbench import', () => {
  it('re-running an import after fixing a bad file stores only that file, and says which were stored before', { timeout: 60_000 }, async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    const t4 = writeResults(tmp, 't4.json', kvbenchResults({ tokPerS: 100 }));
    const t5 = writeResults(tmp, 't5.json', kvbenchResults({ tokPerS: 110 }));
    const bad = writeResults(tmp, 'bad.json', '{bad');
    const args = ['import', t4, t5, bad, '--system', 'D', '--scenario', 'storage-only', '--db', db];
    const first = await runCli(args, { cwd: tmp });
    expect(first.code, explain(first)).toBe(3);
    writeResults(tmp, 'bad.json', kvbenchResults({ tokPerS: 120 }));
    const again = await runCli(args, { cwd: tmp });
    expect(again.code, explain(again)).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^not imported ${t4}: already stored as trial 1 \\(system D, suite 1\\)`, 'm'));
    expect(again.stdout).toMatch(new RegExp(`^not imported ${t5}: already stored as trial 2`, 'm'));
    expect(again.stdout.match(/^imported /gm)).toHaveLength(1);
    const report = await runCli(['report', '--system', 'D', '--db', db], { cwd: tmp });
    expect(report.stdout).toMatch(/^3 trial\(s\)\.$/m);
    // Nothing new at all: an error exit that says so.
    const third = await runCli(args, { cwd: tmp });
    expect(third.code, explain(third)).toBe(1);
    expect(third.stderr).toMatch(/nothing new was imported/);
  });

  it('--run-flags that contradict a kvbench file\'s recorded options refuse it, naming each option', { timeout: 60_000 }, async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    const r = kvbenchResults({ tokPerS: 100 });
    r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 3, cpuMemGb: 0, gpuMemGb: 0, generationMode: 'fast' };
    const f = writeResults(tmp, 'trial4.json', r);
    const imp = await runCli(['import', f, '--system', 'RF', '--scenario', 'storage-only', '--db', db,
      '--run-flags', '--model llama3.1-70b-instruct --num-users 999 --duration 300 --cpu-mem-gb 0 --gpu-mem-gb 0'], { cwd: tmp });
    expect(imp.code, explain(imp)).toBe(1);
    expect(imp.stderr).toContain(`skipped ${f}: --run-flags contradict the run options this kvbench file records: --model llama3.1-70b-instruct (the file: tiny-1b), --num-users 999 (the file: 4), --duration 300 (the file: 3)`);
    expect(imp.stdout).not.toMatch(/^imported /m);
  });
});
