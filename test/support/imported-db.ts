// A database of imported suites, as the CLI's label and comparison tests start from: kvbench results
// files imported into a real SQLite file (importDrive, the path `kvbench import` takes).
import { openStore } from '../../src-main/store/open-store.ts';
import { dbIn, importDrive, type DriveRun } from '../unit/export/drive-imports.ts';
import { tempDir } from '../unit/store/fixtures.ts';

/** One imported suite: its runs on drive `drive` of system rig, filed under `scenarioId` with suite label `label` (importDrive's defaults: storage-only, none). */
export type ImportedSuite = readonly [drive: string, runs: readonly DriveRun[], scenarioId?: string, label?: string | null];

/** A new database in a temp dir holding these suites, imported in order (suites 1, 2 …), closed again. */
export async function importedDb(suites: readonly ImportedSuite[]): Promise<{ dir: string; db: string }> {
  const dir = tempDir();
  const store = openStore(dbIn(dir));
  try {
    for (const [drive, runs, scenarioId, label] of suites) await importDrive(store, dir, drive, runs, scenarioId, label);
  } finally {
    store.close();
  }
  return { dir, db: dbIn(dir) };
}
