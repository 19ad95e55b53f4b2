// The desktop app's own command-line options (--db, --log-level), read where it starts: from `kvbench app --db PATH` (which
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

/**
 * Whether the app's command line asks for debugging detail: `--log-level DEBUG` (or `=DEBUG`), the
 * flag and level `kvbench run` takes; the last one given wins.
 */
export function debugRequested(argv: readonly string[]): boolean {
  let level: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--log-level') level = argv[++i];
    else if (argv[i].startsWith('--log-level=')) level = argv[i].slice('--log-level='.length);
  }
  return level === 'DEBUG';
}

/**
 * What the terminal shows when the app could not start. A user is shown what went wrong, not a stack
 * of kvbench's internals; `--log-level DEBUG` adds where (for a bug report), and the line says so.
 */
export function startFailureText(err: unknown, argv: readonly string[]): string {
  const e = err instanceof Error ? err : new Error(String(err));
  const detail = debugRequested(argv) && e.stack ? e.stack : `${e.message} (start it with --log-level DEBUG to see where)`;
  return `kvbench app: could not start: ${detail}\n`;
}
