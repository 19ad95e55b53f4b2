import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAzureTimestamp } from '../../../src-main/engine/workload/sources/azure-source.ts';
import { resolveBurstTraceFiles } from '../../../src-main/engine/workload/sources/burstgpt-source.ts';
import { createWorkloadSource } from '../../../src-main/engine/workload/sources/create-source.ts';
import { MOONCAKE_BLOCK_TOKENS } from '../../../src-main/engine/workload/sources/mooncake-source.ts';
import {
  AZURE_CODE,
  AZURE_CONV,
  BURST_HEADER,
  HAVE_TRACES,
  MOONCAKE_CONVERSATION,
  MOONCAKE_SYNTHETIC,
  NO_TRACES_WHY,
  makeCtx,
  removeTempDirs,
  takeAll,
  tempDir,
  writeBurst,
  writeFile,
} from './helpers.ts';
import { skippedBecause } from '../../support/skip.ts';

afterEach(removeTempDirs);

const noTraces = skippedBecause(!HAVE_TRACES, `${NO_TRACES_WHY}: the Azure and Mooncake replays of the real traces do not run`);

describe('BurstGPT replay', () => {
  const rows: [number, number, number][] = [
    [100, 500, 40],
    [100.5, 12_000, 10],
    [102, 9_999, 300],
    [101, 20, 0], // earlier than the row before: no wait (the reference sleeps only forward gaps)
    [103, 0, 5], // zero request tokens: one token; 2 s after the row before
  ];

  it('paces by timestamp differences ÷ --trace-speedup, with the reference users, keys and 10,000-token rule', async () => {
    const file = writeBurst(tempDir(), rows);
    const src = await createWorkloadSource(makeCtx({ useBurstTrace: true, burstTracePath: file, traceSpeedup: 2, replayCycles: 1 }));
    expect(src.kind).toBe('burstgpt');
    expect(src.paced).toBe(true);
    const reqs = await takeAll(src);
    expect(reqs.map((r) => r.arrivalNs)).toEqual([0, 250e6, 1000e6, 1000e6, 2000e6]);
    expect(reqs.map((r) => r.userId)).toEqual(['trace_user_0', 'trace_user_1', 'trace_user_2', 'trace_user_3', 'trace_user_4']);
    expect(reqs.map((r) => r.cacheKey)).toEqual(['trace_user_0_req_0000', 'trace_user_1_req_0001', 'trace_user_2_req_0002', 'trace_user_3_req_0003', 'trace_user_4_req_0004']);
    expect(reqs.map((r) => r.phase)).toEqual(['prefill_decode', 'prefill', 'prefill_decode', 'prefill_decode', 'prefill_decode']);
    expect(reqs.map((r) => r.generationTokens)).toEqual([40, 10, 300, 0, 5]);
    // Context is the trace's, less a shared system prompt when one was drawn (prefix caching).
    reqs.forEach((r, i) => expect(r.contextTokens).toBe(Math.max(1, Math.max(1, rows[i][1]) - (r.systemPrompt?.tokens ?? 0))));
    const d = src.describe();
    expect(d).toMatchObject({ format: 'burstgpt-csv', trace_requests: 5, out_of_order_rows: 1, zero_context_rows: 1, cycles_completed: 1 });
    expect(d.trace_span_s).toBeCloseTo(4, 9); // 0.5 + 1.5 + 2 (the backwards step adds nothing)
  });

  it('is unpaced with --trace-speedup 0 (every arrival 0, the scheduler bounds the backlog)', async () => {
    const file = writeBurst(tempDir(), rows);
    const src = await createWorkloadSource(makeCtx({ useBurstTrace: true, burstTracePath: file, traceSpeedup: 0, replayCycles: 1 }));
    expect(src.paced).toBe(false);
    expect((await takeAll(src)).map((r) => r.arrivalNs)).toEqual([0, 0, 0, 0, 0]);
  });

  it('starts a later cycle one mean gap after the last request, under new request keys', async () => {
    const file = writeBurst(tempDir(), [
      [0, 10, 1],
      [1, 10, 1],
      [3, 10, 1],
    ]);
    const src = await createWorkloadSource(makeCtx({ useBurstTrace: true, burstTracePath: file, traceSpeedup: 1, replayCycles: 2 }));
    const reqs = await takeAll(src);
    expect(reqs.map((r) => r.arrivalNs / 1e9)).toEqual([0, 1, 3, 4.5, 5.5, 7.5]);
    expect(new Set(reqs.map((r) => r.cacheKey)).size).toBe(6);
    expect(src.describe().cycles_completed).toBe(2);
    const loop = await createWorkloadSource(makeCtx({ useBurstTrace: true, burstTracePath: file, replayCycles: 0 }));
    expect(await takeAll(loop, 3000)).toHaveLength(3000);
  });

  it('reads a directory of CSVs or a glob as one trace, files in name order, columns by name', async () => {
    const dir = tempDir();
    writeBurst(dir, [[10, 1, 1], [11, 2, 2]], 'b.csv');
    // Columns in another order, Model and Log Type absent: still a BurstGPT file.
    writeFile(dir, 'a.csv', 'Response tokens,Request tokens,Timestamp\n7,100,5\n8,200,6\n');
    writeFile(dir, 'notes.txt', 'not a trace');
    expect(resolveBurstTraceFiles(dir).map((f) => path.basename(f))).toEqual(['a.csv', 'b.csv']);
    expect(resolveBurstTraceFiles(path.join(dir, '*.csv')).map((f) => path.basename(f))).toEqual(['a.csv', 'b.csv']);
    const src = await createWorkloadSource(makeCtx({ useBurstTrace: true, burstTracePath: dir, traceSpeedup: 1, replayCycles: 1, disablePrefixCaching: true }));
    const reqs = await takeAll(src);
    expect(reqs.map((r) => [r.contextTokens, r.generationTokens])).toEqual([
      [100, 7],
      [200, 8],
      [1, 1],
      [2, 2],
    ]);
    expect(reqs.map((r) => r.arrivalNs / 1e9)).toEqual([0, 1, 5, 6]);
  });

  it('is deterministic: same seed, same stream and digest', async () => {
    const file = writeBurst(
      tempDir(),
      Array.from({ length: 300 }, (_, i) => [i * 0.37, 100 + ((i * 7919) % 15000), (i * 31) % 500] as [number, number, number]),
    );
    const digest = async (seed: number) => {
      const src = await createWorkloadSource(makeCtx({ useBurstTrace: true, burstTracePath: file, replayCycles: 1, enableRag: false }, { seed }));
      await takeAll(src);
      return src.digest();
    };
    expect(await digest(5)).toBe(await digest(5));
    expect(await digest(5)).not.toBe(await digest(6));
  });

  it('a file truncated after its validation ends the replay with stream_error and stoppedEarly, not as replayed to its end', async () => {
    const dir = tempDir();
    // Larger than one 256 KiB read, so the replay still has to read the part that goes away.
    const many = Array.from({ length: 20_000 }, (_, i): [number, number, number] => [i * 0.001, 100 + (i % 7), 10]);
    const file = writeBurst(dir, many);
    const copy = writeBurst(dir, many, 'untouched.csv');
    const opts = { traceSpeedup: 0, replayCycles: 1 } as const;
    // Cut at a row boundary, so what is left still parses: only the row count tells.
    const cutBytes = fs.readFileSync(file, 'utf8').lastIndexOf('\n', 400_000) + 1;
    const rowsLeft = fs.readFileSync(file, 'utf8').slice(0, cutBytes).split('\n').length - 2; // less the header and the empty end
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, ...opts })); // validated: 20,000 rows
    fs.truncateSync(file, cutBytes);
    const got = await takeAll(src);
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThanOrEqual(rowsLeft);
    const d = src.describe();
    expect(d.trace_requests).toBe(many.length);
    expect(d.stream_error).toBe(
      `${file}: the file changed during the replay: this pass read ${got.length} requests (${cutBytes} bytes), ` +
        `the validation before the run 20000 (${fs.statSync(copy).size} bytes); the replay stopped there`,
    );
    expect(src.stoppedEarly).toBe(`the burstgpt replay stopped early: ${String(d.stream_error)}`);

    const whole = await createWorkloadSource(makeCtx({ datasetPath: copy, ...opts, replayCycles: 2 }));
    expect(await takeAll(whole)).toHaveLength(2 * many.length);
    expect(whole.describe().stream_error).toBeNull();
    expect(whole.stoppedEarly).toBeNull();
  });

  it('BurstGPT given as --dataset-path is detected from its header', async () => {
    const file = writeBurst(tempDir(), rows);
    const src = await createWorkloadSource(makeCtx({ datasetPath: file, replayCycles: 1 }));
    expect(src.kind).toBe('burstgpt');
  });
});

describe('Azure LLM trace replay', () => {
  it('parses the trace date-times to the 100 ns', () => {
    expect(parseAzureTimestamp('2023-11-16 18:17:03.9799600')).toBeCloseTo(Date.UTC(2023, 10, 16, 18, 17, 3) / 1000 + 0.97996, 6);
    expect(parseAzureTimestamp('2023-11-16T18:17:03Z')).toBe(Date.UTC(2023, 10, 16, 18, 17, 3) / 1000);
    // Another offset names the same instant in UTC: converted, not refused as "not a date-time".
    expect(parseAzureTimestamp('2023-11-16 19:17:03+01:00')).toBe(Date.UTC(2023, 10, 16, 18, 17, 3) / 1000);
    expect(parseAzureTimestamp('2023-11-16 13:47:03.5-0430')).toBe(Date.UTC(2023, 10, 16, 18, 17, 3) / 1000 + 0.5);
    for (const bad of ['2023-13-01 00:00:00', '2023-02-30 00:00:00', '2023-11-16 25:00:00', '17:03.9', '', '2023-11-16 18:17:03.97996001234', '2023-11-16 18:17:03+24:00', '2023-11-16 18:17:03+01:60']) {
      expect(parseAzureTimestamp(bad), bad).toBeNull();
    }
  });

  it.skipIf(noTraces)('replays the real conversation trace: arrivals are offsets from the first request ÷ speedup', async () => {
    const src = await createWorkloadSource(makeCtx({ datasetPath: AZURE_CONV, traceSpeedup: 10, replayCycles: 1, disablePrefixCaching: true }));
    expect(src.kind).toBe('azure');
    const reqs = await takeAll(src);
    expect(reqs).toHaveLength(19_366);
    expect(reqs[0].arrivalNs).toBe(0);
    // Rows 1 and 2 of the file: 18:15:46.6805900 and 18:15:50.9951690 → 4.314579 s, ÷ 10.
    const lines = fs.readFileSync(AZURE_CONV, 'utf8').split('\n');
    const gapS = parseAzureTimestamp(lines[2].split(',')[0])! - parseAzureTimestamp(lines[1].split(',')[0])!;
    expect(gapS).toBeCloseTo(4.314579, 6);
    expect(Math.abs(reqs[1].arrivalNs - gapS * 1e8)).toBeLessThan(1000);
    expect(reqs[0].contextTokens).toBe(Number(lines[1].split(',')[1]));
    for (let i = 1; i < reqs.length; i++) expect(reqs[i].arrivalNs).toBeGreaterThanOrEqual(reqs[i - 1].arrivalNs);
    const d = src.describe();
    expect(d.format).toBe('azure-llm-csv');
    expect(d.trace_span_s as number).toBeGreaterThan(3000);
    expect(reqs[reqs.length - 1].arrivalNs / 1e9).toBeCloseTo((d.trace_span_s as number) / 10, 3);
  });

  it.skipIf(noTraces)('reads the code trace too', async () => {
    const src = await createWorkloadSource(makeCtx({ datasetPath: AZURE_CODE, traceSpeedup: 0, replayCycles: 1 }));
    expect((await takeAll(src)).length).toBe(8819);
  });
});

describe.skipIf(noTraces)('Mooncake trace replay', () => {
  const firstRecords = (file: string, n: number) =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(0, n)
      .map((l) => JSON.parse(l) as { timestamp: number; input_length: number; output_length: number; hash_ids: number[] });

  it('makes one 512-token prefix block per hash id, the last one shorter, adding up to the input length', async () => {
    const src = await createWorkloadSource(makeCtx({ datasetPath: MOONCAKE_CONVERSATION, traceSpeedup: 1, replayCycles: 1 }));
    expect(src.kind).toBe('mooncake');
    const reqs = await takeAll(src, 200);
    const recs = firstRecords(MOONCAKE_CONVERSATION, 200);
    reqs.forEach((r, i) => {
      const rec = recs[i];
      expect(r.prefixBlocks!.map((b) => b.key)).toEqual(rec.hash_ids.map((id) => `mc_block_${id}`));
      const tokens = r.prefixBlocks!.map((b) => b.tokens);
      expect(tokens.slice(0, -1).every((t) => t === MOONCAKE_BLOCK_TOKENS)).toBe(true);
      expect(tokens[tokens.length - 1]).toBeGreaterThan(0);
      expect(tokens[tokens.length - 1]).toBeLessThanOrEqual(MOONCAKE_BLOCK_TOKENS);
      expect(tokens.reduce((a, b) => a + b, 0)).toBe(rec.input_length);
      expect(r.contextTokens).toBe(rec.input_length); // no synthetic system prompt on explicit prefixes
      expect(r.systemPrompt).toBeNull();
      expect(r.generationTokens).toBe(rec.output_length);
      expect(r.arrivalNs).toBe(Math.round(rec.timestamp * 1e6));
      expect(r.phase).toBe(rec.input_length >= 10_000 ? 'prefill' : 'prefill_decode');
    });
    // The first requests share block 0: the shared prefix is the same cache entry.
    expect(reqs[0].prefixBlocks![0].key).toBe('mc_block_0');
    expect(reqs[1].prefixBlocks![0].key).toBe('mc_block_0');
    const d = src.describe();
    expect(d.trace_requests).toBe(12_031);
    expect(d.trace_blocks).toBe(288_500);
    expect(d.trace_distinct_blocks).toBe(182_790);
    expect(d.trace_ideal_block_hit_rate).toBeCloseTo(1 - 182_790 / 288_500, 12);
    expect((d.offered as { prefix_block_ideal_hit_rate: number }).prefix_block_ideal_hit_rate).toBeGreaterThan(0);
  });

  it('divides timestamps by --trace-speedup and prefixes later cycles\' block keys', async () => {
    const src = await createWorkloadSource(makeCtx({ datasetPath: MOONCAKE_SYNTHETIC, traceSpeedup: 4, replayCycles: 2 }));
    const reqs = await takeAll(src);
    expect(reqs).toHaveLength(2 * 3993);
    const recs = firstRecords(MOONCAKE_SYNTHETIC, 3);
    expect(reqs[2].arrivalNs).toBe(Math.round((recs[2].timestamp * 1e6) / 4));
    const second = reqs.slice(3993);
    expect(second.every((r) => r.prefixBlocks!.every((b) => b.key.startsWith('c1_mc_block_')) && r.cacheKey.startsWith('c1_'))).toBe(true);
    expect(second[0].arrivalNs).toBeGreaterThan(reqs[3992].arrivalNs);
  });

  it('is deterministic for a seed', async () => {
    const digest = async (seed: number) => {
      const src = await createWorkloadSource(makeCtx({ datasetPath: MOONCAKE_CONVERSATION, traceSpeedup: 0 }, { seed }));
      await takeAll(src, 5000);
      return src.digest();
    };
    expect(await digest(3)).toBe(await digest(3));
    expect(await digest(3)).not.toBe(await digest(4));
  });
});

describe('Burst trace files', () => {
  it('refuses a path with no CSV files', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'x.txt'), BURST_HEADER);
    expect(() => resolveBurstTraceFiles(dir)).toThrow(/no CSV files matched/);
    expect(() => resolveBurstTraceFiles(path.join(dir, 'nope.csv'))).toThrow(/does not exist/);
  });
});
