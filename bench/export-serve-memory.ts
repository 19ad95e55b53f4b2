// What an export costs `kvbench serve`'s process, this tree against another checkout (an older
// kvbench), side by side in one run. Each export is asked of a fresh server, as the page asks it
// (POST export.create with the token), and the file saved as the page saves it: the older kvbench
// answers the file as base64 inside its JSON reply; this one answers a one-time link, downloaded
// (streamed) here. Measured on the server's process: its peak RSS (VmHWM, worker threads included)
// above its RSS before the export, and its CPU seconds (user + sys). The saved files are compared:
// CSV byte for byte, JSON without its exportedAt, XLSX by size only (bench/xlsx-diff.ts compares cells).
// Read the ratios: on a shared machine wall time is noise.
//
//   node bench/export-serve-memory.ts --old /tmp/kvbench-0.7.0 --db /tmp/db5k.db [--what csv,json,xlsx]
//
// --old is a checkout with its node_modules (git worktree add, or git archive plus a node_modules link).
// The database is copied first (a server may write its WAL); the copy is removed at the end.

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { table } from './lib/stats.ts';

const { values } = parseArgs({ options: { old: { type: 'string' }, db: { type: 'string' }, what: { type: 'string', default: 'csv,json,xlsx' } } });
if (!values.old || !values.db) throw new Error('usage: node bench/export-serve-memory.ts --old CHECKOUT --db FILE [--what csv,json,xlsx]');
const roots = { before: path.resolve(values.old), after: path.resolve(import.meta.dirname, '..') };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-export-serve-'));
const db = path.join(dir, 'kvbench.db');
fs.copyFileSync(path.resolve(values.db), db);
const CLK_TCK = 100;

/** The server's RSS now and its peak (MiB), and its CPU seconds so far. */
function processNow(pid: number): { rssMiB: number; hwmMiB: number; cpuS: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024, cpuS: (Number(fields[11]) + Number(fields[12])) / CLK_TCK };
}

async function startServe(root: string): Promise<{ child: ChildProcess; origin: string; token: string }> {
  // Its own temporary and cache folders: the downloads wait in the one, the sound-file record goes in the other.
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: dir, XDG_CACHE_HOME: path.join(dir, 'cache') };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [path.join(root, 'bin', 'kvbench.js'), 'serve', '--port', '0', '--db', db, '--settings', path.join(dir, `settings-${path.basename(root)}.json`)], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`kvbench serve exited with ${code}:\n${out}`)));
  });
  const u = new URL(url);
  return { child, origin: u.origin, token: u.searchParams.get('token')! };
}

async function invoke(origin: string, token: string, channel: string, request: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${origin}/api/invoke/${channel}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify(request) });
  const body = (await res.json()) as { ok: boolean; value?: Record<string, unknown>; error?: unknown };
  if (!body.ok) throw new Error(`${channel}: ${JSON.stringify(body.error)}`);
  return body.value!;
}

/** One export asked of a fresh server of `root`, saved to `out` as the page saves it. */
async function measure(root: string, format: string, out: string): Promise<{ extraMiB: number; peakMiB: number; cpuS: number; bytes: number }> {
  const { child, origin, token } = await startServe(root);
  try {
    // The server as the page finds it: the database open, History listed once.
    await invoke(origin, token, 'history.list', { selection: {}, limit: 50 });
    const before = processNow(child.pid!);
    const answer = await invoke(origin, token, 'export.create', { selection: {}, format });
    if (typeof answer.dataBase64 === 'string') fs.writeFileSync(out, Buffer.from(answer.dataBase64, 'base64'));
    else {
      const res = await fetch(`${origin}${(answer.delivery as { url: string }).url}`);
      if (!res.ok || res.body === null) throw new Error(`download: ${res.status}`);
      await pipeline(Readable.fromWeb(res.body), fs.createWriteStream(out));
    }
    const after = processNow(child.pid!);
    return { extraMiB: after.hwmMiB - before.rssMiB, peakMiB: after.hwmMiB, cpuS: after.cpuS - before.cpuS, bytes: fs.statSync(out).size };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

const rows: string[][] = [];
const unstamped = (x: Buffer): string => x.toString('utf8').replace(/"exportedAt": "[^"]*"/, '');
try {
  for (const format of values.what.split(',')) {
    const files = { before: path.join(dir, `before.${format}`), after: path.join(dir, `after.${format}`) };
    const before = await measure(roots.before, format, files.before);
    const after = await measure(roots.after, format, files.after);
    const [a, b] = [fs.readFileSync(files.before), fs.readFileSync(files.after)];
    const same = format === 'xlsx' ? `sizes ${a.length} / ${b.length}` : format === 'json' ? String(unstamped(a) === unstamped(b)) : String(a.equals(b));
    rows.push([
      `${format} (${(after.bytes / 1024 / 1024).toFixed(1)} MiB)`,
      `${before.peakMiB.toFixed(0)} → ${after.peakMiB.toFixed(0)} MiB (${(before.peakMiB / after.peakMiB).toFixed(2)}×)`,
      `${before.extraMiB.toFixed(0)} → ${after.extraMiB.toFixed(0)} MiB (${(before.extraMiB / Math.max(after.extraMiB, 1)).toFixed(2)}×)`,
      `${before.cpuS.toFixed(2)} → ${after.cpuS.toFixed(2)} s (${(before.cpuS / after.cpuS).toFixed(2)}×)`,
      same,
    ]);
    console.log(rows.at(-1)!.join(' | '));
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(table([['export of every trial', 'server peak RSS before → after', 'peak above its RSS before the export', 'server CPU before → after', 'same file'], ...rows]));
