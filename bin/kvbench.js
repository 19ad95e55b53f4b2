#!/usr/bin/env node
// Entry point of the `kvbench` command. kvbench runs on Node 24 (its TypeScript sources run through
// Node's built-in type stripping). When started by an older Node (e.g. the system's), re-run the
// same command with the Node 24 that `npm install` put in node_modules.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  const local = join(here, '..', 'node_modules', 'node', 'bin', 'node');
  if (!existsSync(local)) {
    process.stderr.write(`kvbench needs Node 24 or later (this is ${process.version}); run \`npm install\` in ${join(here, '..')} first.\n`);
    process.exit(1);
  }
  // The stop signals are passed on, so the real kvbench is never orphaned and a signal sent to this
  // process alone (`kill -INT`, `timeout -s INT`, a scheduler's SIGTERM) stops it. One sent to the whole
  // process group (a terminal's Ctrl-C, a dropped SSH session's SIGHUP, systemd's stop) reaches the child
  // twice, directly and passed on: it takes the copy as the same delivery (a repeat within a second
  // never abandons its graceful stop, a repeated SIGHUP never does; src-main/cli/stop-signals.ts).
  // The child is told it runs under this wrapper: started by npm, it watches the wrapper's parent too
  // (src-main/cli/starter-gone.ts), as this wrapper outlives a parent that is gone.
  const env = { ...process.env, KVBENCH_REEXEC_WRAPPER: '1' };
  const child = spawn(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit', env });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  // A child ended by a signal: the status a shell reports for it (128 + the signal's number).
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
} else {
  // Node's compile cache, for this process and the ones it starts (src-main/util/compile-cache.ts):
  // imported only here, as this file also runs on the older Node above.
  const { enableCompileCache } = await import('../src-main/util/compile-cache.ts');
  enableCompileCache();
  const argv = process.argv.slice(2);
  try {
    const { main } = await import('../src-main/cli/main.ts');
    // `kvbench report | head`: the reader going away ends kvbench quietly, for every command; output
    // that cannot be written (a full disk) is one line of error, never a stack trace.
    const { endWhenOutputGoes } = await import('../src-main/cli/closed-output.ts');
    endWhenOutputGoes();
    // `npx kvbench serve` killed by its pid: npm goes, and kvbench with it, as on SIGTERM.
    const { stopWhenStarterGoes } = await import('../src-main/cli/starter-gone.ts');
    stopWhenStarterGoes();
    process.exitCode = await main(argv);
  } catch (err) {
    // Every command answers bad input with a message of its own; what reaches here is a kvbench bug.
    // The user gets one line, not a stack of kvbench's internals, unless they asked for the detail
    // (kvbench run's --log-level DEBUG).
    const debug = argv.some((a, i) => a === '--log-level=DEBUG' || (a === '--log-level' && argv[i + 1] === 'DEBUG'));
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`kvbench: internal error: ${message}\n${debug && err instanceof Error && err.stack ? `${err.stack}\n` : ''}`);
    process.exitCode = 1;
  }
}
