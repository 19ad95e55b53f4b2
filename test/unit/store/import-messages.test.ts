// What `kvbench import` says about a file it refuses (review rev12-cli L9b): the fields that are
// missing or wrong, in words rather than zod's own text.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { removeTempDirs, tempDir, writeResults } from './fixtures.ts';

let store: Store | null = null;
afterEach(() => {
  store?.close();
  store = null;
  removeTempDirs();
});

/** Imports `files` (name → JSON) into a fresh database; the messages of the refused ones by name, and the imported ones. */
async function importAll(files: Record<string, unknown>) {
  const dir = tempDir();
  const paths = Object.entries(files).map(([name, json]) => writeResults(dir, name, json));
  store = openStore(path.join(dir, 'kvbench.db'));
  const r = await importResultsFiles(store, paths, { systemLabel: 'lab' });
  return { errors: Object.fromEntries(r.errors.map((e) => [path.basename(e.file), e.message])), imported: r.imported };
}

describe('a JSON file that is no results file (rev12-cli L9b)', () => {
  it('names the missing and mistyped fields in words, without zod\'s own text', async () => {
    const { errors } = await importAll({
      'notes.json': { hello: 'world' },
      'list.json': [1, 2],
      'typed.json': { requests_completed: 'many', total_tokens_generated: 500, summary: 3 },
    });
    expect(errors['notes.json']).toBe('not a kvbench or MLPerf KV-cache results file: requests_completed is missing (a number); total_tokens_generated is missing (a number)');
    expect(errors['list.json']).toBe('not a kvbench or MLPerf KV-cache results file: the file holds a list, not an object');
    expect(errors['typed.json']).toBe('not a kvbench or MLPerf KV-cache results file: requests_completed is "many", not a number; summary is 3, not an object');
    for (const m of Object.values(errors)) expect(m).not.toMatch(/✖|→|Invalid input|received undefined/);
  });

  it('values no run can produce are said in the same words', async () => {
    const { errors } = await importAll({
      'neg.json': { requests_completed: 10, total_tokens_generated: 500, summary: { avg_throughput_tokens_per_sec: -250, cache_stats: { cache_hit_rate: 7.5 } } },
      'fast.json': { requests_completed: 10, total_tokens_generated: 500, summary: { avg_throughput_tokens_per_sec: 'fast' } },
    });
    expect(errors['neg.json']).toMatch(/: summary\.avg_throughput_tokens_per_sec is -250, below 0; summary\.cache_stats\.cache_hit_rate is 7\.5, above 1$/);
    expect(errors['fast.json']).toMatch(/: summary\.avg_throughput_tokens_per_sec is "fast", not a number$/);
  });
});
