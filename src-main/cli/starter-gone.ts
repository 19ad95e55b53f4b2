// Started through npm (`npx kvbench serve`, `npm run serve`), kvbench is npm's grandchild: npm → sh -c
// → kvbench (→ the Node 24 that bin/kvbench.js re-runs itself with, under an older Node). A SIGTERM
// sent to npm's pid alone (`kill PID`, a supervisor that signals the process it started) ends npm,
// which passes it to the shell, whose default action ends the shell without passing it on: kvbench
// ran on, orphaned, keeping its port and its suite, with nothing left to stop it but its own pid.
// So a kvbench that npm started watches the processes between it and npm's shell, and when they go
// it stops as on SIGTERM (a running trial is stopped and kept, serve closes). A kvbench detached
// from them on purpose (setsid, a session of its own) is left alone, as is one npm did not start.
import { readStat } from '../util/process-identity.ts';
import { stopSignalReceived } from './stop-signals.ts';

/** How often the starter is looked for; a stop a second late is no loss, and the look is one small read. */
export const STARTER_POLL_MS = 1000;

/**
 * Set by bin/kvbench.js's re-exec wrapper in the environment of the Node 24 it runs: the wrapper is
 * then this process's parent, and the one whose parent to watch as well.
 */
export const REEXEC_WRAPPER_ENV = 'KVBENCH_REEXEC_WRAPPER';

/** A process and the parent it had when kvbench started; a different parent (or none) means that parent went. */
export interface ParentLink {
  pid: number;
  parentPid: number;
}

type ReadStat = (pid: number) => { parentPid: number; sessionId: number } | null;

/**
 * The parent links to watch, or null for none: kvbench was not started by npm (npm sets
 * npm_lifecycle_event for each script it runs, `npx` too), or it is detached from npm's shell (a
 * session of its own: setsid), or already orphaned. `self` is this process and its parent; under the
 * re-exec wrapper the wrapper's own link is watched too, as the wrapper outlives its parent.
 */
export function starterLinks(env: NodeJS.ProcessEnv, self: ParentLink, read: ReadStat = readStat): ParentLink[] | null {
  if (env.npm_lifecycle_event === undefined) return null;
  const links: ParentLink[] = [self];
  if (env[REEXEC_WRAPPER_ENV] !== undefined) {
    const wrapper = read(self.parentPid);
    // Without /proc (not Linux) the wrapper's parent cannot be read: only the wrapper itself is watched.
    if (wrapper !== null) links.push({ pid: self.parentPid, parentPid: wrapper.parentPid });
  }
  const top = links[links.length - 1];
  if (top.parentPid <= 1) return null;
  const own = read(top.pid);
  const starter = read(top.parentPid);
  if (own !== null && starter !== null && own.sessionId !== starter.sessionId) return null;
  return links;
}

/** Whether one of the watched processes has lost the parent it started with (or is gone itself). */
export function starterGone(links: readonly ParentLink[], ownParentPid: number, read: ReadStat = readStat): boolean {
  return links.some((l, i) => (i === 0 ? ownParentPid : read(l.pid)?.parentPid) !== l.parentPid);
}

/**
 * Called once at start (bin/kvbench.js): when npm started kvbench, its going ends kvbench as a
 * SIGTERM does, sent to itself, unless a stop signal came first (npm's going then follows that stop,
 * and a SIGTERM now would abandon it). Never keeps the process alive by itself.
 */
export function stopWhenStarterGoes(proc: NodeJS.Process = process): void {
  const links = starterLinks(proc.env, { pid: proc.pid, parentPid: proc.ppid });
  delete proc.env[REEXEC_WRAPPER_ENV]; // not for the processes kvbench starts
  if (links === null) return;
  const timer = setInterval(() => {
    if (!starterGone(links, proc.ppid)) return;
    clearInterval(timer);
    if (stopSignalReceived()) return;
    proc.stderr.write('kvbench: npm, which started it (npx, npm run), has gone: stopping as on SIGTERM\n');
    proc.kill(proc.pid, 'SIGTERM');
  }, STARTER_POLL_MS);
  timer.unref();
}
