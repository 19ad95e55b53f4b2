// Salvage and recovery on a worker thread (salvage-thread.ts), for the app's backend: the same copy,
// the same recovery and the same refusals as the calls the CLI makes on its own thread, on real
// damaged files; a worker that dies (out of memory, stopped mid-write) says so and leaves nothing:
// no new database, no temporary file, the damaged file unchanged; a full disk is said as the CLI says it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDamagedStore, openStore, type DamagedStore } from '../../../src-main/store/open-store.ts';
import { recoverDatabase, STALE_RECOVERY_MS } from '../../../src-main/store/recover.ts';
import { openDamagedStoreOffThread, recoverDatabaseOffThread, removeSalvageScratchNow, STALE_SCRATCH_MS } from '../../../src-main/store/salvage-thread.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { intactDatabase, lastOverflowPage, pagesOf, scribbled, sha } from '../../support/damaged-file.ts';
import { removeTempDirs, tempDir } from './fixtures.ts';
import { fillUp, smallFilesystem } from './small-filesystem.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  removeTempDirs();
});

/** Damaged copies of one intact database: a page of trials, metrics and an overflow chain; only indexes. */
function damagedFiles(dir: string): { intact: string; files: string[] } {
  const intact = intactDatabase(dir, { secondSystem: true });
  const pages = pagesOf(intact);
  return {
    intact,
    files: [
      scribbled(intact, 'rows.db', [pages.get('trials/leaf')![1], pages.get('trial_metrics/leaf')!.at(-1)!, lastOverflowPage(intact, '/003/000')]),
      scribbled(intact, 'indexes.db', ['trials_suite', 'trials_started'].flatMap((n) => pages.get(`${n}/leaf`) ?? [])),
    ],
  };
}

/** What a salvaged copy shows: what a reader of it (History, the report, exports) reads. */
function shown(d: DamagedStore | null): unknown {
  if (d === null) return null;
  try {
    return {
      damage: d.damage,
      allPlaced: d.allPlaced,
      unreadable: d.store.unreadable,
      readonly: d.store.readonly,
      path: d.store.path,
      trials: d.store.listTrials({}),
      facets: d.store.trialFacets(),
      foreignKeys: d.store.db.pragma('foreign_keys', { simple: true }),
      schema: d.store.db.pragma('user_version', { simple: true }),
    };
  } finally {
    d.store.close();
  }
}

/** The refusal a call throws: its class, code and message. */
async function refusalOf(call: () => unknown): Promise<{ kind: string; code: unknown; message: string }> {
  try {
    await call();
  } catch (err) {
    return { kind: (err as Error).constructor.name, code: (err as { code?: unknown }).code, message: (err as Error).message };
  }
  throw new Error('not refused');
}

/** Files a recovery may leave beside its destination: its temporary file and SQLite's companions. */
const leftovers = (dir: string): string[] => fs.readdirSync(dir).filter((f) => f.includes('.recovering-'));

describe('salvage and recovery on a worker thread', () => {
  it('read the same copy of a damaged database as on the calling thread, and refuse the same files', async () => {
    const dir = tempDir();
    const { intact, files } = damagedFiles(dir);
    for (const file of files) {
      const before = sha(file);
      const progress: string[] = [];
      const off = shown(await openDamagedStoreOffThread(file, { onProgress: (m) => progress.push(m) }));
      expect(off).toEqual(shown(openDamagedStore(file)));
      expect((off as { trials: unknown[] }).trials.length).toBeGreaterThan(20);
      expect(sha(file)).toBe(before);
    }
    // The app's words for choosing another database reach the worker's refusals; not SQLite: null, as there.
    const truncated = path.join(dir, 'truncated.db');
    fs.copyFileSync(intact, truncated);
    fs.truncateSync(truncated, 8192);
    expect(await refusalOf(() => openDamagedStoreOffThread(truncated))).toEqual(await refusalOf(() => openDamagedStore(truncated)));
    expect((await refusalOf(() => openDamagedStoreOffThread(truncated))).code).toBe('DB_CORRUPT');
    const notSqlite = path.join(dir, 'notes.txt');
    fs.writeFileSync(notSqlite, 'x'.repeat(5000));
    expect(await openDamagedStoreOffThread(notSqlite)).toBeNull();
    expect(await refusalOf(() => openDamagedStoreOffThread(path.join(dir, 'absent.db'), { chooseDatabase: 'in Settings' }))).toEqual(
      await refusalOf(() => openDamagedStore(path.join(dir, 'absent.db'), { chooseDatabase: 'in Settings' })),
    );
  });

  it('recover into the same new database as on the calling thread, saying each step, with the same refusals', async () => {
    const dir = tempDir();
    const { intact, files } = damagedFiles(dir);
    for (const [i, file] of files.entries()) {
      const before = sha(file);
      const here = recoverDatabase(file, path.join(dir, `here-${i}.db`));
      const steps: string[] = [];
      const there = await recoverDatabaseOffThread(file, path.join(dir, `there-${i}.db`), { onProgress: (m) => steps.push(m) });
      expect({ ...there, file: null }).toEqual({ ...here, file: null });
      expect(there.file).toBe(path.join(dir, `there-${i}.db`));
      const trialsOf = (db: string): unknown => {
        const s = openStore(db, { readonly: true });
        try {
          return { trials: s.listTrials({}), recovery: { ...s.recovery, recoveredAt: null } };
        } finally {
          s.close();
        }
      };
      expect(trialsOf(there.file)).toEqual(trialsOf(here.file));
      expect(fs.statSync(there.file).mode & 0o777).toBe(0o600);
      expect(steps[0]).toBe(`checking ${file}`);
      expect(steps).toContain(`writing ${there.file}`);
      expect(sha(file)).toBe(before);
    }
    expect(leftovers(dir)).toEqual([]);
    // Refused alike: a healthy database, an existing destination (left as it was).
    expect(await refusalOf(() => recoverDatabaseOffThread(intact, path.join(dir, 'copy.db')))).toEqual(await refusalOf(() => recoverDatabase(intact, path.join(dir, 'copy.db'))));
    const existing = path.join(dir, 'existing.db');
    fs.writeFileSync(existing, 'mine');
    const taken = await refusalOf(() => recoverDatabaseOffThread(files[0], existing));
    expect(taken).toEqual(await refusalOf(() => recoverDatabase(files[0], existing)));
    expect(taken).toMatchObject({ kind: 'StoreError', code: 'VALIDATION' });
    expect(fs.readFileSync(existing, 'utf8')).toBe('mine');
  });

  it('a worker that runs out of memory: a clear error, no new database, nothing left, the damaged file unchanged', async () => {
    const dir = tempDir();
    const { files } = damagedFiles(dir);
    const before = sha(files[0]);
    const out = path.join(dir, 'new.db');
    const tiny = { resourceLimits: { maxOldGenerationSizeMb: 6 } };
    const err = await refusalOf(() => recoverDatabaseOffThread(files[0], out, tiny));
    expect(err).toEqual({
      kind: 'StoreError',
      code: 'DB_WRITE_FAILED',
      message: `the recovery of ${files[0]} into ${out} stopped: its worker thread ran out of memory. Nothing was written to ${out}, and ${files[0]} was only read: try again, or run kvbench recover --db ${files[0]} --out ${out} in a terminal.`,
    });
    expect(await refusalOf(() => openDamagedStoreOffThread(files[0], tiny))).toMatchObject({ code: 'DB_CORRUPT', message: expect.stringContaining('reading what can still be read of it stopped: its worker thread ran out of memory') });
    expect(fs.existsSync(out)).toBe(false);
    expect(leftovers(dir)).toEqual([]);
    expect(sha(files[0])).toBe(before);
  });

  it('a worker stopped while it writes: the temporary file goes, and the new database is whole or not there, as the error says', async () => {
    const dir = tempDir();
    const { files } = damagedFiles(dir);
    const before = sha(files[0]);
    const out = path.join(dir, 'new.db');
    const stop = new AbortController();
    const err = await refusalOf(() => recoverDatabaseOffThread(files[0], out, { signal: stop.signal, onProgress: (m) => m.startsWith('writing ') && stop.abort() }));
    expect(err).toMatchObject({ kind: 'StoreError', code: 'DB_WRITE_FAILED', message: expect.stringContaining(`the recovery of ${files[0]} into ${out} stopped: it was stopped, as kvbench is closing.`) });
    // Its file is given its name only once written whole and checked: where the stop came after that, it is there, whole.
    if (fs.existsSync(out)) {
      expect(err.message).toContain(`${out} had been written and checked before it stopped: it is whole`);
      const db = openDatabase(out, { readonly: true });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      db.close();
    } else {
      expect(err.message).toContain(`Nothing was written to ${out}`);
    }
    // The worker's own clean-up may not have run: nothing of it stays (the error comes once the worker has gone).
    expect(leftovers(dir)).toEqual([]);
    expect(sha(files[0])).toBe(before);
    expect(await refusalOf(() => recoverDatabaseOffThread(files[0], path.join(dir, 'again.db'), { signal: AbortSignal.abort() }))).toMatchObject({ code: 'DB_WRITE_FAILED' });
    expect(fs.existsSync(path.join(dir, 'again.db'))).toBe(false);
  });

  it('what a dead process left (killed mid-write, an app that quit first) is removed by the next recovery into that name, once unchanged for a while; nothing else is', () => {
    const dir = tempDir();
    const intact = intactDatabase(dir);
    const damaged = scribbled(intact, 'damaged.db', [pagesOf(intact).get('trials/leaf')![1]]);
    const deadPid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
    const old = (Date.now() - STALE_RECOVERY_MS - 60_000) / 1000;
    const leave = (name: string, ageS = old): string => {
      fs.writeFileSync(path.join(dir, name), 'x');
      fs.utimesSync(path.join(dir, name), ageS, ageS);
      return name;
    };
    leave(`.recovered.db.recovering-${deadPid}-0123abcd`);
    leave(`.recovered.db.recovering-${deadPid}-0123abcd-wal`);
    const kept = [
      leave(`.recovered.db.recovering-${deadPid}-89abcdef`, Date.now() / 1000), // changed a moment ago: perhaps another host's, still writing
      leave(`.recovered.db.recovering-${process.ppid}-aaaaaaaa`), // its process is alive
      leave(`.other.db.recovering-${deadPid}-bbbbbbbb`), // another destination's
      leave(`.recovered.db.recovering-${deadPid}-note.txt`), // not a name a recovery gives
    ];
    recoverDatabase(damaged, path.join(dir, 'recovered.db'));
    expect(leftovers(dir).sort()).toEqual(kept.sort());
  });

  it('scratch copies a killed salvage left in the temporary folder (kvbench serve killed at its first open) are removed by the next salvage, once unchanged for a while; nothing else is', async () => {
    const dir = tempDir();
    const intact = intactDatabase(dir);
    const damaged = scribbled(intact, 'damaged.db', [pagesOf(intact).get('trials/leaf')![1]]);
    const tmp = tempDir('kvb-tmpdir-');
    const tmpBefore = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      const deadPid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
      const old = (Date.now() - STALE_SCRATCH_MS - 60_000) / 1000;
      const leave = (name: string, ageS = old): string => {
        fs.mkdirSync(path.join(tmp, name), { mode: 0o700 });
        fs.writeFileSync(path.join(tmp, name, 'copy.db'), 'rows');
        for (const f of ['copy.db', '']) fs.utimesSync(path.join(tmp, name, f), ageS, ageS);
        return name;
      };
      leave(`kvbench-salvage-${deadPid}-AbC123`);
      const kept = [
        leave(`kvbench-salvage-${deadPid}-young1`, Date.now() / 1000), // changed a moment ago: perhaps another PID namespace's, still writing
        leave(`kvbench-salvage-${process.ppid}-alive1`), // its process is alive
        leave('kvbench-salvage-Xy12ab'), // an older kvbench's name, without a pid
      ];
      expect((await openDamagedStoreOffThread(damaged))?.store.listTrials({}).length).toBeGreaterThan(20);
      // This salvage's own folder is gone too, as before.
      expect(fs.readdirSync(tmp).sort()).toEqual(kept.sort());
    } finally {
      if (tmpBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpBefore;
    }
  });

  it('a salvage stopped by a signal in the middle (removeSalvageScratchNow, before the process exits): its scratch folder is gone at once', async () => {
    const dir = tempDir();
    const intact = intactDatabase(dir);
    const damaged = scribbled(intact, 'damaged.db', [pagesOf(intact).get('trials/leaf')![1]]);
    const tmp = tempDir('kvb-tmpdir-');
    const tmpBefore = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      let seen: string[] = [];
      const stop = new AbortController();
      const salvage = openDamagedStoreOffThread(damaged, {
        signal: stop.signal,
        onProgress: () => {
          if (seen.length > 0) return;
          seen = fs.readdirSync(tmp);
          removeSalvageScratchNow();
          // What the process finds at its exit, right after.
          expect(fs.readdirSync(tmp)).toEqual([]);
          stop.abort('stopped');
        },
      });
      await salvage.catch(() => null);
      expect(seen).toEqual([expect.stringMatching(new RegExp(`^kvbench-salvage-${process.pid}-`))]);
    } finally {
      if (tmpBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpBefore;
    }
  });

  it('a full disk: refused as on the calling thread (DB_WRITE_FAILED, the filesystem named), nothing left there, the damaged file unchanged', async (ctx) => {
    const dir = tempDir();
    const { files } = damagedFiles(dir);
    const before = sha(files[0]);
    const fsys = smallFilesystem(ctx, 4 * 1024 * 1024);
    if (!fsys) return;
    cleanups.push(fsys.unmount);
    fillUp(fsys.dir, 64 * 1024);
    const err = await refusalOf(() => recoverDatabaseOffThread(files[0], path.join(fsys.dir, 'new.db')));
    const here = await refusalOf(() => recoverDatabase(files[0], path.join(fsys.dir, 'new.db')));
    expect(err).toMatchObject({ kind: 'StoreError', code: 'DB_WRITE_FAILED', message: expect.stringContaining('the filesystem holding it is full') });
    expect(err).toEqual(here);
    expect(fs.readdirSync(fsys.dir).filter((f) => !f.startsWith('filler-'))).toEqual([]);
    expect(sha(files[0])).toBe(before);
  });
});
