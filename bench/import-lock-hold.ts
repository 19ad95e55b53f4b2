// How long `kvbench import` holds the database's write lock, for imports of many files. While it
// holds it, every other writer (a suite storing its trial, the app) waits up to busy_timeout (10 s)
// and then fails, so the hold must stay short and grow linearly with the files, never with their
// square. Prints, per file count, the longest span a second connection could not take the lock
// (BEGIN IMMEDIATE polled every 10 ms, as a suite finishing a trial would try) and the import's
// wall time, then the verdict (bench/lib/verdicts.ts: lockHoldVerdict): hold per file at the largest
// count ÷ at the smallest at most √(count ratio), and no hold at or above the 10 s busy_timeout.
// Exits 1 on a MISS.
//
//   node bench/import-lock-hold.ts [--files 400,800,2000] [--results FILE (default: one
//        `kvbench run` of tiny-1b made here)] [--dir DIR (default: the temp dir)] [--json FILE]
//
// The files are copies of one results file with `requests_completed` changed, so each one's content
// differs and the import stores all of them (an identical file would be skipped as stored already).

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_BUSY_TIMEOUT_MS, openStore } from '../src-main/store/open-store.ts';
import { openDatabase } from '../src-main/store/sqlite.ts';
import { cleanupAll, onCleanup } from './lib/cleanup.ts';
import { KVBENCH_BIN, nodeBin, waitForQuiet } from './lib/measure.ts';
import { fmt, table } from './lib/stats.ts';
import { machineLine } from './lib/targets.ts';
import { lockHoldVerdict } from './lib/verdicts.ts';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '400,800,2000' },
    results: { type: 'string' },
    dir: { type: 'string' },
    json: { type: 'string' },
  },
});

const POLL_MS = 10;

function kvbench(args: readonly string[]): Promise<{ code: number | null; stderr: string; wallMs: number }> {
  const t0 = performance.now();
  const child = spawn(nodeBin(), [KVBENCH_BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr, wallMs: performance.now() - t0 }));
  });
}

/** Polls the write lock until `done` resolves; returns the longest span it could not be taken, in ms. */
async function longestLockHoldMs(dbFile: string, done: Promise<unknown>): Promise<number> {
  let finished = false;
  void done.finally(() => (finished = true));
  const db = openDatabase(dbFile, { timeout: 0 });
  let lockedSince: number | null = null;
  let longestMs = 0;
  try {
    while (!finished) {
      try {
        db.exec('BEGIN IMMEDIATE');
        db.exec('ROLLBACK');
        if (lockedSince !== null) longestMs = Math.max(longestMs, performance.now() - lockedSince);
        lockedSince = null;
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        if (!code.startsWith('SQLITE_BUSY') && !code.startsWith('SQLITE_LOCKED')) throw err;
        lockedSince ??= performance.now();
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    db.close();
  }
  if (lockedSince !== null) longestMs = Math.max(longestMs, performance.now() - lockedSince);
  return longestMs;
}

async function main(): Promise<void> {
  console.log(`import-lock-hold: ${machineLine()}`);
  const counts = values.files.split(',').map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error('--files takes positive integers, e.g. 400,800,2000');
  if (new Set(counts).size < 2) throw new Error('--files takes at least two different counts: the verdict compares the hold per file at the largest with the smallest');
  const root = fs.mkdtempSync(path.join(values.dir ?? os.tmpdir(), 'kvb-bench-import-'));
  onCleanup(`rm -r ${root}`, () => fs.rmSync(root, { recursive: true, force: true }));

  let resultsFile = values.results;
  if (!resultsFile) {
    resultsFile = path.join(root, 'seed.json');
    const r = await kvbench(['run', '--model', 'tiny-1b', '--num-users', '4', '--duration', '3', '--gpu-mem-gb', '0', '--cpu-mem-gb', '0', '--generation-mode', 'none',
      '--seed', '1', '--cache-dir', root, '--output', resultsFile]);
    if (r.code !== 0) throw new Error(`kvbench run failed (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
  }
  const seed = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as Record<string, unknown>;
  const baseCompleted = typeof seed.requests_completed === 'number' ? seed.requests_completed : 0;

  const rows: { files: number; longestHoldMs: number; importWallMs: number; quiet: boolean }[] = [];
  for (const n of counts) {
    const dir = path.join(root, `files-${n}`);
    fs.mkdirSync(dir);
    const files = Array.from({ length: n }, (_, i) => {
      const f = path.join(dir, `r${String(i).padStart(5, '0')}.json`);
      fs.writeFileSync(f, JSON.stringify({ ...seed, requests_completed: baseCompleted + 5000 + i }));
      return f;
    });
    const dbFile = path.join(root, `import-${n}.db`);
    // Created and migrated before the import, as a user's database is: a poller that opened the file
    // while the import was still switching it to WAL held it up for the whole busy_timeout (the import
    // failed with DB_BUSY), and the hold measured here is the import's, not the schema's creation.
    openStore(dbFile).close();
    const quiet = await waitForQuiet({ maxWaitS: 20 });
    const imported = kvbench(['import', ...files, '--system', 'bench', '--db', dbFile]);
    const [hold, r] = await Promise.all([longestLockHoldMs(dbFile, imported), imported]);
    if (r.code !== 0) throw new Error(`kvbench import of ${n} files failed (exit ${r.code}):\n${r.stderr.slice(-2000)}`);
    rows.push({ files: n, longestHoldMs: hold, importWallMs: r.wallMs, quiet: quiet.quiet });
    console.log(`${n} files: write lock held at most ${fmt(hold / 1000)} s, import ${fmt(r.wallMs / 1000)} s${quiet.quiet ? '' : ' (machine was busy)'}`);
  }
  console.log(
    `\n${table([
      ['files', 'longest write-lock hold (s)', 'hold per file (ms)', 'import wall (s)', 'quiet before'],
      ...rows.map((r) => [String(r.files), fmt(r.longestHoldMs / 1000), fmt(r.longestHoldMs / r.files), fmt(r.importWallMs / 1000), r.quiet ? 'yes' : 'no']),
    ])}`,
  );
  const verdict = lockHoldVerdict(rows, DEFAULT_BUSY_TIMEOUT_MS);
  console.log(`\n${verdict.lines.join('\n')}`);
  if (values.json) fs.writeFileSync(values.json, `${JSON.stringify({ rows, pass: verdict.pass, verdict: verdict.lines }, null, 2)}\n`);
  if (!verdict.pass) process.exitCode = 1;
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`import-lock-hold: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(cleanupAll);
