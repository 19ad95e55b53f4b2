// What pooling the latency histograms costs a scenario report over thousands of trials (kvbench report
// --all, every export, the app's report.build), before and after each stored histogram was decoded
// once, side by side in one run. "before" is pooledLatency up to 0.7.0 (test/support/pooled-before.ts:
// a checking decode, a second decode into a copy, a merge of the copy; once per pooled name), over the
// same groups as the report; "after" is pooledLatencies as buildScenarioReport calls it now. Reps
// alternate before and after, since on a shared machine only numbers from the same minute compare:
// read the ratios (CPU seconds of this process), not the absolute times. The two answers are compared
// too (they must be equal, every number). The whole report with histograms is timed as it is now.
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
const after: number[] = [];
const report: number[] = [];
for (let rep = 0; rep < reps; rep++) {
  const b = timed(() => groups.map((hs) => POOLED_HISTOGRAMS.map((n) => pooledBefore(n, hs)).filter((p) => p !== null)));
  const a = timed(() => groups.map((hs) => pooledLatencies(POOLED_HISTOGRAMS, hs)));
  if (!isDeepStrictEqual(a.value, b.value)) throw new Error('the pooled latencies differ before and after');
  before.push(b.cpuS);
  after.push(a.cpuS);
  report.push(timed(() => buildScenarioReport(trials, { histogramsOf })).cpuS);
}
const [b, a] = [median(before), median(after)];
console.log(
  table([
    ['', 'before (CPU s)', 'after (CPU s)', 'before ÷ after'],
    ['pooling, all groups', fmt(b), fmt(a), `${fmt(b / a, 1)}x`],
    ['per stored histogram (µs)', fmt((b / histograms) * 1e6, 0), fmt((a / histograms) * 1e6, 0), ''],
    ['whole report now (CPU s)', '', fmt(median(report)), ''],
  ]),
);
console.log(`\nmedians of ${reps} alternating reps; the answers were equal in every rep`);
fs.rmSync(dir, { recursive: true, force: true });
