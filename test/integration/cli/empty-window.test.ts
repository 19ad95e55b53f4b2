// A measured window in which no request completed measured nothing: it must not pass as a complete
// trial (every rate 0, no latencies), or a suite report would average it in as the machine's result.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, makeTempDir, oneLayerRunFlags, readResults, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

describe('kvbench run with a window too short for any request', () => {
  it('ends PARTIAL (exit 3) with the reason, not COMPLETE', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    // realistic generation sleeps 30 ms per generated token and every persona generates at least
    // 50 tokens, so no request can finish within a 1 s window.
    const flags = oneLayerRunFlags(tmp).map((f) => (f === 'none' ? 'realistic' : f));
    const r = await runCli(
      ['run', ...flags, '--num-users', '2', '--duration', '1', '--cpu-mem-gb', '0', '--cache-dir', path.join(tmp, 'cache'), '--seed', '3', '--output', output],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(3);
    const res = readResults(output);
    expect(res.requests_completed).toBe(0);
    expect(res.kvbench.status).toBe('partial');
    expect(res.kvbench.status_reason).toMatch(/^no request completed in the 1\.\d s measured window \(\d+ in flight, \d+ queued when it closed\): lengthen --duration/);
    expect(r.stderr).toContain('run is PARTIAL: no request completed');
  });
});

describe('kvbench run --warm-up with --max-requests', () => {
  it('counts --max-requests from the window open: requests issued during the warm-up do not use it up', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const r = await runCli(
      ['run', ...oneLayerRunFlags(tmp), '--num-users', '2', '--duration', '60', '--warm-up', '2', '--max-requests', '3', '--cpu-mem-gb', '0',
        '--cache-dir', path.join(tmp, 'cache'), '--seed', '3', '--output', output],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(0);
    const res = readResults(output);
    expect(res.kvbench.status).toBe('complete');
    expect(res.kvbench.measured_window.closed_by).toBe('max-requests');
    expect(res.requests_completed).toBeGreaterThanOrEqual(3);
    expect(res.kvbench.measured_window.elapsed_ns, 'ended by the requests, long before --duration').toBeLessThan(30e9);
  });
});
