// The Electron security checklist, in one place: the window's web preferences, what its web
// contents may do (no navigation, no new windows, no webviews, no permissions), and which requests
// the session lets through (the app's own protocol only: no remote content).
import type { Session, WebContents, WebPreferences } from 'electron';

export const APP_SCHEME = 'app';
export const APP_HOST = 'kvbench';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_START_URL = `${APP_ORIGIN}/index.html`;

/** Whether a URL belongs to the app's own page (custom schemes have an opaque origin in Node's URL). */
export function isAppUrl(raw: string | undefined | null): boolean {
  if (!raw) return false;
  try {
    const u = new URL(raw);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST;
  } catch {
    return false;
  }
}

export function secureWebPreferences(preloadFile: string): WebPreferences {
  return {
    preload: preloadFile,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    experimentalFeatures: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    spellcheck: false,
    safeDialogs: true,
  };
}

type ContentsLike = Pick<WebContents, 'on' | 'setWindowOpenHandler'>;

/** No navigation away from the app, no new windows, no webviews. */
export function hardenWebContents(contents: ContentsLike, log: (message: string) => void = () => {}): void {
  const block = (event: { preventDefault(): void }, url: string): void => {
    event.preventDefault();
    log(`blocked navigation to ${url}`);
  };
  contents.on('will-navigate', (event, url) => {
    if (!isAppUrl(url)) block(event, url);
  });
  contents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url)) block(event, url);
  });
  contents.on('will-attach-webview', (event) => {
    event.preventDefault();
    log('blocked a webview');
  });
  contents.setWindowOpenHandler(({ url }) => {
    log(`blocked a new window for ${url}`);
    return { action: 'deny' };
  });
}

/**
 * What the session may load: the app's own pages, and the blob:/data: URLs it creates itself
 * (downloads, images); and DevTools' own pages (devtools://devtools/), which the default menu opens
 * for the local user and load in this session. No chrome-extension:// URL: the app loads no extension.
 */
const ALLOWED_REQUEST = /^(app:\/\/kvbench\/|blob:app:\/\/kvbench\/|data:|devtools:\/\/devtools\/)/;

export function isAllowedRequest(url: string): boolean {
  return ALLOWED_REQUEST.test(url);
}

type SessionLike = Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler'> & {
  webRequest: Pick<Session['webRequest'], 'onBeforeRequest'>;
};

/** No permission is ever granted, and nothing outside the app is fetched. */
export function hardenSession(session: SessionLike, log: (message: string) => void = () => {}): void {
  session.setPermissionRequestHandler((_contents, permission, callback) => {
    log(`denied permission ${permission}`);
    callback(false);
  });
  session.setPermissionCheckHandler(() => false);
  session.webRequest.onBeforeRequest((details, callback) => {
    const ok = isAllowedRequest(details.url);
    if (!ok) log(`blocked request to ${details.url}`);
    callback({ cancel: !ok });
  });
}
