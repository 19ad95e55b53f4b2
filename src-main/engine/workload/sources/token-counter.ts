/**
 * Token counts for ShareGPT text. The reference uses tiktoken's cl100k_base when it is installed and
 * characters ÷ 4 (at least 1) otherwise. kvbench ships `gpt-tokenizer` (cl100k_base, as tiktoken's) and
 * loads it through a dynamic import, so a build without it (or with js-tiktoken instead) still runs, on
 * the estimate; the results record which one counted.
 */

export interface TokenCounter {
  /** What counted: e.g. "gpt-tokenizer cl100k_base" or "chars/4". */
  readonly name: string;
  count(text: string): number;
}

/** Python's `max(1, len(text) // 4)`: len counts code points, so a surrogate pair is one character. */
export function charsPerTokenEstimate(text: string, charsPerToken = 4): number {
  let codePoints = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        codePoints--;
        i++;
      }
    }
  }
  return Math.max(1, Math.floor(codePoints / charsPerToken));
}

export function estimateCounter(charsPerToken = 4): TokenCounter {
  return { name: charsPerToken === 4 ? 'chars/4' : `chars/${charsPerToken}`, count: (t) => charsPerTokenEstimate(t, charsPerToken) };
}

/**
 * Tokenizer packages, tried in order (gpt-tokenizer is a dependency of kvbench; js-tiktoken is not).
 * Both refuse text holding a special-token string (`<|endoftext|>`, `<|fim_prefix|>` …) by default,
 * tiktoken's "disallowed special" guard for text about to be sent to a model. Here text is only
 * counted, and chat logs about tokenizers or prompt formats hold such strings, so the guard is turned
 * off: they count as plain text (as tiktoken's `disallowed_special=()`), never as control tokens.
 */
export const TOKENIZERS: readonly { name: string; specifier: string; make: (mod: Record<string, unknown>) => ((text: string) => number) | null }[] = [
  {
    name: 'gpt-tokenizer cl100k_base',
    specifier: 'gpt-tokenizer/encoding/cl100k_base',
    make: (m) => {
      const count = m.countTokens ?? (m.default as Record<string, unknown> | undefined)?.countTokens;
      const encode = m.encode ?? (m.default as Record<string, unknown> | undefined)?.encode;
      const plainText = { disallowedSpecial: new Set<string>() };
      if (typeof count === 'function') return (t) => (count as (s: string, o: typeof plainText) => number)(t, plainText);
      if (typeof encode === 'function') return (t) => (encode as (s: string, o: typeof plainText) => unknown[])(t, plainText).length;
      return null;
    },
  },
  {
    name: 'js-tiktoken cl100k_base',
    specifier: 'js-tiktoken',
    make: (m) => {
      const getEncoding = m.getEncoding ?? (m.default as Record<string, unknown> | undefined)?.getEncoding;
      if (typeof getEncoding !== 'function') return null;
      const enc = (getEncoding as (n: string) => { encode: (s: string, allowed: string[], disallowed: string[]) => unknown[] })('cl100k_base');
      // encode(text, allowedSpecial, disallowedSpecial): none allowed as control tokens, none refused.
      return (t) => enc.encode(t, [], []).length;
    },
  },
];

/**
 * The best counter available: an installed BPE tokenizer (at least 1 token per non-empty turn, as the
 * estimate), else characters ÷ `charsPerToken`. `specifiers` overrides the packages tried (tests).
 */
export async function loadTokenCounter(opts: { charsPerToken?: number; tokenizers?: typeof TOKENIZERS } = {}): Promise<TokenCounter> {
  for (const t of opts.tokenizers ?? TOKENIZERS) {
    try {
      // A variable specifier: the package is optional, so neither tsc nor the loader may require it.
      const spec: string = t.specifier;
      const mod = (await import(spec)) as Record<string, unknown>;
      const fn = t.make(mod);
      if (fn) return { name: t.name, count: (text) => Math.max(1, fn(text)) };
    } catch {
      // not installed (or unusable): try the next one
    }
  }
  return estimateCounter(opts.charsPerToken);
}
