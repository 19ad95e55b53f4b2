import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { columnIndex, parseDecimal, parseTokenCount, splitCsvLine } from '../../../src-main/engine/workload/sources/csv.ts';
import { jsonErrorLine } from '../../../src-main/engine/workload/sources/input-errors.ts';
import { readJsonArray } from '../../../src-main/engine/workload/sources/json-array-reader.ts';
import { LineReader } from '../../../src-main/engine/workload/sources/line-reader.ts';
import { charsPerTokenEstimate, loadTokenCounter, TOKENIZERS } from '../../../src-main/engine/workload/sources/token-counter.ts';
import { removeTempDirs, tempDir, writeFile } from './helpers.ts';

afterEach(removeTempDirs);

describe('LineReader', () => {
  it('reads lines in pieces, resuming where it stopped, with CRLF, a BOM and no final newline', async () => {
    const file = writeFile(tempDir(), 'l.txt', '\uFEFFa,b\r\nc\n\nd é\ne');
    const r = new LineReader(file);
    expect(await r.read(2)).toEqual([
      { text: 'a,b', lineNo: 1 },
      { text: 'c', lineNo: 2 },
    ]);
    expect(r.done).toBe(false);
    expect(await r.read(10)).toEqual([
      { text: '', lineNo: 3 },
      { text: 'd é', lineNo: 4 },
      { text: 'e', lineNo: 5 },
    ]);
    expect(r.done).toBe(true);
    expect(await r.read(10)).toEqual([]);
  });

  it('handles lines that span read chunks, in bounded memory', async () => {
    const long = 'y'.repeat(300_000);
    const file = writeFile(tempDir(), 'l.txt', `${long}\n${long}x\nshort\n`);
    const lines: string[] = [];
    await new LineReader(file).forEach((l) => lines.push(l.text), 1);
    expect(lines).toEqual([long, `${long}x`, 'short']);
  });

  it('refuses a line over the limit, naming the file and line', async () => {
    const file = writeFile(tempDir(), 'l.txt', `ok\n${'z'.repeat(2000)}\n`);
    await expect(new LineReader(file, { maxLineBytes: 1000 }).forEach(() => undefined)).rejects.toThrow(/l\.txt, line 2: line is longer/);
    await expect(new LineReader(`${file}.missing`).read(1)).rejects.toThrow(/does not exist/);
  });
});

describe('CSV helpers', () => {
  it('splits quoted fields', () => {
    expect(splitCsvLine('a,"b,c","d ""e""",')).toEqual({ ok: true, fields: ['a', 'b,c', 'd "e"', ''] });
    expect(splitCsvLine('"a')).toMatchObject({ ok: false });
    expect(splitCsvLine('"a"b')).toMatchObject({ ok: false });
  });
  it('parses numbers strictly', () => {
    expect(parseDecimal(' 1.5e3 ')).toBe(1500);
    for (const bad of ['', '0x10', 'Infinity', 'NaN', '1,5', '--1']) expect(parseDecimal(bad), bad).toBeNull();
    expect(parseTokenCount('12')).toBe(12);
    expect(parseTokenCount('12.0')).toBe(12);
    expect(parseTokenCount('12.5')).toBeNull();
    expect(parseTokenCount('-1')).toBeNull();
  });
  it('finds columns by name', () => {
    expect(columnIndex([' b', 'a '], ['a', 'b'])).toEqual({ ok: true, index: new Map([['a', 1], ['b', 0]]) });
    expect(columnIndex(['a'], ['a', 'b'])).toEqual({ ok: false, missing: ['b'] });
  });
});

describe('readJsonArray', () => {
  it('streams the elements of minified and pretty-printed arrays with their lines', async () => {
    const dir = tempDir();
    const values = [{ a: 1, s: 'x]},"[{' }, [1, [2]], 'str"ing', 42, null, true, { nested: { deep: [{}] } }];
    for (const [name, text] of [
      ['min.json', JSON.stringify(values)],
      ['pretty.json', JSON.stringify(values, null, 2)],
    ] as const) {
      const got: unknown[] = [];
      const lines: number[] = [];
      const r = await readJsonArray(writeFile(dir, name, text), (e) => {
        got.push(e.value);
        lines.push(e.lineNo);
      });
      expect(got).toEqual(values);
      expect(r).toEqual({ elements: values.length, complete: true });
      if (name === 'min.json') expect(lines.every((l) => l === 1)).toBe(true);
      else {
        expect(lines[0]).toBe(2);
        for (let i = 1; i < lines.length; i++) expect(lines[i]).toBeGreaterThan(lines[i - 1]);
        expect(text.split('\n')[lines[1] - 1].trim()).toBe('[');
      }
    }
  });

  it('stops early when asked and bounds element size', async () => {
    const dir = tempDir();
    const file = writeFile(dir, 'a.json', JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ i }))));
    let n = 0;
    expect(await readJsonArray(file, () => ++n < 5)).toEqual({ elements: 5, complete: false });
    const big = writeFile(dir, 'big.json', `[{"x": "${'a'.repeat(5000)}"}]`);
    await expect(readJsonArray(big, () => undefined, { maxElementBytes: 1000 })).rejects.toThrow(/big\.json, line 1: element 1 of the JSON array is larger than/);
    expect(fs.existsSync(file)).toBe(true);
  });
});

describe('JSON error lines', () => {
  it.each([
    ['{\n  "a": 1,\n  "batches": [,]\n}', 3],
    ['{\n"a" 1}', 2],
    ['{\n\n"a": tru}', 3],
  ])('%j', (text, line) => {
    let msg = '';
    try {
      JSON.parse(text);
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(jsonErrorLine(text, msg)).toBe(line);
  });
});

describe('token counting', () => {
  it('estimates as Python: max(1, code points // 4)', () => {
    expect(charsPerTokenEstimate('')).toBe(1);
    expect(charsPerTokenEstimate('abcdefgh')).toBe(2);
    expect(charsPerTokenEstimate('😀😀😀😀😀😀😀😀')).toBe(2); // 8 code points, 16 UTF-16 units
    expect(charsPerTokenEstimate('abcdefgh', 2)).toBe(4);
  });

  it('uses an installed tokenizer through a dynamic import, else the estimate, and says which', async () => {
    const fake = {
      name: 'fake-bpe',
      specifier: `data:text/javascript,${encodeURIComponent('export function countTokens(s) { return s.split(" ").length; }')}`,
      make: (m: Record<string, unknown>) => m.countTokens as (s: string) => number,
    };
    const missing = { name: 'missing', specifier: 'kvbench-no-such-tokenizer', make: () => () => 1 };
    const withFake = await loadTokenCounter({ tokenizers: [missing, fake] });
    expect(withFake.name).toBe('fake-bpe');
    expect(withFake.count('a b c')).toBe(3);
    const none = await loadTokenCounter({ tokenizers: [missing] });
    expect(none.name).toBe('chars/4');
    expect(none.count('abcdefgh')).toBe(2);
  });

  it('asks js-tiktoken (the fallback) to count special-token strings as plain text', async () => {
    // A module with js-tiktoken's encode(text, allowedSpecial = [], disallowedSpecial = "all") contract
    // (not installed here): it throws on "<|endoftext|>" unless nothing is disallowed, and counts it as
    // one control token only when it is allowed.
    const jsTiktokenLike = `export function getEncoding() { return { encode(t, allowed = [], disallowed = "all") {
      if (disallowed === "all" || disallowed.includes("<|endoftext|>")) { if (t.includes("<|endoftext|>")) throw new Error("The text contains a special token that is not allowed: <|endoftext|>"); }
      const parts = allowed === "all" || allowed.includes("<|endoftext|>") ? t.split("<|endoftext|>").join(" ^ ") : t;
      return parts.split(/(?=[ <|>])/); } }; }`;
    const jsTiktoken = TOKENIZERS.find((t) => t.specifier === 'js-tiktoken')!;
    const c = await loadTokenCounter({ tokenizers: [{ ...jsTiktoken, specifier: `data:text/javascript,${encodeURIComponent(jsTiktokenLike)}` }] });
    expect(c.name).toBe('js-tiktoken cl100k_base');
    expect(c.count('a <|endoftext|> b')).toBe(7); // "a", " ", "<", "|endoftext", "|", ">", " b"
  });

  it('counts with the shipped cl100k_base tokenizer by default', async () => {
    const c = await loadTokenCounter();
    expect(c.name).toBe('gpt-tokenizer cl100k_base');
    expect(c.count('hello world')).toBe(2); // cl100k_base: "hello", " world"
    expect(c.count('')).toBe(1); // at least one token per turn, as the estimate
  });
});
