// The Electron security checklist as code: web preferences, navigation and window blocking,
// permissions, remote content, the app:// protocol and its CSP.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveAppFile, serveAppProtocol } from '../../../src-main/app/app-protocol.ts';
import { APP_START_URL, hardenSession, hardenWebContents, isAllowedRequest, isAppUrl, secureWebPreferences } from '../../../src-main/app/security.ts';
import { RENDERER_CSP } from '../../../src-main/server/csp.ts';
import { removeTempDirs, tempDir } from '../store/fixtures.ts';
import { createFakeElectron, FakeWebContents } from './fake-electron.ts';

afterEach(() => removeTempDirs());

const REPO = path.resolve(import.meta.dirname, '../../..');

describe('Electron security', () => {
  it('isolates, sandboxes and denies Node to the page', () => {
    const p = secureWebPreferences('/app/out/preload/preload.cjs');
    expect(p).toMatchObject({
      preload: '/app/out/preload/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it('blocks navigation away from the app, new windows and webviews', () => {
    const wc = new FakeWebContents();
    hardenWebContents(wc as never);
    const nav = (event: string, url: string): boolean => {
      let prevented = false;
      wc.emit(event, { preventDefault: () => (prevented = true) }, url);
      return prevented;
    };
    expect(nav('will-navigate', 'https://example.com/')).toBe(true);
    expect(nav('will-navigate', 'file:///etc/passwd')).toBe(true);
    expect(nav('will-redirect', 'http://127.0.0.1:8642/')).toBe(true);
    expect(nav('will-navigate', 'app://kvbench/index.html#/history')).toBe(false);
    expect(nav('will-attach-webview', 'app://kvbench/index.html')).toBe(true);
    expect(wc.windowOpenHandler!({ url: 'https://example.com' })).toEqual({ action: 'deny' });
    expect(wc.windowOpenHandler!({ url: APP_START_URL })).toEqual({ action: 'deny' });
  });

  it('grants no permission and loads nothing remote', () => {
    const fake = createFakeElectron();
    hardenSession(fake.session.defaultSession as never);
    const { request, check, beforeRequest } = fake.permission();
    let granted: boolean | null = null;
    request!(null, 'media', (ok) => (granted = ok));
    expect(granted).toBe(false);
    expect(check!()).toBe(false);
    const cancel = (url: string): boolean => {
      let c = false;
      beforeRequest!({ url }, (r) => (c = r.cancel));
      return c;
    };
    expect(cancel('https://cdn.example.com/chart.js')).toBe(true);
    expect(cancel('http://127.0.0.1:8642/api/invoke/app.info')).toBe(true);
    expect(cancel('file:///etc/passwd')).toBe(true);
    expect(cancel('app://kvbench/assets/index.js')).toBe(false);
    expect(cancel('blob:app://kvbench/5b1c…')).toBe(false);
    expect(isAllowedRequest('app://kvbench.evil.example/')).toBe(false);
    expect(cancel('chrome-extension://abcdefghijklmnop/content.js')).toBe(true);
    expect(cancel('devtools://elsewhere/x.js')).toBe(true);
    expect(cancel('devtools://devtools/bundled/devtools_app.html')).toBe(false);
    expect(isAppUrl('app://kvbench/index.html')).toBe(true);
    expect(isAppUrl('app://other/index.html')).toBe(false);
  });

  it('serves the renderer on app:// with the CSP header, and nothing outside it', async () => {
    const dir = tempDir('kvb-proto-');
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>k</title>');
    fs.writeFileSync(path.join(dir, 'assets', 'a.js'), '1');
    expect(resolveAppFile(dir, 'app://kvbench/')).toBe(path.join(dir, 'index.html'));
    expect(resolveAppFile(dir, 'app://kvbench/assets/a.js')).toBe(path.join(dir, 'assets', 'a.js'));
    expect(resolveAppFile(dir, 'app://kvbench/../../etc/passwd')).toBe(path.join(dir, 'etc', 'passwd'));
    expect(resolveAppFile(dir, 'app://kvbench/%2e%2e/%2e%2e/etc/passwd')).toBe(path.join(dir, 'etc', 'passwd'));
    expect(resolveAppFile(dir, 'app://elsewhere/index.html')).toBeNull();
    expect(resolveAppFile(dir, 'https://kvbench/index.html')).toBeNull();

    const fake = createFakeElectron();
    serveAppProtocol(fake.protocol as never, dir);
    const handle = fake.protocolHandlers.get('app')!;
    const index = await handle({ url: 'app://kvbench/index.html' });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toBe(`${RENDERER_CSP}; frame-ancestors 'none'`);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await handle({ url: 'app://kvbench/../../../../etc/passwd' })).status).toBe(404);
    expect((await handle({ url: 'app://kvbench/nothing.js' })).status).toBe(404);
    // A link in the renderer directory that leads out of it is not followed; one within it is.
    const outside = tempDir('kvb-proto-secret-');
    fs.writeFileSync(path.join(outside, 's.txt'), 'secret');
    fs.symlinkSync(path.join(outside, 's.txt'), path.join(dir, 'link.txt'));
    fs.symlinkSync(path.join(dir, 'assets', 'a.js'), path.join(dir, 'alias.js'));
    expect((await handle({ url: 'app://kvbench/link.txt' })).status).toBe(404);
    expect(await (await handle({ url: 'app://kvbench/alias.js' })).text()).toBe('1');
  });

  it('uses one CSP everywhere, without unsafe-eval or unsafe-inline', () => {
    const html = fs.readFileSync(path.join(REPO, 'src-renderer', 'index.html'), 'utf8');
    const meta = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1];
    expect(meta).toBe(RENDERER_CSP);
    expect(RENDERER_CSP).not.toMatch(/unsafe-eval|unsafe-inline|\*|https?:/);
    expect(RENDERER_CSP).toMatch(/default-src 'none'/);
    expect(RENDERER_CSP).toMatch(/script-src 'self'/);
    // No inline script or style in the page the CSP would have to allow.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle="/);
  });
});
