// Runs synchronous cleanups when the process ends without the normal close: process.exit(), an
// uncaught exception (Node emits 'exit' for both), or a termination signal nobody else handles.
//
// The NVIDIA kernel driver reclaims a dead process's device memory in any case; this exists so
// that kvbench gives its memory back itself wherever it still runs code, which also keeps
// long-lived hosts (an engine embedded in another process, the tests) from leaking between runs.
//
// Signals: a listener that only cleaned up would swallow the signal's default action (terminate).
// So the listener acts only when it is the sole listener: it runs the cleanups, removes itself
// and sends the signal again, which then terminates as it would have. Where the program has its
// own handler (the engine process aborts the run on the first SIGINT/SIGTERM and exits on the
// second), that handler decides, and the 'exit' hook covers the exit.

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

const cleanups = new Set<() => void>();

function runAll(): void {
  const all = [...cleanups];
  cleanups.clear();
  uninstall();
  for (const c of all) {
    try {
      c();
    } catch {
      // Exit paths have nowhere to report to; the kernel driver frees what is left.
    }
  }
}

function onSignal(signal: NodeJS.Signals): void {
  if (process.listenerCount(signal) > 1) return;
  runAll();
  process.kill(process.pid, signal);
}

function install(): void {
  process.on('exit', runAll);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function uninstall(): void {
  process.off('exit', runAll);
  for (const s of SIGNALS) process.off(s, onSignal);
}

/**
 * Registers `cleanup` (synchronous, since 'exit' listeners cannot wait; runs at most once) and
 * returns a function that unregisters it, for the normal close path.
 */
export function onProcessExit(cleanup: () => void): () => void {
  let ran = false;
  const once = (): void => {
    if (ran) return;
    ran = true;
    cleanup();
  };
  if (cleanups.size === 0) install();
  cleanups.add(once);
  return () => {
    ran = true;
    if (cleanups.delete(once) && cleanups.size === 0) uninstall();
  };
}

/** Cleanups registered now (for tests). */
export function pendingExitCleanups(): number {
  return cleanups.size;
}
