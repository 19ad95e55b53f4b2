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
  // Ctrl-C reaches the child directly (same process group), so SIGINT is only ignored here; signals sent
  // to this process alone (SIGTERM, SIGHUP) are passed on, so the real kvbench is never orphaned. A
  // hang-up (a dropped SSH session) reaches the whole group, so the child gets two SIGHUPs: it takes
  // them as one (a repeated SIGHUP never abandons its graceful stop, nor does a SIGTERM repeated within
  // a second: a stop sent to the whole group, as systemd sends it, reaches the child twice too).
  const child = spawn(local, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.on('SIGINT', () => {});
  for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  // A child ended by a signal: the status a shell reports for it (128 + the signal's number).
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (constants.signals[signal] ?? 0)));
} else {
  const { main } = await import('../src-main/cli/main.ts');
  // `kvbench report | head`: the reader going away ends kvbench quietly, for every command.
  const { endQuietlyWhenOutputCloses } = await import('../src-main/cli/closed-output.ts');
  endQuietlyWhenOutputCloses();
  process.exitCode = await main(process.argv.slice(2));
}
