// Ends this engine process once its host is gone, from a thread of its own. The engine's own
// 'disconnect' handler needs the event loop, and the event loop is exactly what a wedged engine no
// longer runs: an engine whose host was SIGKILLed while its main thread spun would otherwise keep
// one core busy, and keep writing to the target, until someone noticed.
import { Worker } from 'node:worker_threads';

const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
let goneSinceMs = null;
setInterval(() => {
  // Reparented: the process that started this engine has exited.
  if (process.ppid === workerData.parentPid) return;
  goneSinceMs ??= Date.now();
  if (Date.now() - goneSinceMs >= workerData.graceMs) process.kill(process.pid, 'SIGKILL');
}, workerData.intervalMs);
`;

export interface OrphanWatchdogOptions {
  /** How often the parent is checked. */
  intervalMs: number;
  /** How long the main thread may still clean up after the parent is gone. */
  graceMs: number;
}

/** Starts the watchdog thread; it never keeps the process alive by itself. */
export function startOrphanWatchdog(opts: OrphanWatchdogOptions): Worker {
  const worker = new Worker(WATCHDOG_SOURCE, {
    eval: true,
    workerData: { parentPid: process.ppid, intervalMs: opts.intervalMs, graceMs: opts.graceMs },
    // A watchdog needs almost nothing; keep its heap small.
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
  });
  worker.unref();
  return worker;
}
