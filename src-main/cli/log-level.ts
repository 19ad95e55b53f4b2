// `--log-level`: which of the run's console messages are shown. The reference's levels are Python's
// logging names; the engine logs with four of its own. Errors always print (so do the results):
// hiding why a run failed would leave the user with an exit code and nothing else.
import type { RunOptions } from '../../src-shared/domain/run-options.ts';

type LogLevel = RunOptions['logLevel'];

export type MessageLevel = 'debug' | 'info' | 'warn' | 'error';

const MESSAGE_RANK: Record<MessageLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
/** Python's logging numbers: CRITICAL hides everything but errors. */
const THRESHOLD: Record<LogLevel, number> = { DEBUG: 10, INFO: 20, WARNING: 30, ERROR: 40, CRITICAL: 50 };

export function shownAtLogLevel(message: MessageLevel, chosen: LogLevel): boolean {
  return message === 'error' || MESSAGE_RANK[message] >= THRESHOLD[chosen];
}
