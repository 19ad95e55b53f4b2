// How much memory reading a damaged database off the backend's thread takes at its peak
// (openDamagedStoreOffThread: the app's start on a damaged file, or a Settings switch to one). The
// worker copies what can be read into a database in memory, serializes it, copies the bytes into a
// buffer that can move to the backend's thread, and the backend opens a database in memory from them:
// several copies of the database, each as large as the file, may be alive at once.
//
// Each measurement runs in a fresh child process (one salvage, then its peak RSS: the process's, so
// the worker thread's memory counts), alternately with this checkout's code and, with --old DIR,
// another checkout's (e.g. `git archive <commit> | tar -x -C DIR`, node_modules linked), on one
// damaged file. Prints each run's peak above the process's RSS before the salvage, in MiB and as
// copies of the file, and the ratio new ÷ old. Nothing gates on them: they are measurements.
//
//   node bench/salvage-memory.ts --db DAMAGED.db [--old DIR] [--rounds 2] [--json FILE]
// DAMAGED.db: a damaged kvbench database, e.g. a copy of a large one with a page of trials
// overwritten (test/support/damaged-file.ts's scribbled, or `dd if=/dev/urandom … conv=notrunc`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { nodeBin } from './lib/measure.ts';
import { fmt, table } from './lib/stats.ts';
import { machineLine } from './lib/targets.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    old: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    json: { type: 'string' },
  },
});
if (!values.db) {
  console.error('usage: node bench/salvage-memory.ts --db DAMAGED.db [--old DIR] [--rounds 2] [--json FILE]');
  process.exit(2);
}
const db = path.resolve(values.db);
const rounds = Number(values.rounds);
const here = path.resolve(import.meta.dirname, '..');

interface Measured {
  baseRssBytes: number;
  peakRssBytes: number;
  cpuS: number;
  trials: number;
  unreadable: string[];
}

/** One salvage in a fresh process, with the code of checkout `dir`. */
function measure(dir: string): Measured {
  const script = `
    const { openDamagedStoreOffThread } = await import(${JSON.stringify(path.join(dir, 'src-main/store/salvage-thread.ts'))});
    const baseRssBytes = process.memoryUsage().rss;
    const cpu0 = process.cpuUsage();
    const d = await openDamagedStoreOffThread(${JSON.stringify(db)});
    const trials = d.store.db.prepare('SELECT COUNT(*) AS n FROM trials').get().n;
    const unreadable = [...d.store.unreadable];
    d.store.close();
    const cpu = process.cpuUsage(cpu0);
    console.log(JSON.stringify({ baseRssBytes, peakRssBytes: process.resourceUsage().maxRSS * 1024, cpuS: (cpu.user + cpu.system) / 1e6, trials, unreadable }));
  `;
  // A file, not --eval: the worker thread inherits the process's exec arguments (--input-type would stop it).
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-salvage-memory-')), 'measure.mjs');
  fs.writeFileSync(file, script);
  const r = spawnSync(nodeBin(), [file], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`salvage in ${dir} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Measured;
}

const fileBytes = fs.statSync(db).size;
console.log(`salvage-memory: ${machineLine()}`);
console.log(`${db}: ${fmt(fileBytes / 2 ** 20, 1)} MiB`);
const variants: [string, string][] = [['new', here], ...(values.old ? [['old', path.resolve(values.old)] as [string, string]] : [])];
const runs: { variant: string; m: Measured }[] = [];
for (let i = 0; i < rounds; i++) for (const [variant, dir] of i % 2 === 0 ? variants : [...variants].reverse()) runs.push({ variant, m: measure(dir) });

const aboveMiB = (m: Measured): number => (m.peakRssBytes - m.baseRssBytes) / 2 ** 20;
console.log(
  `\n${table([
    ['code', 'peak above start (MiB)', 'copies of the file', 'CPU s', 'trials read'],
    ...runs.map(({ variant, m }) => [variant, fmt(aboveMiB(m), 0), fmt((m.peakRssBytes - m.baseRssBytes) / fileBytes), fmt(m.cpuS, 1), String(m.trials)]),
  ])}`,
);
const same = runs.every((r) => r.m.trials === runs[0].m.trials && JSON.stringify(r.m.unreadable) === JSON.stringify(runs[0].m.unreadable));
console.log(`\nthe same copy read by every run (trials, notes): ${same ? 'yes' : 'NO'}`);
if (values.old) {
  const mean = (v: string, f: (m: Measured) => number): number => {
    const xs = runs.filter((r) => r.variant === v).map((r) => f(r.m));
    return xs.reduce((a, b) => a + b, 0) / xs.length;
  };
  console.log(`new ÷ old: peak memory above start ${fmt(mean('new', aboveMiB) / mean('old', aboveMiB))}×, CPU ${fmt(mean('new', (m) => m.cpuS) / mean('old', (m) => m.cpuS))}×`);
}
if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ db, fileBytes, runs }, null, 2)}\n`);
