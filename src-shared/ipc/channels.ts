/**
 * The names of every request channel and of the one event stream between the renderer and the
 * backend (Electron IPC or the served mode's HTTP + WebSocket). Plain data without zod, so the
 * sandboxed preload can be built from it alone; the schemas live in contract.ts, which checks at
 * compile time that it covers exactly these names.
 *
 * Names are `area.verb`; events are in the past tense (`suite.trialProgressed`).
 *
 * Pure TypeScript: no Node, no DOM, no electron.
 */
export const CHANNELS = [
  'app.info',
  'settings.get',
  'settings.update',
  'database.recover',
  'hardware.detect',
  'suite.plan',
  'suite.start',
  'suite.cancel',
  'suite.status',
  'suite.resume',
  'suite.resumeCheck',
  'history.list',
  'history.facets',
  'history.ids',
  'trials.get',
  'trials.delete',
  'suites.list',
  'suites.delete',
  'report.build',
  'report.compare',
  'export.create',
  'import.results',
  'endpoint.list',
  'endpoint.get',
  'endpoint.compare',
  'endpoint.export',
] as const;

export type Channel = (typeof CHANNELS)[number];

export function isChannel(value: unknown): value is Channel {
  return typeof value === 'string' && (CHANNELS as readonly string[]).includes(value);
}

/** The single IPC channel that carries backend → renderer events (never a raw IPC event to the page). */
export const EVENT_CHANNEL = 'kvbench.event';

/** The global the preload exposes in the page (contextBridge.exposeInMainWorld). */
export const PRELOAD_GLOBAL = 'kvbench';

/** The served mode's paths. */
export const HTTP_INVOKE_PREFIX = '/api/invoke/';
/** `kvbench serve`: an export's file, downloaded once by the one-time token export.create answered (GET, no bearer: a link's download sends none). */
export const HTTP_DOWNLOAD_PREFIX = '/api/download/';
export const HTTP_EVENTS_PATH = '/api/events';
/** WebSocket subprotocol of the event stream; the token travels as a second one, `token.<hex>`. */
export const WS_PROTOCOL = 'kvbench.v1';
export const WS_TOKEN_PREFIX = 'token.';
