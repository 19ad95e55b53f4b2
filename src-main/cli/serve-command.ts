// `kvbench serve`: the desktop app's services and built renderer in a browser, for headless lab
// servers. Loopback only unless --allow-remote; a random token is required for every request (the
// printed URL carries it once; the page keeps it in session storage and drops it from the address).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createBackend } from '../server/backend.ts';
import { isLoopbackHost, isWildcardHost, startHttpServer, urlHostOf } from '../server/http-server.ts';
import { RENDERER_DIR } from '../server/paths.ts';
import { defaultSettings, defaultSettingsFile } from '../server/settings.ts';
import { emptyValueErrors, intFlag, parseCommandArgs } from './command-args.ts';
import { signalExitCode, watchStopSignals } from './stop-signals.ts';
import { removeSalvageScratchNow } from '../store/salvage-thread.ts';

export const DEFAULT_SERVE_PORT = 8642;

export const SERVE_USAGE = `Usage: kvbench serve [--port N] [--host ADDR] [--db PATH] [--settings FILE]

Serves the kvbench app (the guided suite, live progress, reports, history, compare, export) to a
browser: the same services and database as the CLI and the desktop app. For a headless server,
forward the port over SSH and open the printed URL on your own machine:

  ssh -L ${DEFAULT_SERVE_PORT}:127.0.0.1:${DEFAULT_SERVE_PORT} you@server    then open the URL kvbench serve printed

  --port N          TCP port (default ${DEFAULT_SERVE_PORT}; 0 = any free port)
  --host ADDR       address to listen on (default 127.0.0.1, loopback only)
  --allow-remote    allow a non-loopback --host. Traffic is plain HTTP: anyone on the path sees
                    the token. Prefer an SSH tunnel.
  --token HEX       use this token instead of a random one; at least 32 hex digits. Every user of
                    this machine can read a command line (ps): prefer KVBENCH_SERVE_TOKEN=HEX in
                    the environment, which only you can read
  --db PATH         the database (default: the settings' database, else $KVBENCH_DB, else the user
                    data directory)
  --settings FILE   the settings file (default: <user data directory>/settings.json)
  --renderer DIR    the built renderer (default: out/renderer; build it with npm run build:renderer)

Ctrl-C, SIGTERM or a hang-up (SIGHUP: the SSH session dropped) stops a running suite gracefully (the
current trial's partial results are kept) and exits: 130, 143 or 129.
`;

/** The SSH tunnel to the address serve listens on (127.0.0.2 and ::1 are loopback too, and 127.0.0.1 is then no tunnel to it). */
export function sshTunnelHint(host: string, port: number): string {
  return `ssh -L ${port}:${urlHostOf(host)}:${port}`;
}

export async function serveCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('serve', SERVE_USAGE, {
    args: argv,
    options: {
      port: { type: 'string', default: String(DEFAULT_SERVE_PORT) },
      host: { type: 'string', default: '127.0.0.1' },
      'allow-remote': { type: 'boolean', default: false },
      token: { type: 'string' },
      db: { type: 'string' },
      settings: { type: 'string' },
      renderer: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  const errors = emptyValueErrors(a, ['db', 'settings', 'renderer']);
  const port = intFlag('--port', a.port, errors, { min: 0, max: 65535 }) ?? 0;
  if (!isLoopbackHost(a.host) && !a['allow-remote']) errors.push(`--host ${a.host} is not a loopback address: add --allow-remote to listen there (plain HTTP; prefer an SSH tunnel)`);
  const token = a.token ?? process.env.KVBENCH_SERVE_TOKEN ?? randomBytes(24).toString('hex');
  // Named where it came from: a token from the environment is no --token the user typed.
  const tokenSource = a.token !== undefined ? '--token' : 'KVBENCH_SERVE_TOKEN';
  if (!/^[0-9a-f]{32,}$/i.test(token)) errors.push(`${tokenSource} must be at least 32 hexadecimal digits`);
  const rendererDir = path.resolve(a.renderer ?? RENDERER_DIR);
  if (a.renderer?.trim() !== '' && !fs.existsSync(path.join(rendererDir, 'index.html'))) errors.push(`the renderer is not built (${rendererDir} has no index.html): run npm run build:renderer first`);
  if (errors.length > 0) {
    process.stderr.write(`kvbench serve: ${errors.join('\n  ')}\n`);
    return 1;
  }

  const log = (level: string, message: string): void => {
    process.stderr.write(`kvbench serve: ${level === 'info' ? '' : `${level}: `}${message}\n`);
  };
  // The first open serves nothing until it ends (minutes, reading a large damaged database): a stop
  // signal meanwhile ends the process at once, removing the salvage's scratch copy of the database's
  // rows from the temporary folder first (nothing else of the open is left to clean up).
  const opening = watchStopSignals({
    onStop: (signal) => {
      removeSalvageScratchNow();
      log('info', `${signal}: stopped while opening the database`);
      process.exit(signalExitCode(signal));
    },
  });
  let backend: Awaited<ReturnType<typeof createBackend>>;
  try {
    backend = await createBackend({
      mode: 'browser',
      settingsFile: path.resolve(a.settings ?? defaultSettingsFile()),
      defaults: defaultSettings(),
      databasePath: a.db ?? null,
      log,
    });
  } finally {
    opening.dispose();
  }
  let server;
  try {
    server = await startHttpServer({ backend, host: a.host, port, token, rendererDir, log });
  } catch (err) {
    await backend.close();
    const e = err as NodeJS.ErrnoException;
    process.stderr.write(`kvbench serve: cannot listen on ${a.host}:${port}: ${e.code === 'EADDRINUSE' ? 'the port is in use (choose another with --port, or --port 0)' : e.message}\n`);
    return 1;
  }
  process.stdout.write(`kvbench serve: open ${server.url}\n`);
  if (a.token !== undefined) log('warn', '--token is on the command line, which every user of this machine can read (ps, /proc/PID/cmdline), and with it drive this server: give the token in KVBENCH_SERVE_TOKEN instead');
  log('info', `database ${backend.databasePath}`);
  if (!isLoopbackHost(a.host)) log('warn', 'listening beyond loopback over plain HTTP: the token is visible to anyone on the network path');
  if (isWildcardHost(a.host)) log('info', `listening on every address of this machine: where the name ${urlHostOf(a.host)} does not resolve, open the URL with this server's address in its place`);
  if (isLoopbackHost(a.host)) log('info', `headless? ${sshTunnelHint(a.host, server.port)} <this server>, then open the URL above on your machine`);

  return await new Promise<number>((resolve) => {
    const signals = watchStopSignals({
      onStop: (signal) => {
        if (backend.suiteState !== 'idle') log('info', `${signal}: stopping the running suite (partial results are kept) …`);
        void (async () => {
          await server.close();
          await backend.close();
          signals.dispose();
          resolve(signalExitCode(signal));
        })();
      },
      onAbandon: (signal) => process.exit(signalExitCode(signal)),
    });
  });
}
