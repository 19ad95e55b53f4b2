// --log-level through the real CLI: messages below the chosen level are not printed; the results
// (stdout summary, results file) always are. A trace-only run is used: it logs at info (trace mode)
// and, with an unapplied config key and an odd tensor-parallel degree, at warning level, in well under a second.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explain, makeTempDir, removeTempDirs, runCli } from './cli-harness.ts';

afterEach(removeTempDirs);

async function runAt(level: string): Promise<{ stderr: string; stdout: string; output: string }> {
  const tmp = makeTempDir();
  const config = path.join(tmp, 'c.yaml');
  fs.writeFileSync(config, 'model_configs:\n  one-layer:\n    num_layers: 1\n    hidden_dim: 64\n    num_heads: 1\n    kv_heads: 1\nrag:\n  retrieval_distribution: uniform\n');
  const output = path.join(tmp, 'r.json');
  const r = await runCli(
    [
      'run', '--config', config, '--model', 'one-layer', '--gpu-mem-gb', '0', '--generation-mode', 'none', '--cpu-mem-gb', '0',
      '--num-users', '2', '--duration', '3', '--io-trace-log', path.join(tmp, 't.csv'), '--num-gpus', '3', '--tensor-parallel', '3',
      '--output', output, '--log-level', level,
    ],
    { cwd: tmp },
  );
  expect(r.code, explain(r)).toBe(0);
  return { stderr: r.stderr, stdout: r.stdout, output };
}

describe('kvbench run --log-level', () => {
  it('INFO shows info and warnings; WARNING drops info; ERROR and CRITICAL drop warnings too; the results always print', async () => {
    const info = await runAt('INFO');
    expect(info.stderr).toMatch(/^info: Trace mode active/m);
    expect(info.stderr).toMatch(/^warn: config keys kvbench does not act on/m);
    expect(info.stderr).toMatch(/^warning: --tensor-parallel=3 is not a power of 2/m);

    const warning = await runAt('WARNING');
    expect(warning.stderr).not.toMatch(/^info: /m);
    expect(warning.stderr).toMatch(/^warn: config keys kvbench does not act on/m);
    expect(warning.stderr).toMatch(/^warning: --tensor-parallel=3/m);

    for (const level of ['ERROR', 'CRITICAL']) {
      const quiet = await runAt(level);
      expect(quiet.stderr, level).not.toMatch(/^(info|warn|warning): /m);
      expect(quiet.stdout, level).toMatch(/BENCHMARK RESULTS|Results|tok\/s/i);
      expect(fs.existsSync(quiet.output), level).toBe(true);
    }
  });
});
