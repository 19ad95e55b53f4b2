// How the API object reaches the backend. Exactly two transports exist: the Electron preload and
// the browser (HTTP + WebSocket to `kvbench serve`). Nothing else in the renderer differs.
import type { Channel } from '../../src-shared/ipc/channels.ts';
import type { Result } from '../../src-shared/ipc/contract.ts';
import type { AppEvent } from '../../src-shared/ipc/events.ts';

export type ConnectionState = 'connected' | 'connecting' | 'disconnected';

export interface Transport {
  readonly kind: 'preload' | 'browser';
  invoke(channel: Channel, request: unknown): Promise<Result<unknown>>;
  subscribe(listener: (event: AppEvent) => void): () => void;
  /** The event stream's state (always connected for the preload). */
  onConnection(listener: (state: ConnectionState) => void): () => void;
}
