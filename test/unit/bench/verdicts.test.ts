// The benches' verdicts against their fixed targets: a miss must read MISS (and make the bench exit
// non-zero), never PASS because a median or a table looked fine.
import { describe, expect, it } from 'vitest';
import { lagP99Verdict, lockHoldVerdict } from '../../../bench/lib/verdicts.ts';

describe('many-users-lag: event-loop lag P99 against 20 ms', () => {
  it('passes only when every run is under the target', () => {
    expect(lagP99Verdict([3.4, 4.1, 19.9], 20)).toEqual({ pass: true, line: 'PASS: all 3 runs under (target < 20 ms in every run)' });
  });

  it('one run over is a MISS that says how many, even with the median under the target', () => {
    expect(lagP99Verdict([3.4, 25, 4.1], 20)).toEqual({ pass: false, line: 'MISS (1 of 3 runs over, highest 25.00 ms) (target < 20 ms in every run)' });
    expect(lagP99Verdict([20, 30, 4], 20).line).toMatch(/^MISS \(2 of 3 runs over/); // at the target is not under it
  });

  it('no run, or a run without a lag, is no evidence', () => {
    expect(lagP99Verdict([], 20).pass).toBe(false);
    expect(lagP99Verdict([3, Number.NaN], 20)).toMatchObject({ pass: false, line: expect.stringMatching(/^MISS \(1 of 2 runs over/) });
  });
});

describe('import-lock-hold: the write lock grows linearly and stays under busy_timeout', () => {
  it('a hold per file that stays flat passes (the 2026-11 numbers: 0.88 → 0.71 ms per file)', () => {
    const v = lockHoldVerdict([{ files: 400, longestHoldMs: 350 }, { files: 800, longestHoldMs: 610 }, { files: 2000, longestHoldMs: 1420 }], 10_000);
    expect(v.pass).toBe(true);
    expect(v.lines[0]).toBe('hold per file at 2000 files ÷ at 400 files: 0.710 ÷ 0.875 ms = 0.811 → PASS (linear growth: ≤ 2.24, the geometric middle of 1 for linear and 5.00 for quadratic)');
    expect(v.lines[1]).toMatch(/^longest hold 1\.42 s → PASS/);
  });

  it('quadratic growth is a MISS although every hold is under the busy_timeout (the numbers before the fix, scaled down)', () => {
    const v = lockHoldVerdict([{ files: 400, longestHoldMs: 600 }, { files: 2000, longestHoldMs: 9000 }], 10_000);
    expect(v.pass).toBe(false);
    expect(v.lines[0]).toMatch(/= 3\.000 → MISS \(linear growth: ≤ 2\.24/);
    expect(v.lines[1]).toMatch(/→ PASS/);
  });

  it('any hold at or above the busy_timeout is a MISS, however flat the growth', () => {
    const v = lockHoldVerdict([{ files: 1000, longestHoldMs: 5000 }, { files: 2000, longestHoldMs: 10_000 }], 10_000);
    expect(v.pass).toBe(false);
    expect(v.lines[0]).toMatch(/→ PASS/);
    expect(v.lines[1]).toBe('MISS: 2000 files held the lock 10.00 s, at or above the 10 s busy_timeout: a suite storing a trial then would fail');
  });

  it('one file count cannot show growth: MISS', () => {
    expect(lockHoldVerdict([{ files: 400, longestHoldMs: 100 }], 10_000)).toEqual({ pass: false, lines: ['MISS (fewer than two file counts measured: no growth to judge)'] });
  });
});
