// The kvbench versions a resume crosses (src-shared/domain/resume-versions.ts), read from the store,
// and the refusal that a resume across changed metric definitions meets without consent.
import { compareVersions, straddledChanges } from '../../src-shared/domain/metric-changes.ts';
import { resumeVersionsText, type ResumeVersions } from '../../src-shared/domain/resume-versions.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import type { Store } from '../store/store.ts';

/**
 * Which kvbench started the suite, which measured its complete trials, and which metric definitions
 * differ between those and this kvbench (over the metrics those trials have): what a resume says
 * before it runs, and what makes it ask for consent (resumeSuite's acrossVersions).
 */
export function resumeVersions(store: Store, suiteId: number): ResumeVersions | null {
  const suite = store.getSuite(suiteId);
  if (!suite) return null;
  const complete = store.listTrials({ suiteIds: [suiteId], statuses: ['complete'] });
  const measuredBy = [...new Set(complete.flatMap((t) => (t.measuredByVersion === null ? [] : [t.measuredByVersion])))].sort(compareVersions);
  const metrics = [...new Set(complete.flatMap((t) => Object.keys(t.metrics)))];
  return { suiteId, startedBy: suite.kvbenchVersion, measuredBy, now: KVBENCH_VERSION, changes: straddledChanges([...measuredBy, KVBENCH_VERSION], metrics) };
}

/**
 * Why a resume is refused without consent (null: it may run): the metric definitions of the suite's
 * complete trials differ from this kvbench's, so its scenarios would hold trials of two definitions.
 * `consent` says how to give it (the CLI's flag, the app's confirmation).
 */
export function resumeAcrossVersionsRefusal(v: ResumeVersions | null, consent: string): string | null {
  if (v === null || v.changes.length === 0) return null;
  return `${resumeVersionsText(v)}. ${consent}, or start a new suite so that every trial is measured by kvbench ${v.now}`;
}

/** How the CLI says to consent to a resume across versions (the default where no front end says otherwise). */
export const CLI_ACROSS_VERSIONS_CONSENT = 'Resume it anyway with --across-versions';

/**
 * The refusal a resume of `suiteId` meets for its versions, or null: only trials that run cross
 * versions, so a resume with none to run, or one the user consented to, is never refused for them.
 */
export function resumeRefusalFor(store: Store, suiteId: number, o: { acrossVersions: boolean; trialsToRun: number; consent: string }): string | null {
  if (o.acrossVersions || o.trialsToRun === 0) return null;
  return resumeAcrossVersionsRefusal(resumeVersions(store, suiteId), o.consent);
}
