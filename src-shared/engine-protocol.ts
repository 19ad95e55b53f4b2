// Messages between the host (CLI suite runner, Electron main) and one engine process.
// Every message crosses a process boundary, so both sides validate with these schemas.
// Plain JSON-compatible values only: numbers, never bigint.
import { z } from 'zod';
import { ERROR_CODES, toErrorData, type ErrorCode } from './domain/errors.ts';

/** Bump when a message changes shape; host and engine refuse a different version. */
export const ENGINE_PROTOCOL_VERSION = 1;

/** At most one progress message per this interval, at the engine and again at the host (≤ 10/s). */
export const PROGRESS_INTERVAL_MS = 100;

/** The one closed set of error codes (src-shared/domain/errors.ts), as the engine protocol carries them. */
export const ENGINE_ERROR_CODES = ERROR_CODES;
export const EngineErrorCodeSchema = z.enum(ENGINE_ERROR_CODES);
export type EngineErrorCode = ErrorCode;

export const EngineErrorDataSchema = z.object({
  code: EngineErrorCodeSchema,
  message: z.string(),
});
export type EngineErrorData = z.infer<typeof EngineErrorDataSchema>;

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export const LogLevelSchema = z.enum(LOG_LEVELS);
export type LogLevel = z.infer<typeof LogLevelSchema>;

export const PROGRESS_PHASES = ['starting', 'preconditioning', 'warming-up', 'running', 'draining', 'finishing'] as const;

const count = z.number().int().nonnegative();
const rate = z.number().nonnegative(); // z.number() already refuses NaN and ±Infinity
const durationNs = z.number().nonnegative();

export const ProgressEventSchema = z.object({
  phase: z.enum(PROGRESS_PHASES),
  elapsedNs: durationNs,
  durationNs: durationNs.nullable(),
  requestsCompleted: count,
  maxRequests: count.nullable(),
  activeUsers: count,
  queueDepth: count,
  generatedTokensPerSec: rate,
  storageReadBytesPerSec: rate,
  storageWriteBytesPerSec: rate,
  cpuReadBytesPerSec: rate,
  cpuWriteBytesPerSec: rate,
  e2eLatencyP95Ns: durationNs.nullable(),
  storageReadP95Ns: durationNs.nullable(),
  eventLoopLagP99Ns: durationNs.nullable(),
});
export type ProgressEvent = z.infer<typeof ProgressEventSchema>;

export const RUN_STATUSES = ['complete', 'partial', 'failed', 'aborted'] as const;

export const RunOutcomeSchema = z.object({
  status: z.enum(RUN_STATUSES),
  reason: z.string().nullable(),
  /** The results JSON; its shape belongs to the engine's report module. */
  results: z.record(z.string(), z.unknown()),
  summaryText: z.string(),
});
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;

const version = z.number().int().positive();

// host → engine
export const StartMessageSchema = z.object({
  type: z.literal('start'),
  version,
  /** RunOptions as plain JSON; the engine validates them. */
  options: z.unknown(),
});
export const CancelMessageSchema = z.object({
  type: z.literal('cancel'),
  reason: z.string(),
});
export const HostToEngineMessageSchema = z.discriminatedUnion('type', [StartMessageSchema, CancelMessageSchema]);
export type HostToEngineMessage = z.infer<typeof HostToEngineMessageSchema>;

// engine → host
export const HelloMessageSchema = z.object({
  type: z.literal('hello'),
  version,
  pid: z.number().int().positive(),
});
export const ProgressMessageSchema = z.object({
  type: z.literal('progress'),
  progress: ProgressEventSchema,
});
export const LogMessageSchema = z.object({
  type: z.literal('log'),
  level: LogLevelSchema,
  message: z.string(),
});
export const HeartbeatMessageSchema = z.object({
  type: z.literal('heartbeat'),
  uptimeNs: durationNs,
});
export const ResultMessageSchema = z.object({
  type: z.literal('result'),
  outcome: RunOutcomeSchema,
});
export const ErrorMessageSchema = z.object({
  type: z.literal('error'),
  error: EngineErrorDataSchema,
});
export const EngineToHostMessageSchema = z.discriminatedUnion('type', [
  HelloMessageSchema,
  ProgressMessageSchema,
  LogMessageSchema,
  HeartbeatMessageSchema,
  ResultMessageSchema,
  ErrorMessageSchema,
]);
export type EngineToHostMessage = z.infer<typeof EngineToHostMessageSchema>;

/** An unknown thrown value as error data: its `code` is kept when in the closed set, else INTERNAL. */
export const toEngineErrorData: (err: unknown) => EngineErrorData = toErrorData;
