// What opening History costs on a large database: the two backend calls its page makes on each load
// (history.list for a page, history.facets with the filters for the filters' counts), timed before and
// after each was moved into SQL, side by side in one run. "before" is each handler as it was up to 0.7.0,
// reproduced here: `facetsBefore` (every trial in range read and parsed, with its metrics, and counted in
// JavaScript) and `listBefore` (every trial of the selection read with its metrics, sorted in JavaScript,
// sliced: historyPageInMemory over listTrials); "after" is the backend's handler as it is now. Reps
// alternate before and after, since on a shared machine only numbers from the same minute compare: read
// the ratios, not the absolute times. Both CPU (process.cpuUsage: the calls are synchronous, so it is
// theirs) and wall times are given. The two answers are compared too (they must be equal).
//
//   node bench/history-load.ts [--trials 5000] [--reps 7] [--db FILE (reuse, or build it there and keep it)]
//
// The database is built through the store, as suites store their trials (seedVariedHistory): three
// systems, labels, two models, three scenarios, four statuses, deleted trials, an unfinished import.
// Building 5,000 trials takes about a minute; --db keeps the file for the next run. Any kvbench
// database can be given (the backend opens it to write: give a copy).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { resolveSelection } from '../src-main/export/selection.ts';
import { createBackend, selectionOf } from '../src-main/server/backend.ts';
import { openStore } from '../src-main/store/open-store.ts';
import { historyPageInMemory, type HistorySort } from '../src-main/store/history-order.ts';
import type { Store } from '../src-main/store/store.ts';
import { cautionsOf } from '../src-main/export/scenario-report.ts';
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

/** The list handler before this change, as it was (with the contract's parse, as invoke does it). */
function listBefore(s: Store, request: { selection: Selection; sort: HistorySort; limit: number; offset: number }): unknown {
  const { value: listed, unreadable } = s.readDamaged(() =>
    historyPageInMemory(s.listTrials({ ...resolveSelection(s, selectionOf(request.selection)), order: 'desc' }), request.sort, request.offset, request.limit),
  );
  const cautions = listed.trials.map((t) => ({ trialId: t.id, messages: cautionsOf(t).map((c) => c.message) })).filter((c) => c.messages.length > 0);
  return CONTRACT['history.list'].response.parse({ trials: listed.trials, total: listed.total, cautions, unreadable });
}

async function value(channel: string, request: unknown): Promise<unknown> {
  const r = await backend.invoke(channel, request);
  if (!r.ok) throw new Error(`${channel}: ${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** A call's wall and CPU milliseconds, and its answer. */
async function timed(call: () => unknown): Promise<{ wallMs: number; cpuMs: number; answer: unknown }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const answer = await call();
  const wallMs = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wallMs, cpuMs: (c.user + c.system) / 1000, answer };
}

const system = (reader.listSystems()[0] ?? { id: '' }).id;
const label = reader.suiteLabels()[0]?.label ?? 'revA';
// What History asks on opening (no filter: still a selection, {}), and after choosing filters.
const selections: [string, Selection][] = [
  ['History opened (no filter)', {}],
  [`a suite label (${label})`, { suiteLabels: [label] }],
  ['system + status + since', { systemIds: [system], statuses: ['complete'], since: '2026-08-01T00:00:00.000Z' }],
];
const firstPage = { sort: { key: 'startedAt', dir: 'desc' } as HistorySort, limit: 50, offset: 0 };

const shown = (reader.db.prepare('SELECT COUNT(*) AS n FROM trials').get() as { n: number }).n;
console.log(`${shown} trials stored in ${db} (${fmt(fs.statSync(db).size / 1024 ** 2, 1)} MiB); median of ${reps} reps each, before and after alternating`);

/** Medians of `reps` alternating reps (after one warm-up of each) of before and after, and whether every answer was the same. */
async function compare(before: () => unknown, after: () => unknown): Promise<{ b: { wallMs: number; cpuMs: number }; a: { wallMs: number; cpuMs: number }; same: boolean }> {
  const t = { bw: [] as number[], bc: [] as number[], aw: [] as number[], ac: [] as number[] };
  let same = true;
  for (let rep = -1; rep < reps; rep++) {
    const b = await timed(before);
    const a = await timed(after);
    same &&= isDeepStrictEqual(b.answer, a.answer);
    if (rep < 0) continue;
    t.bw.push(b.wallMs);
    t.bc.push(b.cpuMs);
    t.aw.push(a.wallMs);
    t.ac.push(a.cpuMs);
  }
  return { b: { wallMs: median(t.bw), cpuMs: median(t.bc) }, a: { wallMs: median(t.aw), cpuMs: median(t.ac) }, same };
}

// 1. History's load: list (first page) + facets, 0.7.0's handlers against today's.
const loadRows: string[][] = [['selection', 'facets CPU ms before → after', 'list CPU ms before → after', 'list ×', 'load CPU ms before → after', 'load ×', 'load wall ms before → after', 'same answer']];
for (const [name, selection] of selections) {
  const request = { selection, ...firstPage };
  const facets = await compare(() => facetsBefore(reader, selection), () => value('history.facets', { selection }));
  const list = await compare(() => listBefore(reader, request), () => value('history.list', request));
  loadRows.push([
    name,
    `${fmt(facets.b.cpuMs, 0)} → ${fmt(facets.a.cpuMs, 0)}`,
    `${fmt(list.b.cpuMs, 0)} → ${fmt(list.a.cpuMs, 0)}`,
    fmt(list.b.cpuMs / list.a.cpuMs, 1),
    `${fmt(facets.b.cpuMs + list.b.cpuMs, 0)} → ${fmt(facets.a.cpuMs + list.a.cpuMs, 0)}`,
    fmt((facets.b.cpuMs + list.b.cpuMs) / (facets.a.cpuMs + list.a.cpuMs), 1),
    `${fmt(facets.b.wallMs + list.b.wallMs, 0)} → ${fmt(facets.a.wallMs + list.a.wallMs, 0)}`,
    facets.same && list.same ? 'yes' : 'NO',
  ]);
}
console.log('\nHistory load (first page + facets):');
console.log(table(loadRows));

// 2. history.list alone under the sorts and pages the table offers (no filter: the whole history).
const total = (reader.db.prepare('SELECT COUNT(*) AS n FROM trials').get() as { n: number }).n;
const sorts: [string, HistorySort, number][] = [
  ['started, newest first, page 1', { key: 'startedAt', dir: 'desc' }, 0],
  ['started, oldest first, middle page', { key: 'startedAt', dir: 'asc' }, Math.floor(total / 100) * 50],
  ['E2E P95 (metric), ascending', { key: 'metric:e2e_p95_ms', dir: 'asc' }, 0],
  ['throughput (metric), descending, page 3', { key: 'metric:wall_clock_throughput_tok_per_s', dir: 'desc' }, 100],
  ['suite (number)', { key: 'suiteId', dir: 'asc' }, 0],
  ['system (text)', { key: 'system', dir: 'asc' }, 0],
  ['status (text), descending', { key: 'status', dir: 'desc' }, 50],
];
const listRows: string[][] = [['sort, page', 'CPU ms before', 'CPU ms after', 'CPU ×', 'wall ms before → after', 'same answer']];
for (const [name, sort, offset] of sorts) {
  const request = { selection: {}, sort, limit: 50, offset };
  const r = await compare(() => listBefore(reader, request), () => value('history.list', request));
  listRows.push([name, fmt(r.b.cpuMs, 0), fmt(r.a.cpuMs, 0), fmt(r.b.cpuMs / r.a.cpuMs, 1), `${fmt(r.b.wallMs, 0)} → ${fmt(r.a.wallMs, 0)}`, r.same ? 'yes' : 'NO']);
}
const ids = await timed(() => value('history.ids', { selection: {} }));
console.log('\nhistory.list, a page of 50 of the whole history:');
console.log(table(listRows));
console.log(`\nhistory.ids (select all ${(ids.answer as { trialIds: number[] }).trialIds.length} matching): ${fmt(ids.cpuMs, 0)} ms CPU, ${fmt(ids.wallMs, 0)} ms wall`);
reader.close();
await backend.close();
fs.rmSync(dir, { recursive: true, force: true });
