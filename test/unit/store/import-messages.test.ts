// What `kvbench import` says about a file it refuses (review rev12-cli L9b, L9c): the fields that are
// missing or wrong, in words rather than zod's own text, and a reference file whose elapsed time or
// rates cannot be trusted.
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { importResultsFiles } from '../../../src-main/store/import-results.ts';
import { openStore } from '../../../src-main/store/open-store.ts';
import type { Store } from '../../../src-main/store/store.ts';
import { KVBENCH_VERSION } from '../../../src-shared/domain/version.ts';
import { kvbenchResults, referenceResultsNew, removeTempDirs, tempDir, writeResults } from './fixtures.ts';

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

describe('a kvbench results file whose own fields contradict a run (review rev13 #11)', () => {
  /** kvbench results with `edit` applied to a copy: what a damaged or hand-edited file holds. */
  const edited = (edit: (r: Record<string, unknown> & { kvbench: Record<string, unknown> }) => void): Record<string, unknown> => {
    const r = structuredClone(kvbenchResults({ tokPerS: 10 })) as unknown as Record<string, unknown> & { kvbench: Record<string, unknown> };
    edit(r);
    return r;
  };

  it('refuses an unknown status rather than storing it as failed, and a start time that is no time rather than taking the file\'s', async () => {
    const { errors, imported } = await importAll({
      'status.json': edited((r) => (r.kvbench.status = 'bogus')),
      'nostatus.json': edited((r) => delete r.kvbench.status),
      'date.json': edited((r) => (r.kvbench.started_at = 'not a date')),
      'feb30.json': edited((r) => (r.kvbench.started_at = '2026-02-30T10:00:00.000Z')),
      'nodate.json': edited((r) => (r.kvbench.started_at = null)),
    });
    expect(imported).toEqual([]);
    expect(errors['status.json']).toBe('kvbench.status is "bogus", not one of complete, partial, failed, aborted (the run\'s status): not stored (a damaged or edited file)');
    expect(errors['nostatus.json']).toBe('kvbench.status is missing (the run\'s status: complete, partial, failed or aborted): not stored (a damaged or edited file)');
    expect(errors['date.json']).toBe('kvbench.started_at is "not a date", not a time (ISO 8601, as 2026-11-25T04:58:42.395Z), and the trial is dated by it: not stored (a damaged or edited file)');
    expect(errors['feb30.json']).toMatch(/^kvbench\.started_at is "2026-02-30T10:00:00\.000Z", not a time/);
    expect(errors['nodate.json']).toMatch(/^kvbench\.started_at is null, not a time/);
  });

  it('refuses a file whose latency histograms are gone: the trial would drop out of pooled latencies unseen', async () => {
    const { errors, imported } = await importAll({
      'nolat.json': edited((r) => (r.kvbench.latency = null)),
      'noe2e.json': edited((r) => delete (r.kvbench.latency as Record<string, unknown>).end_to_end),
      'nohdr.json': edited((r) => delete ((r.kvbench.latency as Record<string, unknown>).queue_wait as Record<string, unknown>).hdr),
      'notier.json': edited((r) => ((r.kvbench.latency as Record<string, unknown>).tier_read = 7)),
    });
    expect(imported).toEqual([]);
    const tail = ': every kvbench run writes these (a count of 0 where it measured none); not stored (a damaged or edited file)';
    expect(errors['nolat.json']).toBe(`kvbench.latency is null, not the run's latency histograms${tail}`);
    expect(errors['noe2e.json']).toBe(`kvbench.latency.end_to_end is missing${tail}`);
    expect(errors['nohdr.json']).toBe(`kvbench.latency.queue_wait has 1200 samples but no histogram (hdr)${tail}`);
    expect(errors['notier.json']).toMatch(/^(kvbench\.latency\.tier_read is 7, not an object|values no run can produce)/);
  });

  it('stores a run that did no operation of a kind (no GPU tier, no demotion): those distributions are absent, not damaged', async () => {
    const { errors, imported } = await importAll({
      'nogpu.json': edited((r) => {
        const lat = r.kvbench.latency as Record<string, Record<string, unknown>>;
        lat.tier_read = { storage: lat.tier_read.storage };
        lat.demotion = {};
      }),
    });
    expect(errors).toEqual({});
    expect(imported.map((f) => f.status)).toEqual(['complete']);
  });

  it('refuses a file measured by a newer kvbench (its metrics may be defined in ways this one does not know), and a version that is none', async () => {
    const { errors, imported } = await importAll({
      'future.json': edited((r) => (r.kvbench.version = '99.0.0')),
      'banana.json': edited((r) => (r.kvbench.version = 'banana')),
    });
    expect(imported).toEqual([]);
    expect(errors['future.json']).toBe(
      `measured by kvbench 99.0.0, newer than this kvbench (${KVBENCH_VERSION}): this version cannot know how 99.0.0 defines its metrics, ` +
        'so it could not say what the trial compares with; import it with kvbench 99.0.0 or newer',
    );
    expect(errors['banana.json']).toBe('kvbench.version is "banana", not a kvbench version (as 0.7.0): not stored (a damaged or edited file)');
  });

  it('keeps a file of an older kvbench as before, and one without run options as a trial whose configuration is unknown (said)', async () => {
    const { errors, imported } = await importAll({
      'old.json': edited((r) => {
        r.kvbench.version = '0.1.0';
        r.kvbench.run_options = { model: 'tiny-1b', numUsers: 4, duration: 60 };
      }),
      'noopts.json': edited((r) => {
        r.kvbench.run_options = null;
        r.total_tokens_generated = (r.total_tokens_generated as number) + 1; // not a copy of old.json
      }),
    });
    expect(errors).toEqual({});
    expect(imported.map((f) => [path.basename(f.file), f.configKnown]).sort()).toEqual([['noopts.json', false], ['old.json', true]]);
  });

  it('refuses the reference\'s per-request lists holding what no request took: negative, non-numbers, nulls', async () => {
    const bad = referenceResultsNew({ tokPerS: 400, storageTokPerS: 200 });
    bad.end_to_end_latencies = [-1, 'x', null];
    const { errors, imported } = await importAll({ 'lists.json': bad });
    expect(imported).toEqual([]);
    expect(errors['lists.json']).toMatch(/: end_to_end_latencies\.0 is -1, below 0; end_to_end_latencies\.1 is "x", not a number; end_to_end_latencies\.2 is null, not a number$/);
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
