// The commands that only read (history, report, export, and endpoint list/show/compare/export/delete)
// created an empty database at the default location ($KVBENCH_DB, else the user data directory) when
// none was there, so a later "which database has my trials?" found an empty one that looked real.
// They create nothing now: they say there is no database yet, where they looked and what stores
// trials there; a listing lists nothing (exit 0), what needs trials refuses (exit 1, no file written).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => {
  vi.unstubAllEnvs();
  removeTempDirs();
});

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] => (fs.readdirSync(dir, { recursive: true }) as string[]).sort();

describe('a command that only reads, with no database at the default location', () => {
  it('creates none under XDG_DATA_HOME: history lists nothing (0), report and export refuse (1)', async () => {
    const data = tempDir();
    const work = tempDir();
    vi.stubEnv('KVBENCH_DB', undefined);
    vi.stubEnv('XDG_DATA_HOME', data);
    const db = path.join(data, 'kvbench', 'kvbench.db');
    const none = `no kvbench database at ${db} yet (a suite or an import creates one; --db or KVBENCH_DB names another)`;

    expect(await run(() => historyCommand([]))).toEqual({ code: 0, stdout: 'no trials match\n', stderr: `kvbench history: ${none}\n` });
    expect(await run(() => historyCommand(['--json']))).toEqual({ code: 0, stdout: '[]\n', stderr: `kvbench history: ${none}\n` });
    expect(await run(() => historyCommand(['--suites', '--json']))).toEqual({ code: 0, stdout: '[]\n', stderr: `kvbench history: ${none}\n` });
    // A filter naming what is not stored is refused, as with an empty database.
    const filtered = await run(() => historyCommand(['--system', 'lab']));
    expect(filtered.code).toBe(1);
    expect(filtered.stderr).toBe(`kvbench history: ${none}\nkvbench history: no system matches 'lab' (see kvbench history --systems)\n`);

    const out = path.join(work, 'x.csv');
    expect(await run(() => reportCommand([]))).toEqual({ code: 1, stdout: '', stderr: `kvbench report: ${none}\n` });
    expect(await run(() => exportCommand(['--out', out]))).toEqual({ code: 1, stdout: '', stderr: `kvbench export: ${none}\n` });
    const endpointNone = none.replace('a suite or an import creates one', 'kvbench endpoint run creates one');
    expect(await run(() => endpointCommand(['list']))).toEqual({ code: 0, stdout: expect.stringMatching(/no endpoint runs stored/), stderr: `kvbench endpoint list: ${endpointNone}\n` });
    expect(await run(() => endpointCommand(['show', '1']))).toEqual({ code: 1, stdout: '', stderr: `kvbench endpoint show: ${endpointNone}\n` });
    expect(await run(() => endpointCommand(['delete', '1']))).toEqual({ code: 1, stdout: '', stderr: `kvbench endpoint delete: ${endpointNone}\n` });

    expect(filesUnder(data)).toEqual([]);
    expect(filesUnder(work)).toEqual([]);

    // A command that stores trials creates it there, and the readers read it.
    const file = writeResults(work, 'r.json', kvbenchResults({ tokPerS: 100 }));
    const imported = await run(() => importCommand([file, '--system', 'lab']));
    expect(imported.code, imported.stderr).toBe(0);
    expect(fs.existsSync(db)).toBe(true);
    const listed = await run(() => historyCommand([]));
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toBe('');
    expect(listed.stdout).toContain('lab');
  });

  it('says the same of a KVBENCH_DB naming no file, and creates nothing there', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'lab.db');
    vi.stubEnv('KVBENCH_DB', db);
    const r = await run(() => reportCommand(['--all']));
    expect(r).toEqual({ code: 1, stdout: '', stderr: `kvbench report: no kvbench database at ${db} yet (a suite or an import creates one; --db or KVBENCH_DB names another)\n` });
    expect(filesUnder(dir)).toEqual([]);
  });
});
