// Metrics whose definition changed between kvbench versions. Trials measured on both sides of a
// change are not comparable on that metric, and the comparisons say so rather than show a
// difference the definition made.

export interface MetricDefinitionChange {
  metric: string;
  /** The first kvbench version with the new definition. */
  since: string;
  change: string;
}

export const METRIC_DEFINITION_CHANGES: readonly MetricDefinitionChange[] = [
  { metric: 'decode_bytes_read', since: '0.3.0', change: 'counts multi-turn reload and RAG chunk reads too, as decode_reads does (before 0.3.0 it left them out)' },
];

/** Orders "major.minor.patch" versions numerically; anything unparsable sorts first. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string): number[] => v.split('.').map((p) => Number.parseInt(p, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The changes whose boundary these kvbench versions straddle (some before `since`, some from it on),
 * for the metrics asked about: the definitions differ between those trials.
 */
export function straddledChanges(versions: readonly string[], metrics: readonly string[]): MetricDefinitionChange[] {
  return METRIC_DEFINITION_CHANGES.filter(
    (c) => metrics.includes(c.metric) && versions.some((v) => compareVersions(v, c.since) < 0) && versions.some((v) => compareVersions(v, c.since) >= 0),
  );
}
