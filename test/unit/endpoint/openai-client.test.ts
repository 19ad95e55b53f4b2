import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { errorMessageOf, MAX_QUOTED_BODY_BYTES, parseChunk, requestBody, streamCompletion } from '../../../src-main/endpoint/openai-client.ts';
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

describe('error answers', () => {
  it('reads only the start of an endless error page, then hangs up, and reports the status', async () => {
    // A proxy in front of the engine can answer 502 with any amount of body; the client quotes it,
    // it must not buffer it. This server would send 1 GiB, 64 KiB at a time, until the client leaves.
    let sentBytes = 0;
    let clientLeft!: () => void;
    const left = new Promise<void>((r) => (clientLeft = r));
    const server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(502, { 'Content-Type': 'text/html' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const pump = (): void => {
        while (sentBytes < 1024 ** 3 && !res.destroyed) {
          sentBytes += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => clientLeft());
      pump();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const o = await streamCompletion({
        url: `http://127.0.0.1:${port}/v1/completions`, api: 'completions', model: 'm', prompt: 'p', maxTokens: 4,
        temperature: 0, topP: 1, ignoreEos: false, streamUsage: false, requestTimeoutMs: 30_000, idleTimeoutMs: 30_000,
      });
      expect(o).toMatchObject({ status: 'http_error', httpStatus: 502 });
      expect(o.error).toMatch(/^HTTP 502 Bad Gateway: x+/);
      expect(o.error!.length).toBeLessThanOrEqual(MAX_QUOTED_BODY_BYTES + 100);
      await left;
      expect(sentBytes).toBeLessThan(64 * 1024 * 1024);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
