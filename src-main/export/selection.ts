// Which trials a report, history listing or export covers: one selection model shared by the CLI
// and (next) the app, resolved against the store.
import { TRIAL_ROW_STATUSES, type TrialFilter, type TrialRowStatus } from '../../src-shared/domain/store-types.ts';
import { StoreError } from '../store/store-error.ts';
import type { Store } from '../store/store.ts';

export interface Selection {
  suiteIds?: number[];
  /** Ids, id prefixes or labels. */
  systems?: string[];
  drives?: string[];
  scenarioIds?: string[];
  statuses?: string[];
  model?: string;
  since?: string;
  until?: string;
  limit?: number;
}

const DAY_MS = 86_400_000;

/**
 * A --since/--until value as the UTC instant the stored start times are compared with. Times are
 * UTC unless they carry an offset (as the listings show them); a bare date given to --until means
 * the end of that day, so `--until 2026-11-24` includes the trials of the 24th.
 */
export function isoDate(s: string, flag: '--since' | '--until'): string {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(s);
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(s);
  const text = dateOnly ? `${s}T00:00:00Z` : /^\d{4}-\d{2}-\d{2}[T ]\d/.test(s) && !hasZone ? `${s.replace(' ', 'T')}Z` : s;
  const d = new Date(text);
  if (Number.isNaN(d.getTime())) throw new StoreError('VALIDATION', `${flag} must be a date (YYYY-MM-DD or ISO 8601), got '${s}'`);
  if (dateOnly && flag === '--until') return new Date(d.getTime() + DAY_MS - 1).toISOString();
  return d.toISOString();
}

/** The selection as a store filter; system and drive references resolved to ids. */
export function resolveSelection(store: Store, s: Selection): TrialFilter {
  const f: TrialFilter = {};
  if (s.suiteIds?.length) f.suiteIds = s.suiteIds;
  if (s.systems?.length) f.systemIds = s.systems.map((r) => store.resolveSystem(r).id);
  if (s.drives?.length) f.driveIds = s.drives.map((r) => store.resolveDrive(r).id);
  if (s.scenarioIds?.length) f.scenarioIds = s.scenarioIds;
  if (s.statuses?.length) {
    const bad = s.statuses.filter((x) => !(TRIAL_ROW_STATUSES as readonly string[]).includes(x));
    if (bad.length > 0) throw new StoreError('VALIDATION', `unknown status(es): ${bad.join(', ')} (choose from ${TRIAL_ROW_STATUSES.join(', ')})`);
    f.statuses = s.statuses as TrialRowStatus[];
  }
  if (s.model) f.model = s.model;
  if (s.since) f.since = isoDate(s.since, '--since');
  if (s.until) f.until = isoDate(s.until, '--until');
  if (s.limit !== undefined) f.limit = s.limit;
  return f;
}

/** The filter flags history and export share (--suite, --system, --drive, --scenario, --status, --model, --since, --until). */
export interface SelectionFlags {
  system?: readonly string[] | string;
  drive?: readonly string[] | string;
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
  const scenarioIds = splitList(a.scenario);
  const statuses = splitList(a.status);
  return {
    ...(suiteIds ? { suiteIds } : {}),
    ...(systems ? { systems } : {}),
    ...(drives ? { drives } : {}),
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
