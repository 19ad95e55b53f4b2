// History's page is read in SQL (Store.historyPage): only the page's trials, with their metrics,
// instead of every trial of the selection loaded, sorted in JS and sliced (the backend's history.list
// up to 0.7.0, copied below as it was). Same rows, same order, same total and the same damaged rows
// said, on a real SQLite file with a varied history: deleted trials, an unfinished import, damaged
// options, missing metrics, equal metrics, equal starts, labels that sort differently as text than as
// bytes; under every sort key, both directions, filters, and pages across the ends.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import type { TrialFilter, TrialRecord } from '../../../src-shared/domain/store-types.ts';
import { removeTempDirs, tempDir } from './fixtures.ts';
import { seedVariedHistory, type VariedHistory } from './seed-store.ts';

let store: Store;
let history: VariedHistory;
const damagedTrialIds: number[] = [];

// ---- The backend's history.list as it was (0.7.0, backend.ts), kept as the reference. ----
function sortValue(t: TrialRecord, key: string): string | number | null {
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
function compareValues(a: string | number | null, b: string | number | null): number {
  if (a === null && b === null) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}
type Sort = { key: string; dir: 'asc' | 'desc' } | undefined;
function theOldWay(filter: TrialFilter, sort: Sort, offset: number, limit: number) {
  return store.readDamaged(() => {
    const trials = store.listTrials({ ...filter, order: 'desc' });
    if (sort && sort.key !== 'startedAt') {
      const dir = sort.dir === 'asc' ? 1 : -1;
      const key = sort.key;
      trials.sort((a, b) => {
        const va = sortValue(a, key);
        const vb = sortValue(b, key);
        if (va === null || vb === null) return compareValues(va, vb);
        return dir * compareValues(va, vb) || b.id - a.id;
      });
    } else if (sort?.dir === 'asc') {
      trials.reverse();
    }
    return { trials: trials.slice(offset, offset + limit), total: trials.length };
  });
}
// ----

const fromSql = (filter: TrialFilter, sort: Sort, offset: number, limit: number) => store.readDamaged(() => store.historyPage(filter, sort, offset, limit));

beforeAll(() => {
  store = openStore(path.join(tempDir('kvb-history-page-'), 'kvbench.db'));
  history = seedVariedHistory(store, 240);
  const complete = store.listTrials({ statuses: ['complete'], order: 'asc' });
  // Bytes overwritten in two trials' options: left out, and said, wherever they fall.
  for (const t of [complete[4], complete[90]]) {
    store.db.prepare(`UPDATE trials SET options_json = '{"model": "tiny' WHERE id = ?`).run(t.id);
    damagedTrialIds.push(t.id);
  }
  // Equal starts (newest id first among them) and metrics missing from complete trials.
  const some = complete.slice(10, 40);
  for (const t of some.slice(0, 12)) store.db.prepare('UPDATE trials SET started_at = ? WHERE id = ?').run(some[0].startedAt, t.id);
  for (const t of some.slice(20, 26)) store.db.prepare("DELETE FROM trial_metrics WHERE trial_id = ? AND key = 'e2e_p95_ms'").run(t.id);
  // Labels localeCompare orders otherwise than SQLite's bytes: case, accents, punctuation.
  const systems = store.listSystems();
  const labels = ['Zeta lab', 'ärger-2', 'alpha 10'];
  systems.forEach((s, i) => store.db.prepare('UPDATE systems SET label = ? WHERE id = ?').run(labels[i % 3], s.id));
  return () => {
    store.close();
    removeTempDirs();
  };
});

const KEYS = [
  undefined,
  'startedAt',
  'metric:wall_clock_throughput_tok_per_s',
  'metric:storage_read_bytes_per_s',
  'metric:e2e_p95_ms',
  'metric:no_such_metric',
  'id',
  'suiteId',
  'wallMs',
  'suiteLabel',
  'system',
  'drive',
  'scenario',
  'status',
  'model',
  'no-such-key',
  'toString',
];

describe('History\'s page read in SQL', () => {
  it('is the page the old way gave, under every sort key, direction, filter and page', () => {
    const systems = store.listSystems().map((s) => s.id);
    const filters: TrialFilter[] = [
      {},
      { suiteLabels: ['revB'] },
      { systemIds: [systems[0]], statuses: ['complete', 'partial'] },
      { model: 'llama3.1-8b', scenarioIds: ['production', 'cpu-only'] },
      { since: '2026-07-02T00:00:00.000Z', until: '2026-07-09T12:00:00.000Z' },
      { suiteIds: [history.suiteIds[1], history.suiteIds[2]] },
      { statuses: ['aborted'] },
      { since: '2030-01-01T00:00:00.000Z' },
    ];
    let compared = 0;
    for (const filter of filters) {
      for (const key of KEYS) {
        for (const dir of ['asc', 'desc'] as const) {
          const sort = key === undefined ? undefined : { key, dir };
          for (const [offset, limit] of [[0, 50], [50, 50], [0, 5000], [37, 13], [200, 100], [5000, 50]]) {
            const old = theOldWay(filter, sort, offset, limit);
            const now = fromSql(filter, sort, offset, limit);
            const what = JSON.stringify({ filter, sort, offset, limit });
            expect(now.value, what).not.toBeNull();
            expect(now.value!.total, what).toBe(old.value.total);
            expect(now.value!.trials.map((t) => t.id), what).toEqual(old.value.trials.map((t) => t.id));
            expect(now.value!.trials, what).toEqual(old.value.trials);
            expect(now.unreadable, what).toEqual(old.unreadable);
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(filters.length * KEYS.length * 2 * 6);
  });

  it('leaves the damaged trials out, says each wherever the page is, and counts without them', () => {
    const page = fromSql({}, { key: 'metric:e2e_p95_ms', dir: 'asc' }, 0, 10);
    expect(page.value!.trials).toHaveLength(10);
    expect(page.unreadable).toHaveLength(2);
    for (const id of damagedTrialIds) expect(page.unreadable.join('\n')).toContain(`trial ${id} is left out`);
    expect(page.value!.total).toBe(store.listTrials().length);
    // Deleted trials and the unfinished import's are not History's.
    const ids = store.historyIds({}).map((t) => t.id);
    expect(ids).toHaveLength(page.value!.total);
    for (const id of [...history.deletedTrialIds, ...damagedTrialIds]) expect(ids).not.toContain(id);
  });

  it('lists for "select all matching" every trial of every page, in History\'s default order', () => {
    for (const filter of [{}, { suiteLabels: ['revA'] }, { statuses: ['failed' as const] }]) {
      const all = theOldWay(filter, undefined, 0, 100_000).value.trials;
      expect(store.historyIds(filter)).toEqual(all.map((t) => ({ id: t.id, suiteId: t.suiteId })));
    }
  });

  it('falls back (null) where SQLite calls options damaged that JSON.parse reads', () => {
    // SQLite nests JSON at most 1000 deep; JSON.parse reads deeper. Never written by kvbench: only the fallback is at stake.
    const t = store.listTrials({ order: 'asc' })[7];
    const deep = `{"model": "tiny-1b", "x": ${'['.repeat(1200)}${']'.repeat(1200)}}`;
    store.db.prepare('UPDATE trials SET options_json = ? WHERE id = ?').run(deep, t.id);
    try {
      expect(fromSql({}, undefined, 0, 50).value).toBeNull();
    } finally {
      store.db.prepare('UPDATE trials SET options_json = ? WHERE id = ?').run(JSON.stringify(t.options), t.id);
    }
  });
});
