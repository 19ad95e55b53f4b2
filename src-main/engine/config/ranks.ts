// Runs across several hosts: an existing launcher (mpirun, Slurm, a Kubernetes Indexed Job) starts
// one `kvbench run` per rank against shared storage. Each rank needs its own cache directory (the
// ranks must not delete each other's entries), its own seed (the reference's seed + rank, so the
// users differ), and its own results file (the ranks must not overwrite each other's); `kvbench
// merge` then aggregates the files.

/** A rank's place in a multi-host run, and where that was learnt. */
export interface RankInfo {
  rank: number;
  /** Ranks in the run; null where the launcher does not say (a Kubernetes Indexed Job, PMIx). */
  worldSize: number | null;
  /** `--rank`, or the launcher's environment variable. */
  source: string;
}

/**
 * The launchers' variables, in order: the first that is set names the rank, and the first of its
 * size variables that is set the world size.
 */
const LAUNCHER_VARIABLES: readonly { rank: string; sizes: readonly string[]; launcher: string; applies?: (env: NodeJS.ProcessEnv) => boolean }[] = [
  { rank: 'OMPI_COMM_WORLD_RANK', sizes: ['OMPI_COMM_WORLD_SIZE'], launcher: 'Open MPI' },
  { rank: 'PMI_RANK', sizes: ['PMI_SIZE'], launcher: 'MPICH / Intel MPI' },
  // A batch script itself also sees SLURM_PROCID=0 and the job's SLURM_NTASKS: only a task that
  // srun started (a job step, with its step id) is a rank, and the step's own task count its world.
  { rank: 'SLURM_PROCID', sizes: ['SLURM_STEP_NUM_TASKS', 'SLURM_NTASKS'], launcher: 'Slurm', applies: inSlurmJobStep },
  // After Slurm: `srun --mpi=pmix` (and MpiDefault=pmix) gives every task PMIX_RANK too, and PMIx
  // exports no size (a PMIx client asks for PMIX_JOB_SIZE), so only Slurm's variables know the world.
  { rank: 'PMIX_RANK', sizes: [], launcher: 'PMIx' },
  { rank: 'JOB_COMPLETION_INDEX', sizes: [], launcher: 'Kubernetes Indexed Job' },
];

/** Slurm's special step ids (batch, extern, interactive, pending) sit just below 2^32. */
const SLURM_FIRST_SPECIAL_STEP_ID = 0xfffffff0;

function inSlurmJobStep(env: NodeJS.ProcessEnv): boolean {
  const step = nonNegativeInt(env.SLURM_STEP_ID ?? env.SLURM_STEPID);
  return step !== null && step < SLURM_FIRST_SPECIAL_STEP_ID;
}

export const RANK_PLACEHOLDER = '{rank}';

function nonNegativeInt(raw: string | undefined): number | null {
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return null;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) ? n : null;
}

/** The rank a launcher gave this process, from its environment; null when none did. */
export function launcherRank(env: NodeJS.ProcessEnv): RankInfo | null {
  for (const v of LAUNCHER_VARIABLES) {
    const rank = nonNegativeInt(env[v.rank]);
    if (rank === null || (v.applies && !v.applies(env))) continue;
    const size = v.sizes.map((name) => nonNegativeInt(env[name])).find((n) => n !== null && n > 0) ?? null;
    return { rank, worldSize: size, source: `${v.rank} (${v.launcher})` };
  }
  return null;
}

/**
 * A launcher variable set to something that is not a rank (`OMPI_COMM_WORLD_RANK=x`, `PMI_RANK=-1`):
 * it is passed over, and the process may then run as a single host, so say so.
 */
export function launcherVariableWarnings(env: NodeJS.ProcessEnv): string[] {
  return LAUNCHER_VARIABLES.filter((v) => env[v.rank] !== undefined && nonNegativeInt(env[v.rank]) === null && (!v.applies || v.applies(env))).map(
    (v) => `${v.rank}=${env[v.rank]} is not a rank (a whole number from 0): ignored; give --rank and --world-size if this host is one rank of a run`,
  );
}

/**
 * `--rank`/`--world-size` where given, else the launcher's; null for a run on one host (no launcher,
 * or a launcher that started only this one process), which then runs exactly as without ranks.
 */
export function resolveRank(flags: { rank: number | null; worldSize: number | null }, env: NodeJS.ProcessEnv): RankInfo | null {
  const launched = launcherRank(env);
  if (flags.rank !== null) return { rank: flags.rank, worldSize: flags.worldSize ?? launched?.worldSize ?? null, source: '--rank' };
  if (!launched) return null;
  const worldSize = flags.worldSize ?? launched.worldSize;
  if (launched.rank === 0 && worldSize === 1) return null;
  return { ...launched, worldSize };
}

/** `results.json` → `results.rank3.json`, or `{rank}` in the name replaced (`r-{rank}.json` → `r-3.json`). */
export function rankedFileName(file: string, rank: number): string {
  if (file.includes(RANK_PLACEHOLDER)) return file.replaceAll(RANK_PLACEHOLDER, String(rank));
  const slash = file.lastIndexOf('/');
  const dot = file.lastIndexOf('.');
  return dot > slash + 1 ? `${file.slice(0, dot)}.rank${rank}${file.slice(dot)}` : `${file}.rank${rank}`;
}

/** The cache subdirectory of one rank, under the shared `--cache-dir`. */
export function rankCacheDirName(rank: number): string {
  return `rank-${rank}`;
}
