// A filter with a typo (`--scenario storage_only`, `--suite 99`) used to select nothing and exit 0:
// an empty listing, a header-only CSV, an empty report, while an unknown --status, --system, --drive
// or --label was refused. history, report and export refuse an unknown scenario id (neither built in
// nor stored: imported and custom ones are known) and a suite that is not stored, with rc 1, as those
// are; a filter that names something known still gives an empty result where nothing matches.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { historyCommand } from '../../../src-main/cli/history-command.ts';
import { importCommand } from '../../../src-main/cli/import-command.ts';
import { reportCommand } from '../../../src-main/cli/report-command.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { SCENARIO_IDS } from '../../../src-shared/domain/scenarios.ts';
import { kvbenchResults, removeTempDirs, tempDir, writeResults } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(removeTempDirs);

/** Three imported trials in suite 1: two under storage-only, one filed (as a lab's own tool would) under 'lab-custom'. */
async function database(): Promise<{ dir: string; db: string }> {
  const dir = tempDir();
  const db = path.join(dir, 'kvbench.db');
  const files = [1, 2, 3].map((n) => writeResults(dir, `r${n}.json`, kvbenchResults({ tokPerS: 100 * n })));
  const imported = await run(() => importCommand([...files, '--system', 'lab', '--scenario', 'storage-only', '--db', db]));
  expect(imported.code, imported.stderr).toBe(0);
  const raw = openDatabase(db);
  raw.prepare("UPDATE trials SET scenario_id = 'lab-custom' WHERE id = (SELECT MAX(id) FROM trials)").run();
  raw.close();
  return { dir, db };
}

const CHOICES = `${[...SCENARIO_IDS, 'imported', 'multi-host', 'lab-custom'].join(', ')}`;

describe('filters with a typo are refused, not an empty result', () => {
  it('an unknown --scenario: history, export and report say so with the choices, rc 1, and write no file', async () => {
    const { dir, db } = await database();
    const history = await run(() => historyCommand(['--db', db, '--scenario', 'storage_only']));
    expect(history).toEqual({ code: 1, stdout: '', stderr: `kvbench history: unknown scenario(s): storage_only (choose from ${CHOICES})\n` });

    const out = path.join(dir, 'x.csv');
    const exported = await run(() => exportCommand(['--db', db, '--scenario', 'storage-only,storage_only', '--out', out]));
    expect(exported).toEqual({ code: 1, stdout: '', stderr: `kvbench export: unknown scenario(s): storage_only (choose from ${CHOICES})\n` });
    expect(fs.existsSync(out)).toBe(false);

    const report = await run(() => reportCommand(['--db', db, '--suite', '1', '--scenario', 'nosuch']));
    expect(report).toEqual({ code: 1, stdout: '', stderr: `kvbench report: unknown scenario(s): nosuch (choose from ${CHOICES})\n` });
    const newest = await run(() => reportCommand(['--db', db, '--scenario', 'nosuch']));
    expect(newest.code).toBe(1);
    expect(newest.stderr).toContain('unknown scenario(s): nosuch');
    const compared = await run(() => reportCommand(['--db', db, '--compare', 'lab', 'lab', '--scenario', 'nosuch']));
    expect(compared.code).toBe(1);
    expect(compared.stderr).toContain('unknown scenario(s): nosuch');
  });

  it('a suite that is not stored: history refuses it as export and report do', async () => {
    const { dir, db } = await database();
    const missing = 'Suite 99 not found: deleted, or in another database than the one open (see kvbench history --suites)';
    expect(await run(() => historyCommand(['--db', db, '--suite', '99']))).toEqual({ code: 1, stdout: '', stderr: `kvbench history: ${missing}\n` });
    expect(await run(() => historyCommand(['--db', db, '--suite', '1,99', '--json']))).toEqual({ code: 1, stdout: '', stderr: `kvbench history: ${missing}\n` });
    const out = path.join(dir, 'x.csv');
    expect(await run(() => exportCommand(['--db', db, '--suite', '99', '--out', out]))).toEqual({ code: 1, stdout: '', stderr: `kvbench export: ${missing}\n` });
    const report = await run(() => reportCommand(['--db', db, '--suite', '99']));
    expect(report.code).toBe(1);
  });

  it('known filters that match nothing still give an empty result, rc 0; stored custom scenarios are known', async () => {
    const { dir, db } = await database();
    expect(await run(() => historyCommand(['--db', db, '--scenario', 'gpu-only']))).toEqual({ code: 0, stdout: 'no trials match\n', stderr: '' });
    expect(await run(() => historyCommand(['--db', db, '--scenario', 'multi-host', '--suite', '1']))).toEqual({ code: 0, stdout: 'no trials match\n', stderr: '' });
    const custom = await run(() => historyCommand(['--db', db, '--scenario', 'lab-custom', '--json']));
    expect(custom.code, custom.stderr).toBe(0);
    expect((JSON.parse(custom.stdout) as { scenarioId: string }[]).map((t) => t.scenarioId)).toEqual(['lab-custom']);
    const out = path.join(dir, 'x.csv');
    const exported = await run(() => exportCommand(['--db', db, '--scenario', 'imported', '--out', out]));
    expect(exported).toEqual({ code: 0, stdout: '', stderr: `exported 0 trial(s) to ${out} (csv)\n` });
    const report = await run(() => reportCommand(['--db', db, '--suite', '1', '--scenario', 'storage-only', '--json']));
    expect(report.code, report.stderr).toBe(0);
  });
});
