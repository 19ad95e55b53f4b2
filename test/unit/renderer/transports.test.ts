// The API object's two transports: the Electron preload's functions, and HTTP + WebSocket to
// `kvbench serve` with the token taken from the address once and kept out of it afterwards.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApi } from '../../../src-renderer/api/api.ts';
import { browserTransport, takeToken } from '../../../src-renderer/api/browser-transport.ts';
import { preloadTransport } from '../../../src-renderer/api/preload-transport.ts';
import type { PreloadApi } from '../../../src-shared/ipc/api.ts';

afterEach(() => {
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
    expect(await t.invoke('app.info', {})).toMatchObject({ ok: false, error: { code: 'INTERNAL', message: expect.stringContaining('kvbench serve') } });
    fetchMock.mockImplementationOnce(async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    expect(await t.invoke('app.info', {})).toMatchObject({ ok: false, error: { message: 'The server answered 502 Bad Gateway' } });

    const none = browserTransport(null, 'http://127.0.0.1:9');
    expect(await none.invoke('app.info', {})).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    expect(fetchMock).toHaveBeenCalledTimes(3);
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
