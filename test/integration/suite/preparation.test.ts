// What `kvbench suite` does before its first trial: --plan creates nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/store/open-store.ts';
import { explain, fileBytes, killStarted, makeTempDir, removeTempDirs, runCli, type CliProcess } from './suite-harness.ts';

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
