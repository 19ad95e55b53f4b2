// Deterministic prompt texts of a requested token count, one per prompt id: the same (salt, prompt id)
// always gives the same text, so a reused prompt reaches the server byte for byte and its prefix
// cache (and the offload path behind it) can hit; different prompt ids differ from their first words
// on, so new prompts share no prefix block with anything earlier.
//
// Token counts: kvbench cannot know the server's tokenizer. The text is a header naming the prompt,
// then words drawn from a list of common English words that BPE vocabularies (cl100k, Llama 3,
// Qwen, Mistral …) hold as single tokens with their leading space — so one word ≈ one token (the
// "words" approximation; ~4–5 characters per token). With `gpt-tokenizer` (a dependency, looked up at
// run time so a build without it falls back to the words), words are chosen by their cl100k_base token counts so that the text's count is exactly
// the request's (still an approximation of the server's own tokenizer). The server's own count comes back in each
// request's usage.prompt_tokens, and the run reports their ratio.
import type { PromptTokenizer } from '../../src-shared/domain/endpoint.ts';

/** Single-token (with a leading space) common words: 256 of them, so a word is one byte of the PRNG. */
const WORDS = (
  'time year people way day man thing woman life child world school state family student group country problem hand ' +
  'part place case week company system program question work government number night point home water room mother area ' +
  'money story fact month lot right study book eye job word business issue side kind head house service friend father ' +
  'power hour game line end member law car city community name president team minute idea kid body information back ' +
  'parent face others level office door health person art war history party result change morning reason research girl ' +
  'guy moment air teacher force education foot boy age policy music market sense nation plan college interest death ' +
  'experience effect use class control care field development role effort rate heart drug show leader light voice wife ' +
  'police mind price report decision son view relationship town road arm difference value building action model season ' +
  'society tax director position player record paper space ground form event official matter center couple site ' +
  'project activity star table need court oil situation cost industry figure street image phone data picture practice ' +
  'piece land product doctor wall patient worker news test movie north love support technology step baby computer type ' +
  'attention film tree source organization hair window evidence population truth garden river stone bridge summer ' +
  'winter spring autumn ocean forest island mountain valley desert village harbor engine signal bread chair cloud ' +
  'dream earth flower glass horse letter metal nature paint queen radio salt ship shoe silver smile snow song sound ' +
  'sugar sun train travel wind wine wood yellow'
).split(' ');

export interface TokenCountFn {
  readonly name: PromptTokenizer;
  count(text: string): number;
}

/** The word approximation: a word (or a header token) per token. */
export const WORDS_TOKENIZER: TokenCountFn = { name: 'words', count: (t) => t.split(/\s+/).filter(Boolean).length };

/** gpt-tokenizer's cl100k_base (looked up at run time), else the word approximation. */
export async function loadPromptTokenizer(specifier = 'gpt-tokenizer/encoding/cl100k_base'): Promise<TokenCountFn> {
  try {
    const spec: string = specifier; // a variable: neither tsc nor the loader may require the package
    const m = (await import(spec)) as Record<string, unknown>;
    const d = m.default as Record<string, unknown> | undefined;
    // Text is counted as text: a salt or prompt id spelling a special token ("<|endoftext|>") must not
    // make the tokenizer refuse it, as it does by default.
    const plainText = { disallowedSpecial: new Set<string>() };
    const countTokens = (m.countTokens ?? d?.countTokens) as ((s: string, o?: typeof plainText) => number) | undefined;
    const encode = (m.encode ?? d?.encode) as ((s: string, o?: typeof plainText) => unknown[]) | undefined;
    if (typeof countTokens === 'function') return { name: 'gpt-tokenizer cl100k_base', count: (t) => countTokens(t, plainText) };
    if (typeof encode === 'function') return { name: 'gpt-tokenizer cl100k_base', count: (t) => encode(t, plainText).length };
  } catch {
    // not installed: the word approximation
  }
  return WORDS_TOKENIZER;
}

/** FNV-1a (32 bit) of a string: the seed of one prompt's word stream. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small, fast, well-mixed 32-bit generator; the same seed gives the same words everywhere. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

export interface PromptBuilderOptions {
  salt: string;
  tokenizer?: TokenCountFn;
}

export class PromptBuilder {
  readonly salt: string;
  readonly tokenizer: TokenCountFn;
  /** Tokens of " word" for each vocabulary word under a real tokenizer (computed on first use). */
  #wordTokens: Map<string, number> | null = null;

  constructor(opts: PromptBuilderOptions) {
    this.salt = opts.salt;
    this.tokenizer = opts.tokenizer ?? WORDS_TOKENIZER;
  }

  /** A prompt's word stream, from its first word: deterministic in (salt, prompt id). */
  #stream(promptId: string): () => string {
    const next = mulberry32(fnv1a(`${this.salt}\u0000${promptId}`));
    let bits = 0;
    let left = 0;
    return () => {
      if (left === 0) {
        bits = next();
        left = 4;
      }
      const w = WORDS[bits & 0xff];
      bits >>>= 8;
      left--;
      return w;
    };
  }

  /** The header that makes every prompt's first block unique to it (and to the salt). */
  header(promptId: string): string {
    return `Document ${promptId} ${this.salt}:`;
  }

  /** The prompt text of `promptId` at about `tokens` tokens (exactly, under the tokenizer used). */
  build(promptId: string, tokens: number): string {
    const header = this.header(promptId);
    const next = this.#stream(promptId);
    const words: string[] = [];
    if (this.tokenizer === WORDS_TOKENIZER) {
      const n = Math.max(1, tokens - this.tokenizer.count(header));
      for (let i = 0; i < n; i++) words.push(next());
      return `${header} ${words.join(' ')}`;
    }
    // BPE tokenizers of the cl100k kind split text into pre-tokens at spaces before merging, so
    // " word" pieces count independently: add words until their tokens reach the target, passing
    // over a word that would overshoot it.
    if (this.#wordTokens === null) this.#wordTokens = new Map(WORDS.map((w) => [w, Math.max(1, this.tokenizer.count(` ${w}`))]));
    const target = tokens - this.tokenizer.count(header);
    let sum = 0;
    let skipped = 0;
    while (sum < target && skipped < 10_000) {
      const w = next();
      const c = this.#wordTokens.get(w)!;
      if (sum + c > target) {
        skipped++;
        continue;
      }
      words.push(w);
      sum += c;
    }
    if (words.length === 0) words.push(next());
    return `${header} ${words.join(' ')}`;
  }
}

/** A fresh salt: each run's prompts are new to the server unless the user fixes --prompt-salt. */
export function randomSalt(): string {
  return Math.random().toString(36).slice(2, 10).padEnd(8, '0');
}
