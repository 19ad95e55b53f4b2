import { describe, expect, it } from 'vitest';
import { PromptBuilder, WORDS_TOKENIZER, loadPromptTokenizer, type TokenCountFn } from '../../../src-main/endpoint/prompt-builder.ts';

describe('prompt builder', () => {
  it('gives the same text for the same salt and prompt id, of the requested word count', () => {
    const a = new PromptBuilder({ salt: 's1' });
    const b = new PromptBuilder({ salt: 's1' });
    for (const n of [1, 5, 16, 300, 4096]) {
      const t = a.build('ctx4096_p3', n);
      expect(b.build('ctx4096_p3', n)).toBe(t);
      expect(WORDS_TOKENIZER.count(t)).toBe(Math.max(n, WORDS_TOKENIZER.count(a.header('ctx4096_p3')) + 1));
    }
  });

  it('makes different prompt ids and salts differ from the first words on (no shared prefix block)', () => {
    const b = new PromptBuilder({ salt: 's1' });
    const firstWords = (t: string): string => t.split(' ').slice(0, 3).join(' ');
    const x = b.build('ctx512_p0', 512);
    const y = b.build('ctx512_p1', 512);
    const z = new PromptBuilder({ salt: 's2' }).build('ctx512_p0', 512);
    expect(firstWords(x)).not.toBe(firstWords(y));
    expect(firstWords(x)).not.toBe(firstWords(z));
    // And the bodies differ too, not only the headers.
    expect(x.split(' ').slice(10, 40)).not.toEqual(y.split(' ').slice(10, 40));
  });

  it('a longer build of the same prompt extends the shorter one (a prefix)', () => {
    const b = new PromptBuilder({ salt: 's' });
    expect(b.build('p', 2000).startsWith(b.build('p', 1000))).toBe(true);
  });

  it('corrects the word count until a real tokenizer counts exactly the requested tokens', () => {
    // A tokenizer that splits every word with more than 5 letters into two tokens.
    const split: TokenCountFn = { name: 'gpt-tokenizer cl100k_base', count: (t) => t.split(/\s+/).filter(Boolean).reduce((n, w) => n + (w.length > 5 ? 2 : 1), 0) };
    const b = new PromptBuilder({ salt: 'x', tokenizer: split });
    for (const n of [64, 1000, 8192]) expect(split.count(b.build('ctx_p9', n))).toBe(n);
  });

  it('builds prompts exact under the shipped cl100k_base tokenizer', async () => {
    const t = await loadPromptTokenizer();
    expect(t.name).toBe('gpt-tokenizer cl100k_base');
    expect(t.count('hello world')).toBe(2);
    const b = new PromptBuilder({ salt: 'x', tokenizer: t });
    for (const n of [64, 1000, 8192]) expect(t.count(b.build('ctx_p9', n))).toBe(n);
  });

  it('counts a salt or prompt id that spells a special token as plain text, and still hits the count', async () => {
    const t = await loadPromptTokenizer();
    expect(t.count('a <|endoftext|> b')).toBe(8);
    const b = new PromptBuilder({ salt: '<|endoftext|>', tokenizer: t });
    for (const n of [64, 1000]) expect(t.count(b.build('<|fim_prefix|>', n))).toBe(n);
  });

  it('falls back to the word approximation when gpt-tokenizer is not installed', async () => {
    const t = await loadPromptTokenizer('a-package-that-does-not-exist/encoding');
    expect(t.name).toBe('words');
  });
});
