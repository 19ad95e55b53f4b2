// The renderer's tests talk to a fake backend through the real API object: a transport whose
// channels answer from the test's handlers, with an event stream the test drives.
import type { Channel } from '../../../src-shared/ipc/channels.ts';
import type { IpcError, RequestOf, ResponseOf, Result } from '../../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { KvbenchApi, setApi } from '../../../src-renderer/api/api.ts';
import type { ConnectionState, Transport } from '../../../src-renderer/api/transport.ts';

export type FakeHandlers = { [C in Channel]?: (request: RequestOf<C>) => ResponseOf<C> | Promise<ResponseOf<C>> | { error: IpcError } };

export interface FakeApi {
  api: KvbenchApi;
  calls: { channel: Channel; request: unknown }[];
  emit(event: AppEvent): void;
  /** The event stream's state as the transport reports it (it starts connected). */
  setConnection(state: ConnectionState): void;
  callsOf(channel: Channel): unknown[];
}

export function installFakeApi(handlers: FakeHandlers): FakeApi {
  const calls: { channel: Channel; request: unknown }[] = [];
  const listeners = new Set<(e: AppEvent) => void>();
  const connectionListeners = new Set<(s: ConnectionState) => void>();
  let connection: ConnectionState = 'connected';
  const transport: Transport = {
    kind: 'browser',
    async invoke(channel, request): Promise<Result<unknown>> {
      calls.push({ channel, request });
      const h = handlers[channel] as ((r: unknown) => unknown) | undefined;
      if (!h) return { ok: false, error: { code: 'NOT_FOUND', message: `the fake backend has no ${channel}` } };
      const v = await h(request);
      if (v && typeof v === 'object' && 'error' in v && Object.keys(v).length === 1) return { ok: false, error: (v as { error: IpcError }).error };
      return { ok: true, value: v };
    },
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    onConnection(l) {
      connectionListeners.add(l);
      l(connection);
      return () => connectionListeners.delete(l);
    },
  };
  const api = new KvbenchApi(transport);
  setApi(api);
  return {
    api,
    calls,
    emit: (e) => listeners.forEach((l) => l(e)),
    setConnection: (s) => {
      connection = s;
      connectionListeners.forEach((l) => l(s));
    },
    callsOf: (c) => calls.filter((x) => x.channel === c).map((x) => x.request),
  };
}

export const flush = async (n = 5): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};
