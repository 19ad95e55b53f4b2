/**
 * The shape of the API object: one async function per channel, each resolving to a Result (errors
 * are data), and one event subscription. The preload exposes exactly this (PreloadApi) in Electron;
 * the renderer builds the same object over HTTP + WebSocket in the served mode.
 *
 * Pure TypeScript: no Node, no DOM, no electron.
 */
import type { Channel } from './channels.ts';
import type { RequestOf, ResponseOf, Result } from './contract.ts';
import type { AppEvent } from './events.ts';

export type ChannelFunctions = { [C in Channel]: (request: RequestOf<C>) => Promise<Result<ResponseOf<C>>> };

/** What the preload puts on `window.kvbench`: a function per channel, and `subscribe`. */
export type PreloadApi = ChannelFunctions & {
  /** Calls `listener` with each event's data (never the IPC event); returns the unsubscribe function. */
  subscribe(listener: (event: AppEvent) => void): () => void;
};
