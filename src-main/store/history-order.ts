// History's order of trials (the app's table, `history.list`): by when they started, newest first unless
// asked otherwise, or by one value of each trial (a metric, the system, the status …). One rule, read two
// ways: in memory over loaded trials (historyPageInMemory, the reference) and by the store's SQL page
// (Store.historyPage), which reads only the page's trials.
import type { TrialRecord } from '../../src-shared/domain/store-types.ts';

export interface HistorySort {
  /** A record field (HISTORY_SORT_COLUMNS), `metric:<key>`, or 'startedAt'; any other key orders by the start. */
  key: string;
  dir: 'asc' | 'desc';
}

export type SortValue = string | number | null;

/** The sort keys that are a trial's own fields, with the SQL of each (on `trials t JOIN suites su JOIN systems s LEFT JOIN drives d`). */
export const HISTORY_SORT_COLUMNS = {
  id: { sql: 't.id', numeric: true },
  suiteId: { sql: 't.suite_id', numeric: true },
  wallMs: { sql: 't.wall_ms', numeric: true },
  suiteLabel: { sql: "NULLIF(trim(su.label), '')", numeric: false },
  system: { sql: 's.label', numeric: false },
  drive: { sql: 'd.label', numeric: false },
  scenario: { sql: 't.scenario_id', numeric: false },
  status: { sql: 't.status', numeric: false },
  // options.model when it is text, as the record's options read it (json_valid rows only).
  model: { sql: "CASE WHEN json_type(t.options_json, '$.model') = 'text' THEN json_extract(t.options_json, '$.model') END", numeric: false },
} as const satisfies Record<string, { sql: string; numeric: boolean }>;

/** A trial's value of a sort key: a record field, or `metric:<key>` (missing: null). */
export function sortValue(t: TrialRecord, key: string): SortValue {
  if (key.startsWith('metric:')) return t.metrics[key.slice(7)] ?? null;
  switch (key) {
    case 'id':
      return t.id;
    case 'suiteId':
      return t.suiteId;
    case 'suiteLabel':
      return t.suiteLabel;
    case 'system':
      return t.systemLabel;
    case 'drive':
      return t.driveLabel;
    case 'scenario':
      return t.scenarioId;
    case 'status':
      return t.status;
    case 'wallMs':
      return t.wallMs;
    case 'model':
      return typeof t.options.model === 'string' ? t.options.model : null;
    default:
      return t.startedAt;
  }
}

function compareValues(a: SortValue, b: SortValue): number {
  if (a === null && b === null) return 0;
  if (a === null) return 1; // missing values last, whatever the direction
  if (b === null) return -1;
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}

/**
 * Two trials by their values of the sort key: in `dir`, equal values newest id first, missing values
 * last whatever the direction (a stable sort keeps them in the order they came: newest start first).
 */
export function compareSorted(a: { id: number; v: SortValue }, b: { id: number; v: SortValue }, dir: 'asc' | 'desc'): number {
  if (a.v === null || b.v === null) return compareValues(a.v, b.v);
  return (dir === 'asc' ? 1 : -1) * compareValues(a.v, b.v) || b.id - a.id;
}

/**
 * The page of History over every trial of the selection loaded (newest start first, as listTrials
 * 'desc' reads them), and how many there are: the reference Store.historyPage keeps to, and its way
 * where SQL and JSON.parse disagree about a row.
 */
export function historyPageInMemory(newestFirst: TrialRecord[], sort: HistorySort | undefined, offset: number, limit: number): { trials: TrialRecord[]; total: number } {
  let trials = newestFirst;
  if (sort && sort.key !== 'startedAt') {
    const key = sort.key;
    trials = newestFirst
      .map((t) => ({ t, id: t.id, v: sortValue(t, key) }))
      .sort((a, b) => compareSorted(a, b, sort.dir))
      .map((x) => x.t);
  } else if (sort?.dir === 'asc') {
    trials = [...newestFirst].reverse();
  }
  return { trials: trials.slice(offset, offset + limit), total: trials.length };
}
