// The verdicts of the benches that judge against a fixed target, kept apart from their runs so that
// the rules themselves are tested (test/unit/bench/verdicts.test.ts): a bench that cannot print MISS
// for a miss measures nothing.

export interface Verdict {
  pass: boolean;
  /** One line: the numbers, the rule, PASS or MISS. */
  line: string;
}

const f = (x: number, digits = 2): string => (Number.isFinite(x) ? x.toFixed(digits) : '-');

/**
 * Event-loop lag P99 of every repetition against the target: one run over it is a miss (the target
 * is per run: a user gets one run, not the median of three); no run at all is no evidence.
 */
export function lagP99Verdict(p99Ms: readonly number[], targetMs: number): Verdict {
  const over = p99Ms.filter((x) => !(x < targetMs)).length;
  const rule = `(target < ${targetMs} ms in every run)`;
  if (p99Ms.length === 0) return { pass: false, line: `MISS (no run measured) ${rule}` };
  if (over === 0) return { pass: true, line: `PASS: all ${p99Ms.length} runs under ${rule}` };
  return { pass: false, line: `MISS (${over} of ${p99Ms.length} runs over, highest ${f(Math.max(...p99Ms))} ms) ${rule}` };
}

export interface LockHold {
  files: number;
  longestHoldMs: number;
}

/**
 * `kvbench import`'s longest write-lock hold against two rules:
 * - no hold reaches `busyTimeoutMs`: a writer waiting that long fails (SQLITE_BUSY);
 * - the hold grows linearly with the files: hold per file at the largest count ÷ hold per file at the
 *   smallest stays at most √(largest count ÷ smallest count). Linear growth gives 1, quadratic growth
 *   (every file scanning the ones before it, the bug this bench was written for) gives the count
 *   ratio itself; the bound is their geometric middle, so timing noise of either sign up to that
 *   factor does not decide the verdict (400 and 2,000 files: bound 2.24, quadratic 5).
 */
export function lockHoldVerdict(rows: readonly LockHold[], busyTimeoutMs: number): { pass: boolean; lines: string[] } {
  const counts = [...new Set(rows.map((r) => r.files))];
  if (counts.length < 2) return { pass: false, lines: ['MISS (fewer than two file counts measured: no growth to judge)'] };
  const smallest = rows.reduce((a, b) => (b.files < a.files ? b : a));
  const largest = rows.reduce((a, b) => (b.files > a.files ? b : a));
  const perFile = (r: LockHold): number => r.longestHoldMs / r.files;
  const ratio = perFile(largest) / perFile(smallest);
  const bound = Math.sqrt(largest.files / smallest.files);
  // Equal holds per file are linear growth, however small (a hold of 0 at both ends included).
  const growthOk = perFile(largest) <= perFile(smallest) || ratio <= bound;
  const tooLong = rows.filter((r) => r.longestHoldMs >= busyTimeoutMs);
  return {
    pass: growthOk && tooLong.length === 0,
    lines: [
      `hold per file at ${largest.files} files ÷ at ${smallest.files} files: ${f(perFile(largest), 3)} ÷ ${f(perFile(smallest), 3)} ms = ${f(ratio, 3)} → ` +
        `${growthOk ? 'PASS' : 'MISS'} (linear growth: ≤ ${f(bound, 2)}, the geometric middle of 1 for linear and ${f(largest.files / smallest.files, 2)} for quadratic)`,
      tooLong.length === 0
        ? `longest hold ${f(Math.max(...rows.map((r) => r.longestHoldMs)) / 1000, 2)} s → PASS (below the ${busyTimeoutMs / 1000} s busy_timeout a waiting writer gives up after)`
        : `MISS: ${tooLong.map((r) => `${r.files} files held the lock ${f(r.longestHoldMs / 1000, 2)} s`).join(', ')}, at or above the ${busyTimeoutMs / 1000} s busy_timeout: a suite storing a trial then would fail`,
    ],
  };
}
