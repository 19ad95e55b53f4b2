// What `kvbench export` (each format) and `history --limit 0 --json` cost on a large database, this
// tree against another checkout (an older kvbench), side by side in one run: each command runs under
// /usr/bin/time in both, alternately, and the CPU seconds (user + sys) and peak RSS are compared. The
// outputs are compared too: CSV and history JSON byte for byte, the export JSON with its exportedAt
// set aside (the XLSX: see docs/benchmarks.md). Read the ratios: on a shared machine wall time is noise.
//
//   node bench/export-scale.ts --old /tmp/kvbench-0.7.0 --db /tmp/db5k.db [--what csv,rcsv,json,xlsx,hjson]
//
// --old is a checkout with its node_modules (git worktree add, or git archive plus a node_modules link).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { table } from './lib/stats.ts';

const { values } = parseArgs({ options: { old: { type: 'string' }, db: { type: 'string' }, what: { type: 'string', default: 'csv,rcsv,json,xlsx,hjson' } } });
if (!values.old || !values.db) throw new Error('usage: node bench/export-scale.ts --old CHECKOUT --db FILE [--what csv,rcsv,json,xlsx,hjson]');
const roots = { before: path.resolve(values.old), after: path.resolve(import.meta.dirname, '..') };
const db = path.resolve(values.db);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-export-scale-'));

const ARGS: Record<string, (out: string) => string[]> = {
  csv: (out) => ['export', '--db', db, '--out', `${out}.csv`],
  rcsv: (out) => ['export', '--db', db, '--content', 'report', '--out', `${out}.report.csv`],
  json: (out) => ['export', '--db', db, '--out', `${out}.json`],
  xlsx: (out) => ['export', '--db', db, '--out', `${out}.xlsx`],
  hjson: () => ['history', '--db', db, '--limit', '0', '--json'],
};
const OUTPUT: Record<string, (out: string) => string> = { csv: (o) => `${o}.csv`, rcsv: (o) => `${o}.report.csv`, json: (o) => `${o}.json`, xlsx: (o) => `${o}.xlsx`, hjson: (o) => `${o}.stdout` };

/** CPU seconds and peak RSS (MiB) of one command, its stdout kept in `${out}.stdout`. */
function measure(root: string, what: string, out: string): { cpuS: number; rssMiB: number } {
  const timing = `${out}.time`;
  const stdout = fs.openSync(`${out}.stdout`, 'w');
  try {
    execFileSync('/usr/bin/time', ['-f', '%U %S %M', '-o', timing, process.execPath, path.join(root, 'bin/kvbench.js'), ...ARGS[what](out)], { cwd: root, stdio: ['ignore', stdout, 'ignore'] });
  } finally {
    fs.closeSync(stdout);
  }
  const [user, sys, rssKiB] = fs.readFileSync(timing, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return { cpuS: user + sys, rssMiB: rssKiB / 1024 };
}

const rows: string[][] = [];
for (const what of values.what.split(',')) {
  const r = { before: measure(roots.before, what, path.join(dir, `${what}-before`)), after: measure(roots.after, what, path.join(dir, `${what}-after`)) };
  const [a, b] = [OUTPUT[what](path.join(dir, `${what}-before`)), OUTPUT[what](path.join(dir, `${what}-after`))].map((f) => fs.readFileSync(f));
  const unstamped = (x: Buffer): string => x.toString('utf8').replace(/"exportedAt": "[^"]*"/, '');
  const same = what === 'xlsx' ? 'see xlsx-diff' : what === 'json' ? String(unstamped(a) === unstamped(b)) : String(a.equals(b));
  rows.push([what, `${r.before.cpuS.toFixed(2)} → ${r.after.cpuS.toFixed(2)} s (${(r.before.cpuS / r.after.cpuS).toFixed(1)}×)`, `${r.before.rssMiB.toFixed(0)} → ${r.after.rssMiB.toFixed(0)} MiB (${(r.before.rssMiB / r.after.rssMiB).toFixed(1)}×)`, same]);
}
console.log(table([['command', 'CPU before → after', 'peak RSS before → after', 'same output'], ...rows]));
fs.rmSync(dir, { recursive: true, force: true });
