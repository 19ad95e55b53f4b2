// Where kvbench keeps its database by default: the user's data directory (XDG on Linux).
// `--db PATH` or KVBENCH_DB overrides it.
import os from 'node:os';
import path from 'node:path';

export const DATABASE_FILE_NAME = 'kvbench.db';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home = os.homedir()): string {
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'kvbench');
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'kvbench');
  // XDG Base Directory: a relative XDG_DATA_HOME is invalid and must be ignored.
  const xdg = env.XDG_DATA_HOME;
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.local', 'share'), 'kvbench');
}

/** The database path: the explicit one, else KVBENCH_DB, else <data dir>/kvbench.db. */
export function resolveDatabasePath(explicit?: string | null, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit) return path.resolve(explicit);
  if (env.KVBENCH_DB) return path.resolve(env.KVBENCH_DB);
  return path.join(defaultDataDir(env), DATABASE_FILE_NAME);
}
