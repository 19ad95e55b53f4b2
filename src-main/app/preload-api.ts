// What the preload exposes, built from the channel list: one function per contract channel, and
// `subscribe`, which hands the listener only the event's data (never the IpcRendererEvent, whose
// `sender` would be ipcRenderer itself).
import type { IpcRenderer, IpcRendererEvent } from 'electron';
import { CHANNELS, EVENT_CHANNEL } from '../../src-shared/ipc/channels.ts';

export function buildPreloadApi(ipc: Pick<IpcRenderer, 'invoke' | 'on' | 'removeListener'>): Readonly<Record<string, unknown>> {
  const api: Record<string, unknown> = {};
  for (const channel of CHANNELS) {
    api[channel] = (request: unknown) => ipc.invoke(channel, request);
  }
  api.subscribe = (listener: (event: unknown) => void): (() => void) => {
    if (typeof listener !== 'function') throw new TypeError('subscribe needs a function');
    const handler = (_event: IpcRendererEvent, data: unknown): void => listener(data);
    ipc.on(EVENT_CHANNEL, handler);
    return () => {
      ipc.removeListener(EVENT_CHANNEL, handler);
    };
  };
  return Object.freeze(api);
}
