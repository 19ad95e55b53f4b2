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
 * A repeat of a stop signal this soon after the first is the same request delivered twice, not a
 * second request: a stop sent to the whole process group (systemd's default, `kill -TERM -PGID`, a
 * dropped SSH session) reaches bin/kvbench.js's re-exec wrapper too, which passes a copy on. A person
 * pressing Ctrl-C again takes longer than this.
 */
export const REPEAT_IS_SAME_DELIVERY_MS = 1000;

/**
 * Whether this signal, arriving while a graceful stop is under way (begun at `stopStartedAtMs`,
 * Date.now()'s clock), abandons it (quit at once). A second Ctrl-C or SIGTERM does, unless it comes
 * within {@link REPEAT_IS_SAME_DELIVERY_MS} of the first; a SIGHUP never does: a hang-up arrives more
 * than once without anyone asking twice (a write to the gone terminal reports it again too), and
 * nobody is left to ask. Without `stopStartedAtMs`: whether a later repeat would.
 */
export function abandonsStop(signal: NodeJS.Signals, stopStartedAtMs?: number, nowMs = Date.now()): boolean {
  if (signal === 'SIGHUP') return false;
  return stopStartedAtMs === undefined || nowMs - stopStartedAtMs >= REPEAT_IS_SAME_DELIVERY_MS;
}

/** Set once any watch has had its first stop signal: this process is stopping. */
let stopBegun = false;

/** Whether a stop signal has begun a graceful stop in this process (a later one may abandon it; see {@link abandonsStop}). */
export function stopSignalReceived(): boolean {
  return stopBegun;
}

export interface StopSignalWatch {
  /** The signal that began the stop; null while none has come. */
  readonly signal: StopSignal | null;
  /** Stops listening. */
  dispose(): void;
}

/**
 * Listens for the stop signals on behalf of a command: `onStop` for the first, which begins the
 * graceful stop; `onAbandon` for a repeat that abandons it ({@link abandonsStop}); any other repeat
 * is the same stop delivered again and is ignored.
 */
export function watchStopSignals(h: { onStop(signal: StopSignal): void; onAbandon?(signal: StopSignal): void }): StopSignalWatch {
  let first: StopSignal | null = null;
  let startedAtMs = 0;
  const listener = (signal: StopSignal): void => {
    if (first === null) {
      first = signal;
      startedAtMs = Date.now();
      stopBegun = true;
      h.onStop(signal);
    } else if (abandonsStop(signal, startedAtMs)) {
      h.onAbandon?.(signal);
    }
  };
  for (const s of STOP_SIGNALS) process.on(s, listener);
  return {
    get signal() {
      return first;
    },
    dispose: () => {
      for (const s of STOP_SIGNALS) process.off(s, listener);
    },
  };
}
