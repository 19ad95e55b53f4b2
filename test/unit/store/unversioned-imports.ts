// A database as kvbench before schema 4 left it: many imported trials whose measuring version is
// unknown (migration 4 could not read their gzipped results), so the next read-write open fills
// them — the once-only upgrade a front end has to say it is doing.
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { stalledResults, tempDir, writeResults } from './fixtures.ts';
import { seedStore } from './seed-store.ts';

/** A database at `file` with `count` imported trials (one import cloned by SQL) whose measured_by_version is NULL. */
export async function databaseWithUnversionedImports(file: string, count: number): Promise<void> {
  const store = seedStore(file);
  try {
    const r = await importResultsFiles(store, [writeResults(tempDir(), 'stalled.json', stalledResults('0.5.0'))], { systemLabel: 'B', scenarioId: 'storage-only' });
    const imported = r.imported[0].trialId;
    const columns = (store.db.prepare('SELECT name FROM pragma_table_info(?)').all('trials') as { name: string }[]).map((c) => c.name).filter((c) => c !== 'id' && c !== 'trial_index');
    const copy = store.db.prepare(`INSERT INTO trials (trial_index, ${columns.join(', ')}) SELECT ?, ${columns.join(', ')} FROM trials WHERE id = ?`);
    store.atomically(() => {
      for (let i = 1; i < count; i++) copy.run(i, imported);
    });
    store.db.prepare('UPDATE trials SET measured_by_version = NULL WHERE id >= ?').run(imported);
  } finally {
    store.close();
  }
}
