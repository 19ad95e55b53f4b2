// A flag given an empty value (a script's unset variable: `--dir "$DIR"`) is refused, in the words
// kvbench run refuses `--cache-dir ''` with. An empty path was the current directory (`probe --dir ''`
// probed it, writing its files there) or the default database (`--db ''`); an empty filter selected
// every trial (`export --system "$SYS"` exported every system).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { hwCommand } from '../../../src-main/cli/hw-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { mergeCommand } from '../../../src-main/cli/merge-command.ts';
import { parseProbeArgs } from '../../../src-main/cli/probe-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { serveCommand } from '../../../src-main/cli/serve-command.ts';
import { suiteCommand } from '../../../src-main/cli/suite-command.ts';
import { parseWorkloadGenerateArgs } from '../../../src-main/cli/workload-command.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(removeTempDirs);

async function database(): Promise<{ dir: string; db: string }> {
  const dir = tempDir();
  const db = path.join(dir, 'kvbench.db');
  const file = writeResults(dir, 'r1.json', kvbenchResults({ tokPerS: 100 }));
  const imported = await run(() => importCommand([file, '--system', 'lab', '--db', db]));
  expect(imported.code, imported.stderr).toBe(0);
  return { dir, db };
}

describe('empty path values are refused', () => {
  it("probe --dir '' and --output '': refused, nothing probed in the current directory", () => {
    const dir = tempDir();
    expect(parseProbeArgs(['--dir', ''], dir)).toEqual({ ok: false, errors: ['--dir must not be empty'] });
    expect(parseProbeArgs(['--dir', '  ', '--output', ''], dir)).toEqual({ ok: false, errors: ['--dir must not be empty', '--output must not be empty'] });
  });

  it("hw --cache-dir '', workload generate --out '', merge --output '', serve's paths", async () => {
    expect(await run(() => hwCommand(['--cache-dir', '']))).toEqual({ code: 1, stdout: '', stderr: 'kvbench hw: --cache-dir must not be empty\n' });
    expect(parseWorkloadGenerateArgs(['--contexts', '100', '--out', ''])).toEqual({ ok: false, errors: ['--out must not be empty'] });
    const merged = await run(() => mergeCommand(['a.json', '--output', '']));
    expect(merged.code).toBe(1);
    expect(merged.stderr).toContain('--output must not be empty');
    const served = await run(() => serveCommand(['--db', '', '--settings', '', '--renderer', '']));
    expect(served.code).toBe(1);
    expect(served.stderr).toContain('--db must not be empty');
    expect(served.stderr).toContain('--settings must not be empty');
    expect(served.stderr).toContain('--renderer must not be empty');
  });

  it("--db '' is refused by every command that opens the database, not read as the default one", async () => {
    for (const [name, fn, args] of [
      ['history', historyCommand, []],
      ['report', reportCommand, ['--all']],
      ['export', exportCommand, ['--out', path.join(tempDir(), 'x.csv')]],
      ['suite', suiteCommand, ['--plan', '--cache-dir', tempDir()]],
    ] as const) {
      const r = await run(() => fn([...args, '--db', '']));
      expect(r.code, name).toBe(1);
      expect(r.stderr, name).toContain('--db must not be empty');
    }
    const listed = await run(() => endpointCommand(['list', '--db', '']));
    expect(listed).toEqual({ code: 1, stdout: '', stderr: 'kvbench endpoint: list: --db must not be empty\n' });
    const { dir } = await database();
    const imported = await run(() => importCommand([path.join(dir, 'r1.json'), '--system', 'lab', '--db', '']));
    expect(imported.stderr).toContain('--db must not be empty');
  });
});

describe('empty filter values are refused, not read as "no filter"', () => {
  it('history and export: each empty filter is named, rc 1, and no file is written', async () => {
    const { dir, db } = await database();
    for (const flag of ['--system', '--drive', '--label', '--scenario', '--status', '--model', '--since', '--until']) {
      const history = await run(() => historyCommand(['--db', db, flag, '']));
      expect(history, flag).toEqual({ code: 1, stdout: '', stderr: `kvbench history: ${flag} must not be empty\n` });
      const out = path.join(dir, 'x.csv');
      const exported = await run(() => exportCommand(['--db', db, '--out', out, flag, ' ']));
      expect(exported, flag).toEqual({ code: 1, stdout: '', stderr: `kvbench export: ${flag} must not be empty\n` });
      expect(fs.existsSync(out)).toBe(false);
    }
    // A list of nothing but commas is empty too; a value that names something still works.
    expect((await run(() => historyCommand(['--db', db, '--scenario', ',']))).stderr).toBe('kvbench history: --scenario must not be empty\n');
    expect((await run(() => historyCommand(['--db', db, '--system', 'lab']))).code).toBe(0);
  });

  it("report: an empty --system, --label or --scenario, and an empty A or B of --compare", async () => {
    const { db } = await database();
    expect(await run(() => reportCommand(['--db', db, '--system', '']))).toEqual({ code: 1, stdout: '', stderr: 'kvbench report: --system must not be empty\n' });
    expect((await run(() => reportCommand(['--db', db, '--all', '--scenario', '']))).stderr).toBe('kvbench report: --scenario must not be empty\n');
    expect((await run(() => reportCommand(['--db', db, '--compare', '', 'lab']))).stderr).toBe("kvbench report: --compare's A and B must not be empty\n");
  });

  it("suite --scenarios ',' and --label '', import's --system, --label and files, endpoint export's filters", async () => {
    const suite = await run(() => suiteCommand(['--plan', '--cache-dir', tempDir(), '--scenarios', ',', '--label', '']));
    expect(suite.code).toBe(1);
    expect(suite.stderr).toContain('--scenarios must not be empty');
    expect(suite.stderr).toContain('--label must not be empty');
    const { dir, db } = await database();
    const imported = await run(() => importCommand(['', '--system', '', '--label', '', '--db', db]));
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('--system must not be empty');
    expect(imported.stderr).toContain('--label must not be empty');
    expect(imported.stderr).toContain('a results file name must not be empty');
    const exported = await run(() => endpointCommand(['export', '--out', path.join(dir, 'e.csv'), '--label', '', '--db', db]));
    expect(exported).toEqual({ code: 1, stdout: '', stderr: 'kvbench endpoint: export: --label must not be empty\n' });
  });
});

describe('a --since / --until that is no date is told before the database is looked for', () => {
  it('history and export with no database there: the date alone, once (history said "no database" too; export never checked the date)', async () => {
    const db = path.join(tempDir(), 'none.db');
    const out = path.join(tempDir(), 'x.csv');
    expect(await run(() => historyCommand(['--since', '2024-02-30', '--db', db]))).toEqual({ code: 1, stdout: '', stderr: 'kvbench history: --since 2024-02-30 is not a real date\n' });
    expect(await run(() => exportCommand(['--until', 'soon', '--out', out, '--db', db]))).toEqual({
      code: 1,
      stdout: '',
      stderr: "kvbench export: --until must be a date (YYYY-MM-DD or ISO 8601, e.g. 2026-11-24 or 2026-11-24T09:00+01:00), got 'soon'\n",
    });
    expect(fs.existsSync(db)).toBe(false);
    expect(fs.existsSync(out)).toBe(false);
  });
});
