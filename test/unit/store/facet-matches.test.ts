// History's filters narrow each other (rev12-gui L14): each filter's values are counted over the
// trials the other active filters keep, so a value with no trial under them reads 0.
import { describe, expect, it } from 'vitest';
import { facetMatches } from '../../../src-shared/domain/facet-matches.ts';
import type { TrialRecord } from '../../../src-shared/domain/store-types.ts';

const trial = (id: number, o: { system: string; label: string | null; scenario: string; status?: TrialRecord['status']; model?: string }): TrialRecord =>
  ({
    id,
    systemId: o.system,
    driveId: `${o.system}-d`,
    suiteLabel: o.label,
    scenarioId: o.scenario,
    status: o.status ?? 'complete',
    options: { model: o.model ?? 'tiny-1b' },
  }) as unknown as TrialRecord;

const trials = [
  trial(1, { system: 'A', label: 'revB', scenario: 'storage-only' }),
  trial(2, { system: 'A', label: 'revB', scenario: 'storage-saturation', status: 'failed' }),
  trial(3, { system: 'A', label: 'revA', scenario: 'cpu-only' }),
  trial(4, { system: 'B', label: 'revA', scenario: 'production', model: 'llama3.1-8b' }),
  trial(5, { system: 'B', label: null, scenario: 'storage-only' }),
];

describe('facetMatches', () => {
  it('without filters counts every value', () => {
    const m = facetMatches(trials, {});
    expect(m.systems).toEqual({ A: 3, B: 2 });
    expect(m.suiteLabels).toEqual({ revB: 2, revA: 2 });
    expect(m.scenarioIds).toEqual({ 'storage-only': 2, 'storage-saturation': 1, 'cpu-only': 1, production: 1 });
    expect(m.models).toEqual({ 'tiny-1b': 4, 'llama3.1-8b': 1 });
    expect(m.statuses).toEqual({ complete: 4, failed: 1 });
  });

  it('counts a filter\'s values under the other filters, not under itself', () => {
    const m = facetMatches(trials, { suiteLabels: ['revB'] });
    // The scenarios of revB only: CPU only and production are not among them.
    expect(m.scenarioIds).toEqual({ 'storage-only': 1, 'storage-saturation': 1 });
    expect(m.systems).toEqual({ A: 2 });
    // The labels themselves are counted without the label filter: another one can still be chosen.
    expect(m.suiteLabels).toEqual({ revB: 2, revA: 2 });

    const two = facetMatches(trials, { suiteLabels: ['revA'], systemIds: ['B'] });
    expect(two.scenarioIds).toEqual({ production: 1 });
    expect(two.systems).toEqual({ A: 1, B: 1 });
    expect(two.suiteLabels).toEqual({ revA: 1 }); // system B's trials: revA and one without a label
    expect(two.models).toEqual({ 'llama3.1-8b': 1 });
  });
});
