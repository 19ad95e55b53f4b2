import { describe, expect, it } from 'vitest';
import { SseParser } from '../../../src-main/endpoint/sse.ts';

const enc = new TextEncoder();

function parseIn(pieces: readonly Uint8Array[]): string[] {
  const p = new SseParser();
  const out: string[] = [];
  for (const x of pieces) out.push(...p.push(x).map((e) => e.data));
  out.push(...p.end().map((e) => e.data));
  return out;
}

describe('SSE parsing', () => {
  const stream =
    'data: {"choices":[{"text":" héllo"}]}\n\n' +
    ': keep-alive comment\n\n' +
    'event: message\r\ndata: {"a":1}\r\n\r\n' +
    'data:{"b":2}\r\rdata: line one\ndata: line two\n\n' +
    'id: 7\nretry: 100\ndata: [DONE]\n\n';
  const expected = ['{"choices":[{"text":" héllo"}]}', '{"a":1}', '{"b":2}', 'line one\nline two', '[DONE]'];

  it('reads data events, comments, CRLF and CR line ends, multi-line data', () => {
    expect(parseIn([enc.encode(stream)])).toEqual(expected);
  });

  it('gives the same events however the bytes are split (every split point, UTF-8 included)', () => {
    const bytes = enc.encode(stream);
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseIn([bytes.slice(0, i), bytes.slice(i)])).toEqual(expected);
    }
    expect(parseIn([...bytes].map((b) => Uint8Array.of(b)))).toEqual(expected);
  });

  it('dispatches a last event that has no blank line after it', () => {
    expect(parseIn([enc.encode('data: {"x":1}\n\ndata: [DONE]')])).toEqual(['{"x":1}', '[DONE]']);
  });

  it('keeps the event name and ignores events without data', () => {
    const p = new SseParser();
    expect(p.push(enc.encode('event: error\ndata: boom\n\nevent: ping\n\n'))).toEqual([{ data: 'boom', event: 'error' }]);
  });
});
