// `kvbench serve`'s HTTP server: the built renderer as static files, the contract's channels as
// `POST /api/invoke/<channel>`, and the event stream as a WebSocket on /api/events.
//
// Security: it binds to loopback unless told otherwise; every API request and the WebSocket need
// the random token (Authorization: Bearer, or the WebSocket subprotocol `token.<hex>`, never the
// URL); the Host header must name a loopback host when bound to loopback (DNS rebinding), an Origin
// must be the Host the request came to, and API bodies must be JSON (no cross-site form posts). The
// static files hold no secrets. An export's file is the one GET under /api/ without the token (a
// link's download sends no header): its URL carries a one-time token of its own, which only
// export.create (with the token) hands out, and a browser's cross-site request is refused.
import { timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { HTTP_DOWNLOAD_PREFIX, HTTP_EVENTS_PATH, HTTP_INVOKE_PREFIX, WS_PROTOCOL, WS_TOKEN_PREFIX } from '../../src-shared/ipc/channels.ts';
import { MAX_IMPORT_FILE_CHARS, MAX_IMPORT_FILES, MAX_IMPORT_TOTAL_CHARS, type Result } from '../../src-shared/ipc/contract.ts';
import type { Backend } from './backend.ts';
import { SECURITY_HEADERS } from './csp.ts';
import { readFileInside } from './renderer-files.ts';

export interface HttpServerOptions {
  backend: Backend;
  host: string;
  /** 0 = any free port. */
  port: number;
  token: string;
  /** The built renderer (index.html and assets/). */
  rendererDir: string;
  /** Largest import request body (it carries whole results files); IMPORT_BODY_BYTES unless given (tests). */
  maxImportBodyBytes?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export interface RunningHttpServer {
  host: string;
  port: number;
  /** Where to point a browser, with the token. */
  url: string;
  origin: string;
  close(): Promise<void>;
}

/** Every request but an import is small: ids, a selection, labels, paths. */
export const SMALL_BODY_BYTES = 1024 * 1024;
/**
 * An import's request: the files' texts as JSON strings in UTF-8, where a quote or a line break takes
 * two bytes and a character beyond ASCII (a label, a prompt's text) up to three, per character the
 * contract counts (a UTF-16 unit). Three times the contract's characters in all, and room for the
 * rest of the request.
 */
export const IMPORT_BODY_BYTES = 3 * MAX_IMPORT_TOTAL_CHARS + SMALL_BODY_BYTES;
/** The channel whose requests may be large; at most one such body is read (and held) at a time. */
const LARGE_BODY_CHANNEL = 'import.results';
const PING_INTERVAL_MS = 30_000;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** An address that listens on every interface (any IPv4, any IPv6). */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/**
 * The host to put in the printed URL. A wildcard address is no place to connect to, and the one who
 * asked for it (--allow-remote) browses from another machine: this machine's name, which serve says
 * to replace by its address where the name does not resolve. An IPv6 address goes in brackets.
 */
export function urlHostOf(host: string): string {
  if (isWildcardHost(host)) return os.hostname();
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The host name of a Host header (`name`, `name:port`, `[v6]:port`), lower-cased; null if malformed. */
export function hostNameOf(header: string): string | null {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(header.trim());
  return m ? m[1].toLowerCase() : null;
}

function tokenMatches(given: string | undefined | null, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function bearer(req: http.IncomingMessage): string | null {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)$/i.exec(h) : null;
  return m ? m[1] : null;
}

function wsToken(req: http.IncomingMessage): string | null {
  const h = req.headers['sec-websocket-protocol'];
  if (typeof h !== 'string') return null;
  const p = h.split(',').map((s) => s.trim()).find((s) => s.startsWith(WS_TOKEN_PREFIX));
  return p ? p.slice(WS_TOKEN_PREFIX.length) : null;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const data = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': data.length, 'Cache-Control': 'no-store' });
  res.end(data);
}

/**
 * A refusal, which closes the connection: Node would otherwise read the rest of the request's body
 * to keep the connection, as long as a client trickles it (up to the request timeout of 5 minutes),
 * also for a client without the token, or a body refused for its size.
 */
function deny(res: http.ServerResponse, status: number, code: 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'VALIDATION' | 'BUSY' | 'INTERNAL', message: string): void {
  const body: Result<never> = { ok: false, error: { code, message } };
  res.setHeader('Connection', 'close');
  sendJson(res, status, body);
}

const MIB = 1024 * 1024;

function tooLarge(channel: string, limitBytes: number): string {
  if (channel !== LARGE_BODY_CHANNEL) return `the request is larger than ${limitBytes / MIB} MiB`;
  return (
    `the import is larger than ${Math.round(limitBytes / MIB)} MiB as a request: at most ${MAX_IMPORT_FILES} files, ` +
    `${MAX_IMPORT_FILE_CHARS / MIB} Mi characters each and ${MAX_IMPORT_TOTAL_CHARS / MIB} Mi in all; import them in smaller groups`
  );
}

/** `attachment` named `fileName`: as ASCII (quotes and backslashes dropped), and exactly as RFC 6266's filename*. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

async function readBody(req: http.IncomingMessage, limitBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limitBytes) throw Object.assign(new Error('too large'), { status: 413 });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export async function startHttpServer(o: HttpServerOptions): Promise<RunningHttpServer> {
  const log = o.log ?? (() => {});
  const maxImportBody = o.maxImportBodyBytes ?? IMPORT_BODY_BYTES;
  // One large body at a time: each is held several times over while read and parsed (buffer, text,
  // objects), so parallel imports could exhaust the memory of the machine under test.
  let largeBodyInFlight = false;
  const rendererDir = path.resolve(o.rendererDir);
  const loopback = isLoopbackHost(o.host);

  /**
   * On loopback the Host header must name a loopback host (defeats DNS rebinding: a rebound name
   * arrives as that name). Any port: an SSH tunnel (`ssh -L 9000:127.0.0.1:8642`) or a proxy
   * forwards from a port of its own, and the token still guards every API request.
   */
  const hostAllowed = (req: http.IncomingMessage): boolean => {
    if (!loopback) return true;
    const name = hostNameOf(req.headers.host ?? '');
    return name !== null && isLoopbackHost(name);
  };
  const originAllowed = (req: http.IncomingMessage): boolean => {
    const origin = req.headers.origin;
    return origin === undefined || origin === `http://${req.headers.host ?? ''}`;
  };

  const serveStatic = async (req: http.IncomingMessage, res: http.ServerResponse, pathname: string): Promise<void> => {
    let rel: string;
    try {
      rel = decodeURIComponent(pathname);
    } catch {
      deny(res, 400, 'VALIDATION', 'bad path');
      return;
    }
    if (rel === '/' || rel === '') rel = '/index.html';
    const file = path.resolve(rendererDir, `.${path.posix.normalize(rel)}`);
    if (file !== rendererDir && !file.startsWith(rendererDir + path.sep)) {
      deny(res, 404, 'NOT_FOUND', 'not found');
      return;
    }
    const data = await readFileInside(rendererDir, file);
    if (data === null) {
      if (!fs.existsSync(path.join(rendererDir, 'index.html'))) {
        res.writeHead(503, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`The kvbench renderer is not built (${rendererDir} has no index.html). Run: npm run build:renderer\n`);
        return;
      }
      res.writeHead(404, { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('not found\n');
      return;
    }
    const type = CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    const immutable = rel.startsWith('/assets/');
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': type,
      'Content-Length': data.length,
      'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : data);
  };

  /** An export's file, streamed from disk once (export-downloads.ts), then removed. */
  const serveDownload = async (req: http.IncomingMessage, res: http.ServerResponse, token: string): Promise<void> => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      deny(res, 405, 'VALIDATION', 'use GET');
      return;
    }
    // A page of another site may not fetch it (its token is unguessable too): a browser says where a request comes from.
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      deny(res, 403, 'FORBIDDEN', 'cross-site request refused');
      return;
    }
    const download = /^[0-9a-f]{48}$/.test(token) ? o.backend.downloads.take(token) : null;
    if (download === null) {
      deny(res, 404, 'NOT_FOUND', 'this export was downloaded already, or has expired (10 minutes): export it again');
      return;
    }
    try {
      const stream = fs.createReadStream(download.file);
      await new Promise<void>((resolve, reject) => stream.once('open', () => resolve()).once('error', reject));
      res.writeHead(200, {
        ...SECURITY_HEADERS,
        'Content-Type': download.mimeType,
        'Content-Length': download.bytes,
        'Content-Disposition': contentDisposition(download.fileName),
        'Cache-Control': 'no-store',
      });
      await pipeline(stream, res);
    } catch (err) {
      log('warn', `download of ${download.fileName}: ${(err as Error).message}`);
      if (!res.headersSent) deny(res, 500, 'INTERNAL', 'the export could not be read: export it again');
      else res.destroy();
    } finally {
      await o.backend.downloads.done(download);
    }
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (!hostAllowed(req)) {
        deny(res, 403, 'FORBIDDEN', 'unexpected Host header');
        return;
      }
      if (url.pathname.startsWith('/api/')) {
        if (!originAllowed(req)) {
          deny(res, 403, 'FORBIDDEN', 'cross-origin request refused');
          return;
        }
        if (url.pathname.startsWith(HTTP_DOWNLOAD_PREFIX)) {
          await serveDownload(req, res, url.pathname.slice(HTTP_DOWNLOAD_PREFIX.length));
          return;
        }
        if (!tokenMatches(bearer(req), o.token)) {
          deny(res, 401, 'UNAUTHORIZED', 'this kvbench server needs its token: open the URL it printed at start');
          return;
        }
        if (!url.pathname.startsWith(HTTP_INVOKE_PREFIX)) {
          deny(res, 404, 'NOT_FOUND', 'no such API');
          return;
        }
        if (req.method !== 'POST') {
          res.setHeader('Allow', 'POST');
          deny(res, 405, 'VALIDATION', 'use POST');
          return;
        }
        if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
          deny(res, 415, 'VALIDATION', 'the body must be application/json');
          return;
        }
        let channel: string;
        try {
          channel = decodeURIComponent(url.pathname.slice(HTTP_INVOKE_PREFIX.length));
        } catch {
          deny(res, 404, 'NOT_FOUND', 'unknown channel');
          return;
        }
        const large = channel === LARGE_BODY_CHANNEL;
        const limitBytes = large ? maxImportBody : SMALL_BODY_BYTES;
        // Node has checked the header is a number; a chunked body has none and counts as large.
        const declared = req.headers['content-length'] === undefined ? null : Number(req.headers['content-length']);
        if (declared !== null && declared > limitBytes) {
          deny(res, 413, 'VALIDATION', tooLarge(channel, limitBytes));
          return;
        }
        const holdsSlot = large && (declared === null || declared > SMALL_BODY_BYTES);
        if (holdsSlot && largeBodyInFlight) {
          deny(res, 503, 'BUSY', 'another import is being sent to this server: try again when it has finished');
          return;
        }
        if (holdsSlot) largeBodyInFlight = true;
        try {
          let body: unknown;
          try {
            const raw = await readBody(req, limitBytes);
            body = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'));
          } catch (err) {
            const status = (err as { status?: number }).status ?? 400;
            deny(res, status, 'VALIDATION', status === 413 ? tooLarge(channel, limitBytes) : 'the body is not JSON');
            return;
          }
          const result = await o.backend.invoke(channel, body);
          sendJson(res, 200, result);
        } finally {
          if (holdsSlot) largeBodyInFlight = false;
        }
        return;
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        deny(res, 405, 'VALIDATION', 'method not allowed');
        return;
      }
      await serveStatic(req, res, url.pathname);
    })().catch((err) => {
      log('error', `request ${req.method} ${req.url}: ${(err as Error).message}`);
      if (!res.headersSent) deny(res, 500, 'INTERNAL', 'internal error');
      else res.destroy();
    });
  });

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: 64 * 1024,
    handleProtocols: (protocols) => (protocols.has(WS_PROTOCOL) ? WS_PROTOCOL : false),
  });
  const sockets = new Set<WebSocket>();

  server.on('upgrade', (req, socket: Socket, head) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const refuse = (status: number, text: string): void => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    if (url.pathname !== HTTP_EVENTS_PATH) return refuse(404, 'Not Found');
    if (!hostAllowed(req) || !originAllowed(req)) return refuse(403, 'Forbidden');
    if (!tokenMatches(wsToken(req), o.token)) return refuse(401, 'Unauthorized');
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      let alive = true;
      ws.on('pong', () => (alive = true));
      const ping = setInterval(() => {
        if (!alive) return ws.terminate();
        alive = false;
        ws.ping();
      }, PING_INTERVAL_MS);
      const unsubscribe = o.backend.subscribe((event) => {
        if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(event));
      });
      ws.on('message', () => {}); // the stream is one-way; requests go through /api/invoke
      ws.on('close', () => {
        clearInterval(ping);
        unsubscribe();
        sockets.delete(ws);
      });
      ws.on('error', () => ws.terminate());
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://${urlHostOf(o.host)}:${port}`;
  return {
    host: o.host,
    port,
    origin,
    url: `${origin}/?token=${o.token}`,
    async close() {
      for (const ws of sockets) ws.close(1001, 'server shutting down');
      wss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
