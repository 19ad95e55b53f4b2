// Small statistics and table helpers for the benches: median, min, max of a few repetitions.

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export function spread(xs: readonly number[]): Spread {
  const finite = xs.filter((x) => Number.isFinite(x));
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite), n: finite.length };
}

export function fmt(x: number | null | undefined, digits = 2): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  return x.toFixed(digits);
}

export function fmtSpread(s: Spread, digits = 2): string {
  return `${fmt(s.median, digits)} (min ${fmt(s.min, digits)}, max ${fmt(s.max, digits)}, n=${s.n})`;
}

/** A plain-text table: the first row is the header; columns are padded to their widest cell. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const line = (row: readonly string[]): string => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  const out = [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const row of rows.slice(1)) out.push(line(row));
  return out.join('\n');
}
