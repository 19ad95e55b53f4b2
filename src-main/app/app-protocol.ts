// The app:// protocol: the built renderer (out/renderer) served from disk with the CSP and the
// other security headers as real response headers. A standard, secure scheme, so the page gets a
// proper origin (fetch, module scripts) without file:// and its broad access.
import path from 'node:path';
import type { Protocol } from 'electron';
import { SECURITY_HEADERS } from '../server/csp.ts';
import { readFileInside } from '../server/renderer-files.ts';
import { APP_HOST, APP_SCHEME } from './security.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/** Before app ready: the scheme's privileges. */
export function registerAppScheme(protocol: Pick<Protocol, 'registerSchemesAsPrivileged'>): void {
  protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } }]);
}

/** The file a request maps to by its name, or null when that is outside the renderer directory or another host (a link out of it is refused when read). */
export function resolveAppFile(rendererDir: string, url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.host !== APP_HOST) return null;
  let rel: string;
  try {
    rel = decodeURIComponent(u.pathname);
  } catch {
    return null;
  }
  if (rel === '/' || rel === '') rel = '/index.html';
  const root = path.resolve(rendererDir);
  const file = path.resolve(root, `.${path.posix.normalize(rel)}`);
  return file.startsWith(root + path.sep) ? file : null;
}

export function serveAppProtocol(protocol: Pick<Protocol, 'handle'>, rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppFile(rendererDir, request.url);
    const data = file === null ? null : await readFileInside(rendererDir, file);
    if (file === null || data === null) return new Response('not found', { status: 404, headers: { ...SECURITY_HEADERS } });
    return new Response(data, {
      status: 200,
      headers: { ...SECURITY_HEADERS, 'Content-Type': CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream' },
    });
  });
}
