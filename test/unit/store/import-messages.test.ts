// What `kvbench import` says about a file it refuses (review rev12-cli L9b, L9c): the fields that are
// missing or wrong, in words rather than zod's own text, and a reference file whose elapsed time or
// rates cannot be trusted.
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { referenceResultsNew, removeTempDirs, tempDir, writeResults } from './fixtures.ts';

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

describe('a reference file whose elapsed time or rates cannot be trusted (rev12-cli L9c)', () => {
  // 500 requests and 120,000 tokens in 300 s: 400 tok/s, 1.67 requests/s.
  const withSummary = (over: Record<string, unknown>): Record<string, unknown> => {
    const r = referenceResultsNew({ tokPerS: 400, storageTokPerS: 200 });
    Object.assign(r.summary as Record<string, unknown>, over);
    return r;
  };

  it('an elapsed time of 0 with requests completed is refused: its rates were not measured over it', async () => {
    const { errors, imported } = await importAll({ 'zero.json': withSummary({ elapsed_time: 0 }) });
    expect(imported).toEqual([]);
    expect(errors['zero.json']).toBe(
      'summary.elapsed_time is 0 s, yet the file completed 500 requests and states 400 tok/s: no run takes no time, so its rates ' +
        'were not measured over its elapsed time; not stored (a damaged or edited file)',
    );
  });

  it('rates that contradict the counts ÷ the elapsed time beyond rounding are refused, naming both', async () => {
    const { errors, imported } = await importAll({
      'tput.json': withSummary({ avg_throughput_tokens_per_sec: 800 }),
      'rps.json': withSummary({ requests_per_second: 5 }),
    });
    expect(imported).toEqual([]);
    expect(errors['tput.json']).toBe(
      'summary.avg_throughput_tokens_per_sec is 800, but total_tokens_generated ÷ summary.elapsed_time is 120000 ÷ 300 s = 400: ' +
        'the file contradicts itself; not stored (a damaged or edited file)',
    );
    expect(errors['rps.json']).toMatch(/^summary\.requests_per_second is 5, but requests_completed ÷ summary\.elapsed_time is 500 ÷ 300 s = 1\.667: /);
  });

  it('rates rounded as a person or a spreadsheet would, and a run that completed nothing, are stored as before', async () => {
    const { errors, imported } = await importAll({
      'rounded.json': withSummary({ avg_throughput_tokens_per_sec: 400.2, requests_per_second: 1.67 }),
      'none.json': { requests_completed: 0, total_tokens_generated: 0, summary: { elapsed_time: 0, avg_throughput_tokens_per_sec: 0 } },
    });
    expect(errors).toEqual({});
    expect(imported.map((f) => [path.basename(f.file), f.status]).sort()).toEqual([['none.json', 'failed'], ['rounded.json', 'complete']]);
  });
});

describe('file encodings, said as the dataset reader says them', () => {
  it('a byte-order mark in front is read past; a gzip file is named as such, its bytes never printed', async () => {
    // The BOM was "not JSON: Unexpected token '\uFEFF'"; the gzip file "not JSON: Unexpected token" and binary bytes.
    const results = JSON.stringify(referenceResultsNew({ tokPerS: 400, storageTokPerS: 200 }));
    const { errors, imported } = await importAll({
      'bom.json': `\uFEFF${results}`,
      'gz.json': gzipSync(results),
      'latin1.json': Buffer.from('{"note": "caf\xe9"}', 'latin1'),
    });
    expect(imported).toHaveLength(1);
    expect(errors['bom.json']).toBeUndefined();
    expect(errors['gz.json']).toBe('the file is gzip-compressed: decompress it first (gunzip)');
    expect(errors['latin1.json']).toMatch(/^line 1: not UTF-8 text \(byte 0xE9 at column 14\)/);
  });
});
