// The plan form's rules, without Pinia or a page: how a number field's text becomes the value
// planned (never clamped or rounded), and which fields the plan request carries.
import { describe, expect, it } from 'vitest';
import { parseNumberField, planRequestOf, type PlanForm } from '../../../src-renderer/plan-form.ts';

const problemOf = (r: ReturnType<typeof parseNumberField>): string | null => ('problem' in r ? r.problem : null);

describe('number fields', () => {
  it('trials: a whole number from 1 to 100, and an empty field asks for one', () => {
    expect(parseNumberField('trials', ' 7 ')).toEqual({ value: 7 });
    expect(parseNumberField('trials', '100')).toEqual({ value: 100 });
    expect(problemOf(parseNumberField('trials', ''))).toContain('Enter how many trials');
    for (const bad of ['0', '101', '2.5', 'x', '-1']) expect(problemOf(parseNumberField('trials', bad))).toContain('whole number from 1 to 100');
  });

  it("seconds per trial: empty is the profile's, else a whole number from 1 to 86400", () => {
    expect(parseNumberField('durationS', '')).toEqual({ value: null });
    expect(parseNumberField('durationS', '86400')).toEqual({ value: 86_400 });
    for (const bad of ['0', '86401', '1.5']) expect(problemOf(parseNumberField('durationS', bad))).toContain('from 1 to 86400');
  });

  it('warm-up: empty is none (0), else a whole number of seconds from 0 to 3600', () => {
    expect(parseNumberField('warmUpS', '')).toEqual({ value: 0 });
    expect(parseNumberField('warmUpS', '007')).toEqual({ value: 7 });
    for (const bad of ['-3', '3601', '1.5']) expect(problemOf(parseNumberField('warmUpS', bad))).toContain('from 0 to 3600');
  });

  it("storage capacity: empty is the profile's cap, else any number of GiB from 0, fractions kept", () => {
    expect(parseNumberField('storageCapacityGib', '')).toEqual({ value: null });
    expect(parseNumberField('storageCapacityGib', '0')).toEqual({ value: 0 });
    expect(parseNumberField('storageCapacityGib', '2.5')).toEqual({ value: 2.5 });
    for (const bad of ['-5', 'Infinity', '1000001', 'x']) expect(problemOf(parseNumberField('storageCapacityGib', bad))).toContain('number of GiB, 0 or more');
  });

  it('text the browser could not read is refused, not taken as the empty field it reports', () => {
    for (const field of ['trials', 'durationS', 'warmUpS', 'storageCapacityGib'] as const) expect(problemOf(parseNumberField(field, '', true))).not.toBeNull();
  });
});

describe('the plan request', () => {
  const form: PlanForm = { profile: 'quick', trials: 3, durationS: null, warmUpS: 0, model: '', scenarios: null, extras: false, probe: true, storageCapacityGib: null, label: 'ignored' };

  it("leaves out what the profile decides, and the label (Start's, not the plan's)", () => {
    expect(planRequestOf('/mnt/kv', form)).toEqual({ cacheDir: '/mnt/kv', profile: 'quick', trials: 3, extras: false, probe: true });
  });

  it('carries every field set in the form', () => {
    const set: PlanForm = { ...form, durationS: 60, warmUpS: 5, model: 'llama3.1-8b', scenarios: ['cpu-only'], storageCapacityGib: 0 };
    expect(planRequestOf('/mnt/kv', set)).toEqual({
      cacheDir: '/mnt/kv', profile: 'quick', trials: 3, extras: false, probe: true,
      durationS: 60, warmUpS: 5, model: 'llama3.1-8b', scenarios: ['cpu-only'], storageCapacityGib: 0,
    });
  });
});
