// The wizard's plan form: its fields, and how the text of a number field becomes a value to plan.
// Pure, so that the rules are tested without Pinia or a page.
import type { ProfileId } from '../src-shared/domain/scenarios.ts';
import type { PlanRequest } from '../src-shared/ipc/contract.ts';

export interface PlanForm {
  profile: ProfileId;
  trials: number;
  /** null = the profile's seconds per trial. */
  durationS: number | null;
  /** Seconds each trial runs before its measured window opens; 0 = none (the reference). */
  warmUpS: number;
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
export type NumberField = 'trials' | 'durationS' | 'warmUpS' | 'storageCapacityGib';

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
    ...(form.model ? { model: form.model } : {}),
    ...(form.scenarios !== null ? { scenarios: form.scenarios } : {}),
    ...(form.storageCapacityGib !== null ? { storageCapacityGib: form.storageCapacityGib } : {}),
  };
}
