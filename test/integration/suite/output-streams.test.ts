// Where `kvbench suite` says what: the results (the plan that runs, each trial's outcome, the suite's
// end and its tier comparison) on stdout, as `kvbench run` puts its summary there, so
// `kvbench suite … > suite.log` keeps them; progress on stderr. With --events stdout is JSON lines only.
import { afterEach, describe, expect, it } from 'vitest';
import { dbPaths, eventsOf, explain, makeTempDir, removeTempDirs, runCli } from './suite-harness.ts';

afterEach(() => removeTempDirs());

const RESULTS = [/^storage-only /m, /storage-only #1\/1 COMPLETE in [\d.]+ s: /, /^Suite \d+ finished: 1 complete/m, /Tier comparison/, /Full tables: kvbench report --suite \d+/];

describe('kvbench suite output', () => {
  it('puts the plan, the trial outcomes and the tier comparison on stdout, progress on stderr; with --events all text on stderr', { timeout: 180_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    // Where the text goes is under test, not timing: the trial ends after its first completed request
    // (a 1 s window closed before any completed on a loaded machine: the trial was partial); 30 s is only the cap.
    const args = ['suite', '--profile', 'smoke', '--no-probe', '--trials', '1', '--scenarios', 'storage-only', '--max-requests', '1', '--duration', '30', '--cache-dir', cache, '--db', db];

    const r = await runCli(args, { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    for (const re of RESULTS) {
      expect(r.stdout, String(re)).toMatch(re);
      expect(r.stderr, String(re)).not.toMatch(re);
    }
    expect(r.stderr).toMatch(/^Detecting hardware …$/m);
    expect(r.stderr).toMatch(/^Suite \d+: 1 trial\(s\) to run/m);
    expect(r.stdout).not.toMatch(/Detecting hardware|trial\(s\) to run/);

    const withEvents = await runCli([...args, '--events'], { cwd: tmp });
    expect(withEvents.code, explain(withEvents)).toBe(0);
    const lines = withEvents.stdout.split('\n').filter((l) => l !== '');
    expect(lines.length).toBeGreaterThan(0);
    expect(eventsOf(withEvents.stdout)).toHaveLength(lines.length);
    for (const re of RESULTS) expect(withEvents.stderr, String(re)).toMatch(re);
  });
});
