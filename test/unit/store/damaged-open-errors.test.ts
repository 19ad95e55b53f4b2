// openDamagedStore is called once openStore refused a file as damaged; by then the file may be gone or
// its mode changed, and it is exported for any caller. Its own open of the file let Node's errors out
// raw (ENOENT: no such file …, EACCES: permission denied, EISDIR), with no word of what to do. They
// are now the store's errors, in openStore's words: NOT_FOUND, DB_READ_ONLY with advice, DB_FOREIGN.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDamagedStore, openStore } from '../../../src-main/store/open-store.ts';
import { damagedTrialsPage, intactDatabase, pagesOf, scribbled } from '../../support/damaged-file.ts';
import { giveTo, runModuleAs, sourceUrl, unprivilegedOrSkip } from '../../support/unprivileged.ts';
import { removeTempDirs, tempDir } from './fixtures.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  removeTempDirs();
});

const refusal = (fn: () => unknown): { name: string; code: unknown; message: string } => {
  try {
    fn();
  } catch (err) {
    return { name: (err as Error).name, code: (err as { code?: unknown }).code, message: (err as Error).message };
  }
  throw new Error('not refused');
};

describe('openDamagedStore on a file it cannot open', () => {
  it('a file that is gone: NOT_FOUND; a folder: DB_FOREIGN (not raw ENOENT / EISDIR)', () => {
    const dir = tempDir();
    const gone = path.join(dir, 'gone.db');
    expect(refusal(() => openDamagedStore(gone))).toEqual({ name: 'StoreError', code: 'NOT_FOUND', message: `no kvbench database at ${gone}` });
    const folder = path.join(dir, 'folder.db');
    fs.mkdirSync(folder);
    expect(refusal(() => openDamagedStore(folder))).toEqual({ name: 'StoreError', code: 'DB_FOREIGN', message: `${folder} is not a file` });
  });

  it('a damaged file this user may not read: DB_READ_ONLY with advice, not a raw EACCES (as nobody when the tests run as root)', (ctx) => {
    const user = unprivilegedOrSkip(ctx);
    const dir = tempDir();
    const { damaged } = damagedTrialsPage(dir);
    giveTo(user, dir);
    fs.chmodSync(damaged, 0o000);
    cleanups.push(() => fs.chmodSync(damaged, 0o600));
    const e = runModuleAs(
      user,
      `import { openDamagedStore } from '${sourceUrl('src-main/store/open-store.ts')}';
      try { openDamagedStore(process.argv[1], { chooseDatabase: 'in Settings' })?.store.close(); console.log(JSON.stringify({ opened: true })); }
      catch (err) { console.log(JSON.stringify({ name: err.name, code: err.code, message: err.message })); }`,
      [damaged],
    );
    expect(e).toEqual({
      name: 'StoreError',
      code: 'DB_READ_ONLY',
      message:
        `${damaged} cannot be read by this user (it belongs to user id ${fs.statSync(damaged).uid}, mode 0000): EACCES, permission denied. ` +
        'Ask its owner to let you read it (for example, a group you share and chmod g+r) or to copy it for you, then open the copy in Settings.',
    });
  });
});

describe('a damaged database refused to a writer', () => {
  it("names SQLite's findings on one line, as the readers' salvage names them (no '*** in database main ***' line)", () => {
    const intact = intactDatabase(tempDir());
    // An index's page scribbled over: quick_check runs, and finds it.
    const damaged = scribbled(intact, 'damaged.db', [[...pagesOf(intact)].find(([key]) => key.startsWith('trials_') && key.endsWith('/leaf'))![1][0]]);
    const refused = refusal(() => openStore(damaged));
    expect(refused.code).toBe('DB_CORRUPT');
    const salvaged = openDamagedStore(damaged)!;
    salvaged.store.close();
    expect(refused.message).not.toContain('\n');
    expect(refused.message).toContain(`is damaged (${salvaged.damage}). kvbench will not write to it`);
  });
});
