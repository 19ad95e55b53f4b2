// The -wal and -shm files SQLite makes for a read-only open of a WAL-mode database, which a read-only
// connection cannot remove when it closes. Only SQLite may remove them (a read-write connection that
// closes last, under its EXCLUSIVE lock): unlinking them from outside races with a writer that opens
// the database meanwhile, and two writers on different -shm files disagree about the WAL.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, type TestContext } from 'vitest';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { runInProcess } from '../cli/in-process.ts';
import { fakeHardware, removeTempDirs, tempDir } from './fixtures.ts';
import { seedStore } from './seed-store.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  removeTempDirs();
});

const OPEN_STORE_MODULE = new URL('../../../src-main/store/open-store.ts', import.meta.url).href;
const COMPANIONS = ['kvbench.db', 'kvbench.db-shm', 'kvbench.db-wal'];

/**
 * Makes `file` mode 444 and unwritable, also to root (chattr +i); returns what undoes it, or null (the
 * test skipped) where that cannot be done.
 */
function lockFile(ctx: TestContext, file: string): (() => void) | null {
  fs.chmodSync(file, 0o444);
  let unlock = (): void => fs.chmodSync(file, 0o644);
  if (process.getuid?.() === 0) {
    try {
      execFileSync('chattr', ['+i', file], { stdio: 'pipe' });
    } catch (err) {
      console.warn(`skipped: root may write any file, and chattr +i is not possible here (${(err as Error).message.split('\n')[0]})`);
      ctx.skip();
      return null;
    }
    unlock = () => {
      execFileSync('chattr', ['-i', file], { stdio: 'pipe' });
      fs.chmodSync(file, 0o644);
    };
  }
  let done = false;
  const once = (): void => {
    if (!done) unlock();
    done = true;
  };
  cleanups.push(once);
  return once;
}

describe('the -wal and -shm a read-only open made', () => {
  it('go when it closes, by SQLite, from a database this user may write; what another connection uses stays', () => {
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    seedStore(file).close();
    const ro = openStore(file, { readonly: true });
    expect(ro.listTrials({})).toHaveLength(1);
    expect(fs.readdirSync(dir).sort()).toEqual(COMPANIONS);
    ro.close();
    expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);

    const again = openStore(file, { readonly: true });
    const other = openDatabase(file, { readonly: true });
    other.pragma('schema_version');
    again.close();
    expect(fs.readdirSync(dir).sort()).toEqual(COMPANIONS);
    other.close();
  });

  it('stay beside a database file it may not write, writable by their owner: the database takes writes again once the file does', async (ctx) => {
    // SQLite gives them the database's mode; a -wal or -shm of mode 444 would make every later write
    // SQLITE_READONLY although the database itself had been made writable again.
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    seedStore(file).close();
    const unlock = lockFile(ctx, file);
    if (!unlock) return;
    const history = await runInProcess(() => historyCommand(['--db', file]));
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/storage-only/);
    expect(fs.readdirSync(dir).sort()).toEqual(COMPANIONS);
    for (const ext of ['-wal', '-shm']) expect(fs.statSync(file + ext).mode & 0o200, `${ext} writable by its owner`).toBe(0o200);

    unlock();
    const store = openStore(file);
    store.upsertDetectedSystem(fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab2' }));
    store.close();
    expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);
  });

  // A reader in a container (its own PID namespace and /proc) and a writer outside it on one
  // database: /proc/locks lists no lock of a process the reader's PID namespace cannot see, so a
  // check there finds the writer's files unused. Needs unprivileged user namespaces, as rootless
  // containers do.
  const unshare = ['--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child'];
  const canUnshare = process.platform === 'linux' && spawnSync('unshare', [...unshare, 'true']).status === 0;
  it.skipIf(!canUnshare)('are never removed from under a writer, even one whose locks the reader cannot see', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'kvbench.db');
    seedStore(file).close();
    const script = `
      const { openStore } = await import(${JSON.stringify(OPEN_STORE_MODULE)});
      const store = openStore(${JSON.stringify(file)}, { readonly: true });
      store.listTrials({});
      process.stdout.write('open\\n');
      process.stdin.once('data', () => {
        store.close();
        process.stdout.write('closed\\n');
        process.exit(0);
      });
    `;
    const reader = spawn('unshare', [...unshare, process.execPath, '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    reader.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    const said = (line: string): Promise<void> =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (out.includes(`${line}\n`)) resolve();
        };
        reader.stdout.on('data', check);
        reader.once('close', () => reject(new Error(`the reader ended before it said ${line}: ${out}`)));
        check();
      });
    cleanups.push(() => reader.kill('SIGKILL'));

    await said('open');
    // The read-only open made the -wal and -shm; a writer opens the database now and commits, in its WAL only.
    const writer = openStore(file);
    writer.db.pragma('wal_autocheckpoint = 0');
    const shmInode = fs.statSync(`${file}-shm`).ino;
    const walInode = fs.statSync(`${file}-wal`).ino;
    writer.upsertDetectedSystem(fakeHardware({ systemId: 'sys-fedcba9876543210', hostname: 'lab2' }));
    reader.stdin.write('close\n');
    await said('closed');

    expect(fs.statSync(`${file}-shm`, { throwIfNoEntry: false })?.ino, 'the writer’s -shm').toBe(shmInode);
    expect(fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.ino, 'the writer’s -wal').toBe(walInode);
    // Another connection sees the writer's commit: it reads the same WAL through the same index.
    const next = openDatabase(file, { readonly: true });
    expect((next.prepare('SELECT count(*) AS n FROM systems').get() as { n: number }).n).toBe(2);
    next.close();
    writer.close();
    expect(fs.readdirSync(dir)).toEqual(['kvbench.db']);
  }, 30_000);
});
