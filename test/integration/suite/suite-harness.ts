// Shared by the suite integration tests: the real `kvbench` CLI on a temp database and cache dir.
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase } from '../../../src-main/store/sqlite.ts';

export { makeTempDir, removeTempDirs, runCli, startCli, explain, hangUp, isAlive, killStarted, olderNode, sleepMs, waitFor, waitForEnginePid, runDirsIn, type CliProcess, type CliResult } from '../cli/cli-harness.ts';

/**
 * Suite flags that end each trial after its `requests`th completed request, with `capS` seconds only as
 * the cap. For tests that need a trial to complete: a short fixed --duration (1 to 5 s) closed before the
 * first request completed on a loaded 2-core machine (an idle one completes about 5 a second in a smoke
 * storage-only trial), and the trial came out partial.
 */
export function trialEndsAfter(requests: number, capS = 120): string[] {
  return ['--max-requests', String(requests), '--duration', String(capS)];
}

/** The suite events printed with --events (JSON lines on stdout). */
export function eventsOf(stdout: string): { type: string; [k: string]: unknown }[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { type: string });
}

/** Trial rows straight from SQLite (read-only), for checks that must not go through kvbench's own recovery. */
export function rawTrials(db: string): { id: number; scenario_id: string; trial_index: number; attempt: number; status: string; status_reason: string | null; engine_pid: number | null }[] {
  const d = openDatabase(db, { readonly: true, fileMustExist: true });
  try {
    return d.prepare('SELECT id, scenario_id, trial_index, attempt, status, status_reason, engine_pid FROM trials ORDER BY id').all() as ReturnType<typeof rawTrials>;
  } finally {
    d.close();
  }
}

export function fileBytes(file: string): string {
  return fs.readFileSync(file).toString('base64');
}

export function dbPaths(dir: string): { db: string; cache: string } {
  const cache = path.join(dir, 'cache');
  fs.mkdirSync(cache, { recursive: true });
  return { db: path.join(dir, 'kvbench.db'), cache };
}
