// An import killed (SIGKILL) midway, after some of its batches were staged: the database file holds
// nothing of it (no row in any table, for any reader), nothing is left to clean up, and the import
// run again stores every file once. A real process on a real database, killed once it says a batch
// was staged, not after a guessed delay.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { referenceResultsNew, writeResults } from '../../unit/store/fixtures.ts';
import { cliEnv, explain, makeTempDir, removeTempDirs, runCli, waitFor } from '../cli/cli-harness.ts';

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  removeTempDirs();
});

/** Rows of every table an import writes, in the database file as it is (its -wal included). */
function rawCounts(db: string): Record<string, number> {
  const d = openDatabase(db, { readonly: true, fileMustExist: true });
  try {
    const n = (table: string): number => (d.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    return Object.fromEntries(['systems', 'drives', 'suites', 'runs', 'trials', 'trial_metrics', 'trial_histograms'].map((t) => [t, n(t)]));
  } finally {
    d.close();
  }
}

describe('kvbench import killed midway', () => {
  it('leaves nothing of the import in the file, nothing to remove, and the import again stores each file once', { timeout: 180_000 }, async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    openStore(db).close(); // migrated, as a user's database is
    const empty = rawCounts(db);
    const files = Array.from({ length: 60 }, (_, i) =>
      writeResults(tmp, `r${String(i).padStart(4, '0')}.json`, referenceResultsNew({ tokPerS: 100 + i, storageTokPerS: 50 + i })),
    );
    const importer = fileURLToPath(new URL('./import-then-hang.ts', import.meta.url));
    // Batches of 10; it stops after the third (30 files staged) and is killed there.
    const child = spawn(process.execPath, [importer, db, '10', '30', ...files], { cwd: tmp, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let err = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
    const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
    await waitFor('the import to stage its third batch', () => out.includes('staged 30\n') || child.exitCode !== null, 120_000);
    expect(out, err).toBe('staged 10\nstaged 20\nstaged 30\n');
    // Meanwhile nothing of it is in the file.
    expect(rawCounts(db)).toEqual(empty);
    child.kill('SIGKILL');
    expect(await ended).toBe('SIGKILL');

    // Nothing in the file, for any reader, and nothing for the next open to remove.
    expect(rawCounts(db)).toEqual(empty);
    const history = await runCli(['history', '--db', db, '--json'], { cwd: tmp });
    expect(history.code, explain(history)).toBe(0);
    expect(JSON.parse(history.stdout)).toEqual([]);
    expect(rawCounts(db)).toEqual(empty);

    // Run again (the real command): every file once.
    const args = ['import', ...files, '--system', 'lab', '--drive', 'nvme0', '--db', db];
    const again = await runCli(args, { cwd: tmp });
    expect(again.code, explain(again)).toBe(0);
    expect(again.stdout.match(/^imported /gm)).toHaveLength(files.length);
    expect(rawCounts(db)).toMatchObject({ systems: 1, drives: 1, suites: 1, runs: files.length, trials: files.length });
    const d = openDatabase(db, { readonly: true });
    try {
      expect(d.prepare('SELECT COUNT(DISTINCT results_digest) AS n FROM trials').get()).toEqual({ n: files.length });
      expect(d.prepare("SELECT COUNT(*) AS n FROM suites WHERE status = 'finished'").get()).toEqual({ n: 1 });
    } finally {
      d.close();
    }
  });
});
