// `kvbench history`: the stored trials (filtered), suites, systems and drives.
import { jsonArrayTexts, jsonText, printableLines } from '../../src-shared/domain/label-text.ts';
import { writeChunksToStdout } from './closed-output.ts';
import { scenarioLabel } from '../../src-shared/domain/scenarios.ts';
import { passOnDamage, SUITES_WHERE_TO_LOOK, withCommandStore } from './command-store.ts';
import { fmtValue, printableCells, table, TextTable } from '../export/render-text.ts';
import { cautionsOf, ramBackingText } from '../export/report-model.ts';
import { suiteOutcome, type TrialRecord } from '../../src-shared/domain/store-types.ts';
import { requireSuites } from '../export/export-model.ts';
import { compareVersions, olderDefinitionOf, olderDefinitionText } from '../../src-shared/domain/metric-changes.ts';
import { resolveSelection, selectionFromFlags } from '../export/selection.ts';
import { emptyValueErrors, filterFlagErrors, intFlag, intListFlag, parseCommandArgs } from './command-args.ts';

export const HISTORY_USAGE = `Usage: kvbench history [filters] [--json]
       kvbench history --suites | --systems

Lists stored trials, newest first.

  --suite ID           trials of one suite (repeatable)
  --system REF         trials of a system (id, id prefix, hostname or label; repeatable)
  --drive REF          trials on a drive (id, id prefix or label; repeatable)
  --label TEXT         trials of the suites with this label, of any date (kvbench suite --label,
                       kvbench import --label; the whole label, commas and all; repeatable)
  --scenario a,b       only these scenarios
  --status s,t         running, complete, partial, failed, aborted
  --model M            only this model
  --since DATE         started at or after (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]; UTC unless Z or
                       an offset such as +01:00 is given; other forms, and days that do not
                       exist, are refused)
  --until DATE         started at or before (a bare date: through the end of that day)
  --limit N            at most N trials (default 50; 0 = all)
  --suites             list suites instead (of the filters, only --system, --label and --limit apply)
  --systems            list systems and drives instead (no filters)
  --json               machine-readable
  --db PATH            the database (default: $KVBENCH_DB, else the user data directory)
`;

/** Widest reason the trial table shows: its first line, cut with an ellipsis so a cut one reads as cut. */
const REASON_CHARS = 60;
/** Widest drive label the tables show (a drive's label is its model and size; the id names it whole). */
const DRIVE_CHARS = 28;
/** Widest suite label the trial table shows (--suites and --json show it whole). */
const LABEL_CHARS = 24;
function clip(text: string | null, chars: number): string {
  const first = (text ?? '').split('\n')[0];
  return first.length > chars ? `${first.slice(0, chars - 1)}…` : first;
}

/** The mark of a trial the report flags (RAM-backed cache directory, page-cache reads, a stall, trace-only mode …), and its legend. */
const FLAG_MARK = '!';
const flagLegend = (what: string): string =>
  `${FLAG_MARK}: ${what} the report flags (a RAM-backed cache directory, storage reads the page cache served, a stalled engine, a spill past the tiers the scenario names, a queueing-bound run, a GPU tier absent, smaller than asked or not pinned, an autoscaler short of its peak or target, trace-only mode: no storage I/O): kvbench report --suite N says why\n`;

/** What the suite table's deleted column counts (trialsDeleted): the CLI cannot delete a trial, the app can. */
const DELETED_LEGEND = 'deleted: complete trials deleted from the suite (in the app); kvbench suite --resume does not run them again, --resume ID --rerun-deleted does\n';

/**
 * Under the trial table, one line per RAM-backed cache directory its flagged trials ran on: what held
 * it in memory, as each trial's results said, so the mark says what was measured ("" when none).
 */
function ramBackingLines(byBacking: ReadonlyMap<string, readonly number[]>): string {
  return [...byBacking].map(([backing, ids]) => `   RAM-backed cache directory: ${backing} (trial${ids.length > 1 ? 's' : ''} ${ids.join(', ')})\n`).join('');
}

/** Notes `t` under what held its cache directory in memory, if anything did (ramBackingLines). */
function addRamBacking(byBacking: Map<string, number[]>, t: TrialRecord): void {
  const backing = ramBackingText(t);
  if (backing === null) return;
  let ids = byBacking.get(backing);
  if (!ids) byBacking.set(backing, (ids = []));
  ids.push(t.id);
}

/**
 * The mark of a value measured under an older definition of its metric (olderDefinitionOf: e2e P95
 * before 0.8.0 was timed from the issue, not the scheduled arrival), and its legend: the report
 * aggregates such values apart, marked "(definition before …)"; the listing puts them side by side.
 */
const OLDER_DEFINITION_MARK = '*';
const olderDefinitionLegend = (sinces: ReadonlySet<string>): string =>
  [...sinces]
    .sort(compareVersions)
    .map(
      (since) =>
        `${OLDER_DEFINITION_MARK}: e2e P95 measured under its ${olderDefinitionText(since)} (docs/metrics.md): not comparable with values measured by kvbench ${since} or later; kvbench report aggregates it apart, marked "(${olderDefinitionText(since)})"\n`,
    )
    .join('');

/** The change whose older definition a trial's e2e P95 was measured under (null: the current one, or none stored). */
const e2eOlderDefinition = (t: TrialRecord): { since: string } | null => (t.metrics.e2e_p95_ms === undefined ? null : olderDefinitionOf('e2e_p95_ms', t.measuredByVersion));

const TRIAL_HEADERS = ['trial', 'started', 'suite', 'label', 'system', 'drive', 'scenario', '#', 'status', FLAG_MARK, 'tok/s', 'stor rd', 'e2e P95 ms', 'reason'];

/** A trial's row of the trial table (its cells as stored: the table makes them printable). */
function trialCells(t: TrialRecord, flagged: boolean): string[] {
  return [
    String(t.id),
    t.startedAt.replace('T', ' ').slice(0, 19),
    String(t.suiteId),
    clip(t.suiteLabel, LABEL_CHARS),
    t.systemLabel,
    t.driveLabel === null ? '—' : clip(t.driveLabel, DRIVE_CHARS),
    t.scenarioId,
    String(t.trialIndex + 1),
    t.status,
    flagged ? FLAG_MARK : '',
    fmtValue(t.metrics.wall_clock_throughput_tok_per_s, 'tok/s'),
    fmtValue(t.metrics.storage_read_bytes_per_s, 'bytes/s'),
    `${fmtValue(t.metrics.e2e_p95_ms, 'ms')}${e2eOlderDefinition(t) === null ? '' : OLDER_DEFINITION_MARK}`,
    clip(t.statusReason, REASON_CHARS),
  ];
}

/** The filters of the trial listing; --suites takes --system and --label (and --limit) only, --systems none. */
const TRIAL_FILTERS = ['suite', 'drive', 'scenario', 'status', 'model', 'since', 'until'] as const;

/**
 * Why these flags cannot be listed together, or null: a filter the chosen listing does not apply
 * would be silently ignored (every suite listed for `--suites --status failed`), and of --suites and
 * --systems only one listing can be shown.
 */
function listingFlagsError(a: Partial<Record<(typeof TRIAL_FILTERS)[number] | 'system' | 'label', unknown>> & { suites: boolean; systems: boolean }): string | null {
  const given = (names: readonly string[]): string[] => names.filter((n) => (a as Record<string, unknown>)[n] !== undefined).map((n) => `--${n}`);
  if (a.suites && a.systems) return '--suites and --systems are two listings: give one';
  const ignored = a.systems ? given([...TRIAL_FILTERS, 'system', 'label']) : a.suites ? given(TRIAL_FILTERS) : [];
  if (ignored.length === 0) return null;
  return a.systems
    ? `--systems lists every system and drive: ${ignored.join(', ')} cannot be given with it`
    : `--suites lists suites, filtered by --system and --label only: ${ignored.join(', ')} filter trials (list them without --suites, e.g. kvbench history ${ignored[0]} …)`;
}

export async function historyCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandArgs('history', HISTORY_USAGE, {
    args: argv,
    options: {
      suite: { type: 'string', multiple: true },
      system: { type: 'string', multiple: true },
      drive: { type: 'string', multiple: true },
      label: { type: 'string', multiple: true },
      scenario: { type: 'string', multiple: true },
      status: { type: 'string', multiple: true },
      model: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string', default: '50' },
      suites: { type: 'boolean', default: false },
      systems: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (typeof parsed === 'number') return parsed;
  const a = parsed.values;
  const listingError = listingFlagsError(a);
  if (listingError !== null) {
    process.stderr.write(`kvbench history: ${listingError}\n`);
    return 1;
  }
  const errors = [...emptyValueErrors(a, ['db']), ...filterFlagErrors(a)];
  const limit = intFlag('--limit', a.limit, errors, { min: 0 }) ?? 0;
  const suiteIds = intListFlag('--suite', a.suite, errors, { min: 1 });
  if (errors.length > 0) {
    process.stderr.write(`kvbench history: ${errors.join('; ')}\n`);
    return 1;
  }
  return withCommandStore('history', a.db, { readOnly: true, listing: true }, async (store) => {
    try {
      if (a.systems) {
        const systems = store.listSystems();
        const drives = store.listDrives();
        if (a.json) {
          process.stdout.write(`${jsonText({ systems, drives }, 2)}\n`);
          return 0;
        }
        process.stdout.write(`${table(['system id', 'label', 'source', 'trials', 'last seen'], systems.map((s) => [s.id, s.label, s.source, String(s.trialCount), s.lastSeenAt]), [0, 1, 2, 4])}\n\n`);
        process.stdout.write(`${table(['drive id', 'system', 'label', 'identity', 'trials'], drives.map((d) => [d.id, d.systemId, d.label, d.basis, String(d.trialCount)]), [0, 1, 2, 3])}\n`);
        return 0;
      }
      if (a.suites) {
        const { systemIds, suiteLabels } = resolveSelection(store, selectionFromFlags({ system: a.system, label: a.label }, undefined));
        const suites = store.listSuites({ ...(systemIds ? { systemIds } : {}), ...(suiteLabels ? { labels: suiteLabels } : {}), limit: limit === 0 ? 1_000_000 : limit });
        if (a.json) {
          // `status` as stored; `outcome` as the listing shows it (a finished suite without a complete trial: failed).
          process.stdout.write(`${jsonText(suites.map((s) => ({ ...s, outcome: suiteOutcome(s.status, s.trialCounts.complete) })), 2)}\n`);
          return 0;
        }
        const flagged = new Map(suites.map((s) => [s.id, store.listTrials({ suiteIds: [s.id] }).filter((t) => cautionsOf(t).length > 0).length]));
        process.stdout.write(
          `${table(
            ['suite', 'created', 'system', 'drive', 'profile', 'label', 'status', 'complete', 'partial', 'failed', 'aborted', 'running', 'deleted', FLAG_MARK],
            suites.map((s) => [
              String(s.id),
              s.createdAt.replace('T', ' ').slice(0, 19),
              store.getSystem(s.systemId)?.label ?? s.systemId,
              s.driveId === null ? '—' : clip(store.getDrive(s.driveId)?.label ?? s.driveId, DRIVE_CHARS),
              s.profile,
              s.label ?? '',
              suiteOutcome(s.status, s.trialCounts.complete),
              String(s.trialCounts.complete),
              String(s.trialCounts.partial),
              String(s.trialCounts.failed),
              String(s.trialCounts.aborted),
              String(s.trialCounts.running),
              String(s.trialsDeleted),
              flagged.get(s.id)! > 0 ? String(flagged.get(s.id)) : '',
            ]),
            [0, 1, 2, 3, 4, 5, 6],
          )}\n`,
        );
        if (suites.some((s) => s.trialsDeleted > 0)) process.stdout.write(DELETED_LEGEND);
        if ([...flagged.values()].some((n) => n > 0)) process.stdout.write(flagLegend('how many of its trials'));
        return 0;
      }
      requireSuites(store, suiteIds, SUITES_WHERE_TO_LOOK);
      const filter = resolveSelection(store, {
        ...selectionFromFlags(a, suiteIds),
        ...(limit > 0 ? { limit } : {}),
      });
      if (a.json) {
        // Written a page of trials at a time as it is read (--limit 0 on a year's database is tens of
        // MB of JSON): the same text as the whole array at once, never held whole.
        const pages = limit > 0 ? [store.listTrials(filter)] : store.trialPages(filter);
        await writeChunksToStdout(
          (function* () {
            yield* jsonArrayTexts((function* () {
              for (const page of pages) for (const t of page) yield { ...t, cautions: cautionsOf(t).map((c) => c.message) };
            })(), 2);
            yield '\n';
          })(),
        );
        return 0;
      }
      // A page of trials at a time (--limit 0 on a year's database is tens of thousands of trials, each
      // a full record with its results): each kept only as its row's cells, the columns as wide as the
      // widest row once all are read, then written.
      const pages = limit > 0 ? [store.listTrials(filter)] : store.trialPages(filter);
      const listing = new TextTable(TRIAL_HEADERS, [1, 3, 4, 5, 6, 8, 9, 13]);
      const rows: string[] = [];
      let flagged = 0;
      const ramBacked = new Map<string, number[]>();
      const scenarios = new Set<string>();
      const olderDefinitions = new Set<string>();
      for (const page of pages) {
        for (const t of page) {
          const older = e2eOlderDefinition(t);
          if (older !== null) olderDefinitions.add(older.since);
          const isFlagged = cautionsOf(t).length > 0;
          if (isFlagged) flagged += 1;
          addRamBacking(ramBacked, t);
          scenarios.add(t.scenarioId);
          // printable() escapes every control character: NUL parts the cells of a row kept as one string.
          rows.push(listing.measure(printableCells(trialCells(t, isFlagged))).join('\0'));
        }
      }
      if (rows.length === 0) {
        process.stdout.write('no trials match\n');
        return 0;
      }
      await writeChunksToStdout(
        (function* () {
          yield `${listing.head()}\n`;
          for (const row of rows) yield `${listing.line(row.split('\0'))}\n`;
          if (flagged > 0) yield `${flagLegend('a trial')}${ramBackingLines(ramBacked)}`;
          if (olderDefinitions.size > 0) yield olderDefinitionLegend(olderDefinitions);
          if (scenarios.size <= 3) yield `(${[...scenarios].map(scenarioLabel).join(', ')})\n`;
        })(),
      );
      return 0;
    } catch (err) {
      passOnDamage(err);
      process.stderr.write(`kvbench history: ${printableLines((err as Error).message)}\n`);
      return 1;
    }
  });
}
