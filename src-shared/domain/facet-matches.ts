// How History's filters narrow each other: each filter's values counted over the trials that the
// other active filters keep (not the filter itself, so that another of its values can still be
// chosen). A value with no trial there reads 0, instead of being offered only to give "Nothing matches".
//
// Pure TypeScript: no Node, no DOM.
import type { TrialFilter, TrialRecord } from './store-types.ts';

export const FACET_FILTERS = ['systems', 'drives', 'suiteLabels', 'models', 'scenarioIds', 'statuses'] as const;
export type FacetFilter = (typeof FACET_FILTERS)[number];
export type FacetMatches = Record<FacetFilter, Record<string, number>>;

/** A trial's value for each filter (null: it has none), as the store filters by it. */
export type FacetValues = Record<FacetFilter, string | null>;

/** Trials that share their value of every filter, and how many they are (Store.facetGroups counts them in SQL). */
export interface FacetGroup {
  values: FacetValues;
  trials: number;
}

/** The columns a trial's facet values come from (a TrialRecord's, or the store's columns of the same name). */
export interface FacetColumns {
  systemId: string;
  driveId: string | null;
  suiteLabel: string | null;
  model: string | null;
  scenarioId: string;
  status: string;
}

/** A trial's facet values: one rule for the records History lists and the store's grouped columns. */
export function facetValuesOf(c: FacetColumns): FacetValues {
  return {
    systems: c.systemId,
    drives: c.driveId,
    // As the store filters labels: trimmed.
    suiteLabels: c.suiteLabel?.trim() || null,
    models: c.model,
    scenarioIds: c.scenarioId,
    statuses: c.status,
  };
}

/** The values each filter keeps (undefined: not active). */
const KEPT: Record<FacetFilter, (f: TrialFilter) => readonly string[] | undefined> = {
  systems: (f) => f.systemIds,
  drives: (f) => f.driveIds,
  suiteLabels: (f) => f.suiteLabels,
  models: (f) => (f.model === undefined ? undefined : [f.model]),
  scenarioIds: (f) => f.scenarioIds,
  statuses: (f) => f.statuses,
};

/**
 * `groups` of trials (already narrowed by what is not a facet: dates, suites) counted per facet value
 * under `filter`'s other facets.
 */
export function countFacetGroups(groups: readonly FacetGroup[], filter: TrialFilter): FacetMatches {
  const out = Object.fromEntries(FACET_FILTERS.map((n) => [n, {}])) as FacetMatches;
  const active = FACET_FILTERS.flatMap((n) => {
    const kept = KEPT[n](filter);
    return kept !== undefined && kept.length > 0 ? [{ n, kept }] : [];
  });
  for (const { values, trials } of groups) {
    const missed = active.filter(({ n, kept }) => !kept.includes(values[n] ?? '')).map(({ n }) => n);
    if (missed.length > 1) continue;
    // Kept by every filter: counts for each. Missed by one: counts only for that one.
    for (const n of missed.length === 1 ? missed : FACET_FILTERS) {
      const v = values[n];
      if (v !== null) out[n][v] = (out[n][v] ?? 0) + trials;
    }
  }
  return out;
}

/**
 * `trials` (already narrowed by what is not a facet: dates, suites) counted per facet value under
 * `filter`'s other facets: the rule on the records History lists, which the backend applies to the
 * store's counts instead (countFacetGroups over Store.facetGroups) so as not to load every trial.
 */
export function facetMatches(trials: readonly TrialRecord[], filter: TrialFilter): FacetMatches {
  // The model as the store's model column holds it: the options' model where it is a string.
  const one = (t: TrialRecord): FacetGroup => ({ values: facetValuesOf({ ...t, model: typeof t.options.model === 'string' ? t.options.model : null }), trials: 1 });
  return countFacetGroups(trials.map(one), filter);
}
