// `kvbench serve`'s HTTP server: the token on every API request and on the event stream, the Host
// and Origin checks, JSON-only bodies, static files with the CSP and no path traversal.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Backend } from '../../../src-main/server/backend.ts';
import { RENDERER_CSP } from '../../../src-main/server/csp.ts';
import { isLoopbackHost, startHttpServer, type RunningHttpServer } from '../../../src-main/server/http-server.ts';
import { WS_PROTOCOL, WS_TOKEN_PREFIX } from '../../../src-shared/ipc/channels.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';

const TOKEN = 'ab'.repeat(24);

interface StubBackend extends Backend {
  calls: { channel: string; request: unknown }[];
  emit(e: AppEvent): void;
}

function stubBackend(): StubBackend {
  const listeners = new Set<(e: AppEvent) => void>();
  const calls: { channel: string; request: unknown }[] = [];
  return {
    calls,
    channels: [],
    databasePath: '/tmp/x.db',
    suiteState: 'idle',
    async invoke(channel, request) {
      calls.push({ channel, request });
      return { ok: true, value: { echo: channel } };
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    emit(e) {
      for (const l of listeners) l(e);
    },
    async close() {},
  };
}

const servers: RunningHttpServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  removeTempDirs();
});

async function serve(o: { rendererDir?: string } = {}): Promise<{ server: RunningHttpServer; backend: StubBackend; dir: string }> {
  const dir = o.rendererDir ?? tempDir('kvb-http-');
  if (!o.rendererDir) {
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>kvbench</title>');
    fs.writeFileSync(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
  }
  const backend = stubBackend();
  const server = await startHttpServer({ backend, host: '127.0.0.1', port: 0, token: TOKEN, rendererDir: dir });
  servers.push(server);
  return { server, backend, dir };
}

const post = (server: RunningHttpServer, channel: string, init: { token?: string | null; body?: string; headers?: Record<string, string> } = {}): Promise<Response> =>
  fetch(`${server.origin}/api/invoke/${channel}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(init.token === null ? {} : { Authorization: `Bearer ${init.token ?? TOKEN}` }),
      ...init.headers,
    },
    body: init.body ?? '{}',
  });

describe('kvbench serve HTTP server', () => {
  it('prints a loopback URL with the token', async () => {
    const { server } = await serve();
    expect(server.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/\\?token=${TOKEN}$`));
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('::1')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    expect(isLoopbackHost('192.168.1.5')).toBe(false);
  });

  it('refuses API requests without the right token, and never reaches the backend', async () => {
    const { server, backend } = await serve();
    for (const token of [null, 'cd'.repeat(24), 'short', `${TOKEN}0`]) {
      const r = await post(server, 'app.info', { token });
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ ok: false, error: { code: 'UNAUTHORIZED' } });
    }
    expect(backend.calls).toEqual([]);
    const r = await post(server, 'history.list', { body: JSON.stringify({ selection: {} }) });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true, value: { echo: 'history.list' } });
    expect(backend.calls).toEqual([{ channel: 'history.list', request: { selection: {} } }]);
  });

  it('refuses other hosts (DNS rebinding), other origins, non-JSON bodies and other methods', async () => {
    const { server, backend } = await serve();
    const http = await import('node:http');
    const raw = (headers: Record<string, string>, method = 'POST', body = '{}'): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = http.request(`${server.origin}/api/invoke/app.info`, { method, headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', ...headers } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end(body);
      });
    expect(await raw({ Host: `evil.example:${server.port}` })).toBe(403);
    expect(await raw({ Origin: 'http://evil.example' })).toBe(403);
    expect(await raw({ Origin: server.origin })).toBe(200);
    expect(await raw({ 'Content-Type': 'text/plain' })).toBe(415);
    expect(await raw({}, 'POST', '{not json')).toBe(400);
    expect(await raw({}, 'GET', '')).toBe(405);
    expect(backend.calls).toHaveLength(1);
  });

  it('accepts loopback host names on any port (an SSH tunnel\'s own port), with the Origin of that Host', async () => {
    const { server, backend } = await serve();
    const http = await import('node:http');
    const raw = (headers: Record<string, string>, token = TOKEN): Promise<number> =>
      new Promise((resolve, reject) => {
        const req = http.request(`${server.origin}/api/invoke/app.info`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('{}');
      });
    expect(await raw({ Host: 'localhost:9999' })).toBe(200);
    expect(await raw({ Host: '127.0.0.1:9000', Origin: 'http://127.0.0.1:9000' })).toBe(200);
    expect(await raw({ Host: '[::1]:9000' })).toBe(200);
    expect(await raw({ Host: 'localhost:9999', Origin: `http://localhost:${server.port}` })).toBe(403); // not the Host it came to
    expect(await raw({ Host: 'localhost:9999' }, 'cd'.repeat(24))).toBe(401);
    expect(await raw({ Host: `evil.example:${server.port}` })).toBe(403);
    expect(await raw({ Host: 'localhost.evil.example:9999' })).toBe(403);
    expect(backend.calls).toHaveLength(3);
  });

  it('serves the renderer with the CSP and security headers, and nothing outside it', async () => {
    const { server } = await serve();
    const index = await fetch(`${server.origin}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toBe(`${RENDERER_CSP}; frame-ancestors 'none'`);
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await index.text()).toContain('<title>kvbench</title>');
    const js = await fetch(`${server.origin}/assets/app.js`);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(js.headers.get('cache-control')).toMatch(/immutable/);
    for (const p of ['/../package.json', '/%2e%2e/%2e%2e/package.json', '/assets/../../secret', '/nope.js']) {
      const r = await fetch(`${server.origin}${p}`);
      expect(r.status, p).toBe(404);
    }
    expect((await fetch(`${server.origin}/`, { method: 'DELETE' })).status).toBe(405);
  });

  it('says the renderer is not built rather than serving nothing', async () => {
    const empty = tempDir('kvb-http-empty-');
    const { server } = await serve({ rendererDir: empty });
    const r = await fetch(`${server.origin}/`);
    expect(r.status).toBe(503);
    expect(await r.text()).toMatch(/npm run build:renderer/);
  });

  it('streams events over a WebSocket that needs the token as a subprotocol', async () => {
    const { server, backend } = await serve();
    const wsUrl = `${server.origin.replace('http', 'ws')}/api/events`;
    const refused = await new Promise<string>((resolve) => {
      const ws = new WebSocket(wsUrl, [WS_PROTOCOL]);
      ws.on('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
      ws.on('open', () => resolve('open'));
      ws.on('error', () => resolve('error'));
    });
    expect(refused).toBe('401');
    const wrongOrigin = await new Promise<string>((resolve) => {
      const ws = new WebSocket(wsUrl, [WS_PROTOCOL, `${WS_TOKEN_PREFIX}${TOKEN}`], { origin: 'http://evil.example' });
      ws.on('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
      ws.on('open', () => resolve('open'));
    });
    expect(wrongOrigin).toBe('403');

    const ws = new WebSocket(wsUrl, [WS_PROTOCOL, `${WS_TOKEN_PREFIX}${TOKEN}`]);
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => resolve());
      ws.on('error', reject);
    });
    expect(ws.protocol).toBe(WS_PROTOCOL);
    const got = new Promise<unknown>((resolve) => ws.once('message', (d) => resolve(JSON.parse(String(d)))));
    backend.emit({ type: 'history.changed', reason: 'test' });
    expect(await got).toEqual({ type: 'history.changed', reason: 'test' });
    ws.close();
  });

  it('a channel name that is not valid percent-encoding is an unknown channel (404), and a failure inside the server is INTERNAL, not VALIDATION', async () => {
    const { server, backend } = await serve();
    const bad = await post(server, '%E0%A4%A');
    expect(bad.status).toBe(404);
    expect(await bad.json()).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'unknown channel' } });
    expect(backend.calls).toEqual([]);

    const broken = stubBackend();
    broken.invoke = async () => {
      throw new Error('the backend broke');
    };
    const logged: string[] = [];
    const dir = tempDir('kvb-http-');
    const s2 = await startHttpServer({ backend: broken, host: '127.0.0.1', port: 0, token: TOKEN, rendererDir: dir, log: (level, m) => logged.push(`${level}: ${m}`) });
    servers.push(s2);
    const r = await post(s2, 'app.info');
    expect(r.status).toBe(500);
    expect(await r.json()).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'internal error' } });
    expect(logged).toEqual([expect.stringMatching(/^error: request POST \/api\/invoke\/app\.info: the backend broke$/)]);
  });
});

