// Cleanup that runs however a bench ends: normally, on an exception, or on Ctrl-C / SIGTERM.
// Steps are synchronous (execFileSync, fs.*Sync) so they also run from an 'exit' handler, and they
// run last-registered first (unmount before detaching the loop device before removing the tmpfs).

type Step = { what: string; run: () => void };
const steps: Step[] = [];
let installed = false;

function runAll(): void {
  while (steps.length > 0) {
    const step = steps.pop()!;
    try {
      step.run();
    } catch (err) {
      process.stderr.write(`cleanup: ${step.what} failed: ${(err as Error).message.split('\n')[0]}\n`);
    }
  }
}

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', runAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\n${signal}: cleaning up\n`);
      runAll();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

function register(what: string, run: () => void): () => boolean {
  install();
  const step = { what, run };
  steps.push(step);
  return () => {
    const i = steps.indexOf(step);
    if (i >= 0) steps.splice(i, 1);
    return i >= 0;
  };
}

/** Registers a cleanup step; returns a function that runs it now (and unregisters it). */
export function onCleanup(what: string, run: () => void): () => void {
  const remove = register(what, run);
  return () => {
    if (remove()) run();
  };
}

/**
 * Registers a step for the time something runs (a measured child process): it runs only if the
 * bench is interrupted meanwhile. Returns the function that unregisters it, without running it.
 */
export function whileRunning(what: string, run: () => void): () => void {
  const remove = register(what, run);
  return () => void remove();
}

/** Runs every registered step now (also done at exit). */
export function cleanupAll(): void {
  runAll();
}
