import { describe, expect, it } from 'vitest';
import {
  ENGINE_ERROR_CODES,
  ENGINE_PROTOCOL_VERSION,
  EngineToHostMessageSchema,
  HostToEngineMessageSchema,
  ProgressEventSchema,
  RunOutcomeSchema,
  toEngineErrorData,
  type ProgressEvent,
  type RunOutcome,
} from '../../../src-shared/engine-protocol.ts';
import { isErrorCode } from '../../../src-shared/domain/errors.ts';

const progress: ProgressEvent = {
  phase: 'running',
  elapsedNs: 1_500_000_000,
  durationNs: 60_000_000_000,
  requestsCompleted: 42,
  maxRequests: null,
  activeUsers: 8,
  queueDepth: 3,
  generatedTokens: 0,
  storageReadBytes: 0,
  storageWriteBytes: 0,
  generatedTokensPerSec: 1234.5,
  storageReadBytesPerSec: 2.5e9,
  storageWriteBytesPerSec: 1e9,
  cpuReadBytesPerSec: 0,
  cpuWriteBytesPerSec: 0,
  e2eLatencyP95Ns: 12_000_000,
  storageReadP95Ns: null,
  eventLoopLagP99Ns: 250_000,
};

const outcome: RunOutcome = {
  status: 'partial',
  reason: 'cancelled',
  results: { trials: [{ id: 1 }], direct_io: true },
  summaryText: 'partial run',
};

describe('engine protocol schemas', () => {
  it('is version 4 with the closed set of error codes', () => {
    expect(ENGINE_PROTOCOL_VERSION).toBe(5);
    expect(ENGINE_ERROR_CODES).toEqual([
      'VALIDATION',
      'NOT_FOUND',
      'TARGET_NOT_WRITABLE',
      'INSUFFICIENT_SPACE',
      'DIRECT_IO_UNSUPPORTED',
      'ENGINE_CRASHED',
      'CANCELLED',
      'DISK_FULL',
      'PROTOCOL',
      'INTERNAL',
    ]);
  });

  it('accepts every host → engine message', () => {
    for (const message of [
      { type: 'start', version: 1, options: { model: 'llama3.1-8b', users: 8 } },
      { type: 'cancel', reason: 'user pressed stop' },
    ]) {
      expect(HostToEngineMessageSchema.parse(message)).toEqual(message);
    }
  });

  it('accepts every engine → host message', () => {
    for (const message of [
      { type: 'hello', version: 1, pid: 1234 },
      { type: 'progress', progress },
      { type: 'log', level: 'warn', message: 'O_DIRECT refused, falling back to buffered I/O' },
      { type: 'heartbeat', uptimeNs: 3_000_000_000 },
      { type: 'result', outcome },
      { type: 'error', error: { code: 'DISK_FULL', message: 'ENOSPC' } },
    ]) {
      expect(EngineToHostMessageSchema.parse(message)).toEqual(message);
    }
  });

  it('rejects unknown message types and messages meant for the other side', () => {
    expect(EngineToHostMessageSchema.safeParse({ type: 'start', version: 1, options: {} }).success).toBe(false);
    expect(HostToEngineMessageSchema.safeParse({ type: 'hello', version: 1, pid: 1 }).success).toBe(false);
    expect(HostToEngineMessageSchema.safeParse({ type: 'cancel' }).success).toBe(false);
    expect(EngineToHostMessageSchema.safeParse(null).success).toBe(false);
    expect(EngineToHostMessageSchema.safeParse('result').success).toBe(false);
  });

  it('rejects bigint, NaN, infinities and negative counts in progress', () => {
    for (const bad of [
      { elapsedNs: 5n },
      { generatedTokensPerSec: Number.NaN },
      { storageReadBytesPerSec: Number.POSITIVE_INFINITY },
      { requestsCompleted: -1 },
      { activeUsers: 1.5 },
      { phase: 'warmup' },
      { e2eLatencyP95Ns: undefined },
    ]) {
      expect(ProgressEventSchema.safeParse({ ...progress, ...bad }).success, JSON.stringify(Object.keys(bad))).toBe(false);
    }
    expect(EngineToHostMessageSchema.safeParse({ type: 'heartbeat', uptimeNs: 10n }).success).toBe(false);
  });

  it("carries the engine's memory and the backlog's facts through (the app's live view reads them), and still takes an event without them", () => {
    const memory = { rssBytes: 5e8, heapUsedBytes: 2e7, externalBytes: 3e8, arrayBuffersBytes: 2.9e8, byteWorkersHeapUsedBytes: null };
    const backlog = {
      queueingBound: true,
      atClose: false,
      queueingFirstMet: { queuedRequests: 900, workers: 8 },
      traceOnly: false,
      capReached: false,
      capRequests: 500_000,
      queuedRequests: 1000,
      workers: 8,
      issueLatenessMaxNs: 0,
    };
    expect(ProgressEventSchema.parse({ ...progress, memory, backlog })).toEqual({ ...progress, memory, backlog });
    expect(ProgressEventSchema.parse({ ...progress, memory: null })).toEqual({ ...progress, memory: null });
    expect(ProgressEventSchema.parse(progress)).toEqual(progress);
    for (const bad of [{ memory: { ...memory, rssBytes: -1 } }, { memory: { ...memory, heapUsedBytes: Number.NaN } }, { backlog: { ...backlog, queueingBound: 'yes' } }, { backlog: { ...backlog, issueLatenessMaxNs: -5 } }, { backlog: { ...backlog, queueingFirstMet: { queuedRequests: -1, workers: 8 } } }]) {
      expect(ProgressEventSchema.safeParse({ ...progress, ...bad }).success, JSON.stringify(bad)).toBe(false);
    }
    // Protocol 5: the workers' busy time and the generation pace, which a protocol-4 backlog (above) lacks.
    const workersBusy = { requests: 163, totalNs: 669e9, cacheIoNs: 26e9, cacheIoByTierNs: { gpu: 26e9, cpu: 0, storage: 0 }, generationNs: 643e9 };
    const generation = { mode: 'realistic', nsPerToken: 30e6 };
    const busy = { ...backlog, workersBusy, generation };
    expect(ProgressEventSchema.parse({ ...progress, backlog: busy })).toEqual({ ...progress, backlog: busy });
    expect(ProgressEventSchema.parse({ ...progress, backlog: { ...backlog, workersBusy: null, generation: null } }).backlog).toMatchObject({ workersBusy: null, generation: null });
    for (const bad of [{ ...busy, workersBusy: { ...workersBusy, requests: 1.5 } }, { ...busy, workersBusy: { ...workersBusy, cacheIoByTierNs: { gpu: -1, cpu: 0, storage: 0 } } }, { ...busy, generation: { mode: 'realistic' } }]) {
      expect(ProgressEventSchema.safeParse({ ...progress, backlog: bad }).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('rejects error codes outside the closed set and malformed outcomes', () => {
    expect(EngineToHostMessageSchema.safeParse({ type: 'error', error: { code: 'EIO', message: 'x' } }).success).toBe(false);
    expect(RunOutcomeSchema.safeParse({ ...outcome, status: 'done' }).success).toBe(false);
    expect(RunOutcomeSchema.safeParse({ ...outcome, results: [1, 2] }).success).toBe(false);
    expect(RunOutcomeSchema.safeParse({ ...outcome, reason: undefined }).success).toBe(false);
  });
});

describe('toEngineErrorData', () => {
  it('keeps a code from the closed set', () => {
    const err = Object.assign(new Error('no room'), { code: 'INSUFFICIENT_SPACE' });
    expect(toEngineErrorData(err)).toEqual({ code: 'INSUFFICIENT_SPACE', message: 'no room' });
  });

  it('maps any other code, and non-errors, to INTERNAL', () => {
    expect(toEngineErrorData(Object.assign(new Error('boom'), { code: 'ENOENT' }))).toEqual({ code: 'INTERNAL', message: 'boom' });
    expect(toEngineErrorData('just a string')).toEqual({ code: 'INTERNAL', message: 'just a string' });
    expect(toEngineErrorData(undefined)).toEqual({ code: 'INTERNAL', message: 'undefined' });
  });

  it('isErrorCode recognises exactly the closed set the protocol carries', () => {
    expect(ENGINE_ERROR_CODES.every(isErrorCode)).toBe(true);
    expect(isErrorCode('DB_MIGRATION_FAILED')).toBe(false);
    expect(isErrorCode(3)).toBe(false);
  });
});
