// The database's disk fills up while a suite trial runs, and the temporary directory is on that disk
// too (the default layout: ~/.local/share and /tmp on one root filesystem). The finished trial exists
// only in the runner's memory then: it must land on another disk, and the next open must say what
// happened to it, not that its runner crashed.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { explain, killStarted, makeTempDir, readResults, removeTempDirs, runCli, runDirsIn, startCli, waitFor, type CliProcess } from '../cli/cli-harness.ts';
import { rawTrials } from './suite-harness.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  unmountTmpfsMounts();
  removeTempDirs();
});

describe('kvbench suite whose database disk fills up during a trial', () => {
  it('keeps the trial in the cache directory, leaves nothing on the full disk; the next open names the file, and a resume runs the trial again (tmpfs, root only)', { timeout: 240_000 }, async (ctx) => {
    const tmp = makeTempDir();
    const disk = path.join(tmp, 'disk');
    fs.mkdirSync(disk);
    mountTmpfsOrSkip(ctx, disk, '8m');
    const tmpDir = path.join(disk, 'tmp');
    fs.mkdirSync(tmpDir);
    const db = path.join(disk, 'kvbench.db');
    const cache = path.join(tmp, 'cache');
    fs.mkdirSync(cache);

    // The trial ends after its 4th completed request, not at a clock: on a loaded machine a 2 s window
    // closed before the first request completed, and the saved results (and the resume) measured
    // nothing. Each of the 4 users' first requests writes tens of MiB, so the trial outlasts the fill
    // below on an idle machine too; 30 s is only the cap.
    const cli = startCli(['suite', '--profile', 'smoke', '--no-probe', '--trials', '1', '--scenarios', 'storage-only', '--max-requests', '4', '--duration', '30', '--cache-dir', cache, '--db', db], {
      cwd: tmp,
      env: { TMPDIR: tmpDir },
    });
    started.push(cli);
    let exited = false;
    void cli.done.then(() => (exited = true));
    await waitFor('the trial\'s engine to create its run directory', () => exited || runDirsIn(cache).length > 0, 60_000);
    expect(exited, 'the trial was still running when the disk filled up').toBe(false);
    const filler = path.join(disk, 'filler');
    expect(fillUntilFull(filler)).toBeGreaterThan(0);
    const r = await cli.done;

    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/kvbench suite failed \(DB_WRITE_FAILED\): trial 1\/1 \(Storage only #1\) finished (complete|partial), but the database \S+ could not store it: /);
    const saved = /its results are saved in (\S+) \(load them with: kvbench import \S+ --system LABEL --scenario storage-only\)/.exec(r.stderr)?.[1];
    expect(saved, explain(r)).toBeDefined();
    expect(path.dirname(saved!)).toBe(cache);
    expect(readResults(saved!).requests_completed).toBeGreaterThan(0);
    expect(r.stderr.trimEnd().split('\n').at(-1), 'the last line: the command that runs the trial again').toBe(`resume with: kvbench suite --resume 1 --db ${db}`);
    expect(fs.readdirSync(disk).filter((n) => !n.startsWith('kvbench.db')).sort(), 'no empty unstored-results/ left on the full disk').toEqual(['filler', 'tmp']);
    expect(fs.readdirSync(tmpDir)).toEqual([]);
    expect(rawTrials(db).map((t) => t.status), 'the full disk refused even the note').toEqual(['running']);

    // Space is freed; the next suite that opens the database says what happened to the trial, and
    // the resume runs it again.
    fs.rmSync(filler);
    const resumed = await runCli(['suite', '--resume', '1', '--no-probe', '--db', db], { cwd: tmp });
    expect(resumed.code, explain(resumed)).toBe(0);
    expect(resumed.stderr).toContain(`note: trial 1 (storage-only, suite 1) finished, but its runner could not store it; marked failed: its results are in ${saved}\n`);
    expect(resumed.stderr).not.toContain('interrupted when its runner died');
    const h = await runCli(['history', '--db', db, '--json'], { cwd: tmp });
    const trials = (JSON.parse(h.stdout) as { status: string; statusReason: string }[]).reverse();
    expect(trials.map((t) => t.status)).toEqual(['failed', 'complete']);
    expect(trials[0].statusReason).toBe(
      `the engine finished but the database could not store the results (found at the next start; the runner did not crash); its results are saved in ${saved} (load them with: kvbench import ${saved} --system LABEL --scenario storage-only)`,
    );
    const imported = await runCli(['import', saved!, '--system', 'rescued', '--scenario', 'storage-only', '--db', db], { cwd: tmp });
    expect(imported.code, explain(imported)).toBe(0);
  });
});
