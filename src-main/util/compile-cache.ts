// Node's on-disk compile cache (type-stripped TypeScript and V8 code, keyed by each file's
// contents): without it every kvbench process strips and compiles its modules again at start,
// about 0.75 CPU-s for the CLI of `kvbench run` and as much again for its engine process and the
// engine's worker threads, which the write-heavy benchmark counted against kvbench's CPU per GB
// (docs/benchmarks.md). Turned on by bin/kvbench.js for the CLI (and `kvbench serve`), by the desktop
// app's main process entry (app/entry.ts), and by the engine's and the drive probe's entries for
// themselves, which the desktop app starts (the engine as an Electron utility process) without going
// through bin/kvbench.js. Set in the environment too, so the processes and worker threads a
// process starts afterwards use it. The first run after a change pays the compiling (and writes
// the cache); NODE_DISABLE_COMPILE_CACHE=1 turns it off, NODE_COMPILE_CACHE=DIR moves it. Kept in
// the user's cache directory, not Node's default under $TMPDIR: a cache is the XDG cache's, and a
// run's temp directory (possibly the drive under test, or a full one) gets nothing it did not ask for.
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';

type EnableCompileCache = (dir: string) => { directory?: string };

/** `$XDG_CACHE_HOME/kvbench/node-compile-cache` (`~/.cache` without it), unless NODE_COMPILE_CACHE names another. */
export function compileCacheDirectory(env: NodeJS.ProcessEnv = process.env): string {
  return env.NODE_COMPILE_CACHE ?? join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'kvbench', 'node-compile-cache');
}

/**
 * Turns the compile cache on for this process (and, through NODE_COMPILE_CACHE, for those it starts
 * later); the directory in use, or null where it stays off: disabled, a Node without the function
 * (read from the namespace: older Node lacks it), or a directory that cannot be written, which costs
 * only the compiling, never the start.
 */
export function enableCompileCache(node: { enableCompileCache?: EnableCompileCache } = nodeModule): string | null {
  const enable = node.enableCompileCache;
  if (typeof enable !== 'function') return null;
  let directory: string | undefined;
  try {
    directory = enable(compileCacheDirectory()).directory;
  } catch {
    return null; // no home directory to put it in, or a Node that throws where others report FAILED
  }
  if (directory === undefined) return null;
  if (process.env.NODE_COMPILE_CACHE === undefined) process.env.NODE_COMPILE_CACHE = directory;
  return directory;
}
