// A trial database names hosts, drive serials and paths: one kvbench creates is its owner's only
// under any umask, from the CLI as from the app, with its -wal, -shm and an upgrade's copy; one
// that exists keeps the mode it has (a lab may share it with a group on purpose).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabaseFile } from '../../../src-main/store/database-file.ts';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from '../../../src-main/store/migrations.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from './fixtures.ts';

const KVBENCH_BIN = fileURLToPath(new URL('../../../bin/kvbench.js', import.meta.url));

afterEach(removeTempDirs);

const modeOf = (f: string): string => (fs.statSync(f).mode & 0o777).toString(8);

/** `kvbench import` of one results file into `db`, as a shell with `umask` runs it. */
function importUnderUmask(umask: string, db: string): void {
  const results = writeResults(path.dirname(db), `r-${path.basename(db)}.json`, kvbenchResults({ tokPerS: 100 }));
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync('/bin/sh', ['-c', `umask ${umask} && exec "$0" "$@"`, process.execPath, KVBENCH_BIN, 'import', results, '--system', 'lab', '--db', db], { encoding: 'utf8', env });
  expect(r.status, r.stderr).toBe(0);
}

/** Runs `fn` with this process's umask set to `mask` (the test runner's workers are processes). */
function withUmask<T>(mask: number, fn: () => T): T {
  const before = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(before);
  }
}

describe('the modes of kvbench\'s database files', () => {
  it('a database the CLI creates is readable by its owner only under umask 022', () => {
    const db = path.join(tempDir(), 'kvbench.db');
    importUnderUmask('022', db);
    expect(modeOf(db)).toBe('600');
  });

  it('a new database\'s -wal and -shm follow it, under umask 022 and under one that would take the owner\'s write', () => {
    for (const mask of [0o022, 0o277]) {
      const db = path.join(tempDir(), 'kvbench.db');
      const store = withUmask(mask, () => openStore(db));
      try {
        store.listSystems();
        for (const f of [db, `${db}-wal`, `${db}-shm`]) expect(modeOf(f), `${f} under umask ${mask.toString(8)}`).toBe('600');
      } finally {
        store.close();
      }
    }
  });

  it('an existing database keeps its mode: a group-readable 0640 stays 0640', () => {
    const db = path.join(tempDir(), 'kvbench.db');
    openStore(db).close();
    fs.chmodSync(db, 0o640);
    importUnderUmask('077', db);
    expect(modeOf(db)).toBe('640');
    expect(createDatabaseFile(db)).toBe(false);
    expect(modeOf(db)).toBe('640');
  });

  it('the copy kept by a failed upgrade has the database\'s mode, not the umask\'s', () => {
    const v = LATEST_SCHEMA_VERSION;
    const broken = [...MIGRATIONS, { version: v + 1, name: 'broken', sql: 'CREATE TABLE systems (again)' }];
    for (const mode of [0o600, 0o640]) {
      const dir = tempDir();
      const db = path.join(dir, 'kvbench.db');
      openStore(db).close();
      fs.chmodSync(db, mode);
      expect(() => withUmask(0o022, () => openStore(db, { migrations: broken }))).toThrow(/a copy made before the attempt is at/);
      const backups = fs.readdirSync(dir).filter((n) => n.includes(`.schema-${v}-before-upgrade-`));
      expect(backups).toHaveLength(1);
      expect(modeOf(path.join(dir, backups[0]))).toBe(mode.toString(8));
    }
  });
});
