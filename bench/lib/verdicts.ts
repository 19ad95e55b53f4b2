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

export type PageCacheMode = 'direct' | 'buffered' | 'buffered+reader';

/** One kvbench run of page-cache-honesty: the bench's own coverages over kvbench's window, and kvbench's own flag. */
export interface PageCacheRun {
  mode: PageCacheMode;
  /** The bench's device read bytes over the window ÷ storage-tier read bytes (null: not measured). */
  readCoverage: number | null;
  /** The engine process's block-layer reads, read by the bench from /proc/<pid>/io, ÷ storage-tier read bytes. */
  engineReadCoverage: number | null;
  kvbenchFlagged: boolean;
  /** kvbench found the files in RAM (a loop device on tmpfs): it then flags every run, whatever the page cache did. */
  ramBacked: boolean;
}

/** Direct I/O: the device the bench sampled read at least `min` of what the storage tier read, in every run. */
export function directReadVerdict(runs: readonly PageCacheRun[], min: number): Verdict {
  const direct = runs.filter((r) => r.mode === 'direct');
  if (direct.length === 0) return { pass: false, line: 'MISS (no direct run measured)' };
  const measured = direct.map((r) => r.readCoverage).filter((x): x is number => x !== null && Number.isFinite(x));
  if (measured.length < direct.length) return { pass: false, line: `MISS (${direct.length - measured.length} of ${direct.length} direct runs without a device sample of the bench's own)` };
  const low = Math.min(...measured);
  return { pass: low >= min, line: `min ${f(low, 3)} over ${measured.length} runs → ${low >= min ? 'PASS' : 'MISS'} (target ≥ ${min})` };
}

/**
 * Buffered I/O: every run the page cache served must be flagged by kvbench. Served, by the bench's
 * own counts: the engine process read less than `min` of the storage tier's bytes from the block
 * layer, or (without that count) the device did. A device count at or above `min` proves nothing (a
 * reader beside it lifts it), so such a run without the engine's count cannot be judged: a MISS.
 */
export function bufferedFlagVerdict(runs: readonly PageCacheRun[], mode: Exclude<PageCacheMode, 'direct'>, min: number): Verdict {
  // On a RAM-backed target kvbench's flag says "RAM" for every run: whether it would have caught the
  // page cache cannot be seen there, so those runs are left out (and said so), never counted as caught.
  const ram = runs.filter((r) => r.mode === mode && r.ramBacked).length;
  const ramNote = ram > 0 ? ` (${ram} RAM-backed run${ram === 1 ? '' : 's'} left out: kvbench flags every run there as RAM)` : '';
  const buffered = runs.filter((r) => r.mode === mode && !r.ramBacked);
  if (buffered.length === 0) return { pass: false, line: `${mode}: MISS (no run measured where kvbench's page-cache flag can be seen)${ramNote}` };
  const served = (r: PageCacheRun): boolean | null =>
    r.engineReadCoverage !== null ? r.engineReadCoverage < min : r.readCoverage !== null && r.readCoverage < min ? true : null;
  const unjudged = buffered.filter((r) => served(r) === null).length;
  const missed = buffered.filter((r) => served(r) === true && !r.kvbenchFlagged).length;
  const flagged = buffered.filter((r) => r.kvbenchFlagged).length;
  const servedCount = buffered.filter((r) => served(r) === true).length;
  const pass = missed === 0 && unjudged === 0;
  return {
    pass,
    line:
      `${mode}: served by the page cache (the bench's counts) in ${servedCount} of ${buffered.length} runs, flagged by kvbench in ${flagged}; ` +
      `served but not flagged: ${missed}${unjudged > 0 ? `; not judged (no engine count, device count ≥ ${min}): ${unjudged}` : ''} → ${pass ? 'PASS' : 'MISS'}${ramNote}`,
  };
}

/** One timeline point's memory (kvbench.timeline[].rss_bytes, heap_used_bytes). */
export interface MemoryPoint {
  rssBytes: number;
  heapUsedBytes: number;
}

/**
 * The engine's memory outside its JS heap against what it reserved: at every sample, RSS less the JS
 * heap in use stays within the buffers reserved at start (`fixedBytes`: CPU tier arena, I/O buffers,
 * staging, payload) plus `runtimeBytes` (code, threads, the heaps' free space). The JS heap itself is
 * left out: it holds the open loop's queue, which grows with the backlog by design (and is reported
 * beside). A buffer churned and left to the GC, or one allocated per request, shows as a MISS.
 */
export function memoryBoundVerdict(points: readonly MemoryPoint[], fixedBytes: number, runtimeBytes: number): Verdict {
  const MiB = 1024 * 1024;
  const bound = fixedBytes + runtimeBytes;
  const rule = `(RSS − JS heap ≤ reserved ${f(fixedBytes / MiB, 0)} MiB + ${f(runtimeBytes / MiB, 0)} MiB runtime = ${f(bound / MiB, 0)} MiB at every sample)`;
  if (points.length === 0) return { pass: false, line: `MISS (no memory sample) ${rule}` };
  const outside = points.map((p) => p.rssBytes - p.heapUsedBytes);
  const peak = Math.max(...outside);
  const over = outside.filter((x) => !(x <= bound)).length;
  if (over === 0) return { pass: true, line: `PASS: peak ${f(peak / MiB, 0)} MiB over ${points.length} samples ${rule}` };
  return { pass: false, line: `MISS (${over} of ${points.length} samples over, peak ${f(peak / MiB, 0)} MiB) ${rule}` };
}
