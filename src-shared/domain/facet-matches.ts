// How History's filters narrow each other: each filter's values counted over the trials that the
// other active filters keep (not the filter itself, so that another of its values can still be
// chosen). A value with no trial there reads 0, instead of being offered only to give "Nothing matches".
//
// Pure TypeScript: no Node, no DOM.
import type { TrialFilter, TrialRecord } from './store-types.ts';

export const FACET_FILTERS = ['systems', 'drives', 'suiteLabels', 'models', 'scenarioIds', 'statuses'] as const;
export type FacetFilter = (typeof FACET_FILTERS)[number];
export type FacetMatches = Record<FacetFilter, Record<string, number>>;

/** Each filter: a trial's value for it, and the values the filter keeps (undefined: not active). */
const FACETS: Record<FacetFilter, { value: (t: TrialRecord) => string | null; kept: (f: TrialFilter) => readonly string[] | undefined }> = {
  systems: { value: (t) => t.systemId, kept: (f) => f.systemIds },
  drives: { value: (t) => t.driveId, kept: (f) => f.driveIds },
  // As the store filters labels: trimmed.
  suiteLabels: { value: (t) => t.suiteLabel?.trim() || null, kept: (f) => f.suiteLabels },
  // As the store's model column: the options' model where it is a string.
  models: { value: (t) => (typeof t.options.model === 'string' ? t.options.model : null), kept: (f) => (f.model === undefined ? undefined : [f.model]) },
  scenarioIds: { value: (t) => t.scenarioId, kept: (f) => f.scenarioIds },
  statuses: { value: (t) => t.status, kept: (f) => f.statuses },
};

/**
 * `trials` (already narrowed by what is not a facet: dates, suites) counted per facet value under
 * `filter`'s other facets.
 */
export function facetMatches(trials: readonly TrialRecord[], filter: TrialFilter): FacetMatches {
  const out = Object.fromEntries(FACET_FILTERS.map((n) => [n, {}])) as FacetMatches;
  const active = FACET_FILTERS.flatMap((n) => {
    const kept = FACETS[n].kept(filter);
    return kept !== undefined && kept.length > 0 ? [{ n, kept }] : [];
  });
  for (const t of trials) {
    const missed = active.filter(({ n, kept }) => !kept.includes(FACETS[n].value(t) ?? '')).map(({ n }) => n);
    if (missed.length > 1) continue;
    // Kept by every filter: counts for each. Missed by one: counts only for that one.
    for (const n of missed.length === 1 ? missed : FACET_FILTERS) {
      const v = FACETS[n].value(t);
      if (v !== null) out[n][v] = (out[n][v] ?? 0) + 1;
    }
  }
  return out;
}
