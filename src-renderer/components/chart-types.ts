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
}
