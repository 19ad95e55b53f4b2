// `kvbench export --out` and `kvbench endpoint export --out` that cannot be written: the message names
// the user's --out and the cause (its folder missing, a directory in its place, the disk full), never
// the temporary file the atomic write goes through; a wrong --out is found before the database is read.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { exportCommand } from '../../../src-main/cli/export-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { fillUntilFull, mountTmpfsOrSkip, unmountTmpfsMounts } from '../../support/tmpfs.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { runInProcess as run } from './in-process.ts';

afterEach(() => {
  unmountTmpfsMounts();
  removeTempDirs();
});

/** Runs both exports to `out` (a CSV) and returns their stderr. */
async function bothExports(db: string, out: string): Promise<{ trials: string; endpoint: string }> {
  const e = await run(() => exportCommand(['--db', db, '--out', out]));
  expect(e.code, e.stderr).toBe(1);
  const ep = await run(() => endpointCommand(['export', '--db', db, '--out', out]));
  expect(ep.code, ep.stderr).toBe(1);
  for (const stderr of [e.stderr, ep.stderr]) expect(stderr, 'no temporary file named').not.toMatch(/\.tmp\b/);
  return { trials: e.stderr, endpoint: ep.stderr };
}

describe('an export --out that cannot be written', () => {
  it('in a missing folder: said before the database is opened, naming --out and the folder', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'missing', 'x.csv');
    // A --db that does not exist: had the database been opened first, that would be the error.
    const { trials, endpoint } = await bothExports(path.join(dir, 'no.db'), out);
    expect(trials).toBe(`kvbench export: cannot write --out ${out}: its folder ${path.join(dir, 'missing')} does not exist\n`);
    expect(endpoint).toBe(`kvbench endpoint: export: cannot write --out ${out}: its folder ${path.join(dir, 'missing')} does not exist\n`);
  });

  it('that is a directory: said before the database is opened', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'exp.csv');
    fs.mkdirSync(out);
    const { trials, endpoint } = await bothExports(path.join(dir, 'no.db'), out);
    expect(trials).toBe(`kvbench export: cannot write --out ${out}: ${out} is a directory\n`);
    expect(endpoint).toContain(`cannot write --out ${out}: ${out} is a directory`);
  });

  it('on a full disk: EXPORT_FAILED naming --out and that the disk is full; no file left (tmpfs, root only)', async (ctx) => {
    const dir = tempDir();
    const db = path.join(dir, 'kvbench.db');
    openStore(db).close();
    const full = path.join(dir, 'full');
    fs.mkdirSync(full);
    mountTmpfsOrSkip(ctx, full, '1m');
    fillUntilFull(path.join(full, 'filler'));
    const out = path.join(full, 'x.csv');
    const { trials, endpoint } = await bothExports(db, out);
    expect(trials).toBe(`kvbench export failed (EXPORT_FAILED): could not write ${out}: the disk holding ${full} is full (ENOSPC)\n`);
    expect(endpoint).toContain(`export failed (EXPORT_FAILED): could not write ${out}: the disk holding ${full} is full (ENOSPC)`);
    expect(fs.readdirSync(full)).toEqual(['filler']);
  });
});

describe('an --out without a file name and no --format (rev12-cli L9a)', () => {
  it('a directory: said as such, not that --format is missing', async () => {
    const dir = tempDir();
    for (const out of [dir, `${dir}/`]) {
      const e = await run(() => exportCommand(['--db', path.join(dir, 'no.db'), '--out', out]));
      expect([e.code, e.stderr]).toEqual([1, `kvbench export: cannot write --out ${out}: ${out} is a directory\n`]);
      const ep = await run(() => endpointCommand(['export', '--db', path.join(dir, 'no.db'), '--out', out]));
      expect(ep.code).toBe(1);
      expect(ep.stderr).toContain(`export: cannot write --out ${out}: ${out} is a directory`);
    }
  });

  it('a folder that does not exist yet (ending in /): said that it names a folder, with or without --format', async () => {
    const dir = tempDir();
    const out = `${path.join(dir, 'new')}/`;
    for (const format of [[], ['--format', 'csv']]) {
      const e = await run(() => exportCommand(['--db', path.join(dir, 'no.db'), '--out', out, ...format]));
      expect([e.code, e.stderr]).toEqual([1, `kvbench export: cannot write --out ${out}: it ends in /, so it names a folder, not a file\n`]);
    }
    expect(fs.existsSync(path.join(dir, 'new'))).toBe(false);
  });

  it('a file name without a known extension: --format is what is missing, as before', async () => {
    const dir = tempDir();
    const out = path.join(dir, 'export.txt');
    const e = await run(() => exportCommand(['--db', path.join(dir, 'no.db'), '--out', out]));
    expect([e.code, e.stderr]).toEqual([1, 'kvbench export: --format must be csv, xlsx, json (or use a .csv, .xlsx or .json file name)\n']);
  });
});
