// What pooling the latency histograms costs a scenario report over thousands of trials (kvbench report
// --all, every export, the app's report.build), three ways side by side in one run, over the same
// groups as the report: "0.7.0" is pooledLatency up to 0.7.0 (test/support/pooled-before.ts: a
// checking decode, a second decode into a copy, a merge of the copy; once per pooled name); "library"
// decodes each stored histogram once with the library, into a full counts array, straight into one
// merge per name (test/support/pooled-library.ts, as of the scale review); "now" is pooledLatencies as
// buildScenarioReport calls it, reading only the counts present (storedCounts). Reps alternate the
// three, since on a shared machine only numbers from the same minute compare: read the ratios (CPU
// seconds of this process), not the absolute times. The answers are compared too (they must be
// equal, every number). The whole report with histograms is timed as it is now.
//
//   node bench/pooled-latency.ts [--trials 3000] [--reps 3] [--db FILE (reuse, or build it there and keep it)]
//
// The database is built through the store, as suites store their trials (seedVariedHistory); --db
// may name any kvbench database, which is only read then (a copy of a lab's, for its real histograms).

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { POOLED_HISTOGRAMS, buildScenarioReport, pooledLatencies } from '../src-main/export/scenario-report.ts';
import { openStore } from '../src-main/store/open-store.ts';
import type { TrialHistogram } from '../src-shared/domain/store-types.ts';
import { pooledBefore } from '../test/support/pooled-before.ts';
import { pooledByLibrary } from '../test/support/pooled-library.ts';
import { seedVariedHistory } from '../test/unit/store/seed-store.ts';
import { fmt, median, table } from './lib/stats.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '3000' },
    reps: { type: 'string', default: '3' },
    db: { type: 'string' },
  },
});
const reps = Number(values.reps);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-pooled-latency-'));
const db = values.db ? path.resolve(values.db) : path.join(dir, 'kvbench.db');
if (!fs.existsSync(db)) {
  const t0 = performance.now();
  const s = openStore(db);
  seedVariedHistory(s, Number(values.trials));
  s.close();
  console.log(`built ${db}: ${values.trials} trials in ${fmt((performance.now() - t0) / 1000, 1)} s`);
}

const store = openStore(db, { readonly: true });
const trials = store.listTrials({ order: 'asc' });
const stored = new Map(trials.map((t) => [t.id, store.trialHistograms(t.id)]));
store.close();
const histogramsOf = (id: number): TrialHistogram[] => stored.get(id)!;
// The report's groups, each with the histograms of its counted trials in the report's order.
const groups = buildScenarioReport(trials).scenarios.map((sc) => sc.trialIds.flatMap(histogramsOf));
const histograms = groups.reduce((n, hs) => n + hs.filter((h) => POOLED_HISTOGRAMS.includes(h.name)).length, 0);
console.log(`${db}: ${trials.length} trials, ${groups.length} groups, ${histograms} stored histograms of the pooled names\n`);

const cpuS = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
function timed<T>(f: () => T): { value: T; cpuS: number } {
  const c0 = cpuS();
  const value = f();
  return { value, cpuS: cpuS() - c0 };
}

const before: number[] = [];
const library: number[] = [];
const after: number[] = [];
const report: number[] = [];
for (let rep = 0; rep < reps; rep++) {
  const b = timed(() => groups.map((hs) => POOLED_HISTOGRAMS.map((n) => pooledBefore(n, hs)).filter((p) => p !== null)));
  const l = timed(() => groups.map((hs) => pooledByLibrary(POOLED_HISTOGRAMS, hs)));
  const a = timed(() => groups.map((hs) => pooledLatencies(POOLED_HISTOGRAMS, hs)));
  // The old ways predate a pool's definition (olderDefinition): every trial here is of one.
  const unsplit = a.value.map((ps) => ps.map(({ olderDefinition: _, ...p }) => p));
  if (!isDeepStrictEqual(unsplit, b.value) || !isDeepStrictEqual(l.value, b.value)) throw new Error('the pooled latencies differ between the three ways');
  before.push(b.cpuS);
  library.push(l.cpuS);
  after.push(a.cpuS);
  report.push(timed(() => buildScenarioReport(trials, { histogramsOf })).cpuS);
}
const [b, l, a] = [median(before), median(library), median(after)];
const us = (s: number): string => fmt((s / histograms) * 1e6, 0);
console.log(
  table([
    ['', '0.7.0 (CPU s)', 'library decode (CPU s)', 'now (CPU s)', 'library ÷ now', '0.7.0 ÷ now'],
    ['pooling, all groups', fmt(b), fmt(l), fmt(a), `${fmt(l / a, 1)}x`, `${fmt(b / a, 1)}x`],
    ['per stored histogram (µs)', us(b), us(l), us(a), '', ''],
    ['whole report now (CPU s)', '', '', fmt(median(report)), '', ''],
  ]),
);
console.log(`\nmedians of ${reps} alternating reps; the answers were equal in every rep`);
fs.rmSync(dir, { recursive: true, force: true });
