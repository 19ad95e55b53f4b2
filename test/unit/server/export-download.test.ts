// An export never comes back inside the reply (s14): kvbench serve writes it to a private temporary
// file and the page downloads it once, streamed, from a one-time URL; the desktop app writes it to
// the file its save dialog names. On a real SQLite file, through the real HTTP server: the bytes the
// page downloads are those `kvbench export` writes for the same selection; the URL works once, only
// from the page's own origin, and its file is gone after the download, after its time, and when the
// server stops.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { createBackend, type Backend } from '../../../src-main/server/backend.ts';
import { ExportDownloads } from '../../../src-main/server/export-downloads.ts';
import { startHttpServer, type RunningHttpServer } from '../../../src-main/server/http-server.ts';
import { inAppWords, scenarioLabelsIn } from '../../../src-shared/domain/app-words.ts';
import { runInProcess } from '../cli/in-process.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { seededDatabase } from './served-backend.ts';

const TOKEN = 'cd'.repeat(24);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  removeTempDirs();
});


async function backendOn(db: string, dir: string, o: { downloads?: ExportDownloads; chooseExportFile?: (fileName: string) => Promise<string | null> } = {}): Promise<Backend> {
  const backend = await createBackend({
    mode: o.chooseExportFile ? 'electron' : 'browser',
    settingsFile: path.join(dir, 'settings.json'),
    defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    ...o,
  });
  closers.push(() => backend.close());
  return backend;
}

async function served(db: string, dir: string, tmpRoot: string): Promise<{ backend: Backend; server: RunningHttpServer }> {
  const backend = await backendOn(db, dir, { downloads: new ExportDownloads({ tmpRoot }) });
  const server = await startHttpServer({ backend, host: '127.0.0.1', port: 0, token: TOKEN, rendererDir: dir });
  closers.push(() => server.close());
  return { backend, server };
}

/** export.create as the page sends it (POST with the token). */
async function exportCreate(server: RunningHttpServer, request: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.origin}/api/invoke/export.create`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(request) });
  const body = (await res.json()) as { ok: boolean; value?: Record<string, unknown>; error?: unknown };
  if (!body.ok) throw new Error(JSON.stringify(body.error));
  return body.value!;
}

/**
 * What a CLI export and the app's download hold, set side by side. CSV: whole. JSON: without its
 * exportedAt, and its `filter` record (the app records the page's selection, the CLI its flags).
 * XLSX: by its cells, without the times of making, the CLI's Notes in the app's words (the app's
 * file names its controls, where the CLI's names its flags: report-jobs.ts).
 */
async function comparable(data: Buffer, format: string, from: 'app' | 'cli'): Promise<unknown> {
  if (format === 'csv') return data.toString('utf8');
  if (format === 'json') return { ...(JSON.parse(data.toString('utf8')) as object), exportedAt: null, filter: null };
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(data as unknown as ArrayBuffer);
  const stamp = (c: unknown): unknown => (c instanceof Date ? 'time' : typeof c === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(c) ? 'time' : c);
  // The Notes sheet's last column, `message`, is the prose the app rewords.
  const words = (sheet: string, c: unknown, i: number, row: unknown[]): unknown => (from === 'cli' && sheet === 'Notes' && i === row.length - 1 && typeof c === 'string' ? inAppWords(scenarioLabelsIn(c)) : c);
  return wb.worksheets.map((ws) => ({ name: ws.name, rows: ws.getSheetValues().map((r) => (Array.isArray(r) ? r.map((c, i) => stamp(words(ws.name, c, i, r))) : r)) }));
}

const CASES = [
  { name: 'trials CSV', request: { selection: {}, format: 'csv' }, flags: ['--format', 'csv'], ext: 'csv' },
  { name: 'report CSV of a label', request: { selection: { suiteLabels: ['revA'] }, format: 'csv', content: 'report' }, flags: ['--label', 'revA', '--content', 'report'], ext: 'csv' },
  { name: 'JSON of a system', request: { selection: { systemIds: [`sys-${'b'.repeat(16)}`] }, format: 'json' }, flags: ['--system', `sys-${'b'.repeat(16)}`, '--format', 'json'], ext: 'json' },
  { name: 'XLSX, flagged left out', request: { selection: {}, format: 'xlsx', excludeFlagged: true }, flags: ['--exclude-flagged', '--format', 'xlsx'], ext: 'xlsx' },
] as const;

describe('export.create in kvbench serve: a one-time download, streamed from a private temporary file', () => {
  it('downloads the bytes kvbench export writes for the same selection, once, and leaves no file behind', async () => {
    const { dir, db } = seededDatabase(80, 'kvb-export-download-');
    const tmpRoot = tempDir('kvb-downloads-');
    const { server } = await served(db, dir, tmpRoot);
    for (const c of CASES) {
      const answer = await exportCreate(server, c.request);
      expect(answer).not.toHaveProperty('dataBase64');
      const delivery = answer.delivery as { kind: string; url: string };
      expect(delivery.kind).toBe('download');
      expect(delivery.url).toMatch(/^\/api\/download\/[0-9a-f]{48}$/);
      // The page's link: a GET without the token (a download sends no header), from the page's origin.
      const res = await fetch(`${server.origin}${delivery.url}`, { headers: { 'Sec-Fetch-Site': 'same-origin' } });
      expect(res.status, c.name).toBe(200);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${String(answer.fileName)}"; filename*=UTF-8''${String(answer.fileName)}`);
      expect(res.headers.get('content-type')).toBe(answer.mimeType);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const data = Buffer.from(await res.arrayBuffer());
      expect(data.length).toBe(answer.bytes);
      expect(Number(res.headers.get('content-length'))).toBe(data.length);

      const out = path.join(dir, `cli.${c.ext}`);
      const cli = await runInProcess(() => exportCommand(['--db', db, ...c.flags, '--out', out]));
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stderr).toContain(`${String(answer.trialCount)} trial(s)`);
      if (c.ext === 'csv') expect(data.equals(fs.readFileSync(out)), `${c.name}: byte for byte`).toBe(true);
      else expect(await comparable(data, c.ext, 'app'), c.name).toEqual(await comparable(fs.readFileSync(out), c.ext, 'cli'));
      expect(Number(answer.trialCount), `${c.name}: not vacuous`).toBeGreaterThan(5);

      // Once: the file went with the download.
      expect((await fetch(`${server.origin}${delivery.url}`)).status).toBe(404);
      const [folder] = fs.readdirSync(tmpRoot);
      expect(fs.readdirSync(path.join(tmpRoot, folder)), `${c.name}: nothing left`).toEqual([]);
    }
    expect(fs.statSync(path.join(tmpRoot, fs.readdirSync(tmpRoot)[0])).mode & 0o777).toBe(0o700);
  });

  it('refuses a download from another site, another host, or by POST, without using it up; a made-up token is NOT_FOUND', async () => {
    const { dir, db } = seededDatabase(30, 'kvb-export-download-');
    const { server } = await served(db, dir, tempDir('kvb-downloads-'));
    const url = `${server.origin}${(((await exportCreate(server, { selection: {}, format: 'csv' })).delivery) as { url: string }).url}`;
    expect((await fetch(url, { headers: { 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
    expect((await fetch(url, { headers: { 'Sec-Fetch-Site': 'same-site' } })).status).toBe(403);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);
    expect((await fetch(url, { headers: { Origin: 'http://evil.example' } })).status).toBe(403);
    expect((await fetch(`${server.origin}/api/download/${'0'.repeat(48)}`)).status).toBe(404);
    expect((await fetch(`${server.origin}/api/download/..%2f..%2fetc%2fpasswd`)).status).toBe(404);
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect((await ok.text()).length).toBeGreaterThan(100);
  });

  it('removes a file not downloaded in time, every one when the server stops, and the folders of servers that were killed', async () => {
    const { dir, db } = seededDatabase(30, 'kvb-export-download-');
    const tmpRoot = tempDir('kvb-downloads-');
    // A server killed before its close left a folder: the next one removes it (its pid is gone); a live one's stays.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    fs.mkdirSync(path.join(tmpRoot, `kvbench-exports-${dead}-abc123`));
    fs.writeFileSync(path.join(tmpRoot, `kvbench-exports-${dead}-abc123`, 'old.csv'), 'x');
    fs.mkdirSync(path.join(tmpRoot, `kvbench-exports-${process.ppid}-live00`));
    const expiring = new ExportDownloads({ tmpRoot, keptMs: 0 });
    const backend = await backendOn(db, dir, { downloads: expiring });
    const answer = (await backend.invoke('export.create', { selection: {}, format: 'json' })) as { ok: true; value: { delivery: { url: string } } };
    const left = fs.readdirSync(tmpRoot);
    expect(left).toHaveLength(2);
    expect(left).toContain(`kvbench-exports-${process.ppid}-live00`);
    expect(left.find((n) => n !== `kvbench-exports-${process.ppid}-live00`)).toMatch(new RegExp(`^kvbench-exports-${process.pid}-`));
    const folder = path.join(tmpRoot, fs.readdirSync(tmpRoot).find((n) => n.includes(`-${process.pid}-`))!);
    for (let i = 0; i < 500 && fs.readdirSync(folder).length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(fs.readdirSync(folder)).toEqual([]);
    expect(backend.downloads.take(answer.value.delivery.url.split('/').at(-1)!)).toBeNull();

    // Kept (the default time), then the server stops: the folder goes, the file in it too.
    const kept = new ExportDownloads({ tmpRoot });
    const other = await backendOn(db, dir, { downloads: kept });
    expect(await other.invoke('export.create', { selection: {}, format: 'csv' })).toMatchObject({ ok: true });
    const mine = fs.readdirSync(tmpRoot).filter((n) => n.includes(`-${process.pid}-`));
    expect(mine).toHaveLength(2);
    await other.close();
    await backend.close();
    expect(fs.readdirSync(tmpRoot)).toEqual([`kvbench-exports-${process.ppid}-live00`]);
  });
});

describe('export.create in the desktop app: written straight to the file the save dialog names', () => {
  it('writes the file kvbench export writes, through a temporary beside it; a closed dialog writes nothing; the database is never the file', async () => {
    const { dir, db } = seededDatabase(40, 'kvb-export-download-');
    const out = path.join(dir, 'saved', 'my export.xlsx');
    fs.mkdirSync(path.dirname(out));
    fs.writeFileSync(out, 'an older file, replaced whole');
    let answer: string | null = out;
    const asked: string[] = [];
    const backend = await backendOn(db, dir, {
      chooseExportFile: async (fileName) => {
        asked.push(fileName);
        return answer;
      },
    });
    const saved = await backend.invoke('export.create', { selection: { suiteLabels: ['revB'] }, format: 'xlsx' });
    expect(saved).toMatchObject({ ok: true, value: { delivery: { kind: 'saved', path: out }, fileName: expect.stringMatching(/^kvbench-trials-\d{8}-\d{6}\.xlsx$/) } });
    expect(asked).toEqual([(saved as { value: { fileName: string } }).value.fileName]);
    expect(fs.readdirSync(path.dirname(out))).toEqual(['my export.xlsx']);
    expect(fs.statSync(out).size).toBe((saved as { value: { bytes: number } }).value.bytes);
    const cli = path.join(dir, 'cli.xlsx');
    expect((await runInProcess(() => exportCommand(['--db', db, '--label', 'revB', '--out', cli]))).code).toBe(0);
    expect(await comparable(fs.readFileSync(out), 'xlsx', 'app')).toEqual(await comparable(fs.readFileSync(cli), 'xlsx', 'cli'));

    answer = null;
    expect(await backend.invoke('export.create', { selection: {}, format: 'csv' })).toEqual({ ok: true, value: { dismissed: true } });
    expect(fs.readdirSync(path.dirname(out))).toEqual(['my export.xlsx']);

    const before = fs.readFileSync(db);
    answer = db;
    expect(await backend.invoke('export.create', { selection: {}, format: 'csv' })).toMatchObject({ ok: false, error: { code: 'VALIDATION', message: expect.stringContaining('is the database') } });
    expect(fs.readFileSync(db).equals(before)).toBe(true);

    answer = path.join(dir, 'no-such-folder', 'x.csv');
    expect(await backend.invoke('export.create', { selection: {}, format: 'csv' })).toEqual({
      ok: false,
      error: { code: 'EXPORT_FAILED', message: `export failed: could not write ${answer}: its folder ${path.join(dir, 'no-such-folder')} does not exist` },
    });
  });
});
