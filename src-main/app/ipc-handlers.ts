// Electron IPC over the backend: one ipcMain.handle per contract channel, each checking that the
// request comes from the app's own page (top frame, app:// origin) before the backend validates
// and handles it. Errors return as data. Events go to the window on one channel, as plain data.
import type { IpcMain, IpcMainInvokeEvent, WebContents, WebFrameMain } from 'electron';
import { CHANNELS, EVENT_CHANNEL } from '../../src-shared/ipc/channels.ts';
import type { Result } from '../../src-shared/ipc/contract.ts';
import type { Backend } from '../server/backend.ts';
import { isAppUrl } from './security.ts';

/** A request is trusted when it comes from the app's own top-level page. */
export function isTrustedSender(frame: Pick<WebFrameMain, 'url' | 'parent'> | null | undefined): boolean {
  return Boolean(frame) && frame!.parent === null && isAppUrl(frame!.url);
}

export function registerIpcHandlers(
  ipcMain: Pick<IpcMain, 'handle' | 'removeHandler'>,
  backend: Pick<Backend, 'invoke'>,
  opts: { isTrusted?: (event: IpcMainInvokeEvent) => boolean; log?: (message: string) => void } = {},
): () => void {
  const isTrusted = opts.isTrusted ?? ((event: IpcMainInvokeEvent) => isTrustedSender(event.senderFrame));
  for (const channel of CHANNELS) {
    ipcMain.handle(channel, async (event, request: unknown): Promise<Result<unknown>> => {
      if (!isTrusted(event)) {
        opts.log?.(`refused ${channel} from ${event.senderFrame?.url ?? 'an unknown frame'}`);
        return { ok: false, error: { code: 'FORBIDDEN', message: 'this request did not come from the kvbench window' } };
      }
      return backend.invoke(channel, request);
    });
  }
  return () => {
    for (const channel of CHANNELS) ipcMain.removeHandler(channel);
  };
}

/** Forwards every backend event to the window while it exists. */
export function forwardEvents(backend: Pick<Backend, 'subscribe'>, target: () => Pick<WebContents, 'send' | 'isDestroyed'> | null): () => void {
  return backend.subscribe((event) => {
    const wc = target();
    if (wc && !wc.isDestroyed()) wc.send(EVENT_CHANNEL, event);
  });
}
