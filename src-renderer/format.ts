// Numbers for people, in the units chosen in Settings: bandwidth and sizes in decimal (GB/s, as
// drive makers state) or binary (GiB/s) units, latencies in ms or µs. Every value shows its unit.
import type { EndpointMetricUnit, ServerMetricUnit } from '../src-shared/domain/endpoint.ts';
import { binaryBytesText, driveLabelSizeSuffix, type CacheDirInfo } from '../src-shared/domain/hardware.ts';
import { groupedFixed } from '../src-shared/domain/number-text.ts';
import type { Advice } from '../src-shared/ipc/contract.ts';
import { printable } from '../src-shared/domain/label-text.ts';
import { placeLabel } from '../src-shared/domain/places.ts';
import type { StatedSize } from '../src-shared/domain/scenarios.ts';
import type { MetricUnit } from '../src-shared/domain/store-types.ts';

export interface UnitPrefs {
  byteUnits: 'decimal' | 'binary';
  latencyUnit: 'ms' | 'us';
}

export const DEFAULT_UNITS: UnitPrefs = { byteUnits: 'decimal', latencyUnit: 'ms' };

const DASH = '—';
const finite = (v: number | null | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

export function fmtNumber(v: number | null | undefined, digits?: number): string {
  if (!finite(v)) return DASH;
  const d = digits ?? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2);
  return groupedFixed(v, d);
}

/** A yes/no fact stored as 1 or 0; any other value as the number it is. */
export function fmtFlag(v: number | null | undefined): string {
  return v === 1 ? 'yes' : v === 0 ? 'no' : fmtNumber(v);
}

export function fmtInt(v: number | null | undefined): string {
  return finite(v) ? Math.round(v).toLocaleString('en-US') : DASH;
}

/** A count and its noun, singular for exactly one: "1 request", "8 requests", "— requests" when unknown. */
export function fmtCount(n: number | null | undefined, one: string, many = `${one}s`): string {
  return `${fmtInt(n)} ${n === 1 ? one : many}`;
}

function scaled(v: number, base: number, units: readonly string[]): string {
  let x = v;
  let i = 0;
  while (Math.abs(x) >= base && i < units.length - 1) {
    x /= base;
    i++;
  }
  return `${fmtNumber(x, i === 0 ? 0 : Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2)} ${units[i]}`;
}

export function fmtBytes(v: number | null | undefined, u: UnitPrefs = DEFAULT_UNITS): string {
  if (!finite(v)) return DASH;
  return u.byteUnits === 'binary' ? scaled(v, 1024, ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']) : scaled(v, 1000, ['B', 'kB', 'MB', 'GB', 'TB', 'PB']);
}

/** A tier size given in GiB, as the run options give it (the reference's `*_gb`), in the chosen units; 0 disables the tier: "none". */
export function fmtGib(gib: number | null | undefined, u: UnitPrefs = DEFAULT_UNITS): string {
  if (!finite(gib)) return DASH;
  return gib === 0 ? 'none' : fmtBytes(gib * 1024 ** 3, u);
}

/**
 * A drive's name in the units chosen in Settings. A drive known by its local device is stored with
 * its size in binary units, "virtual disk vda (256 GiB)" (the CLI's name for it, and old trials keep
 * theirs): where its byte count is at hand (a hardware profile, the trial's snapshot), that size is
 * restated, "virtual disk vda (275 GB)". A name whose size is not the byte count's keeps its text.
 */
export function fmtDriveLabel(label: string, sizeBytes: number | null | undefined, u: UnitPrefs = DEFAULT_UNITS): string {
  if (!finite(sizeBytes)) return label;
  const suffix = driveLabelSizeSuffix(sizeBytes);
  return label.endsWith(suffix) ? `${label.slice(0, -suffix.length)} (${fmtBytes(sizeBytes, u)})` : label;
}

/**
 * A stored label, or text quoting one, where a page can show only text (a select's option, a chart's
 * axis, a dialog's title, an aria-label): its control characters and bidirectional overrides written
 * escaped (`\u{202e}`), as the CLI prints them. In a page's own text, LabelText shows it marked and isolated.
 */
export const shownLabel = (text: string): string => printable(text);

/** "lab1" or "lab1 · virtual disk vda (275 GB)": placeLabel with the drive's size in the chosen units. */
export function fmtPlaceLabel(x: { systemLabel: string; driveLabel: string | null; driveSizeBytes?: number | null }, u: UnitPrefs = DEFAULT_UNITS): string {
  return placeLabel({ systemLabel: x.systemLabel, driveLabel: x.driveLabel === null ? null : fmtDriveLabel(x.driveLabel, x.driveSizeBytes, u) });
}

const NBSP = '\u00a0';

/**
 * A size a run option gives in GiB (the reference's `--*-gb` flags, the Plan step's "(GiB)" fields)
 * in the chosen units, 0 as "none". In decimal units the option's own value follows, so that the
 * size can be matched with the field it was typed in: "17.2 GB (16 GiB)". A number and its unit are
 * joined by a no-break space: in a narrow table the GiB wraps under the size, never a unit alone.
 */
export function fmtGibOption(gib: number | null | undefined, u: UnitPrefs = DEFAULT_UNITS): string {
  const size = fmtGib(gib, u).replace(' ', NBSP);
  if (!finite(gib) || gib === 0 || u.byteUnits === 'binary') return size;
  return `${size} (${gib.toLocaleString('en-US', { maximumFractionDigits: 3 })}${NBSP}GiB)`;
}

/** Advice's text with the size it states (in binary units, as the CLI prints it) in the chosen units, as fmtDriveLabel does a drive's. */
export function fmtAdviceMessage(a: Advice, u: UnitPrefs = DEFAULT_UNITS): string {
  if (a.sizes) return fmtStatedSizes(a.message, a.sizes, u);
  return a.sizeBytes === undefined ? a.message : fmtStatedSizes(a.message, [{ bytes: a.sizeBytes, text: binaryBytesText(a.sizeBytes) }], u);
}

/**
 * A backend message with the sizes it states (written in binary units for the CLI) in the chosen
 * units: each size's first occurrence not yet restated, in any order, so two sizes never land on one place.
 */
export function fmtStatedSizes(message: string, sizes: readonly StatedSize[], u: UnitPrefs = DEFAULT_UNITS, show: (bytes: number, u: UnitPrefs) => string = fmtBytes): string {
  let out = message;
  // Each size found is held by a marker until all are found, so a size's new text is never taken for another's old one.
  sizes.forEach((s, i) => {
    out = out.replace(s.text, `\u0000${i}\u0000`);
  });
  return out.replace(/\u0000(\d+)\u0000/g, (_, i: string) => show(sizes[Number(i)]!.bytes, u));
}

export function fmtRate(v: number | null | undefined, u: UnitPrefs = DEFAULT_UNITS): string {
  if (!finite(v)) return DASH;
  return u.byteUnits === 'binary' ? scaled(v, 1024, ['B/s', 'KiB/s', 'MiB/s', 'GiB/s', 'TiB/s']) : scaled(v, 1000, ['B/s', 'kB/s', 'MB/s', 'GB/s', 'TB/s']);
}

/** The divisor and unit for a bandwidth axis whose largest value is `max`. */
export function rateAxis(max: number, u: UnitPrefs = DEFAULT_UNITS): { divisor: number; unit: string } {
  const base = u.byteUnits === 'binary' ? 1024 : 1000;
  const units = u.byteUnits === 'binary' ? ['B/s', 'KiB/s', 'MiB/s', 'GiB/s'] : ['B/s', 'kB/s', 'MB/s', 'GB/s'];
  let i = 0;
  while (max >= base ** (i + 1) && i < units.length - 1) i++;
  return { divisor: base ** i, unit: units[i] };
}

/**
 * The divisor and unit for a memory or size axis whose largest value is `max` bytes: MiB/GiB in binary
 * units, MB/GB in decimal, as Settings chose (the values stay bytes; only the axis divides them).
 */
export function bytesAxis(max: number, u: UnitPrefs = DEFAULT_UNITS): { divisor: number; unit: string } {
  const base = u.byteUnits === 'binary' ? 1024 : 1000;
  const units = u.byteUnits === 'binary' ? ['B', 'KiB', 'MiB', 'GiB', 'TiB'] : ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (max >= base ** (i + 1) && i < units.length - 1) i++;
  return { divisor: base ** i, unit: units[i] };
}

/**
 * A span of time given in nanoseconds that can be short or long (how late an arrival was issued):
 * "340 ms" under a second, "12.3 s" under a minute, then as fmtDuration ("3 min 20 s").
 */
export function fmtSpanNs(ns: number | null | undefined): string {
  if (!finite(ns)) return DASH;
  if (ns < 1e9) return `${fmtNumber(ns / 1e6, 0)} ms`;
  if (ns < 60e9) return `${fmtNumber(ns / 1e9, 1)} s`;
  return fmtDuration(ns / 1e9);
}

/**
 * A latency given in milliseconds. Below 0.1 of the unit shown, fixed decimals would round a real
 * latency (a page-cache hit takes a few µs) to "0.00 ms": such values get two significant digits.
 */
export function fmtLatencyMs(ms: number | null | undefined, u: UnitPrefs = DEFAULT_UNITS): string {
  if (!finite(ms)) return DASH;
  const v = u.latencyUnit === 'us' ? ms * 1000 : ms;
  const text =
    v !== 0 && Math.abs(v) < 0.1
      ? v.toLocaleString('en-US', { minimumSignificantDigits: 2, maximumSignificantDigits: 2 })
      : fmtNumber(v, u.latencyUnit === 'us' ? (Math.abs(v) >= 100 ? 0 : 1) : undefined);
  return `${text} ${latencyUnitLabel(u)}`;
}

export function latencyUnitLabel(u: UnitPrefs = DEFAULT_UNITS): string {
  return u.latencyUnit === 'us' ? 'µs' : 'ms';
}

export function msIn(ms: number, u: UnitPrefs = DEFAULT_UNITS): number {
  return u.latencyUnit === 'us' ? ms * 1000 : ms;
}

export function fmtPct(v: number | null | undefined, digits = 1): string {
  return finite(v) ? `${(v * 100).toFixed(digits)} %` : DASH;
}

export function fmtRatio(v: number | null | undefined): string {
  return finite(v) ? `${v.toFixed(2)}×` : DASH;
}

/** Seconds as "1 h 05 min", "3 min 20 s", "45 s". */
export function fmtDuration(seconds: number | null | undefined): string {
  if (!finite(seconds)) return DASH;
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/**
 * A path cut after each separator ("/var/tmp/", "kvbench.db"): shown with a line break allowed
 * between the parts, a long path wraps at its folders, not inside a name.
 */
export function pathParts(p: string): string[] {
  return p.match(/[^/]*\/|[^/]+$/g) ?? [p];
}

export function fmtDate(iso: string | null | undefined): string {
  if (!iso) return DASH;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A moment's local time of day, to the second (HH:MM:SS). */
export function fmtTimeOfDay(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A metric value in its catalogue unit (the storage trials', or the endpoint runs' and their server metrics'), with the unit. */
export function fmtMetric(v: number | null | undefined, unit: MetricUnit | EndpointMetricUnit | ServerMetricUnit, u: UnitPrefs = DEFAULT_UNITS): string {
  if (!finite(v)) return DASH;
  switch (unit) {
    case 'tok/s':
      return `${fmtNumber(v)} tok/s`;
    case 'req/s':
      return `${fmtNumber(v)} req/s`;
    case 'ms':
      return fmtLatencyMs(v, u);
    case 'ms/MiB':
      return u.latencyUnit === 'us' ? `${fmtNumber(v * 1000)} µs/MiB` : `${fmtNumber(v)} ms/MiB`;
    case 'bytes':
      return fmtBytes(v, u);
    case 'bytes/s':
      return fmtRate(v, u);
    case 'ratio':
      return fmtPct(v);
    case 'count':
      return fmtNumber(v, Number.isInteger(v) ? 0 : 1);
    case 'users':
      return `${fmtNumber(v, Number.isInteger(v) ? 0 : 1)} users`;
    case 's':
    case 'seconds':
      return `${fmtNumber(v)} s`;
    case 'tokens':
    case 'blocks':
      return `${fmtNumber(v, Number.isInteger(v) ? 0 : 1)} ${unit}`;
  }
}
