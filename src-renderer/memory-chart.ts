// The engine's memory chart, live on the Run step and of a stored trial in its details: one series per
// kind of memory, the bytes converted only here, for the axis, in the units chosen in Settings (MiB/GiB
// in binary units, MB/GB in decimal). Pure: tested without a DOM.
import { COLORS } from './charts.ts';
import type { LineSeries } from './components/chart-types.ts';
import { bytesAxis, type UnitPrefs } from './format.ts';

/** The engine's memory samples by kind, in bytes (null: no sample at that point), as the live chart and a stored trial's have them. */
export interface MemoryColumns {
  rssBytes: readonly (number | null)[];
  heapUsedBytes: readonly (number | null)[];
  arrayBuffersBytes: readonly (number | null)[];
  byteWorkersHeapUsedBytes?: readonly (number | null)[];
}

/**
 * The memory chart's series, every kind in one unit chosen by the largest RSS (MiB in binary units,
 * MB in decimal): the Run step's live chart and a stored trial's. The byte workers' heaps only where measured.
 */
export function memorySeries(m: MemoryColumns, u: UnitPrefs): { series: LineSeries[]; unit: string } {
  let maxRssBytes = 1;
  for (const v of m.rssBytes) if (v !== null && v > maxRssBytes) maxRssBytes = v;
  const axis = bytesAxis(maxRssBytes, u);
  const inUnit = (v: number | null): number | null => (v === null ? null : v / axis.divisor);
  const series: LineSeries[] = [
    { label: `RSS (${axis.unit})`, data: m.rssBytes.map(inUnit), color: COLORS[0]! },
    { label: `JS heap in use (${axis.unit})`, data: m.heapUsedBytes.map(inUnit), color: COLORS[1]! },
    { label: `Array buffers (${axis.unit})`, data: m.arrayBuffersBytes.map(inUnit), color: COLORS[2]!, dashed: true },
  ];
  const workers = m.byteWorkersHeapUsedBytes;
  if (workers?.some((v) => v !== null)) series.push({ label: `Byte workers' heaps (${axis.unit})`, data: workers.map(inUnit), color: COLORS[3]!, dashed: true });
  return { series, unit: axis.unit };
}
