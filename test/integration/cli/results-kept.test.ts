// `kvbench run` checks its output paths when it starts, but a run lasts minutes to hours: by its end
// the output's disk may be full or its directory gone. The results exist only in memory then, so
// they must go somewhere else (named on stderr), or, as a last resort, to stderr itself; never lost.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { askedFileFolder, RESULTS_JSON_BEGIN, RESULTS_JSON_END } from '../../../src-main/util/keep-file.ts';
import { GONE_ENGINE_RESULTS } from '../../fixtures/outputs-gone-engine.ts';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { explain, makeTempDir, oneLayerRunFlags, readResults, removeTempDirs, runCli, runDirsIn, startCli, waitFor, type CliResult } from './cli-harness.ts';

const GONE_ENGINE = fileURLToPath(new URL('../../fixtures/outputs-gone-engine.ts', import.meta.url));

afterEach(() => {
  unmountTmpfsMounts();
  removeTempDirs();
});

/** The file a `<what> saved instead in FILE` line of stderr names. */
function savedInstead(r: CliResult, what: string): string {
  const m = new RegExp(`^${what} saved instead in (.+)$`, 'm').exec(r.stderr);
  expect(m, `stderr names where the ${what} went\n${explain(r)}`).not.toBeNull();
  return m![1];
}

/** Starts a short real run writing `output` and `xlsx`; `whileRunning` runs once the engine writes its first entry. */
async function runAndThen(tmp: string, cacheDir: string, output: string, xlsx: string, whileRunning: () => void): Promise<CliResult> {
  const cli = startCli(
    ['run', ...oneLayerRunFlags(tmp), '--num-users', '2', '--duration', '3', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '1', '--output', output, '--xlsx-output', xlsx],
    { cwd: tmp },
  );
  let exited = false;
  void cli.done.then(() => (exited = true));
  await waitFor('the engine to create its run directory', () => exited || runDirsIn(cacheDir).length > 0);
  expect(exited, 'the run was still going when its output went away').toBe(false);
  whileRunning();
  return cli.done;
}

describe('kvbench run whose output cannot be written at the end', () => {
  it('keeps the results in the cache directory when the output directory is removed during the run', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'cache');
    fs.mkdirSync(cacheDir);
    const outDir = path.join(tmp, 'out');
    fs.mkdirSync(outDir);
    const output = path.join(outDir, 'results.json');
    const xlsx = path.join(outDir, 'results.xlsx');

    const r = await runAndThen(tmp, cacheDir, output, xlsx, () => fs.rmSync(outDir, { recursive: true }));

    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(`could not write ${output}`);
    expect(r.stderr).toContain(`could not write ${xlsx}`);
    const keptJson = savedInstead(r, 'Results');
    const keptXlsx = savedInstead(r, 'XLSX');
    expect(path.dirname(keptJson)).toBe(cacheDir);
    expect(path.dirname(keptXlsx)).toBe(cacheDir);
    const res = readResults(keptJson);
    expect(res.kvbench.status).toBe('complete');
    expect(res.requests_completed).toBeGreaterThan(0);
    expect(fs.readFileSync(keptXlsx).subarray(0, 2).toString(), 'an XLSX is a zip').toBe('PK');
    expect(r.stderr).not.toContain(RESULTS_JSON_BEGIN);
    expect(runDirsIn(cacheDir)).toEqual([]);
  });

  it('keeps the results elsewhere when the output disk fills up during the run (tmpfs, root only)', async (ctx) => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'cache');
    fs.mkdirSync(cacheDir);
    const outDir = path.join(tmp, 'out');
    fs.mkdirSync(outDir);
    mountTmpfsOrSkip(ctx, outDir, '8m');
    const output = path.join(outDir, 'results.json');
    const xlsx = path.join(outDir, 'results.xlsx');
    let fillerBytes = 0;

    const r = await runAndThen(tmp, cacheDir, output, xlsx, () => (fillerBytes = fillUntilFull(path.join(outDir, 'filler'))));

    expect(fillerBytes).toBeGreaterThan(0);
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`could not write ${output}: .*ENOSPC`));
    const res = readResults(savedInstead(r, 'Results'));
    expect(res.requests_completed).toBeGreaterThan(0);
    expect(fs.statSync(savedInstead(r, 'XLSX')).size).toBeGreaterThan(0);
    expect(fs.readdirSync(outDir), 'nothing half-written left on the full disk').toEqual(['filler']);
  });

  it('never saves in the cache directory\'s parent (it may be /mnt, or another user\'s folder)', async () => {
    const base = makeTempDir();
    const [work, out, cacheParent] = ['work', 'out', 'cache-parent'].map((d) => path.join(base, d));
    const cache = path.join(cacheParent, 'cache');
    for (const d of [work, out, cache]) fs.mkdirSync(d, { recursive: true });
    const output = path.join(out, 'results.json');

    const r = await runCli(['run', '--model', 'tiny-1b', '--cpu-mem-gb', '0', '--cache-dir', cache, '--output', output], {
      cwd: work,
      env: { KVBENCH_ENGINE_MODULE: GONE_ENGINE, KVBENCH_TEST_REMOVE_DIRS: JSON.stringify([out, cache]) },
    });

    expect(r.code, explain(r)).toBe(1);
    expect(fs.readdirSync(cacheParent), 'nothing written beside the cache directory').toEqual([]);
    const saved = fs.readdirSync(work).filter((n) => n.startsWith('kvbench-results-'));
    expect(saved, explain(r)).toHaveLength(1);
    expect(JSON.parse(fs.readFileSync(path.join(work, saved[0]), 'utf8'))).toEqual(GONE_ENGINE_RESULTS);
  });

  it('never saves beside a device or FIFO given as --output (/dev/full: not in /dev), but in the next place', async () => {
    // review rev13 #10: `--output /dev/full` kept the results as a regular file in /dev (devtmpfs).
    const base = makeTempDir();
    const [work, cache] = ['work', 'cache'].map((d) => path.join(base, d));
    for (const d of [work, cache]) fs.mkdirSync(d);
    const fifo = path.join(base, 'fifo-dir', 'results.fifo');
    fs.mkdirSync(path.dirname(fifo));
    execFileSync('mkfifo', [fifo]);
    const devKvbench = (): string[] => fs.readdirSync('/dev').filter((n) => n.startsWith('kvbench-'));
    const devBefore = devKvbench();

    const r = await runCli(['run', '--model', 'tiny-1b', '--cpu-mem-gb', '0', '--cache-dir', cache, '--output', '/dev/full'], {
      cwd: work,
      env: { KVBENCH_ENGINE_MODULE: GONE_ENGINE },
    });
    const madeInDev = devKvbench().filter((n) => !devBefore.includes(n));
    for (const n of madeInDev) fs.rmSync(path.join('/dev', n)); // what the old code left there
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('could not write /dev/full');
    const kept = savedInstead(r, 'Results');
    expect(path.dirname(kept), 'the cache directory: the next place').toBe(cache);
    expect(JSON.parse(fs.readFileSync(kept, 'utf8'))).toEqual(GONE_ENGINE_RESULTS);
    expect(madeInDev, 'nothing new in /dev').toEqual([]);

    // Nor beside a FIFO or a descriptor (the folder endpoint run's rescue starts with, too); a file's folder is the first place.
    expect(askedFileFolder(fifo)).toEqual([]);
    expect(askedFileFolder('/dev/stdout')).toEqual([]);
    expect(askedFileFolder(path.join(base, 'new.json'))).toEqual([base]);
  });

  it('prints the results JSON on stderr, between marker lines, when every place is gone', async () => {
    const base = makeTempDir();
    const dirs = ['work', 'out', 'tmp', 'cache-parent'].map((d) => path.join(base, d));
    for (const d of dirs) fs.mkdirSync(d);
    const [work, out, tmp, cacheParent] = dirs;
    const output = path.join(out, 'results.json');

    const r = await runCli(['run', '--model', 'tiny-1b', '--cpu-mem-gb', '0', '--cache-dir', path.join(cacheParent, 'cache'), '--output', output], {
      cwd: work,
      env: { KVBENCH_ENGINE_MODULE: GONE_ENGINE, KVBENCH_TEST_REMOVE_DIRS: JSON.stringify(dirs), TMPDIR: tmp },
    });

    expect(r.code, explain(r)).toBe(1);
    expect(r.stdout).toContain('outputs-gone engine: complete');
    expect(r.stderr).toContain(`could not write ${output}`);
    const begin = r.stderr.indexOf(`${RESULTS_JSON_BEGIN}\n`);
    const end = r.stderr.indexOf(`${RESULTS_JSON_END}\n`);
    expect(begin, explain(r)).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(begin);
    expect(JSON.parse(r.stderr.slice(begin + RESULTS_JSON_BEGIN.length + 1, end))).toEqual(GONE_ENGINE_RESULTS);
    for (const d of dirs) expect(fs.existsSync(d), `${d} stays removed: nothing was created there`).toBe(false);
  });
});
