// The renderer's one API object: typed calls per channel (errors are data) and the event stream,
// over whichever transport this page has. Components and stores reach the backend only through it.
import type { Channel } from '../../src-shared/ipc/channels.ts';
import type { RequestOf, ResponseOf, Result } from '../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../src-shared/ipc/events.ts';
import { browserTransport, takeToken } from './browser-transport.ts';
import { preloadTransport } from './preload-transport.ts';
import type { ConnectionState, Transport } from './transport.ts';

export class KvbenchApi {
  readonly transport: Transport;

  constructor(transport: Transport) {
    this.transport = transport;
  }

  get kind(): Transport['kind'] {
    return this.transport.kind;
  }

  async call<C extends Channel>(channel: C, request: RequestOf<C>): Promise<Result<ResponseOf<C>>> {
    try {
      return (await this.transport.invoke(channel, request)) as Result<ResponseOf<C>>;
    } catch (err) {
      return { ok: false, error: { code: 'INTERNAL', message: (err as Error).message } };
    }
  }

  on(listener: (event: AppEvent) => void): () => void {
    return this.transport.subscribe(listener);
  }

  onConnection(listener: (state: ConnectionState) => void): () => void {
    return this.transport.onConnection(listener);
  }
}

/** The transport this page has: Electron's preload when present, else the served mode. */
export function createApi(win: Window = window): KvbenchApi {
  if (win.kvbench) return new KvbenchApi(preloadTransport(win.kvbench));
  return new KvbenchApi(browserTransport(takeToken()));
}

let current: KvbenchApi | null = null;

export function setApi(api: KvbenchApi): void {
  current = api;
}

export function api(): KvbenchApi {
  if (!current) current = createApi();
  return current;
}
