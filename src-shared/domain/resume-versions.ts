// What a resume of a suite started by another kvbench says before it runs: which version started
// it, which measured its complete trials, which runs the rest, and which metric definitions differ
// between them (metric-changes.ts). The CLI's `suite --resume` and the app's Resume say the same.
//
// Pure TypeScript: no Node, no DOM, no electron.
import type { MetricDefinitionChange } from './metric-changes.ts';

export interface ResumeVersions {
  suiteId: number;
  /** The kvbench that started the suite (its record's version). */
  startedBy: string;
  /** The kvbench versions that measured its complete trials, ascending (unknown ones left out). */
  measuredBy: string[];
  /** The kvbench that would run the trials left. */
  now: string;
  /** The changes of a metric its complete trials have whose boundary they and `now` straddle: those metrics' definitions differ. */
  changes: MetricDefinitionChange[];
}

/** Whether anything differs: another version started the suite or measured a trial of it. */
export const resumeCrossesVersions = (v: ResumeVersions): boolean => v.startedBy !== v.now || v.measuredBy.some((x) => x !== v.now);

/**
 * The versions in words, or null where this kvbench started the suite and measured every trial.
 * With changes: which metrics, in which version, and what that does to the report.
 */
export function resumeVersionsText(v: ResumeVersions): string | null {
  if (!resumeCrossesVersions(v)) return null;
  const measured = v.measuredBy.length === 0 ? 'none of its trials is complete yet' : `its complete trials were measured by kvbench ${v.measuredBy.join(', ')}`;
  const head = `suite ${v.suiteId} was started by kvbench ${v.startedBy} (${measured}); the trials left run on kvbench ${v.now}`;
  if (v.changes.length === 0) return `${head}; no metric its complete trials have changed definition between these versions`;
  const bySince = new Map<string, string[]>();
  for (const c of v.changes) bySince.set(c.since, [...(bySince.get(c.since) ?? []), c.metric]);
  const which = [...bySince].map(([since, metrics]) => `${metrics.join(', ')} (changed in ${since})`).join('; ');
  return (
    `${head}, whose definitions differ for ${which}: a scenario with trials of both versions gets those metrics in two rows of its report, ` +
    'one per definition, never one median, and a comparison names no better side on them'
  );
}
