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

function isoDate(s: string, flag: string): string {
  const d = new Date(s);
  if (Number.isNaN(d.getTime())) throw new StoreError('VALIDATION', `${flag} must be a date (YYYY-MM-DD or ISO 8601), got '${s}'`);
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

/** Comma-separated list flags may be repeated: `--scenario a,b --scenario c`. */
export function splitList(values: readonly string[] | string | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  const arr = Array.isArray(values) ? values : [values];
  const out = arr.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  return out.length > 0 ? out : undefined;
}
