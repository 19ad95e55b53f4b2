/**
 * The reference's two autoscaler modes, made real: they add and remove simulated users (and the
 * workers serving them) while the run goes on.
 *
 * - qos: saturation = recent storage read P95 ÷ the read-latency threshold (not capped at 1, so a
 *   target near 1 can still be exceeded by 10 %). An interval in which no read completed is judged by
 *   what is known instead, the larger of: its write P95 ÷ the write threshold (or, with no write
 *   completed either, the oldest write still in flight's age so far ÷ it) and the oldest read still in
 *   flight's age so far ÷ the read threshold. Those ages are lower bounds of the operations'
 *   latencies, so storage too slow to finish an operation within an interval does not look idle; an
 *   interval with only such bounds below the target holds (they cannot show room for more users); only
 *   an interval without any storage I/O, completed or in flight, counts as 0. Above 1.1 × target for
 *   two intervals in a row → users × 0.8, then three intervals of cooldown; below 0.9 × target →
 *   users × 1.2; otherwise hold. It settles where storage read latency sits just under the target.
 *   Whether the latency target held at the end (saturation ≤ 1: the storage P95 within its threshold)
 *   is judged on the last interval that measured storage latency (`targetJudgement`).
 * - capacity: the first interval adds clamp(users × 0.4, 5, 100); while throughput rises by more than
 *   1 % it adds clamp(users × 0.2, 5, 100); after two intervals without a rise it stops the run: the
 *   peak is the highest throughput seen and the users it took.
 * Decisions use each interval's own numbers (tokens generated in the interval, latencies recorded in
 * it), not whole-run averages, so they react to the load the autoscaler just set.
 */

export type AutoscalerMode = 'qos' | 'capacity';

export interface AutoscalerSample {
  elapsedNs: number;
  intervalNs: number;
  generatedTokens: number;
  storageReadP95Ns: number | null;
  storageWriteP95Ns: number | null;
  /** How long the oldest storage read still in flight has taken so far (null: none in flight). */
  storageReadInFlightNs?: number | null;
  /** How long the oldest storage write still in flight has taken so far (null: none in flight). */
  storageWriteInFlightNs?: number | null;
}

export interface ScaleEvent {
  timestamp: string;
  mode: AutoscalerMode;
  action: 'scale_up' | 'scale_down' | 'hold' | 'stop';
  users: number;
  saturation_level: number;
  read_latency_p95_ms: number | null;
  write_latency_p95_ms: number | null;
  /** Age of the oldest storage read still in flight at the step (ms), a lower bound of its latency. */
  read_in_flight_oldest_ms: number | null;
  write_in_flight_oldest_ms: number | null;
  /** The interval's own throughput (its tokens ÷ its length), which capacity mode decides on. */
  throughput_tokens_per_sec: number;
  peak_throughput_tokens_per_sec?: number;
  elapsed_s: number;
}

export interface AutoscalerOptions {
  mode: AutoscalerMode;
  initialUsers: number;
  targetSaturation: number;
  /** Storage read P95 that counts as full saturation (qos mode). */
  readLatencyThresholdMs: number;
  /** Storage write P95 that counts as full saturation when no read completed in an interval. */
  writeLatencyThresholdMs?: number;
  minUsers: number;
  maxUsers: number;
  scaleUpFactor: number;
  scaleDownFactor: number;
  /** Intervals over target in a row before scaling down (qos). */
  consecutiveSamplesRequired: number;
  now?: () => Date;
}

/** Whether the qos latency target held, judged on the last interval that measured storage latency. */
export interface TargetJudgement {
  met: boolean;
  /** The step of that interval. */
  event: ScaleEvent;
}

export interface AutoscalerDecision {
  /** New user count (equal to the current one when holding). */
  users: number;
  stop: boolean;
}

/**
 * Why a capacity run has no peak: the window closed before throughput stopped rising, so the peak it
 * reports is only the highest throughput seen so far (a lower bound of the storage's capacity). One
 * sentence for the trial's status reason and the console summary alike.
 */
export function noPeakFoundReason(windowClosedS: number, peak: { throughputTokensPerSec: number; users: number }): string {
  return (
    `no peak found: the window closed at ${windowClosedS.toFixed(1)} s before throughput stopped rising; ` +
    `highest so far ${peak.throughputTokensPerSec.toFixed(1)} tokens/s at ${peak.users} users (a longer run, --duration, may find more)`
  );
}

const COOLDOWN_INTERVALS = 3;
/** The latency profile's storage write criterion (P95 < 500 ms): the default write threshold. */
export const AUTOSCALER_WRITE_P95_THRESHOLD_MS = 500;
const CAPACITY_FIRST_STEP = 0.4;
const CAPACITY_STEP = 0.2;
const CAPACITY_MIN_STEP = 5;
const CAPACITY_MAX_STEP = 100;
const CAPACITY_RISE = 0.01;
const CAPACITY_PATIENCE = 2;

export class Autoscaler {
  readonly events: ScaleEvent[] = [];
  readonly timeline: { timestamp: number; throughput_tokens_per_sec: number; users: number }[] = [];
  readonly #o: AutoscalerOptions;
  #users: number;
  #overTarget = 0;
  #cooldown = 0;
  #samples = 0;
  #bestThroughput = 0;
  #bestUsers: number;
  #sinceRise = 0;
  #totalTokens = 0;
  #stopped = false;
  #judgement: TargetJudgement | null = null;

  constructor(o: AutoscalerOptions) {
    this.#o = o;
    this.#users = o.initialUsers;
    this.#bestUsers = o.initialUsers;
  }

  get users(): number {
    return this.#users;
  }

  get peak(): { throughputTokensPerSec: number; users: number } {
    return { throughputTokensPerSec: this.#bestThroughput, users: this.#bestUsers };
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * Whether the storage P95 was within its threshold (saturation ≤ 1) in the last interval that
   * measured it: one where an operation completed, or one whose oldest operation in flight was
   * already over the threshold. Null when no interval did ("never measured").
   */
  get targetJudgement(): TargetJudgement | null {
    return this.#judgement;
  }

  /** One interval's measurements in, one decision out. */
  step(s: AutoscalerSample): AutoscalerDecision {
    this.#samples++;
    this.#totalTokens += s.generatedTokens;
    const throughput = s.intervalNs > 0 ? (s.generatedTokens * 1e9) / s.intervalNs : 0;
    this.timeline.push({ timestamp: s.elapsedNs / 1e9, throughput_tokens_per_sec: s.elapsedNs > 0 ? (this.#totalTokens * 1e9) / s.elapsedNs : 0, users: this.#users });
    const ms = (ns: number | null | undefined): number | null => (ns === null || ns === undefined ? null : ns / 1e6);
    const readMs = ms(s.storageReadP95Ns);
    const writeMs = ms(s.storageWriteP95Ns);
    const readInFlightMs = ms(s.storageReadInFlightNs);
    const writeInFlightMs = ms(s.storageWriteInFlightNs);
    const readShare = (v: number | null): number => (v === null ? 0 : v / this.#o.readLatencyThresholdMs);
    const writeShare = (v: number | null): number => (v === null ? 0 : v / (this.#o.writeLatencyThresholdMs ?? AUTOSCALER_WRITE_P95_THRESHOLD_MS));
    // No read completed: what is known instead. An operation still in flight has taken at least its
    // age so far, so a device too slow to finish one within the interval is saturated, not idle.
    const saturation = readMs !== null ? readShare(readMs) : Math.max(readShare(readInFlightMs), writeShare(writeMs ?? writeInFlightMs));
    const before = this.#users;
    let stop = false;
    // Only lower bounds (nothing completed, something in flight) can show the storage is too slow,
    // never that it has room: under the target they hold rather than add users.
    const boundsOnly = readMs === null && writeMs === null && (readInFlightMs !== null || writeInFlightMs !== null);
    if (this.#o.mode === 'qos') this.#qos(saturation, boundsOnly);
    else stop = this.#capacity(throughput);
    const action = stop ? 'stop' : this.#users > before ? 'scale_up' : this.#users < before ? 'scale_down' : 'hold';
    const event: ScaleEvent = {
      timestamp: (this.#o.now ?? (() => new Date()))().toISOString(),
      mode: this.#o.mode,
      action,
      users: this.#users,
      saturation_level: saturation,
      read_latency_p95_ms: readMs,
      write_latency_p95_ms: writeMs,
      read_in_flight_oldest_ms: readInFlightMs,
      write_in_flight_oldest_ms: writeInFlightMs,
      throughput_tokens_per_sec: throughput,
      elapsed_s: s.elapsedNs / 1e9,
    };
    if (stop) event.peak_throughput_tokens_per_sec = this.#bestThroughput;
    // Every step, holds too: why the autoscaler did nothing is as much a finding as what it did.
    this.events.push(event);
    // Measured: a latency completed, or a lower bound already over the threshold says enough.
    if (readMs !== null || writeMs !== null || saturation > 1) this.#judgement = { met: saturation <= 1, event };
    this.#stopped = stop;
    return { users: this.#users, stop };
  }

  #clampUsers(n: number): number {
    return Math.max(this.#o.minUsers, Math.min(this.#o.maxUsers, Math.round(n)));
  }

  #qos(saturation: number, boundsOnly: boolean): void {
    const target = this.#o.targetSaturation;
    if (this.#cooldown > 0) {
      this.#cooldown--;
      return;
    }
    if (saturation > target * 1.1) {
      this.#overTarget++;
      if (this.#overTarget >= this.#o.consecutiveSamplesRequired) {
        this.#users = this.#clampUsers(this.#users * this.#o.scaleDownFactor);
        this.#overTarget = 0;
        this.#cooldown = COOLDOWN_INTERVALS;
      }
      return;
    }
    this.#overTarget = 0;
    if (saturation < target * 0.9 && !boundsOnly) this.#users = this.#clampUsers(Math.max(this.#users + 1, this.#users * this.#o.scaleUpFactor));
  }

  #capacity(throughput: number): boolean {
    const step = (share: number): number => Math.min(CAPACITY_MAX_STEP, Math.max(CAPACITY_MIN_STEP, Math.floor(this.#users * share)));
    if (this.#samples === 1) {
      this.#bestThroughput = throughput;
      this.#bestUsers = this.#users;
      this.#users = this.#clampUsers(this.#users + step(CAPACITY_FIRST_STEP));
      return false;
    }
    if (throughput > this.#bestThroughput * (1 + CAPACITY_RISE)) {
      this.#bestThroughput = throughput;
      this.#bestUsers = this.#users;
      this.#sinceRise = 0;
      this.#users = this.#clampUsers(this.#users + step(CAPACITY_STEP));
      return false;
    }
    this.#sinceRise++;
    if (this.#sinceRise >= CAPACITY_PATIENCE || this.#users >= this.#o.maxUsers) return true;
    return false;
  }
}
