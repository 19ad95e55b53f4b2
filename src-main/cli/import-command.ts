// `kvbench import`: results JSON files of the reference benchmark (or of kvbench) into the store.
import { printable, printableLines, shownInput } from '../../src-shared/domain/label-text.ts';
import { isScenarioId } from '../../src-shared/domain/scenarios.ts';
import { explainWriteFailure } from '../store/disk-full.ts';
import { importResultsFiles, parseImportRunFlags } from '../store/import-results.ts';
import { cautionsOf } from '../export/report-model.ts';
import { withCommandStore } from './command-store.ts';
import { emptyValueErrors, labelFlagErrors, parseCommandArgs } from './command-args.ts';

export const IMPORT_USAGE = `Usage: kvbench import FILE... --system LABEL [--run-flags "FLAGS"] [--scenario ID] [--drive LABEL]

Stores results JSON files written by the MLPerf KV-cache reference benchmark (kv-cache.py, any
version) or by kvbench as trials of the named system, so they appear in history, reports and
system comparisons. A kvbench merge result (the ranks of a multi-host run) is one trial, filed under
the scenario multi-host; a single rank's file is refused. A file whose results are already stored (imported before, or stored by the
suite that ran it) is not imported again, and says which trial holds it.

  --system LABEL       the system the files come from (created if new)
  --run-flags "FLAGS"  the kv-cache.py / kvbench run flags the files were produced with, e.g.
                       "--model llama3.1-8b --num-users 200 --cpu-mem-gb 0 --duration 300".
                       The reference's files do not record them; without them the trials are kept
                       but match no configuration in comparisons. kvbench's own files record
                       theirs: flags may add what such a file leaves out, and a flag that
                       contradicts it refuses the file.
  --scenario ID        file them under a scenario (e.g. storage-only); default 'imported'
                       ('multi-host' for a kvbench merge result)
  --drive LABEL        the drive they ran on, for drive comparisons
  --label TEXT         what these trials measured (e.g. "fw 2.1"): history and export filter by it
                       (--label), report --compare A B --labels compares two; suites with one
                       label pool
  --db PATH            the database (default: $KVBENCH_DB, else the user data directory)
`;

/** `--run-flags "--model …"`: a value that starts with dashes is fine here (node:util would call it ambiguous). */
function joinRunFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--run-flags' && i + 1 < argv.length) out.push(`--run-flags=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

export async function importCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('import', IMPORT_USAGE, {
    args: joinRunFlags(argv),
    options: {
      system: { type: 'string' },
      'run-flags': { type: 'string' },
      scenario: { type: 'string' },
      drive: { type: 'string' },
      label: { type: 'string' },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  // Given but empty is refused, not read as "none" or the default (a script's unset variable).
  const errors = [...emptyValueErrors(a, ['system', 'scenario', 'drive', 'label', 'db']), ...labelFlagErrors(a, ['system', 'drive', 'label'])];
  if (parsed.positionals.length === 0) errors.push('name at least one results JSON file');
  if (parsed.positionals.some((file) => file.trim() === '')) errors.push('a results file name must not be empty');
  if (a.system === undefined) errors.push('--system LABEL is required (which system the results come from)');
  if (a.scenario && a.scenario !== 'imported' && !isScenarioId(a.scenario)) errors.push(`--scenario: unknown scenario '${shownInput(a.scenario)}'`);
  let runFlags: { options: Record<string, unknown>; given: string[] } | null = null;
  if (a['run-flags'] !== undefined) {
    const r = parseImportRunFlags(a['run-flags']);
    if (r.ok) runFlags = r;
    else errors.push(...r.errors.map((e) => `--run-flags: ${e}`));
  }
  if (errors.length > 0) {
    process.stderr.write(`kvbench import: invalid arguments:\n  ${errors.join('\n  ')}\n`);
    return 1;
  }
  return withCommandStore('import', a.db, { readOnly: false }, async (store) => {
    try {
      const r = await importResultsFiles(store, parsed.positionals, {
        systemLabel: a.system!,
        driveLabel: a.drive ?? null,
        scenarioId: a.scenario ?? 'imported',
        options: runFlags?.options ?? null,
        givenOptionKeys: runFlags?.given ?? [],
        suiteLabel: a.label ?? null,
      });
      for (const f of r.imported) {
        process.stdout.write(
          `imported ${printable(f.file)}: trial ${f.trialId}, ${f.format}, ${f.status}${f.reason ? ` (${f.reason})` : ''}${f.configKnown ? '' : ' — configuration unknown (use --run-flags)'}\n`,
        );
        // What reports will say of it (trace-only mode, a RAM-backed directory …), said now.
        const stored = store.getTrial(f.trialId);
        for (const c of stored === null ? [] : cautionsOf(stored)) process.stdout.write(`  flagged: ${c.message}\n`);
      }
      for (const f of r.skipped) process.stdout.write(`not imported ${printable(f.file)}: ${printableLines(f.message)}\n`);
      for (const e of r.errors) process.stderr.write(`skipped ${printable(e.file)}: ${printableLines(e.message)}\n`);
      if (r.imported.length > 0) process.stdout.write(`system ${r.systemId} (${a.system}), suite ${r.suiteId}\n`);
      else process.stderr.write(`kvbench import: ${r.errors.length === 0 ? 'nothing new was imported: every file is stored already' : 'nothing was imported'}\n`);
      // Files stored before are no failure when others went in: re-running a command after fixing
      // one bad file stores just that one. Nothing new at all is (1), as is any unreadable file (3).
      if (r.imported.length === 0) return 1;
      return r.errors.length > 0 ? 3 : 0;
    } catch (err) {
      const shown = explainWriteFailure(store.path, err, 'Nothing of this import was stored: free some space there and run it again.');
      process.stderr.write(`kvbench import: ${(shown as Error).message}\n`);
      return 1;
    }
  });
}
