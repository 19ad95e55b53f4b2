// What the CLI does with input it must refuse: one message listing every problem, a non-zero exit,
// and nothing written anywhere (no results file, no cache directory, no run directory).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GIB, TINY_RUN_FLAGS, cacheDirWithForeignFile, explain, makeTempDir, removeTempDirs, runCli, snapshotDir } from './cli-harness.ts';
import { giveTo, unprivilegedOrSkip } from '../../support/unprivileged.ts';

afterEach(removeTempDirs);

/** A short, otherwise valid run on `cacheDir`, so that each test varies one thing only. */
function validRunArgs(cacheDir: string, output: string): string[] {
  return ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--duration', '1', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--output', output];
}

/** A user's message, not a crash: no stack frames. */
function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
}

describe('kvbench run with invalid input', () => {
  it('lists every invalid flag in one message and writes nothing', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const before = snapshotDir(tmp);
    const output = path.join(tmp, 'results.json');

    const r = await runCli(
      [
        'run',
        '--num-users', '0',
        '--duration', '999999',
        '--gpu-mem-gb', '-1',
        '--model', 'nope',
        '--generation-mode', 'none',
        '--cache-dir', cacheDir,
        '--output', output,
      ],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).not.toBe(0);
    expect(r.signal).toBeNull();
    // One message: a single heading, then every problem.
    expect(r.stderr.match(/invalid arguments/g), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain('--num-users must be positive');
    expect(r.stderr).toContain('--duration exceeds 24 hours (86400s)');
    expect(r.stderr).toContain('--gpu-mem-gb cannot be negative');
    expect(r.stderr).toMatch(/Unknown model 'nope'\. Available models: .*tiny-1b/);
    expectNoStack(r.stderr);
    expect(r.stdout).toBe('');
    expect(fs.existsSync(output)).toBe(false);
    expect(snapshotDir(tmp), 'nothing created or changed (cache dir, cwd)').toEqual(before);
  });

  it('reports flag, --output, --probe-result and --dataset-path problems together, before the engine starts', async () => {
    const tmp = makeTempDir();
    const { cacheDir } = cacheDirWithForeignFile(tmp);
    const probe = path.join(tmp, 'probe.json');
    fs.writeFileSync(probe, '{ not json');
    const dataset = path.join(tmp, 'trace.jsonl');
    fs.writeFileSync(dataset, '{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}\n{bad\n');
    const before = snapshotDir(tmp);
    const output = path.join(tmp, 'missing', 'results.json');
    const r = await runCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '0', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--output', output, '--probe-result', probe, '--dataset-path', dataset],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr.match(/invalid arguments/g), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain('--num-users must be positive');
    expect(r.stderr).toContain(`--output: cannot write ${output}: its folder ${path.join(tmp, 'missing')} does not exist`);
    expect(r.stderr).toContain(`--probe-result ${probe}: is not JSON`);
    expect(r.stderr).toContain(`--dataset-path ${dataset}, line 2: not valid JSON`);
    expect(r.stderr).not.toMatch(/starting|run failed/);
    expectNoStack(r.stderr);
    expect(snapshotDir(tmp)).toEqual(before);

    // Each alone is refused before the engine starts too: an unrecognised dataset, and a probe result
    // that is JSON but not a probe.
    fs.writeFileSync(dataset, 'a,b,c\n1,2,3\n');
    fs.writeFileSync(probe, '{"kind": "something else"}');
    const files = await runCli(
      ['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--cpu-mem-gb', '0', '--cache-dir', cacheDir, '--output', path.join(tmp, 'r.json'), '--probe-result', probe, '--dataset-path', dataset],
      { cwd: tmp },
    );
    expect(files.code, explain(files)).toBe(1);
    expect(files.stderr).toMatch(/^kvbench run: invalid arguments:\n/);
    expect(files.stderr).toContain(`--probe-result ${probe}: is not a kvbench probe result`);
    expect(files.stderr).toMatch(/--dataset-path .*trace\.jsonl, line 1: unrecognised format \(first line "a,b,c"\); supported formats:/);
    expect(files.stderr).not.toMatch(/starting|run failed/);
    expect(fs.readdirSync(cacheDir)).toEqual(['keep.npy']);
  });

  it('reports --burst-trace-path and --validation-trace contents, and a --cache-dir under a file, with the flag errors', async () => {
    // Each was found only after the engine started (one at a time, the message naming no flag), or as
    // the engine's "ENOTDIR … stat".
    const tmp = makeTempDir();
    const burst = path.join(tmp, 'burst.csv');
    fs.writeFileSync(burst, 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,ChatGPT,-5,20,15,x\n');
    const trace = path.join(tmp, 'validation.json');
    fs.writeFileSync(trace, '[{"timestamp": 1}');
    const aFile = path.join(tmp, 'a-file');
    fs.writeFileSync(aFile, 'x');
    const before = snapshotDir(tmp);
    const r = await runCli(
      [
        'run', ...TINY_RUN_FLAGS, '--num-users', '0', '--cpu-mem-gb', '0', '--cache-dir', path.join(aFile, 'sub'), '--output', path.join(tmp, 'r.json'),
        '--use-burst-trace', '--burst-trace-path', burst, '--validation-trace', trace,
      ],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/^kvbench run: invalid arguments:\n/);
    expect(r.stderr).toContain('--num-users must be positive');
    expect(r.stderr).toContain(`--burst-trace-path ${burst}, line 2: Request tokens "-5" is not a non-negative integer`);
    expect(r.stderr).toMatch(new RegExp(`--validation-trace ${trace.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*`));
    expect(r.stderr).toContain(`--cache-dir cannot be created: ${path.join(aFile, 'sub')}: ${aFile} is a file, not a directory`);
    expect(r.stderr).not.toMatch(/starting|run failed|ENOTDIR/);
    expectNoStack(r.stderr);
    expect(snapshotDir(tmp)).toEqual(before);
  });

  it('a --dataset-path that cannot even be looked at (a loop of links) is an argument error, not a crash', async () => {
    const tmp = makeTempDir();
    const loop = path.join(tmp, 'loop');
    fs.symlinkSync(loop, loop);
    const r = await runCli(['run', ...TINY_RUN_FLAGS, '--num-users', '2', '--cpu-mem-gb', '0', '--cache-dir', tmp, '--dataset-path', loop], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/^kvbench run: invalid arguments:\n.*--dataset-path/);
    expectNoStack(r.stderr);
  });

  it('refuses a system directory as --cache-dir', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const r = await runCli(validRunArgs('/etc', output), { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('--cache-dir cannot be a system directory: /etc');
    expectNoStack(r.stderr);
    expect(fs.readdirSync(tmp)).toEqual([]);
    expect(fs.readdirSync('/etc').filter((n) => n.startsWith('kvbench'))).toEqual([]);
  });

  it('refuses a symbolic link to a system directory as --cache-dir', async () => {
    const tmp = makeTempDir();
    const link = path.join(tmp, 'innocent-looking');
    fs.symlinkSync('/etc', link);
    const r = await runCli(validRunArgs(path.join(link, 'kv'), path.join(tmp, 'results.json')), { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('--cache-dir cannot be a system directory: /etc/kv');
    expect(fs.existsSync('/etc/kv')).toBe(false);
    expect(fs.readdirSync(tmp)).toEqual(['innocent-looking']);
  });

  it('gives a clear error for a cache directory that cannot be created', async () => {
    const tmp = makeTempDir();
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'a file, not a directory\n');
    const cacheDir = path.join(file, 'sub'); // cannot exist, even for root
    const output = path.join(tmp, 'results.json');
    const before = snapshotDir(tmp);

    const r = await runCli(validRunArgs(cacheDir, output), { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(cacheDir);
    expect(r.stderr).toMatch(/not a directory|ENOTDIR|not writable|cannot (create|use)/i);
    expectNoStack(r.stderr);
    expect(fs.existsSync(output)).toBe(false);
    expect(snapshotDir(tmp)).toEqual(before);
  });

  it('refuses a cache directory without write permission (as nobody when the tests run as root)', async (ctx) => {
    // Root may write to a mode 555 directory: as root the CLI runs as nobody, in a directory of its own.
    const runAs = unprivilegedOrSkip(ctx);
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'read-only');
    fs.mkdirSync(cacheDir, { mode: 0o555 });
    giveTo(runAs, tmp, cacheDir);
    const output = path.join(tmp, 'results.json');
    try {
      const r = await runCli(validRunArgs(cacheDir, output), { cwd: tmp, runAs });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toContain(`--cache-dir is not writable: ${cacheDir}`);
      expect(fs.readdirSync(cacheDir)).toEqual([]);
      expect(fs.existsSync(output)).toBe(false);
    } finally {
      fs.chmodSync(cacheDir, 0o755);
    }
  });

  it('refuses --output into a missing directory before the run starts', async () => {
    const tmp = makeTempDir();
    // The engine would create this directory as its first act: its absence shows no run began.
    const cacheDir = path.join(tmp, 'not-yet-created');
    const output = path.join(tmp, 'missing', 'results.json');
    const r = await runCli(validRunArgs(cacheDir, output), { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(`cannot write ${output}`);
    expect(r.stderr).toContain(path.join(tmp, 'missing'));
    expect(r.stderr).not.toMatch(/starting|running/);
    expect(r.stdout).toBe('');
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('refuses an --output that is an existing directory before the run starts', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'not-yet-created');
    const output = path.join(tmp, 'out-dir');
    fs.mkdirSync(output);
    const r = await runCli(validRunArgs(cacheDir, output), { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(output);
    // Refused up front, not after a whole benchmark whose results are then lost.
    expect(r.stderr, 'the run must not start').not.toMatch(/starting|running|BENCHMARK RESULTS/);
    expect(r.stdout).toBe('');
    expect(fs.readdirSync(tmp).sort()).toEqual(['out-dir']);
    expect(fs.readdirSync(output)).toEqual([]);
  });

  it('refuses an empty --cache-dir instead of using the current directory as the storage tier', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const r = await runCli(validRunArgs('', output), { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('--cache-dir must not be empty');
    expect(r.stdout).toBe('');
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('refuses --enable-latency-tracing with the other problems, before the engine starts', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'not-yet-created');
    const r = await runCli([...validRunArgs(cacheDir, path.join(tmp, 'results.json')), '--enable-latency-tracing', '--num-users', '0'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr.match(/invalid arguments/g), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain('--num-users must be positive');
    expect(r.stderr).toMatch(/--enable-latency-tracing .* is not implemented in kvbench/);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('refuses a --cpu-mem-gb larger than this machine\'s RAM with the other problems, before the engine starts', async () => {
    const tmp = makeTempDir();
    const tooMuch = String(Math.ceil(os.totalmem() / GIB) + 1);
    const args = validRunArgs(path.join(tmp, 'not-yet-created'), path.join(tmp, 'results.json')).map((a, i, all) => (all[i - 1] === '--cpu-mem-gb' ? tooMuch : a));
    const r = await runCli([...args, '--num-users', '0'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr.match(/invalid arguments/g), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain('--num-users must be positive');
    expect(r.stderr).toContain(`--cpu-mem-gb ${tooMuch} is more than this machine can hold: the CPU tier keeps real bytes in RAM`);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('refuses an --xlsx-output name not ending in .xlsx before the run, instead of writing a workbook under it', async () => {
    const tmp = makeTempDir();
    const r = await runCli([...validRunArgs(path.join(tmp, 'not-yet-created'), path.join(tmp, 'results.json')), '--xlsx-output', path.join(tmp, 'summary.csv')], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain(`--xlsx-output must name a .xlsx file`);
    expect(r.stdout).toBe('');
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('refuses --prefill-only together with --decode-only', async () => {
    const tmp = makeTempDir();
    const cacheDir = path.join(tmp, 'not-yet-created');
    const output = path.join(tmp, 'results.json');
    const r = await runCli([...validRunArgs(cacheDir, output), '--prefill-only', '--decode-only'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/--prefill-only and --decode-only are mutually exclusive/);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('rejects an unknown flag with a suggestion, and an unknown command', async () => {
    const tmp = makeTempDir();
    const output = path.join(tmp, 'results.json');
    const r = await runCli([...validRunArgs(path.join(tmp, 'c'), output), '--num-user5', '3'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('unrecognized arguments: --num-user5 3');
    expect(r.stderr).toContain('did you mean --num-users?');

    const u = await runCli(['frobnicate'], { cwd: tmp });
    expect(u.code).toBe(1);
    expect(u.stderr).toContain("unknown command 'frobnicate'");
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});

describe('kvbench help', () => {
  it('`run --help` exits 0 and lists the flags with their defaults', async () => {
    const tmp = makeTempDir();
    const r = await runCli(['run', '--help'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain('Usage: kvbench run [options]');
    for (const flag of [
      '--model',
      '--num-users',
      '--duration',
      '--gpu-mem-gb',
      '--cpu-mem-gb',
      '--cache-dir',
      '--generation-mode',
      '--storage-capacity-gb',
      '--max-requests',
      '--seed',
      '--output',
      '--prefill-only',
      '--decode-only',
      '--direct-io',
      '--io-depth',
    ]) {
      expect(r.stdout, flag).toContain(flag);
    }
    expect(r.stdout).toContain('tiny-1b');
    expect(fs.readdirSync(tmp), 'help runs nothing and writes nothing').toEqual([]);
  });

  it('`--help` exits 0 and names the commands and exit codes', async () => {
    const tmp = makeTempDir();
    const r = await runCli(['--help'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toContain('kvbench run');
    expect(r.stdout).toMatch(/Exit codes:/);
    expect(r.stdout).toMatch(/130 interrupted/);
  });
});

describe('kvbench suite --warm-up', () => {
  it('refuses a warm-up out of range, with the flag named, and creates no database', async () => {
    const tmp = makeTempDir();
    for (const bad of ['-3', '5000', '2.5']) {
      const r = await runCli(['suite', '--profile', 'smoke', '--cache-dir', path.join(tmp, 'c'), `--warm-up=${bad}`, '--db', path.join(tmp, 'k.db')], { cwd: tmp });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toMatch(/--warm-up must be/);
      expectNoStack(r.stderr);
    }
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('history, report and export refuse a --db that names no file instead of creating an empty database there', async () => {
    const tmp = makeTempDir();
    const typo = path.join(tmp, 'typo', 'kvbench.db');
    for (const cmd of ['history', 'report', 'export']) {
      const r = await runCli([cmd, '--db', typo, ...(cmd === 'export' ? ['--out', path.join(tmp, 'out.json')] : [])], { cwd: tmp });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toContain(`kvbench ${cmd}: no database at ${typo} (a suite or an import creates one;`);
      expectNoStack(r.stderr);
    }
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('history, report and export refuse a zero-byte --db instead of turning it into a database', async () => {
    const tmp = makeTempDir();
    const empty = path.join(tmp, 'empty.db');
    fs.writeFileSync(empty, '');
    for (const cmd of ['history', 'report', 'export']) {
      const r = await runCli([cmd, '--db', empty, ...(cmd === 'export' ? ['--out', path.join(tmp, 'out.json')] : [])], { cwd: tmp });
      expect(r.code, explain(r)).toBe(1);
      expect(r.stderr).toContain(`kvbench ${cmd}: ${empty} is empty, not a kvbench database`);
      expectNoStack(r.stderr);
    }
    expect(fs.readdirSync(tmp)).toEqual(['empty.db']);
    expect(fs.statSync(empty).size).toBe(0);
  });

  it('takes a negative --storage-capacity-gb or --trials as a value and range-checks it, instead of "argument is ambiguous"', async () => {
    const tmp = makeTempDir();
    const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--plan', '--cache-dir', path.join(tmp, 'c'), '--db', path.join(tmp, 'k.db'), '--storage-capacity-gb', '-1', '--trials', '-2'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).not.toMatch(/ambiguous/);
    expect(r.stderr).toContain('--storage-capacity-gb must be a number of GiB ≥ 0 (0 = 95 % of the free space), got -1');
    expect(r.stderr).toContain('--trials must be an integer from 1 to 100, got -2');
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('refuses planning flags beside --resume (the stored plan is what runs), and creates no database', async () => {
    const tmp = makeTempDir();
    const r = await runCli(['suite', '--resume', '1', '--trials', '5', '--duration=30', '--no-probe', '--db', path.join(tmp, 'k.db')], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toContain('--resume runs the suite as it was planned: --trials, --duration cannot be given with it');
    expectNoStack(r.stderr);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('plans the warm-up into every trial but the autoscalers and into the time estimate', async () => {
    const tmp = makeTempDir();
    const args = ['suite', '--profile', 'smoke', '--cache-dir', path.join(tmp, 'c'), '--no-probe', '--plan', '--db', path.join(tmp, 'k.db')];
    const r = await runCli([...args, '--warm-up', '7'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^storage-only .*7 s warm-up \+ 5 s/m);
    expect(r.stdout).toMatch(/^autoscale .* 5 s /m);
    expect(r.stdout).not.toMatch(/^autoscale .*warm-up/m);
  });
});

describe('kvbench suite --max-requests', () => {
  it('plans every trial to end after that many requests or at its duration, and refuses a bad count and the flag beside --resume', async () => {
    const tmp = makeTempDir();
    const args = ['suite', '--profile', 'smoke', '--cache-dir', path.join(tmp, 'c'), '--no-probe', '--plan', '--db', path.join(tmp, 'k.db')];
    const r = await runCli([...args, '--max-requests', '3'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^storage-only .* 5 s or 3 req /m);
    expect(r.stdout).toContain('note: each trial ends once 3 requests have completed in its measured window, or at its 5 s if that comes first');
    const bad = await runCli([...args, '--max-requests=-1'], { cwd: tmp });
    expect(bad.code, explain(bad)).toBe(1);
    expect(bad.stderr).toContain('--max-requests must be an integer ≥ 0 (0 = the duration alone), got -1');
    const resumed = await runCli(['suite', '--resume', '1', '--max-requests', '3', '--db', path.join(tmp, 'k.db')], { cwd: tmp });
    expect(resumed.code, explain(resumed)).toBe(1);
    expect(resumed.stderr).toContain('--resume runs the suite as it was planned: --max-requests cannot be given with it');
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});

describe('kvbench suite with invalid input', () => {
  it('refuses a symbolic link to a system directory as --cache-dir, even with --plan, before creating anything', async () => {
    const tmp = makeTempDir();
    const link = path.join(tmp, 'innocent-looking');
    fs.symlinkSync('/dev', link);
    const name = `kvb-suite-${process.pid}-${Date.now()}`;
    try {
      for (const plan of [['--plan'], []]) {
        const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', ...plan, '--cache-dir', path.join(link, name), '--db', path.join(tmp, 'k.db')], { cwd: tmp });
        expect(r.code, explain(r)).toBe(1);
        expect(r.stderr).toContain(`--cache-dir cannot be a system directory: /dev/${name}`);
        expect(r.stderr).not.toMatch(/Detecting hardware/);
        expectNoStack(r.stderr);
        expect(fs.existsSync(path.join('/dev', name)), 'nothing created under /dev').toBe(false);
        expect(fs.readdirSync(tmp), 'no database').toEqual(['innocent-looking']);
      }
    } finally {
      fs.rmSync(path.join('/dev', name), { recursive: true, force: true }); // only if it got through
    }
  });

  it('checks --trials, --scenarios and --model before detecting hardware, creating the cache dir or the database', async () => {
    const tmp = makeTempDir();
    const r = await runCli(
      ['suite', '--profile', 'smoke', '--no-probe', '--plan', '--cache-dir', path.join(tmp, 'c'), '--db', path.join(tmp, 'k.db'), '--trials', '101', '--scenarios', 'bogus', '--model', 'nope'],
      { cwd: tmp },
    );
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr.match(/invalid arguments/g), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain('--trials must be an integer from 1 to 100, got 101');
    expect(r.stderr).toContain('unknown scenario(s): bogus');
    expect(r.stderr).toMatch(/--model: Unknown model 'nope'/);
    expect(r.stderr).not.toMatch(/Detecting hardware/);
    expectNoStack(r.stderr);
    expect(fs.readdirSync(tmp)).toEqual([]);
  });

  it('refuses a plan whose --storage-capacity-gb cannot hold one entry, before any trial runs', async () => {
    const tmp = makeTempDir();
    const cache = path.join(tmp, 'c');
    const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--scenarios', 'storage-only', '--cache-dir', cache, '--db', path.join(tmp, 'k.db'), '--storage-capacity-gb', '0.1'], { cwd: tmp });
    expect(r.code, explain(r)).toBe(1);
    expect(r.stderr).toMatch(/kvbench suite: refused:\n\s+--storage-capacity-gb 0\.1 cannot hold one KV entry of tiny-1b/);
    expect(r.stderr).not.toMatch(/Suite \d+: \d+ trial/);
    // A refused suite leaves nothing: not the cache directory it would have created, not a database.
    expect(fs.readdirSync(tmp)).toEqual([]);
  });
});
