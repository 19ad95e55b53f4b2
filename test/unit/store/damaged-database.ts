// A database with one damaged row that SQLite's own checks pass, for the tests of what reads it.
import path from 'node:path';
import { expect } from 'vitest';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openDatabase } from '../../../src-main/store/sqlite.ts';
import { kvbenchResults, tempDir, writeResults } from './fixtures.ts';
import { seedStore } from './seed-store.ts';

/**
 * A database of three trials: the suite's (`withHardware`, with a hardware snapshot) and two imported;
 * the first imported one's options and the snapshot are damaged.
 */
export async function damagedDatabase(): Promise<{ db: string; damaged: number; withHardware: number; others: number[] }> {
  const dir = tempDir();
  const db = path.join(dir, 'kvbench.db');
  const store = seedStore(db);
  const withHardware = store.listTrials({})[0].id;
  const files = [1, 2].map((i) => writeResults(dir, `r${i}.json`, kvbenchResults({ tokPerS: 100 * i })));
  const imported = (await importResultsFiles(store, files, { systemLabel: 'lab', scenarioId: 'storage-only' })).imported.map((f) => f.trialId);
  store.close();
  expect(imported).toHaveLength(2);
  // What overwritten bytes leave: text where JSON was, which PRAGMA quick_check does not look into.
  const raw = openDatabase(db);
  raw.prepare('UPDATE trials SET options_json = substr(options_json, 1, 20) || ? WHERE id = ?').run('\u00ab\u00ab\u00ab', imported[0]);
  raw.prepare('UPDATE hardware_snapshots SET profile_json = substr(profile_json, 1, 30) || ?').run('\u00ab\u00ab');
  raw.close();
  return { db, damaged: imported[0], withHardware, others: [withHardware, imported[1]].sort((a, b) => a - b) };
}

