// How long the app stops answering while it reads a large damaged database: the salvage of a
// read-only copy (a Settings switch to the file, or the app's start on it) and the recovery into a
// new database ("Save what could be read as a new database…", database.recover). Both used to run
// on the backend's thread: every other request (the page's polling, a second tab) waited for them.
//
// Builds a database of --trials trials (one real `kvbench run` of tiny-1b imported, its rows copied:
// the stored results are a real run's size), overwrites one page of trials as a bad sector would
// (test/support/damaged-file.ts's scribble), then, side by side in one run:
//   - main thread: the same salvage and recovery called as the backend called them before
//     (openDamagedStore, recoverDatabase: what `kvbench recover` still does);
//   - backend: a real backend switching to the damaged file (settings.update) and recovering it
//     (database.recover), with an app.info sent 50 ms into each.
// For each: the wall time, the longest the event loop did not turn (a 5 ms timer's worst lateness),
// and how long the app.info sent meanwhile waited for its answer. Prints the ratios (backend ÷ main
// thread). Nothing gates on them: they are measurements. Also measured: what opening either file
// costs on the calling thread (openStore's quick_check, which every database's open runs there):
// what remains of the backend's stall is that.
//
//   node bench/salvage-off-thread.ts [--trials 10000] [--results FILE] [--dir DIR] [--json FILE] [--keep (the databases)]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createBackend, type Backend } from '../src-main/server/backend.ts';
import { openDamagedStore, openStore } from '../src-main/store/open-store.ts';
import { recoverDatabase } from '../src-main/store/recover.ts';
import { openDatabase } from '../src-main/store/sqlite.ts';
import { pagesOf, scribbled } from '../test/support/damaged-file.ts';
import { cleanupAll, onCleanup } from './lib/cleanup.ts';
import { KVBENCH_BIN, nodeBin } from './lib/measure.ts';
import { fmt, table } from './lib/stats.ts';
import { machineLine } from './lib/targets.ts';

const { values } = parseArgs({
  options: {
    trials: { type: 'string', default: '10000' },
    results: { type: 'string' },
    dir: { type: 'string' },
    json: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});

function kvbench(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(nodeBin(), [KVBENCH_BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

/** Copies trial 1 (with its metrics and histograms) until the database holds `n` trials, in one transaction. */
function multiplyTrials(file: string, n: number): { resultsGzipBytes: number } {
  const db = openDatabase(file);
  try {
    const cols = (table: string, skip: string): string =>
      (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[])
        .map((c) => c.name)
        .filter((c) => c !== skip)
        .map((c) => `"${c}"`)
        .join(', ');
    const trialCols = cols('trials', 'id');
    const metricCols = cols('trial_metrics', 'trial_id');
    const histCols = cols('trial_histograms', 'trial_id');
    const copy = db.transaction((count: number) => {
      for (let i = 1; i < count; i++) {
        // trial_index goes up so that (run_id, trial_index, attempt) stays unique.
        const id = Number(db.prepare(`INSERT INTO trials (${trialCols}) SELECT ${trialCols.replace('"trial_index"', `${i} AS trial_index`)} FROM trials WHERE id = 1`).run().lastInsertRowid);
        db.prepare(`INSERT INTO trial_metrics (trial_id, ${metricCols}) SELECT ?, ${metricCols} FROM trial_metrics WHERE trial_id = 1`).run(id);
        db.prepare(`INSERT INTO trial_histograms (trial_id, ${histCols}) SELECT ?, ${histCols} FROM trial_histograms WHERE trial_id = 1`).run(id);
      }
    });
    copy(n);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const resultsGzipBytes = Number((db.prepare('SELECT length(results_gzip) AS b FROM trials WHERE id = 1').get() as { b: number }).b);
    return { resultsGzipBytes };
  } finally {
    db.close();
  }
}

/** The longest the event loop did not turn while `work` runs: a 5 ms timer's worst lateness, in ms. */
async function withStallProbe<T>(work: () => Promise<T>): Promise<{ value: T; wallMs: number; longestStallMs: number }> {
  const TICK_MS = 5;
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - TICK_MS);
    last = now;
  }, TICK_MS);
  const t0 = performance.now();
  try {
    const value = await work();
    const wallMs = performance.now() - t0;
    longest = Math.max(longest, performance.now() - last - TICK_MS);
    return { value, wallMs, longestStallMs: Math.max(0, longest) };
  } finally {
    clearInterval(timer);
  }
}

/** Sends app.info `afterMs` into `work`; how long after that it was answered, and whether before `work` ended. */
async function withConcurrentRequest<T>(backend: Backend, afterMs: number, work: () => Promise<T>): Promise<{ value: T; waitMs: number; answeredFirst: boolean }> {
  let workDone = false;
  let answeredFirst = false;
  // Timed from when it was due: a blocked event loop sends it late, and that wait is the point.
  const due = performance.now() + afterMs;
  const asked = new Promise<number>((resolve) => {
    setTimeout(() => {
      void backend.invoke('app.info', {}).then(() => {
        answeredFirst = !workDone;
        resolve(performance.now() - due);
      });
    }, afterMs);
  });
  const value = await work();
  workDone = true;
  return { value, waitMs: await asked, answeredFirst };
}

interface Row {
  what: string;
  where: string;
  wallMs: number;
  longestStallMs: number;
  requestWaitMs: number | null;
  /** The app.info was answered before the salvage or recovery ended. */
  answeredDuring: boolean | null;
}

async function main(): Promise<void> {
  console.log(`salvage-off-thread: ${machineLine()}`);
  const n = Number(values.trials);
  if (!Number.isInteger(n) || n < 2) throw new Error('--trials takes an integer of at least 2');
  const root = fs.mkdtempSync(path.join(values.dir ?? os.tmpdir(), 'kvb-bench-salvage-'));
  if (values.keep) console.log(`files kept in ${root}`);
  else onCleanup(`rm -r ${root}`, () => fs.rmSync(root, { recursive: true, force: true }));

  let resultsFile = values.results;
  if (!resultsFile) {
    resultsFile = path.join(root, 'seed.json');
    const r = await kvbench(['run', '--model', 'tiny-1b', '--num-users', '4', '--duration', '3', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--generation-mode', 'none',
      '--seed', '1', '--cache-dir', root, '--output', resultsFile]);
    // 3: partial (a loaded machine completed no request in the window): its results file is still one to store.
    if (r.code !== 0 && !(r.code === 3 && fs.existsSync(resultsFile))) throw new Error(`kvbench run failed (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
  }
  const intact = path.join(root, 'intact.db');
  const imported = await kvbench(['import', resultsFile, '--system', 'bench', '--db', intact]);
  if (imported.code !== 0) throw new Error(`kvbench import failed (exit ${imported.code}):\n${imported.stderr.slice(-2000)}`);
  const { resultsGzipBytes } = multiplyTrials(intact, n);
  // A page of trials a tenth of the way in, overwritten.
  const leaves = pagesOf(intact).get('trials/leaf')!;
  const damaged = scribbled(intact, 'damaged.db', [leaves[Math.floor(leaves.length / 10)]]);
  const fileBytes = fs.statSync(damaged).size;
  console.log(`${n} trials (stored results ${fmt(resultsGzipBytes / 1024, 1)} KiB gzipped each), ${fmt(fileBytes / 2 ** 20, 1)} MiB; one page of trials overwritten`);

  const rows: Row[] = [];
  // The main thread: the calls the backend made before (and `kvbench recover` makes).
  const mainSalvage = await withStallProbe(async () => {
    const d = openDamagedStore(damaged, { chooseDatabase: 'in Settings' })!;
    const trials = d.store.trialFacets().trialCount;
    d.store.close();
    return trials;
  });
  rows.push({ what: 'salvage (open)', where: 'main thread', wallMs: mainSalvage.wallMs, longestStallMs: mainSalvage.longestStallMs, requestWaitMs: null, answeredDuring: null });
  const mainOut = path.join(root, 'main-recovered.db');
  const mainRecover = await withStallProbe(async () => recoverDatabase(damaged, mainOut, { chooseDatabase: 'in Settings' }).trials);
  rows.push({ what: 'recover', where: 'main thread', wallMs: mainRecover.wallMs, longestStallMs: mainRecover.longestStallMs, requestWaitMs: null, answeredDuring: null });

  // What opening any database costs on the backend's thread (openStore's quick_check): the damaged
  // file's first open (it fails there, before the salvage starts) and the recovered file's (the switch to it).
  const check = async (file: string): Promise<{ wallMs: number; longestStallMs: number }> =>
    withStallProbe(async () => {
      try {
        openStore(file, { readonly: true }).close();
      } catch {
        // the damaged file: refused after its check, as the app's open is
      }
    });
  const damagedCheck = await check(damaged);
  rows.push({ what: 'open check: damaged file', where: 'main thread', ...damagedCheck, requestWaitMs: null, answeredDuring: null });
  const recoveredCheck = await check(mainOut);
  rows.push({ what: 'open check: recovered file', where: 'main thread', ...recoveredCheck, requestWaitMs: null, answeredDuring: null });

  // The backend, as the app and `kvbench serve` run it.
  const healthy = path.join(root, 'healthy.db');
  const backend = await createBackend({
    mode: 'browser',
    settingsFile: path.join(root, 'settings.json'),
    defaults: { databasePath: healthy, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    detect: () => Promise.reject(new Error('no detection in this bench')),
  });
  let backendTrials: number;
  let backendRecovered: number;
  try {
    const sw = await withStallProbe(() => withConcurrentRequest(backend, 50, () => backend.invoke('settings.update', { databasePath: damaged })));
    if (!sw.value.value.ok) throw new Error(`settings.update: ${JSON.stringify(sw.value.value)}`);
    rows.push({ what: 'salvage (open)', where: 'backend', wallMs: sw.wallMs, longestStallMs: sw.longestStallMs, requestWaitMs: sw.value.waitMs, answeredDuring: sw.value.answeredFirst });
    const info = await backend.invoke('app.info', {});
    backendTrials = (info as { value: { databaseDamaged: { trialsRead: number } } }).value.databaseDamaged.trialsRead;
    const out = path.join(root, 'backend-recovered.db');
    const rc = await withStallProbe(() => withConcurrentRequest(backend, 50, () => backend.invoke('database.recover', { outPath: out })));
    if (!rc.value.value.ok) throw new Error(`database.recover: ${JSON.stringify(rc.value.value)}`);
    backendRecovered = (rc.value.value as { value: { recovery: { trials: number } } }).value.recovery.trials;
    rows.push({ what: 'recover', where: 'backend', wallMs: rc.wallMs, longestStallMs: rc.longestStallMs, requestWaitMs: rc.value.waitMs, answeredDuring: rc.value.answeredFirst });
  } finally {
    await backend.close();
  }
  if (backendTrials !== mainSalvage.value || backendRecovered !== mainRecover.value) {
    throw new Error(`the two paths read different trials: main thread ${mainSalvage.value}/${mainRecover.value}, backend ${backendTrials}/${backendRecovered}`);
  }
  console.log(`trials read: ${mainSalvage.value} of ${n} (both paths), recovered: ${mainRecover.value}`);
  console.log(
    `\n${table([
      ['work', 'where', 'wall (s)', 'longest event-loop stall (ms)', 'app.info due at 50 ms answered after (ms)', 'answered while it ran'],
      ...rows.map((r) => [r.what, r.where, fmt(r.wallMs / 1000), fmt(r.longestStallMs, 0), r.requestWaitMs === null ? '-' : fmt(r.requestWaitMs, 0), r.answeredDuring === null ? '-' : r.answeredDuring ? 'yes' : 'no']),
    ])}`,
  );
  for (const what of ['salvage (open)', 'recover']) {
    const m = rows.find((r) => r.what === what && r.where === 'main thread')!;
    const b = rows.find((r) => r.what === what && r.where === 'backend')!;
    console.log(`${what}: backend ÷ main thread: wall ${fmt(b.wallMs / m.wallMs)}×, longest stall ${fmt(b.longestStallMs / m.longestStallMs, 3)}×`);
  }
  if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ trials: n, fileBytes, resultsGzipBytes, rows }, null, 2)}\n`);
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`salvage-off-thread: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(cleanupAll);
