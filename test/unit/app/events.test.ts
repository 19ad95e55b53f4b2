// The events' one schema: what the page accepts from the WebSocket (isAppEvent) and what the suite
// status's snapshot carries. A whole event of ours passes unchanged; anything else is refused.
import { describe, expect, it } from 'vitest';
import { AppEventSchema, CONTRACT } from '../../../src-shared/ipc/contract.ts';
import { APP_EVENT_TYPES, isAppEvent, type AppEvent } from '../../../src-shared/ipc/events.ts';

const ref = { suiteId: 3, trialId: 11, scenarioId: 'cpu-only', label: 'CPU only', trialIndex: 0, trialsPerScenario: 3, ordinal: 1, total: 9 };
const progress = {
  phase: 'running' as const,
  elapsedNs: 1.5e9,
  durationNs: 6e10,
  requestsCompleted: 42,
  maxRequests: null,
  activeUsers: 8,
  queueDepth: 2,
  generatedTokens: 0,
  storageReadBytes: 0,
  storageWriteBytes: 0,
  generatedTokensPerSec: 1234.5,
  storageReadBytesPerSec: 1e9,
  storageWriteBytesPerSec: 1e8,
  cpuReadBytesPerSec: 0,
  cpuWriteBytesPerSec: 0,
  e2eLatencyP95Ns: 2e7,
  storageReadP95Ns: null,
  eventLoopLagP99Ns: null,
};
const settings = { databasePath: '/tmp/kvbench.db', defaultCacheDir: '', byteUnits: 'decimal' as const, latencyUnit: 'ms' as const };

const VALID: AppEvent[] = [
  { type: 'suite.started', suiteId: 3, resumed: false, total: 9, estimatedSeconds: 120 },
  { type: 'suite.trialStarted', enginePid: 4242, startedAtMs: 1_700_000_000_000, ...ref },
  { type: 'suite.trialStarted', enginePid: null, ...ref },
  { type: 'suite.trialProgressed', progress, ...ref },
  { type: 'suite.trialLogged', level: 'warn', message: 'trial timed out', ...ref },
  { type: 'suite.trialFinished', status: 'complete', reason: null, wallMs: 5500.25, wallClockThroughputTokPerS: 300, storageReadBytesPerS: 1e9, ...ref },
  { type: 'suite.finished', suiteId: 3, status: 'cancelled', outcome: 'cancelled', counts: { complete: 1, partial: 0, failed: 0, aborted: 1 }, wallMs: 9000 },
  { type: 'suite.preparationProgressed', step: 'probing', message: 'Probing the drive …' },
  { type: 'suite.failed', suiteId: null, error: { code: 'TARGET_NOT_WRITABLE', message: 'cannot write /x' } },
  { type: 'history.changed', reason: '2 file(s) imported' },
  { type: 'database.upgradeProgressed', databasePath: '/tmp/old.db', message: "database /tmp/old.db: upgrading 3000 imported trials' records (once; this database was made by an older kvbench) …" },
  { type: 'database.recoveryProgressed', databasePath: '/tmp/damaged.db', outPath: '/tmp/new.db', message: 'copying trials: 4,000 rows of about 10,000', ended: false },
  { type: 'settings.changed', settings },
];

const INVALID: [string, unknown][] = [
  ['not an object', 'history.changed'],
  ['null', null],
  ['a type that is not ours', { type: 'run.progressed', reason: 'x' }],
  ['a field missing', { type: 'history.changed' }],
  ['no trial reference', { type: 'suite.trialLogged', level: 'info', message: 'x' }],
  ['a status outside the set', { type: 'suite.trialFinished', status: 'done', reason: null, wallMs: 1, wallClockThroughputTokPerS: null, storageReadBytesPerS: null, ...ref }],
  ['a log level outside the set', { type: 'suite.trialLogged', level: 'fatal', message: 'x', ...ref }],
  ['an error code outside the closed set', { type: 'suite.failed', suiteId: 3, error: { code: 'ENOENT', message: 'x' } }],
  ['a negative count in the progress', { type: 'suite.trialProgressed', progress: { ...progress, requestsCompleted: -1 }, ...ref }],
  ['a NaN that JSON made null', { type: 'suite.started', suiteId: 3, resumed: false, total: 9, estimatedSeconds: null }],
  ['a count missing a status', { type: 'suite.finished', suiteId: 3, status: 'finished', outcome: 'finished', counts: { complete: 1 }, wallMs: 1 }],
  ['settings with a key the contract does not have', { type: 'settings.changed', settings: { ...settings, theme: 'dark' } }],
];

describe('app events', () => {
  it('the examples cover every event type', () => {
    expect([...new Set(VALID.map((e) => e.type))].sort()).toEqual([...APP_EVENT_TYPES].sort());
  });

  it('a valid event crosses JSON and the schema unchanged', () => {
    for (const e of VALID) {
      const wire: unknown = JSON.parse(JSON.stringify(e));
      expect(isAppEvent(wire), e.type).toBe(true);
      expect(AppEventSchema.parse(wire), e.type).toEqual(e);
    }
  });

  it('refuses what is not a whole event of ours', () => {
    for (const [why, value] of INVALID) expect(isAppEvent(value), why).toBe(false);
  });

  it('the suite status carries its events by the same schema', () => {
    const status = { state: 'running', suiteId: 3, request: null, plan: null, startedAt: new Date(0).toISOString() };
    const ok = CONTRACT['suite.status'].response.safeParse({ ...status, events: VALID });
    expect(ok.success).toBe(true);
    expect(ok.data?.events).toEqual(VALID);
    for (const [why, value] of INVALID) expect(CONTRACT['suite.status'].response.safeParse({ ...status, events: [...VALID, value] }).success, why).toBe(false);
  });
});
