import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  defaultOutputName,
  parseRunArgs,
  runHelpText,
  type ParseRunArgsResult,
} from '../../../src-main/engine/config/parse-run-args.ts';
import { RUN_FLAGS } from '../../../src-main/engine/config/flags.ts';
import { DATASET_FORMATS, detectDatasetFormat } from '../../../src-main/engine/workload/sources/detect-format.ts';
import { SYSTEM_DIRECTORIES } from '../../../src-main/engine/config/system-directories.ts';
import { DEFAULT_RUN_OPTIONS, type RunOptions } from '../../../src-shared/domain/run-options.ts';

let cwd: string;
const NOW = new Date(2026, 0, 9, 7, 5, 3);
const env = () => ({ cwd, now: () => NOW });

beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), 'kvbench-args-'));
});
afterAll(() => {
  rmSync(cwd, { recursive: true, force: true });
});

function ok(argv: string[]): RunOptions {
  const r = parseRunArgs(argv, env());
  if (r.ok !== true) throw new Error(`expected success, got ${JSON.stringify(r)}`);
  return r.options;
}
function errs(argv: string[]): string[] {
  const r = parseRunArgs(argv, env());
  if (r.ok !== false) throw new Error(`expected errors, got ${JSON.stringify(r)}`);
  return r.errors;
}
const split = (cmd: string) => cmd.trim().split(/\s+/);

describe('the reference invocations parse unchanged', () => {
  // Verbatim from the reference's "Recommended Invocations for MLperf v3" (seed 000) and its results
  // summary (seed 002), after `python kv-cache.py`, with the shell's ${N} / $(hostname) expanded.
  const invocations: [string, Partial<RunOptions>][] = [
    ['--model llama2-7b --cpu-memory-gb 0 --max-concurrent-allocs 0 --users 150 --duration 300 --generation-mode none --output results/llama2-7b_stress_trial1.json',
      { model: 'llama2-7b', cpuMemGb: 0, maxConcurrentAllocs: 0, numUsers: 150, duration: 300, generationMode: 'none' }],
    ['--model llama2-7b --cpu-memory-gb 4 --max-concurrent-allocs 4 --users 200 --duration 300 --generation-mode none --output results/llama2-7b_tput_trial1.json',
      { model: 'llama2-7b', cpuMemGb: 4, maxConcurrentAllocs: 4, numUsers: 200 }],
    ['--model llama3.1-8b --cpu-memory-gb 0 --max-concurrent-allocs 0 --users 200 --duration 300 --generation-mode none --output results/llama3.1-8b_stress_trial1.json',
      { model: 'llama3.1-8b', cpuMemGb: 0, numUsers: 200 }],
    ['--model llama3.1-8b --cpu-memory-gb 4 --max-concurrent-allocs 0 --users 150 --duration 300 --generation-mode none --output results/llama3.1-8b_tput_trial1.json',
      { model: 'llama3.1-8b', cpuMemGb: 4, numUsers: 150 }],
    ['--model llama3.1-70b-instruct --cpu-memory-gb 0 --max-concurrent-allocs 0 --users 70 --duration 300 --generation-mode none --output results/llama3.1-70b_stress_trial1.json',
      { model: 'llama3.1-70b-instruct', cpuMemGb: 0, numUsers: 70 }],
    ['--model llama3.1-70b-instruct --cpu-memory-gb 4 --max-concurrent-allocs 4 --users 20 --duration 300 --generation-mode none --output results/llama3.1-70b_tput_trial1.json',
      { model: 'llama3.1-70b-instruct', cpuMemGb: 4, maxConcurrentAllocs: 4, numUsers: 20 }],
    ['--model llama3.1-8b --cpu-memory-gb 0 --max-concurrent-allocs 16 --users 200 --duration 300 --generation-mode none --output results/mlperf_stress_host1_trial1.json',
      { cpuMemGb: 0, maxConcurrentAllocs: 16, numUsers: 200 }],
    ['--model llama3.1-8b --cpu-memory-gb 4 --max-concurrent-allocs 0 --users 100 --duration 300 --generation-mode none --output results/mlperf_storage_host1_trial1.json',
      { cpuMemGb: 4, maxConcurrentAllocs: 0, numUsers: 100 }],
  ];

  it.each(invocations)('%s', (cmd, expected) => {
    const o = ok(split(cmd));
    expect(o).toMatchObject({ duration: 300, generationMode: 'none', ...expected });
    const outArg = split(cmd).at(-1)!;
    expect(o.output).toBe(join(cwd, outArg));
    // Everything not named keeps the reference default.
    expect(o.gpuMemGb).toBe(DEFAULT_RUN_OPTIONS.gpuMemGb);
    expect(o.performanceProfile).toBe('latency');
  });

  it('parsing writes nothing (not even the output directory)', () => {
    ok(split(invocations[0][0]));
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('flag syntax', () => {
  it('with no arguments gives the defaults, output named like the reference', () => {
    const o = ok([]);
    expect({ ...o, output: null, burstTracePath: DEFAULT_RUN_OPTIONS.burstTracePath }).toEqual(DEFAULT_RUN_OPTIONS);
    expect(o.output).toBe(join(cwd, 'benchmark_results_20260109_070503.json'));
    expect(defaultOutputName(NOW)).toBe('benchmark_results_20260109_070503.json');
  });

  it('accepts both spellings of the aliased flags', () => {
    expect(ok(['--num-users', '7']).numUsers).toBe(7);
    expect(ok(['--users', '7']).numUsers).toBe(7);
    expect(ok(['--cpu-mem-gb', '2.5']).cpuMemGb).toBe(2.5);
    expect(ok(['--cpu-memory-gb', '2.5']).cpuMemGb).toBe(2.5);
  });

  it('accepts --flag=value, unique prefixes (as argparse), and the last repeat wins', () => {
    expect(ok(['--num-users=12']).numUsers).toBe(12);
    expect(ok(['--gen', 'fast']).generationMode).toBe('fast');
    expect(ok(['--perf=throughput']).performanceProfile).toBe('throughput');
    expect(ok(['--duration', '10', '--duration', '20']).duration).toBe(20);
    // Unique among the reference's flags stays unique beside kvbench's (--io-chunk-mib, --io-depth).
    expect(ok(['--io', 'trace.csv']).ioTraceLog).toBe(join(cwd, 'trace.csv'));
  });

  it('converts like argparse int()/float()', () => {
    expect(ok(['--seed', '1_000']).seed).toBe(1000);
    expect(ok(['--gpu-mem-gb', '1e1']).gpuMemGb).toBe(10);
    expect(ok(['--request-rate', '.5']).requestRate).toBe(0.5);
    expect(errs(['--duration', '1.5'])).toEqual(["argument --duration: invalid int value: '1.5'"]);
    expect(errs(['--gpu-mem-gb', 'lots'])).toEqual(["argument --gpu-mem-gb: invalid float value: 'lots'"]);
    expect(errs(['--gpu-mem-gb', '0x10'])).toEqual(["argument --gpu-mem-gb: invalid float value: '0x10'"]);
  });

  it('takes a negative number as a value, so it reaches the range check', () => {
    expect(errs(['--gpu-mem-gb', '-1'])).toEqual(['--gpu-mem-gb cannot be negative, got -1']);
    expect(errs(['--num-users', '-5'])).toEqual(['--num-users must be positive, got -5']);
  });

  it('sets boolean flags and refuses a value for them', () => {
    const o = ok(['--enable-rag', '--disable-multi-turn', '--disable-prefix-caching', '--precondition', '--verify', '--enable-autoscaling', '--enable-latency-tracing']);
    expect(o).toMatchObject({
      enableRag: true, disableMultiTurn: true, disablePrefixCaching: true, precondition: true, verify: true, enableAutoscaling: true, enableLatencyTracing: true,
      useBurstTrace: false, prefillOnly: false, decodeOnly: false,
    });
    expect(errs(['--enable-rag=yes'])).toEqual(["argument --enable-rag: ignored explicit argument 'yes'"]);
  });

  it('reports a missing value', () => {
    expect(errs(['--model'])).toEqual(['argument --model: expected one argument']);
    expect(errs(['--model', '--duration', '5'])).toEqual(['argument --model: expected one argument']);
  });

  it('reports unknown and ambiguous flags and stray arguments, with a hint', () => {
    expect(errs(['--nm-users', '5'])).toEqual(['unrecognized arguments: --nm-users 5 (did you mean --num-users?)']);
    expect(errs(['--p', 'x'])[0]).toMatch(/^ambiguous option: --p could match --performance-profile, --precondition/);
    expect(errs(['stray'])).toEqual(['unrecognized arguments: stray']);
    expect(errs(['-x'])).toEqual(['unrecognized arguments: -x']);
    expect(errs(['--', '--model', 'x'])).toEqual(['unrecognized arguments: --model x']);
  });

  it("accepts kvbench's own flags", () => {
    const o = ok(['--io-chunk-mib', '4', '--io-depth', '32', '--direct-io', 'off', '--fsync-policy', 'none', '--promotion', 'on-hit']);
    expect(o).toMatchObject({ ioChunkMib: 4, ioDepth: 32, directIo: 'off', fsyncPolicy: 'none', promotion: 'on-hit' });
  });

  it('makes paths absolute against the working directory', () => {
    const o = ok(['--cache-dir', 'kv', '--xlsx-output', 'r.xlsx', '--io-trace-log', '/abs/t.csv']);
    expect(o).toMatchObject({ cacheDir: join(cwd, 'kv'), xlsxOutput: join(cwd, 'r.xlsx'), ioTraceLog: '/abs/t.csv' });
  });
});

describe('validation through the command line', () => {
  it('reports all errors together', () => {
    const e = errs([
      '--num-users', '0', '--duration', '90000', '--gpu-mem-gb', '-1', '--target-saturation', '1.5',
      '--tensor-parallel', '4', '--prefill-only', '--decode-only', '--cache-dir', '/etc/kv', '--model', 'nope',
      '--dataset-path', join(cwd, 'missing.json'), '--bogus', '--seed', 'x',
    ]);
    expect(e).toEqual(
      expect.arrayContaining([
        'unrecognized arguments: --bogus',
        "argument --seed: invalid int value: 'x'",
        '--num-users must be positive, got 0',
        '--duration exceeds 24 hours (86400s), got 90000',
        '--gpu-mem-gb cannot be negative, got -1',
        '--target-saturation must be between 0.0 and 1.0, got 1.5',
        '--tensor-parallel (4) cannot exceed --num-gpus (1)',
        '--prefill-only and --decode-only are mutually exclusive',
        '--cache-dir cannot be a system directory: /etc/kv',
        `--dataset-path does not exist: ${join(cwd, 'missing.json')}`,
      ]),
    );
    expect(e.some((x) => x.startsWith("Unknown model 'nope'. Available models: deepseek-v3, "))).toBe(true);
    expect(e).toHaveLength(11);
  });

  it('allows TP up to the GPU count and warns when it is not a power of two', () => {
    const r = parseRunArgs(['--num-gpus', '8', '--tensor-parallel', '6'], env()) as Extract<ParseRunArgsResult, { ok: true }>;
    expect(r.ok).toBe(true);
    expect(r.options).toMatchObject({ numGpus: 8, tensorParallel: 6 });
    expect(r.warnings).toEqual(['--tensor-parallel=6 is not a power of 2; uncommon for real deployments but allowed']);
  });

  it('warns about flags given without the flag they need (only when given, not for their defaults)', () => {
    const warnings = (argv: string[]) => (parseRunArgs(argv, env()) as Extract<ParseRunArgsResult, { ok: true }>).warnings;
    expect(warnings([])).toEqual([]);
    expect(
      warnings(['--replay-cycles', '2', '--trace-speedup', '4', '--max-conversations', '10', '--rag-num-docs', '5', '--autoscaler-mode', 'capacity',
        '--target-saturation', '0.5', '--precondition-size-gb', '1', '--precondition-threads', '2']),
    ).toEqual([
      '--replay-cycles has no effect without --use-burst-trace or --dataset-path',
      '--trace-speedup has no effect without --use-burst-trace or --dataset-path',
      '--max-conversations has no effect without --dataset-path',
      '--rag-num-docs has no effect without --enable-rag',
      '--autoscaler-mode has no effect without --enable-autoscaling',
      '--target-saturation has no effect without --enable-autoscaling',
      '--precondition-size-gb has no effect without --precondition',
      '--precondition-threads has no effect without --precondition',
    ]);
    expect(warnings(['--enable-rag', '--rag-num-docs', '5', '--enable-autoscaling', '--autoscaler-mode', 'capacity', '--precondition', '--precondition-threads', '2'])).toEqual([]);
    const csv = join(cwd, 'BurstGPT_1.csv');
    writeFileSync(csv, 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n');
    try {
      expect(warnings(['--use-burst-trace', '--burst-trace-path', csv, '--replay-cycles', '2', '--trace-speedup', '4'])).toEqual([]);
    } finally {
      rmSync(csv);
    }
  });

  it.each(SYSTEM_DIRECTORIES)('refuses %s and its subdirectories as --cache-dir', (dir) => {
    // Some of these are symlinks on merged-/usr systems (/bin → /usr/bin): the message shows the resolved path.
    for (const p of [dir, `${dir}/kvbench/cache`]) {
      const e = errs(['--cache-dir', p]);
      expect(e).toHaveLength(1);
      expect(e[0]).toMatch(/^--cache-dir cannot be a system directory: \//);
    }
  });

  it('resolves the path first: a symlink into /etc and a path with .. are refused', () => {
    const link = join(cwd, 'to-etc');
    symlinkSync('/etc', link);
    try {
      expect(errs(['--cache-dir', join(link, 'sub')])).toEqual(['--cache-dir cannot be a system directory: /etc/sub']);
      expect(errs(['--cache-dir', '/tmp/../etc'])).toEqual(['--cache-dir cannot be a system directory: /etc']);
      expect(errs(['--cache-dir', '/tmp/../dev/shm/kv'])).toEqual(['--cache-dir cannot be a system directory: /dev/shm/kv']);
    } finally {
      rmSync(link);
    }
  });

  it('compares whole path components (a fix: the reference also refused /devices, /rootfs, /etcetera)', () => {
    for (const p of ['/devices/kv', '/rootfs/kv', '/etcetera']) expect(ok(['--cache-dir', p]).cacheDir).toBe(p);
  });

  it('refuses a --cache-dir that is a file', () => {
    const f = join(cwd, 'a-file');
    writeFileSync(f, 'x');
    try {
      expect(errs(['--cache-dir', f])).toEqual([`--cache-dir is not a directory: ${f}`]);
    } finally {
      rmSync(f);
    }
  });

  it('input files must exist: --dataset-path, --validation-trace, --config', () => {
    const missing = join(cwd, 'nope');
    expect(errs(['--dataset-path', missing])).toEqual([`--dataset-path does not exist: ${missing}`]);
    expect(errs(['--validation-trace', missing])).toEqual([`--validation-trace does not exist: ${missing}`]);
    expect(errs(['--config', missing])).toEqual([`Config file not found: ${missing}`]);
    expect(errs(['--dataset-path', cwd])).toEqual([`--dataset-path is not a file: ${cwd}`]);
  });

  it('--burst-trace-path must exist when --use-burst-trace is set: file, directory of CSVs, or glob', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kvbench-burst-'));
    try {
      const csv = join(dir, 'BurstGPT_1.csv');
      // Without --use-burst-trace the path is not read (reference behaviour).
      expect(ok(['--burst-trace-path', join(dir, 'absent.csv')]).useBurstTrace).toBe(false);
      expect(errs(['--use-burst-trace'])).toEqual([`--burst-trace-path does not exist: ${join(cwd, 'BurstGPT/data/BurstGPT_1.csv')}`]);
      expect(errs(['--use-burst-trace', '--burst-trace-path', dir])).toEqual([`--burst-trace-path: no CSV files matched: ${join(dir, '*.csv')}`]);
      writeFileSync(csv, 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n');
      expect(ok(['--use-burst-trace', '--burst-trace-path', csv]).burstTracePath).toBe(csv);
      expect(ok(['--use-burst-trace', '--burst-trace-path', dir]).burstTracePath).toBe(dir);
      expect(ok(['--use-burst-trace', '--burst-trace-path', join(dir, 'Burst*.csv')]).useBurstTrace).toBe(true);
      expect(errs(['--use-burst-trace', '--burst-trace-path', join(dir, 'x*.csv')])).toEqual([`--burst-trace-path: no CSV files matched: ${join(dir, 'x*.csv')}`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses --output on the same file as --xlsx-output or --io-trace-log (the results would be overwritten)', () => {
    const out = join(cwd, 'r.json');
    expect(errs(['--output', 'r.json', '--xlsx-output', out])).toEqual([`--output and --xlsx-output name the same file: ${out}`]);
    expect(errs(['--output', out, '--io-trace-log', `${cwd}/sub/../r.json`])).toEqual([`--output and --io-trace-log name the same file: ${out}`]);
    const link = join(cwd, 'link-dir');
    symlinkSync(cwd, link);
    try {
      expect(errs(['--output', out, '--xlsx-output', join(link, 'r.json')])).toEqual([`--output and --xlsx-output name the same file: ${out}`]);
    } finally {
      rmSync(link);
    }
    expect(ok(['--output', out, '--xlsx-output', join(cwd, 'r.xlsx'), '--io-trace-log', join(cwd, 'trace.csv')]).xlsxOutput).toBe(join(cwd, 'r.xlsx'));
  });

  it('refuses an output on an input file (--dataset-path, --config, --probe-result, --validation-trace, a BurstGPT CSV): the results would replace it', () => {
    const dir = mkdtempSync(join(cwd, 'inputs-'));
    try {
      const data = join(dir, 'sharegpt.json');
      writeFileSync(data, '[]');
      const config = join(dir, 'run.yaml');
      writeFileSync(config, 'model: tiny-1b\n');
      const burst = join(dir, 'burst.csv');
      writeFileSync(burst, 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n');
      const probe = join(dir, 'probe.json');
      writeFileSync(probe, '{}');
      const msg = (out: string, input: string, file: string) => `${out} names the ${input} input file, which the run would overwrite: ${file}`;
      expect(errs(['--dataset-path', data, '--output', data])).toEqual([msg('--output', '--dataset-path', data)]);
      // Another spelling, a symbolic link or a hard link is the same file.
      expect(errs(['--dataset-path', data, '--output', `${dir}/sub/../sharegpt.json`])).toEqual([msg('--output', '--dataset-path', data)]);
      const link = join(dir, 'link.json');
      symlinkSync(data, link);
      expect(errs(['--dataset-path', link, '--output', data])).toEqual([msg('--output', '--dataset-path', data)]);
      const hard = join(dir, 'hard.json');
      linkSync(data, hard);
      expect(errs(['--dataset-path', data, '--output', hard])).toEqual([msg('--output', '--dataset-path', data)]);
      expect(errs(['--config', config, '--xlsx-output', config])).toContain(msg('--xlsx-output', '--config', config));
      expect(errs(['--validation-trace', data, '--io-trace-log', data])).toEqual([msg('--io-trace-log', '--validation-trace', data)]);
      expect(errs(['--probe-result', probe, '--output', probe])).toContain(msg('--output', '--probe-result', probe));
      expect(errs(['--use-burst-trace', '--burst-trace-path', burst, '--io-trace-log', burst])).toEqual([msg('--io-trace-log', '--burst-trace-path', burst)]);
      // The BurstGPT path is only read with --use-burst-trace; other outputs beside the inputs are fine.
      expect(ok(['--burst-trace-path', burst, '--io-trace-log', burst]).ioTraceLog).toBe(burst);
      expect(ok(['--dataset-path', data, '--output', join(dir, 'results.json')]).output).toBe(join(dir, 'results.json'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an empty path instead of resolving it to the current directory', () => {
    for (const flag of ['--cache-dir', '--output', '--dataset-path', '--io-trace-log', '--xlsx-output', '--config']) {
      expect(errs([flag, '']), flag).toEqual([`${flag} must not be empty`]);
      expect(errs([`${flag}=`]), flag).toEqual([`${flag} must not be empty`]);
    }
  });

  it('--enable-latency-tracing is refused for a run here, but still describes a run made elsewhere (import)', () => {
    const here = parseRunArgs(['--enable-latency-tracing', '--cpu-mem-gb', '0'], { ...env(), runsHere: { totalMemoryBytes: 64 * 1024 ** 3 } });
    expect(here).toEqual({ ok: false, errors: [expect.stringMatching(/^--enable-latency-tracing .* is not implemented in kvbench/)] });
    expect(ok(['--enable-latency-tracing']).enableLatencyTracing).toBe(true);
  });

  it('--cpu-mem-gb, the default 32 too, must fit in the RAM of the machine the run executes on (not in trace-only mode)', () => {
    const GIB = 1024 ** 3;
    const small = { ...env(), runsHere: { totalMemoryBytes: 16 * GIB } };
    expect(parseRunArgs([], small)).toEqual({
      ok: false,
      errors: ['--cpu-mem-gb 32 is more than this machine can hold: the CPU tier keeps real bytes in RAM, and 16.0 GiB is installed (use at most 14.0)'],
    });
    expect(parseRunArgs(['--cpu-mem-gb', '14'], small).ok).toBe(true);
    expect(parseRunArgs(['--io-trace-log', join(cwd, 'trace.csv')], small).ok).toBe(true);
    // Describing a run made elsewhere (import --run-flags): this machine's RAM does not matter.
    expect(ok(['--cpu-mem-gb', '1000']).cpuMemGb).toBe(1000);
  });

  it('a refused value gets its own error and no follow-on one from the default standing in for it (review rev13 #12)', () => {
    const GIB = 1024 ** 3;
    const small = { ...env(), runsHere: { totalMemoryBytes: 16 * GIB } };
    const only = (argv: string[]): string[] => {
      const r = parseRunArgs(argv, small);
      if (r.ok !== false) throw new Error(`expected errors for ${argv.join(' ')}`);
      return r.errors;
    };
    // Not also "--cpu-mem-gb 32 is more than this machine can hold" (the default it replaced).
    for (const bad of ['NaN', 'inf']) expect(only(['--cpu-mem-gb', bad])).toEqual([`argument --cpu-mem-gb: invalid float value: '${bad}'`]);
    // Given empty (a script's unset variable), in the words every other command and run's own path flags use.
    for (const empty of ['', '  ']) expect(only(['--cpu-mem-gb', empty])).toEqual(['--cpu-mem-gb must not be empty']);
    expect(only(['--cpu-mem-gb', '1', '--num-users', ''])).toEqual(['--num-users must not be empty']);
    // A later valid repeat is the value, and is checked.
    expect(only(['--cpu-mem-gb', 'x', '--cpu-mem-gb', '15'])).toEqual([
      "argument --cpu-mem-gb: invalid float value: 'x'",
      '--cpu-mem-gb 15 is more than this machine can hold: the CPU tier keeps real bytes in RAM, and 16.0 GiB is installed (use at most 14.0)',
    ]);
    // Not also "rank -1 (from --rank) has no world size".
    expect(only(['--cpu-mem-gb', '1', '--rank', '-1'])).toEqual(['--rank must be between 0 and 99999, got -1']);
    // Not also "--tensor-parallel (4) cannot exceed --num-gpus (1)", the default.
    expect(only(['--cpu-mem-gb', '1', '--num-gpus', 'x', '--tensor-parallel', '4'])).toEqual(["argument --num-gpus: invalid int value: 'x'"]);
    expect(only(['--cpu-mem-gb', '1', '--num-gpus', '0', '--tensor-parallel', '4'])).toEqual(['--num-gpus must be >= 1, got 0']);
    expect(only(['--cpu-mem-gb', '1', '--num-gpus', '2', '--tensor-parallel', '4'])).toEqual(['--tensor-parallel (4) cannot exceed --num-gpus (2)']);
    // A config file that cannot be read may have set what the defaults stand in for: they are not judged either.
    const config = join(cwd, 'unreadable-run.yaml');
    writeFileSync(config, 'run:\n  cpu_mem_gb: 4\n  num_gpus: 8\n  bogus: 1\n');
    expect(only(['--config', config, '--tensor-parallel', '8'])).toEqual([`${config}:4: Unknown configuration key: 'run.bogus'`]);
    expect(only(['--config', config, '--tensor-parallel', '8', '--num-gpus', '2'])).toEqual([
      `${config}:4: Unknown configuration key: 'run.bogus'`,
      '--tensor-parallel (8) cannot exceed --num-gpus (2)',
    ]);
    // A number spelled right but past what a number holds is out of range, not an invalid spelling.
    expect(only(['--cpu-mem-gb', '1', '--num-users', '99999999999999999999'])).toEqual(["argument --num-users: '99999999999999999999' is out of range (beyond ±9007199254740991)"]);
    expect(only(['--cpu-mem-gb', '1e309'])).toEqual(["argument --cpu-mem-gb: '1e309' is out of range (beyond ±1.8e308)"]);
  });

  it('--xlsx-output must end in .xlsx for a run here (kvbench does not write the reference\'s CSV for other names)', () => {
    const here = { ...env(), runsHere: { totalMemoryBytes: 64 * 1024 ** 3 } };
    expect(parseRunArgs(['--xlsx-output', 'r.csv'], here)).toEqual({
      ok: false,
      errors: [`--xlsx-output must name a .xlsx file (kvbench writes only Excel workbooks, not the reference's CSV for other names), got ${join(cwd, 'r.csv')}`],
    });
    expect(parseRunArgs(['--xlsx-output', 'r.xlsx'], here).ok).toBe(true);
    expect(parseRunArgs(['--xlsx-output', 'R.XLSX'], here).ok).toBe(true);
    expect(ok(['--xlsx-output', 'r.csv']).xlsxOutput).toBe(join(cwd, 'r.csv')); // describing a reference run (import)
  });

  it('--output may be a pipe or device (a FIFO here, as /dev/stdout), judged through links; the I/O trace needs a file', () => {
    const here = { ...env(), runsHere: { totalMemoryBytes: 64 * 1024 ** 3 } };
    const dir = mkdtempSync(join(tmpdir(), 'kvbench-out-'));
    try {
      const fifo = join(dir, 'pipe');
      execFileSync('mkfifo', [fifo]);
      expect(parseRunArgs(['--cpu-mem-gb', '0', '--output', fifo], here)).toMatchObject({ ok: true, options: { output: fifo } });
      expect(parseRunArgs(['--cpu-mem-gb', '0', '--io-trace-log', fifo], here)).toEqual({
        ok: false,
        errors: [`--io-trace-log: cannot write ${fifo}: it exists and is not a regular file (the trace is written beside it, then renamed into place)`],
      });
      const link = join(dir, 'results.json');
      symlinkSync(join(dir, 'gone', 'results.json'), link);
      expect(parseRunArgs(['--cpu-mem-gb', '0', '--output', link], here)).toEqual({ ok: false, errors: [`--output: cannot write ${link}: its folder ${join(dir, 'gone')} does not exist`] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('existing input files are accepted', () => {
    const f = join(cwd, 'sharegpt.json');
    writeFileSync(f, '[]');
    try {
      expect(ok(['--dataset-path', 'sharegpt.json', '--validation-trace', f])).toMatchObject({ datasetPath: f, validationTrace: f });
    } finally {
      rmSync(f);
    }
  });
});

describe('--help', () => {
  it('is returned instead of options, wherever it appears', () => {
    expect(parseRunArgs(['--num-users', '5', '--help']).ok).toBe('help');
    expect(parseRunArgs(['-h', '--bogus']).ok).toBe('help');
  });

  it('lists every flag and alias with its default and unit', () => {
    const text = runHelpText();
    for (const s of RUN_FLAGS) {
      for (const name of [s.flag, ...s.aliases]) expect(text).toContain(name);
      const line = text.split('\n').find((l) => l.trimStart().startsWith(s.flag))!;
      expect(line).toMatch(/\(default: [^)]+\)$/);
      if (s.unit) expect(line).toContain(`[${s.unit}]`);
    }
    expect(text).toContain('--num-users N, --users N');
    expect(text).toContain('(default: 100)');
    expect(text).toContain('llama3.1-70b-instruct');
  });

  it('--dataset-path names every format it replays, as its unrecognised-format error does', async () => {
    const line = runHelpText().split('\n').find((l) => l.trimStart().startsWith('--dataset-path'))!;
    for (const name of ['ShareGPT', 'Mooncake', 'Azure', 'BurstGPT', 'kvbench workload file']) expect(line).toContain(name);
    expect(Object.keys(DATASET_FORMATS)).toEqual(['sharegpt', 'mooncake', 'azure', 'burstgpt', 'workload-file']);
    const unknown = join(cwd, 'unknown.csv');
    writeFileSync(unknown, 'a,b,c\n1,2,3\n');
    const message = await detectDatasetFormat(unknown).then(
      () => '',
      (err: Error) => err.message,
    );
    for (const format of Object.values(DATASET_FORMATS)) expect(message).toContain(format);
  });

  it('--prefill-only does not claim to write only: like the reference it still reloads turns and reads prefixes', () => {
    const line = runHelpText().split('\n').find((l) => l.trimStart().startsWith('--prefill-only'))!;
    expect(line).not.toMatch(/writes only/);
    expect(line).toMatch(/no decode reads, but earlier turns are still reloaded and cached prefixes read/);
    expect(line).toContain('--disable-multi-turn --disable-prefix-caching');
  });
});
