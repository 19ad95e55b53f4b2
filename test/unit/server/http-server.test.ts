// `kvbench serve`'s HTTP server: the token on every API request and on the event stream, the Host
// and Origin checks, JSON-only bodies, static files with the CSP and no path traversal.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Backend } from '../../../src-main/server/backend.ts';
import { RENDERER_CSP } from '../../../src-main/server/csp.ts';
import { ExportDownloads } from '../../../src-main/server/export-downloads.ts';
import { IMPORT_BODY_BYTES, isLoopbackHost, SMALL_BODY_BYTES, startHttpServer, type RunningHttpServer } from '../../../src-main/server/http-server.ts';
import { CONTRACT, MAX_IMPORT_FILE_CHARS, MAX_IMPORT_TOTAL_CHARS } from '../../../src-shared/ipc/contract.ts';
import { WS_PROTOCOL, WS_TOKEN_PREFIX } from '../../../src-shared/ipc/channels.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { referenceResultsNew, removeTempDirs, tempDir } from '../store/fixtures.ts';

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
    downloads: new ExportDownloads({ tmpRoot: tempDir('kvb-http-downloads-') }),
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

  it('closes the connection after a refusal, so a client without the token cannot keep it by trickling a body', async () => {
    const { server, backend } = await serve();
    const net = await import('node:net');
    // No token (401), and a foreign Host with the token (403, DNS rebinding).
    for (const headers of ['Host: 127.0.0.1\r\n', `Host: evil.example\r\nAuthorization: Bearer ${TOKEN}\r\n`]) {
      const socket = net.connect(server.port, '127.0.0.1');
      socket.on('error', () => {}); // writes after the server's close
      let received = '';
      socket.setEncoding('utf8').on('data', (d: string) => (received += d));
      const endedByServer = new Promise<void>((resolve) => socket.once('end', () => resolve()));
      socket.write(`POST /api/invoke/app.info HTTP/1.1\r\n${headers}Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"a":"`);
      // A body that keeps coming, a byte at a time, until the server ends the connection.
      const trickle = setInterval(() => socket.writable && socket.write('x'), 20);
      await endedByServer;
      clearInterval(trickle);
      socket.destroy();
      expect(received).toMatch(/^HTTP\/1\.1 40[13] /);
      expect(received).toMatch(/\r\nConnection: close\r\n/i);
    }
    expect(backend.calls).toEqual([]);
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

  it('follows no link out of the renderer directory; links inside it, and a linked renderer directory, still serve', async () => {
    const outside = tempDir('kvb-http-secret-');
    fs.writeFileSync(path.join(outside, 's.txt'), 'secret');
    const real = tempDir('kvb-http-real-');
    fs.mkdirSync(path.join(real, 'assets'));
    fs.writeFileSync(path.join(real, 'index.html'), '<!doctype html><title>kvbench</title>');
    fs.writeFileSync(path.join(real, 'assets', 'app.js'), 'console.log(1)');
    fs.symlinkSync(path.join(outside, 's.txt'), path.join(real, 'link.txt'));
    fs.symlinkSync(outside, path.join(real, 'assets', 'out'));
    fs.symlinkSync(path.join(real, 'assets', 'app.js'), path.join(real, 'alias.js'));
    const linked = path.join(tempDir('kvb-http-link-'), 'renderer');
    fs.symlinkSync(real, linked);
    const { server } = await serve({ rendererDir: linked });
    for (const p of ['/link.txt', '/assets/out/s.txt']) {
      const r = await fetch(`${server.origin}${p}`);
      expect(r.status, p).toBe(404);
      expect(await r.text()).not.toContain('secret');
    }
    expect(await (await fetch(`${server.origin}/alias.js`)).text()).toBe('console.log(1)');
    expect((await fetch(`${server.origin}/`)).status).toBe(200);
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

  describe('request bodies', () => {
    interface Upload {
      /** The status and body of the answer, once it comes. */
      answer: Promise<{ status: number; body: { ok: boolean; error?: { code: string; message: string } } }>;
      send(bytes: Buffer | string): void;
      end(): void;
      abort(): void;
    }

    /** A POST whose body is sent piece by piece (or never), with the Content-Length it declares. */
    function upload(server: RunningHttpServer, channel: string, declaredBytes: number | null): Upload {
      const req = http.request(`${server.origin}/api/invoke/${channel}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', ...(declaredBytes === null ? {} : { 'Content-Length': declaredBytes }) },
      });
      const answer = new Promise<{ status: number; body: { ok: boolean; error?: { code: string; message: string } } }>((resolve, reject) => {
        req.on('response', (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { ok: boolean } }));
        });
        req.on('error', reject);
      });
      req.flushHeaders();
      return { answer, send: (b) => req.write(b), end: () => req.end(), abort: () => req.destroy() };
    }

    const smallRequest = (server: RunningHttpServer, channel: string): Upload['answer'] => {
      const u = upload(server, channel, 2);
      u.send('{}');
      u.end();
      return u.answer;
    };

    /** A JSON body of exactly `bytes` bytes. */
    const jsonOf = (bytes: number): string => {
      const frame = '{"pad":""}';
      return `{"pad":"${'x'.repeat(bytes - frame.length)}"}`;
    };

    it('refuses an import whose Content-Length is over the limit at once, before reading any of it (413), and any other request over 1 MiB', async () => {
      const { server, backend } = await serve();
      const tooBig = upload(server, 'import.results', IMPORT_BODY_BYTES + 1);
      const r = await tooBig.answer; // nothing of the body was sent: the answer comes from the header alone
      expect(r.status).toBe(413);
      expect(r.body.error).toMatchObject({ code: 'VALIDATION', message: expect.stringMatching(/^the import is larger than 385 MiB as a request: at most 50 files, 64 Mi characters each and 128 Mi in all/) });
      const other = await upload(server, 'history.list', SMALL_BODY_BYTES + 1).answer;
      expect(other.status).toBe(413);
      expect(other.body.error).toEqual({ code: 'VALIDATION', message: 'the request is larger than 1 MiB' });
      expect(backend.calls).toEqual([]);
    });

    it('reads one large import at a time: a second one in parallel is BUSY (503) while small requests go on, and the slot is free again after it ends or is abandoned', async () => {
      const { server, backend } = await serve();
      const largeBytes = SMALL_BODY_BYTES + 1024;
      const body = jsonOf(largeBytes);
      const first = upload(server, 'import.results', largeBytes);
      first.send(body.slice(0, 1000));
      // The server takes the slot when the headers arrive; a small request proves they have.
      expect((await smallRequest(server, 'app.info')).status).toBe(200);
      const second = await upload(server, 'import.results', largeBytes).answer;
      expect(second).toEqual({ status: 503, body: { ok: false, error: { code: 'BUSY', message: 'another import is being sent to this server: try again when it has finished' } } });
      const chunked = await upload(server, 'import.results', null).answer; // no length said: counted as large
      expect(chunked.status).toBe(503);
      expect((await smallRequest(server, 'import.results')).status).toBe(200);

      first.send(body.slice(1000));
      first.end();
      expect((await first.answer).status).toBe(200);
      const third = upload(server, 'import.results', largeBytes);
      third.send(body);
      third.end();
      expect((await third.answer).status).toBe(200);

      const abandoned = upload(server, 'import.results', largeBytes);
      abandoned.answer.catch(() => {});
      abandoned.send(body.slice(0, 1000));
      expect((await smallRequest(server, 'app.info')).status).toBe(200);
      abandoned.abort();
      let after: number | null = null;
      for (let i = 0; i < 200 && after !== 200; i++) {
        const next = upload(server, 'import.results', largeBytes);
        next.send(body);
        next.end();
        after = (await next.answer).status;
      }
      expect(after).toBe(200);
      expect(backend.calls.filter((c) => c.channel === 'import.results')).toHaveLength(4);
    });

    it('the HTTP limit carries what the contract allows: results JSON, even all beyond ASCII, grows at most 3× as UTF-8 JSON string bytes, and all files together are bounded', () => {
      const text = JSON.stringify(referenceResultsNew({ tokPerS: 100, storageTokPerS: 50 }), null, 4);
      expect(Buffer.byteLength(JSON.stringify(text)) / text.length).toBeLessThan(2);
      // A text of characters three UTF-8 bytes long each (CJK prompt text, say): the worst a results file holds.
      const wide = '漢字の'.repeat(1000);
      expect(Buffer.byteLength(JSON.stringify(wide))).toBe(3 * wide.length + 2);
      expect(IMPORT_BODY_BYTES).toBeGreaterThanOrEqual(3 * MAX_IMPORT_TOTAL_CHARS);
      const big = 'x'.repeat(MAX_IMPORT_FILE_CHARS);
      const request = (n: number): unknown => ({ files: Array.from({ length: n }, (_, i) => ({ name: `${i}.json`, text: big })), systemLabel: 'lab' });
      expect(CONTRACT['import.results'].request.safeParse(request(2)).success).toBe(true);
      const three = CONTRACT['import.results'].request.safeParse(request(3));
      expect(three.success).toBe(false);
      expect(three.error?.issues[0].message).toBe('the files hold more than 128 Mi characters in all: import them in smaller groups');
    });
  });
});

