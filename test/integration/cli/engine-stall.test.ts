// An engine stopped inside its measured window (SIGSTOP: what a suspended VM, swapping or a process
// starved of CPU look like to it) measured nothing of the device for those seconds: the run is
// partial and says why, instead of complete at a fraction of its real rate.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINE_STALL_NS } from '../../../src-shared/domain/engine-stall.ts';
import {
  explain,
  isAlive,
  killStarted,
  makeTempDir,
  oneLayerRunFlags,
  readResults,
  removeTempDirs,
  runDirsIn,
  sleepMs,
  startCli,
  waitFor,
  waitForEnginePid,
  type CliProcess,
} from './cli-harness.ts';

const started: CliProcess[] = [];
const stopped: number[] = [];
afterEach(async () => {
  for (const pid of stopped.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGCONT');
  await killStarted(started);
  removeTempDirs();
});

const DURATION_S = 2;
/** Longer than the window plus the stall threshold: the window closes at least this much minus 2 s late. */
const STOP_MS = DURATION_S * 1000 + ENGINE_STALL_NS / 1e6 + 1000;

describe('kvbench run with an engine stalled inside its measured window', () => {
  it('is PARTIAL (exit 3) with the stall as its reason', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'cache');
    fs.mkdirSync(cacheDir);
    const output = path.join(tmp, 'results.json');
    const cli = startCli(
      ['run', ...oneLayerRunFlags(tmp), '--num-users', '2', '--duration', String(DURATION_S), '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--seed', '5', '--output', output],
      { cwd: tmp },
    );
    started.push(cli);
    const enginePid = await waitForEnginePid(cli.pid);
    // With no --warm-up the window is open once the first entry file exists in the run directory.
    const entryWritten = (): boolean => runDirsIn(cacheDir).some((d) => fs.readdirSync(path.join(cacheDir, d)).some((n) => !n.startsWith('.')));
    await waitFor('the first entry file', entryWritten);
    await sleepMs(500); // some requests complete before the stall, as in a long run
    process.kill(enginePid, 'SIGSTOP');
    stopped.push(enginePid);
    await sleepMs(STOP_MS);
    process.kill(enginePid, 'SIGCONT');

    const r = await cli.done;
    expect(r.code, explain(r)).toBe(3);
    expect(r.stderr).toMatch(/run is PARTIAL: the engine stalled \(/);
    const res = readResults(output);
    expect(res.kvbench.status).toBe('partial');
    expect(res.kvbench.status_reason).toMatch(/^the engine stalled \(.*the measured window closed \d+\.\d s after its planned 2\.0 s/);
    expect(res.kvbench.elapsed_ns - DURATION_S * 1e9).toBeGreaterThanOrEqual(ENGINE_STALL_NS);
    expect(runDirsIn(cacheDir)).toEqual([]);
  }, 60_000);
});
