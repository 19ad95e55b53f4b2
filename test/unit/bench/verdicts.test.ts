// The benches' verdicts against their fixed targets: a miss must read MISS (and make the bench exit
// non-zero), never PASS because a median or a table looked fine.
import { describe, expect, it } from 'vitest';
import { bufferedFlagVerdict, directReadVerdict, lagP99Verdict, lockHoldVerdict, memoryBoundVerdict, type PageCacheRun } from '../../../bench/lib/verdicts.ts';

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

describe('page-cache-honesty: judged by the bench\'s own device and engine counts, never by kvbench\'s', () => {
  const run = (over: Partial<PageCacheRun>): PageCacheRun => ({ mode: 'direct', readCoverage: 1.001, engineReadCoverage: 1.0, kvbenchFlagged: false, ramBacked: false, ...over });

  it('direct I/O passes when the device the bench sampled read what the storage tier read', () => {
    expect(directReadVerdict([run({}), run({ readCoverage: 0.97 })], 0.95)).toEqual({ pass: true, line: 'min 0.970 over 2 runs → PASS (target ≥ 0.95)' });
  });

  it("direct I/O misses when the bench's device read less, whatever kvbench says about itself (a wrong device, a wrong window)", () => {
    expect(directReadVerdict([run({ readCoverage: 0.4, kvbenchFlagged: false })], 0.95)).toMatchObject({ pass: false, line: expect.stringMatching(/→ MISS/) });
    expect(directReadVerdict([run({ readCoverage: null })], 0.95).line).toBe("MISS (1 of 1 direct runs without a device sample of the bench's own)");
    expect(directReadVerdict([run({ mode: 'buffered' })], 0.95).line).toBe('MISS (no direct run measured)');
  });

  it('a buffered run the page cache served (by the engine count the bench read) must be flagged by kvbench', () => {
    const servedFlagged = run({ mode: 'buffered', readCoverage: 0.01, engineReadCoverage: 0.0, kvbenchFlagged: true });
    expect(bufferedFlagVerdict([servedFlagged], 'buffered', 0.95).pass).toBe(true);
    const servedUnflagged = run({ mode: 'buffered', readCoverage: 0.01, engineReadCoverage: 0.0, kvbenchFlagged: false });
    expect(bufferedFlagVerdict([servedFlagged, servedUnflagged], 'buffered', 0.95)).toEqual({
      pass: false,
      line: 'buffered: served by the page cache (the bench\'s counts) in 2 of 2 runs, flagged by kvbench in 1; served but not flagged: 1 → MISS',
    });
  });

  it('beside another reader the device count proves nothing: the engine count decides, and without it the run is not judged', () => {
    // The reader lifted the device to 3.4 × the tier's reads; the engine itself read nothing from the device.
    const hidden = run({ mode: 'buffered+reader', readCoverage: 3.4, engineReadCoverage: 0.0, kvbenchFlagged: false });
    expect(bufferedFlagVerdict([hidden], 'buffered+reader', 0.95).pass).toBe(false);
    const unknown = run({ mode: 'buffered+reader', readCoverage: 3.4, engineReadCoverage: null, kvbenchFlagged: true });
    expect(bufferedFlagVerdict([unknown], 'buffered+reader', 0.95).line).toMatch(/not judged \(no engine count, device count ≥ 0\.95\): 1 → MISS$/);
    // Reads that really reached the device need no flag.
    expect(bufferedFlagVerdict([run({ mode: 'buffered', readCoverage: 1.02, engineReadCoverage: 1.0 })], 'buffered', 0.95).pass).toBe(true);
    expect(bufferedFlagVerdict([], 'buffered', 0.95).line).toBe("buffered: MISS (no run measured where kvbench's page-cache flag can be seen)");
  });

  it('on a RAM-backed target kvbench flags every run as RAM: such a flag is no proof it saw the page cache', () => {
    const ram = run({ mode: 'buffered', readCoverage: 0.0, engineReadCoverage: 0.0, kvbenchFlagged: true, ramBacked: true });
    expect(bufferedFlagVerdict([ram], 'buffered', 0.95)).toEqual({
      pass: false,
      line: "buffered: MISS (no run measured where kvbench's page-cache flag can be seen) (1 RAM-backed run left out: kvbench flags every run there as RAM)",
    });
    const disk = run({ mode: 'buffered', readCoverage: 0.0, engineReadCoverage: 0.0, kvbenchFlagged: true });
    expect(bufferedFlagVerdict([ram, disk], 'buffered', 0.95)).toMatchObject({ pass: true, line: expect.stringMatching(/in 1 of 1 runs.*→ PASS \(1 RAM-backed run left out/) });
  });
});

describe('engine-memory: RSS outside the JS heap within what the engine reserved', () => {
  const MiB = 1024 * 1024;
  const at = (rssMiB: number, heapMiB: number) => ({ rssBytes: rssMiB * MiB, heapUsedBytes: heapMiB * MiB });

  it('passes a plateau within reserved + runtime, whatever the JS heap does (this branch: 1.45 GiB reserved)', () => {
    const v = memoryBoundVerdict([at(868, 23), at(1579, 48), at(1748, 109)], 1488 * MiB, 384 * MiB);
    expect(v).toEqual({ pass: true, line: 'PASS: peak 1639 MiB over 3 samples (RSS − JS heap ≤ reserved 1488 MiB + 384 MiB runtime = 1872 MiB at every sample)' });
  });

  it('is a MISS when buffers left to the GC pile up (0.7.0: 2.5 GiB with 336 MiB reserved beside a 1 GiB tier)', () => {
    const v = memoryBoundVerdict([at(1306, 19), at(2502, 79), at(1746, 88)], (336 + 1024) * MiB, 384 * MiB);
    expect(v.pass).toBe(false);
    expect(v.line).toMatch(/^MISS \(1 of 3 samples over, peak 2423 MiB\)/);
  });

  it('no sample is no evidence', () => {
    expect(memoryBoundVerdict([], MiB, MiB).pass).toBe(false);
  });
});
