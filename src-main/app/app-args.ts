// The desktop app's own command-line option, read where it starts: from `kvbench app --db PATH` (which
// hands its arguments to Electron), `npm run app -- --db PATH` and a packaged app's command line alike.
// Plain TypeScript without electron, so that it is tested without one.

/** `--db PATH` or `--db=PATH` (the last one given wins), or null; why not, when the flag is there but unusable. */
export type DatabaseFlag = { ok: true; databasePath: string | null } | { ok: false; error: string };

/**
 * The database `--db` names among the app's arguments (Electron's and Chromium's own switches pass by).
 * With it the app opens that database, over one chosen in Settings and over `KVBENCH_DB`, as
 * `kvbench serve --db` does; a relative path is the caller's to resolve against the launch directory.
 */
export function databaseFlag(argv: readonly string[]): DatabaseFlag {
  let databasePath: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    let value: string | undefined;
    if (arg === '--db') {
      value = argv[++i];
      if (value === undefined) return { ok: false, error: '--db needs a value: the database file' };
    } else if (arg.startsWith('--db=')) {
      value = arg.slice('--db='.length);
    } else {
      continue;
    }
    if (value === '') return { ok: false, error: '--db must not be empty' };
    databasePath = value;
  }
  return { ok: true, databasePath };
}
