// What PRAGMA quick_check at open costs a command that only reads: `kvbench history` (its default 50
// rows) on a large database, as three kinds of call, alternating in one run (on a shared machine only
// numbers from the same minute compare: read the ratios):
//   always   the check made at every open, as before the record of sound files (a cache directory
//            that cannot be written: the record is never kept, so every call checks)
//   first    the first call on the file: the check, and the record of it written (an empty cache directory)
//   second   a later call on the file unchanged: the check skipped (the record matches)
// Each is a `node bin/kvbench.js history` process; its CPU seconds (user + sys) come from /usr/bin/time.
// The three print the same listing (compared).
//
//   node bench/open-check.ts --db FILE [--reps 3]
//
// FILE is only read (copy a database there first: a reader's open may mark dead runners' trials);
// it must not have been modified in the last 2 s (a file modified so recently is not recorded).

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { compileCacheDirectory } from '../src-main/util/compile-cache.ts';
import { fmt, median, table } from './lib/stats.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, reps: { type: 'string', default: '3' } } });
if (!values.db) throw new Error('--db FILE is required');
const db = path.resolve(values.db);
const reps = Number(values.reps);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-open-check-'));
const cli = path.join(import.meta.dirname, '..', 'bin', 'kvbench.js');
const notADir = path.join(dir, 'not-a-dir');
fs.writeFileSync(notADir, '');
const primed = path.join(dir, 'primed');
const compileCache = compileCacheDirectory();

/** One `kvbench history` with XDG_CACHE_HOME=cache: its CPU seconds and its listing. */
function history(cache: string): { cpuS: number; out: string } {
  const timeFile = path.join(dir, 'time.txt');
  const r = spawnSync('/usr/bin/time', ['-o', timeFile, '-f', '%U %S', process.execPath, cli, 'history', '--db', db], {
    // The compile cache stays where it is (it too lives under XDG_CACHE_HOME): only the record moves.
    env: { ...process.env, XDG_CACHE_HOME: cache, NODE_COMPILE_CACHE: compileCache },
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`history failed (${r.status}): ${r.stderr}`);
  const [user, sys] = fs.readFileSync(timeFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number);
  return { cpuS: user + sys, out: r.stdout };
}

execFileSync('sync');
history(primed); // the record made once for "second"
const cpu: Record<'always' | 'first' | 'second', number[]> = { always: [], first: [], second: [] };
let listing: string | null = null;
for (let i = 0; i < reps; i++) {
  for (const kind of ['always', 'first', 'second'] as const) {
    const cache = kind === 'always' ? notADir : kind === 'first' ? fs.mkdtempSync(path.join(dir, 'fresh-')) : primed;
    const r = history(cache);
    if (listing !== null && r.out !== listing) throw new Error(`${kind}: a different listing`);
    listing = r.out;
    cpu[kind].push(r.cpuS);
  }
}
const sizeMiB = fs.statSync(db).size / 2 ** 20;
console.log(`kvbench history (50 rows) on ${db} (${fmt(sizeMiB, 0)} MiB), ${reps} rep(s) each, CPU s (user + sys), median:`);
const base = median(cpu.always);
console.log(
  table([
    ['call', 'CPU s (median)', 'each rep', 'vs always'],
    ...(['always', 'first', 'second'] as const).map((k) => [k, fmt(median(cpu[k]), 2), cpu[k].map((x) => fmt(x, 2)).join(' '), `${fmt(median(cpu[k]) / base, 2)}×`]),
  ]),
);
console.log('the three listings are the same');
fs.rmSync(dir, { recursive: true, force: true });
