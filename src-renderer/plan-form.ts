// The wizard's plan form: its fields, and how the text of a number field becomes a value to plan.
// Pure, so that the rules are tested without Pinia or a page.
import { namesFlag } from './app-words.ts';
import type { ProfileId } from '../src-shared/domain/scenarios.ts';
import type { PlanRequest } from '../src-shared/ipc/contract.ts';

export interface PlanForm {
  profile: ProfileId;
  trials: number;
  /** null = the profile's seconds per trial. */
  durationS: number | null;
  /** Seconds each trial runs before its measured window opens; 0 = none (the reference). */
  warmUpS: number;
  /** End each trial once this many requests have completed (the duration is then a cap); 0 = off: the duration alone. */
  maxRequests: number;
  /** '' = the profile's model. */
  model: string;
  /** null = the profile's scenarios. */
  scenarios: string[] | null;
  extras: boolean;
  probe: boolean;
  /** null = the profile's cap. */
  storageCapacityGib: number | null;
  label: string;
}

/** The plan form's number fields. */
export type NumberField = 'trials' | 'durationS' | 'warmUpS' | 'maxRequests' | 'storageCapacityGib';

/**
 * A number field's text as the form's value, or what is wrong with it, in the field's own words (the
 * contract's limits: the backend would refuse the same, as raw validator output). Nothing is
 * clamped or rounded: a value the form shows is the value planned. `badInput`: the browser could not
 * read the text as a number (it then reports it as empty).
 */
export function parseNumberField(field: NumberField, text: string, badInput = false): { value: number | null } | { problem: string } {
  const t = text.trim();
  const n = Number(t);
  const whole = t !== '' && !badInput && Number.isInteger(n);
  switch (field) {
    case 'trials':
      if (t === '' && !badInput) return { problem: 'Enter how many trials to run per scenario: a whole number from 1 to 100.' };
      return whole && n >= 1 && n <= 100 ? { value: n } : { problem: 'Trials per scenario must be a whole number from 1 to 100.' };
    case 'durationS':
      if (t === '' && !badInput) return { value: null };
      return whole && n >= 1 && n <= 86_400 ? { value: n } : { problem: "Seconds per trial must be a whole number from 1 to 86400, or empty for the profile's." };
    case 'warmUpS':
      if (t === '' && !badInput) return { value: 0 };
      return whole && n >= 0 && n <= 3600 ? { value: n } : { problem: 'Warm-up must be a whole number of seconds from 0 to 3600 (0: none).' };
    case 'maxRequests':
      if (t === '' && !badInput) return { value: 0 };
      return whole && n >= 0 && Number.isSafeInteger(n)
        ? { value: n }
        : { problem: 'The requests that end each trial must be a whole number, 0 or more (empty or 0: off, each trial runs for its duration).' };
    case 'storageCapacityGib':
      if (t === '' && !badInput) return { value: null };
      return !badInput && Number.isFinite(n) && n >= 0 && n <= 1_000_000
        ? { value: n }
        : { problem: "Storage tier capacity must be a number of GiB, 0 or more (0: 95 % of the free space), or empty for the profile's cap." };
  }
}

/** The request the form plans: a field left at the profile's own value is not sent, so the profile decides it. */
export function planRequestOf(cacheDir: string, form: PlanForm): PlanRequest {
  return {
    cacheDir,
    profile: form.profile,
    trials: form.trials,
    extras: form.extras,
    probe: form.probe,
    ...(form.durationS !== null ? { durationS: form.durationS } : {}),
    ...(form.warmUpS > 0 ? { warmUpS: form.warmUpS } : {}),
    ...(form.maxRequests > 0 ? { maxRequests: form.maxRequests } : {}),
    ...(form.model ? { model: form.model } : {}),
    ...(form.scenarios !== null ? { scenarios: form.scenarios } : {}),
    ...(form.storageCapacityGib !== null ? { storageCapacityGib: form.storageCapacityGib } : {}),
  };
}

/** The plan form's fields a message of the backend can name: each a control of its own, marked invalid while a message names it. */
export type PlanField = NumberField | 'model' | 'label' | 'cacheDir';

/**
 * Each field by the flag of `kvbench suite` that sets the same: the backend's messages (the plan's
 * problems, a refusal to plan) are in the CLI's words. In the form's order.
 */
const PLAN_FIELD_FLAGS: Readonly<Record<PlanField, string>> = Object.freeze({
  trials: '--trials',
  durationS: '--duration',
  warmUpS: '--warm-up',
  maxRequests: '--max-requests',
  storageCapacityGib: '--storage-capacity-gb',
  model: '--model',
  label: '--label',
  cacheDir: '--cache-dir',
});
const PLAN_FIELDS = Object.keys(PLAN_FIELD_FLAGS) as PlanField[];

/**
 * The form's fields `text`, a message of the backend in the CLI's words, names: by their flag, and the
 * cache directory also by its name ("the cache directory … is not writable" is about the field's
 * directory, and choosing another is the way out).
 */
export function planFieldsNamedIn(text: string): PlanField[] {
  return PLAN_FIELDS.filter((f) => namesFlag(text, PLAN_FIELD_FLAGS[f]) || (f === 'cacheDir' && /\bthe cache directory\b/i.test(text)));
}

/** For each field the messages name, the ids of the elements that say them (the field's aria-describedby), in the messages' order. */
export function planMessagesByField(messages: readonly { id: string; text: string }[]): Partial<Record<PlanField, string[]>> {
  const out: Partial<Record<PlanField, string[]>> = {};
  for (const m of messages) for (const f of planFieldsNamedIn(m.text)) (out[f] ??= []).push(m.id);
  return out;
}

/** A field's aria attributes: invalid while something says what is wrong with it (its own problem's element, the plan's messages that name it), and described by each. */
export function fieldAria(ownProblemId: string | null, namedBy: readonly string[] = []): { 'aria-invalid': 'true' | 'false'; 'aria-describedby'?: string } {
  const ids = [...(ownProblemId === null ? [] : [ownProblemId]), ...namedBy];
  return ids.length > 0 ? { 'aria-invalid': 'true', 'aria-describedby': ids.join(' ') } : { 'aria-invalid': 'false' };
}
