// History's filter counts come from SQL (Store.facetGroups, counted by countFacetGroups) instead of
// every trial in range read with its metrics and counted one by one (facetMatches over listTrials,
// as the backend did up to 0.7.0). The counts must be the same: here both ways, on a real SQLite
// file with a varied history (systems, drives, labels one of them stored untrimmed, models,
// scenarios, statuses, dates, deleted trials, an unfinished import, a trial whose options no longer
// parse), under many selections.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { countFacetGroups, facetMatches } from '../../../src-shared/domain/facet-matches.ts';
import type { TrialFilter } from '../../../src-shared/domain/store-types.ts';
import { removeTempDirs, tempDir } from './fixtures.ts';
import { seedVariedHistory, type VariedHistory } from './seed-store.ts';

let store: Store;
let history: VariedHistory;
let damagedTrialId: number;

beforeAll(() => {
  store = openStore(path.join(tempDir('kvb-facets-'), 'kvbench.db'));
  history = seedVariedHistory(store, 160);
  // Bytes overwritten in one trial's options: the list leaves it out, and so must its counts.
  damagedTrialId = store.listTrials({ statuses: ['complete'], order: 'asc' })[4].id;
  store.db.prepare(`UPDATE trials SET options_json = '{"model": "tiny' WHERE id = ?`).run(damagedTrialId);
  return () => {
    store.close();
    removeTempDirs();
  };
});

/** The counts as the backend made them before: every trial in range listed, then counted. */
const theOldWay = (f: TrialFilter) => facetMatches(store.listTrials({ suiteIds: f.suiteIds, since: f.since, until: f.until }), f);
const fromSql = (f: TrialFilter) => countFacetGroups(store.facetGroups(f), f);

describe('History\'s filter counts from SQL', () => {
  it('equal the counts of the listed trials, under every kind of selection', () => {
    const systems = store.listSystems().map((s) => s.id);
    const drives = store.listDrives().map((d) => d.id);
    const selections: TrialFilter[] = [
      {},
      { suiteLabels: ['revB'] },
      { suiteLabels: ['revA', 'firmware 2.1'] },
      { systemIds: [systems[0]] },
      { systemIds: [systems[0]], statuses: ['complete'] },
      { driveIds: [drives[0]], scenarioIds: ['cpu-only'] },
      { model: 'llama3.1-8b', scenarioIds: ['production'], statuses: ['failed', 'partial'] },
      { since: '2026-07-02T00:00:00.000Z', until: '2026-07-03T12:00:00.000Z' },
      { since: '2026-07-02T00:00:00.000Z', suiteLabels: ['revB'], systemIds: [systems[1]] },
      { suiteIds: [history.suiteIds[1], history.suiteIds[2]] },
      { suiteIds: [history.suiteIds[3]], statuses: ['aborted'], model: 'tiny-1b' },
      // A value no trial has: every other filter's counts are its trials' (none), and its own stay.
      { suiteLabels: ['no such label'] },
      { since: '2030-01-01T00:00:00.000Z' },
    ];
    for (const f of selections) expect(fromSql(f), JSON.stringify(f)).toEqual(theOldWay(f));
  });

  it('leave out deleted trials, an unfinished import\'s and a damaged one, and read labels trimmed', () => {
    const all = fromSql({});
    const listed = store.listTrials();
    expect(Object.values(all.statuses).reduce((a, b) => a + b, 0)).toBe(listed.length);
    expect(listed.map((t) => t.id)).not.toContain(damagedTrialId);
    expect(history.deletedTrialIds.length).toBeGreaterThan(0);
    expect(Object.keys(all.suiteLabels).sort()).toEqual(['firmware 2.1', 'revA', 'revB']); // not the import's revC, nor "  revB "
    expect(Object.keys(all.statuses).sort()).toEqual(['aborted', 'complete', 'failed', 'partial']);
    expect(Object.keys(all.models).sort()).toEqual(['llama3.1-8b', 'tiny-1b']);
    expect(Object.keys(all.drives)).toHaveLength(4);
  });
});
