// `kvbench report` chooses its trials by one of --suite, --system, --all or --compare: given together,
// all but one used to be ignored without a word (`report --all --suite 1` reported suite 1).
// And the newest suite's title says its outcome as `--suite ID`'s does: "failed" for a finished
// suite with no complete trial, not its stored "finished".
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { ScenarioReport } from '../../../src-main/export/report-model.ts';
import { fakeHardware, kvbenchResults, removeTempDirs, tempDir } from '../store/fixtures.ts';
import { addSuiteTrials } from '../store/seed-store.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

describe('kvbench report: what it reports', () => {
  it.each([
    [['--all', '--suite', '1'], '--suite and --all'],
    [['--suite', '1', '--system', 'lab'], '--suite and --system'],
    [['--system', 'lab', '--all'], '--system and --all'],
    [['--compare', 'a', 'b', '--suite', '2'], '--suite and --compare'],
  ])('refuses %j before opening any database', async (args, named) => {
    const r = await runInProcess(() => reportCommand([...args, '--db', '/nonexistent/kvbench.db']));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(`kvbench report: ${named} each choose the trials to report: give one\n`);
  });

  it.each([
    [['--label', 'fw 2.1', '--suite', '1'], '--suite chooses suites by number, --label every suite of a label: give one (--label combines with --system or --all)'],
    [
      ['--compare', 'a', 'b', '--labels', '--label', 'fw 2.1'],
      '--label narrows both sides of --compare A B of two systems or drives to one suite label; with --labels, A and B are the suite labels themselves: give one',
    ],
    [
      ['--compare', 'a', 'b', '--drives', '--label', 'fw 2.1', '--label', 'fw 2.2'],
      '--compare A B takes one --label, which narrows both sides to its suites (two labels are compared with --compare A B --labels)',
    ],
  ])('refuses %j, where --label has nothing to narrow (or is given twice with --compare), before opening any database', async (args, why) => {
    const r = await runInProcess(() => reportCommand([...args, '--db', '/nonexistent/kvbench.db']));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toBe(`kvbench report: ${why}\n`);
  });

  it("titles the newest suite with its outcome: 'failed' where no trial completed", async () => {
    const db = path.join(tempDir(), 'kvbench.db');
    const s = openStore(db);
    const suiteId = addSuiteTrials(s, fakeHardware({ probe: true }), 2, () => ({ failed: 'the engine could not be started' }));
    s.setSuiteStatus(suiteId, 'finished');
    s.close();
    const r = await runInProcess(() => reportCommand(['--db', db]));
    expect(r.stdout + r.stderr).toMatch(/Suite 1 \(smoke\), failed, started .* — the newest/);
  });

  it('--suite takes several suites (comma-separated or repeated): repeated, all but the last were ignored', async () => {
    const db = path.join(tempDir(), 'kvbench.db');
    const s = openStore(db);
    const hw = fakeHardware({ probe: true });
    addSuiteTrials(s, hw, 2, () => ({ results: kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown> }));
    addSuiteTrials(s, hw, 1, () => ({ results: kvbenchResults({ tokPerS: 100 }) as unknown as Record<string, unknown> }));
    s.close();
    for (const args of [['--suite', '1', '--suite', '2'], ['--suite', '1,2']]) {
      const r = await runInProcess(() => reportCommand([...args, '--json', '--db', db]));
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { title: string; scenarios: ScenarioReport };
      expect(out.title).toBe('Suites 1 (smoke), 2 (smoke)');
      expect(out.scenarios.scenarios.map((x) => x.trialIds.length)).toEqual([3]);
    }
    expect(await runInProcess(() => reportCommand(['--suite', '1,9', '--db', db]))).toEqual({ code: 1, stdout: '', stderr: 'kvbench report: no suite 9 (see kvbench history --suites)\n' });
    expect((await runInProcess(() => reportCommand(['--suite', '1,x', '--db', db]))).stderr).toBe("kvbench report: --suite takes a whole number ≥ 1, got 'x'\n");
  });
});
