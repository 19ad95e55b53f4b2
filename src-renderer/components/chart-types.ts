export interface LineSeries {
  label: string;
  data: readonly (number | null)[];
  color: string;
  axis?: 'y' | 'y2';
  dashed?: boolean;
}

export interface BarSeries {
  label: string;
  data: readonly (number | null)[];
  colors: string | readonly string[];
  /** Per bar: a line the tooltip adds below the value, e.g. why the bar and its colour differ. */
  notes?: readonly (string | null)[];
}
