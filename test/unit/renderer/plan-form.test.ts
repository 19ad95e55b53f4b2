// The plan form's rules, without Pinia or a page: how a number field's text becomes the value
// planned (never clamped or rounded), and which fields the plan request carries.
import { describe, expect, it } from 'vitest';
import { parseNumberField, planFieldsNamedIn, planMessagesByField, planRequestOf, type PlanForm } from '../../../src-renderer/plan-form.ts';

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

  it('requests per trial: empty or 0 is off (each trial its whole duration), else a whole number of requests', () => {
    expect(parseNumberField('maxRequests', '')).toEqual({ value: 0 });
    expect(parseNumberField('maxRequests', '0')).toEqual({ value: 0 });
    expect(parseNumberField('maxRequests', ' 250 ')).toEqual({ value: 250 });
    for (const bad of ['-1', '2.5', 'x', '1e300']) expect(problemOf(parseNumberField('maxRequests', bad)), bad).toContain('must be a whole number, 0 or more');
  });

  it("storage capacity: empty is the profile's cap, else any number of GiB from 0, fractions kept", () => {
    expect(parseNumberField('storageCapacityGib', '')).toEqual({ value: null });
    expect(parseNumberField('storageCapacityGib', '0')).toEqual({ value: 0 });
    expect(parseNumberField('storageCapacityGib', '2.5')).toEqual({ value: 2.5 });
    for (const bad of ['-5', 'Infinity', '1000001', 'x']) expect(problemOf(parseNumberField('storageCapacityGib', bad))).toContain('number of GiB, 0 or more');
  });

  it('text the browser could not read is refused, not taken as the empty field it reports', () => {
    for (const field of ['trials', 'durationS', 'warmUpS', 'maxRequests', 'storageCapacityGib'] as const) expect(problemOf(parseNumberField(field, '', true))).not.toBeNull();
  });
});

describe('the plan request', () => {
  const form: PlanForm = { profile: 'quick', trials: 3, durationS: null, warmUpS: 0, maxRequests: 0, model: '', scenarios: null, extras: false, probe: true, storageCapacityGib: null, label: 'ignored' };

  it("leaves out what the profile decides, and the label (Start's, not the plan's)", () => {
    expect(planRequestOf('/mnt/kv', form)).toEqual({ cacheDir: '/mnt/kv', profile: 'quick', trials: 3, extras: false, probe: true });
  });

  it('carries every field set in the form', () => {
    const set: PlanForm = { ...form, durationS: 60, warmUpS: 5, maxRequests: 40, model: 'llama3.1-8b', scenarios: ['cpu-only'], storageCapacityGib: 0 };
    expect(planRequestOf('/mnt/kv', set)).toEqual({
      cacheDir: '/mnt/kv', profile: 'quick', trials: 3, extras: false, probe: true,
      durationS: 60, warmUpS: 5, maxRequests: 40, model: 'llama3.1-8b', scenarios: ['cpu-only'], storageCapacityGib: 0,
    });
  });
});

describe("the fields the backend's messages name", () => {
  // The planner's problems as planSuite writes them (planner.test checks that), in the CLI's words.
  const TOO_SMALL = '--storage-capacity-gb 0.0001 cannot hold one KV entry of tiny-1b (the largest is 0.58 GiB), so cpu-only would fail: set it to at least 2 GiB, or 0 (95 % of the free space)';
  const NO_ROOM = 'the cache directory cannot hold this suite: it needs 2.00 GiB free (cpu-only: storage tier 2 GiB) but /mnt/kv has 20.0 MiB free. Free space, choose another --cache-dir, or set a smaller --storage-capacity-gb';

  it('names a field by the flag of `kvbench suite` that sets the same, or the cache directory by its name', () => {
    expect(planFieldsNamedIn(TOO_SMALL)).toEqual(['storageCapacityGib']);
    expect(planFieldsNamedIn(NO_ROOM)).toEqual(['storageCapacityGib', 'cacheDir']);
    expect(planFieldsNamedIn('the cache directory /mnt/ro is not writable')).toEqual(['cacheDir']);
    expect(planFieldsNamedIn('--trials must be an integer from 1 to 100, got 0\n--duration must be a positive integer (seconds), got 0\n--warm-up must be an integer from 0 to 3600 (seconds), got -1')).toEqual(['trials', 'durationS', 'warmUpS']);
    expect(planFieldsNamedIn('--max-requests must be an integer ≥ 0 (0 = the duration alone), got -1')).toEqual(['maxRequests']);
    expect(planFieldsNamedIn('--model: unknown model "x"')).toEqual(['model']);
    expect(planFieldsNamedIn('nothing to run: every chosen scenario was skipped')).toEqual([]);
  });

  it('only a whole flag: not inside a path, not the start of a longer flag', () => {
    expect(planFieldsNamedIn('see /mnt/--trials/x and --trials-per-x')).toEqual([]);
    expect(planFieldsNamedIn('--storage-capacity-gbx')).toEqual([]);
  });

  it('gathers, per field, the ids of the messages that name it', () => {
    expect(planMessagesByField([{ id: 'p0', text: TOO_SMALL }, { id: 'p1', text: NO_ROOM }, { id: 'p2', text: 'nothing to run' }])).toEqual({
      storageCapacityGib: ['p0', 'p1'],
      cacheDir: ['p1'],
    });
    expect(planMessagesByField([])).toEqual({});
  });
});
