// What `kvbench suite` does before its first trial: --plan creates nothing; a signal during the
// hardware detection or the drive probe stops there and records nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { dbPaths, explain, fileBytes, killStarted, makeTempDir, removeTempDirs, runCli, startCli, waitFor, type CliProcess } from './suite-harness.ts';

const started: CliProcess[] = [];
afterEach(async () => {
  await killStarted(started);
  removeTempDirs();
});

describe('kvbench suite --plan', () => {
  it('prints the plan and creates nothing: no database, no cache directory, no missing parent of either', async () => {
    const tmp = makeTempDir();
    const db = path.join(tmp, 'no-dir-yet', 'x.db');
    const cache = path.join(tmp, 'cache', 'kv');
    const r = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--plan', '--scenarios', 'storage-only', '--cache-dir', cache, '--db', db], { cwd: tmp });
    expect(r.code, explain(r)).toBe(0);
    expect(r.stdout).toMatch(/^storage-only /m);
    expect(fs.readdirSync(tmp)).toEqual([]);

    // An existing database is checked (opened as history opens it): byte for byte the same after, no -wal or -shm left.
    const existing = path.join(tmp, 'kvbench.db');
    openStore(existing).close();
    const before = fileBytes(existing);
    const again = await runCli(['suite', '--profile', 'smoke', '--no-probe', '--plan', '--scenarios', 'storage-only', '--cache-dir', cache, '--db', existing], { cwd: tmp });
    expect(again.code, explain(again)).toBe(0);
    expect(fileBytes(existing)).toBe(before);
    expect(fs.readdirSync(tmp)).toEqual(['kvbench.db']);
  });
});

/** Rows of `table`, read straight from SQLite (read-only). */
function countRows(db: string, table: 'suites' | 'trials'): number {
  const d = openDatabase(db, { readonly: true, fileMustExist: true });
  try {
    return (d.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    d.close();
  }
}

describe('kvbench suite stopped during the drive probe', () => {
  it('stops the probe, removes its files, plans nothing, records no suite, says so and exits 130', { timeout: 60_000 }, async () => {
    const tmp = makeTempDir();
    const { db, cache } = dbPaths(tmp);
    const cli = startCli(['suite', '--profile', 'smoke', '--scenarios', 'storage-only', '--trials', '1', '--cache-dir', cache, '--db', db], { cwd: tmp });
    started.push(cli);
    await waitFor('the drive probe to start', () => fs.readdirSync(cache).some((n) => n.startsWith('kvbench-probe-')), 30_000);
    process.kill(cli.pid, 'SIGINT');
    const r = await cli.done;
    expect(r.code, explain(r)).toBe(130);
    expect(r.stderr).toMatch(/SIGINT: stopping before the suite starts/);
    expect(r.stderr).toMatch(/Stopped by SIGINT before the first trial: no suite was planned or recorded\.\n$/);
    expect(r.stderr).not.toMatch(/stopping the current trial|Suite \d+|Full tables|storage-only /);
    expect(countRows(db, 'suites')).toBe(0);
    expect(countRows(db, 'trials')).toBe(0);
    expect(fs.readdirSync(cache)).toEqual([]);
  });
});
