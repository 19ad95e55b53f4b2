// A damaged database (pages overwritten: PRAGMA quick_check fails) was refused by every command,
// those that only read too, with "kvbench will not write to it", so the trials on intact pages could
// be neither listed nor exported. history, report and export now read what can be read (a copy in
// memory of every readable row; the file only read), say on stderr that the database is damaged and
// which stored rows could not be read, and exit 3 (partial). What they show of a trial is what the
// intact database holds: a row whose bytes lie on a damaged page is left out, never shown with them.
// Commands that write keep refusing it, in their words.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { intactDatabase, lastOverflowPage, pagesOf, scribbled, sha } from '../../support/damaged-file.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(removeTempDirs);


type Listed = { id: number } & Record<string, unknown>;
const listed = (stdout: string): Listed[] => JSON.parse(stdout) as Listed[];

/** history --json of `db`: its code, stderr and trials. */
async function history(db: string): Promise<{ code: number; stderr: string; trials: Listed[] }> {
  const r = await run(() => historyCommand(['--db', db, '--limit', '0', '--json']));
  return { code: r.code, stderr: r.stderr, trials: r.code === 0 || r.code === 3 ? listed(r.stdout) : [] };
}

/** The trials of a JSON export of `db` (and its code and stderr). */
async function exported(db: string, out: string): Promise<{ code: number; stderr: string; trials: Listed[] }> {
  const r = await run(() => exportCommand(['--db', db, '--out', out]));
  const trials = fs.existsSync(out) ? (JSON.parse(fs.readFileSync(out, 'utf8')) as { trials: Listed[] }).trials : [];
  return { code: r.code, stderr: r.stderr, trials };
}

const DAMAGED = /^kvbench (history|report|export): \S+ is damaged \(SQLite.*\)\. Reading it read-only, as far as it can be read: /;

describe('a damaged database, read by the commands that only read', () => {
  it('damaged index pages (as the review scribbled them): every trial listed, exported and reported, said damaged, exit 3', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const pages = pagesOf(db);
    const indexPages = ['trials_scenario_status', 'trials_suite', 'trials_started', 'trials_system_started'].flatMap((n) => pages.get(`${n}/leaf`) ?? []);
    expect(indexPages.length).toBeGreaterThanOrEqual(4);
    const damaged = scribbled(db, 'damaged.db', indexPages);
    const before = sha(damaged);

    const intact = await history(db);
    expect(intact.code).toBe(0);
    expect(intact.trials).toHaveLength(32);
    const h = await history(damaged);
    expect(h.code, h.stderr).toBe(3);
    expect(h.stderr).toMatch(DAMAGED);
    expect(h.stderr).toContain('every stored row could be read (the damage lies in an index or in unused pages)');
    expect(h.stderr).toContain('kvbench writes nothing to it, and a suite or an import refuses it: restore a backup or move it away.');
    expect(h.stderr.trim().split('\n')).toHaveLength(1);
    expect(h.trials).toEqual(intact.trials);

    // Filters that read through the damaged indexes in the file read the copy's.
    const filtered = await run(() => historyCommand(['--db', damaged, '--scenario', 'storage-only', '--suite', '2', '--json']));
    expect(filtered.code).toBe(3);
    expect(listed(filtered.stdout).map((t) => t.id)).toEqual(intact.trials.filter((t) => t.suiteId === 2).map((t) => t.id));

    const e = await exported(damaged, path.join(dir, 'damaged.json'));
    expect(e.code, e.stderr).toBe(3);
    expect(e.stderr).toMatch(DAMAGED);
    expect(e.stderr).toMatch(/exported 32 trial\(s\)/);
    expect(e.trials).toEqual((await exported(db, path.join(dir, 'intact.json'))).trials);

    const report = await run(() => reportCommand(['--db', damaged, '--suite', '3', '--json']));
    expect(report.code, report.stderr).toBe(3);
    const intactReport = await run(() => reportCommand(['--db', db, '--suite', '3', '--json']));
    expect(JSON.parse(report.stdout)).toEqual(JSON.parse(intactReport.stdout));

    // Only read: the file is as it was, and no -wal or -shm is left beside it.
    expect(sha(damaged)).toBe(before);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('damaged.db'))).toEqual(['damaged.db']);
  });

  it('a damaged page of trials, one of their metrics and the end of a row on another: the rest listed as stored, each lost one said, exit 3', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const pages = pagesOf(db);
    const trialLeaves = pages.get('trials/leaf')!;
    const metricLeaves = pages.get('trial_metrics/leaf')!;
    expect(trialLeaves.length).toBeGreaterThanOrEqual(4);
    expect(metricLeaves.length).toBeGreaterThanOrEqual(3);
    // The damaged leaf makes quick_check itself fail: the broken overflow chain is found in the file.
    const damaged = scribbled(db, 'damaged.db', [trialLeaves[1], metricLeaves[metricLeaves.length - 1], lastOverflowPage(db, '/003/000')]);
    const before = sha(damaged);

    const intact = await history(db);
    const h = await history(damaged);
    expect(h.code, h.stderr).toBe(3);
    const lines = h.stderr.trim().split('\n');
    expect(lines[0]).toMatch(DAMAGED);
    expect(lines[0]).toContain('some stored rows could not be (each is said below), so what follows may be incomplete');
    // Each line after the first names trials left out and why.
    const leftOut = new Set<number>();
    for (const line of lines.slice(1)) {
      expect(line).toMatch(new RegExp(`^kvbench history: trials? [0-9–, ]+ in ${damaged.replace(/[.]/g, '\\.')} (could not be read \\(|is left out: its |are left out: their )`));
      for (const m of line.replace(/ in \/.*/, '').matchAll(/(\d+)(?:–(\d+))?/g)) for (let id = Number(m[1]); id <= Number(m[2] ?? m[1]); id++) leftOut.add(id);
    }
    expect(leftOut.size).toBeGreaterThan(0);
    expect(h.trials.length).toBeGreaterThanOrEqual(20);
    // What is listed is what the intact database holds, and what is not is said.
    expect(h.trials).toEqual(intact.trials.filter((t) => !leftOut.has(t.id)));
    expect(h.trials.length + leftOut.size).toBe(32);

    const e = await exported(damaged, path.join(dir, 'damaged.json'));
    expect(e.code, e.stderr).toBe(3);
    const intactExport = await exported(db, path.join(dir, 'intact.json'));
    expect(e.trials).toEqual(intactExport.trials.filter((t) => !leftOut.has(t.id)));

    const report = await run(() => reportCommand(['--db', damaged, '--all']));
    expect(report.code, report.stderr).toBe(3);
    expect(report.stdout).toContain(`${32 - leftOut.size} trial(s).`);

    // A command that writes refuses it as before, in its words; nothing was written.
    const results = writeResults(dir, 'r.json', kvbenchResults({ tokPerS: 100 }));
    const imported = await run(() => importCommand([results, '--system', 'lab', '--db', damaged]));
    expect(imported.code).toBe(1);
    expect(imported.stderr).toMatch(/^kvbench import: .* is damaged .*kvbench will not write to it/);
    expect(sha(damaged)).toBe(before);
  });

  it("leaves out a trial whose row's last overflow page is damaged, which SQLite reads without a word", async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    // The last page of the overflow chain of the first row on the third leaf of trials: SQLite takes
    // its bytes as the row's last columns (kvbench_version, measured_by_version …) whatever they hold.
    const damaged = scribbled(db, 'damaged.db', [lastOverflowPage(db, '/002/000')]);
    const intact = await history(db);
    const h = await history(damaged);
    expect(h.code, h.stderr).toBe(3);
    const lines = h.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(DAMAGED);
    const lost = /^kvbench history: trial (\d+) in \S+ could not be read \(a damaged page\): left out$/.exec(lines[1]);
    expect(lost, lines[1]).not.toBeNull();
    expect(h.trials).toEqual(intact.trials.filter((t) => t.id !== Number(lost![1])));
  });

  it('refuses, in words for reading, a database whose schema is lost, and says what a file that is no SQLite is', async () => {
    const dir = tempDir();
    const db = intactDatabase(dir);
    const pages = pagesOf(db);
    const noSchema = scribbled(db, 'no-schema.db', pages.get('sqlite_schema/leaf')!);
    const r = await run(() => historyCommand(['--db', noSchema]));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^kvbench history: \S+no-schema\.db is damaged and cannot be read \(.*\): restore a backup, or move it away\.\n$/);

    const notSqlite = path.join(dir, 'garbage.db');
    fs.copyFileSync(db, notSqlite);
    const fd = fs.openSync(notSqlite, 'r+');
    fs.writeSync(fd, Buffer.from('these are my notes'), 0, 18, 0);
    fs.closeSync(fd);
    const g = await run(() => exportCommand(['--db', notSqlite, '--out', path.join(dir, 'x.csv')]));
    expect(g.code).toBe(1);
    expect(g.stderr).toMatch(/is not a SQLite database \(its first bytes are not the SQLite header\)/);
    expect(fs.existsSync(path.join(dir, 'x.csv'))).toBe(false);
  });
});
