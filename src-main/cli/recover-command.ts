// `kvbench recover`: a damaged database's readable rows written to a new, healthy database file
// (store/recover.ts), with what could not be read said, and recorded in the new file.
import fs from 'node:fs';
import path from 'node:path';
import { resolveDatabasePath } from '../store/data-dir.ts';
import { recoveryComplete, type Recovery } from '../store/recover.ts';
import { companionsOf, releaseCreatedCompanions } from '../store/open-store.ts';
import { recoverDatabaseOffThread } from '../store/salvage-thread.ts';
import { signalExitCode, watchStopSignals } from './stop-signals.ts';
import { emptyValueErrors, parseCommandArgs } from './command-args.ts';
import { EXIT_PARTIAL } from './run-command.ts';
import { jsonText, printable } from '../../src-shared/domain/label-text.ts';

export const RECOVER_USAGE = `Usage: kvbench recover [--db DAMAGED] --out NEW.db [--json]

Reads a damaged kvbench database (SQLite's quick_check fails: a crash, a bad sector, a copy cut
short) as far as it can be read, as history, report and export do, and writes what it holds to a
new database file that suites and imports can go on with. The damaged file is only read.

The new file is written under a temporary name beside NEW.db, readable by its owner only, checked
(SQLite's integrity_check, then opened as kvbench opens any database), and only then named NEW.db;
an existing file is never replaced. It records where it came from and what could not be read, which
history, report and export on it say. Prints what was read and each part that could not be.

A database that is not damaged is refused: copy it with sqlite3 DB ".backup NEW.db", or cp while
no kvbench writes to it.

  --db PATH     the damaged database (default: $KVBENCH_DB, else the user data directory)
  --out PATH    the new database to write; must not exist, in a folder that does
  --json        what was recovered as JSON on stdout

Exit codes: 0 everything was read; 3 parts could not be read (each is said); 1 nothing was
written (not damaged, nothing readable, the new file exists or could not be written).
`;

/** What a recovery read and lost, as the command prints it. */
function recoveryText(r: Recovery): string {
  const lines = [
    `kvbench recover: ${r.from} is damaged (${r.damage}).`,
    `Wrote ${r.file}: ${r.trials} trial(s) in ${r.suites} suite(s) of ${r.systems} system(s), ${r.endpointRuns} endpoint run(s).`,
    "Checked: SQLite's integrity_check is ok, and it opens as a kvbench database.",
  ];
  if (r.lost.length === 0) {
    lines.push('Everything stored could be read: nothing was lost (the damage lay in an index or in unused pages).');
  } else {
    lines.push(`Could not be read (${r.lost.length}):`);
    for (const note of r.lost) lines.push(`  - ${note}`);
  }
  lines.push(
    `${r.file} records this: history, report and export on it say that it was recovered, and what was lost.`,
    `${r.from} is untouched: keep it until the new database has what you need, then move it away.`,
    `Go on with: kvbench history --db ${r.file} (or export KVBENCH_DB=${r.file}; in the app, Settings → Database).`,
  );
  return `${lines.join('\n')}\n`;
}

export async function recoverCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('recover', RECOVER_USAGE, {
    args: argv,
    options: {
      db: { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  // `--db ''` (a script's unset variable) would be the default database, as for every other command;
  // `--out ''` is given, so not "required", but no file.
  const empty = emptyValueErrors(a, ['db', 'out']);
  if (empty.length > 0) {
    process.stderr.write(`kvbench recover: ${empty.length === 1 ? empty[0] : `invalid arguments:\n  ${empty.join('\n  ')}`}\n`);
    return 1;
  }
  if (a.out === undefined) {
    process.stderr.write(`kvbench recover: --out is required: the new database to write\n\n${RECOVER_USAGE}`);
    return 1;
  }
  const from = resolveDatabasePath(a.db);
  const out = path.resolve(a.out);
  // On a worker thread, so that Ctrl-C, SIGTERM or SIGHUP is heard while it works (minutes on a large
  // database): the worker is stopped, its temporary file removed (recoverDatabaseOffThread), and the
  // -wal and -shm its read of the damaged file made beside it released, leaving that folder as it was.
  const companionsBefore = companionsOf(from);
  const stop = new AbortController();
  const signals = watchStopSignals({
    onStop: (signal) => stop.abort(signal),
    onAbandon: (signal) => process.exit(signalExitCode(signal)),
  });
  let r: Recovery;
  try {
    r = await recoverDatabaseOffThread(from, out, { signal: stop.signal });
  } catch (err) {
    if (signals.signal !== null) {
      releaseCreatedCompanions(from, companionsBefore);
      const written = fs.existsSync(out); // named only once written whole and checked
      process.stderr.write(
        `kvbench recover: interrupted (${signals.signal}): ${written ? `${printable(out)} had been written and checked before it stopped: it is whole` : `nothing was written to ${printable(out)}`}, and ${printable(from)} was only read\n`,
      );
      return signalExitCode(signals.signal);
    }
    process.stderr.write(`kvbench recover: ${(err as Error).message}\n`);
    return 1;
  } finally {
    signals.dispose();
  }
  process.stdout.write(a.json ? `${jsonText(r, 2)}\n` : recoveryText(r));
  return recoveryComplete(r) ? 0 : EXIT_PARTIAL;
}
