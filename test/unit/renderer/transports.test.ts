// The API object's two transports: the Electron preload's functions, and HTTP + WebSocket to
// `kvbench serve` with the token taken from the address once and kept out of it afterwards.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApi } from '../../../src-renderer/api/api.ts';
import { browserTransport, takeToken } from '../../../src-renderer/api/browser-transport.ts';
import { preloadTransport } from '../../../src-renderer/api/preload-transport.ts';
import type { PreloadApi } from '../../../src-shared/ipc/api.ts';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  window.sessionStorage.clear();
});

describe('API transports', () => {
  it('takes the token from the address, keeps it for the tab, and removes it from the address bar', () => {
    window.history.replaceState(null, '', '/?token=abc123&x=1#/history');
    expect(takeToken()).toBe('abc123');
    expect(window.location.search).toBe('?x=1');
    expect(window.location.hash).toBe('#/history');
    window.history.replaceState(null, '', '/');
    expect(takeToken()).toBe('abc123');
  });

  it('sends requests as POST with the token as a bearer header, and turns failures into error data', async () => {
    const fetchMock = vi.fn(async () => new Response(JSON.stringify({ ok: true, value: { n: 1 } }), { status: 200 }));
    vi.stubGlobal('fetch', fetchMock);
    const t = browserTransport('tok', 'http://127.0.0.1:9');
    expect(await t.invoke('history.list', { selection: {} })).toEqual({ ok: true, value: { n: 1 } });
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('http://127.0.0.1:9/api/invoke/history.list');
    expect(init.method).toBe('POST');
    expect((init.headers as Record<string, string>).Authorization).toBe('Bearer tok');
    expect(init.body).toBe('{"selection":{}}');

    fetchMock.mockImplementationOnce(async () => {
      throw new TypeError('Failed to fetch');
    });
    // A lost connection is a connection problem, not the server's internal error.
    expect(await t.invoke('app.info', {})).toMatchObject({ ok: false, error: { code: 'UNREACHABLE', message: expect.stringContaining('kvbench serve') } });
    fetchMock.mockImplementationOnce(async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    expect(await t.invoke('app.info', {})).toMatchObject({ ok: false, error: { message: 'The server answered 502 Bad Gateway' } });

    const none = browserTransport(null, 'http://127.0.0.1:9');
    expect(await none.invoke('app.info', {})).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    expect(fetchMock).toHaveBeenCalledTimes(3);
  });

  it('reconnects the event stream while the server is away, but stops and says so when it refuses the token (restarted with a new one)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // The browser's WebSocket as the transport sees it: opened, or closed with no reason given.
    class FakeSocket {
      static made: FakeSocket[] = [];
      onopen: (() => void) | null = null;
      onclose: (() => void) | null = null;
      onmessage: ((m: { data: unknown }) => void) | null = null;
      constructor(
        readonly url: string,
        readonly protocols: string[],
      ) {
        FakeSocket.made.push(this);
      }
    }
    vi.stubGlobal('WebSocket', FakeSocket);
    let server: 'down' | 'new-token' = 'down';
    const fetchMock = vi.fn(async () => {
      if (server === 'down') throw new TypeError('Failed to fetch');
      return new Response(JSON.stringify({ ok: false, error: { code: 'UNAUTHORIZED', message: 'this kvbench server needs its token' } }), { status: 401 });
    });
    vi.stubGlobal('fetch', fetchMock);
    const t = browserTransport('tok', 'http://127.0.0.1:9');
    const states: string[] = [];
    t.onConnection((s) => states.push(s));
    t.subscribe(() => {});
    t.subscribe(() => {}); // a second listener opens no second stream
    expect(FakeSocket.made).toHaveLength(1);
    expect(FakeSocket.made[0].url).toBe('ws://127.0.0.1:9/api/events');
    FakeSocket.made[0].onopen!();
    FakeSocket.made[0].onclose!(); // the server went away
    expect(states).toEqual(['connecting', 'connected', 'disconnected']);
    await vi.advanceTimersByTimeAsync(500);
    expect(FakeSocket.made).toHaveLength(2);
    FakeSocket.made[1].onclose!(); // refused: still down, so it asks, and tries again later
    await vi.advanceTimersByTimeAsync(1000);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(FakeSocket.made).toHaveLength(3);
    server = 'new-token';
    FakeSocket.made[2].onclose!(); // refused: now the token is, which no retry mends
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fetchMock).toHaveBeenCalledTimes(2);
    expect(FakeSocket.made).toHaveLength(3);
    expect(states).toEqual(['connecting', 'connected', 'disconnected', 'unauthorized']);

    // Without a token there is nothing to try.
    const none = browserTransport(null, 'http://127.0.0.1:9');
    const noneStates: string[] = [];
    none.onConnection((s) => noneStates.push(s));
    none.subscribe(() => {});
    expect(noneStates).toEqual(['connecting', 'unauthorized']);
    expect(FakeSocket.made).toHaveLength(3);
  });

  it('uses the preload when the page has one', async () => {
    const bridge = { 'app.info': vi.fn(async () => ({ ok: true, value: 'x' })), subscribe: vi.fn(() => () => {}) } as unknown as PreloadApi;
    const t = preloadTransport(bridge);
    expect(await t.invoke('app.info', {})).toEqual({ ok: true, value: 'x' });
    expect(await t.invoke('suite.plan', {})).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    const api = createApi({ kvbench: bridge } as unknown as Window);
    expect(api.kind).toBe('preload');
    expect(await api.call('app.info', {})).toEqual({ ok: true, value: 'x' });
  });
});
