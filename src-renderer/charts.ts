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

/**
 * A bar's label cut at its end to fit `maxPx` (as `measurePx` reads widths), with "…" to show it
 * is cut, so its start (the scenario) stays readable; Chart.js itself would clip it at the left
 * with no mark. The whole label stays in the bar's tooltip.
 */
export function fitLabel(label: string, maxPx: number, measurePx: (text: string) => number): string {
  if (measurePx(label) <= maxPx) return label;
  const chars = Array.from(label);
  const cut = (n: number): string => `${chars.slice(0, n).join('').trimEnd()}…`;
  let lo = 0;
  let hi = chars.length - 1;
  // The longest start that fits with its "…".
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (measurePx(cut(mid)) <= maxPx) lo = mid;
    else hi = mid - 1;
  }
  return cut(lo);
}
