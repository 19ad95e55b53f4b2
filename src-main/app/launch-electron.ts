// `kvbench app`: starts the desktop app, i.e. the Electron binary on this package (package.json
// "main" is src-main/app/entry.ts). Plain Node: it never imports electron's APIs, only asks the
// electron package where its binary is. That question downloads the binary from GitHub the first
// time (the electron package has no install script); where GitHub cannot be reached it stays absent
// and this says what to do.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { APP_ROOT, PRELOAD_FILE, RENDERER_DIR } from '../server/paths.ts';
import { databaseFlag } from './app-args.ts';

export const APP_USAGE = `Usage: kvbench app [--db PATH] [--log-level DEBUG] [electron flags]

Starts the kvbench desktop app (Electron).

  --db PATH          the database (default: the one chosen in Settings, else $KVBENCH_DB, else the
                     user data directory's kvbench.db); not kept in Settings
  --log-level DEBUG  a failed start prints where it failed (the stack), not only why

It needs Electron's binary, which the electron package downloads from GitHub the first time the app
starts (ahead of time: node node_modules/electron/install.js), and the built front end (npm run build). npm run app does both steps.
On a machine without a display, or as root (Chromium's sandbox does not run as root, and kvbench
does not turn it off), use kvbench serve instead.
`;

/** The Electron binary's path, or why there is none. */
export function electronBinary(): { path: string } | { error: string } {
  try {
    const require = createRequire(import.meta.url);
    const p = require('electron') as unknown;
    if (typeof p === 'string' && fs.existsSync(p)) return { path: p };
    return { error: 'the electron package has no binary' };
  } catch (err) {
    return { error: (err as Error).message.split('\n')[0] };
  }
}

/**
 * Why the app cannot start for this user, if it cannot. Chromium refuses to run as root unless its
 * sandbox is turned off, and exits with a message that does not say what to do instead; kvbench does
 * not turn the sandbox off for anyone (the renderer's isolation rests on it), so root is told first.
 * A root user who passes --no-sandbox themselves has made that choice.
 */
export function rootRefusal(argv: readonly string[], uid: number | undefined): string | null {
  if (uid !== 0 || argv.includes('--no-sandbox')) return null;
  return (
    'kvbench app: Electron (Chromium) does not start as root with its sandbox on, and kvbench does not turn the sandbox off.\n' +
    '  Run the app as a normal user, or run `kvbench serve` (as any user) and open the printed URL in a browser.\n'
  );
}

/** `opts.uid`: the user to judge (tests); this process's by default, none where there are no uids. */
export async function appCommand(argv: string[], opts: { uid?: number } = {}): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(APP_USAGE);
    return 0;
  }
  const db = databaseFlag(argv);
  if (!db.ok) {
    process.stderr.write(`kvbench app: ${db.error}\n\n${APP_USAGE}`);
    return 1;
  }
  const refusal = rootRefusal(argv, 'uid' in opts ? opts.uid : process.getuid?.());
  if (refusal) {
    process.stderr.write(refusal);
    return 1;
  }
  const missing = [path.join(RENDERER_DIR, 'index.html'), PRELOAD_FILE].filter((f) => !fs.existsSync(f));
  if (missing.length > 0) {
    process.stderr.write(`kvbench app: the front end is not built (missing ${missing.join(', ')}): run npm run build first\n`);
    return 1;
  }
  const bin = electronBinary();
  if ('error' in bin) {
    process.stderr.write(
      `kvbench app: Electron's binary is not installed (${bin.error}).\n` +
        '  It is downloaded from GitHub: where GitHub can be reached, `node node_modules/electron/install.js` fetches it (this command tries too).\n' +
        '  Without a display or Electron: run `kvbench serve` and open the printed URL in a browser.\n',
    );
    return 1;
  }
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE; // would make the binary a plain Node
  const child = spawn(bin.path, [APP_ROOT, ...argv], { stdio: 'inherit', env });
  return await new Promise<number>((resolve) => {
    child.once('error', (err) => {
      process.stderr.write(`kvbench app: could not start Electron: ${err.message}\n`);
      resolve(1);
    });
    child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
