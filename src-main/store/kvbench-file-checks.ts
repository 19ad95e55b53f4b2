// What a kvbench results file always holds, checked where a file comes in from outside (`kvbench
// import`, `kvbench merge`): a field no run writes that way is a damaged or hand-edited file, and
// storing or merging it would invent something (an unknown status filed as "failed", the file's
// modification time passed off as the run's start, a rank's latencies left out of a pooled
// percentile while its requests are counted). Absent-by-design is told apart from missing: a tier
// or a move between tiers that did no operation has no distribution, in every version.
import { z } from 'zod';
import { compareVersions } from '../../src-shared/domain/metric-changes.ts';
import { KVBENCH_VERSION } from '../../src-shared/domain/version.ts';
import { isMergedResults, isObj } from './results-ingest.ts';

type Obj = Record<string, unknown>;

/** The per-request distributions every kvbench run writes in `kvbench.latency` (since 0.1.0), a count of 0 where it measured none. */
const PER_REQUEST_LATENCIES = ['end_to_end', 'queue_wait', 'storage_io_per_request', 'generation', 'prefill', 'decode'] as const;
/** Groups every run writes as objects, holding an entry only for a tier (or a move) that did such an operation. */
const LATENCY_GROUPS = ['tier_read', 'tier_write', 'tier_read_ns_per_mib', 'tier_write_ns_per_mib', 'demotion'] as const;

/** Why a file missing any of them is refused, after the list of what is missing. */
export const LATENCY_GAPS_REASON = 'every kvbench run writes these (a count of 0 where it measured none)';

const TRIAL_STATUSES = ['complete', 'partial', 'failed', 'aborted'] as const;
/** As the engine writes it (`toISOString()`), or with an offset; a day that does not exist (Feb 30) is none. */
const IsoTime = z.iso.datetime({ offset: true });
/** "0.7.0", or a pre-release of one ("0.8.0-dev"). */
const VERSION = /^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$/;

/** A JSON value as a message shows it, cut when long (a histogram's base64): the path and the reason say what is wrong. */
export function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? 'missing';
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** What is wrong with one distribution of `kvbench.latency`, at `where`; empty when it is whole. */
function summaryGaps(where: string, s: unknown): string[] {
  if (!isObj(s)) return [`${where} is ${shown(s)}, not a latency histogram`];
  const count = s.count;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) return [`${where}.count is ${shown(count)}, not a number of samples`];
  if (count > 0 && typeof s.hdr !== 'string') return [`${where} has ${count} samples but no histogram (hdr)`];
  return [];
}

/**
 * What is missing or malformed in a kvbench run's `kvbench.latency`, each as "kvbench.latency.end_to_end
 * is missing"; empty when every distribution a run writes is there. Entries this version does not know
 * (a newer kvbench's) pass.
 */
export function latencySectionGaps(latency: unknown): string[] {
  if (!isObj(latency)) return [`kvbench.latency is ${latency === undefined ? 'missing' : shown(latency)}, not the run's latency histograms`];
  const gaps: string[] = [];
  for (const name of PER_REQUEST_LATENCIES) {
    const where = `kvbench.latency.${name}`;
    gaps.push(...(latency[name] === undefined ? [`${where} is missing`] : summaryGaps(where, latency[name])));
  }
  for (const group of LATENCY_GROUPS) {
    const where = `kvbench.latency.${group}`;
    const g = latency[group];
    if (g === undefined) gaps.push(`${where} is missing`);
    else if (!isObj(g)) gaps.push(`${where} is ${shown(g)}, not an object`);
    else for (const [key, s] of Object.entries(g)) gaps.push(...summaryGaps(`${where}.${key}`, s));
  }
  return gaps;
}

/** The first few gaps, then how many more: "a; b; c; d; and 7 more". */
export function gapsText(gaps: readonly string[]): string {
  const first = gaps.slice(0, 4);
  return first.join('; ') + (gaps.length > first.length ? `; and ${gaps.length - first.length} more` : '');
}

/** How a refusal of a file whose values no run writes ends. */
export const DAMAGED = 'not stored (a damaged or edited file)';

/**
 * Why `kvbench import` refuses a results file whose kvbench fields no run writes, or null. A single
 * run's file (`kvbench.version`): its version, its status (one of the four), its start time (the trial
 * is dated by it) and its latency histograms. A merged file's `kvbench_merge` is checked by the
 * importer's schema; it may lack a start time, as the reference's files do (the file's time dates
 * those). A start time given anywhere must be a time. A file measured by a kvbench newer than this one
 * is refused: its metric definitions may have changed in ways this version cannot know
 * (metric-changes.ts lists only the changes it knows), so a comparison with it would cross them
 * unsaid; the newer kvbench imports it knowing them.
 */
export function kvbenchFileProblem(results: Obj): string | null {
  const merged = isMergedResults(results);
  const kv = merged ? results.kvbench_merge : results.kvbench;
  if (!isObj(kv)) return null;
  const section = merged ? 'kvbench_merge' : 'kvbench';
  const version = kv.version;
  // The reference writes no kvbench section: a version there that is none is damage, not another format.
  if (typeof version !== 'string' ? version !== undefined : !VERSION.test(version)) return `${section}.version is ${shown(version)}, not a kvbench version (as 0.7.0): ${DAMAGED}`;
  if (typeof version === 'string' && compareVersions(version, KVBENCH_VERSION) > 0) {
    return (
      `measured by kvbench ${version}, newer than this kvbench (${KVBENCH_VERSION}): this version cannot know how ${version} defines its metrics, ` +
      `so it could not say what the trial compares with; import it with kvbench ${version} or newer`
    );
  }
  const run = !merged && typeof version === 'string';
  if (run && kv.status === undefined) return `kvbench.status is missing (the run's status: ${TRIAL_STATUSES.slice(0, -1).join(', ')} or ${TRIAL_STATUSES.at(-1)}): ${DAMAGED}`;
  if (run && !(TRIAL_STATUSES as readonly unknown[]).includes(kv.status)) return `kvbench.status is ${shown(kv.status)}, not one of ${TRIAL_STATUSES.join(', ')} (the run's status): ${DAMAGED}`;
  const startedAt = kv.started_at;
  const mayLackStart = !run && (startedAt === null || startedAt === undefined);
  if (!mayLackStart && !IsoTime.safeParse(startedAt).success) {
    return `${section}.started_at is ${shown(startedAt)}, not a time (ISO 8601, as 2026-11-25T04:58:42.395Z), and the trial is dated by it: ${DAMAGED}`;
  }
  if (!run) return null;
  const gaps = latencySectionGaps(kv.latency);
  if (gaps.length > 0) return `${gapsText(gaps)}: ${LATENCY_GAPS_REASON}; ${DAMAGED}`;
  return null;
}
