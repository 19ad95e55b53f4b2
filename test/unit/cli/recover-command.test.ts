// `kvbench recover`: a damaged database (quick_check fails) could only be read read-only (history,
// report, export, the app): nothing gave a working database back. It now writes what can be read to a
// new file (owner-only, checked, never replacing one), says each part that could not be read (the
// read-only path's own notes), records that in the new file for its readers to say, and exits 0
// (everything read), 3 (parts lost) or 1 (nothing written).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { main } from '../../../src-main/cli/main.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { intactDatabase, lastOverflowPage, pagesOf, scribbled, sha } from '../../support/damaged-file.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(removeTempDirs);

/** The folder's files, less the -wal/-shm the tests' own raw reads of the intact database leave. */
const listing = (dir: string): string[] => fs.readdirSync(dir).filter((f) => !/^intact\.db-(wal|shm)$/.test(f)).sort();
type Listed = { id: number } & Record<string, unknown>;

async function history(db: string): Promise<{ code: number; stderr: string; trials: Listed[] }> {
  const r = await run(() => historyCommand(['--db', db, '--limit', '0', '--json']));
  return { code: r.code, stderr: r.stderr, trials: r.code === 0 || r.code === 3 ? (JSON.parse(r.stdout) as Listed[]) : [] };
}

const recover = (db: string, out: string, ...more: string[]): ReturnType<typeof run> => run(() => main(['recover', '--db', db, '--out', out, ...more]));

describe('kvbench recover', () => {
  it('writes what a damaged database holds to a new owner-only file, says each lost part as the readers do, and the new file says it was recovered', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const pages = pagesOf(db);
    const damaged = scribbled(db, 'damaged.db', [pages.get('trials/leaf')![1], pages.get('trial_metrics/leaf')!.at(-1)!, lastOverflowPage(db, '/003/000')]);
    const before = sha(damaged);
    const readOnly = await history(damaged);
    expect(readOnly.code).toBe(3);
    // The read-only path's notes: each line after its first ("is damaged …").
    const notes = readOnly.stderr.trim().split('\n').slice(1).map((l) => l.replace(/^kvbench history: /, ''));
    expect(notes.length).toBeGreaterThan(0);

    const out = path.join(dir, 'recovered.db');
    const r = await recover(damaged, out);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`Wrote ${out}: ${readOnly.trials.length} trial(s) in 4 suite(s) of 1 system(s), 0 endpoint run(s).`);
    expect(r.stdout).toContain("Checked: SQLite's integrity_check is ok, and it opens as a kvbench database.");
    expect(r.stdout).toContain(`Could not be read (${notes.length}):\n${notes.map((n) => `  - ${n}`).join('\n')}\n`);

    // A database as kvbench creates one: its owner's only, sound, nothing left beside it.
    expect(fs.statSync(out).mode & 0o777).toBe(0o600);
    expect(listing(dir)).toEqual(['damaged.db', 'intact.db', 'recovered.db']);
    const raw = openDatabase(out, { readonly: true });
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(raw.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
    raw.close();
    expect(sha(damaged)).toBe(before);

    // It lists what the read-only path showed, exit 0, saying where it came from and what was lost.
    const h = await history(out);
    expect(h.code, h.stderr).toBe(0);
    expect(h.trials).toEqual(readOnly.trials);
    expect(h.stderr).toMatch(new RegExp(`^kvbench history: ${out.replace(/[.]/g, '\\.')} holds what was recovered from the damaged ${damaged.replace(/[.]/g, '\\.')} on .* by kvbench \\S+ \\(SQLite.*\\): what could not be read then: `));
    for (const n of notes) expect(h.stderr).toContain(n);
    const report = await run(() => reportCommand(['--db', out, '--all']));
    expect(report.code, report.stderr).toBe(0);
    expect(report.stderr).toContain('holds what was recovered from the damaged');

    // And it takes writes: an import goes in, and its readers still say the recovery.
    const imported = await run(() => importCommand([writeResults(dir, 'r.json', kvbenchResults({ tokPerS: 99 })), '--system', 'lab', '--db', out]));
    expect(imported.code, imported.stderr).toBe(0);
    expect((await history(out)).trials).toHaveLength(readOnly.trials.length + 1);
    expect((await history(out)).stderr).toContain('holds what was recovered');
  });

  it('recovering a recovered database keeps the earlier recovery: the new file says both, newest first, each with what it lost', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const damaged = scribbled(db, 'damaged.db', [pagesOf(db).get('trials/leaf')![1]]);
    const first = path.join(dir, 'first.db');
    expect((await recover(damaged, first)).code).toBe(3);
    const firstNote = (await history(first)).stderr;
    expect(firstNote).toContain(`holds what was recovered from the damaged ${damaged}`);
    const firstLost = firstNote.slice(firstNote.indexOf('what could not be read then: ')).trim();

    // The recovered file is damaged in its turn (another bad sector), and recovered again.
    const damagedAgain = scribbled(first, 'first-damaged.db', [pagesOf(first).get('trials/leaf')![0]]);
    const second = path.join(dir, 'second.db');
    const r = await recover(damagedAgain, second);
    expect(r.code, r.stderr).toBe(3);
    const h = await history(second);
    expect(h.code, h.stderr).toBe(0);
    expect(h.stderr).toContain(`${second} holds what was recovered from the damaged ${damagedAgain} on `);
    expect(h.stderr).toContain(`Before that, ${damagedAgain} had itself been recovered from the damaged ${damaged} on `);
    expect(h.stderr).toContain(firstLost.replace(/\.$/, ''));
    const raw = openDatabase(second, { readonly: true });
    const earlier = JSON.parse((raw.prepare("SELECT value FROM kvbench_meta WHERE key = 'recovery_earlier'").get() as { value: string }).value) as { recoveredFrom: string }[];
    raw.close();
    expect(earlier.map((e) => e.recoveredFrom)).toEqual([damaged]);

    // A third time: the chain grows, and the first recovery is still there.
    const third = path.join(dir, 'third.db');
    expect((await recover(scribbled(second, 'second-damaged.db', [pagesOf(second).get('trials/leaf')![0]]), third)).code).toBe(3);
    const h3 = await history(third);
    expect(h3.stderr).toContain(`had itself been recovered from the damaged ${damagedAgain}`);
    expect(h3.stderr).toContain(`had itself been recovered from the damaged ${damaged}`);
  });

  it('damage only in indexes: every trial, exit 0, nothing lost; --json for scripts', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const pages = pagesOf(db);
    const damaged = scribbled(db, 'damaged.db', ['trials_suite', 'trials_started'].flatMap((n) => pages.get(`${n}/leaf`) ?? []));
    const out = path.join(dir, 'new.db');
    const r = await recover(damaged, out, '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ file: out, from: damaged, lost: [], trials: 32, suites: 4, systems: 1, endpointRuns: 0 });
    const h = await history(out);
    expect(h.code).toBe(0);
    expect(h.trials).toEqual((await history(db)).trials);
    expect(h.stderr).toContain('every stored row of it could be read');
  });

  it('a row whose stored JSON no longer parses (damage quick_check does not see) is not carried into the new file, and is said', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const w = openDatabase(db);
    w.prepare("UPDATE trials SET options_json = '{not json' WHERE id = 20").run();
    w.close();
    const pages = pagesOf(db);
    const damaged = scribbled(db, 'damaged.db', pages.get('trials_started/leaf') ?? []);
    const out = path.join(dir, 'new.db');
    const r = await recover(damaged, out);
    expect(r.code, r.stdout).toBe(3);
    expect(r.stdout).toMatch(/ {2}- .*trial 20 is left out/);
    const h = await history(out);
    expect(h.code, h.stderr).toBe(0); // the new file reads whole: no row of it is damaged
    expect(h.trials.map((t) => t.id)).not.toContain(20);
    expect(h.trials).toHaveLength(31);
  });

  it('refuses a healthy database, an existing --out, a missing folder, and a file it cannot read anything from; writes nothing', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const healthy = await recover(db, path.join(dir, 'copy.db'));
    expect(healthy.code).toBe(1);
    expect(healthy.stderr).toMatch(/is not damaged \(SQLite quick_check finds nothing wrong\): there is nothing to recover\. To copy it, use sqlite3 .* "\.backup NEW\.db", or cp while no kvbench writes to it\./);

    const damaged = scribbled(db, 'damaged.db', pagesOf(db).get('trials_started/leaf')!);
    const existing = path.join(dir, 'existing.db');
    fs.writeFileSync(existing, 'mine');
    const taken = await recover(damaged, existing);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain(`${existing} exists already: kvbench never overwrites a file with a recovered database`);
    expect(fs.readFileSync(existing, 'utf8')).toBe('mine');
    expect((await recover(damaged, damaged)).stderr).toContain('must be another file than the damaged');
    expect((await recover(damaged, path.join(dir, 'no', 'x.db'))).stderr).toContain(`the folder ${path.join(dir, 'no')} does not exist`);

    // Its schema's page lost: nothing to read.
    const truncated = path.join(dir, 'truncated.db');
    fs.copyFileSync(db, truncated);
    fs.truncateSync(truncated, 8192);
    const nothing = await recover(truncated, path.join(dir, 't.db'));
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/is damaged and cannot be read/);
    const notSqlite = path.join(dir, 'notes.txt');
    fs.writeFileSync(notSqlite, 'x'.repeat(5000));
    const foreign = await recover(notSqlite, path.join(dir, 'n.db'));
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('is not a SQLite database');
    expect((await recover(path.join(dir, 'absent.db'), path.join(dir, 'a.db'))).stderr).toContain('no database at');
    expect(listing(dir)).toEqual(['damaged.db', 'existing.db', 'intact.db', 'notes.txt', 'truncated.db']);
    expect((await run(() => main(['recover', '--db', damaged]))).stderr).toMatch(/^kvbench recover: --out is required/);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} while it reads the damaged file: says it was interrupted, exits ${signal === 'SIGINT' ? 130 : 143}, and leaves both folders as they were (no -wal or -shm beside the damaged file)`, async () => {
      const dir = tempDir();
      const src = path.join(dir, 'src');
      fs.mkdirSync(src);
      const db = intactDatabase(src);
      const damaged = scribbled(db, 'damaged.db', [pagesOf(db).get('trials/leaf')![1]]);
      for (const ext of ['', '-wal', '-shm']) fs.rmSync(db + ext, { force: true });
      const before = sha(damaged);
      const outDir = path.join(dir, 'out');
      fs.mkdirSync(outDir);
      const out = path.join(outDir, 'new.db');
      const done = recover(damaged, out);
      // The signal once the recovery has opened the damaged file (its -shm is there): mid-work, not before it starts.
      while (!fs.existsSync(`${damaged}-shm`)) await new Promise((r) => setTimeout(r, 2));
      process.emit(signal, signal);
      const r = await done;
      expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
      expect(r.stderr).toContain(`kvbench recover: interrupted (${signal}): nothing was written to ${out}, and ${damaged} was only read`);
      expect(fs.readdirSync(src)).toEqual(['damaged.db']);
      expect(fs.readdirSync(outDir)).toEqual([]);
      expect(sha(damaged)).toBe(before);
    });
  }

  it("refuses an empty --db or --out as the other commands do, not reading the default database or taking '' as missing", async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const damaged = scribbled(db, 'damaged.db', pagesOf(db).get('trials_started/leaf')!);
    // With KVBENCH_DB set, `--db ''` fell back to it: a script's unset variable recovered another database than meant.
    const before = process.env.KVBENCH_DB;
    process.env.KVBENCH_DB = damaged;
    try {
      const emptyDb = await recover('', path.join(dir, 'new.db'));
      expect(emptyDb).toMatchObject({ code: 1, stdout: '', stderr: 'kvbench recover: --db must not be empty\n' });
      expect((await recover(' ', path.join(dir, 'new.db'))).stderr).toBe('kvbench recover: --db must not be empty\n');
      expect((await recover(damaged, '')).stderr).toBe('kvbench recover: --out must not be empty\n');
      const both = await recover('', '');
      expect(both).toMatchObject({ code: 1, stderr: 'kvbench recover: invalid arguments:\n  --db must not be empty\n  --out must not be empty\n' });
    } finally {
      if (before === undefined) delete process.env.KVBENCH_DB;
      else process.env.KVBENCH_DB = before;
    }
    expect(listing(dir)).toEqual(['damaged.db', 'intact.db']);
  });
});
