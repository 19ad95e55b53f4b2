// The live run's data and the pure rules over it: the trial rows of a plan, the time left, the
// tiles' run-averages, the chart's series and its clock, the phase of a suite that ended unseen, and
// how a status snapshot and the events that arrived while it was fetched overlap. The live-run store
// holds the state; these say what to do with it, and are tested without Pinia.
import { SCENARIOS, isScenarioId, tiersPastScenario, type SuitePlan } from '../src-shared/domain/scenarios.ts';
import type { TrialRowStatus } from '../src-shared/domain/store-types.ts';
import { tiersText, type TierName } from '../src-shared/domain/tiers.ts';
import { averageStorageBytesPerSec, averageTokensPerSec, RATE_INTERVAL_MS, type ProgressEvent } from '../src-shared/engine-protocol.ts';
import type { SuiteRecordData } from '../src-shared/ipc/contract.ts';
import type { AppEvent } from '../src-shared/ipc/events.ts';
import { asSentence } from '../src-shared/domain/app-words.ts';
import { busySplit, queueBoundWords } from '../src-shared/domain/worker-busy.ts';
import { fmtInt } from './format.ts';

/**
 * 'not-started': the suite ended before its first trial (cancelled while the hardware was detected
 * and the drive probed, or the server went away then): no suite was created and nothing was stored,
 * so there is nothing to report or resume. A user's own cancel is not a failure.
 * 'interrupted': the suite's runner ended while it ran (the server was killed or restarted); the
 * database marks it so, its running trial aborted, and it can be resumed from History.
 */
export type RunPhase = 'idle' | 'preparing' | 'running' | 'finished' | 'cancelled' | 'interrupted' | 'not-started' | 'failed';
/** Why a suite is 'not-started': the user's cancel, or the server that stopped answering for it. */
export type NotStartedReason = 'cancelled' | 'lost';

export interface TrialRow {
  key: string;
  scenarioId: string;
  label: string;
  trialIndex: number;
  trialsPerScenario: number;
  /** 'not-run': the suite ended (cancelled) before this trial started; nothing of it is stored. */
  status: 'queued' | 'not-run' | TrialRowStatus;
  trialId: number | null;
  wallMs: number | null;
  tokPerS: number | null;
  readBytesPerS: number | null;
  reason: string | null;
  /** The plan's estimate: for a trial that ends after `maxRequests` requests, the longest it can take (its duration cap). */
  estimatedS: number;
  /** It ends once this many requests have completed in its measured window, or at its duration cap (0: at the cap only). */
  maxRequests: number;
  /**
   * Its measured window moved bytes to or from a tier past those its scenario names (liveSpill), as
   * seen live: the trial is stored flagged 'spilled'. False for one not seen spilling (nor stored so).
   */
  spilled: boolean;
  /**
   * Seen live measuring queueing during the trial (queueingNotice): its queue met the queueing-bound
   * rule at some tick or reached its cap, so its end-to-end latency and queue wait were the queue's
   * while that lasted. Not the stored verdict: that is queueingAtClose.
   */
  queueing: boolean;
  /**
   * The close's verdict, from the engine's 'finishing' event: true when the trial is stored flagged
   * queueing-bound, false when it is not; null before that event came (or this page missed it).
   */
  queueingAtClose: boolean | null;
}

export interface LiveSeries {
  t: number[];
  tokPerS: number[];
  e2eP95Ms: (number | null)[];
  storageReadP95Ms: (number | null)[];
  users: number[];
  queue: number[];
  readBytesPerS: number[];
  writeBytesPerS: number[];
  /** The engine's memory at the newest sample (bytes; null before the first, or from an engine that sends none). */
  rssBytes: (number | null)[];
  heapUsedBytes: (number | null)[];
  arrayBuffersBytes: (number | null)[];
}

/** The points a live chart keeps: the newest, so a long trial's chart stays cheap to draw. */
export const MAX_POINTS = 3000;

export const emptySeries = (): LiveSeries => ({
  t: [],
  tokPerS: [],
  e2eP95Ms: [],
  storageReadP95Ms: [],
  users: [],
  queue: [],
  readBytesPerS: [],
  writeBytesPerS: [],
  rssBytes: [],
  heapUsedBytes: [],
  arrayBuffersBytes: [],
});
export const rowKey = (scenarioId: string, trialIndex: number): string => `${scenarioId}#${trialIndex}`;

/** A trial slot that has not started: the row before any event of it arrived. */
export function queuedRow(slot: { scenarioId: string; label: string; trialIndex: number; trialsPerScenario: number }, estimatedS: number, maxRequests = 0): TrialRow {
  return {
    key: rowKey(slot.scenarioId, slot.trialIndex),
    scenarioId: slot.scenarioId,
    label: slot.label,
    trialIndex: slot.trialIndex,
    trialsPerScenario: slot.trialsPerScenario,
    status: 'queued',
    trialId: null,
    wallMs: null,
    tokPerS: null,
    readBytesPerS: null,
    reason: null,
    estimatedS,
    maxRequests,
    spilled: false,
    queueing: false,
    queueingAtClose: null,
  };
}

/** A planned run's request limit (RunOptions.maxRequests; 0: none). */
export function plannedMaxRequests(run: SuitePlan['runs'][number] | undefined): number {
  const n = run?.options.maxRequests;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : 0;
}

export function rowsFromPlan(plan: SuitePlan): TrialRow[] {
  const rows: TrialRow[] = [];
  for (const r of plan.runs) {
    for (let i = 0; i < r.trials; i++) {
      rows.push(queuedRow({ scenarioId: r.scenarioId, label: r.label, trialIndex: i, trialsPerScenario: r.trials }, r.estimatedSecondsPerTrial, plannedMaxRequests(r)));
    }
  }
  return rows;
}

/** The time left in a suite, and how firm it is. */
export interface TimeLeft {
  seconds: number;
  /**
   * Part of it is request-limited trials (TrialRow.maxRequests) counted at their duration cap: no
   * complete trial of their scenario has shown its pace yet (the current one's own requests count for
   * it alone), so the figure is the most the suite should take, not an estimate of it. A cap is
   * stretched by the most any complete trial overran its plan (start-up on a loaded machine), so it
   * is not below what a capped trial was seen to take; a later, slower start-up can still exceed it.
   */
  upToCap: boolean;
}

/** The trial running now: its row, the seconds since it started (start-up and warm-up included), its newest progress event. */
export interface CurrentTrial {
  key: string | null;
  elapsedS: number;
  progress?: ProgressEvent | null;
}

/**
 * Seconds a request-limited trial still needs in its measured window, from the requests completed
 * so far and their rate (the window's clock, so the warm-up does not count), at most what its
 * duration cap leaves; null before a request has completed in the window, when there is no rate.
 * In draining or finishing, the window has ended: nothing of it is left.
 */
export function requestLimitedWindowLeftS(p: ProgressEvent, maxRequests: number): number | null {
  if (p.phase === 'draining' || p.phase === 'finishing') return 0;
  if (p.phase !== 'running' || p.requestsCompleted === 0 || p.elapsedNs <= 0) return null;
  const elapsedS = p.elapsedNs / 1e9;
  const byRateS = (Math.max(0, maxRequests - p.requestsCompleted) * elapsedS) / p.requestsCompleted;
  return p.durationNs === null ? byRateS : Math.min(byRateS, Math.max(0, p.durationNs / 1e9 - elapsedS));
}

/**
 * The time left: the estimate of every trial not yet finished (less what the current one has run),
 * plus `unseen.seconds` for trials the page has no row for yet (a resumed suite's rows appear as its
 * trials start), scaled by how the trials that ran to their end compared with their estimates.
 * A failed, aborted or partial trial stopped early: its short time says nothing about how long a
 * full trial takes, and would shrink every remaining estimate.
 *
 * A trial that ends after N requests (maxRequests) has only a bound in the plan, its duration cap,
 * and its end says nothing of the others' estimates. It is counted from its own pace: the current
 * one from its requests' rate in the window so far (requestLimitedWindowLeftS), a queued one as the
 * complete trials of its scenario took. Until its scenario has shown a pace, it counts at its cap,
 * stretched by the most a complete trial overran its plan's estimate (never shrunk), and the result
 * says so (upToCap); so do unseen trials when `unseen.requestLimited`.
 */
export function timeLeft(rows: readonly TrialRow[], current: CurrentTrial, unseen: { seconds: number; requestLimited: boolean } = { seconds: 0, requestLimited: false }): TimeLeft | null {
  if (rows.length === 0 && unseen.seconds === 0) return null;
  let remaining = unseen.requestLimited ? 0 : unseen.seconds;
  let paced = 0; // request-limited trials' seconds, from their pace or at their cap: not scaled by the estimates' factor
  let upToCap = unseen.requestLimited && unseen.seconds > 0;
  let estDone = 0;
  let actualDone = 0;
  // How far a trial can run past its plan's estimate, as complete ones did (a slow start-up): a
  // request-limited one ends at its cap at the latest, so only the overrun counts, never a short end.
  let capStretch = 1;
  const tookS = new Map<string, number[]>(); // complete request-limited trials' wall seconds, per scenario
  for (const r of rows) {
    if (r.status !== 'complete' || r.wallMs === null) continue;
    if (r.maxRequests > 0) tookS.set(r.scenarioId, [...(tookS.get(r.scenarioId) ?? []), r.wallMs / 1000]);
    if (r.estimatedS > 0) capStretch = Math.max(capStretch, r.wallMs / 1000 / r.estimatedS);
  }
  const meanTookS = (scenarioId: string): number | null => {
    const took = tookS.get(scenarioId);
    return took ? took.reduce((a, b) => a + b, 0) / took.length : null;
  };
  for (const r of rows) {
    const isCurrent = r.status === 'running' && r.key === current.key;
    const ranS = isCurrent ? current.elapsedS : 0;
    if (r.maxRequests > 0) {
      if (r.status !== 'queued' && r.status !== 'running') continue;
      const windowLeftS = isCurrent && current.progress ? requestLimitedWindowLeftS(current.progress, current.progress.maxRequests ?? r.maxRequests) : null;
      const tookMeanS = meanTookS(r.scenarioId);
      if (windowLeftS !== null) paced += windowLeftS;
      else if (tookMeanS !== null) paced += Math.max(0, tookMeanS - ranS);
      else {
        paced += Math.max(0, r.estimatedS * capStretch - ranS);
        upToCap = true;
      }
    } else if (r.status === 'queued') remaining += r.estimatedS;
    else if (r.status === 'running') remaining += Math.max(0, r.estimatedS - ranS);
    else if (r.status === 'complete' && r.wallMs !== null && r.estimatedS > 0) {
      estDone += r.estimatedS;
      actualDone += r.wallMs / 1000;
    }
  }
  const factor = estDone > 0 ? Math.min(3, Math.max(0.5, actualDone / estDone)) : 1;
  if (unseen.requestLimited) paced += unseen.seconds * capStretch;
  return { seconds: remaining * factor + paced, upToCap };
}

/**
 * How far the current trial's phase is, 0 to 1: the share of its duration, or of its request limit,
 * whichever is further, since the trial ends at whichever comes first (a request-limited trial's
 * bar stood near empty while it ended, read from its duration cap alone).
 */
export function phaseFraction(p: ProgressEvent | null): number {
  if (!p) return 0;
  const byTime = p.durationNs ? p.elapsedNs / p.durationNs : 0;
  const byRequests = p.maxRequests ? p.requestsCompleted / p.maxRequests : 0;
  return Math.min(1, Math.max(byTime, byRequests));
}

/** The engine's phases whose progress clock starts again at zero (benchmark.ts: the warm-up counts from the request loop's start, the measured window from its own). */
function restartsClock(phase: ProgressEvent['phase']): boolean {
  return phase === 'warming-up' || phase === 'running';
}

/** Where a trial's chart stands on its time axis: the phase of its last point, and the seconds that phase's clock is shifted by. */
export interface SeriesClock {
  phase: string;
  offsetS: number;
}

/**
 * Adds a progress sample to the current trial's chart; says whether a point was added.
 * The warm-up and the measured window each count from their own zero: the chart's axis carries the
 * window on from where the warm-up ended. Draining goes on with the window's clock, so it never
 * starts a new one (an early draining sample is dropped, not moved a whole window on).
 */
export function appendPoint(s: LiveSeries, clock: SeriesClock, p: ProgressEvent): boolean {
  // 'finishing' carries the window's end time, earlier than the draining samples before it, and
  // zeros for every rate: not a measurement, so not a point.
  if (p.phase === 'finishing') return false;
  if (s.t.length === 0) Object.assign(clock, { phase: p.phase, offsetS: 0 });
  const last = s.t.length > 0 ? s.t[s.t.length - 1] : 0;
  if (p.phase !== clock.phase) {
    if (restartsClock(p.phase) && p.elapsedNs / 1e9 + clock.offsetS < last) clock.offsetS = last;
    clock.phase = p.phase;
  }
  const t = p.elapsedNs / 1e9 + clock.offsetS;
  if (s.t.length > 0 && t < last) return false;
  s.t.push(t);
  s.tokPerS.push(p.generatedTokensPerSec);
  s.e2eP95Ms.push(p.e2eLatencyP95Ns === null ? null : p.e2eLatencyP95Ns / 1e6);
  s.storageReadP95Ms.push(p.storageReadP95Ns === null ? null : p.storageReadP95Ns / 1e6);
  s.users.push(p.activeUsers);
  s.queue.push(p.queueDepth);
  s.readBytesPerS.push(p.storageReadBytesPerSec);
  s.writeBytesPerS.push(p.storageWriteBytesPerSec);
  s.rssBytes.push(p.memory?.rssBytes ?? null);
  s.heapUsedBytes.push(p.memory?.heapUsedBytes ?? null);
  s.arrayBuffersBytes.push(p.memory?.arrayBuffersBytes ?? null);
  if (s.t.length > MAX_POINTS) for (const k of Object.keys(s) as (keyof LiveSeries)[]) s[k].splice(0, s[k].length - MAX_POINTS);
  return true;
}

/** The live tiles' numbers as the trial will store them: run-averages over the event's clock so far. */
export interface LiveAverages {
  tokensPerSec: number | null;
  storageReadBytesPerSec: number | null;
  storageWriteBytesPerSec: number | null;
}

/**
 * The throughput and storage tiles' run-averages: the event's cumulative tokens and storage bytes ÷
 * its clock (the measured window so far; in a warm-up, the warm-up's), by the results' own rule
 * (perSecondOver), not the last interval's rates the event also carries. Null before any time has passed.
 */
export function liveAverages(p: ProgressEvent | null): LiveAverages {
  const storage = p ? averageStorageBytesPerSec(p) : null;
  return {
    tokensPerSec: p ? averageTokensPerSec(p) : null,
    storageReadBytesPerSec: storage?.readBytesPerSec ?? null,
    storageWriteBytesPerSec: storage?.writeBytesPerSec ?? null,
  };
}

/**
 * Which progress events the live tiles read. `measured`: the newest of the measured phase (after the
 * window closed, draining and finishing report rates and latencies near zero, so the last 'running'
 * one stands), for the latencies, users and the last interval's rates. `totals`: the one the
 * run-averages are taken from, which is the engine's 'finishing' event once it came: it carries
 * exactly the stored counts and bytes on the window's closing clock, so the tiles end on the stored
 * figures rather than on those of the last 'running' event just before the close.
 */
export function tileEvents(progress: ProgressEvent | null, lastRunning: ProgressEvent | null): { measured: ProgressEvent | null; totals: ProgressEvent | null } {
  const measured = progress && progress.phase !== 'running' && lastRunning ? lastRunning : progress;
  return { measured, totals: progress?.phase === 'finishing' ? progress : measured };
}

/**
 * A trial of a scenario meant to stay off the slower tiers (CPU only, GPU + CPU, GPU only) that is
 * moving bytes to or from one of them: its tiers are full, and the cache moves the rest down. In the
 * measured window that is what the stored trial's 'spilled' flag says (its tier bytes past the
 * scenario's, the report's spill caution); in the warm-up it is not measured, but says the window
 * will likely spill too.
 */
export interface LiveSpill {
  /** The tiers past the scenario's that moved bytes, fastest first. */
  tiers: TierName[];
  /** The storage tier's bytes on the event's clock (the window's; in a warm-up, since the workload started). */
  storageWriteBytes: number;
  storageReadBytes: number;
  /** Seen in the warm-up: not measured, so not flagged (yet). */
  warmUp: boolean;
  /** The event is the engine's 'finishing' one: the bytes are the stored trial's. */
  final: boolean;
}

/** Whether an event's phase has a clock whose tier bytes mean anything (the warm-up's or the window's). */
const movesMeasured = (phase: ProgressEvent['phase']): boolean => phase === 'warming-up' || phase === 'running' || phase === 'draining' || phase === 'finishing';

/**
 * Whether the CPU tier has moved bytes on the trial's clock, from the events seen so far (`before`:
 * the answer up to the previous event, of phase `beforePhase`). The progress carries the CPU tier's
 * rates over the last interval only, not its totals, so a GPU-only trial's spill to the CPU tier is
 * known from any interval that had some; the measured window starts the answer again, as it starts
 * the tier counters again.
 */
export function cpuMovedAfter(before: boolean, beforePhase: ProgressEvent['phase'] | null, p: ProgressEvent): boolean {
  const restarted = p.phase === 'running' && beforePhase !== 'running';
  const moved = (p.phase === 'warming-up' || p.phase === 'running') && (p.cpuReadBytesPerSec > 0 || p.cpuWriteBytesPerSec > 0);
  return (restarted ? false : before) || moved;
}

/**
 * The trial's spill as it stands at event `p` (its newest), or null: none, a scenario that names the
 * storage tier, or nothing on a measuring clock yet. `cpuMoved`: cpuMovedAfter over its events.
 */
export function liveSpill(scenarioId: string, p: ProgressEvent | null, cpuMoved: boolean): LiveSpill | null {
  const past = tiersPastScenario(scenarioId);
  if (!p || past.length === 0 || !movesMeasured(p.phase)) return null;
  const tiers = past.filter((t) => (t === 'storage' ? p.storageReadBytes > 0 || p.storageWriteBytes > 0 : t === 'cpu' && cpuMoved));
  if (tiers.length === 0) return null;
  return { tiers, storageWriteBytes: p.storageWriteBytes, storageReadBytes: p.storageReadBytes, warmUp: p.phase === 'warming-up', final: p.phase === 'finishing' };
}

/** Where a spill goes, in a sentence: "the drive", "the CPU tier and the drive". */
const spillPlaces = (tiers: readonly TierName[]): string => tiers.map((t) => (t === 'storage' ? 'the drive' : `the ${tiersText([t])}`)).join(' and ');

/**
 * What the Run step's spill mark says: a headline and what it means for the result. `capacityBytes`:
 * the named tiers' size from the plan (null when this page has no plan); `size` formats bytes in the
 * units chosen in Settings.
 */
export function spillNotice(scenarioId: string, spill: LiveSpill, capacityBytes: number | null, size: (bytes: number) => string): { headline: string; detail: string } {
  const named = isScenarioId(scenarioId) ? SCENARIOS[scenarioId] : null;
  const tiers = named ? `Its ${tiersText(named.tiers)}` : 'Its tiers';
  const full = `${tiers}${capacityBytes !== null ? ` (${size(capacityBytes)})` : ''} ${named && named.tiers.length > 1 ? 'are' : 'is'} full, so the cache moves entries down to ${spillPlaces(spill.tiers)}`;
  const storage = spill.tiers.includes('storage')
    ? `: ${size(spill.storageWriteBytes)} written to the drive and ${size(spill.storageReadBytes)} read back ${spill.warmUp ? 'since the workload started' : spill.final ? 'in its measured window' : 'so far in the measured window'}`
    : '';
  const title = named ? `“${named.label}”` : 'This trial';
  if (spill.warmUp) {
    return {
      headline: `Spilling to ${spillPlaces(spill.tiers)} in the warm-up`,
      detail: `${full}${storage}. The warm-up is not measured; if the measured window spills too, the trial is stored flagged “spilled”: ${title}'s numbers then include ${spillPlaces(spill.tiers)}.`,
    };
  }
  return {
    headline: `${spill.final ? 'Spilled' : 'Spilling'} to ${spillPlaces(spill.tiers)}: ${title} ${spill.final ? 'measured' : 'is measuring'} ${spillPlaces(spill.tiers)} too`,
    detail:
      `${full}${storage}. This trial's throughput and latencies include ${spillPlaces(spill.tiers)}, not only ${named ? `the ${tiersText(named.tiers)}` : 'its own tiers'}; ` +
      `it ${spill.final ? 'is' : 'will be'} stored flagged “spilled” (the report marks it, and can leave flagged trials out).`,
  };
}

/**
 * The engine's backlog facts on `p` say the trial measures, or measured, its queue: the rule holds
 * now (or at the close, on the 'finishing' event), it was met at some tick, or the queue reached its cap.
 */
export function measuresQueueing(p: ProgressEvent | null): boolean {
  const b = p?.backlog;
  return b !== undefined && (b.queueingBound || b.queueingFirstMet !== null || b.capReached);
}

/** The close's verdict on `p`: whether the trial is stored flagged queueing-bound; null before the window closed (or from an engine that sends no backlog facts). */
export function queueingVerdictAtClose(p: ProgressEvent | null): boolean | null {
  const b = p?.backlog;
  return b?.atClose ? b.queueingBound : null;
}


/**
 * What the Run step says of a trial that measures, or measured, its request queue, not the storage,
 * as the engine's backlog facts on its newest event stand; null while it does not (or an engine that
 * sends none). In tense: the queue outgrowing its workers now, having done so and shortened since,
 * and, once the window closed, what the stored trial is (its flag is the close's verdict, not the
 * live one). The engine's own warning (its log) says the same in the CLI's words; this is the app's,
 * shown above the tiles so the trial does not read as a clean storage result. `span` formats
 * nanoseconds (fmtSpanNs).
 */
export function queueingNotice(p: ProgressEvent | null, span: (ns: number) => string): { headline: string; detail: string } | null {
  const b = p?.backlog;
  if (!b || !measuresQueueing(p)) return null;
  const met = b.queueingFirstMet;
  const queue = `${fmtInt(b.queuedRequests)} requests for ${fmtInt(b.workers)} workers`;
  const grewTo = met ? `grew to ${fmtInt(met.queuedRequests)} requests for ${fmtInt(met.workers)} workers` : null;
  // What held the workers, from their measured busy time (the simulated generation, or the cache and
  // which tier): an engine before protocol 5 sends none, and then nothing is blamed.
  const split = busySplit(b.workersBusy);
  const w = queueBoundWords(split, {
    scope: b.atClose ? 'in the measured window' : 'so far',
    generation: b.generation ?? null,
    traceOnly: b.traceOnly,
    past: b.atClose,
    unmeasured: b.workersBusy === undefined ? 'this engine does not say what held them' : undefined,
  });
  const offer = `${w.offer.charAt(0).toUpperCase()}${w.offer.slice(1)}`;
  const why = w.split === null ? '' : ` ${asSentence(w.split)}`;
  const notWhat = `not ${w.notWhat === 'storage' ? 'the drive' : w.notWhat}`;
  const remedy = w.bound === 'generation' ? ` ${asSentence(`${w.remedy} keep the queue short`)}` : '';
  const device = b.traceOnly ? '' : ' Its storage bandwidth and per-operation storage latencies still describe the drive at full load.';
  const cap =
    b.capReached && b.capRequests !== null
      ? ` The queue reached its cap of ${fmtInt(b.capRequests)} requests: later arrivals ${b.atClose ? 'were' : 'are'} held back and issued late, in order` +
        (b.issueLatenessMaxNs > 0 ? `, ${b.atClose ? '' : 'so far '}up to ${span(b.issueLatenessMaxNs)} behind schedule.` : '.')
      : '';
  if (b.atClose) {
    if (b.queueingBound) {
      return {
        headline: 'Queueing-bound: this trial measured its request queue, not the storage',
        detail:
          `${offer}: its request queue still held ${queue} at the window's close.${why} Its end-to-end latency and queue wait measure how long the queue had grown, ${notWhat}.${device}${cap}${remedy} ` +
          'The stored trial is flagged queueing-bound (its details say Queueing-bound).',
      };
    }
    return {
      headline: grewTo ? 'Queueing during the trial, not at its close: not stored as queueing-bound' : 'Its queue reached its cap, but not queueing-bound at the close: not stored as queueing-bound',
      detail:
        `${grewTo ? `Its request queue ${grewTo} during the trial, then shortened to ${queue} by the window's close` : `Its request queue held ${queue} at the window's close`}: ` +
        `the queueing-bound verdict is judged at the close, so the stored trial is not flagged. Its end-to-end latency and queue wait over the window include that spell of queueing.${cap}`,
    };
  }
  // Still queueing now: the rule holds at the latest tick, or the queue is at its cap.
  const atCap = b.capRequests !== null && b.queuedRequests >= b.capRequests;
  const lasting = b.queueingBound || atCap;
  const now = b.queueingBound
    ? `its request queue has grown to ${queue}`
    : atCap
      ? `its request queue is at its cap of ${fmtInt(b.capRequests ?? 0)} requests`
      : `its request queue ${grewTo ?? `reached its cap of ${fmtInt(b.capRequests ?? 0)} requests`} and has since shortened to ${fmtInt(b.queuedRequests)}`;
  return {
    headline: lasting ? 'Queueing-bound: this trial measures its request queue, not the storage' : 'Queueing for a while: its request queue outgrew the workers, then shortened',
    detail:
      `${offer}: ${now}.${why} Its end-to-end latency and queue wait measure how long the queue has grown${lasting ? '' : ' while it lasted'}, ${notWhat}.${device}${cap}${remedy} ` +
      "The stored trial's verdict is judged at the window's close.",
  };
}

/** The title of a trial row's "queueing" mark: seen queueing during the trial, and what the close's verdict (the stored flag) says. */
export function queueingRowTitle(row: Pick<TrialRow, 'queueingAtClose'>): string {
  const during = "Seen live measuring its request queue, not the storage, during the trial: its end-to-end latency and queue wait were the queue's while that lasted";
  if (row.queueingAtClose === true) return `${during}; still so at the window's close, so it is stored flagged queueing-bound (its details say Queueing-bound)`;
  if (row.queueingAtClose === false) return `${during}; not at the window's close, so it is not stored flagged queueing-bound`;
  return `${during}; the stored verdict is judged at the window's close`;
}

/** The last interval's rates an event carries, as the tiles show them beside the run-averages. */
export interface IntervalRates {
  tokensPerSec: number;
  storageReadBytesPerSec: number;
  storageWriteBytesPerSec: number;
}

/**
 * The last RATE_INTERVAL_MS's rates of `p`, or null while its clock has not yet run one whole
 * interval (the engine's rates are then zeros, not a measurement: its first sample of the phase is
 * still to come) and for a 'finishing' event (zeros by design).
 */
export function lastIntervalRates(p: ProgressEvent | null): IntervalRates | null {
  if (!p || p.phase === 'finishing' || p.elapsedNs < RATE_INTERVAL_MS * 1e6) return null;
  return { tokensPerSec: p.generatedTokensPerSec, storageReadBytesPerSec: p.storageReadBytesPerSec, storageWriteBytesPerSec: p.storageWriteBytesPerSec };
}

/** The card of the last trial once its suite has ended: what it says, and what its tiles are. */
export interface EndedTrialCard {
  /** "Suite finished — last trial: Storage only (trial 1 of 2), stored as trial 12". */
  headline: string;
  /** The trial stored results (complete, partial, or aborted with its partial results kept). */
  resultsStored: boolean;
  /**
   * The throughput and storage tiles are the trial's stored figures: it stored results and the
   * engine's 'finishing' event came (it carries exactly the stored counts and bytes). Otherwise
   * they are only the last ones seen live (of a killed engine, a trial stopped before it measured,
   * a runner that went away: nothing of them was stored).
   */
  tilesStored: boolean;
  /** How the card reads (a notice's class): only a complete trial of a suite that finished cleanly is a success. */
  tone: 'ok' | 'warn' | 'error';
}

/**
 * What the last trial's card says once the suite has ended; null while it runs. `finishingSeen`:
 * the newest progress event of that trial is the engine's 'finishing' one.
 */
export function endedTrialCard(phase: RunPhase, noCompleteTrial: boolean, row: TrialRow, finishingSeen: boolean): EndedTrialCard | null {
  // A trial stored flagged queueing-bound (the close's verdict) is complete, but no clean storage result: its card reads as a
  // warning; so does one seen queueing whose close this page did not see. One that queued for a while and drained is stored unflagged.
  const suite =
    phase === 'finished'
      ? noCompleteTrial
        ? 'Suite failed'
        : 'Suite finished'
      : phase === 'cancelled'
        ? 'Suite cancelled'
        : phase === 'interrupted'
          ? 'Suite interrupted'
          : phase === 'failed'
            ? 'Suite stopped on an error'
            : null;
  if (suite === null) return null;
  // An aborted trial kept results where the engine ended its window (its 'finishing' came, or the
  // stored row has a throughput); one stopped before it measured, or killed, has none.
  const resultsStored = row.status === 'complete' || row.status === 'partial' || (row.status === 'aborted' && (finishingSeen || row.tokPerS !== null));
  const id = row.trialId === null ? '' : ` (trial ${row.trialId})`;
  const fate =
    row.status === 'complete'
      ? `stored as trial ${row.trialId}`
      : row.status === 'partial'
        ? `stored as trial ${row.trialId} (partial)`
        : row.status === 'aborted'
          ? resultsStored
            ? `stopped, its partial results stored as trial ${row.trialId} (aborted)`
            : `stopped: nothing of it stored${id}`
          : row.status === 'failed'
            ? `failed: nothing of it stored${id}`
            : // Its end never came here (the suite stopped on an error under it).
              `did not finish: nothing of it stored${id}`;
  const tone = row.status === 'complete' && phase === 'finished' && !noCompleteTrial && !(row.queueingAtClose ?? row.queueing) ? 'ok' : resultsStored ? 'warn' : 'error';
  return { headline: `${suite} — last trial: ${row.label} (trial ${row.trialIndex + 1} of ${row.trialsPerScenario}), ${fate}`, resultsStored, tilesStored: resultsStored && finishingSeen, tone };
}

/** The run screen's phase for a stored suite that is no longer running here: only a clean end is 'finished'. */
export function endedPhase(status: SuiteRecordData['status']): RunPhase {
  return status === 'finished' ? 'finished' : status === 'cancelled' ? 'cancelled' : 'interrupted';
}

/**
 * How many of the events that arrived during a status request the snapshot already holds: the
 * longest start of `arrived` that is also the end of `snapshot` (both are the backend's emission
 * order, and the snapshot thins only its oldest progress events).
 */
export function overlap(snapshot: readonly AppEvent[], arrived: readonly AppEvent[]): number {
  const s = snapshot.map((e) => JSON.stringify(e));
  const a = arrived.map((e) => JSON.stringify(e));
  for (let k = Math.min(s.length, a.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = s[s.length - k + i] === a[i];
    if (same) return k;
  }
  return 0;
}
