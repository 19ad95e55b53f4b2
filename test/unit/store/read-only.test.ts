// A kvbench database on read-only media (a mounted backup, a CD, another user's files): commands that
// only read it work, anything that would write is refused with DB_READ_ONLY and a message, never a raw
// SqliteError. As root the media is a tmpfs remounted read-only (root ignores file modes); otherwise
// the files' and directory's modes are taken away.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi, type TestContext } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { StoreError } from '../../../src-main/store/store-error.ts';
import { removeTempDirs, tempDir } from './fixtures.ts';
import { copyWithPendingWal, seedStore } from './seed-store.ts';
import { giveTo, runModuleAs, sourceUrl, unprivilegedOrSkip } from '../../support/unprivileged.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  removeTempDirs();
});

/** A directory that is writable now and read-only after `seal()`; null (test skipped) where that cannot be made. */
function readOnlyPlace(ctx: TestContext): { dir: string; seal: () => void } | null {
  const dir = tempDir('kvb-ro-');
  if (process.getuid?.() === 0) {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir], { stdio: 'pipe' });
    } catch (err) {
      console.warn(`skipped: root ignores file modes, and a read-only tmpfs cannot be mounted here (${(err as Error).message.split('\n')[0]})`);
      ctx.skip();
      return null;
    }
    cleanups.push(() => execFileSync('umount', ['-l', dir], { stdio: 'pipe' }));
    return { dir, seal: () => execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'pipe' }) };
  }
  cleanups.push(() => {
    fs.chmodSync(dir, 0o755);
    for (const n of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, n), 0o644);
  });
  return {
    dir,
    seal: () => {
      for (const n of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, n), 0o444);
      fs.chmodSync(dir, 0o555);
    },
  };
}

function storeError(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return err as StoreError;
  }
  throw new Error('expected a StoreError');
}

describe('a database on read-only media', () => {
  it('is read (WAL mode, no -shm possible), refuses a read-write open with DB_READ_ONLY, and kvbench report and export still work', async (ctx) => {
    const place = readOnlyPlace(ctx);
    if (!place) return;
    const file = path.join(place.dir, 'kvbench.db');
    seedStore(file).close();
    expect(fs.readdirSync(place.dir)).toEqual(['kvbench.db']);
    place.seal();

    const ro = openStore(file, { readonly: true });
    expect(ro.listTrials({}).map((t) => t.status)).toEqual(['complete']);
    ro.close();

    const e = storeError(() => openStore(file));
    expect(e.code).toBe('DB_READ_ONLY');
    expect(e.message).toMatch(/kvbench\.db cannot be written \(SQLITE_\w+: .*\): it is on read-only media.*history, report and export still read it/);

    const outDir = tempDir();
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await exportCommand(['--db', file, '--out', path.join(outDir, 'x.csv')])).toBe(0);
      expect(await reportCommand(['--db', file, '--all'])).toBe(0);
    } finally {
      err.mockRestore();
      out.mockRestore();
    }
    expect(fs.readFileSync(path.join(outDir, 'x.csv'), 'utf8').trimEnd().split('\r\n')).toHaveLength(2);
    expect(fs.readdirSync(place.dir)).toEqual(['kvbench.db']);
  });

  it('a -wal file holding changes that cannot be read without a -shm: DB_READ_ONLY says what to do, no stale data', (ctx) => {
    const place = readOnlyPlace(ctx);
    if (!place) return;
    const copy = path.join(place.dir, 'copy.db');
    copyWithPendingWal(path.join(place.dir, 'live.db'), copy);
    expect(fs.statSync(`${copy}-wal`).size).toBeGreaterThan(0);
    place.seal();
    const e = storeError(() => openStore(copy, { readonly: true }));
    expect(e.code).toBe('DB_READ_ONLY');
    expect(e.message).toMatch(/copy\.db cannot be read here \(SQLITE_\w+: .*\): its -wal file holds changes not yet in the database.*Copy the database together with its -wal file/);
  });

  it('a read-only file in a writable directory: a read-write open is refused before the first write (as nobody when the tests run as root)', (ctx) => {
    // Root may write a mode 444 file: as root the open runs in a child as nobody, whose file it is.
    const user = unprivilegedOrSkip(ctx);
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    seedStore(file).close();
    fs.chmodSync(file, 0o444);
    giveTo(user, dir, file);
    cleanups.push(() => fs.chmodSync(file, 0o644));
    const e = runModuleAs(
      user,
      `import { openStore } from '${sourceUrl('src-main/store/open-store.ts')}';
      try { openStore(process.argv[1]).close(); console.log(JSON.stringify({ opened: true })); }
      catch (err) { console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message })); }`,
      [file],
    );
    expect(e).toMatchObject({ name: 'StoreError', code: 'DB_READ_ONLY' });
    // No write permission for anyone: refused before SQLite is asked to write (as root too: schema-upgrade.test.ts).
    expect((e as StoreError).message).toMatch(/kvbench\.db has no write permission \(mode 0444\): kvbench treats it as read-only/);
    // What SQLite made for the checks stays: only SQLite may remove it (read-only-companions.test.ts).
    expect(fs.readdirSync(dir).sort()).toEqual(['kvbench.db', 'kvbench.db-shm', 'kvbench.db-wal']);
    const ro = openStore(file, { readonly: true });
    expect(ro.listTrials({})).toHaveLength(1);
    ro.close();
  });
});
