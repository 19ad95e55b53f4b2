// `kvbench export`: stored trials to CSV, XLSX or JSON, each row with the trial's full configuration;
// with `--content report`, the report's table as CSV (the file the app's Report page saves as Report CSV).
import fs from 'node:fs';
import { printable, printableLines } from '../../src-shared/domain/label-text.ts';
import { resolveDatabasePath } from '../store/data-dir.ts';
import { passOnDamage, SUITES_WHERE_TO_LOOK, withCommandStore } from './command-store.ts';
import { databaseOutputError } from './database-output.ts';
import { planExport, type PlannedExport } from '../export/plan-export.ts';
import { EXPORT_CONTENTS } from '../../src-shared/ipc/contract.ts';
import { EXPORT_FORMATS, formatFromPath, type ExportContent, type ExportFormat } from '../export/export-trials.ts';
import { selectionFromFlags } from '../export/selection.ts';
import { StoreError } from '../store/store-error.ts';
import { sqliteCode } from '../store/sqlite.ts';
import { emptyValueErrors, filterFlagErrors, intListFlag, parseCommandArgs } from './command-args.ts';
import { FileWriteError, outputFileProblem, removeTemporariesNow, sweepLeftTemporaries, writeChunksAtomic } from '../util/write-file-atomic.ts';
import { signalExitCode, watchStopSignals } from './stop-signals.ts';
import { STATED_BANDWIDTH_OPTIONS, statedBandwidthFromFlags, statedBandwidthUsage } from './stated-bandwidth-flags.ts';

export const EXPORT_USAGE = `Usage: kvbench export --out FILE [--format csv|xlsx|json] [filters]
       kvbench export --content report --out FILE [filters]

Writes the selected trials (default: every trial) with their full configuration, status, every
metric and a hardware summary: CSV (one row per trial, with the report's caution for a flagged
trial), XLSX (Trials, Scenarios with median/P95/CV, Pooled latency, Tier comparison, Notes: the
trials excluded or flagged and the tier notes, About), or JSON (everything, including each trial's
hardware snapshot). With --content report: the report's table as CSV, the file the app's Report
page saves as Report CSV (the XLSX's Scenarios sheet).

  --out FILE           the file to write (replaced atomically, through a symbolic link; a pipe or
                       device such as /dev/stdout is written into; never the database itself)
  --format F           csv, xlsx or json (default: from the file's extension)
  --content C          what the CSV holds: trials (default: one row per trial) or report (one row
                       per scenario group and metric: its trials, n, median, P95, CV, min and max
                       of the per-trial values; CSV whatever the file's name); XLSX and JSON hold both
  --suite ID, --system REF, --drive REF, --label TEXT, --scenario a,b, --status s,t, --model M, --since, --until
                       the same filters as kvbench history
  --include-incomplete aggregate partial trials in the report's aggregates too (--content report,
                       XLSX, JSON)
  --exclude-flagged    leave the trials the report flags out of the aggregates (--content report,
                       XLSX, JSON; an XLSX or JSON file records it, and lists each trial left out
                       with why)
${statedBandwidthUsage(23)}  --db PATH            the database (default: $KVBENCH_DB, else the user data directory)
`;

export async function exportCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('export', EXPORT_USAGE, {
    args: argv,
    options: {
      out: { type: 'string', short: 'o' },
      format: { type: 'string' },
      content: { type: 'string', default: 'trials' },
      suite: { type: 'string', multiple: true },
      system: { type: 'string', multiple: true },
      drive: { type: 'string', multiple: true },
      label: { type: 'string', multiple: true },
      scenario: { type: 'string', multiple: true },
      status: { type: 'string', multiple: true },
      model: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      'include-incomplete': { type: 'boolean', default: false },
      'exclude-flagged': { type: 'boolean', default: false },
      ...STATED_BANDWIDTH_OPTIONS,
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  const out = a.out;
  const refused = [...emptyValueErrors(a, ['out', 'db']), ...filterFlagErrors(a)];
  if (refused.length > 0) {
    process.stderr.write(`kvbench export: ${refused.join('; ')}\n`);
    return 1;
  }
  if (!out) {
    process.stderr.write(`kvbench export: --out FILE is required\n\n${EXPORT_USAGE}`);
    return 1;
  }
  if (!(EXPORT_CONTENTS as readonly string[]).includes(a.content)) {
    process.stderr.write(`kvbench export: --content must be ${EXPORT_CONTENTS.join(' or ')}, got ${a.content}\n`);
    return 1;
  }
  const content = a.content as ExportContent;
  const report = content === 'report';
  // The report is a CSV only: a file name without a known extension (/dev/stdout) gets one.
  const format = (a.format ?? formatFromPath(out) ?? (report ? 'csv' : null)) as ExportFormat | null;
  if (format === null || !(EXPORT_FORMATS as readonly string[]).includes(format)) {
    // A folder has no extension to take the format from: what is wrong there is --out, so say that.
    const outProblem = a.format === undefined ? outputFileProblem(out) : null;
    process.stderr.write(
      outProblem !== null ? `kvbench export: cannot write --out ${printable(out)}: ${outProblem}\n` : `kvbench export: --format must be ${EXPORT_FORMATS.join(', ')} (or use a .csv, .xlsx or .json file name)\n`,
    );
    return 1;
  }
  if (report && format !== 'csv') {
    process.stderr.write("kvbench export: --content report is a CSV (the report's table); an XLSX or JSON file holds the report and the trials both: leave --content out\n");
    return 1;
  }
  const stated = statedBandwidthFromFlags(a['stated-read-gbps'], a['stated-write-gbps']);
  if (typeof stated === 'string') {
    process.stderr.write(`kvbench export: ${stated}\n`);
    return 1;
  }
  if (stated !== null && format === 'csv') {
    process.stderr.write(
      `kvbench export: --stated-read-gbps/--stated-write-gbps apply to the tier comparison, which only XLSX and JSON carry (${report ? 'the report CSV holds the per-scenario table' : 'a CSV has one row per trial'})\n`,
    );
    return 1;
  }
  if (a['exclude-flagged'] && format === 'csv' && !report) {
    process.stderr.write(
      'kvbench export: --exclude-flagged applies to the aggregates, which only a report CSV (--content report), XLSX and JSON carry (a trials CSV has one row per trial, each flagged one with its caution)\n',
    );
    return 1;
  }
  const suiteErrors: string[] = [];
  const suiteIds = intListFlag('--suite', a.suite, suiteErrors, { min: 1 });
  if (suiteErrors.length > 0) {
    process.stderr.write(`kvbench export: ${suiteErrors.join('; ')}\n`);
    return 1;
  }
  const overwritesDb = databaseOutputError('--out', out, resolveDatabasePath(a.db));
  if (overwritesDb !== null) {
    process.stderr.write(`kvbench export: ${overwritesDb}\n`);
    return 1;
  }
  // Before the database is read and the report built: a wrong --out costs nothing.
  const outProblem = outputFileProblem(out);
  if (outProblem !== null) {
    process.stderr.write(`kvbench export: cannot write --out ${printable(out)}: ${outProblem}\n`);
    return 1;
  }
  return withCommandStore('export', a.db, { readOnly: true }, async (store) => {
    // Reading first, as the app does: what it refuses (a missing suite, an unknown system, a stated
    // bandwidth over several drives, a damaged database) is said as such, and no file is written.
    // A trials CSV reads its trials as it writes them (planExport): what reading them throws then is
    // said as such too, and the file is left as it was.
    let planned: PlannedExport;
    try {
      planned = planExport(store, selectionFromFlags(a, suiteIds), {
        includeIncomplete: a['include-incomplete'],
        excludeFlagged: a['exclude-flagged'],
        stated,
        whereToLook: SUITES_WHERE_TO_LOOK,
        format,
        content,
      });
    } catch (err) {
      passOnDamage(err);
      process.stderr.write(`kvbench export: ${printableLines((err as Error).message)}\n`);
      return 1;
    }
    // Partial files an earlier export of this file left (killed with SIGKILL: nothing could remove them).
    const left = sweepLeftTemporaries(out);
    for (const tmp of left.removed) process.stderr.write(`kvbench export: removed ${printable(tmp)}, a partial file an interrupted export of ${printable(out)} left\n`);
    for (const tmp of left.left) process.stderr.write(`kvbench export: ${printable(tmp)} is a partial file an interrupted export of ${printable(out)} left (its process no longer runs): remove it\n`);
    // Ctrl-C, SIGTERM or SIGHUP while the file is written: its temporary beside it goes, the file is as it was.
    const stop = watchStopSignals({
      onStop(signal) {
        removeTemporariesNow();
        process.stderr.write(`kvbench export: interrupted (${signal}): nothing was written to ${printable(out)}${fs.existsSync(out) ? ' (the file there is as it was)' : ''}\n`);
        process.exit(signalExitCode(signal));
      },
    });
    try {
      await writeChunksAtomic(out, planned.chunks);
      if (planned.report !== null && report) {
        const rows = planned.report.scenarios.reduce((n, s) => n + s.metrics.length, 0);
        process.stderr.write(`exported the report of ${planned.trialCount()} trial(s), ${planned.report.scenarios.length} group(s) in ${rows} row(s), to ${printable(out)} (${format})\n`);
      } else process.stderr.write(`exported ${planned.trialCount()} trial(s) to ${printable(out)} (${format})\n`);
      return 0;
    } catch (err) {
      // Reading the trials refused (a damaged or busy database): said as the reads above say it.
      if (err instanceof StoreError || sqliteCode(err) !== null) {
        process.stderr.write(`kvbench export: ${printableLines((err as Error).message)}\n`);
        return 1;
      }
      const why = err instanceof FileWriteError ? `could not write ${printable(out)}: ${err.message}` : (err as Error).message;
      process.stderr.write(`kvbench export failed (EXPORT_FAILED): ${why}\n`);
      return 1;
    } finally {
      stop.dispose();
    }
  });
}
