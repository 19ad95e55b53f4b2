/**
 * Unit formatters shared by the console summary and the XLSX export.
 *
 * Every function names the unit it takes and the unit it prints. Binary sizes use IEC names
 * (KiB, MiB, GiB = 1024^n bytes); decimal rates use SI names (GB/s = 10^9 bytes per second).
 * The reference benchmark prints "GB" where it means GiB; functions that reproduce its text say so.
 */

export const BYTES_PER_KIB = 1024;
export const BYTES_PER_MIB = 1024 ** 2;
export const BYTES_PER_GIB = 1024 ** 3;
export const BYTES_PER_TIB = 1024 ** 4;
export const BYTES_PER_GB_DECIMAL = 1e9;
export const NS_PER_MS = 1e6;
export const NS_PER_S = 1e9;

/**
 * Python's `f"{x:.{digits}f}"`: fixed decimals, `inf`/`-inf`/`nan` for non-finite values, so text
 * that reproduces the reference prints what the reference prints.
 */
export function formatFixedPy(value: number, digits: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  const text = value.toFixed(digits);
  // toFixed keeps the sign of a value that rounds to zero ("-0.00"), as Python does; leave it.
  return text;
}

/** Python's `f"{n:,}"` for an integer: thousands separated by commas ("1,234,567"). */
export function formatIntegerGrouped(value: number): string {
  if (!Number.isFinite(value)) return formatFixedPy(value, 0);
  const rounded = Math.trunc(value);
  const sign = rounded < 0 ? '-' : '';
  const digits = String(Math.abs(rounded));
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A ratio (0..1) as a percentage with the unit: 0.6534 → "65.3%" (Python's `{:.1%}`). */
export function formatRatioAsPercent(ratio: number, digits = 1): string {
  return `${formatFixedPy(ratio * 100, digits)}%`;
}

/** Bytes → GiB (1024^3 bytes) as a number. */
export function bytesToGiB(bytes: number): number {
  return bytes / BYTES_PER_GIB;
}

/** Nanoseconds → milliseconds as a number. */
export function nsToMs(ns: number): number {
  return ns / NS_PER_MS;
}

/**
 * Bytes in the largest binary unit that keeps the value ≥ 1, with the unit named:
 * "1.23 GiB", "512.0 MiB", "4.0 KiB", "17 B". GiB and TiB get 2 decimals, KiB and MiB 1.
 */
export function formatBytesBinary(bytes: number): string {
  if (!Number.isFinite(bytes)) return `${formatFixedPy(bytes, 0)} B`;
  const abs = Math.abs(bytes);
  if (abs >= BYTES_PER_TIB) return `${formatFixedPy(bytes / BYTES_PER_TIB, 2)} TiB`;
  if (abs >= BYTES_PER_GIB) return `${formatFixedPy(bytes / BYTES_PER_GIB, 2)} GiB`;
  if (abs >= BYTES_PER_MIB) return `${formatFixedPy(bytes / BYTES_PER_MIB, 1)} MiB`;
  if (abs >= BYTES_PER_KIB) return `${formatFixedPy(bytes / BYTES_PER_KIB, 1)} KiB`;
  return `${formatFixedPy(bytes, 0)} B`;
}

/** Bytes always in GiB (1024^3), 2 decimals, unit named: "0.05 GiB". */
export function formatBytesAsGiB(bytes: number, digits = 2): string {
  return `${formatFixedPy(bytesToGiB(bytes), digits)} GiB`;
}

/** Bytes per second in decimal GB/s (10^9 bytes per second): "1.23 GB/s". */
export function formatBytesPerSecAsGBps(bytesPerSec: number, digits = 2): string {
  return `${formatFixedPy(bytesPerSec / BYTES_PER_GB_DECIMAL, digits)} GB/s`;
}

/** Bytes per second in binary GiB/s (1024^3 bytes per second): "1.15 GiB/s". */
export function formatBytesPerSecAsGiBps(bytesPerSec: number, digits = 2): string {
  return `${formatFixedPy(bytesPerSec / BYTES_PER_GIB, digits)} GiB/s`;
}

/** Nanoseconds as milliseconds, 2 decimals, unit named: 12_345_678 → "12.35 ms". */
export function formatNsAsMs(ns: number, digits = 2): string {
  return `${formatFixedPy(nsToMs(ns), digits)} ms`;
}

/**
 * A latency normalised per MiB moved (ns per MiB) as milliseconds per MiB, unit named:
 * 52_000 → "0.052 ms/MiB". Three decimals because fast tiers move a MiB in tens of microseconds.
 */
export function formatNsPerMiBAsMsPerMiB(nsPerMiB: number, digits = 3): string {
  return `${formatFixedPy(nsToMs(nsPerMiB), digits)} ms/MiB`;
}

/** A value already in milliseconds (the reference's `*_ms` keys), 2 decimals: "12.35 ms". */
export function formatMs(ms: number, digits = 2): string {
  return `${formatFixedPy(ms, digits)} ms`;
}

/** Nanoseconds as seconds, 2 decimals, unit named: "60.01 s". */
export function formatNsAsSeconds(ns: number, digits = 2): string {
  return `${formatFixedPy(ns / NS_PER_S, digits)} s`;
}
