// How long the app's backend stops answering while it builds a large report or export. Both used to
// run on the backend's thread (`kvbench serve`, the Electron main process): a request sent meanwhile
// (the page's polling of suite.status, a running suite's live events) waited for the whole of it.
// Now they run on a worker thread (server/report-thread.ts).
//
// Side by side in one run, alternating, on a copy of the database (the given file is only read):
//   - before: the same answer built on the calling thread (report-jobs.ts's answerReportJob, the
//     code the handlers ran there), as the backend built it;
//   - after: the backend's own report.build / export.create (a worker thread).
// The report of one suite is measured too: what the worker costs where there is little to wait for
// (the workers are kept for the next job: the first one pays for starting one).
// Meanwhile a trivial request (suite.status) is sent to the backend every 50 ms; printed are the
// longest any of them waited for its answer, the longest the event loop did not turn (a 5 ms timer's
// worst lateness), the wall time, and the process's CPU seconds (the worker's included), with the
// ratios after ÷ before. The two answers are compared (they must be equal). Nothing gates on the
// numbers: they are measurements; on a shared machine, read the ratios.
//
//   node bench/report-off-thread.ts [--db FILE (copied; default: 2,000 trials built with seedVariedHistory)]
//     [--label "fw 2.1" (the selection: one suite label)] [--rounds 1] [--export (also a trials CSV of it)] [--json FILE]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { createBackend, type Backend } from '../src-main/server/backend.ts';
import { answerReportJob, type ReportJob } from '../src-main/server/report-jobs.ts';
import { atomicFileOf, commitAtomicFile } from '../src-main/util/write-file-atomic.ts';
import { openStore } from '../src-main/store/open-store.ts';
import { CONTRACT } from '../src-shared/ipc/contract.ts';
import { enableCompileCache } from '../src-main/util/compile-cache.ts';
import { seedVariedHistory } from '../test/unit/store/seed-store.ts';
import { cleanupAll, onCleanup } from './lib/cleanup.ts';
import { fmt, table } from './lib/stats.ts';
import { machineLine } from './lib/targets.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    label: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    export: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});

const PROBE_EVERY_MS = 50;
const TICK_MS = 5;

interface Measured {
  wallMs: number;
  cpuS: number;
  longestStallMs: number;
  /** The longest a suite.status sent meanwhile waited for its answer (from when it was due). */
  longestWaitMs: number;
  probes: number;
  value: unknown;
}

/** Runs `work` while probing the backend with suite.status every 50 ms and timing the event loop. */
async function measured(backend: Backend, work: () => Promise<unknown>): Promise<Measured> {
  let last = performance.now();
  let longestStall = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    longestStall = Math.max(longestStall, now - last - TICK_MS);
    last = now;
  }, TICK_MS);
  const waits: Promise<number>[] = [];
  let due = performance.now() + PROBE_EVERY_MS;
  let stopped = false;
  const probe = (): void => {
    if (stopped) return;
    // Timed from when it was due: a blocked event loop sends it late, and that wait is the point.
    const dueAt = due;
    waits.push(backend.invoke('suite.status', {}).then(() => performance.now() - dueAt));
    due += PROBE_EVERY_MS;
    setTimeout(probe, Math.max(0, due - performance.now()));
  };
  const first = setTimeout(probe, PROBE_EVERY_MS);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    const value = await work();
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    stopped = true;
    longestStall = Math.max(longestStall, performance.now() - last - TICK_MS);
    const all = await Promise.all(waits);
    // A probe that was due while the work ran and not yet sent (the loop blocked to the end) waited until now at least.
    const unsent = due < t0 + wallMs ? performance.now() - due : 0;
    return { wallMs, cpuS: (cpu.user + cpu.system) / 1e6, longestStallMs: Math.max(0, longestStall), longestWaitMs: Math.max(unsent, ...all), probes: all.length, value };
  } finally {
    stopped = true;
    clearTimeout(first);
    clearInterval(tick);
  }
}

async function main(): Promise<void> {
  // As bin/kvbench.js turns it on for `kvbench serve` (and app/entry.ts for the app): the worker's modules load from it.
  enableCompileCache();
  console.log(`report-off-thread: ${machineLine()}`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-bench-report-'));
  onCleanup(`rm -r ${root}`, () => fs.rmSync(root, { recursive: true, force: true }));
  const db = path.join(root, 'kvbench.db');
  if (values.db) {
    fs.copyFileSync(path.resolve(values.db), db);
    if (fs.existsSync(`${values.db}-wal`)) fs.copyFileSync(`${values.db}-wal`, `${db}-wal`);
  } else {
    const s = openStore(db);
    seedVariedHistory(s, 2000);
    s.close();
  }
  const label = values.label ?? (values.db ? 'fw 2.1' : 'revA');
  const backend = await createBackend({
    mode: 'browser',
    settingsFile: path.join(root, 'settings.json'),
    defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    detect: () => Promise.reject(new Error('no detection in this bench')),
  });
  // The calling thread's connection, as the backend's own was for these handlers.
  const here = openStore(db, { readonly: true });
  // The report the page asks for most (one suite's), then the large one.
  const suiteId = here.listSuites({ limit: 1 })[0].id;
  const jobs: ReportJob[] = [
    { channel: 'report.build', request: { selection: { suiteIds: [suiteId] } } },
    { channel: 'report.build', request: { selection: { suiteLabels: [label] } } },
  ];
  if (values.export) jobs.push({ channel: 'export.create', request: { selection: { suiteLabels: [label] }, format: 'csv' }, file: atomicFileOf(path.join(root, 'here.csv')) });
  const rows: string[][] = [['job', 'where', 'wall s', 'CPU s', 'longest wait of suite.status', 'longest event-loop stall', 'probes']];
  const out: Record<string, unknown>[] = [];
  try {
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const job of jobs) {
        // An export: the file written here (then read), against the one the page downloads.
        const before = await measured(backend, async () => {
          if (job.channel !== 'export.create') return CONTRACT[job.channel].response.parse(await answerReportJob(here, job));
          const written = await answerReportJob(here, job);
          await commitAtomicFile(job.file);
          return { ...written, data: fs.readFileSync(job.file.target).toString('base64') };
        });
        const after = await measured(backend, async () => {
          const r = await backend.invoke(job.channel, job.request);
          if (!r.ok) throw new Error(`${job.channel}: ${r.error.code}: ${r.error.message}`);
          if (job.channel !== 'export.create') return r.value;
          const v = r.value as { trialCount: number; bytes: number; unreadable?: string[]; delivery: { url: string } };
          const offered = backend.downloads.take(v.delivery.url.split('/').at(-1)!)!;
          const data = fs.readFileSync(offered.file).toString('base64');
          await backend.downloads.done(offered);
          return { bytes: v.bytes, trialCount: v.trialCount, unreadable: v.unreadable ?? [], data };
        });
        const comparable = (v: unknown): unknown => v;
        const equal = isDeepStrictEqual(comparable(JSON.parse(JSON.stringify(before.value))), comparable(after.value));
        const trials = (after.value as { trialCount: number }).trialCount;
        for (const [where, m] of [['backend thread (before)', before], ['worker thread (after)', after]] as const) {
          rows.push([`${job.channel} (${trials} trials)`, where, fmt(m.wallMs / 1000, 2), fmt(m.cpuS, 2), `${fmt(m.longestWaitMs, 0)} ms`, `${fmt(m.longestStallMs, 0)} ms`, String(m.probes)]);
        }
        rows.push(['', 'after ÷ before', fmt(after.wallMs / before.wallMs, 2), fmt(after.cpuS / before.cpuS, 2), fmt(after.longestWaitMs / before.longestWaitMs, 3), fmt(after.longestStallMs / before.longestStallMs, 3), equal ? 'answers equal' : 'ANSWERS DIFFER']);
        out.push({ round, job: job.channel, trials, equal, before: { ...before, value: undefined }, after: { ...after, value: undefined } });
        if (!equal) process.exitCode = 1;
      }
    }
  } finally {
    here.close();
    await backend.close();
  }
  console.log(table(rows));
  if (values.json) fs.writeFileSync(values.json, `${JSON.stringify(out, null, 2)}\n`);
}

try {
  await main();
} finally {
  cleanupAll();
}
