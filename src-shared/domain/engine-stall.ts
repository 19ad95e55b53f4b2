// A measured window the engine itself spoiled: its process was stopped (SIGSTOP, a suspended VM),
// swapped out, starved of CPU or blocked in the kernel for seconds. The window then closes late and
// every rate is the device's work divided by time in which nothing was asked of the device, so such
// a window is no measurement of the device, however complete it looks.

/**
 * A pause this long is a stall, never load. Measured on a 2-core machine shared with other test runs
 * (load average 5 to 29, up to three runs at once, 4 to 1000 users, --verify, 1 MiB chunks at depth
 * 128): event-loop lag peaked at 1.4 s and windows closed at most 45 ms late. The only run past this
 * threshold had its event loop blocked for 12.9 s.
 */
export const ENGINE_STALL_NS = 5e9;

/**
 * A long window absorbs a short pause: in a 24 h run a 10 s VM live migration is 0.01 % of the
 * window, which no rate notices, and marking the whole trial partial would cost a day's re-run.
 * A stall must be at least this share of the planned window too.
 */
export const ENGINE_STALL_SHARE = 0.01;

/** The shortest pause that counts as a stall in a window planned to last `plannedNs`. */
export function engineStallThresholdNs(plannedNs: number): number {
  return Math.max(ENGINE_STALL_NS, ENGINE_STALL_SHARE * plannedNs);
}

/** How every stall reason starts: a reader can tell a stored reason said the engine stalled. */
export const ENGINE_STALL_REASON_START = 'the engine stalled';

function seconds(ns: number): string {
  return `${(ns / 1e9).toFixed(1)} s`;
}

/**
 * Why a measured window is not the device's, or null when it is: the window closed at least
 * {@link engineStallThresholdNs} (5 s, or 1 % of a window over 500 s) after its planned end, or the
 * engine's event loop was blocked that long at once inside it. `lagMaxNs` is null where it is not known (a stored trial keeps only its P99).
 */
export function engineStallReason(w: { plannedNs: number; elapsedNs: number; lagMaxNs: number | null }): string | null {
  const overrunNs = w.elapsedNs - w.plannedNs;
  const thresholdNs = engineStallThresholdNs(w.plannedNs);
  const what: string[] = [];
  if (w.lagMaxNs !== null && w.lagMaxNs >= thresholdNs) what.push(`its event loop was blocked for ${seconds(w.lagMaxNs)} at once`);
  if (overrunNs >= thresholdNs) what.push(`the measured window closed ${seconds(overrunNs)} after its planned ${seconds(w.plannedNs)}`);
  if (what.length === 0) return null;
  return (
    `${ENGINE_STALL_REASON_START} (${what.join(', and ')}): its process was stopped, swapped out, starved of CPU or ` +
    `blocked in the kernel, so the window's rates are not the device's`
  );
}
