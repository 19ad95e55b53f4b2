// How the API object reaches the backend. Exactly two transports exist: the Electron preload and
// the browser (HTTP + WebSocket to `kvbench serve`). Nothing else in the renderer differs.
import type { Channel } from '../../src-shared/ipc/channels.ts';
import type { Result } from '../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../src-shared/ipc/events.ts';

/**
 * 'unauthorized': the server refuses this page's token (missing, or the server was restarted with a
 * new one): no reconnect can help, only the URL the server printed.
 */
export type ConnectionState = 'connected' | 'connecting' | 'disconnected' | 'unauthorized';

export interface Transport {
  readonly kind: 'preload' | 'browser';
  invoke(channel: Channel, request: unknown): Promise<Result<unknown>>;
  subscribe(listener: (event: AppEvent) => void): () => void;
  /** The event stream's state (always connected for the preload). */
  onConnection(listener: (state: ConnectionState) => void): () => void;
}
