/**
 * The one rule for a suite's trial slots (a planned run's trial index), shared by resume and
 * reports so they never disagree: a slot is done only when one of its attempts is complete. Resume
 * runs every other slot again (its partial, failed and aborted attempts stay stored), and a report
 * counts at most one attempt per slot, the best: a retried slot never counts twice, and the attempts
 * it replaced are shown as superseded, not as a missing trial.
 *
 * Pure TypeScript: no Node, no DOM.
 */
import type { TrialRowStatus } from './store-types.ts';

/** Whether a slot with these attempts needs no more: one of them is complete. */
export function isSlotDone(statuses: readonly TrialRowStatus[]): boolean {
  return statuses.includes('complete');
}

/** The indexes of a run's planned slots that are not done (in order). */
export function slotsNotDone(trialsPlanned: number, statusesOfSlot: (trialIndex: number) => readonly TrialRowStatus[]): number[] {
  const left: number[] = [];
  for (let i = 0; i < trialsPlanned; i++) if (!isSlotDone(statusesOfSlot(i))) left.push(i);
  return left;
}

export interface SlotAttempt {
  id: number;
  runId: number;
  trialIndex: number;
  attempt: number;
  status: TrialRowStatus;
}

export interface AttemptStanding<T extends SlotAttempt> {
  /** Its metrics count in the report. */
  counted: boolean;
  /** The attempt of the same slot that counts instead of this one (a retry), or null. */
  supersededBy: T | null;
}

/**
 * How each attempt stands in a report: per slot, the attempt that counts is its latest complete
 * one, else (with `includeIncomplete`) its latest partial one; every other attempt of that slot is
 * superseded by it. A slot where nothing counts keeps its attempts as they are (listed, excluded).
 * Attempts with equal numbers are never told apart (the store never holds two).
 */
export function attemptStandings<T extends SlotAttempt>(attempts: readonly T[], includeIncomplete: boolean): Map<T, AttemptStanding<T>> {
  const rank = (t: T): number => (t.status === 'complete' ? 2 : includeIncomplete && t.status === 'partial' ? 1 : 0);
  const best = new Map<string, T>();
  for (const t of attempts) {
    if (rank(t) === 0) continue;
    const key = `${t.runId}:${t.trialIndex}`;
    const b = best.get(key);
    if (!b || rank(t) > rank(b) || (rank(t) === rank(b) && t.attempt > b.attempt)) best.set(key, t);
  }
  const out = new Map<T, AttemptStanding<T>>();
  for (const t of attempts) {
    const b = best.get(`${t.runId}:${t.trialIndex}`);
    const supersededBy = b !== undefined && b !== t && b.attempt !== t.attempt ? b : null;
    out.set(t, { counted: rank(t) > 0 && supersededBy === null, supersededBy });
  }
  return out;
}
