// What opening History costs on a large database: the two backend calls its page makes on each load
// (history.list for the first page, history.facets with the filters for the filters' counts), timed
// before and after the facets were counted in SQL, side by side in one run. "before" is the facets
// handler up to that change, reproduced here as `facetsBefore` (every trial in range read and parsed,
// with its metrics, and counted in JavaScript); "after" is the backend's handler as it is now. Reps
// alternate before and after, since on a shared machine only numbers from the same minute compare:
// read the ratios, not the absolute times. The two answers are compared too (they must be equal).
//
//   node bench/history-load.ts [--trials 5000] [--reps 7] [--db FILE (reuse, or build it there and keep it)]
//
// The database is built through the store, as suites store their trials (seedVariedHistory): three
// systems, labels, two models, three scenarios, four statuses, deleted trials, an unfinished import.
// Building 5,000 trials takes about a minute; --db keeps the file for the next run.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { resolveSelection } from '../src-main/export/selection.ts';
import { createBackend, selectionOf } from '../src-main/server/backend.ts';
import { openStore } from '../src-main/store/open-store.ts';
import type { Store } from '../src-main/store/store.ts';
import { facetMatches } from '../src-shared/domain/facet-matches.ts';
import { CONTRACT, type Selection } from '../src-shared/ipc/contract.ts';
import { seedVariedHistory } from '../test/unit/store/seed-store.ts';
import { fmt, median, table } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '5000' },
    reps: { type: 'string', default: '7' },
    db: { type: 'string' },
  },
});
const trials = Number(values.trials);
const reps = Number(values.reps);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-history-load-'));
const db = values.db ? path.resolve(values.db) : path.join(dir, 'kvbench.db');
if (!fs.existsSync(db)) {
  const t0 = performance.now();
  const s = openStore(db);
  seedVariedHistory(s, trials);
  s.close();
  console.log(`built ${db}: ${trials} trials in ${fmt((performance.now() - t0) / 1000, 1)} s`);
}

const backend = await createBackend({
  mode: 'browser',
  settingsFile: path.join(dir, 'settings.json'),
  defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
  databasePath: db,
  detect: () => Promise.reject(new Error('no detection in this bench')),
});
const reader = openStore(db, { readonly: true });

/** The facets handler before this change, as it was (with the contract's parse, as invoke does it). */
function facetsBefore(s: Store, selection: Selection): unknown {
  const all = { systems: s.listSystems(), drives: s.listDrives(), ...s.trialFacets() };
  const filter = resolveSelection(s, selectionOf(selection));
  const listed = s.listTrials({ suiteIds: filter.suiteIds, since: filter.since, until: filter.until });
  return CONTRACT['history.facets'].response.parse({ ...all, matching: facetMatches(listed, filter) });
}

async function value(channel: string, request: unknown): Promise<unknown> {
  const r = await backend.invoke(channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code}: ${r.error.message}`);
  return r.value;
}

const system = (reader.listSystems()[0] ?? { id: '' }).id;
// What History asks on opening (no filter: still a selection, {}), and after choosing filters.
const selections: [string, Selection][] = [
  ['History opened (no filter)', {}],
  ['a suite label', { suiteLabels: ['revA'] }],
  ['system + status + since', { systemIds: [system], statuses: ['complete'], since: '2026-08-01T00:00:00.000Z' }],
];

const msSince = (t0: number): number => performance.now() - t0;
const rows: string[][] = [['selection', 'facets before ms', 'facets after ms', 'facets ×', 'list + facets before ms', 'list + facets after ms', 'load ×', 'same answer']];
for (const [name, selection] of selections) {
  const listRequest = { selection, sort: { key: 'startedAt', dir: 'desc' }, limit: 50, offset: 0 };
  const t: Record<'listB' | 'facetsB' | 'listA' | 'facetsA', number[]> = { listB: [], facetsB: [], listA: [], facetsA: [] };
  let same = true;
  // One warm-up of each, then reps alternating.
  for (let rep = -1; rep < reps; rep++) {
    let t0 = performance.now();
    await value('history.list', listRequest);
    const listB = msSince(t0);
    t0 = performance.now();
    const before = facetsBefore(reader, selection);
    const facetsB = msSince(t0);
    t0 = performance.now();
    await value('history.list', listRequest);
    const listA = msSince(t0);
    t0 = performance.now();
    const after = await value('history.facets', { selection });
    const facetsA = msSince(t0);
    same &&= isDeepStrictEqual(before, after);
    if (rep < 0) continue;
    t.listB.push(listB);
    t.facetsB.push(facetsB);
    t.listA.push(listA);
    t.facetsA.push(facetsA);
  }
  const loadB = t.listB.map((x, i) => x + t.facetsB[i]);
  const loadA = t.listA.map((x, i) => x + t.facetsA[i]);
  rows.push([
    name,
    fmt(median(t.facetsB), 1),
    fmt(median(t.facetsA), 1),
    fmt(median(t.facetsB) / median(t.facetsA), 1),
    fmt(median(loadB), 1),
    fmt(median(loadA), 1),
    fmt(median(loadB) / median(loadA), 2),
    same ? 'yes' : 'NO',
  ]);
}
const shown = (reader.db.prepare('SELECT COUNT(*) AS n FROM trials').get() as { n: number }).n;
console.log(`${shown} trials stored in ${db} (${fmt(fs.statSync(db).size / 1024 ** 2, 1)} MiB); median of ${reps} reps each, before and after alternating`);
console.log(table(rows));
reader.close();
await backend.close();
fs.rmSync(dir, { recursive: true, force: true });
