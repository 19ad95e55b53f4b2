// Chart.js with only what kvbench draws (lines and bars), no animations (live charts redraw up to
// ten times a second), and the app's fonts and colours.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Tooltip,
} from 'chart.js';

Chart.register(LineController, LineElement, PointElement, BarController, BarElement, LinearScale, LogarithmicScale, CategoryScale, Legend, Tooltip, Filler);
Chart.defaults.animation = false;
Chart.defaults.font.family = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Noto Sans', 'Liberation Sans', sans-serif";
Chart.defaults.font.size = 12;
Chart.defaults.color = '#5a6376';
Chart.defaults.maintainAspectRatio = false;
Chart.defaults.responsive = true;

export const COLORS = ['#2155c4', '#d9730d', '#1b7a3d', '#9b3fb5', '#b3261e', '#0f8a96', '#6b7280'];

export { Chart };

/** Whether this environment can draw on a canvas (component tests run without one). */
export function canDraw(canvas: HTMLCanvasElement): boolean {
  try {
    return typeof canvas.getContext === 'function' && canvas.getContext('2d') !== null;
  } catch {
    return false;
  }
}

/** The largest n in lo..hi for which fits(n) holds, fits falling as n grows (lo is taken to fit). */
function largestFitting(lo: number, hi: number, fits: (n: number) => boolean): number {
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The first n characters (code points, so a character made of two code units stays whole), then "…". */
const cutAfter = (chars: readonly string[], n: number): string => `${chars.slice(0, n).join('').trimEnd()}…`;

/**
 * A bar's label cut at its end to fit `maxPx` (as `measurePx` reads widths), with "…" to show it
 * is cut, so its start (the scenario) stays readable; Chart.js itself would clip it at the left
 * with no mark. The whole label stays in the bar's tooltip.
 */
export function fitLabel(label: string, maxPx: number, measurePx: (text: string) => number): string {
  if (measurePx(label) <= maxPx) return label;
  const chars = Array.from(label);
  // The longest start that fits with its "…".
  return cutAfter(chars, largestFitting(0, chars.length - 1, (n) => measurePx(cutAfter(chars, n)) <= maxPx));
}

/** How far back a kept part reaches for the start of the word the labels part in ("qd64", not "4"). */
const WORD_BACK_CHARS = 8;

/**
 * A label cut in the middle so that what follows `from` (where it parts from labels whose ends
 * fitLabel cut alike) stays in view: as much of its start as fits, "…", and its end from the start
 * of that word; where that end is too long itself, half the width for the start, and the end from
 * `from` cut at its end too.
 */
function fitKeeping(label: string, from: number, maxPx: number, measurePx: (text: string) => number): string {
  const chars = Array.from(label);
  const at = Math.min(from, chars.length);
  let word = at;
  while (word > 0 && at - word < WORD_BACK_CHARS && /[\p{L}\p{N}]/u.test(chars[word - 1]!)) word--;
  // The start's first `headChars` characters; at least one is left out before the end kept, for the "…" to stand for.
  const joined = (headChars: number, end: string): string => `${chars.slice(0, headChars).join('').trimEnd()}…${end}`;
  for (const start of word < at ? [word, at] : [at]) {
    const end = chars.slice(start).join('');
    if (measurePx(joined(0, end)) <= maxPx) return joined(largestFitting(0, Math.max(0, start - 1), (n) => measurePx(joined(n, end)) <= maxPx), end);
  }
  const endChars = chars.slice(at);
  const headChars = largestFitting(0, Math.max(0, at - 1), (n) => measurePx(cutAfter(chars, n)) <= maxPx / 2);
  return joined(headChars, cutAfter(endChars, largestFitting(0, endChars.length - 1, (n) => measurePx(joined(headChars, cutAfter(endChars, n))) <= maxPx)));
}

/** How many characters (code points) all the labels start with. */
function sharedStartLength(labels: readonly string[]): number {
  const all = labels.map((l) => Array.from(l));
  let n = 0;
  while (all.every((c) => n < c.length && c[n] === all[0]![n])) n++;
  return n;
}

/** The indices of labels whose fitted texts are alike although the labels differ, grouped by that text. */
function alikeGroups(labels: readonly string[], fitted: readonly string[]): number[][] {
  const byText = new Map<string, number[]>();
  fitted.forEach((f, i) => byText.set(f, [...(byText.get(f) ?? []), i]));
  return [...byText.values()].filter((group) => new Set(group.map((i) => labels[i])).size > 1);
}

/**
 * Labels told apart: rows whose label another row has too (two configurations of one scenario: a
 * CPU tier of 1 and of 2 GiB) get, after " · ", those of their `parts` (what describes a row: its
 * tier sizes, users, options, in the order to say them) that not every row of that label shares;
 * rows alike in every part are numbered in their order. A label no other row has stays as it is.
 */
export function distinctLabels(labels: readonly string[], parts: readonly (readonly string[])[]): string[] {
  const byLabel = new Map<string, number[]>();
  labels.forEach((l, i) => byLabel.set(l, [...(byLabel.get(l) ?? []), i]));
  const out = [...labels];
  for (const group of byLabel.values()) {
    if (group.length < 2) continue;
    const shared = (part: string): boolean => group.every((i) => parts[i]?.includes(part));
    for (const i of group) {
      const differing = [...new Set(parts[i] ?? [])].filter((p) => !shared(p));
      if (differing.length > 0) out[i] = `${labels[i]} · ${differing.join(', ')}`;
    }
    // Rows alike in every part said: numbered in their order.
    const still = new Map<string, number[]>();
    for (const i of group) still.set(out[i]!, [...(still.get(out[i]!) ?? []), i]);
    for (const alike of still.values()) if (alike.length > 1) alike.forEach((i, k) => (out[i] = `${out[i]} (${k + 1})`));
  }
  return out;
}

/**
 * A bar chart's labels, each as fitLabel cuts it; where that leaves different labels alike (long
 * labels that part only after the cut: two suite labels, or drives, of one long system name), each
 * of those keeps its start and, after a "…", where it parts from the others, so the bars are told
 * apart on the axis as in the tooltip. Labels that are the same stay alike.
 */
export function fitLabels(labels: readonly string[], maxPx: number, measurePx: (text: string) => number): string[] {
  const fitted = labels.map((l) => fitLabel(l, maxPx, measurePx));
  // Where each label was last cut from: a label is cut again only from further on, so this ends.
  const cutFrom = labels.map(() => -1);
  for (let changed = true; changed; ) {
    changed = false;
    for (const group of alikeGroups(labels, fitted)) {
      const from = sharedStartLength(group.map((i) => labels[i]!));
      // Labels that part at their first character come out alike only as "…": nothing fits.
      if (from === 0) continue;
      for (const i of group) {
        if (fitted[i] === labels[i] || cutFrom[i]! >= from) continue;
        cutFrom[i] = from;
        fitted[i] = fitKeeping(labels[i]!, from, maxPx, measurePx);
        changed = true;
      }
    }
  }
  // Labels that part in two places, each beyond what one cut keeps, can still come out alike: those
  // are numbered in their order, after their start.
  for (const group of alikeGroups(labels, fitted)) {
    group.forEach((i, k) => {
      if (fitted[i] === labels[i]) return;
      const mark = ` (${k + 1})`;
      fitted[i] = `${fitLabel(labels[i]!, maxPx - measurePx(mark), measurePx)}${mark}`;
    });
  }
  return fitted;
}
