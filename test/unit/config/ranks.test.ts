// Ranks of a multi-host run: where the rank comes from, and what each rank keeps to itself.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../../src-main/engine/config/parse-run-args.ts';
import { launcherRank, rankedFileName, resolveRank } from '../../../src-main/engine/config/ranks.ts';

let cwd: string;
const NOW = new Date('2026-11-24T10:00:00Z');
beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), 'kvbench-ranks-'));
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const BASE = ['--model', 'tiny-1b', '--seed', '42', '--cache-dir', 'shared', '--output', 'r.json', '--xlsx-output', 'r.xlsx'];

describe('launcherRank', () => {
  it('reads Open MPI, MPICH, Slurm, PMIx and Kubernetes variables, in that order', () => {
    expect(launcherRank({ OMPI_COMM_WORLD_RANK: '3', OMPI_COMM_WORLD_SIZE: '8', SLURM_PROCID: '1' })).toEqual({ rank: 3, worldSize: 8, source: 'OMPI_COMM_WORLD_RANK (Open MPI)' });
    expect(launcherRank({ PMI_RANK: '2', PMI_SIZE: '4' })).toMatchObject({ rank: 2, worldSize: 4 });
    // PMIx exports no size variable (PMIX_SIZE is not one): the world size must come from elsewhere.
    expect(launcherRank({ PMIX_RANK: '5', PMIX_SIZE: '8' })).toEqual({ rank: 5, worldSize: null, source: 'PMIX_RANK (PMIx)' });
    // srun --mpi=pmix: every task has PMIX_RANK as well as Slurm's variables, which know the step's size.
    const pmixStep = { PMIX_RANK: '1', PMIX_NAMESPACE: 'slurm.pmix.123.0', SLURM_PROCID: '1', SLURM_NTASKS: '2', SLURM_STEP_ID: '0' };
    expect(launcherRank(pmixStep)).toEqual({ rank: 1, worldSize: 2, source: 'SLURM_PROCID (Slurm)' });
    // The step's own task count, where a step runs fewer tasks than the job has.
    expect(launcherRank({ SLURM_PROCID: '1', SLURM_STEP_NUM_TASKS: '2', SLURM_NTASKS: '8', SLURM_STEP_ID: '3' })).toMatchObject({ rank: 1, worldSize: 2 });
    expect(launcherRank({ SLURM_PROCID: '7', SLURM_NTASKS: '16', SLURM_STEP_ID: '0' })).toMatchObject({ rank: 7, worldSize: 16, source: 'SLURM_PROCID (Slurm)' });
    // The batch script itself (no job step, or Slurm's batch step id) is not a rank.
    expect(launcherRank({ SLURM_PROCID: '0', SLURM_NTASKS: '16' })).toBeNull();
    expect(launcherRank({ SLURM_PROCID: '0', SLURM_NTASKS: '16', SLURM_STEP_ID: '4294967291' })).toBeNull();
    expect(launcherRank({ JOB_COMPLETION_INDEX: '4' })).toEqual({ rank: 4, worldSize: null, source: 'JOB_COMPLETION_INDEX (Kubernetes Indexed Job)' });
    expect(launcherRank({ SLURM_PROCID: 'x', SLURM_STEP_ID: '0', JOB_COMPLETION_INDEX: '1' })).toMatchObject({ rank: 1 });
    expect(launcherRank({})).toBeNull();
  });
});

describe('resolveRank', () => {
  it('lets --rank and --world-size override the launcher, and treats a launcher of one process as one host', () => {
    expect(resolveRank({ rank: 1, worldSize: 2 }, { SLURM_PROCID: '5', SLURM_NTASKS: '8', SLURM_STEP_ID: '0' })).toEqual({ rank: 1, worldSize: 2, source: '--rank' });
    expect(resolveRank({ rank: null, worldSize: 4 }, { JOB_COMPLETION_INDEX: '3' })).toMatchObject({ rank: 3, worldSize: 4 });
    expect(resolveRank({ rank: null, worldSize: null }, { SLURM_PROCID: '0', SLURM_NTASKS: '1', SLURM_STEP_ID: '0' })).toBeNull();
    // A single-task srun step under PMIx (or a command in `srun --pty bash`) is one host too.
    expect(resolveRank({ rank: null, worldSize: null }, { PMIX_RANK: '0', PMIX_NAMESPACE: 'x', SLURM_PROCID: '0', SLURM_NTASKS: '1', SLURM_STEP_ID: '0' })).toBeNull();
    expect(resolveRank({ rank: null, worldSize: null }, {})).toBeNull();
  });
});

describe('rankedFileName', () => {
  it('replaces {rank}, else adds .rankN before the extension', () => {
    expect(rankedFileName('/out/r-{rank}.json', 3)).toBe('/out/r-3.json');
    expect(rankedFileName('/out/results.json', 3)).toBe('/out/results.rank3.json');
    expect(rankedFileName('/out.d/results', 0)).toBe('/out.d/results.rank0');
    expect(rankedFileName('/out/.hidden', 1)).toBe('/out/.hidden.rank1');
  });
});

describe('kvbench run under a launcher', () => {
  it('gives each rank its own cache subdirectory, seed + rank and output files', () => {
    const r = parseRunArgs(BASE, { cwd, now: () => NOW, launcherEnv: { OMPI_COMM_WORLD_RANK: '2', OMPI_COMM_WORLD_SIZE: '4' } });
    if (r.ok !== true) throw new Error(JSON.stringify(r));
    expect(r.rank).toEqual({ rank: 2, worldSize: 4, source: 'OMPI_COMM_WORLD_RANK (Open MPI)' });
    expect(r.options).toMatchObject({
      rank: 2,
      worldSize: 4,
      seed: 44,
      cacheDir: join(cwd, 'shared', 'rank-2'),
      output: join(cwd, 'r.rank2.json'),
      xlsxOutput: join(cwd, 'r.rank2.xlsx'),
    });
  });

  it('writes a rank\'s results into a pipe given as --output, with no ranked file beside it', () => {
    const fifo = join(cwd, 'results.fifo');
    execFileSync('mkfifo', [fifo]);
    try {
      const r = parseRunArgs(['--model', 'tiny-1b', '--output', fifo], { cwd, now: () => NOW, launcherEnv: { PMI_RANK: '1', PMI_SIZE: '2' } });
      if (r.ok !== true) throw new Error(JSON.stringify(r));
      expect(r.options.output).toBe(fifo);
    } finally {
      rmSync(fifo);
    }
  });

  it('runs exactly as on one host without a launcher', () => {
    const r = parseRunArgs(BASE, { cwd, now: () => NOW, launcherEnv: {} });
    if (r.ok !== true) throw new Error(JSON.stringify(r));
    expect(r.rank).toBeNull();
    expect(r.options).toMatchObject({ rank: null, worldSize: null, seed: 42, cacheDir: join(cwd, 'shared'), output: join(cwd, 'r.json') });
  });

  it('wraps seed + rank into the seed range, so a seed that works on one host works on every rank', () => {
    // The last --seed wins, as in argparse.
    const r = parseRunArgs([...BASE, '--seed', '4294967295'], { cwd, now: () => NOW, launcherEnv: { OMPI_COMM_WORLD_RANK: '1', OMPI_COMM_WORLD_SIZE: '2' } });
    if (r.ok !== true) throw new Error(JSON.stringify(r));
    expect(r.options.seed).toBe(0);
  });

  it('runs a task of srun --mpi=pmix as the rank Slurm gives it, with no --world-size', () => {
    const r = parseRunArgs(BASE, { cwd, now: () => NOW, launcherEnv: { PMIX_RANK: '1', PMIX_NAMESPACE: 'slurm.pmix.123.0', SLURM_PROCID: '1', SLURM_NTASKS: '2', SLURM_STEP_ID: '0' } });
    if (r.ok !== true) throw new Error(JSON.stringify(r));
    expect(r.rank).toEqual({ rank: 1, worldSize: 2, source: 'SLURM_PROCID (Slurm)' });
  });

  it('warns about a launcher variable that is not a rank, instead of silently running as one host', () => {
    const r = parseRunArgs(BASE, { cwd, now: () => NOW, launcherEnv: { OMPI_COMM_WORLD_RANK: 'x', OMPI_COMM_WORLD_SIZE: '2', PMI_RANK: '-1' } });
    if (r.ok !== true) throw new Error(JSON.stringify(r));
    expect(r.rank).toBeNull();
    expect(r.warnings.filter((w) => w.includes('is not a rank'))).toEqual([
      'OMPI_COMM_WORLD_RANK=x is not a rank (a whole number from 0): ignored; give --rank and --world-size if this host is one rank of a run',
      'PMI_RANK=-1 is not a rank (a whole number from 0): ignored; give --rank and --world-size if this host is one rank of a run',
    ]);
    // --rank says which rank this is, whatever the environment; a batch script's SLURM_PROCID is no rank variable.
    for (const [args, launcherEnv] of [
      [['--rank', '1', '--world-size', '2'], { OMPI_COMM_WORLD_RANK: 'x' }],
      [[], { SLURM_PROCID: 'x' }],
    ] as const) {
      const quiet = parseRunArgs([...BASE, ...args], { cwd, now: () => NOW, launcherEnv });
      if (quiet.ok !== true) throw new Error(JSON.stringify(quiet));
      expect(quiet.warnings.filter((w) => w.includes('is not a rank'))).toEqual([]);
    }
  });

  it('refuses {rank} in a file name on a run that is no rank, rather than write a file named r-{rank}.json', () => {
    const single = parseRunArgs(['--model', 'tiny-1b', '--output', 'r-{rank}.json', '--xlsx-output', 'x.xlsx'], { cwd, now: () => NOW, launcherEnv: {} });
    expect(single).toEqual({
      ok: false,
      errors: [`--output ${join(cwd, 'r-{rank}.json')} has {rank}, but this run is not a rank of a multi-host run (no --rank, and no launcher started several processes): give --rank N --world-size W, or leave it out`],
    });
    const ranked = parseRunArgs(['--model', 'tiny-1b', '--output', 'r-{rank}.json'], { cwd, now: () => NOW, launcherEnv: { PMI_RANK: '1', PMI_SIZE: '2' } });
    if (ranked.ok !== true) throw new Error(JSON.stringify(ranked));
    expect(ranked.options.output).toBe(join(cwd, 'r-1.json'));
  });

  it('refuses --world-size above 1 with no rank, rather than run each host as the whole run', () => {
    const noRank = parseRunArgs([...BASE, '--world-size', '4'], { cwd, now: () => NOW, launcherEnv: { MV2_COMM_WORLD_RANK: '1' } });
    expect(noRank).toEqual({ ok: false, errors: [expect.stringMatching(/^--world-size 4 but no rank: give each host --rank N, or start the hosts with a launcher that sets the rank/)] });
    expect(parseRunArgs([...BASE, '--world-size', '1'], { cwd, now: () => NOW, launcherEnv: {} }).ok).toBe(true);
    expect(parseRunArgs([...BASE, '--world-size', '4', '--rank', '1'], { cwd, now: () => NOW, launcherEnv: {} }).ok).toBe(true);
  });

  it('needs the world size to share the free space, unless every rank has its own capacity', () => {
    const k8s = { JOB_COMPLETION_INDEX: '1' };
    const none = parseRunArgs(BASE, { cwd, now: () => NOW, launcherEnv: k8s });
    expect(none).toEqual({ ok: false, errors: [expect.stringMatching(/^rank 1 \(from JOB_COMPLETION_INDEX \(Kubernetes Indexed Job\)\) has no world size: give --world-size/)] });
    expect(parseRunArgs([...BASE, '--world-size', '4'], { cwd, now: () => NOW, launcherEnv: k8s }).ok).toBe(true);
    expect(parseRunArgs([...BASE, '--storage-capacity-gb', '10'], { cwd, now: () => NOW, launcherEnv: k8s }).ok).toBe(true);
  });

  it('refuses a rank outside its world, and a --start-at more than a day away', () => {
    const outside = parseRunArgs([...BASE, '--world-size', '2'], { cwd, now: () => NOW, launcherEnv: { JOB_COMPLETION_INDEX: '2' } });
    expect(outside).toEqual({ ok: false, errors: ["rank 2 must be below the world size 2 (--rank and --world-size, or the launcher's)"] });
    const flags = parseRunArgs([...BASE, '--rank', '3', '--world-size', '3'], { cwd, now: () => NOW });
    expect(flags.ok).toBe(false);
    const ms = parseRunArgs([...BASE, '--start-at', String(NOW.getTime() + 60_000)], { cwd, now: () => NOW, runsHere: { totalMemoryBytes: 64 * 2 ** 30 } });
    expect(ms).toEqual({ ok: false, errors: [expect.stringMatching(/^--start-at \d+ is .*, more than a day away: give a Unix time in seconds/)] });
    // Past any date a Date holds (nanoseconds given for seconds): the flag's own message, not "internal error: Invalid time value".
    for (const beyond of ['8640000000001', String(NOW.getTime() * 1e6), '1e300']) {
      const r = parseRunArgs([...BASE, '--start-at', beyond], { cwd, now: () => NOW, runsHere: { totalMemoryBytes: 64 * 2 ** 30 } });
      expect(r, beyond).toEqual({ ok: false, errors: [expect.stringMatching(/^--start-at \S+ is more than a day away \(past the year 275760\): give a Unix time in seconds/)] });
    }
    const soon = parseRunArgs([...BASE, '--cpu-mem-gb', '1', '--start-at', String(NOW.getTime() / 1000 + 60)], { cwd, now: () => NOW, runsHere: { totalMemoryBytes: 64 * 2 ** 30 } });
    expect(soon.ok).toBe(true);
  });
});
