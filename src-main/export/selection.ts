// Which trials a report, history listing or export covers: one selection model shared by the CLI
// and (next) the app, resolved against the store.
import { IMPORTED_SCENARIO_ID, MULTI_HOST_SCENARIO_ID, SCENARIO_IDS } from '../../src-shared/domain/scenarios.ts';
import { TRIAL_ROW_STATUSES, type ComparisonKind, type TrialFilter, type TrialRecord, type TrialRowStatus } from '../../src-shared/domain/store-types.ts';
import { printable, shownInput } from '../../src-shared/domain/label-text.ts';
import { StoreError } from '../store/store-error.ts';
import type { Store } from '../store/store.ts';

export interface Selection {
  suiteIds?: number[];
  /** Ids, id prefixes or labels. */
  systems?: string[];
  drives?: string[];
  /** Suite labels, each matched whole (suiteLabelOf): every suite that carries one, of any date. */
  suiteLabels?: string[];
  scenarioIds?: string[];
  statuses?: string[];
  model?: string;
  since?: string;
  until?: string;
  limit?: number;
}

const DAY_MS = 86_400_000;

/**
 * The forms --since/--until take: a date, or a date and time (seconds and a fraction optional) with
 * an optional zone (Z, ±HH:MM, ±HHMM, ±HH). Nothing else: JavaScript's Date read `0` as 2000-01-01,
 * `12` as 2001-12-01, `2026-02-30` as 2 March, and `99999-01-01` as a year whose text sorted before
 * every stored one, so a typo selected a different span without a word.
 */
const DATE_FORM = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** The earliest and latest instants a stored start time (a four-digit year, UTC) can have: the bounds a zone may push a value past. */
const EARLIEST = new Date(0);
EARLIEST.setUTCFullYear(0, 0, 1);
const LATEST = new Date(0);
LATEST.setUTCFullYear(9999, 11, 31);
LATEST.setUTCHours(23, 59, 59, 999);

/**
 * A --since/--until value as the UTC instant the stored start times are compared with. Times are
 * UTC unless they carry an offset (as the listings show them); a bare date given to --until means
 * the end of that day, so `--until 2026-11-24` includes the trials of the 24th. Another form, or a
 * day or time that does not exist (2026-02-30, 24:00), is refused with the flag named.
 */
export function isoDate(s: string, flag: '--since' | '--until'): string {
  const m = DATE_FORM.exec(s.trim());
  const shown = printable(s);
  if (m === null) throw new StoreError('VALIDATION', `${flag} must be a date (YYYY-MM-DD or ISO 8601, e.g. 2026-11-24 or 2026-11-24T09:00+01:00), got '${shown}'`);
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', zone = 'Z'] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, sec].map(Number);
  const t = new Date(0);
  t.setUTCFullYear(year, month - 1, day); // not Date.UTC, which reads years 0–99 as 1900–1999
  const realDay = t.getUTCFullYear() === year && t.getUTCMonth() === month - 1 && t.getUTCDate() === day;
  t.setUTCHours(hour, minute, second, Number(frac.padEnd(3, '0').slice(0, 3)));
  const zoneMatch = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  const zoneHours = zoneMatch === null ? 0 : Number(zoneMatch[2]);
  const zoneMinutes = zoneMatch === null ? 0 : Number(zoneMatch[3] ?? '0');
  if (!realDay || hour > 23 || minute > 59 || second > 59 || zoneHours > 23 || zoneMinutes > 59) {
    throw new StoreError('VALIDATION', `${flag} ${shown} is not a real ${realDay ? 'time' : 'date'}${realDay ? ' (hours 00–23, minutes and seconds 00–59, offsets up to ±23:59)' : ''}`);
  }
  let ms = t.getTime() - (zoneMatch === null ? 0 : (zoneMatch[1] === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes) * 60_000);
  if (m[4] === undefined && flag === '--until') ms += DAY_MS - 1;
  // An offset may carry a value past year 0 or 9999, where toISOString writes six-digit years that
  // sort wrongly against the stored four-digit ones: every stored time lies between these.
  return new Date(Math.min(Math.max(ms, EARLIEST.getTime()), LATEST.getTime())).toISOString();
}

/** The selection as a store filter; system and drive references resolved to ids. */
export function resolveSelection(store: Store, s: Selection): TrialFilter {
  const f: TrialFilter = {};
  if (s.suiteIds?.length) f.suiteIds = s.suiteIds;
  if (s.systems?.length) f.systemIds = s.systems.map((r) => store.resolveSystem(r).id);
  if (s.drives?.length) f.driveIds = s.drives.map((r) => store.resolveDrive(r).id);
  if (s.suiteLabels?.length) f.suiteLabels = s.suiteLabels.map((l) => store.resolveSuiteLabel(l));
  if (s.scenarioIds?.length) f.scenarioIds = knownScenarios(store, s.scenarioIds);
  if (s.statuses?.length) f.statuses = knownChoices('status(es)', s.statuses, TRIAL_ROW_STATUSES) as TrialRowStatus[];
  if (s.model) f.model = s.model;
  if (s.since) f.since = isoDate(s.since, '--since');
  if (s.until) f.until = isoDate(s.until, '--until');
  if (s.limit !== undefined) f.limit = s.limit;
  return f;
}

/** `given`, each one of `choices`; else a VALIDATION error naming the others and the choices ("unknown status(es): x (choose from …)"). */
function knownChoices(what: string, given: readonly string[], choices: readonly string[]): string[] {
  const bad = given.filter((x) => !choices.includes(x));
  if (bad.length > 0) throw new StoreError('VALIDATION', `unknown ${what}: ${bad.map(shownInput).join(', ')} (choose from ${choices.join(', ')})`);
  return [...given];
}

/**
 * Scenario ids a filter may name: the built-in ones, those imports file trials under (even before
 * any is stored), and any stored (a lab's own, from another tool): a typo selects nothing without a
 * word otherwise, and an export of it is a header-only file.
 */
function knownScenarios(store: Store, given: readonly string[]): string[] {
  const builtIn: readonly string[] = [...SCENARIO_IDS, IMPORTED_SCENARIO_ID, MULTI_HOST_SCENARIO_ID];
  if (given.every((id) => builtIn.includes(id))) return [...given];
  const stored = store.trialFacets().scenarioIds.filter((id) => !builtIn.includes(id));
  return knownChoices('scenario(s)', given, [...builtIn, ...stored]);
}

/** The filter flags history and export share (--suite, --system, --drive, --label, --scenario, --status, --model, --since, --until). */
export interface SelectionFlags {
  system?: readonly string[] | string;
  drive?: readonly string[] | string;
  /** Suite labels, repeatable and never split at commas: a label may hold one ("drive A, firmware 2.1"). */
  label?: readonly string[] | string;
  scenario?: readonly string[] | string;
  status?: readonly string[] | string;
  model?: string;
  since?: string;
  until?: string;
}

/** The selection those flags describe; suite ids are parsed (and checked) by the caller. */
export function selectionFromFlags(a: SelectionFlags, suiteIds: number[] | undefined): Selection {
  const systems = splitList(a.system);
  const drives = splitList(a.drive);
  const suiteLabels = a.label === undefined ? undefined : (Array.isArray(a.label) ? a.label : [a.label]);
  const scenarioIds = splitList(a.scenario);
  const statuses = splitList(a.status);
  return {
    ...(suiteIds ? { suiteIds } : {}),
    ...(systems ? { systems } : {}),
    ...(drives ? { drives } : {}),
    ...(suiteLabels?.length ? { suiteLabels } : {}),
    ...(scenarioIds ? { scenarioIds } : {}),
    ...(statuses ? { statuses } : {}),
    ...(a.model ? { model: a.model } : {}),
    ...(a.since ? { since: a.since } : {}),
    ...(a.until ? { until: a.until } : {}),
  };
}

/** Comma-separated list flags may be repeated: `--scenario a,b --scenario c`. */
export function splitList(values: readonly string[] | string | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const arr = Array.isArray(values) ? values : [values];
  const out = arr.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  return out.length > 0 ? out : undefined;
}

/** What narrows both sides of a comparison: scenarios, and (for two systems or drives) one suite label. */
export interface ComparisonNarrowing {
  scenarioIds?: readonly string[];
  /**
   * Only the trials of suites that carry this label, on both sides (two drives under one firmware
   * build); resolved as --label is everywhere, so a label no suite carries is refused in the same
   * words. Refused for two suite labels, whose sides are labels already.
   */
  suiteLabel?: string;
}

/** Two suite labels' sides are labels already: another label to narrow them by means nothing. */
function refuseLabelOfLabels(kind: ComparisonKind, narrow: ComparisonNarrowing): void {
  if (kind === 'label' && narrow.suiteLabel !== undefined) {
    throw new StoreError('VALIDATION', 'a suite label narrows a comparison of two systems or drives; two suite labels are compared as they are');
  }
}

/**
 * One side of a comparison: the trials of a system, of a drive, or of every suite that carries a
 * label (suites of one label pool, as a system's suites do; the comparison keeps each drive apart).
 * `ref` is an id, id prefix or label for a system or drive, the label itself for a suite label.
 */
export function comparisonSide(store: Store, kind: ComparisonKind, ref: string, narrow: ComparisonNarrowing = {}): { label: string; id: string; trials: TrialRecord[] } {
  const scenarios = narrow.scenarioIds?.length ? { scenarioIds: [...narrow.scenarioIds] } : {};
  refuseLabelOfLabels(kind, narrow);
  if (kind === 'label') {
    const label = store.resolveSuiteLabel(ref);
    return { label, id: label, trials: store.listTrials(resolveSelection(store, { suiteLabels: [label], ...scenarios })) };
  }
  const labels = narrow.suiteLabel !== undefined ? { suiteLabels: [narrow.suiteLabel] } : {};
  if (kind === 'drive') {
    const d = store.resolveDrive(ref);
    return { label: d.label, id: d.id, trials: store.listTrials(resolveSelection(store, { drives: [d.id], ...labels, ...scenarios })) };
  }
  const s = store.resolveSystem(ref);
  return { label: s.label, id: s.id, trials: store.listTrials(resolveSelection(store, { systems: [s.id], ...labels, ...scenarios })) };
}

/**
 * Both sides of a comparison, and the suite label they are narrowed to (resolved: trimmed, and
 * refused where no suite carries it, before either side is read), as buildSystemComparison takes it.
 */
export function comparisonSides(
  store: Store,
  kind: ComparisonKind,
  refA: string,
  refB: string,
  narrow: ComparisonNarrowing = {},
): { a: ReturnType<typeof comparisonSide>; b: ReturnType<typeof comparisonSide>; suiteLabel: string | null } {
  refuseLabelOfLabels(kind, narrow);
  const suiteLabel = narrow.suiteLabel === undefined ? null : resolveSelection(store, { suiteLabels: [narrow.suiteLabel] }).suiteLabels![0];
  const sideNarrow = { ...narrow, ...(suiteLabel !== null ? { suiteLabel } : {}) };
  return { a: comparisonSide(store, kind, refA, sideNarrow), b: comparisonSide(store, kind, refB, sideNarrow), suiteLabel };
}
