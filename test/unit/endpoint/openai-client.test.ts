import { describe, expect, it } from 'vitest';
import { errorMessageOf, parseChunk, requestBody } from '../../../src-main/endpoint/openai-client.ts';
import { normalizeBaseUrl } from '../../../src-main/endpoint/runner.ts';

describe('OpenAI stream chunks', () => {
  it('reads completions text, chat deltas, reasoning, finish reasons and usage', () => {
    expect(parseChunk('{"choices":[{"index":0,"text":" hi","finish_reason":null}]}', 'completions')).toEqual({ text: ' hi', finishReason: null, usage: null, error: null });
    expect(parseChunk('{"choices":[{"delta":{"role":"assistant","content":""}}]}', 'chat').text).toBeNull();
    expect(parseChunk('{"choices":[{"delta":{"content":"x"},"finish_reason":"length"}]}', 'chat')).toMatchObject({ text: 'x', finishReason: 'length' });
    expect(parseChunk('{"choices":[{"delta":{"reasoning_content":"think"}}]}', 'chat').text).toBe('think');
    expect(parseChunk('{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}}', 'completions').usage).toEqual({
      prompt: 10,
      completion: 3,
      cached: 8,
    });
    expect(parseChunk('{"usage":{"prompt_tokens":10,"completion_tokens":3}}', 'completions').usage).toEqual({ prompt: 10, completion: 3, cached: null });
  });

  it('reports mid-stream errors and rejects what is not a chunk', () => {
    expect(parseChunk('{"error":{"message":"out of memory","code":500}}', 'chat').error).toBe('out of memory');
    expect(() => parseChunk('{"choices": [ nope', 'chat')).toThrow(/not JSON/);
    expect(() => parseChunk('[1,2]', 'chat')).toThrow(/not a JSON object/);
    expect(() => parseChunk('{"id":"x"}', 'chat')).toThrow(/without "choices"/);
  });

  it('builds the request body, ignore_eos and stream_options only when asked', () => {
    const base = { model: 'm', prompt: 'p', maxTokens: 7, temperature: 0, topP: 1 } as const;
    expect(requestBody({ ...base, api: 'completions', ignoreEos: true, streamUsage: true })).toEqual({
      model: 'm',
      prompt: 'p',
      max_tokens: 7,
      temperature: 0,
      top_p: 1,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    });
    const chat = requestBody({ ...base, api: 'chat', ignoreEos: false, streamUsage: false });
    expect(chat.messages).toEqual([{ role: 'user', content: 'p' }]);
    expect('ignore_eos' in chat || 'stream_options' in chat || 'prompt' in chat).toBe(false);
  });

  it('finds the message in error bodies', () => {
    expect(errorMessageOf('{"error":{"message":"context too long"}}')).toBe('context too long');
    expect(errorMessageOf('{"detail":"Not Found"}')).toBe('Not Found');
    expect(errorMessageOf('{"message":"bad"}')).toBe('bad');
    expect(errorMessageOf('Internal Server Error')).toBe('Internal Server Error');
    expect(errorMessageOf('')).toBe('(empty body)');
  });

  it('normalises the server URL to its /v1 base', () => {
    expect(normalizeBaseUrl('http://h:8000')).toBe('http://h:8000/v1');
    expect(normalizeBaseUrl('http://h:8000/')).toBe('http://h:8000/v1');
    expect(normalizeBaseUrl('http://h:8000/v1/')).toBe('http://h:8000/v1');
    expect(normalizeBaseUrl('https://h/proxy/v1/chat/completions?x=1')).toBe('https://h/proxy/v1');
    expect(() => normalizeBaseUrl('ftp://h')).toThrow(/must be http:\/\/ or https:\/\/, got ftp:\/\//);
    expect(() => normalizeBaseUrl('not a url')).toThrow(/not a URL: 'not a url'/);
  });
});
