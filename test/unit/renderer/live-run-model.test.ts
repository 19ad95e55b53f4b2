// The live run's pure rules, without Pinia or a page: the rows of a plan, the time left, the chart's
// one time axis across phases, the phase of a suite that ended unseen, and how a status snapshot
// and the events that arrived meanwhile overlap.
import { describe, expect, it } from 'vitest';
import {
  appendPoint,
  cpuMovedAfter,
  emptySeries,
  endedPhase,
  endedTrialCard,
  liveAverages,
  liveSpill,
  MAX_POINTS,
  measuresQueueing,
  overlap,
  phaseFraction,
  queuedRow,
  queueingNotice,
  queueingRowTitle,
  queueingVerdictAtClose,
  rowsFromPlan,
  spillNotice,
  timeLeft,
  type SeriesClock,
  type TrialRow,
} from '../../../src-renderer/live-run-model.ts';
import type { ProgressEvent } from '../../../src-shared/engine-protocol.ts';
import type { AppEvent } from '../../../src-shared/ipc/events.ts';
import { plan } from './fixtures.ts';

const progress = (phase: ProgressEvent['phase'], elapsedS: number, tokPerS = 1): ProgressEvent => ({
  phase,
  elapsedNs: elapsedS * 1e9,
  durationNs: 6e9,
  requestsCompleted: 1,
  maxRequests: null,
  activeUsers: 4,
  queueDepth: 2,
  generatedTokens: 0,
  storageReadBytes: 0,
  storageWriteBytes: 0,
  generatedTokensPerSec: tokPerS,
  storageReadBytesPerSec: 1e9,
  storageWriteBytesPerSec: 2e8,
  cpuReadBytesPerSec: 0,
  cpuWriteBytesPerSec: 0,
  e2eLatencyP95Ns: 2.5e7,
  storageReadP95Ns: null,
  eventLoopLagP99Ns: null,
});

describe('rows of a plan', () => {
  it('makes one queued row per planned trial, in plan order, with the plan\'s estimate', () => {
    const rows = rowsFromPlan(plan());
    expect(rows.map((r) => r.key)).toEqual(['cpu-only#0', 'cpu-only#1', 'storage-only#0', 'storage-only#1']);
    expect(rows[3]).toEqual({
      key: 'storage-only#1', scenarioId: 'storage-only', label: 'Storage only', trialIndex: 1, trialsPerScenario: 2,
      status: 'queued', trialId: null, wallMs: null, tokPerS: null, readBytesPerS: null, reason: null, estimatedS: 5.5, maxRequests: 0, spilled: false, queueing: false, queueingAtClose: null,
    });
  });
});

/** The seconds timeLeft gives, as the plan's duration-bound trials have them (no request limit, no progress). */
const etaSeconds = (rows: TrialRow[], key: string | null, elapsedS: number, unseenS = 0): number | null => {
  const t = timeLeft(rows, { key, elapsedS }, { seconds: unseenS, requestLimited: false });
  if (t !== null) expect(t.upToCap).toBe(false);
  return t?.seconds ?? null;
};

describe('time left', () => {
  it('has no figure without rows or unseen trials, and counts the unseen ones\' estimate', () => {
    expect(etaSeconds([], null, 0)).toBeNull();
    expect(etaSeconds([], null, 0, 11)).toBe(11);
  });

  it('estimates the time left from the plan, corrected by how long finished trials took', () => {
    const rows = rowsFromPlan(plan());
    expect(etaSeconds(rows, null, 0)).toBe(22);
    rows[0].status = 'complete';
    rows[0].wallMs = 11_000; // twice the estimate
    rows[1].status = 'running';
    expect(etaSeconds(rows, rows[1].key, 1.5)).toBeCloseTo(2 * (4 + 5.5 + 5.5));
  });

  it('corrects the time left only by trials that ran to their end, not by one that crashed early', () => {
    const rows = rowsFromPlan(plan());
    rows[0].status = 'failed';
    rows[0].wallMs = 1_000; // a crash after 1 s of a 5.5 s trial
    rows[1].status = 'aborted';
    rows[1].wallMs = 500;
    rows[2].status = 'running';
    expect(etaSeconds(rows, rows[2].key, 1.5)).toBeCloseTo(4 + 5.5); // the plan's own estimate, not halved
    rows[2].status = 'partial';
    rows[2].wallMs = 2_000; // stopped at its wall-clock limit: not a full trial either
    expect(etaSeconds(rows, null, 0)).toBeCloseTo(5.5);
    rows[3].status = 'complete';
    rows[3].wallMs = 11_000; // twice its estimate: that one does say something
    rows.push({ ...rows[3], key: 'extra', status: 'queued', wallMs: null });
    expect(etaSeconds(rows, null, 0)).toBeCloseTo(2 * 5.5);
  });
});

describe('time left with trials that end after N requests', () => {
  /** A plan of two scenarios × 2 trials ending after 100 requests or at a 60 s cap (63.5 s with start-up). */
  const limitedPlan = (): ReturnType<typeof plan> => {
    const p = plan();
    for (const r of p.runs) {
      r.options = { ...r.options, duration: 60, maxRequests: 100 };
      r.estimatedSecondsPerTrial = 63.5;
    }
    return p;
  };
  const inWindow = (elapsedS: number, requestsCompleted: number): ProgressEvent => ({ ...progress('running', elapsedS), durationNs: 60e9, maxRequests: 100, requestsCompleted });

  it('takes the limit from the plan', () => {
    expect(rowsFromPlan(limitedPlan()).map((r) => r.maxRequests)).toEqual([100, 100, 100, 100]);
    expect(rowsFromPlan(plan()).map((r) => r.maxRequests)).toEqual([0, 0, 0, 0]);
  });

  it('counts the running trial from its requests\' pace in the window, at most what its cap leaves', () => {
    const rows = rowsFromPlan(limitedPlan());
    rows[0].status = 'running';
    // 40 of 100 requests in the window's first 2 s (4 s since the trial started): 3 s more at that rate.
    const t = timeLeft(rows, { key: rows[0].key, elapsedS: 4, progress: inWindow(2, 40) });
    // The queued trials have shown no pace: each counts at its cap, and the figure says so.
    expect(t).toEqual({ seconds: 3 + 3 * 63.5, upToCap: true });
    // A slow one: 1 request in 50 s would need 4,950 s more; its cap ends it in 10.
    expect(timeLeft(rows, { key: rows[0].key, elapsedS: 52, progress: inWindow(50, 1) })?.seconds).toBeCloseTo(10 + 3 * 63.5);
    // Before its first request (or in the warm-up) there is no pace: its cap, less what it has run.
    expect(timeLeft(rows, { key: rows[0].key, elapsedS: 4, progress: inWindow(2, 0) })?.seconds).toBeCloseTo(59.5 + 3 * 63.5);
    expect(timeLeft(rows, { key: rows[0].key, elapsedS: 1, progress: { ...inWindow(1, 5), phase: 'warming-up' } })?.seconds).toBeCloseTo(62.5 + 3 * 63.5);
    // Draining: its window is over.
    expect(timeLeft(rows, { key: rows[0].key, elapsedS: 9, progress: { ...inWindow(5, 100), phase: 'draining' } })?.seconds).toBeCloseTo(3 * 63.5);
  });

  it('counts a queued trial as long as the complete trials of its scenario took, and only then is the figure an estimate', () => {
    const rows = rowsFromPlan(limitedPlan());
    rows[0].status = 'complete';
    rows[0].wallMs = 8_000; // 100 requests and the engine's start and end: 8 s, not the 63.5 s cap
    rows[1].status = 'running';
    const t = timeLeft(rows, { key: rows[1].key, elapsedS: 3, progress: inWindow(1, 50) });
    // The running one: 50 more at 50/s, 1 s. Storage only's two have no pace yet: at their cap.
    expect(t).toEqual({ seconds: 1 + 2 * 63.5, upToCap: true });
    rows[1].status = 'complete';
    rows[1].wallMs = 10_000;
    rows[2].status = 'complete';
    rows[2].wallMs = 20_000;
    // The last one: as its scenario's complete trial took; an estimate now. A short request-limited
    // trial does not shrink the estimates of others (no 0.5 factor from 8 s against 63.5).
    expect(timeLeft(rows, { key: null, elapsedS: 0 })).toEqual({ seconds: 20, upToCap: false });
    rows[3].status = 'running';
    expect(timeLeft(rows, { key: rows[3].key, elapsedS: 5, progress: { ...inWindow(1, 0), phase: 'warming-up' } })).toEqual({ seconds: 15, upToCap: false });
  });

  it('a trial counted at its cap is stretched by how far finished trials overran their plan: "≤" is never below what a capped trial was seen to take', () => {
    const slot = (scenarioId: string, i: number) => ({ scenarioId, label: scenarioId, trialIndex: i, trialsPerScenario: 1 });
    // Scenario A's one trial ran to its 60 s cap and, with start-up on a loaded machine, took 90 s against the plan's 63.5 s.
    const a: TrialRow = { ...queuedRow(slot('a', 0), 63.5, 100), status: 'complete', wallMs: 90_000 };
    const b = queuedRow(slot('b', 0), 63.5, 100);
    const t = timeLeft([a, b], { key: null, elapsedS: 0, progress: null })!;
    expect(t.upToCap).toBe(true);
    expect(t.seconds).toBeCloseTo(90);
    // The same overrun seen in a trial without a request limit stretches them too; a short request-limited trial shrinks none.
    const c: TrialRow = { ...queuedRow(slot('c', 0), 30, 0), status: 'complete', wallMs: 45_000 };
    const quick: TrialRow = { ...queuedRow(slot('d', 0), 63.5, 100), status: 'complete', wallMs: 5_000 };
    expect(timeLeft([c, quick, b], { key: null, elapsedS: 0 })?.seconds).toBeCloseTo(63.5 * 1.5);
    // Unseen request-limited trials likewise.
    expect(timeLeft([a], { key: null, elapsedS: 0 }, { seconds: 127, requestLimited: true })?.seconds).toBeCloseTo((127 * 90) / 63.5);
  });

  it('unseen trials of a resumed request-limited suite count at their cap, and say so', () => {
    expect(timeLeft([], { key: null, elapsedS: 0 }, { seconds: 127, requestLimited: true })).toEqual({ seconds: 127, upToCap: true });
  });

  it('the trial bar is the share of its duration or of its requests, whichever is further', () => {
    expect(phaseFraction(null)).toBe(0);
    expect(phaseFraction(inWindow(3, 90))).toBeCloseTo(0.9); // 3 s of 60 would read 5 %
    expect(phaseFraction(inWindow(30, 10))).toBeCloseTo(0.5);
    expect(phaseFraction({ ...inWindow(3, 250), durationNs: null })).toBe(1);
  });
});

describe('the live chart\'s time axis', () => {
  it('carries the measured window on from where the warm-up ended; draining keeps the window\'s clock', () => {
    const s = emptySeries();
    const clock: SeriesClock = { phase: '', offsetS: 0 };
    const added = [
      appendPoint(s, clock, progress('warming-up', 1)),
      appendPoint(s, clock, progress('warming-up', 2)),
      appendPoint(s, clock, progress('running', 0.5)),
      appendPoint(s, clock, progress('running', 1.5)),
      appendPoint(s, clock, progress('draining', 1.7)),
      appendPoint(s, clock, progress('draining', 1.6)), // early: dropped, not a new clock
      appendPoint(s, clock, progress('finishing', 1.65)), // not a measurement
    ];
    expect(added).toEqual([true, true, true, true, true, false, false]);
    expect(s.t).toEqual([1, 2, 2.5, 3.5, 3.7]);
    expect(clock).toEqual({ phase: 'draining', offsetS: 2 });
  });

  it('records every series of a point, latency in ms, a missing percentile as null', () => {
    const s = emptySeries();
    appendPoint(s, { phase: '', offsetS: 0 }, progress('running', 1, 300));
    expect(s).toEqual({
      t: [1],
      tokPerS: [300],
      e2eP95Ms: [25],
      storageReadP95Ms: [null],
      users: [4],
      queue: [2],
      readBytesPerS: [1e9],
      writeBytesPerS: [2e8],
      rssBytes: [null],
      heapUsedBytes: [null],
      arrayBuffersBytes: [null],
    });
  });

  it("records the engine's memory in bytes, and null where an event has no sample yet (or an engine sends none)", () => {
    const s = emptySeries();
    const clock: SeriesClock = { phase: '', offsetS: 0 };
    appendPoint(s, clock, { ...progress('running', 0.5), memory: null });
    appendPoint(s, clock, { ...progress('running', 1), memory: { rssBytes: 5e8, heapUsedBytes: 2e7, externalBytes: 3e8, arrayBuffersBytes: 2.9e8, byteWorkersHeapUsedBytes: null } });
    appendPoint(s, clock, progress('running', 1.5));
    expect([s.rssBytes, s.heapUsedBytes, s.arrayBuffersBytes]).toEqual([
      [null, 5e8, null],
      [null, 2e7, null],
      [null, 2.9e8, null],
    ]);
  });

  it('starts a fresh series on its own clock, whatever the last one was', () => {
    const clock: SeriesClock = { phase: 'running', offsetS: 40 };
    const s = emptySeries();
    appendPoint(s, clock, progress('running', 0.5));
    expect(s.t).toEqual([0.5]);
  });

  it('keeps only the newest points, the same in every series', () => {
    const s = emptySeries();
    const clock: SeriesClock = { phase: '', offsetS: 0 };
    for (let i = 1; i <= MAX_POINTS + 5; i++) appendPoint(s, clock, progress('running', i, i));
    for (const k of Object.keys(s) as (keyof typeof s)[]) expect(s[k]).toHaveLength(MAX_POINTS);
    expect(s.t[0]).toBe(6);
    expect(s.tokPerS[0]).toBe(6);
    expect(s.t.at(-1)).toBe(MAX_POINTS + 5);
  });
});

describe('a suite that ended unseen', () => {
  it('is finished only when stored as finished; a cancel stays a cancel, anything else was interrupted', () => {
    expect(endedPhase('finished')).toBe('finished');
    expect(endedPhase('cancelled')).toBe('cancelled');
    expect(endedPhase('interrupted')).toBe('interrupted');
    expect(endedPhase('running')).toBe('interrupted');
  });
});

describe("the last trial's card once the suite ended", () => {
  const row = (over: Partial<TrialRow>): TrialRow => ({ ...queuedRow({ scenarioId: 'storage-only', label: 'Storage only', trialIndex: 1, trialsPerScenario: 2 }, 5), trialId: 12, ...over });

  it('is a success only for a complete trial of a suite that finished cleanly, its tiles the stored figures once the engine said them', () => {
    expect(endedTrialCard('finished', false, row({ status: 'complete' }), true)).toEqual({
      headline: 'Suite finished — last trial: Storage only (trial 2 of 2), stored as trial 12',
      resultsStored: true,
      tilesStored: true,
      tone: 'ok',
    });
    // Its results are stored, but this page missed the engine's last word (it attached late): its tiles are only what it saw.
    expect(endedTrialCard('finished', false, row({ status: 'complete' }), false)).toMatchObject({ resultsStored: true, tilesStored: false, tone: 'ok' });
    expect(endedTrialCard('finished', false, row({ status: 'partial' }), true)).toMatchObject({ headline: expect.stringMatching(/, stored as trial 12 \(partial\)$/), tone: 'warn' });
    // No card while the suite runs, or before it existed.
    for (const phase of ['running', 'preparing', 'idle', 'not-started'] as const) expect(endedTrialCard(phase, false, row({ status: 'complete' }), true)).toBeNull();
  });

  it('is no success for a complete trial stored flagged queueing-bound, but is for one that only queued for a while', () => {
    expect(endedTrialCard('finished', false, row({ status: 'complete', queueing: true, queueingAtClose: false }), true)).toMatchObject({ tone: 'ok' });
    // The close's verdict unseen (this page missed the 'finishing' event): what was seen live decides.
    expect(endedTrialCard('finished', false, row({ status: 'complete', queueing: true }), true)).toMatchObject({ tone: 'warn' });
    expect(endedTrialCard('finished', false, row({ status: 'complete', queueing: true, queueingAtClose: true }), true)).toEqual({
      headline: 'Suite finished — last trial: Storage only (trial 2 of 2), stored as trial 12',
      resultsStored: true,
      tilesStored: true,
      tone: 'warn',
    });
  });

  it('says a cancel, a killed engine, an interrupted runner and a failed suite for what they are', () => {
    expect(endedTrialCard('cancelled', false, row({ status: 'aborted' }), true)).toEqual({
      headline: 'Suite cancelled — last trial: Storage only (trial 2 of 2), stopped, its partial results stored as trial 12 (aborted)',
      resultsStored: true,
      tilesStored: true,
      tone: 'warn',
    });
    // Stopped before the engine closed a window (or killed when it did not stop): nothing kept.
    expect(endedTrialCard('cancelled', false, row({ status: 'aborted' }), false)).toEqual({
      headline: 'Suite cancelled — last trial: Storage only (trial 2 of 2), stopped: nothing of it stored (trial 12)',
      resultsStored: false,
      tilesStored: false,
      tone: 'error',
    });
    // An aborted trial read back from the database with a throughput kept its results, whatever this page saw.
    expect(endedTrialCard('interrupted', false, row({ status: 'aborted', tokPerS: 90 }), false)).toMatchObject({ resultsStored: true, tilesStored: false });
    expect(endedTrialCard('interrupted', false, row({ status: 'aborted' }), false)?.headline).toBe(
      'Suite interrupted — last trial: Storage only (trial 2 of 2), stopped: nothing of it stored (trial 12)',
    );
    // A killed engine: its last 'running' numbers were never stored, whatever came before.
    expect(endedTrialCard('finished', true, row({ status: 'failed' }), false)).toEqual({
      headline: 'Suite failed — last trial: Storage only (trial 2 of 2), failed: nothing of it stored (trial 12)',
      resultsStored: false,
      tilesStored: false,
      tone: 'error',
    });
    // Cancelled between trials: the last one is complete and stored, but the suite did not finish.
    expect(endedTrialCard('cancelled', false, row({ status: 'complete' }), true)).toMatchObject({ headline: expect.stringMatching(/^Suite cancelled — .*, stored as trial 12$/), tone: 'warn' });
    expect(endedTrialCard('failed', false, row({ status: 'running' }), false)?.headline).toBe(
      'Suite stopped on an error — last trial: Storage only (trial 2 of 2), did not finish: nothing of it stored (trial 12)',
    );
  });
});

describe('a status snapshot and the events that arrived while it was fetched', () => {
  const started: AppEvent = { type: 'suite.started', suiteId: 7, resumed: false, total: 4, estimatedSeconds: 22 };
  const prep: AppEvent = { type: 'suite.preparationProgressed', step: 'probing', message: 'Probing …' };
  const failed = (message: string): AppEvent => ({ type: 'suite.failed', suiteId: 7, error: { code: 'INTERNAL', message } });

  it('overlap by the longest start of the arrivals that ends the snapshot', () => {
    expect(overlap([prep, started, failed('a')], [started, failed('a'), failed('b')])).toBe(2);
    expect(overlap([prep, started], [prep, started])).toBe(2);
  });

  it('do not overlap when the arrivals came after the snapshot, or either is empty', () => {
    expect(overlap([prep, started], [failed('a')])).toBe(0);
    expect(overlap([], [started])).toBe(0);
    expect(overlap([started], [])).toBe(0);
    // The arrivals' start matches inside the snapshot, not at its end: nothing of them is held.
    expect(overlap([prep, started, failed('a')], [prep, started])).toBe(0);
  });
});

describe('the live tiles\' run-averages', () => {
  it('storage read and write are the cumulative bytes ÷ the clock so far, as the trial stores them, not the last second\'s rate', () => {
    // 6 GB read and 1 GB written in the first 4 s of the window, while the last second read 1 GB/s and wrote 0.2 GB/s.
    const p = { ...progress('running', 4), generatedTokens: 1000, storageReadBytes: 6e9, storageWriteBytes: 1e9 };
    expect(liveAverages(p)).toEqual({ tokensPerSec: 250, storageReadBytesPerSec: 1.5e9, storageWriteBytesPerSec: 2.5e8 });
    // In a warm-up the counts and the clock are the warm-up's: the same rule.
    expect(liveAverages({ ...progress('warming-up', 2), storageReadBytes: 3e8, storageWriteBytes: 0 })).toEqual({ tokensPerSec: 0, storageReadBytesPerSec: 1.5e8, storageWriteBytesPerSec: 0 });
  });

  it('has no average before any time has passed, nor without an event', () => {
    const none = { tokensPerSec: null, storageReadBytesPerSec: null, storageWriteBytesPerSec: null };
    expect(liveAverages({ ...progress('running', 0), storageReadBytes: 5 })).toEqual(none);
    expect(liveAverages(null)).toEqual(none);
  });
});

describe('a trial spilling past the tiers its scenario names', () => {
  const at = (phase: ProgressEvent['phase'], over: Partial<ProgressEvent> = {}): ProgressEvent => ({ ...progress(phase, 2), cpuReadBytesPerSec: 0, cpuWriteBytesPerSec: 0, ...over });
  const gib = (b: number): string => `${b / 2 ** 30} GiB`;

  it('is the storage tier\'s bytes on the clock for CPU only and GPU + CPU; never for a scenario that names the drive', () => {
    expect(liveSpill('cpu-only', at('running'), false)).toBeNull();
    expect(liveSpill('cpu-only', at('starting', { storageWriteBytes: 5 }), false)).toBeNull(); // no measuring clock yet
    expect(liveSpill('cpu-only', at('running', { storageWriteBytes: 5 }), false)).toEqual({ tiers: ['storage'], storageWriteBytes: 5, storageReadBytes: 0, warmUp: false, final: false });
    expect(liveSpill('gpu-cpu', at('warming-up', { storageReadBytes: 7 }), false)?.warmUp).toBe(true);
    expect(liveSpill('cpu-only', at('finishing', { storageReadBytes: 7 }), false)?.final).toBe(true);
    for (const id of ['storage-only', 'cpu-storage', 'production', 'not-a-scenario']) expect(liveSpill(id, at('running', { storageWriteBytes: 5 }), true)).toBeNull();
  });

  it('knows GPU only spilling to the CPU tier from any interval that moved CPU bytes, counted again from the window\'s open', () => {
    let moved = cpuMovedAfter(false, null, at('warming-up', { cpuWriteBytesPerSec: 1e9 }));
    expect(moved).toBe(true);
    expect(liveSpill('gpu-only', at('warming-up'), moved)).toMatchObject({ tiers: ['cpu'], warmUp: true });
    moved = cpuMovedAfter(moved, 'warming-up', at('running')); // the window opened: its own count
    expect(moved).toBe(false);
    moved = cpuMovedAfter(moved, 'running', at('running', { cpuReadBytesPerSec: 3 }));
    moved = cpuMovedAfter(moved, 'running', at('running')); // a quiet interval later: it moved in the window all the same
    expect(moved).toBe(true);
    expect(cpuMovedAfter(moved, 'running', at('draining'))).toBe(true);
    expect(liveSpill('gpu-only', at('running', { storageWriteBytes: 9 }), moved)?.tiers).toEqual(['cpu', 'storage']);
    expect(liveSpill('cpu-only', at('running'), true)).toBeNull(); // the CPU tier is CPU only's own
  });

  it('says where it goes, how much, and what the stored trial will be', () => {
    const running = spillNotice('cpu-only', { tiers: ['storage'], storageWriteBytes: 2 ** 30, storageReadBytes: 2 ** 29, warmUp: false, final: false }, 2 * 2 ** 30, gib);
    expect(running.headline).toBe('Spilling to the drive: “CPU only” is measuring the drive too');
    expect(running.detail).toBe(
      'Its CPU tier (2 GiB) is full, so the cache moves entries down to the drive: 1 GiB written to the drive and 0.5 GiB read back so far in the measured window. ' +
        "This trial's throughput and latencies include the drive, not only the CPU tier; it will be stored flagged “spilled” (the report marks it, and can leave flagged trials out).",
    );
    const stored = spillNotice('gpu-cpu', { tiers: ['storage'], storageWriteBytes: 2 ** 30, storageReadBytes: 0, warmUp: false, final: true }, null, gib);
    expect(stored.headline).toBe('Spilled to the drive: “GPU + CPU” measured the drive too');
    expect(stored.detail).toContain('Its GPU and CPU tiers are full, so the cache moves entries down to the drive: 1 GiB written to the drive and 0 GiB read back in its measured window.');
    expect(stored.detail).toContain('it is stored flagged “spilled”');
    const gpu = spillNotice('gpu-only', { tiers: ['cpu'], storageWriteBytes: 0, storageReadBytes: 0, warmUp: false, final: false }, 4 * 2 ** 30, gib);
    expect(gpu.headline).toBe('Spilling to the CPU tier: “GPU only” is measuring the CPU tier too');
    expect(gpu.detail).toMatch(/^Its GPU tier \(4 GiB\) is full, so the cache moves entries down to the CPU tier\. /);
  });
});

describe('a trial that measures its request queue, not the storage', () => {
  const backlog = (over: Partial<NonNullable<ProgressEvent['backlog']>>, phase: ProgressEvent['phase'] = 'running'): ProgressEvent => ({
    ...progress(phase, 3),
    backlog: {
      queueingBound: false,
      atClose: false,
      queueingFirstMet: null,
      traceOnly: false,
      capReached: false,
      capRequests: 500_000,
      queuedRequests: 1000,
      workers: 8,
      issueLatenessMaxNs: 0,
      ...over,
    },
  });
  const span = (ns: number): string => `${ns / 1e6} ms`;
  /** The workers' busy time over `requests` completed requests, each spending these ms. */
  const busyOf = (requests: number, ms: { gpu?: number; storage?: number; generation: number }): NonNullable<NonNullable<ProgressEvent['backlog']>['workersBusy']> => {
    const gpu = (ms.gpu ?? 0) * 1e6 * requests;
    const storage = (ms.storage ?? 0) * 1e6 * requests;
    const generationNs = ms.generation * 1e6 * requests;
    return { requests, totalNs: gpu + storage + generationNs, cacheIoNs: gpu + storage, cacheIoByTierNs: { gpu, cpu: 0, storage }, generationNs };
  };
  const realistic = { mode: 'realistic', nsPerToken: 30e6 };

  it('is said only once the engine says so: not before, nor from an engine that sends no backlog facts', () => {
    for (const p of [null, progress('running', 3), backlog({})]) {
      expect(measuresQueueing(p)).toBe(false);
      expect(queueingNotice(p, span)).toBeNull();
      expect(queueingVerdictAtClose(p)).toBeNull();
    }
  });

  it("says the queue outgrows the workers now: the latencies are the queue's, the storage's own numbers still the drive's, the stored verdict the close's", () => {
    const p = backlog({ queueingBound: true, queueingFirstMet: { queuedRequests: 80, workers: 8 }, workersBusy: busyOf(60, { storage: 850, generation: 150 }), generation: realistic });
    expect(measuresQueueing(p)).toBe(true);
    expect(queueingNotice(p, span)).toEqual({
      headline: 'Queueing-bound: this trial measures its request queue, not the storage',
      detail:
        'The configuration offers more load than the storage serves: its request queue has grown to 1,000 requests for 8 workers. ' +
        'The workers spent 85 % of the busy time of the 60 requests completed so far in cache I/O (100 % of it in the storage tier) and 15 % in simulated generation (realistic, 30 ms/token). ' +
        'Its end-to-end latency and queue wait measure how long the queue has grown, not the drive. ' +
        "Its storage bandwidth and per-operation storage latencies still describe the drive at full load. The stored trial's verdict is judged at the window's close.",
    });
  });

  it('names the simulated generation, not the storage or the drive, when the workers spent most of their time in it (the H200 GPU-tier run)', () => {
    const p = backlog({ queueingBound: true, queueingFirstMet: { queuedRequests: 320, workers: 32 }, queuedRequests: 1581, workers: 32, workersBusy: busyOf(101, { gpu: 159, generation: 3944 }), generation: realistic });
    expect(queueingNotice(p, span)).toEqual({
      headline: 'Queueing-bound: this trial measures its request queue, not the storage',
      detail:
        'The generation time and the user count offer more load than the workers serve: its request queue has grown to 1,581 requests for 32 workers. ' +
        'The workers spent 96 % of the busy time of the 101 requests completed so far in simulated generation (realistic, 30 ms/token) and 4 % in cache I/O (100 % of it in the GPU tier). ' +
        'Its end-to-end latency and queue wait measure how long the queue has grown, not the cache or the drive. ' +
        'Its storage bandwidth and per-operation storage latencies still describe the drive at full load. Fewer users, a longer think time or a faster generation mode keep the queue short. ' +
        "The stored trial's verdict is judged at the window's close.",
    });
    // At the close, the window's split, in the past tense.
    const closed = backlog(
      { atClose: true, queueingBound: true, queueingFirstMet: { queuedRequests: 320, workers: 32 }, queuedRequests: 2842, workers: 32, workersBusy: busyOf(163, { gpu: 159, generation: 3944 }), generation: realistic },
      'finishing',
    );
    const n = queueingNotice(closed, span)!;
    expect(n.detail).toMatch(
      /^The generation time and the user count offered more load than the workers served: its request queue still held 2,842 requests for 32 workers at the window's close\. The workers spent 96 % of the busy time of the 163 requests completed in the measured window in simulated generation/,
    );
    expect(n.detail).not.toContain('storage serve');
    expect(n.detail).not.toContain('not the drive.');
  });

  it("blames nothing it has not measured: an engine before protocol 5 sends no busy time, and none completed yet", () => {
    const older = queueingNotice(backlog({ queueingBound: true }), span)!;
    expect(older.detail).toMatch(/^The configuration offers more load than the workers serve: its request queue has grown to 1,000 requests for 8 workers\. This engine does not say what held them\. /);
    expect(older.detail).not.toContain('storage serves');
    const none = queueingNotice(backlog({ queueingBound: true, workersBusy: busyOf(0, { generation: 0 }), generation: realistic }), span)!;
    expect(none.detail).toContain('No request has completed yet, so what held them is not measured.');
  });

  it('says a queue that met the rule and drained in the past tense, with the depth it grew to, not the depth now', () => {
    const p = backlog({ queueingFirstMet: { queuedRequests: 45, workers: 4 }, queuedRequests: 3, workers: 4 });
    expect(measuresQueueing(p)).toBe(true);
    const n = queueingNotice(p, span)!;
    expect(n.headline).toBe('Queueing for a while: its request queue outgrew the workers, then shortened');
    expect(n.detail).toContain('its request queue grew to 45 requests for 4 workers and has since shortened to 3.');
    expect(n.detail).toContain('while it lasted');
    expect(n.detail).not.toContain('grew to 3 requests');
    expect(n.detail).not.toContain('Queueing-bound)');
  });

  it("says at the close what the stored trial is: flagged when the close's verdict is, not flagged when the queue drained", () => {
    const flagged = backlog({ atClose: true, queueingBound: true, queueingFirstMet: { queuedRequests: 45, workers: 4 }, queuedRequests: 238, workers: 4 }, 'finishing');
    expect(queueingVerdictAtClose(flagged)).toBe(true);
    expect(queueingNotice(flagged, span)).toMatchObject({
      headline: 'Queueing-bound: this trial measured its request queue, not the storage',
      detail: expect.stringMatching(/still held 238 requests for 4 workers at the window's close\..* The stored trial is flagged queueing-bound \(its details say Queueing-bound\)\.$/),
    });
    const drained = backlog({ atClose: true, queueingBound: false, queueingFirstMet: { queuedRequests: 45, workers: 4 }, queuedRequests: 3, workers: 4 }, 'finishing');
    expect(queueingVerdictAtClose(drained)).toBe(false);
    expect(measuresQueueing(drained)).toBe(true);
    const n = queueingNotice(drained, span)!;
    expect(n.headline).toBe('Queueing during the trial, not at its close: not stored as queueing-bound');
    expect(n.detail).toMatch(/^Its request queue grew to 45 requests for 4 workers during the trial, then shortened to 3 requests for 4 workers by the window's close: .*the stored trial is not flagged/);
    expect(n.detail).not.toContain('Queueing-bound)');
  });

  it('says the cap was reached, and how late arrivals are issued so far', () => {
    const p = backlog({ capReached: true, capRequests: 12, queuedRequests: 12, issueLatenessMaxNs: 71e6 });
    expect(measuresQueueing(p)).toBe(true);
    const n = queueingNotice(p, span)!;
    expect(n.headline).toBe('Queueing-bound: this trial measures its request queue, not the storage');
    expect(n.detail).toContain('its request queue is at its cap of 12 requests.');
    expect(n.detail).toContain('The queue reached its cap of 12 requests: later arrivals are held back and issued late, in order, so far up to 71 ms behind schedule.');
    // Nothing late yet: no lateness stated.
    expect(queueingNotice(backlog({ capReached: true, capRequests: 12, queuedRequests: 12 }), span)!.detail).toContain('issued late, in order. The stored');
  });

  it('blames no storage in trace-only mode, as the engine\'s own warning does', () => {
    const n = queueingNotice(backlog({ queueingBound: true, traceOnly: true }), span)!;
    expect(n.detail).toContain('more load than the engine serves (trace-only mode: no storage I/O)');
    expect(n.detail).not.toContain('storage serves');
    expect(n.detail).not.toContain('describe the drive');
  });

  it("titles a row's queueing mark by the close's verdict", () => {
    expect(queueingRowTitle({ queueingAtClose: true })).toMatch(/stored flagged queueing-bound \(its details say Queueing-bound\)$/);
    expect(queueingRowTitle({ queueingAtClose: false })).toMatch(/not at the window's close, so it is not stored flagged queueing-bound$/);
    expect(queueingRowTitle({ queueingAtClose: null })).toMatch(/the stored verdict is judged at the window's close$/);
  });
});
