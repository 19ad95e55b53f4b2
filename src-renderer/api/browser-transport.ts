// `kvbench serve`: requests as POST /api/invoke/<channel> with the token as a bearer header, events
// over a WebSocket that carries the token as a subprotocol (never in a URL). The token arrives once
// in the page's address (?token=…), is kept in session storage and removed from the address bar.
import { HTTP_EVENTS_PATH, HTTP_INVOKE_PREFIX, WS_PROTOCOL, WS_TOKEN_PREFIX, type Channel } from '../../src-shared/ipc/channels.ts';
import type { Result } from '../../src-shared/ipc/contract.ts';
import { isAppEvent, type AppEvent } from '../../src-shared/ipc/events.ts';
import type { ConnectionState, Transport } from './transport.ts';

const TOKEN_KEY = 'kvbench.token';

/** Takes the token from the address (and removes it there), else from this tab's session storage. */
export function takeToken(loc: Location = window.location, storage: Storage = window.sessionStorage): string | null {
  const url = new URL(loc.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    storage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete('token');
    window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
    return fromUrl;
  }
  return storage.getItem(TOKEN_KEY);
}

export function browserTransport(token: string | null, base: string = window.location.origin): Transport {
  const listeners = new Set<(event: AppEvent) => void>();
  const connectionListeners = new Set<(state: ConnectionState) => void>();
  let state: ConnectionState = 'connecting';
  let socket: WebSocket | null = null;
  let retryMs = 500;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The stream is opened by the first subscriber; after that, only retries open it. */
  let started = false;

  const setState = (s: ConnectionState): void => {
    if (s === state) return;
    state = s;
    for (const l of connectionListeners) l(s);
  };

  const invoke = async (channel: Channel, request: unknown): Promise<Result<unknown>> => {
    if (!token) return { ok: false, error: { code: 'UNAUTHORIZED', message: 'No access token: open the URL that kvbench serve printed (it ends in ?token=…).' } };
    let res: Response;
    try {
      res = await fetch(`${base}${HTTP_INVOKE_PREFIX}${encodeURIComponent(channel)}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify(request ?? {}),
        cache: 'no-store',
      });
    } catch (err) {
      return { ok: false, error: { code: 'UNREACHABLE', message: `Cannot reach the kvbench server (${(err as Error).message}). Is kvbench serve still running?` } };
    }
    try {
      const body = (await res.json()) as Result<unknown>;
      if (typeof body === 'object' && body !== null && 'ok' in body) return body;
    } catch {
      // fall through
    }
    return { ok: false, error: { code: 'INTERNAL', message: `The server answered ${res.status} ${res.statusText}` } };
  };

  const retryLater = (): void => {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 10_000);
  };

  const connect = (): void => {
    if (!token) {
      setState('unauthorized');
      return;
    }
    const wsUrl = `${base.replace(/^http/, 'ws')}${HTTP_EVENTS_PATH}`;
    const ws = new WebSocket(wsUrl, [WS_PROTOCOL, `${WS_TOKEN_PREFIX}${token}`]);
    socket = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      retryMs = 500;
      setState('connected');
    };
    ws.onmessage = (m) => {
      let data: unknown;
      try {
        data = JSON.parse(String(m.data));
      } catch {
        return;
      }
      if (!isAppEvent(data)) return;
      for (const l of listeners) l(data);
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      setState('disconnected');
      clearTimeout(retryTimer);
      if (opened) return retryLater();
      // Refused before it opened. A browser does not say why (a 401 and a server that is down close
      // alike), so one cheap request asks: a token the server refuses (it was restarted with a new
      // one) will not become valid by retrying.
      void invoke('app.info', {}).then((r) => {
        if (!r.ok && r.error.code === 'UNAUTHORIZED') setState('unauthorized');
        else retryLater();
      });
    };
  };

  return {
    kind: 'browser',
    invoke,
    subscribe(listener) {
      listeners.add(listener);
      if (!started) {
        started = true;
        connect();
      }
      return () => listeners.delete(listener);
    },
    onConnection(listener) {
      connectionListeners.add(listener);
      listener(state);
      return () => connectionListeners.delete(listener);
    },
  };
}
