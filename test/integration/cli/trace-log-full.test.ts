// Trace-only mode (--io-trace-log) on a disk that fills up: the run still ends with its results
// (partial, saying the trace is incomplete), the trace written so far is kept as NAME.partial, and
// NAME is never a cut-off trace: an earlier trace of that name stays as it was.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { partialTracePath } from '../../../src-main/engine/workload/trace/io-trace-log.ts';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { TINY_RUN_FLAGS, explain, makeTempDir, readResults, removeTempDirs, runCli, type CliResult } from './cli-harness.ts';

afterEach(() => {
  unmountTmpfsMounts();
  removeTempDirs();
});

const EARLIER_TRACE = 'an earlier trace, kept\n';

function traceRun(cwd: string, trace: string, output: string): Promise<CliResult> {
  return runCli(['run', ...TINY_RUN_FLAGS, '--num-users', '4', '--duration', '3', '--cpu-mem-gb', '0', '--seed', '1', '--io-trace-log', trace, '--output', output], { cwd });
}

function expectPartialBecauseOfTrace(r: CliResult, trace: string, output: string): void {
  expect(r.code, explain(r)).toBe(3);
  expect(r.stderr).toContain('run is PARTIAL: the --io-trace-log trace is incomplete: writing it failed (ENOSPC');
  const res = readResults(output);
  expect(res.kvbench.status).toBe('partial');
  expect(res.kvbench.status_reason).toContain(`what was written is kept in ${partialTracePath(trace)}`);
  expect(res.kvbench.io_trace).toMatchObject({ path: partialTracePath(trace), complete: false });
  expect(fs.readFileSync(trace, 'utf8'), 'the trace of that name from before is untouched').toBe(EARLIER_TRACE);
}

describe('kvbench run --io-trace-log on a full disk', () => {
  it('writes partial results when every trace write fails (ENOSPC from /dev/full)', async () => {
    const tmp = makeTempDir();
    const trace = path.join(tmp, 'trace.csv');
    const output = path.join(tmp, 'results.json');
    fs.writeFileSync(trace, EARLIER_TRACE);
    // The trace is written to NAME.partial: made a link to /dev/full, every write of it fails as on a full disk.
    fs.symlinkSync('/dev/full', partialTracePath(trace));

    const r = await traceRun(tmp, trace, output);

    expectPartialBecauseOfTrace(r, trace, output);
  });

  it('stops the run when the trace fills its disk, keeping what was written as NAME.partial (tmpfs, root only)', async (ctx) => {
    const tmp = makeTempDir();
    const traceDir = path.join(tmp, 'traces');
    fs.mkdirSync(traceDir);
    mountTmpfsOrSkip(ctx, traceDir, '1m');
    const trace = path.join(traceDir, 'trace.csv');
    const output = path.join(tmp, 'results.json');
    fs.writeFileSync(trace, EARLIER_TRACE);
    // Left: two pages, 8 KiB; the trace of this 3 s run needs about 15 KiB.
    fillUntilFull(path.join(traceDir, 'filler'));
    fs.truncateSync(path.join(traceDir, 'filler'), fs.statSync(path.join(traceDir, 'filler')).size - 8 * 1024);

    const r = await traceRun(tmp, trace, output);

    expectPartialBecauseOfTrace(r, trace, output);
    const kept = fs.readFileSync(partialTracePath(trace), 'utf8');
    expect(kept.startsWith('Timestamp,Operation,Object_Size_Bytes,Tier,Key,Phase\n')).toBe(true);
    expect(kept.length).toBeGreaterThanOrEqual(4096);
    expect(readResults(output).kvbench.io_trace!.rows, 'more operations logged than the kept file holds').toBeGreaterThan(kept.split('\n').length - 2);
  });
});
