// `kvbench report`: per-scenario median/P95 tables and the tier comparison for a suite (the latest
// by default) or any selection; `--compare A B`: two systems, drives or suite labels over matched configurations.
import { jsonText, printable, printableLines } from '../../src-shared/domain/label-text.ts';
import { suiteOutcome, type SuiteRecord, type TrialFilter } from '../../src-shared/domain/store-types.ts';
import { quoteLabel } from '../../src-shared/domain/places.ts';
import { passOnDamage, withCommandStore } from './command-store.ts';
import { buildScenarioReport, buildSystemComparison, buildTierComparison } from '../export/report-model.ts';
import { formatComparison, formatScenarioReport, formatTierComparison } from '../export/render-text.ts';
import { comparisonSides, resolveSelection, selectionFromFlags, splitList } from '../export/selection.ts';
import { emptyValueErrors, filterFlagErrors, intListFlag, parseCommandArgs } from './command-args.ts';
import { STATED_BANDWIDTH_OPTIONS, statedBandwidthFromFlags, statedBandwidthUsage } from './stated-bandwidth-flags.ts';

export const REPORT_USAGE = `Usage: kvbench report [--suite ID[,ID…] | [--system REF | --all] [--label TEXT]] [options]
       kvbench report --compare A B [--drives] [--label TEXT] [--match config|scenario] [options]
       kvbench report --compare A B --labels [--match config|scenario] [options]

Per scenario: the median and P95 of each metric across complete trials, with the trial count and
the spread (CV); incomplete trials are listed and excluded (--include-incomplete counts partial
ones). Then the tier comparison: throughput, per-tier P95, speedup against storage-only, bytes
moved, and efficiency against the drive's probed bandwidth. Trials of suites with different suite
labels (kvbench suite --label) are aggregated apart, as those of different systems and drives are.
The per-scenario table as a CSV file (the app's Report CSV): kvbench export --content report
--suite ID --out FILE (the filters of kvbench export).

  --suite ID[,ID…]       one suite, or several (comma-separated or repeated) (default: the newest
                         suite that ran on any system)
  --system REF           every trial of a system (id, id prefix, hostname or label)
  --all                  every trial in the database
  --label TEXT           every suite with this suite label, of any date (kvbench suite --label,
                         kvbench import --label; the whole label, commas and all; repeatable), as
                         history and export filter by it; with --system, that system's suites of it;
                         with --compare A B of two systems or drives (one --label), only the trials
                         of both sides' suites of it (two drives under one firmware build)
  --scenario a,b         only these scenarios
  --include-incomplete   aggregate partial trials too
  --exclude-flagged      leave the trials the report flags (a RAM-backed cache directory,
                         page-cache reads, a stalled engine, a queueing-bound run, a GPU tier
                         absent, smaller than asked or not pinned, an autoscaler short of its
                         peak or target) out of the medians, the tier comparison and --compare; each left
                         out is listed with why (default: counted, and marked)
  --all-metrics          every metric, not only the headline ones
  --compare A B          compare two systems (or with --drives two drives, with --labels two
                         suite labels) over matched configurations: ratio A ÷ B per metric,
                         win rate, noise (Welch's t-test)
  --labels               with --compare: A and B are suite labels (kvbench suite --label,
                         kvbench import --label); every suite of a label counts, of any date
                         (--label, which narrows two systems or drives, is refused with it)
  --match config|scenario  what "matched" means (default config: equal workload options)
  --per-config           with --compare: one table per metric and configuration
${statedBandwidthUsage(25)}  --json                 the report model as JSON
  --db PATH              the database (default: $KVBENCH_DB, else the user data directory)
`;

export async function reportCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('report', REPORT_USAGE, {
    args: argv,
    options: {
      suite: { type: 'string', multiple: true },
      system: { type: 'string', multiple: true },
      all: { type: 'boolean', default: false },
      label: { type: 'string', multiple: true },
      scenario: { type: 'string', multiple: true },
      'include-incomplete': { type: 'boolean', default: false },
      'exclude-flagged': { type: 'boolean', default: false },
      'all-metrics': { type: 'boolean', default: false },
      compare: { type: 'boolean', default: false },
      drives: { type: 'boolean', default: false },
      labels: { type: 'boolean', default: false },
      match: { type: 'string', default: 'config' },
      'per-config': { type: 'boolean', default: false },
      ...STATED_BANDWIDTH_OPTIONS,
      json: { type: 'boolean', default: false },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  const match = a.match;
  if (match !== 'config' && match !== 'scenario') {
    process.stderr.write(`kvbench report: --match must be config or scenario, got ${match}\n`);
    return 1;
  }
  const stated = statedBandwidthFromFlags(a['stated-read-gbps'], a['stated-write-gbps']);
  if (typeof stated === 'string') {
    process.stderr.write(`kvbench report: ${stated}\n`);
    return 1;
  }
  const suiteErrors = [...emptyValueErrors(a, ['db']), ...filterFlagErrors(a)];
  const suiteIds = intListFlag('--suite', a.suite, suiteErrors, { min: 1 });
  if (suiteErrors.length > 0) {
    process.stderr.write(`kvbench report: ${suiteErrors.join('; ')}\n`);
    return 1;
  }
  // Each of these chooses the trials; given together, all but one were silently ignored.
  const choosers = [suiteIds !== undefined ? '--suite' : null, a.system?.length ? '--system' : null, a.all ? '--all' : null, a.compare ? '--compare' : null].filter((f) => f !== null);
  if (choosers.length > 1) {
    process.stderr.write(`kvbench report: ${choosers.join(' and ')} each choose the trials to report: give one\n`);
    return 1;
  }
  // --label narrows --system or --all (or stands alone), as in history and export, and both sides of
  // --compare A B of two systems or drives; it has nothing to narrow in suites chosen by number, nor
  // in a comparison of two labels, whose A and B are labels already.
  const labelFilter = selectionFromFlags({ label: a.label }, undefined).suiteLabels;
  if (labelFilter && suiteIds !== undefined) {
    process.stderr.write('kvbench report: --suite chooses suites by number, --label every suite of a label: give one (--label combines with --system or --all)\n');
    return 1;
  }
  if (labelFilter && a.compare && a.labels) {
    process.stderr.write('kvbench report: --label narrows both sides of --compare A B of two systems or drives to one suite label; with --labels, A and B are the suite labels themselves: give one\n');
    return 1;
  }
  if (labelFilter && a.compare && labelFilter.length > 1) {
    process.stderr.write('kvbench report: --compare A B takes one --label, which narrows both sides to its suites (two labels are compared with --compare A B --labels)\n');
    return 1;
  }
  if (a.drives && a.labels) {
    process.stderr.write('kvbench report: --drives and --labels say what A and B are: give one\n');
    return 1;
  }
  if ((a.drives || a.labels) && !a.compare) {
    process.stderr.write(`kvbench report: ${a.drives ? '--drives' : '--labels'} only says what --compare's A and B are: give --compare A B\n`);
    return 1;
  }
  const kind = a.labels ? 'label' : a.drives ? 'drive' : 'system';
  if (a.compare ? parsed.positionals.length !== 2 : parsed.positionals.length !== 0) {
    process.stderr.write(`kvbench report: ${a.compare ? `--compare needs exactly two ${kind === 'label' ? 'suite labels' : kind === 'drive' ? 'drives' : 'systems (or drives, or suite labels)'}: A B` : `unexpected argument(s): ${parsed.positionals.join(' ')}`}\n`);
    return 1;
  }
  if (a.compare && parsed.positionals.some((ref) => ref.trim() === '')) {
    process.stderr.write("kvbench report: --compare's A and B must not be empty\n");
    return 1;
  }
  return withCommandStore('report', a.db, { readOnly: true }, async (store) => {
    try {
      // One read transaction: the trials listed, their histograms and their hardware are one state of
      // the file, whatever another process (the app, another kvbench) deletes or stores meanwhile.
      return store.inOneSnapshot(() => {
        // Checked as history and export check them: an unknown id is refused, not an empty report.
        const { scenarioIds } = resolveSelection(store, { scenarioIds: splitList(a.scenario) });
        if (a.compare) {
          const [refA, refB] = parsed.positionals;
          const sides = comparisonSides(store, kind, refA, refB, { scenarioIds, suiteLabel: labelFilter?.[0] });
          const c = buildSystemComparison(sides.a, sides.b, { match, kind, excludeFlagged: a['exclude-flagged'], suiteLabel: sides.suiteLabel });
          process.stdout.write(a.json ? `${jsonText(c, 2)}\n` : printableLines(formatComparison(c, { perConfig: a['per-config'] })));
          return 0;
        }
        // The store filter of the chosen trials, each reference in it resolved once.
        let filter: TrialFilter;
        let title: string;
        if (suiteIds !== undefined) {
          const ids = [...new Set(suiteIds)];
          const suites = ids.map((id) => {
            const suite = store.getSuite(id);
            if (!suite) throw new Error(`no suite ${id} (see kvbench history --suites)`);
            return suite;
          });
          filter = { suiteIds: ids };
          title = suites.length === 1 ? suiteTitle(suites[0]) : `Suites ${suites.map((suite) => `${suite.id} (${suiteWhat(suite)})`).join(', ')}`;
        } else if (labelFilter) {
          filter = resolveSelection(store, { suiteLabels: labelFilter, ...(a.system?.length ? { systems: a.system } : {}) });
          const { systemIds, suiteLabels } = filter;
          const ids = store.listSuites({ systemIds, labels: suiteLabels, limit: 1_000_000 }).map((x) => x.id).sort((x, y) => x - y);
          const named = suiteLabels!.map(quoteLabel).join(', ');
          title =
            `Suite label${suiteLabels!.length > 1 ? 's' : ''} ${named}${a.system?.length ? ` on system(s) ${a.system.join(', ')}` : ''}: ` +
            `${ids.length > 0 ? `every suite (${ids.join(', ')})` : 'no suite'}`;
        } else if (a.system?.length) {
          filter = resolveSelection(store, { systems: a.system });
          title = `System(s) ${a.system.join(', ')}: every suite`;
        } else if (a.all) {
          filter = {};
          title = 'Every trial in the database';
        } else {
          const latest = store.latestSuite(undefined, 'suite') ?? store.latestSuite();
          if (!latest) {
            process.stderr.write(`kvbench report: the database ${printable(store.path)} holds no trials yet (run kvbench suite or kvbench import)\n`);
            return 1;
          }
          filter = { suiteIds: [latest.id] };
          title = `${suiteTitle(latest)} — the newest`;
        }
        const trials = store.listTrials({ ...filter, ...(scenarioIds ? { scenarioIds } : {}), order: 'asc' });
        const report = buildScenarioReport(trials, { includeIncomplete: a['include-incomplete'], excludeFlagged: a['exclude-flagged'], histogramsOf: (id) => store.trialHistograms(id), hardwareOf: (id) => store.trialHardware(id) });
        // Each row's efficiency against its own system's and drive's probe, never the newest trial's.
        const tiers = buildTierComparison(report, (id) => store.trialHardware(id), stated);
        if (a.json) {
          process.stdout.write(`${jsonText({ title, scenarios: report, tiers }, 2)}\n`);
          return 0;
        }
        // Stored labels (kept from before labels were checked) are quoted in headings and notes: printable.
        process.stdout.write(printableLines(`${title}\n${trials.length} trial(s).\n\n`));
        process.stdout.write(printableLines(formatScenarioReport(report, { allMetrics: a['all-metrics'] })));
        process.stdout.write(printableLines(`\n${formatTierComparison(tiers)}`));
        return 0;
      });
    } catch (err) {
      passOnDamage(err);
      process.stderr.write(`kvbench report: ${printableLines((err as Error).message)}\n`);
      return 1;
    }
  });
}

/** "smoke, fw 2.1": a suite's profile and label, as report titles name it. */
function suiteWhat(suite: SuiteRecord): string {
  return `${suite.profile}${suite.label ? `, ${suite.label}` : ''}`;
}

/** "Suite 3 (smoke, fw 2.1), finished, started …": the title of a one-suite report. */
function suiteTitle(suite: SuiteRecord): string {
  return `Suite ${suite.id} (${suiteWhat(suite)}), ${suiteOutcome(suite.status, suite.trialCounts.complete)}, started ${suite.createdAt}`;
}
