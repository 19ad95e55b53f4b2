// Bad input files: each is refused before the run with a VALIDATION error naming the file and line.
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { KvbenchError } from '../../../src-shared/domain/errors.ts';
import { createWorkloadSource } from '../../../src-main/engine/workload/sources/create-source.ts';
import { BURST_HEADER, conversation, makeCtx, removeTempDirs, takeAll, tempDir, writeFile } from './helpers.ts';

afterEach(removeTempDirs);

async function refusal(name: string, content: string | Buffer, opts: { burst?: boolean } = {}): Promise<{ file: string; message: string }> {
  const file = writeFile(tempDir(), name, content);
  const ctx = makeCtx(opts.burst ? { useBurstTrace: true, burstTracePath: file } : { datasetPath: file });
  try {
    await createWorkloadSource(ctx);
  } catch (err) {
    expect(err).toBeInstanceOf(KvbenchError);
    expect((err as KvbenchError).code).toBe('VALIDATION');
    const message = (err as Error).message;
    expect(message).toContain(file);
    return { file, message };
  }
  throw new Error(`${name} was accepted`);
}

const mc = (ts: number, input: number, ids: number[]) => JSON.stringify({ timestamp: ts, input_length: input, output_length: 10, hash_ids: ids });
const HUGE = 'x'.repeat(1024 * 1024 + 10);

describe('bad dataset and trace files', () => {
  it.each([
    ['empty file', 'empty.json', '', /the file is empty/],
    ['whitespace only', 'blank.csv', '\n\n  \n', /the file is empty/],
    ['binary garbage', 'bin.dat', Buffer.from([0, 1, 2, 3, 255, 10, 4, 5]), /bin\.dat: the file holds NUL bytes: a binary file, not a UTF-8 text trace$/],
    ['unknown CSV header', 'other.csv', 'a,b,c\n1,2,3\n', /line 1: unrecognised format .*supported formats/s],
  ])('%s', async (_what, name, content, re) => {
    expect((await refusal(name, content)).message).toMatch(re);
  });

  describe('encodings and line endings', () => {
    const csv = `${BURST_HEADER}\n1,ChatGPT,10,20,30,x\n2,ChatGPT,11,21,32,x\n`;
    const sharegpt = JSON.stringify([conversation('a', [[8, 8]])]);

    it('a compressed file says so, however it is given', async () => {
      for (const burst of [false, true]) {
        expect((await refusal('b.csv.gz', gzipSync(csv), { burst })).message).toMatch(/b\.csv\.gz: the file is gzip-compressed: decompress it first \(gunzip\)$/);
      }
      expect((await refusal('s.json.gz', gzipSync(sharegpt))).message).toMatch(/gzip-compressed/);
    });

    it('UTF-16, with or without a byte-order mark, says so and echoes none of its bytes', async () => {
      const cases: [string, Buffer][] = [
        ['le-bom.csv', Buffer.from(`\uFEFF${csv}`, 'utf16le')],
        ['be-bom.csv', Buffer.from(`\uFEFF${csv}`, 'utf16le').swap16()],
        ['le.csv', Buffer.from(csv, 'utf16le')],
        ['s.json', Buffer.from(`\uFEFF${sharegpt}`, 'utf16le')],
      ];
      for (const [name, bytes] of cases) {
        for (const burst of name.endsWith('.csv') ? [false, true] : [false]) {
          const { message } = await refusal(name, bytes, { burst });
          expect(message, name).toMatch(/: the file is UTF-16 encoded( \(no byte-order mark\))?: convert it to UTF-8 \(e\.g\. iconv -f UTF-16 -t UTF-8\)$/);
        }
      }
    });

    it('a byte that is not UTF-8 (a Latin-1 file) is refused with its line and column, not read as U+FFFD', async () => {
      const latin1 = (text: string) => Buffer.from(text, 'latin1');
      expect((await refusal('b.csv', latin1(`${BURST_HEADER}\n1,ChatGPT,10,20,30,x\n2,Caf\u00e9,11,21,32,x\n`))).message).toMatch(
        /b\.csv, line 3: not UTF-8 text \(byte 0xE9 at column 6\): kvbench reads UTF-8 only; convert the file \(for Latin-1: iconv -f latin1 -t utf-8\)$/,
      );
      const sg = `[\n${JSON.stringify(conversation('a', [[8, 8]]))},\n{"id": "b", "conversations": [\n {"from": "human", "value": "caf\u00e9"},\n {"from": "gpt", "value": "ok"}]}\n]`;
      expect((await refusal('s.json', latin1(sg))).message).toMatch(/s\.json, line 4: not UTF-8 text \(byte 0xE9 at column 33\)/);
      expect((await refusal('m.jsonl', latin1(`${mc(0, 600, [1, 2])}\n{"timestamp": 1, "note": "\u00e9"}\n`))).message).toMatch(/m\.jsonl, line 2: not UTF-8 text/);
    });

    it('blank lines before the header are skipped, as the CSV parser does', async () => {
      for (const [name, lead] of [['b.csv', '\n'], ['a.csv', '\r\n \r\n']] as const) {
        const content = name === 'b.csv' ? csv : 'TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.97,10,2\r\n';
        const file = writeFile(tempDir(), name, `${lead}${content}`);
        const src = await createWorkloadSource(makeCtx({ datasetPath: file, traceSpeedup: 0, replayCycles: 1 }));
        expect(src.kind).toBe(name === 'b.csv' ? 'burstgpt' : 'azure');
        expect(await takeAll(src)).toHaveLength(name === 'b.csv' ? 2 : 1);
      }
    });

    it('lines ending in CR alone are named, not read as a header and no rows', async () => {
      const cr = csv.replaceAll('\n', '\r');
      for (const burst of [false, true]) {
        expect((await refusal('b.csv', cr, { burst })).message).toMatch(/b\.csv, line 1: the lines end in CR alone \(classic Mac line endings\): convert them to LF or CR LF/);
      }
      const mcCr = `${mc(0, 600, [1, 2])}\r${mc(5, 600, [1, 3])}\r`;
      expect((await refusal('m.jsonl', mcCr)).message).toMatch(/m\.jsonl, line 1: the lines end in CR alone/);
    });

    it('control characters of an unrecognised first line are escaped, never sent to the terminal', async () => {
      const { message } = await refusal('t.csv', 'time\x1b[2J,bell\x07,\u202eevil\n1,2,3\n');
      expect(message).toContain('(first line "time\\u{1b}[2J,bell\\u{7},\\u{202e}evil")');
      expect(message).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
    });

    it('a first line longer than the 1 MiB detection window says so', async () => {
      const huge = `{"timestamp": 0, "input_length": 102400000, "output_length": 5, "hash_ids": [${Array.from({ length: 200_000 }, (_, i) => i).join(', ')}]}\n`;
      expect((await refusal('m.jsonl', huge)).message).toMatch(/m\.jsonl, line 1: the line is longer than 1 MiB/);
      expect((await refusal('b.csv', `${'x,'.repeat(600_000)}\n`)).message).toMatch(/b\.csv, line 1: the line is longer than 1 MiB/);
    });
  });

  describe('ShareGPT', () => {
    it('truncated file', async () => {
      const text = JSON.stringify([conversation('a', [[10, 10]]), conversation('b', [[10, 10]])], null, 1);
      const { message } = await refusal('trunc.json', text.slice(0, text.length - 40));
      expect(message).toMatch(/ends inside the JSON array \(truncated\?\)/);
    });
    it('an element that is not valid JSON names its line', async () => {
      const { message } = await refusal('bad.json', `[\n${JSON.stringify(conversation('a', [[10, 10]]))},\n{"id": "b", "conversations": [nope]}\n]`);
      expect(message).toMatch(/, line 3: element 2 of the JSON array is not valid JSON/);
    });
    it('wrong shape names the conversation and line', async () => {
      const { message } = await refusal('shape.json', `[\n\n{"id": "a", "conversations": "hello"}]`);
      expect(message).toMatch(/, line 3: conversation 1 is not a ShareGPT conversation .*conversations/);
    });
    it('a non-string message value', async () => {
      const { message } = await refusal('value.json', `[{"id": "a", "conversations": [{"from": "human", "value": 5}, {"from": "gpt", "value": "x"}]}]`);
      expect(message).toMatch(/line 1: conversation 1, message 1: "value" must be a string/);
    });
    it('an empty array, or no usable turn', async () => {
      expect((await refusal('none.json', '[]')).message).toMatch(/the JSON array is empty/);
      expect((await refusal('noturn.json', '[{"id":"a","conversations":[{"from":"gpt","value":"hi"}]}]')).message).toMatch(/none of its 1 conversations has a turn/);
    });
    it('trailing garbage and trailing commas', async () => {
      expect((await refusal('tail.json', '[{"id":"a","conversations":[]}] extra')).message).toMatch(/unexpected content after the closing/);
      expect((await refusal('comma.json', '[{"id":"a","conversations":[]},]')).message).toMatch(/trailing comma/);
    });
  });

  describe('BurstGPT', () => {
    it('missing column', async () => {
      const { message } = await refusal('b.csv', 'Timestamp,Model,Request tokens,Total tokens\n1,x,2,3\n', { burst: true });
      expect(message).toMatch(/, line 1: not a BurstGPT CSV header: missing column\(s\) "Response tokens"/);
    });
    it('non-numeric field', async () => {
      const { message } = await refusal('b.csv', `${BURST_HEADER}\n1,ChatGPT,10,20,30,x\n2,ChatGPT,ten,20,30,x\n`, { burst: true });
      expect(message).toMatch(/, line 3: Request tokens "ten" is not a non-negative integer/);
    });
    it('negative or fractional tokens, bad timestamp', async () => {
      expect((await refusal('b.csv', `${BURST_HEADER}\n1,ChatGPT,-5,20,15,x\n`, { burst: true })).message).toMatch(/line 2: Request tokens "-5"/);
      expect((await refusal('b.csv', `${BURST_HEADER}\n1,ChatGPT,5,2.5,15,x\n`, { burst: true })).message).toMatch(/line 2: Response tokens "2.5"/);
      expect((await refusal('b.csv', `${BURST_HEADER}\nnoon,ChatGPT,5,2,15,x\n`, { burst: true })).message).toMatch(/line 2: Timestamp "noon" is not a number/);
    });
    it('truncated last row', async () => {
      const { message } = await refusal('b.csv', `${BURST_HEADER}\n1,ChatGPT,10,20,30,x\n2,ChatGPT,1`, { burst: true });
      expect(message).toMatch(/, line 3: expected 6 fields as in the header, found 3/);
    });
    it('header only', async () => {
      expect((await refusal('b.csv', `${BURST_HEADER}\n`, { burst: true })).message).toMatch(/contains no requests/);
    });
    it('a line over 1 MiB', async () => {
      const { message } = await refusal('b.csv', `${BURST_HEADER}\n1,ChatGPT,10,20,30,x\n2,${HUGE},10,20,30,x\n`, { burst: true });
      expect(message).toMatch(/, line 3: line is longer than 1 MiB/);
    });
    it('an unterminated quote', async () => {
      expect((await refusal('b.csv', `${BURST_HEADER}\n1,"ChatGPT,10,20,30,x\n`, { burst: true })).message).toMatch(/line 2: unterminated quoted field/);
    });
    it('token counts longer than any model\'s context (a request that could never complete)', async () => {
      expect((await refusal('b.csv', `${BURST_HEADER}\n1,ChatGPT,10,20,30,x\n2,ChatGPT,10,1000000000000000,30,x\n`, { burst: true })).message).toMatch(
        /, line 3: Response tokens 1000000000000000 is more than 10,000,000 \(longer than any model's context\)/,
      );
      expect((await refusal('b.csv', `${BURST_HEADER}\n1,ChatGPT,10000001,20,30,x\n`, { burst: true })).message).toMatch(/, line 2: Request tokens 10000001 is more than 10,000,000/);
    });
  });

  describe('Azure', () => {
    const AZ = 'TIMESTAMP,ContextTokens,GeneratedTokens';
    const row1 = '2023-11-16 18:17:03.97,10,2';
    it('bad date-time and wrong values', async () => {
      expect((await refusal('a.csv', `${AZ}\n${row1}\n2023-11-16 18:17,10,2\n`)).message).toMatch(/, line 3: TIMESTAMP "2023-11-16 18:17" is not a date-time/);
      expect((await refusal('a.csv', `${AZ}\n${row1}\n2023-11-16 18:17:04.97,,2\n`)).message).toMatch(/, line 3: ContextTokens "" is not a non-negative integer/);
      expect((await refusal('a.csv', `${AZ}\n2023-11-16 18:17:03.97,10,x\n`)).message).toMatch(/line 2: GeneratedTokens "x"/);
    });
    it('a header missing a column is no Azure trace: refused, naming the header it would need', async () => {
      const { message } = await refusal('a.csv', 'TIMESTAMP,ContextTokens\n2023-11-16 18:17:03.97,10\n');
      expect(message).toMatch(/, line 1: unrecognised format \(first line "TIMESTAMP,ContextTokens"\)/);
      expect(message).toContain(`Azure LLM inference trace CSV: header ${AZ}`);
    });
    it('token counts longer than any model\'s context', async () => {
      expect((await refusal('a.csv', `${AZ}\n${row1}\n2023-11-16 18:17:04.97,1000000000000,2\n`)).message).toMatch(/, line 3: ContextTokens 1000000000000 is more than 10,000,000/);
      expect((await refusal('a.csv', `${AZ}\n2023-11-16 18:17:04.97,10,20000000\n`)).message).toMatch(/, line 2: GeneratedTokens 20000000 is more than 10,000,000/);
    });
    it('a row with a field too many or too few', async () => {
      expect((await refusal('a.csv', `${AZ}\n${row1}\n2023-11-16 18:17:04.97,10,2,7\n`)).message).toMatch(/, line 3: expected 3 fields as in the header, found 4/);
      expect((await refusal('a.csv', `${AZ}\n${row1}\n2023-11-16 18:17:04.97,10\n`)).message).toMatch(/, line 3: expected 3 fields as in the header, found 2/);
    });
    it('truncated last row', async () => {
      expect((await refusal('a.csv', `${AZ}\n${row1}\n2023-11-16 18:1`)).message).toMatch(/, line 3: expected 3 fields as in the header, found 1 \(truncated or malformed row\?\)/);
      expect((await refusal('a.csv', `${AZ}\n${row1}\n2023-11-16 18:17:04.97,1`)).message).toMatch(/, line 3: expected 3 fields as in the header, found 2/);
    });
    it('an extra column in the header is read past: the columns are found by name, in any order', async () => {
      const file = writeFile(tempDir(), 'a.csv', `GeneratedTokens,Note,ContextTokens,TIMESTAMP\n2,x,10,2023-11-16 18:17:03.97\n5,y,20,2023-11-16 18:17:04.97\n`);
      const src = await createWorkloadSource(makeCtx({ datasetPath: file, replayCycles: 1 }));
      expect(src.kind).toBe('azure');
      const reqs = await takeAll(src);
      expect(reqs.map((r) => [r.contextTokens, r.generationTokens])).toEqual([
        [10, 2],
        [20, 5],
      ]);
    });
  });

  describe('Mooncake', () => {
    it('truncated last line', async () => {
      const { message } = await refusal('m.jsonl', `${mc(0, 600, [1, 2])}\n${mc(5, 600, [1, 3])}\n{"timestamp": 9, "input_le`);
      expect(message).toMatch(/, line 3: not valid JSON \(truncated line\?\)/);
    });
    it('hash_ids that do not cover the input length', async () => {
      const { message } = await refusal('m.jsonl', `${mc(0, 600, [1, 2])}\n${mc(5, 1200, [1, 3])}\n`);
      expect(message).toMatch(/, line 2: hash_ids lists 2 block\(s\) but input_length 1200 needs 3 blocks of 512 tokens/);
    });
    it('missing or mistyped fields', async () => {
      expect((await refusal('m.jsonl', `${mc(0, 600, [1, 2])}\n{"timestamp": 1, "input_length": 600, "hash_ids": [1, 2]}\n`)).message).toMatch(/line 2: .*output_length/);
      expect((await refusal('m.jsonl', `${mc(0, 600, [1, 2])}\n{"timestamp": "soon", "input_length": 600, "output_length": 1, "hash_ids": [1, 2]}\n`)).message).toMatch(
        /line 2: .*timestamp must be a number/,
      );
    });
    it('a line over 1 MiB', async () => {
      const { message } = await refusal('m.jsonl', `${mc(0, 600, [1, 2])}\n{"timestamp": 1, "pad": "${HUGE}"}\n`);
      expect(message).toMatch(/, line 2: line is longer than 1 MiB/);
    });
    it('input_length or output_length longer than any model\'s context (output_length 1e15 never completed)', async () => {
      const huge = JSON.stringify({ timestamp: 5, input_length: 512, output_length: 1e15, hash_ids: [1] });
      expect((await refusal('m.jsonl', `${mc(0, 600, [1, 2])}\n${huge}\n`)).message).toMatch(
        /, line 2: not a Mooncake record .*: output_length: output_length must be at most 10,000,000 \(more than any model's context holds\)/,
      );
      const long = JSON.stringify({ timestamp: 5, input_length: 1e15, output_length: 1, hash_ids: [1] });
      expect((await refusal('m.jsonl', `${mc(0, 600, [1, 2])}\n${long}\n`)).message).toMatch(/, line 2: .*input_length: input_length must be at most 10,000,000/);
    });
    it('a first line that names hash_ids but is not JSON (a NaN) is a Mooncake line with an error, named by its line', async () => {
      // It was "a JSON document that is neither a ShareGPT array, a Mooncake trace nor …", without a line.
      const { message } = await refusal('m.jsonl', `\n{"timestamp": NaN, "input_length": 512, "output_length": 5, "hash_ids": [1]}\n`);
      expect(message).toMatch(/m\.jsonl, line 2: not valid JSON \(truncated line\?\)/);
    });
    it('JSON lines that are not Mooncake records', async () => {
      expect((await refusal('m.jsonl', '{"prompt": "hi"}\n{"prompt": "ho"}\n')).message).toMatch(/without "hash_ids"/);
    });
  });

  describe('workload files', () => {
    it('JSON syntax error names the line', async () => {
      const { message } = await refusal('w.json', '{\n  "format": "kvbench-workload",\n  "schema_version": 1,\n  "batches": [,]\n}\n');
      expect(message).toMatch(/, line 4: not valid JSON/);
    });
    it('schema problems are listed with their paths', async () => {
      const w = {
        format: 'kvbench-workload',
        schema_version: 1,
        batches: [
          { index: 0, context_tokens: 100, delay_ms: 0, requests: [{ id: 'a', prompt_id: 'p', context_tokens: 100, generation_tokens: 1, reused: false }] },
          { index: 1, context_tokens: 100, delay_ms: 0, requests: [{ id: 'a', prompt_id: 'p', context_tokens: 200, generation_tokens: -1, reused: true }] },
        ],
      };
      const { message } = await refusal('w.json', JSON.stringify(w));
      expect(message).toContain('batches[1].requests[0].generation_tokens: generation_tokens cannot be negative');
      const dup = JSON.stringify({ ...w, batches: [w.batches[0], { ...w.batches[1], requests: [{ ...w.batches[1].requests[0], generation_tokens: 1 }] }] });
      const m2 = (await refusal('w2.json', dup)).message;
      expect(m2).toContain('duplicate request id "a"');
      expect(m2).toContain('prompt "p" has 200 context tokens here but 100 earlier');
    });
    it('an unsupported schema version', async () => {
      const { message } = await refusal('w.json', JSON.stringify({ format: 'kvbench-workload', schema_version: 2, batches: [] }));
      expect(message).toMatch(/unsupported schema_version 2 \(this kvbench reads version 1\)/);
    });
    const oneRequest = (contextTokens: number) => ({
      format: 'kvbench-workload',
      schema_version: 1,
      batches: [{ index: 0, context_tokens: contextTokens, delay_ms: 0, requests: [{ id: 'a', prompt_id: 'p', context_tokens: contextTokens, generation_tokens: 1, reused: false }] }],
    });
    it('a context longer than any model\'s (which alone would exhaust memory) is refused, not crashed on', async () => {
      const { message } = await refusal('w.json', JSON.stringify(oneRequest(9_007_199_254_740_991)));
      expect(message).toContain('batches[0].requests[0].context_tokens: context_tokens must be at most 10,000,000');
    });
    it('a byte-order mark in front is read past', async () => {
      const file = writeFile(tempDir(), 'bom.json', `\uFEFF${JSON.stringify(oneRequest(1000))}`);
      const src = await createWorkloadSource(makeCtx({ datasetPath: file }));
      expect(src.kind).toBe('workload-file');
    });
  });
});
