/**
 * Events from the backend to the page, on one stream (EVENT_CHANNEL over Electron IPC, the
 * WebSocket in the served mode). The suite runner's own events pass through unchanged; the backend
 * adds a few of its own. Every event is plain data with a `type` in the past tense.
 *
 * Pure TypeScript: no Node, no DOM, no electron.
 */
import type { SuiteEvent } from '../domain/scenarios.ts';
import type { IpcError, Settings } from './contract.ts';

export type AppEvent =
  | SuiteEvent
  /** Between suite.start and suite.started: hardware detection and the drive probe take seconds. */
  | { type: 'suite.preparationProgressed'; step: 'detecting' | 'probing' | 'planning'; message: string }
  /** The suite could not start or stopped on an error outside any trial (trial failures are trial events). */
  | { type: 'suite.failed'; suiteId: number | null; error: IpcError }
  /** Trials, suites or systems were added or removed (import, delete, a finished trial). */
  | { type: 'history.changed'; reason: string }
  | { type: 'settings.changed'; settings: Settings };

export type AppEventType = AppEvent['type'];

export const APP_EVENT_TYPES = [
  'suite.started',
  'suite.trialStarted',
  'suite.trialProgressed',
  'suite.trialLogged',
  'suite.trialFinished',
  'suite.finished',
  'suite.preparationProgressed',
  'suite.failed',
  'history.changed',
  'settings.changed',
] as const satisfies readonly AppEventType[];

/** Compile-time: the list names every event type. */
const allListed: Exclude<AppEventType, (typeof APP_EVENT_TYPES)[number]> extends never ? true : false = true;
void allListed;

/** A minimal structural check for events arriving from a transport (they come from our own backend). */
export function isAppEvent(value: unknown): value is AppEvent {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { type?: unknown }).type === 'string' &&
    (APP_EVENT_TYPES as readonly string[]).includes((value as { type: string }).type)
  );
}
