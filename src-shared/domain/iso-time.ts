/**
 * The furthest a JavaScript Date reaches from 1970, either way (ECMA-262: ±100,000,000 days, in ms).
 * Beyond it `new Date(ms)` is an Invalid Date, whose toISOString() throws "Invalid time value".
 */
export const MAX_DATE_MS = 8.64e15;

/** `ms` since 1970 as ISO 8601 (`2026-11-24T13:26:14.000Z`), or null when no Date can hold it (a typo, a damaged file). */
export function isoTimeOrNull(ms: number): string | null {
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? new Date(ms).toISOString() : null;
}
