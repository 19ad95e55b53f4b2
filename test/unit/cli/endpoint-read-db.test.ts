// `kvbench endpoint list/show/compare/export` only read the database (and delete only removes what is there): an explicit --db naming no file
// is a typo, refused as history, report and export refuse it, instead of creating an empty database
// there and answering "no endpoint runs stored" with exit 0.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { endpointCommand } from '../../../src-main/cli/endpoint-command.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { runInProcess } from './in-process.ts';

afterEach(removeTempDirs);

describe('the endpoint commands that only read', () => {
  it('refuse an explicit --db naming no file and create nothing; read an existing database', async () => {
    const dir = tempDir();
    const typo = path.join(dir, 'kvbnech.db');
    const out = path.join(dir, 'runs.csv');
    const commands: [string, string[]][] = [
      ['list', ['list']],
      ['show', ['show', '1']],
      ['compare', ['compare', 'a', 'b']],
      ['export', ['export', '--out', out]],
      // delete writes, but only to what is stored: there is nothing to delete in a database that is not there
      ['delete', ['delete', '1']],
    ];
    for (const [sub, args] of commands) {
      const r = await runInProcess(() => endpointCommand([...args, '--db', typo]));
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toBe(`kvbench endpoint ${sub}: no database at ${typo} (kvbench endpoint run creates one; --db must name an existing file here)\n`);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    // A --db that cannot even be stat'ed (a loop of links) is refused the same way, not a stack trace.
    const loop = path.join(dir, 'loop.db');
    fs.symlinkSync(loop, loop);
    const looped = await runInProcess(() => endpointCommand(['list', '--db', loop]));
    expect(looped.code, looped.stderr).toBe(1);
    expect(looped.stderr).toBe(`kvbench endpoint list: no database at ${loop} (kvbench endpoint run creates one; --db must name an existing file here)\n`);
    fs.rmSync(loop);

    const db = path.join(dir, 'kvbench.db');
    openStore(db).close();
    const list = await runInProcess(() => endpointCommand(['list', '--db', db]));
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/no endpoint runs stored/);
    const show = await runInProcess(() => endpointCommand(['show', '1', '--db', db]));
    expect(show.code).toBe(1);
    expect(show.stderr).toMatch(/^kvbench endpoint: show: .*1/);
    const del = await runInProcess(() => endpointCommand(['delete', '1', '--db', db]));
    expect(del.code).toBe(1);
    expect(del.stderr).toMatch(/^kvbench endpoint: delete: .*1/);
  });
});
