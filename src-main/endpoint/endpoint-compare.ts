// Two system labels side by side: which stored runs each side uses, and the comparison of their
// metrics. One choice of runs for `kvbench endpoint compare`, the app's `endpoint.compare` channel and
// the XLSX Comparison sheet, so all three pick the same runs and say the same thing.
import { compareEndpointRuns, endpointRunSummary, type EndpointComparison, type EndpointRunSummary } from '../../src-shared/domain/endpoint.ts';
import { StoreError } from '../store/store-error.ts';
import type { EndpointStore } from './endpoint-store.ts';

export interface CompareLabelsOptions {
  /** Partial runs count too (their failed requests are not in their latencies). */
  includePartial?: boolean;
  /** Only the newest run of each label. */
  latestOnly?: boolean;
  /** Exactly these runs for A (or B), instead of choosing by label. */
  runIdsA?: readonly number[];
  runIdsB?: readonly number[];
}

/** One side's runs from its candidates (newest first): those that sent the same requests as the newest, or as `preferDigest` where any did. */
function pickSide(candidates: readonly EndpointRunSummary[], latestOnly: boolean, preferDigest?: string): EndpointRunSummary[] {
  const same = preferDigest === undefined ? [] : candidates.filter((r) => r.requestsDigest === preferDigest);
  const chosen = same.length > 0 ? same : candidates.filter((r) => r.requestsDigest === candidates[0]?.requestsDigest);
  return latestOnly ? chosen.slice(0, 1) : chosen;
}

/**
 * The runs of each side from each label's candidates (newest first): A's runs that sent the same
 * requests (equal requests digests) as A's newest; B's runs that sent A's requests where B has such
 * runs, else those of B's newest (and compare warns that the requests differ).
 */
export function pickCompareRuns(
  candidatesA: readonly EndpointRunSummary[],
  candidatesB: readonly EndpointRunSummary[],
  latestOnly = false,
): { a: EndpointRunSummary[]; b: EndpointRunSummary[] } {
  const a = pickSide(candidatesA, latestOnly);
  return { a, b: pickSide(candidatesB, latestOnly, a[0]?.requestsDigest) };
}

/**
 * Per label, every complete run (partial ones too with `includePartial`) chosen by pickCompareRuns,
 * or exactly the runs given, which must be runs of that side's label (else a StoreError VALIDATION).
 * A side without runs is a StoreError NOT_FOUND that names the labels the
 * store does have.
 */
export function compareLabels(s: EndpointStore, labelA: string, labelB: string, opts: CompareLabelsOptions = {}): EndpointComparison {
  // A run of another label would be printed under this side's label (the systems swapped or mixed
  // without a word), so it is refused rather than relabelled.
  const given = (side: 'A' | 'B', label: string, ids: readonly number[]): EndpointRunSummary[] =>
    ids.map((id) => {
      const r = s.requireRun(id);
      if (r.systemLabel !== label) throw new StoreError('VALIDATION', `run ${id} is a run of ${r.systemLabel}, not ${label}: the runs of side ${side} must be runs of its label (${label})`);
      return endpointRunSummary(r);
    });
  const candidates = (label: string): EndpointRunSummary[] => s.compareCandidates(label, { includePartial: opts.includePartial ?? false });
  const latest = opts.latestOnly ?? false;
  const A = opts.runIdsA ? given('A', labelA, opts.runIdsA) : pickSide(candidates(labelA), latest);
  // B follows A's requests however A was chosen.
  const B = opts.runIdsB ? given('B', labelB, opts.runIdsB) : pickSide(candidates(labelB), latest, A[0]?.requestsDigest);
  if (A.length === 0 || B.length === 0) {
    const known = s.labels().map((l) => `${l.systemLabel} (${l.complete}/${l.runs} complete)`);
    const missing = [A.length === 0 ? labelA : null, B.length === 0 ? labelB : null].filter(Boolean).join(' and ');
    throw new StoreError('NOT_FOUND', `no ${opts.includePartial ? 'complete or partial' : 'complete'} runs for ${missing}${known.length ? `; stored labels: ${known.join(', ')}` : ''}`);
  }
  return compareEndpointRuns(labelA, A, labelB, B);
}
