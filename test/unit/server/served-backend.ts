// A backend as kvbench serve makes one, on a database file of a lab's history: what the server tests
// (reports and exports off the backend's thread, downloads, a replaced file) set up alike.
import path from 'node:path';
import { createBackend, type Backend } from '../../../src-main/server/backend.ts';
import type { ExportDownloads } from '../../../src-main/server/export-downloads.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import { tempDir } from '../store/fixtures.ts';
import { seedVariedHistory } from '../store/seed-store.ts';

/** A database file in a new temporary folder (`prefix`) with a lab's history of `trials` trials (three systems, labels, failed and partial trials). */
export function seededDatabase(trials: number, prefix: string): { dir: string; db: string; suiteIds: number[] } {
  const dir = tempDir(prefix);
  const db = path.join(dir, 'kvbench.db');
  const s = openStore(db);
  try {
    return { dir, db, suiteIds: seedVariedHistory(s, trials).suiteIds };
  } finally {
    s.close();
  }
}

/** `use` given a browser-mode backend on `db` (settings in `dir`) and the lines it logs; the backend closed after. */
export async function withBackend<T>(db: string, dir: string, use: (b: Backend, logs: string[]) => Promise<T>, o: { downloads?: ExportDownloads } = {}): Promise<T> {
  const logs: string[] = [];
  const backend = await createBackend({
    mode: 'browser',
    ...o,
    settingsFile: path.join(dir, 'settings.json'),
    defaults: { databasePath: db, defaultCacheDir: '', byteUnits: 'decimal', latencyUnit: 'ms' },
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
  try {
    return await use(backend, logs);
  } finally {
    await backend.close();
  }
}
