// Electron: the functions the sandboxed preload exposed on window.kvbench.
import type { PreloadApi } from '../../src-shared/ipc/api.ts';
import type { Channel } from '../../src-shared/ipc/channels.ts';
import type { Result } from '../../src-shared/ipc/contract.ts';
import type { Transport } from './transport.ts';

export function preloadTransport(bridge: PreloadApi): Transport {
  return {
    kind: 'preload',
    invoke(channel: Channel, request: unknown): Promise<Result<unknown>> {
      const fn = bridge[channel] as ((r: unknown) => Promise<Result<unknown>>) | undefined;
      if (typeof fn !== 'function') return Promise.resolve({ ok: false, error: { code: 'NOT_FOUND', message: `the preload has no function for ${channel}` } });
      return fn(request);
    },
    subscribe: (listener) => bridge.subscribe(listener),
    onConnection(listener) {
      listener('connected');
      return () => {};
    },
  };
}
