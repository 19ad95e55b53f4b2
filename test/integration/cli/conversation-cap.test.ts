// More users than tracked conversations, through the real CLI: the run says on the console that the
// multi-turn traffic will fade, and the results carry the warning and the multi-turn share offered.
// A trace-only run with a cap of 2 (the config's conversation.max_conversations) keeps it fast.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, makeTempDir, oneLayerRunFlags, readResults, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

async function run(numUsers: number): Promise<{ stderr: string; source: Record<string, unknown> }> {
  const tmp = makeTempDir();
  const output = path.join(tmp, 'r.json');
  const flags = oneLayerRunFlags(tmp, 'conversation:\n  max_conversations: 2\n');
  const r = await runCli(
    ['run', ...flags, '--cpu-mem-gb', '0', '--num-users', String(numUsers), '--duration', '2', '--seed', '5', '--io-trace-log', path.join(tmp, 't.csv'), '--output', output],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  return { stderr: r.stderr, source: readResults(output).kvbench.workload_source };
}

describe('kvbench run with more users than tracked conversations', () => {
  it('warns on the console and in workload_source.warnings, and reports the multi-turn share offered', async () => {
    const over = await run(3);
    expect(over.stderr).toMatch(/^warn: 3 users are more than the 2 conversations tracked at once .*will be rarer/m);
    expect(over.source.warnings).toEqual([expect.stringMatching(/^3 users are more than the 2 conversations/)]);
    expect(over.source.max_tracked_conversations).toBe(2);
    const offered = over.source.offered as { requests: number; multi_turn_requests: number; multi_turn_share: number };
    expect(offered.requests).toBeGreaterThan(0);
    expect(offered.multi_turn_share).toBeCloseTo(offered.multi_turn_requests / offered.requests, 12);

    const within = await run(2);
    expect(within.stderr).not.toMatch(/conversations tracked at once/);
    expect(within.source.warnings).toEqual([]);
  });
});
