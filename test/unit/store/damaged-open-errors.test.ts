// openDamagedStore is called once openStore refused a file as damaged; by then the file may be gone or
// its mode changed, and it is exported for any caller. Its own open of the file let Node's errors out
// raw (ENOENT: no such file …, EACCES: permission denied, EISDIR), with no word of what to do. They
// are now the store's errors, in openStore's words: NOT_FOUND, DB_READ_ONLY with advice, DB_FOREIGN.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDamagedStore } from '../../../src-main/store/open-store.ts';
import { damagedTrialsPage } from '../../support/damaged-file.ts';
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
