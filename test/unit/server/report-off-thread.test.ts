// The app's reports and exports on a worker thread (server/report-thread.ts): on a real SQLite file,
// the same answers and the same refusals as built on the backend's own thread; the backend answers
// other requests while one builds; one reading a database the page has switched away from, or cut
// short by kvbench closing, is CANCELLED and hands back nothing; a worker that runs out of memory is
// a clear error in the contract's codes.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { answerReportJob, type ReportJob } from '../../../src-main/server/report-jobs.ts';
import { atomicFileOf, commitAtomicFile } from '../../../src-main/util/write-file-atomic.ts';
import { ExportDownloads } from '../../../src-main/server/export-downloads.ts';
import { REPORT_WORKER_LANES, ReportWorkers } from '../../../src-main/server/report-thread.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { seededDatabase, withBackend } from './served-backend.ts';

const pools: ReportWorkers[] = [];
afterEach(async () => {
  for (const p of pools.splice(0)) await p.close();
  removeTempDirs();
});

/** Report workers as a backend keeps them (two at once), closed after the test. */
function workers(o: { resourceLimits?: { maxOldGenerationSizeMb: number } } = {}): ReportWorkers {
  const p = new ReportWorkers({ ...REPORT_WORKER_LANES, ...(o.resourceLimits ? { resourceLimits: o.resourceLimits } : {}) });
  pools.push(p);
  return p;
}

const SYS_A = `sys-${'a'.repeat(16)}`;
const SYS_B = `sys-${'b'.repeat(16)}`;


/** A time of the last ten minutes (an export's "exported at"), as NOW: two exports made a moment apart are the same export. */
const ISO_TIME = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g;
const recent = (text: string): string => text.replace(ISO_TIME, (t) => (Math.abs(Date.parse(t) - Date.now()) < 600_000 ? 'NOW' : t));
const recentCell = (c: unknown): unknown => (c instanceof Date ? recent(c.toISOString()) : typeof c === 'string' ? recent(c) : c);

/**
 * An answer or a refusal, as data; an export by the file it wrote (moved into place here, as the
 * backend does), by what it holds (when it was made aside: its exported-at times, an XLSX's zip dates).
 */
async function outcome(answer: () => Promise<unknown>, job?: ReportJob): Promise<unknown> {
  let value: Record<string, unknown>;
  try {
    value = (await answer()) as Record<string, unknown>;
  } catch (err) {
    return { refused: { code: (err as { code?: unknown }).code, message: (err as Error).message } };
  }
  if (job?.channel !== 'export.create') return value;
  await commitAtomicFile(job.file);
  const data = fs.readFileSync(job.file.target);
  fs.rmSync(job.file.target);
  const rest = { ...value };
  expect(rest.bytes).toBe(data.length);
  if (!job.file.target.endsWith('.xlsx')) return { ...rest, text: recent(data.toString('utf8')) };
  // Its size too: the zip of a workbook made a moment later compresses its times differently.
  delete rest.bytes;
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(data as unknown as ArrayBuffer);
  const sheets = wb.worksheets.map((ws) => ({ name: ws.name, rows: ws.getSheetValues().map((r) => (Array.isArray(r) ? r.map(recentCell) : r)) }));
  return { ...rest, sheets };
}

let exportsMade = 0;
/** An export job, written into a file of its own in `dir`. */
function exportJob(dir: string, request: Extract<ReportJob, { channel: 'export.create' }>['request']): ReportJob {
  return { channel: 'export.create', request, file: atomicFileOf(path.join(dir, `export-${++exportsMade}.${request.format}`)) };
}

function jobs(suiteIds: number[], dir: string): ReportJob[] {
  return [
    { channel: 'report.build', request: { selection: {} } },
    { channel: 'report.build', request: { selection: { suiteLabels: ['revA'] }, includeIncomplete: true, excludeFlagged: true } },
    { channel: 'report.build', request: { selection: { suiteIds: [suiteIds[2]] }, stated: { readBytesPerS: 3e9, writeBytesPerS: null } } },
    { channel: 'report.compare', request: { kind: 'system', a: SYS_A, b: SYS_B } },
    { channel: 'report.compare', request: { kind: 'label', a: 'revA', b: 'revB', match: 'scenario' } },
    exportJob(dir, { selection: {}, format: 'csv' }),
    exportJob(dir, { selection: { systemIds: [SYS_B] }, format: 'csv', content: 'report' }),
    exportJob(dir, { selection: { suiteIds: [suiteIds[0]] }, format: 'json' }),
    exportJob(dir, { selection: { suiteLabels: ['firmware 2.1'] }, format: 'xlsx' }),
    // Refusals: an unknown suite (NOT_FOUND), a stated bandwidth over several drives (VALIDATION), an unknown system.
    { channel: 'report.build', request: { selection: { suiteIds: [99_999] } } },
    exportJob(dir, { selection: {}, format: 'xlsx', stated: { readBytesPerS: 3e9, writeBytesPerS: null } }),
    { channel: 'report.compare', request: { kind: 'system', a: SYS_A, b: 'no-such-system' } },
  ];
}


describe('reports and exports on a worker thread', () => {
  it('answer exactly what the calling thread answers, refusals too, on a real SQLite file', async () => {
    const { dir, db, suiteIds } = seededDatabase(90, 'kvb-report-thread-');
    const here: Store = openStore(db, { readonly: true });
    const pool = workers();
    try {
      // One after another on the same worker, and two at once (a worker each), as the page asks.
      for (const job of jobs(suiteIds, dir)) {
        const there = await outcome(() => pool.answer(db, job), job);
        expect(there, `${job.channel} ${JSON.stringify(job.request)}`).toEqual(await outcome(() => answerReportJob(here, job), job));
        if (job.channel === 'export.create') expect((there as { trialCount?: number }).trialCount ?? 1, 'not vacuous').toBeGreaterThan(0);
      }
      // Not vacuous: the selections hold trials, and the refusals are the contract's.
      const [all, notFound, stated] = await Promise.all([0, 9, 10].map((i) => outcome(() => pool.answer(db, jobs(suiteIds, dir)[i]))));
      expect(all).toEqual(await outcome(() => answerReportJob(here, jobs(suiteIds, dir)[0])));
      expect((all as { trialCount: number }).trialCount).toBeGreaterThan(60);
      expect(notFound).toMatchObject({ refused: { code: 'NOT_FOUND' } });
      expect(stated).toMatchObject({ refused: { code: 'VALIDATION' } });
    } finally {
      here.close();
    }
  });

  it('the backend answers other requests while a report builds, and its answer is the calling thread\'s', async () => {
    // On the backend's thread, the report ran to its end before anything sent after it was even read.
    const { dir, db } = seededDatabase(150, 'kvb-report-thread-');
    await withBackend(db, dir, async (backend) => {
      const order: string[] = [];
      const report = backend.invoke('report.build', { selection: {} }).then((r) => (order.push('report.build'), r));
      const status = backend.invoke('suite.status', {}).then((r) => (order.push('suite.status'), r));
      const info = backend.invoke('app.info', {}).then((r) => (order.push('app.info'), r));
      const [built] = await Promise.all([report, status, info]);
      expect(order).toEqual(['suite.status', 'app.info', 'report.build']);
      expect(built.ok).toBe(true);
      const here = openStore(db, { readonly: true });
      try {
        const expected = (await backend.invoke('report.build', { selection: {} })) as { value: unknown };
        expect((built as { value: unknown }).value).toEqual(expected.value);
        expect(JSON.parse(JSON.stringify(expected.value))).toEqual(JSON.parse(JSON.stringify(await answerReportJob(here, { channel: 'report.build', request: { selection: {} } }))));
      } finally {
        here.close();
      }
    });
  });

  it('a report of the database switched away from (Settings) is CANCELLED, naming the one now open; the next one reads it', async () => {
    const { dir, db } = seededDatabase(60, 'kvb-report-thread-');
    const other = path.join(dir, 'other.db');
    await withBackend(db, dir, async (backend) => {
      const report = backend.invoke('report.build', { selection: {} });
      const switched = await backend.invoke('settings.update', { databasePath: other, createDatabase: true });
      expect(switched.ok, JSON.stringify(switched)).toBe(true);
      expect(await report).toEqual({
        ok: false,
        error: { code: 'CANCELLED', message: `the report was stopped: the database was switched to ${other} (Settings) while it was being built; ask for it again to read that database` },
      });
      expect(await backend.invoke('report.build', { selection: {} })).toMatchObject({ ok: true, value: { trialCount: 0 } });
    });
  });

  it('an export cut short by kvbench closing is CANCELLED, and no file of it is anywhere', async () => {
    const { dir, db } = seededDatabase(60, 'kvb-report-thread-');
    const before = fs.readdirSync(dir).sort();
    const tmpRoot = tempDir('kvb-downloads-');
    let exported: Promise<unknown> | null = null;
    await withBackend(
      db,
      dir,
      async (backend) => {
        exported = backend.invoke('export.create', { selection: {}, format: 'xlsx' });
      },
      { downloads: new ExportDownloads({ tmpRoot }) },
    );
    expect(await exported).toEqual({ ok: false, error: { code: 'CANCELLED', message: 'the export was stopped: kvbench serve is shutting down' } });
    // The worker writes a temporary file the backend removes once the stopped worker has exited, with the folder downloads wait in.
    expect(fs.readdirSync(dir).sort().filter((f) => f !== 'settings.json')).toEqual(before.filter((f) => !f.endsWith('-wal') && !f.endsWith('-shm')));
    expect(fs.readdirSync(tmpRoot)).toEqual([]);
  });

  it('a worker that runs out of memory is a clear error in the contract\'s codes; a file the worker cannot open is read on the calling thread', async () => {
    const { dir, db } = seededDatabase(30, 'kvb-report-thread-');
    const tiny = workers({ resourceLimits: { maxOldGenerationSizeMb: 6 } });
    expect(await outcome(() => tiny.answer(db, { channel: 'report.build', request: { selection: {} } }))).toEqual({
      refused: { code: 'INTERNAL', message: `the report could not be built: its worker thread ran out of memory. Choose fewer trials (fewer suites, a label or a scenario), or run kvbench report --db ${db} in a terminal.` },
    });
    expect(await outcome(() => tiny.answer(db, exportJob(dir, { selection: {}, format: 'csv' })))).toMatchObject({
      refused: { code: 'EXPORT_FAILED', message: expect.stringContaining('export failed: its worker thread ran out of memory.') },
    });
    // Moved after the backend opened it: its connection still reads it, the worker's open finds nothing there.
    await withBackend(db, dir, async (backend) => {
      const expected = await backend.invoke('report.build', { selection: {} });
      fs.renameSync(db, path.join(dir, 'moved.db'));
      expect(await workers().answer(db, { channel: 'report.build', request: { selection: {} } })).toBeNull();
      expect(await backend.invoke('report.build', { selection: {} })).toEqual(expected);
    });
  });

  it('a report never waits behind exports: exports take at most one of the two workers, reports the other, in order (s14)', async () => {
    // Before, two long exports held both workers and a one-suite report waited for one of them to end.
    const { dir, db, suiteIds } = seededDatabase(60, 'kvb-report-thread-');
    const pool = workers();
    const exporting = (format: 'xlsx' | 'json'): ReportJob => exportJob(dir, { selection: {}, format });
    const report: ReportJob = { channel: 'report.build', request: { selection: { suiteIds: [suiteIds[0]] } } };
    const answers = [pool.answer(db, exporting('xlsx')), pool.answer(db, exporting('json')), pool.answer(db, report)];
    // Turns are handed out as the jobs are asked for: what holds one is known now, whatever the timing.
    expect(pool.occupancy()).toEqual({ running: ['export.create', 'report.build'], waiting: ['export.create'] });
    await answers[2];
    // A report asked while the exports go on takes a worker at once (the second export waits for the first, not for it).
    answers.push(pool.answer(db, report));
    const now = pool.occupancy();
    expect(now.running.filter((c) => c === 'report.build')).toEqual(['report.build']);
    expect(now.running.filter((c) => c === 'export.create')).toHaveLength(1);
    expect(now.waiting).not.toContain('report.build');
    const done = await Promise.all(answers.map((a) => outcome(() => a)));
    expect(done.map((d) => ('refused' in (d as object) ? 'refused' : 'answered'))).toEqual(['answered', 'answered', 'answered', 'answered']);
    expect(pool.occupancy()).toEqual({ running: [], waiting: [] });
  });
});
