// The signals that stop a long kvbench command (run, suite, serve) gracefully, keeping what it has:
// Ctrl-C, SIGTERM (a batch system's time limit, a container stop) and SIGHUP. SIGHUP is the one a
// headless suite or server started over SSH meets: the session drops, and the shell hangs up every
// job. Its default action would end the process at once and lose the running trial.
import os from 'node:os';

export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The status a shell reports for a process the signal ended (128 + its number: 130, 143, 129), which kvbench exits with after stopping on it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + os.constants.signals[signal];
}

/**
 * Whether this signal, arriving while a graceful stop is under way, abandons it (quit at once). A
 * second Ctrl-C or SIGTERM does; a SIGHUP never does: a hang-up arrives more than once without anyone
 * asking twice (the shell signals the whole process group, so bin/kvbench.js's re-exec wrapper passes
 * on a copy of its own; a write to the gone terminal reports it again), and nobody is left to ask.
 */
export function abandonsStop(signal: NodeJS.Signals): boolean {
  return signal !== 'SIGHUP';
}
