/**
 * Events from the backend to the page, on one stream (EVENT_CHANNEL over Electron IPC, the
 * WebSocket in the served mode). The suite runner's own events pass through unchanged; the backend
 * adds a few of its own. Every event is plain data with a `type` in the past tense; its schema is
 * contract.ts's AppEventSchema (which the suite status's event snapshot uses too).
 *
 * Pure TypeScript: no Node, no DOM, no electron.
 */
import type { z } from 'zod';
import { AppEventSchema } from './contract.ts';

export type AppEvent = z.infer<typeof AppEventSchema>;
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
  'database.upgradeProgressed',
  'database.recoveryProgressed',
  'settings.changed',
] as const satisfies readonly AppEventType[];

/** Compile-time: the list names every event type. */
const allListed: Exclude<AppEventType, (typeof APP_EVENT_TYPES)[number]> extends never ? true : false = true;
void allListed;

/** Whether a value from a transport (the WebSocket: it crosses a process boundary) is a whole, valid event. */
export function isAppEvent(value: unknown): value is AppEvent {
  return AppEventSchema.safeParse(value).success;
}
