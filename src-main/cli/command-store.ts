import { missingExplicitDatabase, resolveDatabasePath } from '../store/data-dir.ts';
import type { Store } from '../store/store.ts';
import { openStoreAndRecover } from '../suite/services.ts';

/**
 * Opens the database a command works on (`--db`, else the default), runs `fn` on it and closes it.
 * A database that cannot be opened is answered on stderr with exit code 1. `readOnly` commands
 * (history, report, export) also refuse an explicit `--db` naming no file: that is a typo, and
 * opening it would create an empty database there.
 */
export async function withCommandStore(
  command: string,
  dbFlag: string | undefined,
  opts: { readOnly: boolean },
  fn: (store: Store) => Promise<number> | number,
): Promise<number> {
  const missing = opts.readOnly ? missingExplicitDatabase(dbFlag) : null;
  if (missing !== null) {
    process.stderr.write(`kvbench ${command}: ${missing}\n`);
    return 1;
  }
  let store: Store;
  try {
    ({ store } = await openStoreAndRecover(resolveDatabasePath(dbFlag)));
  } catch (err) {
    process.stderr.write(`kvbench ${command}: ${(err as Error).message}\n`);
    return 1;
  }
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}
