// `kvbench import` killed (SIGKILL) between its batches: the batches it committed are in the file,
// yet no reader ever sees them as an import, the next open removes them, and the import run again
// stores every file once. The real command on a real database; killed once the file shows a
// committed batch, not after a guessed delay.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { referenceResultsNew, writeResults } from '../../unit/store/fixtures.ts';
import { explain, killStarted, makeTempDir, removeTempDirs, runCli, startCli, waitFor, type CliProcess } from '../cli/cli-harness.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  removeTempDirs();
});

/** One number from the database file as it is (hidden rows included), or null while it cannot be read. */
function raw(db: string, sql: string): number | null {
  try {
    const d = openDatabase(db, { readonly: true, fileMustExist: true, timeout: 0 });
    try {
      return (d.prepare(sql).get() as { n: number }).n;
    } finally {
      d.close();
    }
  } catch {
    return null;
  }
}

describe('kvbench import killed midway', () => {
  it('leaves no half import that reads as finished; the next open removes it, and the import again stores each file once', { timeout: 180_000 }, async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'kvbench.db');
    openStore(db).close(); // migrated, as a user's database is
    // Enough files for several batches (IMPORT_BATCH_FILES, with a pause between two): killed after the first.
    const files = Array.from({ length: 1000 }, (_, i) =>
      writeResults(tmp, `r${String(i).padStart(4, '0')}.json`, referenceResultsNew({ tokPerS: 100 + i, storageTokPerS: 50 + i })),
    );
    const args = ['import', ...files, '--system', 'lab', '--drive', 'nvme0', '--db', db];
    const cli = startCli(args, { cwd: tmp });
    started.push(cli);
    let exited = false;
    void cli.done.then(() => (exited = true));
    const committed = (): number => raw(db, "SELECT COUNT(*) AS n FROM trials t JOIN suites s ON s.id = t.suite_id WHERE s.source = 'import' AND s.status = 'running'") ?? 0;
    await waitFor('a first batch of the import to be committed', () => exited || committed() > 0, 120_000);
    cli.child.kill('SIGKILL');
    const r = await cli.done;
    expect(r.signal, `the import ended before it could be killed midway: ${explain(r)}`).toBe('SIGKILL');
    const left = committed();
    expect(left, 'the killed import left its committed batches in the file').toBeGreaterThan(0);
    expect(left).toBeLessThan(files.length);

    // A reader that does not recover (read-only) sees no part of it.
    const reader = openStore(db, { readonly: true });
    try {
      expect(reader.listTrials({})).toEqual([]);
      expect(reader.listSuites()).toEqual([]);
      expect(reader.listSystems().map((s) => s.trialCount)).toEqual([0]);
      expect(reader.trialFacets().trialCount).toBe(0);
    } finally {
      reader.close();
    }
    // The next command that opens it read-write (history here) removes it: the process that wrote it is gone.
    const history = await runCli(['history', '--db', db, '--json'], { cwd: tmp });
    expect(history.code, explain(history)).toBe(0);
    expect(JSON.parse(history.stdout)).toEqual([]);
    for (const table of ['suites', 'runs', 'trials', 'trial_metrics', 'systems', 'drives']) {
      expect(raw(db, `SELECT COUNT(*) AS n FROM ${table}`), `${table} after the removal`).toBe(0);
    }

    // Run again: every file once.
    const again = await runCli(args, { cwd: tmp });
    expect(again.code, explain(again)).toBe(0);
    expect(again.stdout.match(/^imported /gm)).toHaveLength(files.length);
    expect(raw(db, 'SELECT COUNT(*) AS n FROM trials')).toBe(files.length);
    expect(raw(db, 'SELECT COUNT(DISTINCT results_digest) AS n FROM trials')).toBe(files.length);
    expect(raw(db, "SELECT COUNT(*) AS n FROM suites WHERE status = 'finished'")).toBe(1);
  });
});
